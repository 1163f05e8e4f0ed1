#!/bin/bash
# 10-checks.t: import real patches into a real SQLite file and check them
# against real git repositories made here: every verdict of the fixes,
# applies and fixup checks, and what they do to a patch's state.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- upstream: v6.1, then a commit that came after it -------------------------
G init -q "$T/up"
cd "$T/up"
printf 'int a;\n' > a.c
G add a.c && G commit -qm "a: add a"
printf 'int a;\nint helper;\n' > a.c
G commit -qam "a: add helper"
UA=$(git rev-parse HEAD)
G tag v6.1
printf 'int a;\nint helper;\nint feature;\n' > a.c
G commit -qam "a: add a feature after v6.1"
UB=$(git rev-parse HEAD)

# --- the stable tree: v6.1.10, a commit of its own, a backport of UA ----------
G init -q "$T/linux"
cd "$T/linux"
for i in $(seq 1 30); do echo "line $i"; done > lib.c
printf 'int a;\n' > a.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
G add -A && G commit -qm "Linux 6.1.10"
G tag v6.1.10
sed -i 's/^line 5$/line five/' lib.c
G commit -qam "lib: spell five"
S1=$(git rev-parse HEAD)
printf 'int a;\nint helper;\n' > a.c
G commit -qm "a: add helper

commit $UA upstream.
" a.c
G branch -q linux-6.1.y

# Diffs made with git, then turned into mails.
diff_of() { # FILE SED-EXPR: the diff of applying SED-EXPR to FILE
	cp "$1" "$T/orig" && sed -i "$2" "$1" && git diff "$1" && git checkout -q "$1"
}
mail() { # FILE N SUBJECT TRAILERS DIFF
	cat > "$T/q/$1" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:0$2 +0000
Subject: [PATCH 6.1] $3
Message-Id: <p$2.$$@example.org>

Body of $3.

$4
Signed-off-by: Jane Dev <jane@example.org>
---
$5
MAIL
}
mkdir -p "$T/q"
mail 01-present.patch 1 "lib: fix line 7" "Fixes: ${S1:0:12} (\"lib: spell five\")" "$(diff_of lib.c 's/^line 7$/line seven/')"
mail 02-backport.patch 2 "lib: fix line 9" "Fixes: ${UA:0:12} (\"a: add helper\")" "$(diff_of lib.c 's/^line 9$/line nine/')"
mail 03-absent.patch 3 "lib: fix line 11" "Fixes: ${UB:0:12} (\"a: add a feature after v6.1\")" "$(diff_of lib.c 's/^line 11$/line eleven/')"
# adds a line, removes none: neither the history nor the tree can tell
mail 04-unknown.patch 4 "lib: fix line 13" "Fixes: 0123456789ab (\"something nobody knows\")" "$(diff_of lib.c 's/^line 13$/line 13\nline 13 and a half/')"
mail 05-missing.patch 5 "lib: fix line 15" "" "$(diff_of lib.c 's/^line 15$/line fifteen/')"
# touches line 5, which the branch changed already: the context does not match
mail 06-conflict.patch 6 "lib: fix line 4" "Cc: <stable@vger.kernel.org> # 6.1.x" \
	"$(git show v6.1.10:lib.c > lib.c; diff_of lib.c 's/^line 4$/line four/;s/^line 5$/line 5!/'; git checkout -q lib.c)"
# the branch has this change already
mail 07-already.patch 7 "a: add helper again" "Cc: <stable@vger.kernel.org> # 6.1.x" \
	"$(git show v6.1.10:a.c > a.c; git diff -R a.c; git checkout -q a.c)"
mail 08-version.patch 8 "lib: fix line 17" "Cc: <stable@vger.kernel.org> # 6.1.x" "$(diff_of lib.c 's/^line 17$/line seventeen/')"
mail 09-other-version.patch 9 "lib: fix line 19" "Cc: <stable@vger.kernel.org> # 6.6.x" "$(diff_of lib.c 's/^line 19$/line nineteen/')"
mail 10-unknown-annotated.patch 10 "lib: fix line 23" "Fixes: 0123456789ab (\"something nobody knows\")
Cc: <stable@vger.kernel.org> # 6.1.x" "$(diff_of lib.c 's/^line 23$/line twenty-three/')"
(cd "$T/q" && ls *.patch | sort) > "$T/series" && mv "$T/series" "$T/q/series"
cd "$T"

cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
tree_dir = $T/linux
upstream_repo = $T/up
stable_queue_repo = $T/sq
queue_dir = $T/q
CONF
# a stable-queue checkout whose releases/ name an upstream commit
mkdir -p "$T/sq/releases/6.1.5"
printf 'From: x <x@example.org>\nSubject: net: fix y\n\ncommit 77aa77aa77aa77aa77aa77aa77aa77aa77aa77aa upstream.\n\n---\n' > "$T/sq/releases/6.1.5/net-fix-y.patch"
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
verdict() { # ID CHECK
	SQ show --json "$1" | /usr/bin/python3 -c "import json,sys; v=json.load(sys.stdin)['verdicts'].get('$2'); print(v['result'] if v else 'none')"
}
field() { # ID FIELD
	SQ show --json "$1" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['$2'])"
}
detail() { # ID CHECK
	SQ show --json "$1" | /usr/bin/python3 -c "import json,sys; print(json.load(sys.stdin)['verdicts']['$2']['detail'])"
}

out=$(SQ import "$T/q" 2>&1)
ok $? "import of a quilt directory with 10 patches"
like "$out" "imported 10 new patches" "import says how many patches were new"

is "$(verdict 1 fixes)" present "Fixes: a commit on the branch -> present"
like "$(detail 1 fixes)" "is in linux-6.1.y" "... and the reason says where"
is "$(verdict 2 fixes)" present "Fixes: an upstream commit backported as 'commit X upstream.' -> present"
like "$(detail 2 fixes)" "backport" "... found as a backport"
is "$(verdict 3 fixes)" absent "Fixes: an upstream commit after the base version -> absent"
is "$(field 3 state)" rejected "... and the patch is rejected"
is "$(verdict 4 fixes)" unknown "Fixes: a commit nobody knows -> unknown"
is "$(field 4 state)" checked "... and it waits for a human (not queued)"
is "$(verdict 5 fixes)" missing "no Fixes: and no stable annotation -> missing"
is "$(field 5 state)" checked "... and it waits for a human"
is "$(verdict 6 applies)" conflict "a patch whose context changed on the branch -> conflict"
like "$(detail 6 applies)" "lib.c" "... naming the file"
like "$(detail 6 applies)" "hunk" "... and the hunk"
is "$(verdict 7 applies)" already-applied "a change the branch has -> already-applied"
is "$(field 7 state)" released "... it is in the tree already: released, not rejected"
is "$(sqlite3 "$T/stableq.db" "SELECT COUNT(*) FROM mail WHERE patch_id = 7")" 0 "... and nobody is mailed about it"
is "$(verdict 8 fixes)" present "Cc: stable # 6.1.x without Fixes: -> present for 6.1.10"
is "$(field 8 state)" queued "... and it is queued"
is "$(verdict 9 fixes)" absent "Cc: stable # 6.6.x (6.6 and later) -> absent for 6.1.10"
is "$(verdict 10 fixes)" present "Fixes: a commit nobody knows, but Cc: stable # 6.1.x -> present"
like "$(detail 10 fixes)" "covers 6.1.10" "... the reason gives both: the unknown target and the annotation"
is "$(verdict 1 applies)" clean "a patch that applies -> clean"
is "$(verdict 1 fixup)" ok "not a fix-up of a broken patch -> ok"
is "$(field 1 state)" queued "present + clean -> queued"

# The same directory again changes nothing.
before=$(sqlite3 "$T/stableq.db" "SELECT COUNT(*) FROM patches; SELECT COUNT(*) FROM patch_tags;")
out=$(SQ import "$T/q" 2>&1)
like "$out" "0 new patches, 10 already known" "a second import finds every patch known"
is "$(sqlite3 "$T/stableq.db" "SELECT COUNT(*) FROM patches; SELECT COUNT(*) FROM patch_tags;")" "$before" "... and adds no row"

