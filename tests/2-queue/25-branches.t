#!/bin/bash
# 25-branches.t: two stable branches in one store, with real git trees made
# here: each branch's checks use its own evidence (a Fixes: target in 6.12
# only: two verdicts, each naming its branch), --branch on the CLI, [PATCH
# X.Y] routing and the refusals (unknown branch, shared directories, a
# missing tarball), the migration of a store made before branches, and the
# daemon taking one step per branch in turn.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'kill $(cat "$T/daemon.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }

# --- two trees: 6.1.10, and 6.12.3 which has feature.c (commit X) -------------
tree() { # DIR VERSION PATCHLEVEL SUBLEVEL
	G init -q "$1" && cd "$1"
	for i in $(seq 1 30); do echo "line $i"; done > lib.c
	printf 'VERSION = %s\nPATCHLEVEL = %s\nSUBLEVEL = %s\n' "$2" "$3" "$4" > Makefile
	G add -A && G commit -qm "Linux $2.$3.$4" && G tag "v$2.$3.$4"
}
tree "$T/linux-6.1" 6 1 10
G branch -q linux-6.1.y
tree "$T/linux-6.12" 6 12 3
printf 'int feature;\n' > feature.c
G add feature.c && G commit -qm "feature: add it"
X=$(git rev-parse HEAD)
G branch -q linux-6.12.y
cd "$T"

# one fix of feature.c, queued for both branches ([PATCH]: no version)
mkdir -p "$T/in"
diff=$(cd "$T/linux-6.12" && sed -i 's/feature/feature_fixed/' feature.c && git diff && git checkout -q feature.c)
cat > "$T/in/fix.patch" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:01 +0000
Subject: [PATCH] feature: fix it
Message-Id: <fix.$$@example.org>

Fix the feature.

Fixes: ${X:0:12} ("feature: add it")
Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
$diff
MAIL
lib() { # N VERSION-PREFIX: a patch of lib.c line N, for [PATCH VERSION-PREFIX]
	d=$(cd "$T/linux-6.1" && sed -i "s/^line $1\$/line $1!/" lib.c && git diff && git checkout -q lib.c)
	cat <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:0$1 +0000
Subject: [$2] lib: fix line $1
Message-Id: <lib$1.$$@example.org>

Fix line $1.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
}

cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
kernel_config_dir = $TOP/config/kernel/6.1/quick
[branch 6.1]
tree_dir = $T/linux-6.1
build_dir = $T/build-6.1
queue_dir = $T/q-6.1
queue_seed =
coverage_build_dir = $T/cover-6.1
[branch 6.12]
branch = linux-6.12.y
linux_source = /usr/src/linux-source-6.12.tar.xz
tree_dir = $T/linux-6.12
build_dir = $T/build-6.12
queue_dir = $T/q-6.12
queue_seed =
coverage_build_dir = $T/cover-6.12
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }

# --- one fix, two branches, two verdicts ---------------------------------------
out=$(SQ --branch 6.1 import "$T/in/fix.patch" 2>&1)
ok $? "stableq --branch 6.1 import fix.patch"
out=$(SQ --branch 6.12 import "$T/in/fix.patch" 2>&1)
ok $? "stableq --branch 6.12 import fix.patch: the same patch, the other branch"
is "$(q "SELECT group_concat(b.key || ':' || p.state, ' ') FROM patches p JOIN branches b ON b.id = p.branch_id ORDER BY p.id")" \
	"6.1:rejected 6.12:queued" "one fix, a row per branch: rejected on 6.1, queued on 6.12"
is "$(q "SELECT COUNT(DISTINCT fix_key) || ' ' || COUNT(*) FROM fixes")" "1 2" "the fixes view: one fix, two rows"
d61=$(q "SELECT detail FROM verdicts WHERE patch_id = 1 AND check_name = 'fixes'")
d612=$(q "SELECT detail FROM verdicts WHERE patch_id = 2 AND check_name = 'fixes'")
like "$d61" "6.1: feature.c is not in linux-6.1.y (6.1.10): the bug cannot be in this tree" "6.1's verdict: absent, on 6.1's tree, naming 6.1"
is "$(q "SELECT result FROM verdicts WHERE patch_id = 1 AND check_name = 'fixes'")" absent "... result absent"
like "$d612" "6.12: Fixes: ${X:0:12} is in linux-6.12.y" "6.12's verdict: present, on 6.12's history, naming 6.12"
is "$(q "SELECT result FROM verdicts WHERE patch_id = 2 AND check_name = 'fixes'")" present "... result present"
out=$(SQ --branch 6.12 import "$T/in/fix.patch" 2>&1)
like "$out" "imported 0 new patches, 1 already known" "importing it again into 6.12 changes nothing"

