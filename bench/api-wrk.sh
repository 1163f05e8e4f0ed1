#!/bin/sh
# bench/api-wrk.sh: wrk against GET /api/v1/patches?limit=50 on a 1,000-patch
# database (imported through POST /api/v1/patches, checked by the daemon),
# side by side in the same run with bench/bare-mhd.c answering a static 2 KB
# body. Goal: >= 50 % of the bare server's req/s, p99 < 10 ms, no errors at
# 256 connections. Prints the figures (DURATION=s, CONNS=n, THREADS=n,
# ROUNDS=n, STABLEQ=binary):
#  - the daemon as it runs (answers kept until the store changes), plain
#    (wrk's default) and with Accept-Encoding: gzip (what browsers, curl
#    --compressed and Python's requests send);
#  - the same with STABLEQ_HTTP_CACHE=0 (every answer made from SQLite);
#  - the same while another process commits WRITES times a second (each
#    commit drops the cached answers, as the daemon's steps do);
#  - a bare server sending a static body of the same size as the API's
#    plain answer (~25 KB): on loopback the bytes cost more than the server;
#  - both at LOWCONNS connections, where requests do not queue behind each
#    other (with CONNS connections always busy, mean latency = CONNS / req/s).
# Both servers keep connections alive (answers queued once the request is in).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib/patches.sh"
N=${N:-1000}
DURATION=${DURATION:-10}
CONNS=${CONNS:-256}
THREADS=${THREADS:-2}
LOWCONNS=${LOWCONNS:-8}
ROUNDS=${ROUNDS:-3}
WRITES=${WRITES:-20}
T=$(mktemp -d)
PIDS=""
cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null || true; done
	for p in $PIDS; do wait "$p" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT INT TERM
fail() { echo "bench/api-wrk: $*" >&2; [ -f "$T/daemon.log" ] && tail -20 "$T/daemon.log" >&2; exit 1; }
command -v wrk >/dev/null || fail "wrk is not installed (make deps)"
STABLEQ=${STABLEQ:-$TOP/stableq}
[ -x "$STABLEQ" ] || fail "build ./stableq first (make bench)"
[ -x "$TOP/bench/bin/bare-mhd" ] || fail "build bench/bin/bare-mhd first (make bench)"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A small stable tree: the daemon needs one to check patches (not the kernel).
G() { git -c user.name=b -c user.email=b@example.org -c init.defaultBranch=master "$@"; }
G init -q "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > "$T/linux/Makefile"
(cd "$T/linux" && G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y)

API_PORT=$(free_port)
BARE_PORT=$(free_port)
cat > "$T/conf" <<CONF
db = $T/bench.db
var_dir = $T/var
listen = 127.0.0.1:$API_PORT
tree_dir = $T/linux
queue_dir =
auto_revert = plan
CONF
SQ() { STABLEQ_NO_DEFAULT_CONFIG=1 "$STABLEQ" -c "$T/conf" "$@"; }
TOKEN=$(SQ token add bench 2>/dev/null) || fail "token add"

# 1,000 patches in mail format, 100 to an mbox.
i=1
while [ $i -le "$N" ]; do
	# unannotated: the patches wait for a human, so the daemon stays idle
	# (no candidate builds or bisections rewriting the store) while wrk runs
	bench_patch $i "PATCH 6.1" api-bench unannotated >> "$T/mbox-$(((i - 1) / 100))"
	i=$((i + 1))
done

"$TOP/bench/bin/bare-mhd" "$BARE_PORT" > "$T/bare.log" 2>&1 &
PIDS="$PIDS $!"
DAEMON=""
start_daemon() { # [ENV=VALUE]
	(cd "$TOP" && exec env STABLEQ_NO_DEFAULT_CONFIG=1 "$@" "$STABLEQ" -c "$T/conf" serve -d) >> "$T/daemon.log" 2>&1 &
	DAEMON=$!
	PIDS="$PIDS $DAEMON"
	n=0
	until curl -fs "http://127.0.0.1:$API_PORT/api/v1/health" > /dev/null 2>&1; do
		n=$((n + 1))
		[ $n -lt 100 ] || fail "the daemon did not come up"
		sleep 0.1
	done
}
stop_daemon() {
	kill "$DAEMON"
	wait "$DAEMON" || fail "the daemon did not exit cleanly"
}
start_daemon
n=0
until curl -fs "http://127.0.0.1:$API_PORT/api/v1/health" > /dev/null 2>&1 &&
      curl -fs "http://127.0.0.1:$BARE_PORT/" > /dev/null 2>&1; do
	n=$((n + 1))
	[ $n -lt 100 ] || fail "the servers did not come up"
	sleep 0.1
done