# Revert first: a fix-up of a patch flagged broken is held.
SQ flag 8 --reason "breaks the lib selftest" > /dev/null 2>&1
ok $? "a maintainer flags patch 8 broken"
is "$(field 8 state)" broken "... its state is broken"
UP8=$(sqlite3 "$T/stableq.db" "SELECT message_id FROM patches WHERE id = 8")
cd "$T/linux"
cat > "$T/fixup.patch" <<MAIL
From: Joe Fixer <joe@example.org>
Date: Tue, 2 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1] lib: fix the fix of line 17
Message-Id: <fixup.$$@example.org>

commit 89abcdef0123456789abcdef0123456789abcdef upstream.

Fixes: 0123abcd4567 ("lib: fix line 17")
Signed-off-by: Joe Fixer <joe@example.org>
---
$(diff_of lib.c 's/^line 21$/line twenty-one/')
MAIL
cd "$T"
# patch 8 has no upstream SHA of its own: give it one so that Fixes: can name it
sqlite3 "$T/stableq.db" "UPDATE patches SET upstream = '0123abcd4567ffffffffffffffffffffffffffff' WHERE id = 8"
SQ import "$T/fixup.patch" > /dev/null 2>&1
ok $? "import of a single patch file"
id=$(sqlite3 "$T/stableq.db" "SELECT id FROM patches WHERE subject LIKE '%fix of line 17%'")
is "$(verdict "$id" fixup)" held "a fix-up whose Fixes: names a broken patch -> held"
is "$(field "$id" state)" held "... and the patch is held: revert first"
like "$(detail "$id" fixup)" "superseded-by-revert" "... the reason says superseded-by-revert"
SQ override "$id" --reason "tested by hand on 6.1" > /dev/null
ok $? "a maintainer overrides the hold with a reason"
is "$(field "$id" state)" queued "... and the fix-up is queued"
like "$(sqlite3 "$T/stableq.db" "SELECT detail FROM events WHERE subject_id = $id AND kind = 'override'")" "tested by hand" "... the override is in the event log"

# Fixes: a commit released through the stable queue -> present.
cd "$T/linux"
cat > "$T/sq.patch" <<MAIL
From: Net Dev <net@example.org>
Subject: [PATCH 6.1] lib: fix line 25
Message-Id: <sq.$$@example.org>

Fixes: 77aa77aa77aa ("net: fix y")
Signed-off-by: Net Dev <net@example.org>
---
$(diff_of lib.c 's/^line 25$/line twenty-five/')
MAIL
cd "$T"
SQ import "$T/sq.patch" > /dev/null 2>&1
id=$(sqlite3 "$T/stableq.db" "SELECT id FROM patches WHERE subject = 'lib: fix line 25'")
is "$(verdict "$id" fixes)" present "Fixes: a commit released in the stable-queue checkout -> present"
like "$(detail "$id" fixes)" "releases/6.1.5/net-fix-y.patch" "... naming the release patch"

# A queued patch that no longer applies stops a candidate before any build.
cd "$T/linux"
git checkout -q linux-6.1.y && sed -i 's/^line 7$/line 7 changed on the branch/' lib.c && G commit -qam "lib: change line 7"
cd "$T"
SQ candidate --json > "$T/cand.json" 2> /dev/null
is "$?" 3 "a candidate whose patch does not apply does not pass"
is "$(/usr/bin/python3 -c "import json; print(json.load(open('$T/cand.json'))['verdict'])")" apply-failed "verdict: apply-failed"
like "$(/usr/bin/python3 -c "import json; print(json.load(open('$T/cand.json'))['detail'])")" "patch 1 \"lib: fix line 7\"" "... naming the patch"
like "$(/usr/bin/python3 -c "import json; print(json.load(open('$T/cand.json'))['detail'])")" "lib.c" "... and the file"
is "$(sqlite3 "$T/stableq.db" "SELECT COUNT(*) FROM builds")" 0 "... and nothing was built"

# JSON of the queue carries what scripts need.
keys=$(SQ queue --json | /usr/bin/python3 -c "import json,sys; print(','.join(sorted(json.load(sys.stdin)[0].keys())))")
for k in id subject author_email message_id upstream fixes stable_versions stable_dep_of state verdicts files; do
	like ",$keys," ",$k," "queue --json has '$k'"
done
done_testing
