#!/bin/bash
# 26-check-prefix.t: an import into a queue starts from the kept running tree
# of the queued patches before it (issue 23), with the verdicts a cold run
# gives; a queue whose prefix changed (a patch taken out, a diff edited) is
# never served from the kept tree.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

G init -q "$T/linux"
cd "$T/linux"
for f in a b c d; do for i in $(seq 1 20); do echo "$f line $i"; done > "$f.c"; done
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10
G branch -q linux-6.1.y

mail() { # OUT N SUBJECT DIFF
	cat > "$1" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:$2 +0000
Subject: [PATCH 6.1] $3
Message-Id: <p$2.$$@example.org>

Body of $3.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
$4
MAIL
}
# each patch is made on the tree the ones before it left: a later one
# applies only on top of them
step() { # OUT N SUBJECT FILE SED
	sed -i "$5" "$4" && mail "$1" "$2" "$3" "$(git diff "$4")" && git commit -qam "$3"
}
mkdir -p "$T/q"
git checkout -q -b work
step "$T/q/01.patch" 01 "a: fix line 3" a.c 's/^a line 3$/a line three/'
step "$T/q/02.patch" 02 "b: fix line 4" b.c 's/^b line 4$/b line four/'
step "$T/q/03.patch" 03 "a: fix line three again" a.c 's/^a line three$/a line THREE/'
step "$T/q/04.patch" 04 "c: fix line 5" c.c 's/^c line 5$/c line five/'
step "$T/q/05.patch" 05 "b: fix line four again" b.c 's/^b line four$/b line FOUR/'
# the new ones: on the whole queue (3 and 5 before them)
step "$T/new1.patch" 11 "a: fix line THREE a third time" a.c 's/^a line THREE$/a line Three!/'
step "$T/new2.patch" 12 "b: fix line FOUR a third time" b.c 's/^b line FOUR$/b line Four!/'
step "$T/new3.patch" 13 "d: fix line 6" d.c 's/^d line 6$/d line six/'
step "$T/new4.patch" 14 "a: fix line Three! once more" a.c 's/^a line Three!$/a line 3 again/'
git checkout -q linux-6.1.y
(cd "$T/q" && ls *.patch) > "$T/q/series"

store() { # NAME: a store of its own on the same stable tree
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/$1.var
tree_dir = $T/linux
queue_dir = $T/q
CONF
}
SQ() { local n=$1; shift; "$STABLEQ" -c "$T/$n.conf" "$@"; }
verdicts() { # STORE ID: state and every verdict, as JSON text
	SQ "$1" show --json "$2" | /usr/bin/python3 -c "
import json,sys
p=json.load(sys.stdin)
print(p['state'], json.dumps({k: [v['result'], v['detail']] for k, v in p['verdicts'].items()}, sort_keys=True))"
}
id_of() { sqlite3 "$T/$1.db" "SELECT id FROM patches WHERE subject = '$2'"; }
cd "$T"

# --- warm: the queue, then one more patch --------------------------------
store warm
out=$(SQ warm import "$T/q" 2>&1)
ok $? "import of a queue of 5 patches"
is "$(sqlite3 "$T/warm.db" "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 5 "... all 5 queued"
is "$(sqlite3 "$T/warm.db" "SELECT patches FROM check_prefix")" 5 "... and the running tree of the 5 is kept"
tree=$(sqlite3 "$T/warm.db" "SELECT tree FROM check_prefix")
is "$(git -C "$T/linux" cat-file -t "$tree")" tree "... in the stable tree's object database"
is "$(git -C "$T/linux" show "$tree:a.c" | sed -n 3p)" "a line THREE" "... holding what the queued patches made of a.c"
is "$(git -C "$T/linux" show "$tree:b.c" | sed -n 4p)" "b line FOUR" "... and of b.c"
G -C "$T/linux" fsck --no-dangling --no-progress > "$T/fsck" 2>&1
is "$(cat "$T/fsck")" "" "git fsck finds nothing wrong in the stable tree"

out=$(SQ warm import "$T/new1.patch" 2>&1)
ok $? "import of one more patch"
like "$out" "kept tree of the 5 queued patches" "... starts from the kept tree"
W1=$(verdicts warm "$(id_of warm 'a: fix line THREE a third time')")
like "$W1" "queued" "... and the patch, made on the queue, is queued"
is "$(sqlite3 "$T/warm.db" "SELECT patches FROM check_prefix")" 6 "the kept tree now holds 6"

# --- cold: the same imports, nothing kept before the second -------------
store cold
SQ cold import "$T/q" > /dev/null 2>&1
sqlite3 "$T/cold.db" "DELETE FROM check_prefix"
out=$(SQ cold import "$T/new1.patch" 2>&1)
ok $? "the same imports into a store with nothing kept"
unlike_kept=$(printf '%s' "$out" | grep -c "kept tree")
is "$unlike_kept" 0 "... applies the queue as before"
is "$(verdicts cold "$(id_of cold 'a: fix line THREE a third time')")" "$W1" "... with the same state and verdicts as the warm run"

# --- a patch taken out of the queue: not served from the kept tree ------
# patch 5 flagged broken: new2 (made on top of it) no longer applies
SQ warm flag "$(id_of warm 'b: fix line four again')" --reason "breaks b" > /dev/null 2>&1
ok $? "a maintainer flags a queued patch broken"
out=$(SQ warm import "$T/new2.patch" 2>&1)
is "$(printf '%s' "$out" | grep -c "kept tree")" 0 "the next import does not start from the kept tree"
N2=$(id_of warm 'b: fix line FOUR a third time')
like "$(verdicts warm "$N2")" '"applies": ["conflict"' "... and the patch made on the flagged one conflicts"
SQ cold flag "$(id_of cold 'b: fix line four again')" --reason "breaks b" > /dev/null 2>&1
sqlite3 "$T/cold.db" "DELETE FROM check_prefix"
SQ cold import "$T/new2.patch" > /dev/null 2>&1
is "$(verdicts cold "$(id_of cold 'b: fix line FOUR a third time')")" "$(verdicts warm "$N2")" "... as in a cold run"

# --- a queued patch's diff edited: not served from the kept tree --------
out=$(SQ warm import "$T/new3.patch" 2>&1)
like "$out" "kept tree" "an import after an unchanged queue starts from the kept tree again"
# patch 3 now leaves another line 3 in a.c: new1 (made on it) no longer
# applies in the running tree, and new4 (made on new1) conflicts
P3=$(id_of warm 'a: fix line three again')
sqlite3 "$T/warm.db" "UPDATE patches SET diff = replace(diff, '+a line THREE', '+a line 3!') WHERE id = $P3"
out=$(SQ warm import "$T/new4.patch" 2>&1)
ok $? "import of one more patch after a queued diff was edited"
is "$(printf '%s' "$out" | grep -c "kept tree")" 0 "... does not start from the kept tree"
N4=$(id_of warm 'a: fix line Three! once more')
like "$(verdicts warm "$N4")" '"applies": ["conflict"' "... and the patch made on the old diff conflicts"
SQ cold import "$T/new3.patch" > /dev/null 2>&1
sqlite3 "$T/cold.db" "UPDATE patches SET diff = replace(diff, '+a line THREE', '+a line 3!') WHERE id = $(id_of cold 'a: fix line three again'); DELETE FROM check_prefix"
SQ cold import "$T/new4.patch" > /dev/null 2>&1
is "$(verdicts cold "$(id_of cold 'a: fix line Three! once more')")" "$(verdicts warm "$N4")" "... as in a cold run"
done_testing
