#!/bin/bash
# 51-branch-6.12.t: the second branch for real. Debian's linux-source-6.12
# in git beside 6.1's, the shipped queue-6.12 (the get_user_ex check ported
# to 6.12's KUnit suite, and the 6.1 fix queued for 6.12 with
# "Regression-test: kunit.usercopy.usercopy_test_unsafe_get_user_fault"):
# `stableq verify` builds and boots 6.12 with the test alone, the test
# passes there, so the 6.12 copy of the fix is rejected as not-present with
# the test and the candidate named; the 6.12 queue candidate (the test
# alone) passes from the build cache. One cold kernel build.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# Trees and build directories are shared by the kernel tests of one
# checkout (gitignored var/): importing and building once is enough.
mkdir -p "$TOP/var"
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
[branch 6.1]
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
queue_dir = $T/q-6.1
queue_seed = $TOP/config/queues/6.1
coverage_build_dir = $T/cover-6.1
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
[branch 6.12]
linux_source = /usr/src/linux-source-6.12.tar.xz
branch = linux-6.12.y
tree_dir = $TOP/var/linux-6.12
build_dir = $TOP/var/build-6.12
queue_dir = $T/q-6.12
queue_seed = $TOP/config/queues/6.12
coverage_build_dir = $T/cover-6.12
kernel_config_dir = $TOP/config/kernel/6.12/quick
tests_file = $TOP/config/tests-6.12.conf
debian_changelog = /usr/share/doc/linux-source-6.12/changelog.Debian.gz
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
q() { sqlite3 "$T/stableq.db" "$1"; }

out=$(SQ --branch 6.12 tree init 2>&1)
ok $? "tree init --branch 6.12 imports linux-source-6.12 (or finds it imported)"
tag=$(git -C "$TOP/var/linux-6.12" describe --tags linux-6.12.y 2>/dev/null)
like "$tag" "v6.12." "the 6.12 branch sits on the v6.12.N tag of its tarball"

SQ --branch 6.12 import "$TOP/config/queues/6.12" > "$T/import.log" 2>&1
ok $? "import of the shipped queue-6.12 into branch 6.12"
is "$(q "SELECT group_concat(b.key || ':' || p.state, ' ') FROM patches p JOIN branches b ON b.id = p.branch_id ORDER BY p.id")" \
	"6.12:queued 6.12:queued" "the test and the fix are queued on 6.12"
like "$(q "SELECT detail FROM verdicts WHERE patch_id = 2 AND check_name = 'fixes'")" \
	"6.12: Cc: stable # 6.1.x covers 6.12." "the fix's checks ran on 6.12's evidence, and say so"
fix=$(q "SELECT id FROM patches WHERE subject LIKE 'x86/uaccess:%'")

SQ --branch 6.12 verify "$fix" > "$T/verify.out" 2> "$T/verify.log"
ok $? "stableq verify: the fix's own test ran without it on 6.12"
out=$(cat "$T/verify.out")
like "$out" "test not-present: 6.12: kunit.usercopy.usercopy_test_unsafe_get_user_fault passes without this patch" \
	"the verdict: not-present, naming the test"
like "$out" "in candidate 1 (linux-6.12.y 6.12." "... and the candidate it passed in"
like "$out" "the bug it fixes is not in this tree" "... and what that means"
is "$(q "SELECT state FROM patches WHERE id = $fix")" rejected "the 6.12 copy of the fix is rejected"
like "$(q "SELECT state_reason FROM patches WHERE id = $fix")" "not-present: 6.12: kunit.usercopy" "its reason says why"
is "$(q "SELECT purpose || ' ' || verdict || ' ' || patch_ids || ' ' || (SELECT key FROM branches WHERE id = branch_id) FROM candidates WHERE id = 1")" \
	"baseline pass [1] 6.12" "candidate 1: 6.12, the queue before the fix (the test alone), pass"
is "$(q "SELECT result FROM test_results WHERE candidate_id = 1 AND name = 'kunit.usercopy.usercopy_test_unsafe_get_user_fault'")" \
	pass "the KUnit case passed in it"
like "$(grep -h 'Linux version' "$T"/var/log/console-1-*.log | head -n 1)" "Linux version 6.12." "the guest that ran it was 6.12"

SQ --branch 6.12 candidate --json > "$T/c2.json" 2> "$T/c2.log"
ok $? "the 6.12 queue (the test alone) passes as a candidate"
is "$(q "SELECT b.cached FROM candidates c JOIN builds b ON b.id = c.build_id WHERE c.id = 2")" 1 \
	"... from the build cache: the state verify built, no second build"
SQ --branch 6.12 check "$fix" > "$T/check.log" 2>&1
is "$(q "SELECT state FROM patches WHERE id = $fix")" rejected "checked again, the not-present fix stays rejected"

# the same fix on 6.1: one fix, a row per branch, two answers
SQ --branch 6.1 import "$TOP/config/queues/6.1" > "$T/import61.log" 2>&1
ok $? "the 6.1 queue in the same store"
is "$(q "SELECT group_concat(branch || '=' || state, ' ') FROM (SELECT branch, state FROM fixes WHERE fix_key = (SELECT fix_key FROM fixes WHERE patch_row = $fix) ORDER BY branch)")" \
	"6.1=queued 6.12=rejected" "the fix: queued on 6.1, rejected (not present) on 6.12"
out=$(SQ branches)
like "$out" "6.12   linux-6.12.y   6.12." "stableq branches: 6.12 with its version"
like "$out" "2 patches (1 queued, 1 rejected)" "... and its queue"

done_testing