# --- the CLI: --branch, the default branch, following an id -------------------
out=$(SQ --branch 6.12 queue)
like "$out" "   2  queued    feature: fix it" "stableq --branch 6.12 queue: 6.12's queue"
case "$out" in *"   1 "*) ok 1 "... without 6.1's row" ;; *) ok 0 "... without 6.1's row" ;; esac
out=$(SQ queue)
like "$out" "   1  rejected  feature: fix it" "stableq queue: the first branch (6.1) by default"
like "$(SQ show 2)" "branch:     6.12" "stableq show names the patch's branch"
out=$(SQ check 2 2>&1)
like "$out" "patch 2: feature: fix it -> queued" "stableq check 2 checks patch 2 on its branch (6.12)"
like "$out" "present: 6.12: Fixes:" "... with 6.12's evidence"
out=$(SQ --branch 6.1 check 2 2>&1)
is "$?" 1 "stableq --branch 6.1 check 2 is refused"
like "$out" "patch 2 is in branch 6.12's queue, not 6.1's (--branch 6.12)" "... naming the patch's branch"
out=$(SQ --branch 6.1 override 2 --reason x 2>&1)
like "$out" "patch 2 is in branch 6.12's queue, not 6.1's" "stableq --branch 6.1 override 2: refused the same way"
out=$(SQ branches)
like "$out" "6.1    linux-6.1.y    6.1.10" "stableq branches: 6.1, its git branch and version"
like "$out" "6.12   linux-6.12.y   6.12.3     $T/linux-6.12" "... 6.12 with its tree"
like "$out" "1 patch (1 queued)" "... and each queue's counts"
like "$out" "waits for: nothing" "... and what each waits for"
is "$(SQ branches --json | /usr/bin/python3 -c 'import json,sys; print(" ".join(b["key"] + "=" + str({k: n for k, n in b["patches"].items() if n}) + ":" + b["queue_dir"] for b in json.load(sys.stdin)["branches"]))')" \
	"6.1={'rejected': 1}:$T/q-6.1 6.12={'queued': 1}:$T/q-6.12" "stableq branches --json: GET /branches's answer, counts and queue directories"

# --- [PATCH X.Y] picks the branch; unknown branches are refused ----------------
mkdir -p "$T/mixed"
lib 3 "PATCH 6.12" > "$T/mixed/a.patch"
lib 4 "PATCH 6.1 1/1" > "$T/mixed/b.patch"
printf 'a.patch\nb.patch\n' > "$T/mixed/series"
out=$(SQ import "$T/mixed" 2>&1)
ok $? "stableq import of a quilt dir with [PATCH 6.12] and [PATCH 6.1] patches"
is "$(q "SELECT b.key FROM patches p JOIN branches b ON b.id = p.branch_id WHERE p.subject = 'lib: fix line 3'")" 6.12 "[PATCH 6.12] went to 6.12"
is "$(q "SELECT b.key FROM patches p JOIN branches b ON b.id = p.branch_id WHERE p.subject = 'lib: fix line 4'")" 6.1 "[PATCH 6.1 1/1] went to 6.1"
like "$out" "branch 6.12:" "the checks ran per branch"

before=$(q .dump | md5sum)
lib 5 "PATCH 5.15" > "$T/in/old.patch"
out=$(SQ import "$T/in/old.patch" 2>&1)
is "$?" 1 "a patch for a branch that is not configured is refused"
like "$out" "old.patch: \"[PATCH 5.15] lib: fix line 5\" is for branch 5.15, which is not configured (configured: 6.1, 6.12)" "... saying which branch and which are configured"
lib 6 "PATCH 6.12" > "$T/in/612.patch"
out=$(SQ --branch 6.1 import "$T/in/old.patch" "$T/in/612.patch" 2>&1)
is "$?" 1 "--branch 6.1 import of a [PATCH 6.12] patch is refused"
like "$out" "is for branch 5.15, which is not configured" "... (the first bad one is named)"
out=$(SQ --branch 6.1 import "$T/in/612.patch" 2>&1)
like "$out" "612.patch: \"[PATCH 6.12] lib: fix line 6\" is for branch 6.12, not 6.1" "... naming both branches"
out=$(SQ --branch 5.15 queue 2>&1)
is "$?" 2 "stableq --branch 5.15 queue: an unknown branch is refused"
like "$out" "stableq: unknown branch '5.15' (configured: 6.1, 6.12)" "... naming the configured ones"
out=$(SQ --branch 5.15 import "$T/in/fix.patch" 2>&1)
is "$?" 2 "stableq --branch 5.15 import is refused too"
is "$(q .dump | md5sum)" "$before" "and none of these changed the store"