t0=$(date +%s.%N)
for f in "$T"/mbox-*; do
	curl -fsS -o /dev/null -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/mbox' --data-binary "@$f" \
		"http://127.0.0.1:$API_PORT/api/v1/patches" || fail "import of $f"
done
t1=$(date +%s.%N)
# the daemon checks them (bounded wait)
n=0
until curl -fs "http://127.0.0.1:$API_PORT/api/v1/health" |
      python3 -c 'import json,sys; h=json.load(sys.stdin); sys.exit(0 if h["step"]=="idle" and not h["queue"]["imported"] else 1)'; do
	n=$((n + 1))
	[ $n -lt 600 ] || fail "the daemon did not check the patches within 120 s"
	sleep 0.2
done
total=$(curl -fs "http://127.0.0.1:$API_PORT/api/v1/patches?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])')
[ "$total" -eq "$N" ] || fail "expected $N patches, found $total"
bytes=$(curl -fs "http://127.0.0.1:$API_PORT/api/v1/patches?limit=50" | wc -c)
# The same bytes from a bare server: what is left is stableq's own cost.
SAME_PORT=$(free_port)
"$TOP/bench/bin/bare-mhd" "$SAME_PORT" "$bytes" > "$T/bare-same.log" 2>&1 &
PIDS="$PIDS $!"
printf 'setup: %d patches imported through the API in %.2f s, checked; GET /patches?limit=50 is %d bytes\n' \
	"$N" "$(echo "$t1 - $t0" | bc)" "$bytes"

# One wrk run: prints "req/s p99_ms errors". The pause lets the server
# close the last run's connections first: 256 new ones beside 256 old ones
# would be over the per-address limit (three quarters of http_connections).
bench() { # URL NAME [CONNECTIONS [HEADER]]
	sleep 2
	wrk -t"$THREADS" -c"${3:-$CONNS}" -d"${DURATION}s" --latency ${4:+-H "$4"} "$1" > "$T/wrk-$2.txt" 2>&1 || fail "wrk $2"
	python3 - "$T/wrk-$2.txt" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
rps = float(re.search(r'Requests/sec:\s+([\d.]+)', t).group(1))
def ms(v, u):
    return float(v) * {'us': 0.001, 'ms': 1, 's': 1000, 'm': 60000}[u]
m = re.search(r'^\s+99%\s+([\d.]+)(us|ms|s|m)\s*$', t, re.M)
p99 = ms(*m.groups()) if m else 0
err = 0
m = re.search(r'Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)', t)
if m:
    err += sum(int(x) for x in m.groups())
    # wrk leaves requests over its 2 s timeout out of the latencies: when
    # they are over 1 % of all, the p99 is at least those 2 s
    n = re.search(r'(\d+) requests in', t)
    if n and int(m.group(4)) * 100 > int(n.group(1)) + int(m.group(4)):
        p99 = max(p99, 2000)
m = re.search(r'Non-2xx or 3xx responses: (\d+)', t)
if m:
    err += int(m.group(1))
print('%.0f %.2f %d' % (rps, p99, err))
PY
}
API="http://127.0.0.1:$API_PORT/api/v1/patches?limit=50"
GZ='Accept-Encoding: gzip'
gzbytes=$(curl -fs -H "$GZ" "http://127.0.0.1:$API_PORT/api/v1/patches?limit=50" | wc -c)
curl -fs "http://127.0.0.1:$BARE_PORT/" > /dev/null
wrk -t"$THREADS" -c"$CONNS" -d2s "$API" > /dev/null 2>&1 || true
# The machine is shared and noisy: ROUNDS rounds, the servers in turn
# within each, and the median of each figure.
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
r=1
bare_r="" bare_p="" bare_e=0 api_r="" api_p="" api_e=0
gz_r="" gz_p="" gz_e=0 same_r="" same_p="" same_e=0
while [ $r -le "$ROUNDS" ]; do
	set -- $(bench "http://127.0.0.1:$BARE_PORT/" bare$r)
	bare_r="$bare_r $1" bare_p="$bare_p $2" bare_e=$((bare_e + $3))
	set -- $(bench "$API" api$r)
	api_r="$api_r $1" api_p="$api_p $2" api_e=$((api_e + $3))
	set -- $(bench "$API" gzip$r "$CONNS" "$GZ")
	gz_r="$gz_r $1" gz_p="$gz_p $2" gz_e=$((gz_e + $3))
	set -- $(bench "http://127.0.0.1:$SAME_PORT/" bare-same$r)
	same_r="$same_r $1" same_p="$same_p $2" same_e=$((same_e + $3))
	r=$((r + 1))
done
bare_rps=$(median $bare_r) bare_p99=$(median $bare_p) bare_err=$bare_e
api_rps=$(median $api_r) api_p99=$(median $api_p) api_err=$api_e
gz_rps=$(median $gz_r) gz_p99=$(median $gz_p) gz_err=$gz_e
same_rps=$(median $same_r) same_p99=$(median $same_p) same_err=$same_e
# The store changing under the cache, as while the daemon works: another
# process commits an event WRITES times a second during one run.
python3 - "$T/bench.db" "$WRITES" "$((DURATION + 3))" > "$T/writer.log" 2>&1 <<'PY' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], timeout=10, isolation_level=None)
n, end = 0, time.time() + float(sys.argv[3])
while time.time() < end:
    db.execute("INSERT INTO events (actor, subject_kind, kind, detail) VALUES ('bench', 'bench', 'tick', ?)", (str(n),))
    n += 1
    time.sleep(1.0 / float(sys.argv[2]))
