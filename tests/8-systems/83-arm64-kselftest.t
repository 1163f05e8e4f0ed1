#!/bin/bash
# 83-arm64-kselftest.t: kselftests cross-built for arm64 and run in the
# arm64 guest. A branch with `arches = arm64` and a kselftest section for
# the quick guest (size, sigaltstack and capabilities: cheap, and they
# pass under TCG):
# the candidate's kselftests are built from its own 6.1 tree with
# ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- against arm64's uapi
# headers, into a cache of the arm64 cell's own (its key holds the arch),
# the programs are aarch64 ELF (get_size static, sas linked against the
# cross libc, whose loader and libc go in the guest's /lib; capabilities'
# test_execve linked against Debian's libcap-ng0:arm64, which `make deps`
# unpacks with its -dev package into the arm64 root: the build's
# USERCFLAGS/USERLDFLAGS find its header and library there, the guest's
# /lib/aarch64-linux-gnu gets the .so), and the arm64
# guest (qemu-system-aarch64 -M virt under TCG) runs them: their TAP
# results are stored with the arm64 candidate. The kernel itself comes
# from the build cache (80-arm64-quick.t built it); the kselftests are
# built each time (their build directory and cache are in the test's
# temp dir: BUILD_DIR-arm64-gcc-kselftest{,-cache}).
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
chmod 755 "$T" # the build user reaches the cells' build dirs in it
trap 'rm -rf "$T"' EXIT
cp "$TOP/config/tests.conf" "$T/tests.conf"
cat >> "$T/tests.conf" <<'CONF'

[test kselftest-arm64]
kind = kselftest
targets = size sigaltstack capabilities
timeout = 60
guest_config = quick
description = three kselftest targets, cross-built for the arm64 guest
CONF
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
arches = arm64
tree_dir = $TOP/var/linux
build_dir = $T/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $T/tests.conf
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
py() { /usr/bin/python3 -c "$1"; }
q() { sqlite3 "$T/stableq.db" "$1"; }

SQ tree init > "$T/init.log" 2>&1
ok $? "the 6.1 stable tree is there"
mkdir -p "$T/q"
cp "$TOP"/config/queues/6.1/* "$T/q/"
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the shipped 6.1 queue imported"
t0=$(date +%s)
SQ candidate --json > "$T/c.json" 2> "$T/c.log"
rc=$?
secs=$(($(date +%s) - t0))
j() { py "import json; j = json.load(open('$T/c.json')); print($1)"; }
cid=$(j "j['id']")
is "$(q "SELECT arch || '/' || compiler FROM candidates WHERE id = $cid")" "arm64/gcc" "the candidate's cell is arm64/gcc"
is "$rc" 0 "the candidate passes on arm64" || diag "$(j "j['summary']")"
line=$(grep -a 'kselftests ' "$T/c.log" | head -n 1)
like "$line" ": 3 of 3 targets built, 3 tests (built, " \
	"the kselftests are built: the three targets, a test each"
like "$line" " s) for arm64" "... for arm64"
like "$(grep -a 'ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- .*headers_install' "$T"/var/log/kselftest-*.log | head -n 1)" "headers_install" \
	"arm64's uapi headers are installed for them"
like "$(grep -a 'selftests/sigaltstack ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ' "$T"/var/log/kselftest-*.log | head -n 1)" \
	"CC=ccache aarch64-linux-gnu-gcc install" "each target is made with the cross compiler, through ccache"
key=$(printf '%s\n' "$line" | sed -n 's/.*kselftests \([0-9a-f]*\):.*/\1/p')
entry=$(ls -d "$T/build-arm64-gcc-kselftest-cache/$key"* 2>/dev/null | head -n 1)
ok $([ -n "$key" ] && [ -d "$entry" ] && echo 0 || echo 1) "their cache entry is the arm64 cell's own ($entry)"
like "$(readelf -h "$entry/size/get_size" 2>&1 | grep Machine:)" "AArch64" "size's get_size is an aarch64 ELF"
like "$(readelf -h "$entry/sigaltstack/sas" 2>&1 | grep Machine:)" "AArch64" "sigaltstack's sas is an aarch64 ELF"
like "$(readelf -l "$entry/sigaltstack/sas" 2>&1)" "/lib/ld-linux-aarch64.so.1" "... linked dynamically against the arm64 libc"
like "$(grep -a 'selftests/capabilities ARCH=arm64 ' "$T"/var/log/kselftest-*.log | head -n 1)" \
	"USERLDFLAGS=-L/usr/aarch64-linux-gnu/lib -L/usr/local/lib/stableq/arm64/lib/aarch64-linux-gnu" \
	"capabilities is linked against the libraries unpacked into the arm64 root"
