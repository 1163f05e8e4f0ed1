#!/bin/bash
# 59-retry-failed.t: the verdict waits only for what decides it. The daemon
# runs the tip's baseline (build and whole set) while it is idle, before any
# candidate: its failure tip-known (a guest test that fails on every kernel)
# is recorded once as a known failure of the tip, and retried alone. Then
# the queue gets the shipped get_user_ex regression test: its candidate
# fails user-copy, retries user-copy ALONE in one short boot (not the whole
# set, not the tip's known failure), and is judged against the baseline
# made before it: no run of the tip during the candidate. Real kernel
# builds (the shared build cache, ccache) and QEMU boots of the quick
# guest on the 6.1 tree, a real daemon on loopback.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
# builds run as the unprivileged build user (sandbox.h), who must reach
# the build directories below $T: mktemp makes it 0700
chmod 755 "$T"
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2> /dev/null && wait "$DPID" 2> /dev/null
	git -C "$TOP/var/linux" branch -D t59 > /dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
git -C "$TREE" branch -f t59 "$tag"
cp "$TOP/config/tests.conf" "$T/tests.conf"
tip_known "$T/tests.conf"
mkdir -p "$T/q"
PORT=$(py "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TREE
branch = t59
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $T/tests.conf
test_retries = 1
auto_revert = plan
listen = 127.0.0.1:$PORT
poll_interval = 1
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }

# --- the daemon, idle: the tip's baseline ------------------------------------
(cd "$TOP" && exec "$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1) &
DPID=$!
wait_for 2400 "SELECT id FROM candidates WHERE purpose = 'baseline' AND verdict IS NOT NULL"
ok $? "the idle daemon runs the tip's baseline by itself (no queue, no candidate asked for)" ||
	diag "$(tail -n 30 "$T/daemon.log"; tail -n 30 "$T/var/log/daemon-steps.log")"
base=$(db "SELECT MIN(id) FROM candidates WHERE purpose = 'baseline'")
is "$(db "SELECT patch_ids || ' ' || verdict FROM candidates WHERE id = $base")" "[] fail" \
	"the baseline: no patches, and tip-known fails on the tip"
is "$(db "SELECT status FROM test_cases WHERE candidate_id = $base AND name = 'tip-known'")" known \
	"its failure is recorded once as a known failure of the tip"
like "$(db "SELECT detail FROM events WHERE subject_kind = 'candidate' AND subject_id = $base AND kind = 'baseline'")" \
	"tip-known: exit status 1" "... with its reason, in one event"
is "$(db "SELECT group_concat(DISTINCT name) FROM test_results WHERE candidate_id = $base AND run = 2")" tip-known \
	"the baseline retried its failing test alone"
ok "$(db "SELECT baseline_of FROM candidates WHERE id = $base" | grep -Eqx '[0-9a-f]{40} [0-9a-f]{64} [0-9a-f]{64}'; echo $?)" \
	"... and names the tip state it ran (tree, configuration, test set)"
sleep 3
is "$(db "SELECT COUNT(*) FROM candidates")" 1 "once per tip state: the idle daemon runs no other"

# --- a queue change: the candidate ------------------------------------------
Q=$TOP/config/queues/6.1
cp "$Q"/*.patch "$T/q/"
head -n 1 "$Q/series" > "$T/q/series"
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the regression test is queued" || diag "$(cat "$T/import.log")"
wait_for 2400 "SELECT id FROM candidates WHERE purpose = 'queue' AND verdict IS NOT NULL"
ok $? "the daemon runs the queue's candidate to a verdict" ||
	diag "$(tail -n 40 "$T/var/log/daemon-steps.log")"
kill "$DPID" && wait "$DPID" 2> /dev/null
DPID=
c=$(db "SELECT MIN(id) FROM candidates WHERE purpose = 'queue'")
steps=$T/var/log/daemon-steps.log
is "$(db "SELECT verdict FROM candidates WHERE id = $c")" fail "the candidate fails"
is "$(db "SELECT status FROM test_cases WHERE candidate_id = $c AND name = 'user-copy'")" regression \
	"user-copy is a regression"
is "$(db "SELECT status FROM test_cases WHERE candidate_id = $c AND name = 'tip-known'")" known \
	"tip-known is the tip's known failure"

# judged against the baseline made before it
is "$(db "SELECT tip_candidate_id FROM candidates WHERE id = $c")" "$base" \
	"the candidate is judged against the baseline"
is "$(db "SELECT (SELECT finished_at FROM candidates WHERE id = $base) <= started_at AND $base < id FROM candidates WHERE id = $c")" 1 \
	"... which was finished before the candidate was created"
is "$(db "SELECT COUNT(*) FROM candidates WHERE purpose = 'baseline'")" 1 "no run of the tip during the candidate"
ok "$(grep -c "running the test set on the tip" "$steps" | grep -qx 0; echo $?)" \
	"... its log says none was run"
like "$(grep "candidate $c: judged against" "$steps")" "judged against the tip's run, candidate $base, made before it" \
	"... and names the run it was judged against"
is "$(db "SELECT seconds || ' ' || detail FROM candidate_phases WHERE candidate_id = $c AND phase = 'baseline'")" \
	"0.0 candidate $base, run before" "its baseline phase took no time"

# the retry: user-copy alone, one short boot
is "$(db "SELECT boots FROM candidates WHERE id = $c")" 2 "two boots: the whole set, then one retry"
is "$(db "SELECT group_concat(DISTINCT name) FROM test_results WHERE candidate_id = $c AND run = 2")" user-copy \
	"the retry's results: user-copy alone"
is "$(db "SELECT COUNT(DISTINCT name) FROM test_results WHERE candidate_id = $c AND run = 1")" \
	"$(db "SELECT COUNT(DISTINCT name) FROM test_results WHERE candidate_id = $base AND run = 1")" \
	"... where the first boot ran the whole set, as the baseline did"
like "$(grep "candidate $c: retry" "$steps")" "retry 1 of 1: 1 failing test alone, in one boot: user-copy" \
	"the runner says what it retries: the failing test, not the tip's known failure"
con=$T/var/log/console-$c-2.log
is "$(grep -c '^@@stableq begin ' "$con")" 1 "the retry boot's console: one test began"
like "$(grep '^@@stableq begin ' "$con")" "@@stableq begin user-copy " "... user-copy"
like "$(grep -a 'Kernel command line' "$con")" "kunit.filter_glob=stableq-resume" \
	"... with built-in KUnit off (no KUnit test failed)"
retry=$(db "SELECT seconds FROM candidate_phases WHERE candidate_id = $c AND phase = 'retry'")
ok "$(py "print(0 if 0 < $retry < 120 else 1)")" "the retry took ${retry} s (< 2 min)"
ok "$(grep "candidate $c: phase " "$steps" | tr '\n' ' ' |
	grep -Eq "phase apply: [0-9].* phase build: [0-9].* phase boot: [0-9.]+ s, phase tests: [0-9.]+ s .*phase retry: [0-9]"; echo $?)" \
	"the candidate's progress says each phase with its time"
diag "$(db "SELECT c.purpose || ' ' || p.phase || ' ' || printf('%.1f', p.seconds) || ' s' || COALESCE(' (' || p.detail || ')', '') FROM candidate_phases p JOIN candidates c ON c.id = p.candidate_id ORDER BY p.id")"
done_testing
