#!/bin/bash
# bench/coverage.sh: build coverage of a synthetic 60-patch queue, each patch
# touching another driver .c file the guest config does not build
# (drivers/hwmon/, in path order), side by side in one run:
#   cold   a fresh broad build directory and an empty ccache: allmodconfig,
#          prepare, 60 objects (stableq's "coverage: ... (N s)" line)
#   hand   the same by hand in another fresh directory with another empty
#          ccache: make allmodconfig, make prepare, then `make path/file.o`
#          once per file
#   warm   the same queue again (same tree: prepare is a no-op, the
#          objects are ccache hits)
# and the peak memory (sum of RSS over stableq's process tree, sampled every
# 0.5 s) of the cold run. Goals: cold < 360 s, warm < 30 s, cold/hand <=
# 1.2x, peak < 2 GB. Then the real-release figure: a queue of 62 synthetic
# patches spread over the tree the way a stable release's are (see the
# spread below), reporting patches compiled / patches with code, and how
# many the guest kernel alone covers.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TREE=$TOP/var/linux
V=$TOP/var/bench-coverage
N=${N:-60}
rm -rf "$V"
mkdir -p "$V" "$T/q"
cat > "$T/conf" <<CONF
db = $T/db
var_dir = $T/var
tree_dir = $TREE
branch = bench-coverage
build_dir = $TOP/var/build
coverage_build_dir = $V/cover
ccache_dir = $V/ccache
queue_dir = $T/q
qemu_accel = tcg
CONF
SQ() { (cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 ./stableq -c "$T/conf" "$@"); }
SQ tree init > /dev/null 2>&1 || { echo "bench/coverage: tree init failed" >&2; exit 1; }
tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)
git -C "$TREE" branch -f bench-coverage "$tag"

# mkpatch N FILE [LINE]: a stable-style patch adding a line (default: one
# line of code) at the end of FILE
mkpatch() {
	local n=$1 file=$2 d="$T/mk"
	local line=${3:-"static int __maybe_unused stableq_bench_$1;"}
	rm -rf "$d"
	mkdir -p "$d/a/$(dirname "$file")" "$d/b/$(dirname "$file")"
	git -C "$TREE" show "$tag:$file" > "$d/a/$file"
	{ cat "$d/a/$file"; printf '%s\n' "$line"; } > "$d/b/$file"
	{
		printf 'From: Bench <bench@stableq.invalid>\nDate: Thu, 4 Dec 2025 12:00:00 +0000\n'
		printf 'Subject: [PATCH 6.1] bench: coverage %d\nMessage-Id: <bench-coverage-%d@stableq.invalid>\n\n' "$n" "$n"
		printf 'commit %040x upstream.\n\nCc: <stable@vger.kernel.org> # 6.1.x\nSigned-off-by: Bench <bench@stableq.invalid>\n---\n' "$((0xbe0000 + n))"
		(cd "$d" && git diff --no-index --no-prefix "a/$file" "b/$file" |
			sed "s|^diff --git a/a/|diff --git a/|; s| b/b/| b/|; s|^--- a/a/|--- a/|; s|^+++ b/b/|+++ b/|")
	} > "$T/q/$(printf '%04d' "$n").patch"
	printf '%04d.patch\n' "$n" >> "$T/q/series"
}
git -C "$TREE" ls-tree -r --name-only "$tag" drivers/hwmon | grep '\.c$' | head -n "$N" > "$T/files"
i=0
while read -r f; do i=$((i + 1)); mkpatch "$i" "$f"; done < "$T/files"
SQ import "$T/q" > "$T/import.log" 2>&1
queued=$(sqlite3 "$T/db" "SELECT COUNT(*) FROM patches WHERE state = 'queued'")
[ "$queued" = "$N" ] || { echo "bench/coverage: $queued of $N patches queued" >&2; exit 1; }

