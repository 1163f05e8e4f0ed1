#!/bin/bash
# 50-kernel-candidate.t: the kernel pipeline end to end on the real tree:
# linux-source-6.1 in git, the shipped get_user_ex regression test as a
# real patch -> the candidate fails with the stale value; with the fix ->
# it passes. Real kernel builds (ccache reused across runs) and QEMU boots.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# The tree and build directory are shared by the kernel tests of one
# checkout (gitignored var/): importing and building once is enough.
mkdir -p "$TOP/var"
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
py() { /usr/bin/python3 -c "$1"; }

out=$(SQ tree init 2>&1)
ok $? "tree init imports linux-source-6.1 (or finds it imported)"
tag=$(git -C "$TOP/var/linux" describe --tags linux-6.1.y 2>/dev/null)
like "$tag" "v6.1." "the branch sits on the v6.1.N tag of the tarball"

Q=$TOP/config/queues/6.1
mkdir -p "$T/q"
cp "$Q"/*.patch "$T/q/"
head -n 1 "$Q/series" > "$T/q/series"
SQ import "$T/q" > "$T/import1.log" 2>&1
ok $? "import of the queue with the regression test alone"
is "$(sqlite3 "$T/stableq.db" "SELECT state FROM patches WHERE id = 1")" queued "the test patch is queued"

SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
rc=$?
is "$rc" 3 "the candidate with the test alone does not pass (exit 3)"
is "$(py "import json; print(json.load(open('$T/c1.json'))['verdict'])")" fail "verdict: fail"
is "$(py "import json; print([t['result'] for t in json.load(open('$T/c1.json'))['tests'] if t['name']=='user-copy'][0])")" fail "the user-copy test fails"
like "$(py "import json; print([t['detail'] for t in json.load(open('$T/c1.json'))['tests'] if t['name']=='user-copy'][0])")" "stale value 0x5a5a" "... and its detail shows the stale value"
is "$(py "import json; print(json.load(open('$T/c1.json'))['build']['result'])")" ok "the kernel built"
n=$(py "import json; print(len([t for t in json.load(open('$T/c1.json'))['tests'] if t['result']=='pass']))")
ok $([ "$n" -ge 5 ] && echo 0 || echo 1) "the other tests pass ($n passing)"

cp "$Q/series" "$T/q/series"
SQ import "$T/q" > "$T/import2.log" 2>&1
ok $? "import of the whole queue: the fix joins"
is "$(sqlite3 "$T/stableq.db" "SELECT state FROM patches WHERE id = 2")" queued "the fix is queued"
# on a terminal (script(1) gives it one), the build is one updating line;
# so that there is a build to show, the state with the fix is looked up in
# a cache of this test's own from here on, not in the kernel tests' shared
# one (the state before it came from there when another run built it)
sed -i "s|^build_cache_dir = .*|build_cache_dir = $T/build-cache|" "$T/stableq.conf"
script -qec "cd '$TOP' && '$STABLEQ' -c '$T/stableq.conf' candidate --json > '$T/c2.json'" "$T/c2.tty" > /dev/null 2>&1
ok $? "the candidate with test + fix passes (exit 0)"
tr '\r' '\n' < "$T/c2.tty" > "$T/c2.log"
like "$(grep -a 'candidate [0-9]*: building: ' "$T/c2.log" | tail -n 1)" " objects" "on a terminal the build shows the objects compiled of the total, on one line rewritten in place"
like "$(grep -a 'stableq: candidate [0-9]*: pass (' "$T/c2.log")" "tests passed" "... and ends saying what the candidate found"
is "$(py "import json; print(json.load(open('$T/c2.json'))['verdict'])")" pass "verdict: pass"
is "$(py "import json; print([t['result'] for t in json.load(open('$T/c2.json'))['tests'] if t['name']=='user-copy'][0])")" pass "the user-copy test passes with the fix"
# a guest that does not finish by its deadline is killed: verdict hang
sed 's/^tests_file/boot_timeout = 1\ntests_file/' "$T/stableq.conf" > "$T/hang.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/hang.conf" candidate --json > "$T/c3.json" 2> "$T/c3.log")
is "$(py "import json; print(json.load(open('$T/c3.json'))['verdict'])")" hang "a guest killed at a 1 s deadline: verdict hang"
is "$(py "import json; print(json.load(open('$T/c3.json'))['build']['cached'])")" 1 "... booted from the build cache: the same state is not built again"
diag "$(grep -h 'build [0-9]* ok\|booting\|results in' "$T/c1.log" "$T/c2.log")"
done_testing
