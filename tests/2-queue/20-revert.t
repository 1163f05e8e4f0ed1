#!/bin/bash
# 20-revert.t: revert first, on a real git repository made here: flagging,
# the plan with dependents, drops from the queue, release as commits, libgit2
# revert commits equal to `git revert`, conflicts that change nothing,
# kill -9 in the middle of a revert and the resume, mail in the outbox.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

G init -q "$T/linux"
cd "$T/linux"
for f in a b c d e; do for i in $(seq 1 12); do echo "$f line $i"; done > $f.c; done
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y

mkdir -p "$T/q"
n=0
mail() { # NAME SUBJECT UPSTREAM TRAILERS FILE SED
	n=$((n + 1))
	sed -i "$6" "$5"
	d=$(git diff "$5")
	git checkout -q "$5"
	cat > "$T/q/$1" <<MAIL
From: Dev $n <dev$n@example.org>
Date: Mon, 1 Sep 2025 10:00:0$n +0000
Subject: [PATCH 6.1] $2
Message-Id: <rev$n.$$@example.org>

commit $3 upstream.

Body of $2.

Cc: <stable@vger.kernel.org> # 6.1.x
$4
Signed-off-by: Dev $n <dev$n@example.org>
Signed-off-by: Maintainer <maint@example.org>
---
$d
MAIL
	echo "$1" >> "$T/q/series"
}
C=cccccccccccc0000000000000000000000000000
mail 1-good.patch "a: good change" 1111111111110000000000000000000000000000 "" a.c 's/a line 3/a line three/'
mail 2-culprit.patch "b: the culprit" $C "" b.c 's/b line 3/b line three/'
mail 3-dep.patch "c: brought in for the culprit" 3333333333330000000000000000000000000000 "Stable-dep-of: ${C:0:12} (\"b: the culprit\")" c.c 's/c line 3/c line three/'
mail 4-fixup.patch "b: fix the culprit" 4444444444440000000000000000000000000000 "Fixes: ${C:0:12} (\"b: the culprit\")" b.c 's/b line 9/b line nine/'
mail 5-other.patch "e: unrelated" 5555555555550000000000000000000000000000 "" e.c 's/e line 3/e line three/'
cd "$T"

conf() { # NAME: a config with its own database and a copy of the tree
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
tree_dir = $T/linux-$1
queue_dir = $T/q-$1
CONF
	rm -rf "$T/linux-$1" "$T/q-$1"
	git clone -q --mirror "$T/linux" "$T/linux-$1/.git" && git -C "$T/linux-$1" config core.bare false && git -C "$T/linux-$1" checkout -q linux-6.1.y
	cp -r "$T/q" "$T/q-$1"
}
db() { sqlite3 "$T/$1.db" "$2"; }