like "$(readelf -h "$entry/capabilities/test_execve" 2>&1 | grep Machine:)" "AArch64" \
	"capabilities' test_execve (-lcap-ng) is built for arm64"
like "$(readelf -d "$entry/capabilities/test_execve" 2>&1 | grep NEEDED)" "[libcap-ng.so.0]" \
	"... against libcap-ng:arm64"
ok $([ ! -e "$T/build-kselftest-cache" ] && echo 0 || echo 1) "x86_64's kselftest cache is not used"

log=$(j "j['log_path']")
like "$(grep -a -m1 'Machine model' "$log")" "linux,dummy-virt" "the guest is QEMU's arm64 virt board"
r() { q "SELECT result FROM test_results WHERE candidate_id = $cid AND name = '$1'"; }
is "$(r kselftest.size)" pass "kselftest.size built (a result of the arm64 candidate)"
is "$(r kselftest.sigaltstack)" pass "kselftest.sigaltstack built"
is "$(r kselftest.capabilities)" pass "kselftest.capabilities built (it needs libcap-ng)" ||
	diag "$(q "SELECT detail FROM test_results WHERE candidate_id = $cid AND name = 'kselftest.capabilities'")"
is "$(r kselftest.size.get_size)" pass "get_size ran in the arm64 guest and passed"
is "$(r kselftest.size.get_size.get_runtime_memory_use)" pass "... its TAP line is a result too"
is "$(r kselftest.sigaltstack.sas)" pass "sas (dynamically linked: the cross libc's loader in the guest) passed"
n=$(q "SELECT COUNT(*) FROM test_results WHERE candidate_id = $cid AND name LIKE 'kselftest.sigaltstack.sas.%' AND result = 'pass'")
ok $([ "$n" -ge 3 ] && echo 0 || echo 1) "sas's $n TAP lines pass"
is "$(r kselftest.capabilities.test_execve)" pass \
	"test_execve ran in the arm64 guest (libcap-ng.so.0 from the unpacked root) and passed"
n=$(q "SELECT COUNT(*) FROM test_results WHERE candidate_id = $cid AND name LIKE 'kselftest.capabilities.test_execve.%' AND result = 'pass'")
ok $([ "$n" -ge 4 ] && echo 0 || echo 1) "test_execve's $n TAP lines pass"
like "$(grep -a -m1 'ok 1 get runtime memory use' "$log")" "ok 1 get runtime memory use" "the console holds the tests' TAP"
k=$(q "SELECT COUNT(*) FROM test_results WHERE candidate_id = $cid AND name LIKE 'kselftest.%'")
u=$(q "SELECT COUNT(*) FROM test_results WHERE candidate_id = $cid AND name LIKE 'kunit.%' AND result = 'pass'")
ok $([ "$u" -ge 20 ] && echo 0 || echo 1) "KUnit ran beside them ($u cases pass)"
diag "arm64 kselftests: $k results; $u KUnit cases; candidate ${secs} s; $line"
diag "$(grep -h 'build [0-9]* \|results in' "$T/c.log")"
done_testing
