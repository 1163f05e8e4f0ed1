#!/bin/bash
# 88-build-deadline.t: a build killed at the build deadline (build_timeout)
# is the machine's time running out, not the patches' fault: the candidate
# gets no verdict (it says why, naming build_timeout), nothing bisects, no
# patch changes state, no mail goes out; the build is recorded as an error,
# not as a failed build. Running it again with time enough goes on from
# what make compiled and judges it. A real daemon on loopback, a real
# kernel build of the 6.1 tree in the kernel tests' shared build directory
# (even with nothing to compile, make's walk of the tree outlasts a 1 s
# deadline), a build cache of the test's own (so the state is built).
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
chmod 755 "$T" # the build user works below it (docs/sandbox.md)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2> /dev/null && wait "$DPID" 2> /dev/null
	git -C "$TOP/var/linux" branch -D t88 > /dev/null 2>&1
	rm -rf "$T"
}
trap cleanup EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
git -C "$TREE" branch -f t88 "$tag"
mkdir -p "$T/q"
Q=$TOP/config/queues/6.1
cp "$Q"/*.patch "$T/q/"
head -n 1 "$Q/series" > "$T/q/series"
PORT=$(py "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $T/cache
build_timeout = 1
baseline_idle = no
tree_dir = $TREE
branch = t88
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
listen = 127.0.0.1:$PORT
poll_interval = 1
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }

SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the queue is imported" || diag "$(cat "$T/import.log")"
(cd "$TOP" && exec "$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1) &
DPID=$!
wait_for 300 "SELECT id FROM candidates WHERE purpose = 'queue' AND step = 'done'"
ok $? "the daemon runs the queue's candidate until the build deadline" ||
	diag "$(tail -n 30 "$T/daemon.log")"
sleep 3 # what the daemon would do next, had it a verdict
c=$(db "SELECT MIN(id) FROM candidates WHERE purpose = 'queue'")
is "$(db "SELECT COALESCE(verdict, 'none') FROM candidates WHERE id = $c")" none \
	"a build killed at the deadline gives no verdict (not build-failed)"
d=$(db "SELECT detail FROM candidates WHERE id = $c")
like "$d" "killed at the build deadline (build_timeout = 1 s)" "the candidate says why, naming the key"
like "$d" "not a verdict on the patches" "... and that the patches are not judged"
is "$(db "SELECT result FROM builds WHERE id = (SELECT build_id FROM candidates WHERE id = $c)")" error \
	"the build is recorded as an error of the run, not a failed build"
like "$(db "SELECT error_excerpt FROM builds WHERE id = (SELECT build_id FROM candidates WHERE id = $c)")" \
	"deadline" "... naming the deadline"
is "$(db "SELECT COUNT(*) FROM bisections")" 0 "nothing bisects"
is "$(db "SELECT group_concat(state) FROM patches")" queued "the patch stays queued"
is "$(db "SELECT COUNT(*) FROM mail")" 0 "no mail is queued"
is "$(db "SELECT COUNT(*) FROM candidates WHERE purpose = 'queue'")" 1 \
	"the daemon does not start it over by itself (the deadline would kill it again)"
kill -0 "$DPID" 2> /dev/null
ok $? "the daemon is still serving"
kill "$DPID" && wait "$DPID" 2> /dev/null
DPID=

# with time enough, the next run goes on from what make compiled and judges
sed -i 's/^build_timeout = 1$/build_timeout = 3600/' "$T/stableq.conf"
SQ candidate --json > "$T/c2.json" 2> "$T/c2.log"
rc=$?
is "$rc" 3 "run again with build_timeout = 3600: judged (the regression test alone fails, exit 3)" ||
	diag "$(tail -n 20 "$T/c2.log")"
is "$(py "import json; print(json.load(open('$T/c2.json'))['verdict'])")" fail "verdict: fail (the test patch's planted failure)"
is "$(py "import json; print(json.load(open('$T/c2.json'))['build']['result'])")" ok "the kernel built"
done_testing
