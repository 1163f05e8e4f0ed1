#!/bin/bash
# 55-revert-first.t: the revert-first engine end to end on the real kernel.
# A queue of good patches and one that compiles but breaks a regression test
# (tests/fixtures/bisect-queue, on top of config/queues/6.1): stableq
# bisects to it, drops it with the patch brought in for it, holds its
# fix-up, and the queue passes again. Then, on a branch where the same
# patches were released, it reverts the culprit with its dependent and the
# branch passes again. Mail lands in the outbox, threaded to the patches.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree

setup() { # NAME: a branch of its own on the base tag, a queue dir, a config
	# (built states from the kernel tests' shared cache, or from $CACHE)
	git -C "$TREE" branch -f "t55-$1" "$tag"
	mkdir -p "$T/q-$1"
	cp "$TOP"/config/queues/6.1/*.patch "$TOP"/tests/fixtures/bisect-queue/*.patch "$T/q-$1/"
	cat "$TOP/config/queues/6.1/series" "$TOP/tests/fixtures/bisect-queue/series" > "$T/q-$1/series"
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
build_cache_dir = ${CACHE:-$TOP/var/build-cache}
tree_dir = $TREE
branch = t55-$1
build_dir = $TOP/var/build
queue_dir = $T/q-$1
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
bisect_confirm = 2
CONF
}
db() { sqlite3 "$T/$1.db" "$2"; }
culprit_q="SELECT id FROM patches WHERE subject LIKE 'lib/cmdline: let simple_strtol()%'"
dep_q="SELECT id FROM patches WHERE subject LIKE 'lib/cmdline: make get_option()%'"

# --- A: the culprit is still queued: bisect, drop with its dependent --------
# The bisection counts the kernels it builds: its states come from a cache
# of its own, empty at the start, so that they are built on every run
CACHE=$T/cache-a setup a
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/a.conf" "$@"); }
SQ import "$T/q-a" > "$T/a-import.log" 2>&1
is "$(db a "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 8 "eight patches queued (test, fix, six fixture patches)"
SQ candidate --json > "$T/a-c1.json" 2> "$T/a-c1.log"
is "$(py "import json; print(json.load(open('$T/a-c1.json'))['verdict'])")" fail "the whole queue fails"
failing=$(py "import json; print(' '.join(t['name'] for t in json.load(open('$T/a-c1.json'))['tests'] if t['result']=='fail'))")
like "$failing" "cmdline" "... a cmdline KUnit case fails ($failing)"
cid=$(db a "SELECT MAX(id) FROM candidates WHERE purpose = 'queue'")
SQ bisect "$cid" --json > "$T/a-bisect.json" 2> "$T/a-bisect.log"
ok $? "bisect runs"
culprit=$(db a "$culprit_q")
dep=$(db a "$dep_q")
is "$(py "import json; print(json.load(open('$T/a-bisect.json'))['culprit_patch_id'])")" "$culprit" "the bisection names the culprit"
is "$(py "import json; print(json.load(open('$T/a-bisect.json'))['state'])")" found "... and is found"
search=$(db a "SELECT COUNT(*) FROM bisection_steps WHERE kind = 'search'")
ok $([ "$search" -le 4 ] && echo 0 || echo 1) "search builds: $search <= ceil(log2(8+1)) = 4"
is "$(db a "SELECT COUNT(*) FROM bisection_steps WHERE kind = 'confirm'")" 2 "two confirmation steps (culprit fails, the one before passes)"
is "$(db a "SELECT COUNT(*) FROM test_results t JOIN bisection_steps s ON s.candidate_id = t.candidate_id WHERE s.kind = 'confirm' AND t.name = 'boot'")" 4 "each confirmation booted twice"
bid=$(db a "SELECT MAX(id) FROM bisections")
is "$(db a "SELECT COUNT(*) FROM bisection_steps s JOIN candidates c ON c.id = s.candidate_id JOIN builds b ON b.id = c.build_id WHERE s.kind = 'confirm' AND b.cached = 0")" 0 "the confirmation built nothing: both states came from the build cache"
builds=$(db a "SELECT builds_used FROM bisections WHERE id = $bid")
ok $([ "$builds" -le 4 ] && echo 0 || echo 1) "builds in all: $builds <= ceil(log2(8+1)) = 4"
is "$builds" "$(db a "SELECT COUNT(*) FROM bisection_steps s JOIN candidates c ON c.id = s.candidate_id JOIN builds b ON b.id = c.build_id WHERE s.bisection_id = $bid AND b.cached = 0")" "... as many as the steps that compiled"
is "$(db a "SELECT boots_used FROM bisections WHERE id = $bid")" "$(db a "SELECT SUM(c.boots) FROM bisection_steps s JOIN candidates c ON c.id = s.candidate_id WHERE s.bisection_id = $bid")" "boots are counted apart from builds"
like "$(grep "bisection $bid: patch $(db a "$culprit_q"), confirmed" "$T/a-bisect.log")" "confirmed" "the bisection says what it found in one line"
is "$(db a "SELECT actor FROM flags WHERE patch_id = $(db a "$culprit_q")")" "bisection:$bid" "the flag says who raised it: the bisection"
is "$(db a "SELECT state FROM patches WHERE id = $culprit")" broken "the culprit is flagged broken"
like "$(db a "SELECT evidence FROM flags WHERE patch_id = $culprit")" "cmdline" "... with the failing test as evidence"
SQ revert "$culprit" --dry-run > "$T/a-plan.txt" 2>&1
like "$(cat "$T/a-plan.txt")" "drop   patch $dep" "the plan drops the patch brought in for it (Stable-dep-of)"
SQ revert "$culprit" --reason "bisection: breaks the cmdline KUnit suite" > "$T/a-revert.log" 2>&1
ok $? "revert: dropped, and the confirmation candidate passes"
is "$(db a "SELECT state FROM patches WHERE id = $culprit")" dropped "the culprit is dropped"
is "$(db a "SELECT state FROM patches WHERE id = $dep")" dropped "its dependent is dropped"
is "$(db a "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 6 "six patches stay queued"
is "$(grep -c '^# .*dropped by stableq' "$T/q-a/series")" 2 "both are left out of the queue directory's series"
is "$(grep -vc '^#' "$T/q-a/series")" 6 "... which names the six that stay"
is "$(db a "SELECT verdict FROM candidates WHERE id = (SELECT confirm_candidate_id FROM reverts)")" pass "the queue passes again"
SQ candidate --json > "$T/a-rerun.json" 2> "$T/a-rerun.log"
is "$(py "import json; j = json.load(open('$T/a-rerun.json')); print(j['verdict'], j['build']['cached'], j['boots'])")" "pass 1 1" "a re-run of the same state costs one boot and no build"
SQ import "$TOP/tests/fixtures/bisect-queue/fixup-of-culprit.patch" > /dev/null 2>&1
is "$(db a "SELECT state FROM patches WHERE filename IS NULL AND subject LIKE '%hyphen%'")" held "the culprit's fix-up is held, not queued: revert first"
m=$(db a "SELECT headers_and_body FROM mail WHERE patch_id = $culprit AND kind = 'dropped'")
mid=$(db a "SELECT message_id FROM patches WHERE id = $culprit")
like "$m" "In-Reply-To: <$mid>" "the culprit's author gets a mail threaded to the patch"
SQ release > "$T/a-release.log" 2>&1
ok $? "the passing queue is released" || diag "$(cat "$T/a-release.log")"
is "$(git -C "$TREE" rev-list --count "$tag..t55-a")" 6 "six commits on the branch"

# --- B: the culprit was released: revert it with its dependent --------------
setup b
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/b.conf" "$@"); }
SQ import "$T/q-b" > /dev/null 2>&1
SQ release --force > /dev/null 2>&1
is "$(git -C "$TREE" rev-list --count "$tag..t55-b")" 8 "all eight released onto a branch without a candidate"
culprit=$(db b "$culprit_q")
dep=$(db b "$dep_q")
SQ flag "$culprit" --reason "bisection found it on the queue" > /dev/null 2>&1
is "$(db b "SELECT actor FROM flags WHERE patch_id = $culprit")" "user:$(id -un)" "a flag from the command line names the local user"
SQ revert "$culprit" --reason "breaks the cmdline KUnit suite" > "$T/b-revert.log" 2>&1
ok $? "revert of the released culprit and its dependent; the branch passes again" || diag "$(tail -5 "$T/b-revert.log")"
is "$(db b "SELECT group_concat(state) FROM (SELECT state FROM patches WHERE id IN ($culprit, $dep) ORDER BY id)")" "reverted,reverted" "both reverted"
is "$(git -C "$TREE" rev-list --count "$tag..t55-b")" 10 "two revert commits on the branch"
like "$(git -C "$TREE" log -1 --format=%B t55-b)" "which is commit fa4e0003fa4e0003fa4e0003fa4e0003fa4e0003 upstream." "the last revert names the culprit's upstream commit"
is "$(db b "SELECT verdict FROM candidates WHERE id = (SELECT confirm_candidate_id FROM reverts)")" pass "the confirmation candidate of the branch passes"
is "$(db b "SELECT COUNT(*) FROM revert_items WHERE patch_path IS NOT NULL")" 2 "both reverts written into the queue directory"
git -C "$TREE" branch -D t55-a t55-b > /dev/null
done_testing