# --- serve -n: shared directories and a missing tarball -------------------------
sed 's|^tree_dir = .*/linux-6.12$|tree_dir = '"$T"'/linux-6.1/|' "$T/stableq.conf" > "$T/shared.conf"
out=$("$STABLEQ" -c "$T/shared.conf" serve -n 2>&1)
is "$?" 2 "serve -n: two branches with one tree_dir are refused"
like "$out" "branches 6.1 and 6.12 have the same tree_dir ($T/linux-6.1): each branch needs its own" "... naming both branches and the path"
sed 's|^build_dir = .*/build-6.12$|build_dir = '"$T"'/build-6.1|' "$T/stableq.conf" > "$T/shared.conf"
like "$("$STABLEQ" -c "$T/shared.conf" serve -n 2>&1)" "branches 6.1 and 6.12 have the same build_dir" "... one build_dir too"
sed 's|^queue_dir = .*/q-6.12$|queue_dir = '"$T"'/q-6.1|' "$T/stableq.conf" > "$T/shared.conf"
like "$("$STABLEQ" -c "$T/shared.conf" serve -n 2>&1)" "branches 6.1 and 6.12 have the same queue_dir" "... one queue_dir too"
cat "$T/stableq.conf" - > "$T/missing.conf" <<CONF
[branch 6.99]
branch = linux-6.99.y
linux_source = $T/linux-source-6.99.tar.xz
tree_dir = $T/linux-6.99
build_dir = $T/build-6.99
queue_dir = $T/q-6.99
coverage_build_dir = $T/cover-6.99
CONF
out=$("$STABLEQ" -c "$T/missing.conf" serve -n 2>&1)
is "$?" 1 "serve -n: a branch without its tree and tarball is refused"
like "$out" "branch 6.99: $T/linux-source-6.99.tar.xz: no such file; it comes with the Debian package linux-source-6.99 (apt-get install linux-source-6.99" \
	"... naming the Debian package to install"
out=$(SQ serve -n 2>&1)
ok $? "serve -n: the two-branch file is fine"
like "$out" "branch 6.12: linux-6.12.y, tree $T/linux-6.12" "... and says what each branch is"

# --- a store made before branches migrates: its queue is 6.1, nothing lost ------
for f in "$TOP"/sql/00[1-8]-*.sql; do cat "$f"; done > "$T/old.sql"
sqlite3 "$T/old.db" < "$T/old.sql"
sqlite3 "$T/old.db" <<SQL
PRAGMA user_version = $(ls "$TOP"/sql/00[1-8]-*.sql | wc -l);
INSERT INTO sources (kind, path) VALUES ('series', 'q');
INSERT INTO patches (source_id, queue_pos, subject, message_id, upstream, patch_id, message, diff, state)
	VALUES (1, 1, 'a: one', '<1@x>', 'aaaaaaaaaaaa', 'p1', 'm', 'd', 'queued'),
	       (1, 2, 'a: two', '<2@x>', NULL, 'p2', 'm', 'd', 'broken');
