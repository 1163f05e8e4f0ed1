#!/bin/bash
# 53-coverage-boot.t: which of a patch's lines ran, on a real gcov kernel.
# The shipped 6.1 queue (a test_user_copy check and the get_user_ex fix)
# with coverage_boot = yes: after the candidate passes, a second kernel
# with CONFIG_GCOV_KERNEL and gcov on lib/test_user_copy.o alone (the
# queue's only C file in the booted kernel) boots the test set, its
# counters come back over the console, and gcov says how many of the
# test patch's changed lines the user-copy test executed. The fix changes
# only a macro in arch/x86/include/asm/uaccess.h: gcov counts no line of
# a macro body (the code runs on the line that uses it), which the patch
# says instead of a count. Shown in `show`, `candidate --show`, the
# summary, the API and the KCIDB export. The gcov build directory is
# $TOP/var/gcov/build (one extra small build, reused by later runs).
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill $DPID 2>/dev/null; rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
mkdir -p "$TOP/var"
PORT=$(py "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
coverage_build_dir = $TOP/var
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
listen = 127.0.0.1:$PORT
# the daemon here only answers (52, 53) or reverts (56): no idle baseline
baseline_idle = no
coverage_boot = yes
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }

out=$(SQ tree init 2>&1)
ok $? "the stable tree is there"
Q=$TOP/config/queues/6.1
mkdir -p "$T/q"
cp "$Q"/*.patch "$Q/series" "$T/q/"
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the shipped queue imports"

SQ candidate --json > "$T/c.json" 2> "$T/c.log"
ok $? "the candidate passes (exit 0)"
C=$(py "import json; print(json.load(open('$T/c.json'))['id'])")
like "$(cat "$T/c.log")" "coverage boot: building with gcov on 1 object" "the coverage boot profiles one object"
is "$(db "SELECT objects FROM coverage_boots WHERE candidate_id = $C")" '["lib/test_user_copy.o"]' "... lib/test_user_copy.o"
grep -q "gcov-file .*lib/test_user_copy.gcda" "$T/var/log/gcov-console-$C.log"
ok $? "its counters came back over the console"
row=$(db "SELECT changed, executable, executed FROM patch_lines WHERE candidate_id = $C AND patch_id = 1 AND path = 'lib/test_user_copy.c'")
IFS='|' read -r ch ex run <<< "$row"
diag "lib/test_user_copy.c: $run of $ex executable changed lines ran ($ch changed)"
ok $([ "${ch:-0}" -eq 61 ] && echo 0 || echo 1) "the test patch adds 61 lines"
ok $([ "${ex:-0}" -gt 0 ] && [ "$ex" -lt "$ch" ] && echo 0 || echo 1) "gcov counts some of them as code, not the comments ($ex)"
ok $([ "${run:-0}" -gt 0 ] && [ "$run" -le "$ex" ] && echo 0 || echo 1) "the user-copy test executed $run of them"
is "$(db "SELECT executable FROM patch_lines WHERE candidate_id = $C AND patch_id = 2")" "0" "the fix's macro lines are no code to gcov, and not an error"

SQ show 1 > "$T/show1.txt" 2>&1
like "$(cat "$T/show1.txt")" "lines:      exercised $run of $ex changed lines (candidate $C)" "show: the test patch's lines"
like "$(cat "$T/show1.txt")" "lib/test_user_copy.c: $run of $ex code lines ran" "... per file"
SQ show 2 > "$T/show2.txt" 2>&1
like "$(cat "$T/show2.txt")" "lines:      none of its 11 changed lines is code gcov counts" "show: the fix's header lines are a macro body, no code to gcov"
SQ candidate --show "$C" > "$T/cshow.txt" 2>&1
like "$(cat "$T/cshow.txt")" "coverage boot: exercised $run of $ex changed lines" "candidate --show: the coverage boot"
like "$(py "import json; print(json.load(open('$T/c.json'))['summary'])")" "exercised $run of $ex changed lines" "the candidate's summary says it"

(cd "$TOP" && exec "$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1) &
DPID=$!
for i in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/api/v1/health" > /dev/null && break; sleep 0.2; done
curl -sf "127.0.0.1:$PORT/api/v1/patches/1" > "$T/api-p1.json"
is "$(py "import json; print(json.load(open('$T/api-p1.json'))['coverage']['lines']['executed'])")" "$run" "GET /patches/1: coverage.lines.executed"
curl -sf "127.0.0.1:$PORT/api/v1/candidates/$C" > "$T/api-c.json"
is "$(py "import json; c=json.load(open('$T/api-c.json'))['coverage']; print(c['lines']['executed'], [p['lines']['executed'] for p in c['patches'] if p['patch_id']==1][0])")" "$run $run" "GET /candidates/$C: the coverage boot and each patch's lines"
kill $DPID 2>/dev/null
wait $DPID 2>/dev/null
DPID=
SQ kcidb > "$T/kcidb.json" 2> "$T/kcidb.err"
ok $? "the KCIDB export runs"
is "$(py "import json; k=json.load(open('$T/kcidb.json')); co=[c for c in k['checkouts'] if c['id']=='stableq:candidate-$C'][0]; print([p['executed'] for p in co['misc']['executed_lines'] if p['patch_id']==1][0])")" "$run" "KCIDB: the checkout's misc.executed_lines per patch"
python3 -c "
import json, jsonschema
jsonschema.validate(json.load(open('$T/kcidb.json')), json.load(open('$TOP/config/kcidb-v4.schema.json')))" 2> "$T/schema.err"
ok $? "the export still validates against the KCIDB schema"
done_testing
