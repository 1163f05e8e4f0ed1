#!/bin/bash
# bench/candidate.sh: one candidate of the shipped queue, stableq against raw
# make + raw QEMU of the same state, side by side in the same run. The state
# is built once first, so both sides do what a re-run of a candidate does:
# apply (stableq only), make (incremental: nothing to rebuild), boot and
# test. Goal: stableq / raw <= 1.10. The stableq side runs with its build
# cache off (build_cache_mb = 0), so that it runs make as the raw side does;
# a third figure is the same re-run as stableq does it by default, booting
# the state from its build cache without make. Prints the figures (median
# of 5).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ROUNDS=${ROUNDS:-5}
mkdir -p "$T/q"
cp "$TOP"/config/queues/6.1/* "$T/q/"
cat > "$T/conf" <<CONF
db = $T/db
var_dir = $T/var
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
queue_dir = $T/q
qemu_accel = tcg
CONF
sed 's/^qemu_accel = tcg$/&\nbuild_cache_mb = 0/' "$T/conf" > "$T/nocache.conf"
SQ() { (cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 ./stableq -c "${CONF:-$T/nocache.conf}" "$@"); }
SQ tree init > /dev/null 2>&1 || { echo "bench/candidate: tree init failed" >&2; exit 1; }
SQ import "$T/q" > /dev/null 2>&1
CONF=$T/conf SQ candidate > "$T/warm.log" 2>&1 || { echo "bench/candidate: the warm-up candidate did not pass" >&2; tail "$T/warm.log" >&2; exit 1; }

B=$TOP/var/build
raw() {
	# exactly what kbuild and the runner run, without stableq around them
	(cd "$TOP/var/linux" && env CCACHE_DIR="${XDG_CACHE_HOME:-$HOME/.cache}/stableq/ccache" \
		CCACHE_BASEDIR="$TOP/var" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=5G \
		KBUILD_BUILD_TIMESTAMP="Sun Jan  1 00:00:00 UTC 2023" KBUILD_BUILD_USER=stableq \
		KBUILD_BUILD_HOST=stableq KBUILD_BUILD_VERSION=1 LOCALVERSION= \
		make O="$B" -j"$(nproc)" CC="ccache gcc" NM=gcc-nm bzImage modules > "$T/raw-make.log" 2>&1) || return 1
	qemu-system-x86_64 -nodefaults -nographic -no-reboot -smp 1 -m 256 -accel tcg -cpu max \
		-kernel "$B/arch/x86/boot/bzImage" -initrd "$T/var/guest/initramfs.cpio" \
		-append "console=ttyS0 panic=-1 oops=panic loglevel=7" \
		-serial "file:$T/raw-console.log" -monitor none > /dev/null 2>&1 < /dev/null
	grep -q '@@stableq done' "$T/raw-console.log"
}
now() { date +%s.%N; }
: > "$T/times"
for i in $(seq 1 "$ROUNDS"); do
	s=$(now); SQ candidate > "$T/sq.log" 2>&1 || { echo "stableq candidate failed" >&2; exit 1; }; e=$(now)
	echo "stableq $(echo "$e - $s" | bc)" >> "$T/times"
	s=$(now); raw || { echo "raw make + qemu failed" >&2; exit 1; }; e=$(now)
	echo "raw $(echo "$e - $s" | bc)" >> "$T/times"
	s=$(now); CONF=$T/conf SQ candidate > "$T/sq.log" 2>&1 || { echo "stableq candidate (build cache) failed" >&2; exit 1; }; e=$(now)
	echo "cached $(echo "$e - $s" | bc)" >> "$T/times"
done
med() { sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
s=$(awk '$1 == "stableq" { print $2 }' "$T/times" | med)
r=$(awk '$1 == "raw" { print $2 }' "$T/times" | med)
c=$(awk '$1 == "cached" { print $2 }' "$T/times" | med)
awk -v s="$s" -v r="$r" -v c="$c" -v n="$ROUNDS" 'BEGIN {
	printf "candidate (apply + make + boot + tests), median of %d runs:\n", n
	printf "  stableq candidate:  %.2f s\n  raw make + qemu:    %.2f s\n  ratio:              %.2fx (goal <= 1.10x)\n", s, r, s / r
	printf "  stableq candidate from its build cache (no make): %.2f s (%.2fx raw)\n", c, c / r
}'
