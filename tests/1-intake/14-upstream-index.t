#!/bin/bash
# 14-upstream-index.t: the upstream clone as a commit-to-release index in
# the store (issue 21, item 6), built once and then incrementally; from it a
# queued patch's follow-ups that are not queued (its verdict, `stableq show`,
# the author's mail), upstream reverts (held) and the soak (min_soak_days).
# Real git repositories made here.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- upstream: v6.8, v6.9 and commits after it ----------------------------------
G init -q "$T/up"
cd "$T/up"
commit() { # FILE LINE MESSAGE: appends LINE to FILE and commits; prints the SHA
	echo "$2" >> "$1" && G add "$1" && G commit -qm "$3" && git rev-parse HEAD
}
F=$(commit foo.c "int foo;" "foo: do something")
A=$(commit net.c "int thing;" "net: add the thing")
S=$(commit soak.c "int soak;" "soak: a fix just released")
G tag v6.8
B=$(commit net.c "int thing_fixed;" "net: fix the thing

Fixes: ${A:0:12} (\"net: add the thing\")")
R=$(commit foo.c "/* no foo */" "Revert \"foo: do something\"

This reverts commit $F.")
G tag -a v6.9 -m v6.9
D=$(commit net.c "int thing_fixed_again;" "net: fix the thing again

Fixes: ${A:0:12} (\"net: add the thing\")")
ok 0 "an upstream clone: v6.8, v6.9 (annotated) and a commit after it"

# --- the stable tree --------------------------------------------------------------
G init -q "$T/linux"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
for f in net foo soak; do printf 'int %s_first;\nint %s_second;\n' "$f" "$f" > "$f.c"; done
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
mkdir -p "$T/q"
backport() { # NAME SUBJECT UPSTREAM FILE LINE
	cp "$4" "$T/new" && echo "$5" >> "$T/new"
	cat > "$T/q/$1.patch" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1] $2
Message-Id: <$1.$$@example.org>

commit $3 upstream.

Body of $2.

Cc: stable@vger.kernel.org # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
$(diff -u --label "a/$4" --label "b/$4" "$4" "$T/new")
MAIL
	echo "$1.patch" >> "$T/q/series"
}
backport net "net: add the thing" "$A" net.c "int thing;"
backport foo "foo: do something" "$F" foo.c "int foo;"
backport soak "soak: a fix just released" "$S" soak.c "int soak;"
cd "$T"
conf() { # NAME SOAK
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var
tree_dir = $T/linux
upstream_repo = $T/up
min_soak_days = $2
debian_changelog =
CONF
}
conf s 0
SQ() { local c=$1; shift; "$STABLEQ" -c "$T/$c.conf" "$@"; }
q() { sqlite3 "$T/$1.db" "$2"; }
id() { q "$1" "SELECT id FROM patches WHERE filename = '$2.patch'"; }
v() { q "$1" "SELECT result FROM verdicts WHERE patch_id = $(id "$1" "$2") AND check_name = '$3' ORDER BY id DESC LIMIT 1"; }
vd() { q "$1" "SELECT detail FROM verdicts WHERE patch_id = $(id "$1" "$2") AND check_name = '$3' ORDER BY id DESC LIMIT 1"; }
st() { q "$1" "SELECT state FROM patches WHERE filename = '$2.patch'"; }

out=$(SQ s import "$T/q" 2>&1)
ok $? "import of 3 backports with an upstream clone configured"
is "$(q s "SELECT COUNT(*) FROM upstream_commits")" 6 "the index holds every upstream commit"
is "$(q s "SELECT release FROM upstream_commits WHERE sha = '$A'")" v6.8 "... each with the first tag that contains it"
is "$(q s "SELECT release FROM upstream_commits WHERE sha = '$B'")" v6.9 "... an annotated tag too"
is "$(q s "SELECT coalesce(release, 'none') FROM upstream_commits WHERE sha = '$D'")" none "... none for a commit past the last tag"
is "$(q s "SELECT kind || ' ' || target FROM upstream_refs WHERE sha = '$B'")" "fixes ${A:0:12}" "... its Fixes: targets"
is "$(q s "SELECT kind || ' ' || target FROM upstream_refs WHERE sha = '$R'")" "reverts $F" "... and what a revert reverts"
is "$(q s "SELECT head FROM upstream_index_state")" "$D" "... and the head it was built to"

# follow-ups
is "$(v s net followups)" found "a queued backport whose upstream commit two later commits fix -> followups found"
like "$(vd s net followups)" "${B:0:12} (\"net: fix the thing\", v6.9)" "... naming the first, with its release"
like "$(vd s net followups)" "${D:0:12} (\"net: fix the thing again\", not in a tagged release yet)" "... and the untagged one"
is "$(st s net)" queued "... the patch itself is queued"
like "$(SQ s show "$(id s net)")" "net: fix the thing again" "stableq show lists the follow-ups"
like "$(SQ s show --json "$(id s net)")" "\"followups\"" "... and so does the patch object (the API's and the dashboard's)"
mailbody=$(q s "SELECT headers_and_body FROM mail WHERE patch_id = $(id s net) AND kind = 'followups'")
like "$mailbody" "net: fix the thing again" "the author's mail lists the follow-ups"
is "$(v s soak followups)" none "a backport nothing upstream fixes -> followups none"
like "$(vd s soak followups)" "upstream in v6.8 for 0 days" "... with the days since its release"

# reverts upstream
is "$(v s foo fixup)" held "a backport reverted upstream -> held"
like "$(vd s foo fixup)" "reverted upstream by ${R:0:12} (\"Revert \"foo: do something\"\", in v6.9)" "... naming the revert and its release"
is "$(st s foo)" held "... never queued"

# a follow-up once queued is no longer listed
cd "$T/linux"
backport net-fix "net: fix the thing" "$B" net.c "int thing_fixed;"
cd "$T"
SQ s import "$T/q/net-fix.patch" > /dev/null 2>&1
SQ s check "$(id s net)" > /dev/null 2>&1
ok $? "the first follow-up is queued, the patch checked again"
unlike() { case "$1" in *"$2"*) ok 1 "$3" ;; *) ok 0 "$3" ;; esac; }
unlike "$(vd s net followups)" "${B:0:12}" "... and it is no longer a follow-up outside the queue"
like "$(vd s net followups)" "${D:0:12}" "... the other still is"

# incremental: a new tag indexes only what is new and tags the untagged
before=$(q s "SELECT commits FROM upstream_index_state")
cd "$T/up"
E=$(commit net.c "int later;" "net: a later change")
G tag v6.10
cd "$T"
SQ s check > /dev/null 2>&1
is "$(( $(q s "SELECT commits FROM upstream_index_state") - before ))" 1 "a second build adds only the new commit"
is "$(q s "SELECT release FROM upstream_commits WHERE sha = '$D'")" v6.10 "... and the commit the new tag holds gets its release"
is "$(q s "SELECT COUNT(*) FROM upstream_commits WHERE sha = '$B'")" 1 "... nothing is indexed twice"

# soak
conf soak 7
SQ soak import "$T/q/soak.patch" > /dev/null 2>&1
is "$(q soak "SELECT state FROM patches WHERE subject = 'soak: a fix just released'")" checked "min_soak_days = 7, its upstream commit released today -> it waits"
like "$(q soak "SELECT state_reason FROM patches WHERE subject = 'soak: a fix just released'")" "soaking: upstream ${S:0:12} is in v6.8 for 0 days, min_soak_days is 7" \
	"... with the reason"
done_testing