print(n)
PY
WRITER=$!
set -- $(bench "$API" busy)
busy_rps=$1 busy_p99=$2 busy_err=$3
wait $WRITER || fail "the writer failed: $(cat "$T/writer.log")"
busy_commits=$(cat "$T/writer.log")
set -- $(bench "$API" api-low "$LOWCONNS")
low_rps=$1 low_p99=$2 low_err=$3
set -- $(bench "http://127.0.0.1:$BARE_PORT/" bare-low "$LOWCONNS")
blow_rps=$1 blow_p99=$2 blow_err=$3
curl -fs "http://127.0.0.1:$API_PORT/api/v1/health" > /dev/null || fail "the daemon does not answer after the run"
stop_daemon
start_daemon STABLEQ_HTTP_CACHE=0
wrk -t"$THREADS" -c"$CONNS" -d2s "$API" > /dev/null 2>&1 || true
set -- $(bench "$API" nocache)
nc_rps=$1 nc_p99=$2 nc_err=$3
curl -fs "http://127.0.0.1:$API_PORT/api/v1/health" > /dev/null || fail "the daemon does not answer after the run"

ratio=$(echo "scale=1; 100 * $api_rps / $bare_rps" | bc)
gz_ratio=$(echo "scale=1; 100 * $gz_rps / $bare_rps" | bc)
same_ratio=$(echo "scale=1; 100 * $api_rps / $same_rps" | bc)
nc_ratio=$(echo "scale=1; 100 * $nc_rps / $bare_rps" | bc)
echo "wrk -t$THREADS -d${DURATION}s on loopback, $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at the end;"
echo "medians of $ROUNDS rounds (errors: the sum), the servers in turn within each round:"
row() { printf '  %-56s %5s conns %8s req/s  p99 %8s ms  errors %s\n' "$@"; }
row "bare libmicrohttpd, static 2 KB" "$CONNS" "$bare_rps" "$bare_p99" "$bare_err"
row "stableq GET /api/v1/patches?limit=50 ($bytes bytes)" "$CONNS" "$api_rps" "$api_p99" "$api_err"
row "  ... Accept-Encoding: gzip ($gzbytes bytes)" "$CONNS" "$gz_rps" "$gz_p99" "$gz_err"
row "bare libmicrohttpd, static $bytes bytes (same size)" "$CONNS" "$same_rps" "$same_p99" "$same_err"
echo "one run each:"
row "stableq, STABLEQ_HTTP_CACHE=0 (every answer from SQLite)" "$CONNS" "$nc_rps" "$nc_p99" "$nc_err"
row "stableq, another process committing ($busy_commits commits)" "$CONNS" "$busy_rps" "$busy_p99" "$busy_err"
row "bare libmicrohttpd, static 2 KB" "$LOWCONNS" "$blow_rps" "$blow_p99" "$blow_err"
row "stableq GET /api/v1/patches?limit=50" "$LOWCONNS" "$low_rps" "$low_p99" "$low_err"
echo "  ratio to bare: $ratio % as it is, $gz_ratio % gzipped (goal >= 50 %); without the answer cache $nc_ratio %"
echo "  against a bare server sending the same $bytes bytes: $same_ratio %"
ok() { if [ "$1" -eq 1 ]; then echo met; else echo MISSED; fi; }
goals() { # NAME RPS_RATIO P99 ERRORS
	echo "  goals at $CONNS connections, $1: ratio $(ok "$(echo "$2 >= 50" | bc)"), p99 < 10 ms $(ok "$(echo "$3 < 10" | bc)"), no errors $(ok "$([ "$4" -eq 0 ] && echo 1 || echo 0)")"
}
goals "as it is" "$ratio" "$api_p99" "$api_err"
goals "gzipped" "$gz_ratio" "$gz_p99" "$gz_err"
echo "  (with $CONNS connections always busy a request waits for the others: mean latency = $CONNS / req/s)"
