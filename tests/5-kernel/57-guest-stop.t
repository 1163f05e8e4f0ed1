#!/bin/bash
# 57-guest-stop.t: a guest test that stops the guest (a panic, or here
# `reboot -f`: the guest ends by itself, neither killed nor done) fails
# alone: the tests after it run in another boot (qemu-runner/runner.h,
# RUNNER_BOOTS_MAX), with built-in KUnit off, and the console log holds
# every boot. Real build (ccache, the build directory the other kernel
# tests share) and QEMU boots of the tip.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
stable_tree
git -C "$TREE" branch -f t57s "$tag"
cp "$TOP/config/tests.conf" "$T/tests.conf"
cat >> "$T/tests.conf" <<'CONF'

[test stopper]
kind = guest
command = echo stopping the guest; reboot -f; sleep 30
timeout = 60

[test mid]
kind = guest
command = echo mid ran
timeout = 10

[test stopper-2]
kind = guest
command = reboot -f; sleep 30
timeout = 60

[test last]
kind = guest
command = grep -q stableq.resume /proc/cmdline
timeout = 10
CONF
mkdir -p "$T/q" && : > "$T/q/series"
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TREE
branch = t57s
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $T/tests.conf
test_retries = 0
test_baseline = no
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
SQ candidate > "$T/c.log" 2>&1
is "$?" 3 "the candidate fails (exit 3): two tests stopped the guest"
c=$(db "SELECT MAX(id) FROM candidates")
st() { db "SELECT result FROM test_results WHERE candidate_id = $c AND name = '$1'"; }
is "$(st stopper)" fail "stopper failed"
like "$(db "SELECT detail FROM test_results WHERE candidate_id = $c AND name = 'stopper'")" \
	"did not finish: the guest stopped during it" "... the guest stopped during it"
is "$(st mid)" pass "mid, after it, ran in the second boot and passed"
is "$(st stopper-2)" fail "stopper-2 stopped the second boot"
is "$(st last)" pass "last ran in a third boot, with stableq.resume on its command line"
is "$(db "SELECT boots FROM candidates WHERE id = $c")" 3 "three boots"
is "$(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $c AND name = 'user-copy'")" 1 \
	"the tests before the stop ran once (user-copy has one result)"
is "$(st user-copy)" pass "... and passed"
kunit=$(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $c AND name LIKE 'kunit.%'")
ok "$([ "$kunit" -gt 50 ]; echo $?)" "built-in KUnit's cases are the first boot's ($kunit)"
is "$(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $c AND name LIKE 'kunit.%' AND result != 'pass'")" 0 \
	"... all passed (the boots after it ran no built-in KUnit)"
is "$(st kunit)" pass "the kunit test is the first boot's"
log=$(db "SELECT log_path FROM candidates WHERE id = $c")
like "$(cat "$log")" "==== stableq: boot 2: the guest stopped during test stopper; the 3 tests after it ====" \
	"the console log holds the second boot, headed by why"
like "$(cat "$log")" "==== stableq: boot 3: the guest stopped during test stopper-2; the 1 test after it ====" \
	"... and the third"
is "$(grep -c '@@stableq userspace' "$log")" 3 "... three boots reached userspace"
like "$(cat "$T/c.log")" "boot 2: the guest stopped during test stopper; the 3 tests after it: 2 results, 1 failed; boot 3: the guest stopped during test stopper-2; the 1 test after it: 1 result, 0 failed" \
	"the run's reason says it booted again, and what each boot added"
ok "$([ ! -e "$log.resume" ]; echo $?)" "no resume log is left beside it"

# boots_max: a guest that stops in every boot is not booted without end
cat > "$T/tests.conf" <<'CONF'
[test boot]
kind = boot

CONF
for i in 1 2 3 4 5 6; do
	printf '[test s%d]\nkind = guest\ncommand = reboot -f; sleep 30\ntimeout = 60\n\n' "$i" >> "$T/tests.conf"
done
SQ candidate > "$T/c2.log" 2>&1
is "$?" 3 "a guest that stops in every test fails"
c=$(db "SELECT MAX(id) FROM candidates")
is "$(db "SELECT boots FROM candidates WHERE id = $c")" 4 "after four boots (RUNNER_BOOTS_MAX)"
is "$(db "SELECT group_concat(result, ' ') FROM (SELECT result FROM test_results WHERE candidate_id = $c AND name GLOB 's[0-9]' ORDER BY name)")" \
	"fail fail fail fail fail fail" "s1-s4 stopped a boot each, s5 and s6 never ran"
like "$(db "SELECT detail FROM test_results WHERE candidate_id = $c AND name = 's5'")" "not run: the guest stopped before this test" \
	"s5: not run, and says so"
done_testing