# --- a culprit still in the queue is dropped with its dependents ------------
conf q
SQ() { "$STABLEQ" -c "$T/q.conf" "$@"; }
SQ import "$T/q-q" > /dev/null 2>&1
is "$(db q "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,queued,queued,queued,queued" "five patches queued"
SQ flag 2 --reason "breaks the b selftest" > /dev/null 2>&1
ok $? "flag patch 2 broken"
plan=$(SQ revert 2 --dry-run 2>&1)
like "$plan" "drop   patch 4" "dry run: the fix-up (Fixes: names it) goes with it"
like "$plan" "drop   patch 3" "dry run: the Stable-dep-of patch goes with it"
is "$(echo "$plan" | grep -oE '^  (drop|revert) +patch [0-9]+' | grep -oE '[0-9]+$' | tr -d '\n')" "432" "dry run: newest first"
is "$(db q "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,broken,queued,queued,queued" "a dry run changes nothing"
SQ revert 2 --reason "breaks the b selftest" --no-confirm > "$T/out" 2>&1
ok $? "revert of a queued culprit"
is "$(db q "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,dropped,dropped,dropped,queued" "culprit and dependents dropped, the rest stays queued"
like "$(db q "SELECT state_reason FROM patches WHERE id = 3")" "Stable-dep-of" "the dependent's reason says why it went"
is "$(db q "SELECT group_concat(kind) FROM (SELECT kind FROM mail WHERE patch_id = 2 ORDER BY id)")" "dropped" "the culprit's author gets one mail for flagged, then dropped"
like "$(db q "SELECT headers_and_body FROM mail WHERE patch_id = 2")" "== 1 of 2: flagged ==" "... telling both events"
is "$(db q "SELECT COUNT(*) FROM mail WHERE kind = 'dropped'")" 3 "each dropped patch's author is mailed"
# the queue directory is the queue: the dropped patches are left out of its series
is "$(grep -v '^#' "$T/q-q/series" | tr '\n' ' ')" "1-good.patch 5-other.patch " "the dropped patches are left out of the queue directory's series"
like "$(grep '^# 2-culprit.patch' "$T/q-q/series")" "# dropped by stableq (revert 1, patch 2): breaks the b selftest" "... commented out, with why"
is "$(grep -c '^# [234]-' "$T/q-q/series")" 3 "... each of the three"
ok $([ -f "$T/q-q/2-culprit.patch" ] && echo 0 || echo 1) "... their files stay"
SQ import "$T/q-q" > "$T/reimport" 2>&1
ok $? "the directory imports again" "$(cat "$T/reimport")"
is "$(db q "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,dropped,dropped,dropped,queued" "... and nothing comes back"
out=$(SQ revert 2 --reason again 2>&1)
ok $([ $? -ne 0 ] && echo 0 || echo 1) "a second revert of the same patch fails"
like "$out" "nothing to revert" "... saying there is nothing to revert"
out=$(SQ flag 99 --reason x 2>&1)
like "$out" "no such patch" "flagging an unknown id is an error naming it"

# --- released patches are reverted on the branch, like git revert -----------
conf r
SQ() { "$STABLEQ" -c "$T/r.conf" "$@"; }
SQ import "$T/q-r" > /dev/null 2>&1
out=$(SQ release 2>&1)
like "$out" "have not passed a candidate" "release refuses a queue that has not passed a candidate"
SQ release --force > /dev/null 2>&1
ok $? "release --force applies the queue as commits"
is "$(git -C "$T/linux-r" rev-list --count v6.1.10..linux-6.1.y)" 5 "five commits on the branch"
is "$(git -C "$T/linux-r" log -1 --format='%an <%ae>' linux-6.1.y~3)" "Dev 2 <dev2@example.org>" "each with its patch's author"
like "$(git -C "$T/linux-r" log -1 --format=%B linux-6.1.y~3)" "commit $C upstream." "... and its message"
is "$(db r "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "released,released,released,released,released" "all released"
tip=$(git -C "$T/linux-r" rev-parse linux-6.1.y)
c2=$(db r "SELECT released_commit FROM patches WHERE id = 2")
c3=$(db r "SELECT released_commit FROM patches WHERE id = 3")
c4=$(db r "SELECT released_commit FROM patches WHERE id = 4")

# kill -9 between the revert commits and the branch move: nothing half-done
STABLEQ_CRASH_AT=revert-before-branch SQ revert 2 --reason "breaks the b selftest" --no-confirm > /dev/null 2>&1
is "$?" 137 "kill -9 in the middle of a revert"
is "$(git -C "$T/linux-r" rev-parse linux-6.1.y)" "$tip" "... the branch has not moved"
is "$(db r "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "released,released,released,released,released" "... no patch changed state"
is "$(db r "SELECT state FROM reverts")" applying "... the revert is recorded as in progress"
SQ revert --resume > /dev/null 2>&1
ok $? "the next start resumes it"
is "$(db r "SELECT state FROM reverts")" done "... the revert is done"
is "$(db r "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "released,reverted,reverted,reverted,released" "culprit and dependents reverted"
is "$(git -C "$T/linux-r" rev-list --count $tip..linux-6.1.y)" 3 "three revert commits on the branch"
like "$(git -C "$T/linux-r" log -1 --format=%B linux-6.1.y)" "Revert \"b: the culprit\"" "the last revert is the culprit's (newest first)"
like "$(git -C "$T/linux-r" log -1 --format=%B linux-6.1.y)" "This reverts commit $c2 which is commit $C upstream." "stable-style revert message"
# the same reverts made by git
git clone -q "$T/linux-r" "$T/cmp" && git -C "$T/cmp" checkout -q "$tip" &&
	G -C "$T/cmp" revert --no-edit "$c4" "$c3" "$c2" > /dev/null