INSERT INTO patch_tags (patch_id, kind, value) VALUES (2, 'fixes', 'aaaaaaaaaaaa');
INSERT INTO patch_files (patch_id, path, change) VALUES (1, 'a.c', 'M'), (2, 'a.c', 'M');
INSERT INTO dependencies (patch_id, depends_on, kind) VALUES (2, 1, 'fixes');
INSERT INTO verdicts (patch_id, check_name, result, detail) VALUES (1, 'fixes', 'present', 'x');
INSERT INTO candidates (patch_ids, verdict, step) VALUES ('[1,2]', 'fail', 'done');
INSERT INTO bisections (candidate_id, state, culprit_patch_id) VALUES (1, 'found', 2);
INSERT INTO flags (patch_id, reason, actor, bisection_id) VALUES (2, 'broken', 'bisection:1', 1);
INSERT INTO reverts (patch_id, state, reason, actor) VALUES (2, 'planned', 'r', 'daemon');
INSERT INTO revert_items (revert_id, ord, patch_id, action, why) VALUES (1, 1, 2, 'drop', 'culprit');
INSERT INTO mail (patch_id, kind, message_id, mail_from, rcpt_to, headers_and_body) VALUES (2, 'flagged', '<m@x>', 'a', '[]', 'b');
SQL
count() { sqlite3 "$T/old.db" "SELECT (SELECT COUNT(*) FROM patches) || ' ' || (SELECT COUNT(*) FROM patch_tags) || ' ' || (SELECT COUNT(*) FROM patch_files) || ' ' || (SELECT COUNT(*) FROM dependencies) || ' ' || (SELECT COUNT(*) FROM verdicts) || ' ' || (SELECT COUNT(*) FROM candidates) || ' ' || (SELECT COUNT(*) FROM flags) || ' ' || (SELECT COUNT(*) FROM revert_items) || ' ' || (SELECT COUNT(*) FROM mail)"; }
was=$(count)
out=$(STABLEQ_NO_DEFAULT_CONFIG=1 "$STABLEQ" --db "$T/old.db" queue 2>&1)
ok $? "a store made by the schema before branches opens with this stableq (single-branch defaults)"
like "$out" "   1  queued    a: one" "... and its queue is there"
is "$(count)" "$was" "no row lost: patches, tags, files, dependencies, verdicts, candidates, flags, revert items, mail"
is "$(sqlite3 "$T/old.db" "SELECT key || ' ' || name FROM branches")" "6.1 linux-6.1.y" "the store has branch 6.1"
is "$(sqlite3 "$T/old.db" "SELECT COUNT(*) FROM patches WHERE branch_id = (SELECT id FROM branches WHERE key = '6.1')") $(sqlite3 "$T/old.db" "SELECT COUNT(*) FROM candidates WHERE branch_id IS NOT NULL")" \
	"2 1" "every patch and candidate is 6.1's"
is "$(sqlite3 "$T/old.db" "PRAGMA foreign_key_check")" "" "foreign keys hold"
is "$(sqlite3 "$T/old.db" "PRAGMA user_version")" "$(ls "$TOP"/sql/[0-9][0-9][0-9]-*.sql | wc -l)" "the store is at the last migration"
is "$(sqlite3 "$T/old.db" "SELECT COUNT(*) FROM schema_migrations WHERE applied_at IS NULL")" "$(ls "$TOP"/sql/00[1-8]-*.sql | wc -l)" "... the migrations it had recorded by name from its counter, not run again"
is "$(sqlite3 "$T/old.db" "SELECT COUNT(*) FROM flags f JOIN patches p ON p.id = f.patch_id")" 1 "a flag still finds its patch through the rebuilt table"

# --- the daemon: branches take turns, one step each ------------------------------
# Four pending candidates, three of 6.1 first: each is a cheap step (these
# trees are not kernels: the build fails at once). Taking the table's first
# due job would run 6.1's three before 6.12's; in turns, 6.12's runs second.
q "INSERT INTO candidates (branch_id, purpose, patch_ids) VALUES
	((SELECT id FROM branches WHERE key = '6.1'), 'queue', '[]'),
	((SELECT id FROM branches WHERE key = '6.1'), 'queue', '[]'),
	((SELECT id FROM branches WHERE key = '6.1'), 'queue', '[]'),
	((SELECT id FROM branches WHERE key = '6.12'), 'queue', '[]')"
first=$(q "SELECT MIN(id) FROM candidates")
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listen = 127.0.0.1:%s\npoll_interval = 1\n' "$PORT" > "$T/head.conf"
cat "$T/head.conf" "$T/stableq.conf" > "$T/daemon.conf"
"$STABLEQ" -c "$T/daemon.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 1 120); do
	[ "$(q "SELECT COUNT(*) FROM candidates WHERE id BETWEEN $first AND $first + 3 AND step != 'done'")" = 0 ] && break
	sleep 0.5
done
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null
is "$(q "SELECT COUNT(*) FROM candidates WHERE id BETWEEN $first AND $first + 3 AND step != 'done'")" 0 "the daemon ran every pending candidate"
order=$(grep -o 'step candidate [0-9]* ([0-9.]*): started' "$T/daemon.log" | sed 's/step candidate \([0-9]*\) (\([0-9.]*\)).*/\2/' | tr '\n' ' ')
is "$order" "6.1 6.12 6.1 6.1 " "candidates ran 6.1, 6.12, 6.1, 6.1: 6.12's waited one step, not three"
like "$(grep -m1 'step candidate [0-9]* (6.12): started' "$T/daemon.log")" "--branch 6.12 candidate --run" "the child step's argv carries --branch 6.12"
like "$(grep 'step import (6.12): started' "$T/daemon.log")" "--branch 6.12 import $T/q-6.12" "each branch's queue_dir is imported with its --branch"

