#!/bin/bash
# 85-icecc-farm.t: kernel builds on a real icecream farm (Debian's icecc),
# then the same candidate built locally, its KCIDB export and its LAVA job.
#
# The test runs in a network namespace of its own (unshare -n, loopback
# only): a real icecc-scheduler and a real iceccd listen there, so nothing
# of the farm reaches beyond this machine or meets another test's ports.
# The candidate is the branch plus a probe patch that puts a token unique
# to this run into lib/test_module.c, so that object misses the shared
# ccache and its compile job must go through icecc; the scheduler's job
# counter and log show it did. A local build of the same tree (another
# token) gets the same verdict and sends no job to the farm.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
if [ -z "${STABLEQ_FARM_NETNS:-}" ]; then
	exec unshare -n env STABLEQ_FARM_NETNS=1 bash "$0" "$@"
fi
ip link set lo up

T=$(mktemp -d)
chmod 755 "$T"
ICE=$T/ice
# icecc's daemons drop to the icecc user: their logs and caches need this
mkdir -m 1777 "$ICE"
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	for p in $PIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
# no compression: the native environment icecc packs at the first job is
# made in a minute rather than three on a loaded machine
export ICECC_TESTS=1 ICECC_TEST_SCHEDULER_PORTS=8767:8769 ICECC_ENV_COMPRESSION=none
export ICECC_TEST_SOCKET=$ICE/iceccd.socket
SCHED=127.0.0.1:8767

# the scheduler's text interface (scheduler port + 1): "listcs"
ask() {
	(exec 3<>/dev/tcp/127.0.0.1/8768 && printf 'listcs\r\nquit\r\n' >&3 &&
		timeout 5 cat <&3) 2>/dev/null | tr -d '\r'
}
jobs_total() { ask | sed -n 's/.*(\([0-9]*\) total).*/\1/p'; }

icecc-scheduler -p 8767 -n stableq-farm -l "$ICE/scheduler.log" -vvv &
SPID=$!
PIDS="$PIDS $SPID"
iceccd -s "$SCHED" -n stableq-farm -N node1 -m 3 -b "$ICE/envs" \
	-l "$ICE/iceccd.log" -vvv &
PIDS="$PIDS $!"
for i in $(seq 1 60); do
	ask | grep -q "node1 (127.0.0.1" && break
	sleep 0.5
done
like "$(ask)" "node1 (127.0.0.1" "a real iceccd logs in to a real icecc-scheduler on loopback (listcs lists it)"

mkdir -p "$TOP/var"
conf() { # conf NAME [EXTRA LINE]
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
queue_dir = $T/q-$1
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
${2:-}
CONF
}
conf farm "icecc = $SCHED"
conf local ""
conf nofarm "icecc = 127.0.0.1:8790"
SQ() { local c=$1; shift; (cd "$TOP" && "$STABLEQ" -c "$T/$c.conf" "$@"); }
py() { /usr/bin/python3 -c "$1"; }

# serve -n asks the scheduler
out=$(SQ farm serve -n 2>&1)
ok $? "serve -n with icecc set: the scheduler answers"
like "$out" "1 compile servers, 3 job slots" "... and says how big the farm is"
out=$(SQ nofarm serve -n 2>&1)
is "$?" 1 "serve -n: a scheduler that does not answer fails the check"
like "$out" "127.0.0.1:8790 does not answer" "... naming the address"
conf badport "icecc = 127.0.0.1:99999"
out=$(SQ badport serve -n 2>&1)
is "$?" 1 "serve -n: a malformed scheduler address fails the check"
like "$out" "the port must be 1 to 65534" "... saying what is wrong"
out=$(SQ local serve -n 2>&1)
ok $? "serve -n without icecc: no farm to check"
is "$(echo "$out" | grep -c icecc)" 0 "... and says nothing of one"

SQ farm tree init > "$T/tree.log" 2>&1
ok $? "tree init (linux-source-6.1 in git, shared with the other kernel tests)"

