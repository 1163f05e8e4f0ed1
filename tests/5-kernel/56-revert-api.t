#!/bin/bash
# 56-revert-api.t: one revert path. A released patch reverted through the
# API (POST /patches/{id}/revert) ends `confirmed` with its confirmation
# candidate, exactly as through the CLI: the daemon runs the confirmation
# as its next step. On the way, the daemon is stopped with SIGTERM while
# that step builds a kernel: it is gone within seconds, make's tree with
# it, the step is recorded as interrupted, and the next start resumes it.
# Real kernel builds and QEMU boots (ccache), a real daemon on loopback.
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
	[ -n "$DPID" ] && kill -9 "$DPID" 2> /dev/null
	pkill -9 -f "$T/build-cold" 2> /dev/null
	git -C "$TOP/var/linux" branch -D t56-api t56-cli > /dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
PORT=$(py "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")

setup() { # NAME BUILD_DIR: a branch on the base tag, the shipped queue, a config
	git -C "$TREE" branch -f "t56-$1" "$tag"
	mkdir -p "$T/q-$1"
	cp "$TOP"/config/queues/6.1/*.patch "$TOP/config/queues/6.1/series" "$T/q-$1/"
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
tree_dir = $TREE
branch = t56-$1
build_dir = $2
queue_dir = $T/q-$1
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
listen = 127.0.0.1:$PORT
# the daemon here only answers (52, 53) or reverts (56): no idle baseline
baseline_idle = no
poll_interval = 1
CONF
}
db() { sqlite3 "$T/$1.db" "$2"; }
test_q="SELECT id FROM patches WHERE subject LIKE '%test_user_copy%'"

# --- through the API ----------------------------------------------------------
setup api "$T/build-cold"
SA() { (cd "$TOP" && "$STABLEQ" -c "$T/api.conf" "$@"); }
SA import "$T/q-api" > "$T/api-import.log" 2>&1
SA release --force > "$T/api-release.log" 2>&1
is "$(git -C "$TREE" rev-list --count "$tag..t56-api")" 2 "the shipped queue is released (test, fix)"
victim=$(db api "$test_q")
TOKEN=$(SA token add t56 2> /dev/null)
start_daemon() {
	(cd "$TOP" && exec "$STABLEQ" -c "$T/api.conf" serve -d >> "$T/daemon.log" 2>&1) &
	DPID=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/api/v1/health" && return 0
		sleep 0.1
	done
	return 1
}
start_daemon
ok $? "the daemon answers on 127.0.0.1:$PORT"
curl -s -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d '{"reason": "the test patch goes"}' -o "$T/revert.json" -w '%{http_code}' \
	"http://127.0.0.1:$PORT/api/v1/patches/$victim/revert" > "$T/code"
is "$(cat "$T/code")" 201 "POST /patches/$victim/revert: 201"
cid=$(py "import json; print(json.load(open('$T/revert.json'))['confirm_candidate_id'])")
rid=$(py "import json; print(json.load(open('$T/revert.json'))['revert_id'])")
ok $([ "$cid" -gt 0 ] 2> /dev/null; echo $?) "the answer names the confirmation candidate ($cid)"
is "$(db api "SELECT confirm_candidate_id FROM reverts WHERE id = $rid")" "$cid" "... linked to the revert in the store"

# The daemon takes the confirmation as its next step; a cold build directory
# makes it build for a while. Stop the daemon while make runs.
building=1
for _ in $(seq 600); do
	if [ "$(db api "SELECT step FROM candidates WHERE id = $cid")" = build ] &&
		pgrep -f "O=$T/build-cold" > /dev/null; then
		building=0
		break
	fi
	sleep 0.5
done
ok $building "the daemon's confirm step is building a kernel"
t0=$(date +%s.%N)
kill -TERM "$DPID"
wait "$DPID"
DPID=
secs=$(py "print(round($(date +%s.%N) - $t0, 1))")
ok $(py "print(0 if $secs < 10 else 1)") "SIGTERM: the daemon is gone in ${secs} s, not at the end of the build"
sleep 0.5
ok $(pgrep -f "O=$T/build-cold" > /dev/null; [ $? -ne 0 ]; echo $?) "... and so is make's tree"
like "$(db api "SELECT detail FROM events WHERE kind = 'interrupted' AND subject_kind = 'daemon'")" "step confirm $rid stopped" "the step is recorded as interrupted"
is "$(db api "SELECT state FROM reverts WHERE id = $rid")" done "the revert waits for its confirmation"
is "$(db api "SELECT COALESCE(verdict, 'none') FROM candidates WHERE id = $cid")" none "... whose candidate has no verdict"

# The next start resumes it (with the warm build directory).
sed -i "s|^build_dir = .*|build_dir = $TOP/var/build|" "$T/api.conf"
start_daemon
ok $? "the daemon starts again"
state=
for _ in $(seq 2400); do
	state=$(db api "SELECT state FROM reverts WHERE id = $rid")
	[ "$state" = confirmed ] && break
	[ -n "$(db api "SELECT 1 FROM events WHERE subject_kind = 'revert' AND subject_id = $rid AND kind = 'unconfirmed'")" ] && break
	sleep 1
done
is "$state" confirmed "the revert made through the API ends confirmed"
is "$(db api "SELECT verdict FROM candidates WHERE id = $cid")" pass "... by its confirmation candidate, which passes"
curl -s "http://127.0.0.1:$PORT/api/v1/reverts/$rid" > "$T/revert-after.json"
is "$(py "import json; r=json.load(open('$T/revert-after.json')); print(r['state'], r['confirm_candidate_id'])")" "confirmed $cid" "GET /reverts/$rid says so"
kill -TERM "$DPID"
wait "$DPID"
DPID=

# --- the same through the CLI ---------------------------------------------------
setup cli "$TOP/var/build"
SC() { (cd "$TOP" && "$STABLEQ" -c "$T/cli.conf" "$@"); }
SC import "$T/q-cli" > /dev/null 2>&1
SC release --force > /dev/null 2>&1
SC revert "$(db cli "$test_q")" --reason "the test patch goes" > "$T/cli-revert.log" 2>&1
ok $? "stableq revert of the same released patch confirms it" || diag "$(tail -5 "$T/cli-revert.log")"
is "$(db cli "SELECT state FROM reverts")" confirmed "... state confirmed"
is "$(db cli "SELECT verdict FROM candidates WHERE id = (SELECT confirm_candidate_id FROM reverts)")" pass "... its confirmation candidate passes"
is "$(git -C "$TREE" rev-parse 't56-api^{tree}')" "$(git -C "$TREE" rev-parse 't56-cli^{tree}')" "both branches end with the same tree"
is "$(db api "SELECT group_concat(kind) FROM (SELECT kind FROM events WHERE subject_kind = 'revert' ORDER BY id)")" \
	"$(db cli "SELECT group_concat(kind) FROM (SELECT kind FROM events WHERE subject_kind = 'revert' ORDER BY id)")" \
	"the revert's events are the same through either"
done_testing