# A bisection is a step per build: a failing 6.1 queue candidate of eight
# patches (several steps to bisect) and a pending 6.12 candidate: 6.12's
# candidate runs after the bisection's first step, not after its last.
lib4=$(q "SELECT id FROM patches WHERE subject = 'lib: fix line 4'")
q "INSERT INTO candidates (branch_id, purpose, patch_ids, step, verdict, detail) VALUES
	($(q "SELECT id FROM branches WHERE key = '6.1'"), 'queue', '[$lib4,$lib4,$lib4,$lib4,$lib4,$lib4,$lib4,$lib4]', 'done', 'build-failed', 'x')"
bad=$(q "SELECT MAX(id) FROM candidates")
q "INSERT INTO candidates (branch_id, purpose, patch_ids) VALUES ((SELECT id FROM branches WHERE key = '6.12'), 'queue', '[]')"
c612=$(q "SELECT MAX(id) FROM candidates")
"$STABLEQ" -c "$T/daemon.conf" serve -d > "$T/daemon2.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 1 120); do
	[ "$(q "SELECT COUNT(*) FROM bisections WHERE candidate_id = $bad AND state != 'running'") $(q "SELECT step FROM candidates WHERE id = $c612")" = "1 done" ] && break
	sleep 0.5
done
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null
bid=$(q "SELECT id FROM bisections WHERE candidate_id = $bad")
steps=$(q "SELECT COUNT(*) FROM bisection_steps WHERE bisection_id = $bid")
ok $([ "$steps" -ge 3 ] && [ "$(q "SELECT state FROM bisections WHERE id = $bid")" != running ]; echo $?) \
	"the 6.1 bisection ran to its end, $steps steps, one daemon step each"
is "$(grep -c "step bisect $bad (6.1): started" "$T/daemon2.log")" "$steps" "... one daemon step per bisection step"
order=$(grep -o "step \(bisect $bad\|candidate $c612\) ([0-9.]*): started" "$T/daemon2.log" | head -n 3 | sed 's/step \([a-z]*\) [0-9]* (\([0-9.]*\)).*/\1-\2/' | tr '\n' ' ')
is "$order" "bisect-6.1 candidate-6.12 bisect-6.1 " "6.12's candidate ran after the bisection's first step, not after its last"
like "$(grep -m1 "step bisect $bad (6.1): started" "$T/daemon2.log")" "--branch 6.1 bisect $bad --steps 1" "a daemon bisection step is \`bisect ID --steps 1\`"
like "$(cat "$T/var/log/daemon-steps.log")" "bisection $bid: going on after 1 step" "the next step goes on from the stored ones"
path() { q "SELECT group_concat(kind || ':' || prefix_len || ':' || result, ' ') FROM (SELECT * FROM bisection_steps WHERE bisection_id = $1 ORDER BY id)"; }
SQ --branch 6.1 bisect "$bad" > "$T/bisect.log" 2>&1
ok $? "stableq bisect $bad: the same bisection in one run"
bid2=$(q "SELECT MAX(id) FROM bisections WHERE candidate_id = $bad")
is "$(path "$bid2") $(q "SELECT state FROM bisections WHERE id = $bid2")" "$(path "$bid") $(q "SELECT state FROM bisections WHERE id = $bid")" \
	"... takes the same steps to the same end as the one taken a step at a time"
q "INSERT INTO candidates (branch_id, purpose, patch_ids, step, verdict, detail) VALUES
	($(q "SELECT id FROM branches WHERE key = '6.1'"), 'queue', '[$lib4,$lib4,$lib4,$lib4]', 'done', 'build-failed', 'x')"
c=$(q "SELECT MAX(id) FROM candidates")
out=$(SQ --branch 6.1 bisect $c --steps 1 2>/dev/null)
like "$out" "step 1 of about" "stableq bisect $c --steps 1: one step, and it says so"
is "$(q "SELECT state || ' ' || (SELECT COUNT(*) FROM bisection_steps s WHERE s.bisection_id = b.id) FROM bisections b WHERE candidate_id = $c")" \
	"running 1" "... the bisection stays running after its first step"
SQ --branch 6.1 bisect $c --steps 1 > /dev/null 2>&1
is "$(q "SELECT COUNT(*) || ' ' || MAX((SELECT COUNT(*) FROM bisection_steps s WHERE s.bisection_id = b.id)) FROM bisections b WHERE candidate_id = $c")" \
	"1 2" "run again, the same bisection takes its second step"

done_testing