# the probe: a token unique to this run in lib/test_module.c
probe() { # probe NAME TOKEN -> a mail-format patch in $T/q-NAME
	local q=$T/q-$1
	mkdir -p "$q" "$T/p/a/lib" "$T/p/b/lib"
	git -C "$TOP/var/linux" show linux-6.1.y:lib/test_module.c > "$T/p/a/lib/test_module.c"
	cp "$T/p/a/lib/test_module.c" "$T/p/b/lib/test_module.c"
	echo "MODULE_INFO(stableq_probe, \"$2\");" >> "$T/p/b/lib/test_module.c"
	{
		printf 'From: Farm Probe <probe@example.org>\nDate: Mon, 1 Sep 2025 10:00:00 +0000\n'
		printf 'Subject: [PATCH 6.1] test_module: probe %s\nMessage-Id: <probe-%s@example.org>\n\n' "$2" "$2"
		printf 'A token that no cache has seen.\n\nCc: stable@vger.kernel.org # 6.1\nSigned-off-by: Farm Probe <probe@example.org>\n---\n'
		(cd "$T/p" && diff -u a/lib/test_module.c b/lib/test_module.c)
		printf -- '-- \n2.39.5\n'
	} > "$q/9999-probe.patch"
	echo 9999-probe.patch > "$q/series"
	rm -rf "$T/p"
}
queue_all() { # queue_all NAME: import, and queue the probe if it waits
	SQ "$1" import "$T/q-$1" > "$T/import-$1.log" 2>&1 || return 1
	local id
	id=$(sqlite3 "$T/$1.db" "SELECT id FROM patches WHERE subject LIKE 'test_module: probe%'")
	[ "$(sqlite3 "$T/$1.db" "SELECT state FROM patches WHERE id = $id")" = queued ] ||
		SQ "$1" override "$id" --reason "the farm test's probe" > /dev/null 2>&1
	[ "$(sqlite3 "$T/$1.db" "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" = 1 ]
}
RUN=$$-$(date +%s%N)
probe farm "farm-$RUN"
queue_all farm
ok $? "the farm probe is queued"

field() { py "import json; print(json.load(open('$T/$1.json'))$2)"; }
build() { # build NAME: its candidate; J0/J1 the farm's job counter around it
	J0=$(jobs_total)
	SQ "$1" candidate --json > "$T/$1.json" 2> "$T/$1.log"
	RC=$?
	J1=$(jobs_total)
	BLOG=$(field "$1" "['build']['log_path']")
}
build farm
ok $RC "the candidate built on the farm passes (exit $RC)"
is "$(field farm "['verdict']")" pass "verdict: pass"
NJ=$(nproc)
[ "$NJ" -lt 3 ] && NJ=3
like "$(grep 'icecc farm' "$BLOG")" "make -j$NJ" "make -j from the farm's 3 slots (or the local cores, if more)"
like "$(grep 'make bzImage modules:' "$BLOG" | tail -n 1)" " -j$NJ " "... on make's command line"
ok $([ -n "$J0" ] && [ -n "$J1" ] && [ "$J1" -gt "$J0" ] && echo 0 || echo 1) \
	"compile jobs went through the scheduler ($J0 -> $J1 jobs, icecc's own counter)"

# the same queue built locally (another token: a real local compile)
probe local "local-$RUN"
queue_all local
ok $? "another probe, for a local build of the same tree"
build local
ok $RC "the local build passes too (exit $RC)"
is "$(field local "['verdict']")" "$(field farm "['verdict']")" \
	"the farm's kernel gets the same verdict as the local one"
res() { py "import json; print(sorted((t['name'], t['result']) for t in json.load(open('$T/$1.json'))['tests']))"; }
is "$(res local)" "$(res farm)" "... test by test"
is "$J1" "$J0" "the local build sent no job to the farm"
is "$(grep -c 'icecc' "$BLOG")" 0 "... nor mentions icecc in its log"

# the real results as KCIDB and as a LAVA job
SQ local kcidb > "$T/kcidb.json"
ok $? "stableq kcidb on the real candidate"
py "
import json, jsonschema, sys
s = json.load(open('$TOP/config/kcidb-v4.schema.json'))
d = json.load(open('$T/kcidb.json'))
errs = [e.message for e in jsonschema.Draft202012Validator(s).iter_errors(d)]
paths = {t['path'] for t in d['tests']}
print('\n'.join(errs[:5]), file=sys.stderr)
sys.exit(0 if not errs and {'boot', 'user-copy'} <= paths and
         any(p.startswith('kunit.') for p in paths) else 1)" 2> "$T/kcidb.err"
ok $? "... valid KCIDB v4 with boot, kunit.<suite>.<case> and user-copy tests" || cat "$T/kcidb.err"

SQ local lava-job 1 --out "$T/lava" > "$T/job.yaml" 2> "$T/lava.err"
ok $? "stableq lava-job 1" || cat "$T/lava.err"
py "
import sys, yaml
from lava_common.schemas import validate
job = yaml.safe_load(open('$T/job.yaml'))
validate(job, strict=True)
acts = [next(iter(a)) for a in job['actions']]
assert acts == ['deploy', 'boot', 'test'], acts
imgs = job['actions'][0]['deploy']['images']
assert imgs['kernel']['url'] == 'file://$T/lava/bzImage', imgs
assert job['device_type'] == 'qemu'
" 2> "$T/lava-validate.err"
ok $? "the job validates with lava-common's schema (deploy, boot, test; qemu)" || cat "$T/lava-validate.err"
cmp -s "$TOP/var/build/arch/x86/boot/bzImage" "$T/lava/bzImage"
ok $? "... and its kernel is the candidate's bzImage"
h=$(sha256sum "$T/lava/initramfs.cpio" | cut -c-64)
like "$(cat "$T/job.yaml")" "$h" "... the initramfs with its sha256"
# the scheduler writes its log out as it stops
kill "$SPID"
wait "$SPID"
n=$(grep -c "in joblist of node1" "$ICE/scheduler.log")
ok $([ "$n" -gt 0 ] && echo 0 || echo 1) "the scheduler's log handed $n compile jobs to node1"
diag "$(grep -h 'build [0-9]* ok\|results in' "$T/farm.log" "$T/local.log")"
done_testing