is "$(git -C "$T/linux-r" rev-parse linux-6.1.y^{tree})" "$(git -C "$T/cmp" rev-parse HEAD^{tree})" "the reverted tree equals git revert's"
is "$(ls "$T/q-r" | grep -c '^revert-')" 3 "three revert patches written into the queue directory"
is "$(grep -c '^revert-' "$T/q-r/series")" 3 "... and named in its series"
is "$(db r "SELECT COUNT(*) FROM mail WHERE kind = 'reverted'")" 3 "each reverted patch's author is mailed"
like "$(db r "SELECT headers_and_body FROM mail WHERE kind = 'reverted' AND patch_id = 2")" "This reverts commit" "... with the revert patch in the mail"
SQ revert --resume > /dev/null 2>&1
is "$(db r "SELECT COUNT(*) FROM mail WHERE kind = 'reverted'")" 3 "resuming again sends nothing twice"

# kill -9 after the branch moved: the resume completes the store
conf k
SQ() { "$STABLEQ" -c "$T/k.conf" "$@"; }
SQ import "$T/q-k" > /dev/null 2>&1 && SQ release --force > /dev/null 2>&1
STABLEQ_CRASH_AT=revert-after-branch SQ revert 5 --reason "breaks e" --no-confirm > /dev/null 2>&1
is "$?" 137 "kill -9 right after the branch moved"
is "$(db k "SELECT state FROM patches WHERE id = 5")" released "... the store has not caught up yet"
SQ revert --resume > /dev/null 2>&1
is "$(db k "SELECT state FROM patches WHERE id = 5")" reverted "the resume marks the patch reverted"
is "$(git -C "$T/linux-k" rev-list --count v6.1.10..linux-6.1.y)" 6 "... with exactly one revert commit"

# a revert that conflicts with later commits changes nothing
conf c
SQ() { "$STABLEQ" -c "$T/c.conf" "$@"; }
SQ import "$T/q-c" > /dev/null 2>&1 && SQ release --force > /dev/null 2>&1
cd "$T/linux-c"
git reset -q --hard linux-6.1.y
sed -i 's/a line three/a line 3 again/' a.c && G commit -qam "a: rewrite line 3 later"
cd "$T"
tipc=$(git -C "$T/linux-c" rev-parse linux-6.1.y)
state_c='SELECT COUNT(*) FROM events; SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id); SELECT COUNT(*) FROM mail'
before=$(db c "$state_c")
out=$(SQ revert 1 --reason "breaks a" --no-confirm 2>&1)
ok $([ $? -ne 0 ] && echo 0 || echo 1) "a revert that conflicts fails"
like "$out" "a.c" "... naming the conflicting file"
is "$(db c "$state_c")" "$before" "... and changes nothing in the store"
is "$(git -C "$T/linux-c" rev-parse linux-6.1.y)" "$tipc" "... nor on the branch"

# a fix-up of a reverted patch is held
cd "$T/linux"
sed -i 's/b line 11/b line eleven/' b.c
d=$(git diff b.c); git checkout -q b.c
cat > "$T/fixup2.patch" <<MAIL
From: Late Fixer <late@example.org>
Subject: [PATCH 6.1] b: another fix of the culprit
Message-Id: <late.$$@example.org>

commit 6666666666660000000000000000000000000000 upstream.

Fixes: ${C:0:12} ("b: the culprit")
Signed-off-by: Late Fixer <late@example.org>
---
$d
MAIL
cd "$T"
SQ() { "$STABLEQ" -c "$T/r.conf" "$@"; }
SQ import "$T/fixup2.patch" > /dev/null 2>&1
is "$(db r "SELECT state FROM patches WHERE subject LIKE 'b: another fix%'")" held "a fix-up of a reverted patch is held"
like "$(db r "SELECT state_reason FROM patches WHERE subject LIKE 'b: another fix%'")" "superseded-by-revert" "... superseded-by-revert"
is "$(db r "SELECT kind FROM mail WHERE patch_id = (SELECT id FROM patches WHERE subject LIKE 'b: another fix%')")" held "... and its author is told"
done_testing