# peak RSS (KiB) of a process tree, sampled until the root exits
peak() {
	local root=$1 max=0 cur
	while kill -0 "$root" 2>/dev/null; do
		cur=$(ps -e -o pid=,ppid=,rss= | awk -v r="$root" '
			{ p[$1] = $2; m[$1] = $3 }
			END { for (x in p) { y = x; while (y in p && y != r && y > 1) y = p[y]; if (y == r) s += m[x] } print s + 0 }')
		[ "$cur" -gt "$max" ] && max=$cur
		sleep 0.5
	done
	echo "$max"
}
cov_seconds() { sed -n 's/.*coverage: .*(\([0-9.]*\) s)$/\1/p' "$1" | tail -n 1; }

# cold
(cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 exec ./stableq -c "$T/conf" candidate > "$T/cold.log" 2>&1) &
pid=$!
peak_kb=$(peak "$pid")
wait "$pid" || { echo "bench/coverage: the cold candidate did not pass" >&2; tail "$T/cold.log" >&2; exit 1; }
cold=$(cov_seconds "$T/cold.log")
summary=$(grep -o 'coverage: [0-9]* of [0-9]* patches[^(]*' "$T/cold.log" | tail -n 1)

# by hand: the same make commands, fresh directory and ccache, same tree state
H=$V/hand
mkdir -p "$H/ccache"
hand_env() {
	env CCACHE_DIR="$H/ccache" CCACHE_BASEDIR="$TOP/var" CCACHE_NOHASHDIR=true CCACHE_MAXSIZE=5G \
		KBUILD_BUILD_TIMESTAMP="Sun Jan  1 00:00:00 UTC 2023" KBUILD_BUILD_USER=stableq \
		KBUILD_BUILD_HOST=stableq KBUILD_BUILD_VERSION=1 LOCALVERSION= "$@"
}
commit=$(sqlite3 "$T/db" "SELECT commit_sha FROM candidates ORDER BY id DESC LIMIT 1")
# under the candidates' lock, on the candidate's tree (another candidate may
# have run in between)
exec 9> "$TOP/var/build/.stableq-candidate.lock"
flock 9
git -C "$TREE" checkout -q -f --detach "$commit"
s=$(date +%s.%N)
(cd "$TREE" &&
	hand_env KCONFIG_ALLCONFIG="$TOP/config/coverage.config" make O="$H/out" CC="ccache gcc" NM=gcc-nm -j"$(nproc)" allmodconfig &&
	hand_env make O="$H/out" CC="ccache gcc" NM=gcc-nm -j"$(nproc)" prepare &&
	while read -r f; do hand_env make O="$H/out" CC="ccache gcc" NM=gcc-nm -j"$(nproc)" "${f%.c}.o" || exit 1; done < "$T/files") \
	> "$T/hand.log" 2>&1 || { echo "bench/coverage: the hand-run make failed" >&2; tail "$T/hand.log" >&2; exit 1; }
e=$(date +%s.%N)
flock -u 9
hand=$(echo "$e - $s" | bc)

# warm: the same queue again
SQ candidate > "$T/warm.log" 2>&1 || { echo "bench/coverage: the warm candidate did not pass" >&2; exit 1; }
warm=$(cov_seconds "$T/warm.log")

awk -v c="$cold" -v h="$hand" -v w="$warm" -v p="$peak_kb" -v n="$N" -v s="$summary" 'BEGIN {
	printf "build coverage of %d driver patches outside the guest config (%s):\n", n, s
	printf "  cold (allmodconfig, prepare, %d objects): %.1f s (goal < 360 s)\n", n, c
	printf "  the same make commands by hand:          %.1f s\n", h
	printf "  ratio:                                   %.2fx (goal <= 1.2x)\n", c / h
	printf "  warm (the same queue again):             %.1f s (goal < 30 s)\n", w
	printf "  peak memory of the cold run:             %.0f MB (goal < 2048 MB)\n", p / 1024
}'

# ---- the real-release spread ----
# 62 patches with code changes, spread over the tree the way a stable
# release's are (an assumed spread, not counted from 6.1.100's list: most in
# drivers/, then fs/, net/, arches, headers, core): drivers 34 (ethernet 8,
# drm 5, usb 4, others 17), net/ 6, fs/ 7, arch/x86 2, other arches 4 (one
# device tree), include/linux headers 3, kernel/ and mm/ 4, sound/ 2.
# One file per patch: every 7th file of each directory in path order.
rm -rf "$T/q" && mkdir -p "$T/q"
pick() { # DIR COUNT EXT
	git -C "$TREE" ls-tree -r --name-only "$tag" "$1" | grep "\.$3\$" | awk -v n="$2" 'NR % 7 == 1 && c < n { print; c++ }'
}
{
	pick drivers/net/ethernet 8 c; pick drivers/gpu/drm 5 c; pick drivers/usb 4 c
	pick drivers/i2c 3 c; pick drivers/iio 3 c; pick drivers/mmc 3 c; pick drivers/pinctrl 3 c
	pick drivers/scsi 3 c; pick drivers/input 2 c
	pick net/ipv4 3 c; pick net/ipv6 3 c
	pick fs/ext4 3 c; pick fs/btrfs 2 c; pick fs/nfs 2 c
	pick arch/x86/kernel 2 c
	pick arch/arm64/kernel 2 c; pick arch/arm64/boot/dts/freescale 1 dts; pick arch/powerpc/kernel 1 c
	pick include/linux 3 h
	pick kernel/sched 2 c; pick mm 2 c
	pick sound/pci 2 c
} > "$T/files"
i=100
while read -r f; do
	i=$((i + 1))
	case $f in
	*.c) mkpatch "$i" "$f" ;;
	*) mkpatch "$i" "$f" "/* stableq bench $i */" ;; # headers, device trees
	esac
done < "$T/files"
rm -f "$T/db"* && SQ import "$T/q" > "$T/import2.log" 2>&1
SQ candidate > "$T/spread.log" 2>&1
r=$(sqlite3 "$T/db" "SELECT coverage FROM candidates ORDER BY id DESC LIMIT 1")
np=$(wc -l < "$T/files")
echo "real-release spread ($np patches with code, spread like a stable release): $r"
echo "  (the guest config alone: $(sqlite3 "$T/db" "SELECT COUNT(DISTINCT patch_id) FROM coverage WHERE status = 'booted' AND candidate_id = (SELECT MAX(id) FROM candidates)") of $np; $(sed -n 's/.*coverage: .*(\([0-9.]*\) s)$/\1/p' "$T/spread.log" | tail -n 1) s)"
