#!/bin/bash
# bench/testset.sh: the regression test set's figures on this machine, in one
# run: cases per candidate (KUnit cases, guest tests), the wall time of the
# whole set on a candidate whose state is cached (a boot under TCG), a
# bisection's search step that boots only the regressing test, and the same
# kernel and initramfs booted by raw QEMU, side by side (goal: stableq's boot
# within 1.10x of raw QEMU; a search step under 60 s). The queue is the
# shipped get_user_ex regression test alone (user-copy fails on it, passes
# on the tip) and the test set config/tests.conf plus a test that fails
# everywhere (a known failure). Prints the figures.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d)
# KEEP=1 keeps the run's stores and logs (the path is printed)
if [ "${KEEP:-0}" = 1 ]; then echo "bench/testset: keeping $T"; else trap 'rm -rf "$T"' EXIT; fi
# QUICK=0 skips the quick guest's part (the broad part below takes long)
if [ "${QUICK:-1}" != 0 ]; then
cp "$TOP/config/tests.conf" "$T/tests.conf"
printf '\n[test tip-known]\nkind = guest\ncommand = false\ntimeout = 10\n' >> "$T/tests.conf"
mkdir -p "$T/q"
cp "$TOP"/config/queues/6.1/*.patch "$T/q/"
head -n 1 "$TOP/config/queues/6.1/series" > "$T/q/series"
cat > "$T/conf" <<CONF
db = $T/db
var_dir = $T/var
tree_dir = $TOP/var/linux
build_dir = $TOP/var/build
queue_dir = $T/q
tests_file = $T/tests.conf
qemu_accel = tcg
test_retries = 0
bisect_confirm = 1
CONF
SQ() { (cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 ./stableq -c "$T/conf" "$@"); }
db() { sqlite3 "$T/db" "$1"; }
SQ tree init > /dev/null 2>&1 || { echo "bench/testset: tree init failed" >&2; exit 1; }
SQ import "$T/q" > /dev/null 2>&1
SQ candidate > "$T/c1.log" 2>&1
c1=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue'")
[ "$(db "SELECT verdict FROM candidates WHERE id = $c1")" = fail ] ||
	{ echo "bench/testset: the candidate did not fail" >&2; tail "$T/c1.log" >&2; exit 1; }
SQ bisect "$c1" > "$T/bisect.log" 2>&1 || { echo "bench/testset: bisect failed" >&2; tail "$T/bisect.log" >&2; exit 1; }
secs() { # a candidate's wall time, from its boot lines' "in N s"
	grep -ho "candidate $1: run [0-9]*: [a-z]*, [0-9]* results in [0-9.]* s" "$T/c1.log" "$T/bisect.log" |
		awk '{ s += $(NF - 1) } END { printf "%.1f", s }'
}
bid=$(db "SELECT MAX(id) FROM bisections")
search=$(db "SELECT candidate_id FROM bisection_steps WHERE bisection_id = $bid AND kind = 'search' LIMIT 1")
# the last confirmation booted the tip with the whole set: its kernel from
# the build cache and the initramfs it left are what raw QEMU boots
confirm=$(db "SELECT candidate_id FROM bisection_steps WHERE bisection_id = $bid AND kind = 'confirm' ORDER BY id DESC LIMIT 1")
key=$(db "SELECT cache_key FROM builds WHERE id = (SELECT build_id FROM candidates WHERE id = $confirm)")
img=$T/var/build-cache/$key/arch/x86/boot/bzImage
[ -n "$key" ] && [ -r "$img" ] || img=$TOP/var/build/arch/x86/boot/bzImage
s=$(date +%s.%N)
timeout 600 qemu-system-x86_64 -nodefaults -nographic -no-reboot -smp 1 -m 256 -accel tcg -cpu max \
	-kernel "$img" -initrd "$T/var/guest/initramfs.cpio" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=7" \
	-serial "file:$T/raw-console.log" -monitor none > /dev/null 2>&1 < /dev/null
e=$(date +%s.%N)
raw=$(echo "$e - $s" | bc)
grep -q '@@stableq done' "$T/raw-console.log" || echo "bench/testset: raw QEMU did not finish its list" >&2
kunit=$(db "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c1 AND name LIKE 'kunit.%'")
all=$(db "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c1")
echo "test set on 6.1 (config/kernel/6.1/quick on tinyconfig, TCG, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)):"
echo "  results per candidate:       $all ($kunit KUnit cases, $(db "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c1 AND name NOT LIKE 'kunit.%'") other tests)"
echo "  standing of candidate $c1:    $(db "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, COUNT(*) n FROM test_cases WHERE candidate_id = $c1 GROUP BY status)")"
echo "  whole set, one boot:         $(secs "$confirm") s (stableq, the confirmation step, state cached)"
echo "  raw QEMU, same kernel+initrd: $(printf '%.1f' "$raw") s   ratio $(echo "$(secs "$confirm") / $raw" | bc -l | xargs printf '%.2f')x (goal <= 1.10x)"
echo "  search step, only the regressing test: $(secs "$search") s (goal < 60 s)"
echo "  bisection: $(db "SELECT COUNT(*) FROM bisection_steps WHERE bisection_id = $bid") steps, $(db "SELECT builds_used FROM bisections WHERE id = $bid") builds, $(db "SELECT boots_used FROM bisections WHERE id = $bid") boots, steering $(db "SELECT failing_tests FROM bisections WHERE id = $bid")"

# kselftests: each branch's shipped set plus the kselftest sections below
# (the targets that run without network or special hardware), on a
# candidate of the shipped queue's first patch (its own tree's selftests,
# built or from the kselftest cache): its results and the boot's wall time
# under TCG (goal: at least 300 kselftest results per candidate per branch).
KSELFTESTS='
[test kselftest]
kind = kselftest
targets = futex vm proc seccomp capabilities splice sigaltstack ptrace rseq membarrier kcmp clone3 pidfd openat2 mount_setattr size breakpoints x86 prctl sync rlimits timens mincore ipc nsfs core tmpfs syscall_user_dispatch landlock mount filesystems mqueue
timeout = 45

[test kselftest-timers]
kind = kselftest
targets = timers
timeout = 10
'
ks_branch() { # KEY TREE BUILD_DIR CONFIG_DIR TESTS_FILE SOURCE QUEUE
	local key=$1 d=$T/ks-$1
	mkdir -p "$d/q"
	{ cat "$5"; printf '%s' "$KSELFTESTS"; } > "$d/tests.conf"
	cp "$7"/*.patch "$d/q/"
	head -n 1 "$7/series" > "$d/q/series"
	cat > "$d/conf" <<CONF
db = $d/db
var_dir = $d/var
linux_source = $6
tree_dir = $2
branch = linux-$key.y
build_dir = $3
queue_dir = $d/q
kernel_config_dir = $4
tests_file = $d/tests.conf
qemu_accel = tcg
test_retries = 0
test_baseline = no
boot_timeout = 1200
CONF
	KS() { (cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 ./stableq -c "$d/conf" "$@"); }
	KS tree init > /dev/null 2>&1 || { echo "bench/testset: $key: tree init failed" >&2; return 1; }
	KS import "$d/q" > /dev/null 2>&1
	local s e c
	s=$(date +%s.%N)
	KS candidate > "$d/c.log" 2>&1
	e=$(date +%s.%N)
	c=$(sqlite3 "$d/db" "SELECT MAX(id) FROM candidates")
	q() { sqlite3 "$d/db" "$1"; }
	echo "kselftests on $key ($(basename "$5") + the sections above, $(basename "$4") kernel, TCG, load $(cut -d' ' -f1 /proc/loadavg)):"
	echo "  $(grep -o 'kselftests [0-9a-f]*: .*' "$d/c.log" | head -n 1)"
	echo "  kselftest results per candidate: $(q "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c AND name LIKE 'kselftest.%'") ($(q "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c AND name GLOB 'kselftest.*.*' AND name NOT GLOB 'kselftest.*.*.*'") tests, $(q "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c AND name GLOB 'kselftest.*.*.*'") TAP lines, $(q "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c AND name GLOB 'kselftest.*' AND name NOT GLOB 'kselftest.*.*'") targets) (goal >= 300)"
	echo "  standing: $(q "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, COUNT(*) n FROM test_cases WHERE candidate_id = $c AND name LIKE 'kselftest.%' GROUP BY status)")"
	echo "  the boot with the whole set: $(grep -o 'run 1: [a-z]*, [0-9]* results in [0-9.]* s' "$d/c.log")"
	echo "  the candidate, all steps: $(printf '%.0f' "$(echo "$e - $s" | bc)") s"
}
ks_branch 6.1 "$TOP/var/linux" "$TOP/var/build" "$TOP/config/kernel/6.1/quick" "$TOP/config/tests.conf" \
	/usr/src/linux-source-6.1.tar.xz "$TOP/config/queues/6.1"
ks_branch 6.12 "$TOP/var/linux-6.12" "$TOP/var/build-6.12" "$TOP/config/kernel/6.12/quick" "$TOP/config/tests-6.12.conf" \
	/usr/src/linux-source-6.12.tar.xz "$TOP/config/queues/6.12"
fi

# ---- the broad guest (guest_config = broad), per branch -------------------
# Every KUnit suite of the branch's tree (less config/kunit-deny.conf) on
# defconfig + kvm_guest.config + config/kernel/*/broad/, booted under TCG:
# KUnit cases per candidate (goals: >= 600 on 6.1, >= 1,200 on 6.12), the
# whole set's wall time (goal < 15 min per branch), and on 6.1 how many of
# the README's release-like spread of 62 patches (bench/coverage.sh's
# spread: one file each, every 7th of its directory) have code in the
# booted kernel (coverage status `booted`; goal: half of those that
# compile on x86_64). Builds in var/build-broad and var/build-6.12-broad:
# a cold build takes 20-30 minutes on 2 cores, ccache keeps it for the next
# run. BROAD=0 skips this part; BROAD_BRANCHES="6.1" runs one branch;
# SPREAD=0 boots 6.1's tip instead of the spread (no coverage: quicker).
[ "${BROAD:-1}" = 0 ] && exit 0
spread_queue() { # DIR TREE TAG: the 62 files, a one-line patch each; with
	# SPREAD_FILES (lines "PATCH<TAB>PATH", a real release's patches and
	# the files each touches, fetched locally, never committed): one patch
	# per real patch, a line added to each of its files that the tree has
	local q=$1 tree=$2 tag=$3 n=200 f p prev=
	mkdir -p "$q/work" && : > "$q/series"
	sel() { git -C "$tree" ls-tree -r --name-only "$tag" "$1" | grep "\.$3\$" | awk -v n="$2" 'NR % 7 == 1 && c < n { print; c++ }'; }
	if [ -n "${SPREAD_FILES:-}" ]; then
		cp "$SPREAD_FILES" "$q/files"
	else
		for spec in "drivers/net/ethernet 8 c" "drivers/gpu/drm 5 c" "drivers/usb 4 c" "drivers/i2c 3 c" \
			"drivers/iio 3 c" "drivers/mmc 3 c" "drivers/pinctrl 3 c" "drivers/scsi 3 c" "drivers/input 2 c" \
			"net/ipv4 3 c" "net/ipv6 3 c" "fs/ext4 3 c" "fs/btrfs 2 c" "fs/nfs 2 c" "arch/x86/kernel 2 c" \
			"arch/arm64/kernel 2 c" "arch/arm64/boot/dts/freescale 1 dts" "arch/powerpc/kernel 1 c" \
			"include/linux 3 h" "kernel/sched 2 c" "mm 2 c" "sound/pci 2 c"; do
			# shellcheck disable=SC2086
			sel $spec
		done | awk '{ printf "%d\t%s\n", NR, $0 }' > "$q/files"
	fi
	# each patch is made against the files as the patches before it left
	# them, so two patches of one file apply in series order
	emit() { # the patch $n from $q/cur
		[ -s "$q/cur" ] || return 0
		{
			printf 'From: Bench <bench@stableq.invalid>\nDate: Fri, 5 Dec 2025 12:00:00 +0000\n'
			printf 'Subject: [PATCH 6.1] broad bench %d\nMessage-Id: <broad-%d@stableq.invalid>\n\n' "$n" "$n"
			printf 'commit %040x upstream.\n\nCc: <stable@vger.kernel.org> # 6.1.x\nSigned-off-by: Bench <bench@stableq.invalid>\n---\n' "$((0xb40000 + n))"
			cat "$q/cur"
		} > "$q/$n.patch"
		echo "$n.patch" >> "$q/series"
		: > "$q/cur"
	}
	: > "$q/cur"
	while IFS=$'\t' read -r p f; do
		[ "$p" = "$prev" ] || { emit; n=$((n + 1)); prev=$p; }
		git -C "$tree" cat-file -e "$tag:$f" 2> /dev/null || continue
		local w=$q/work/$f line
		[ -f "$w" ] || { mkdir -p "$(dirname "$w")" && git -C "$tree" show "$tag:$f" > "$w"; }
		case $f in
		*.c) line="static int __maybe_unused stableq_broad_$n;" ;;
		*.h | *.S | *.dts | *.dtsi | *.lds*) line="/* stableq broad $n */" ;;
		*.rs) line="// stableq broad $n" ;;
		*) line="# stableq broad $n" ;;
		esac
		{ cat "$w"; printf '%s\n' "$line"; } > "$q/new"
		{
			printf 'diff --git a/%s b/%s\n' "$f" "$f"
			diff -u --label "a/$f" --label "b/$f" "$w" "$q/new"
		} >> "$q/cur"
		mv "$q/new" "$w"
	done < "$q/files"
	emit
	rm -rf "$q/work" "$q/cur"
}
broad() { # KEY TREE BUILD FRAGMENTS TESTS QUEUE COVER
	local k=$1 d=$T/broad-$1 queue=$6
	mkdir -p "$d"
	# the spread is cut from the tree that tree init makes: its queue is
	# empty until then
	[ "$queue" = spread ] && queue=$d/spread && mkdir -p "$queue" && : > "$queue/series"
	cat > "$d/conf" <<CONF
db = $d/db
var_dir = $d/var
qemu_accel = tcg
test_retries = 0
test_baseline = no
guest_config = broad
# a cold broad build under load outlasts the default hour
build_timeout = 7200
[branch $k]
branch = linux-$k.y
linux_source = /usr/src/linux-source-$k.tar.xz
tree_dir = $TOP/var/$2
build_dir = $TOP/var/$3
broad_config_dir = $TOP/config/$4
tests_file = $TOP/config/$5
queue_dir = $queue
coverage_build_dir = $TOP/var/$7
CONF
	B() { (cd "$TOP" && STABLEQ_NO_DEFAULT_CONFIG=1 ./stableq -c "$d/conf" "$@"); }
	B tree init > /dev/null 2>&1 || { echo "bench/testset: $k: tree init failed" >&2; return 1; }
	if [ "$6" = spread ]; then
		spread_queue "$queue" "$TOP/var/$2" "linux-$k.y" || return 1
		[ "$(wc -l < "$queue/series")" -gt 0 ] || { echo "bench/testset: $k: the spread is empty" >&2; return 1; }
	fi
	B import "$queue" > "$d/import.log" 2>&1
	s=$(date +%s)
	B candidate > "$d/c.log" 2>&1
	e=$(date +%s)
	local c
	c=$(sqlite3 "$d/db" "SELECT MAX(id) FROM candidates")
	q() { sqlite3 "$d/db" "$1"; }
	echo "broad guest on $k (defconfig + kvm_guest.config + config/$4 + every KUnit suite of the tree, TCG, load $(cut -d' ' -f1 /proc/loadavg)):"
	echo "  candidate $c: $(q "SELECT verdict FROM candidates WHERE id = $c"); $(grep -o "candidate $c: [a-z-]*: .*" "$d/c.log" | tail -n 1)"
	echo "  KUnit cases per candidate:   $(q "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c AND name LIKE 'kunit.%'") ($(q "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, COUNT(*) n FROM test_cases WHERE candidate_id = $c AND name LIKE 'kunit.%' GROUP BY status)"); $(q "SELECT COUNT(DISTINCT substr(name, 7, instr(substr(name, 7), '.') - 1)) FROM test_cases WHERE candidate_id = $c AND name LIKE 'kunit.%'") suites)"
	echo "  build:                       $(q "SELECT printf('%.0f s', seconds) FROM builds WHERE id = (SELECT build_id FROM candidates WHERE id = $c)")"
	# a test that stops the guest costs a boot more (qemu-runner/runner.h)
	echo "  whole set:                   $(grep -o "candidate $c: run 1: [a-z]*, [0-9]* results in [0-9.]* s" "$d/c.log" | awk '{ print $(NF - 1) }') s in $(q "SELECT boots FROM candidates WHERE id = $c") boot(s) (goal < 900 s)"
	echo "  candidate wall time:         $((e - s)) s (build, boot, coverage)"
	if [ "$(wc -l < "$queue/series")" -gt 0 ]; then
		local np booted compiled
		np=$(wc -l < "$queue/series")
		booted=$(q "SELECT COUNT(DISTINCT patch_id) FROM coverage WHERE candidate_id = $c AND status = 'booted'")
		compiled=$(q "SELECT COUNT(DISTINCT patch_id) FROM coverage WHERE candidate_id = $c AND status IN ('booted', 'compiled')")
		echo "  ${SPREAD_FILES:+real release $(basename "$SPREAD_FILES"), }release-like spread: $booted of $np patches in the booted kernel, of $compiled that compile on x86_64 (goal >= half)"
	fi
}
for k in ${BROAD_BRANCHES:-6.1 6.12}; do
	case $k in
	6.1)
		mkdir -p "$T/empty" && : > "$T/empty/series"
		q=$T/empty
		[ "${SPREAD:-1}" = 0 ] || q=spread
		broad 6.1 linux build-broad kernel/6.1/broad tests.conf "$q" build-cover ;;
	6.12)
		mkdir -p "$T/empty" && : > "$T/empty/series"
		broad 6.12 linux-6.12 build-6.12-broad kernel/6.12/broad tests-6.12.conf "$T/empty" build-cover-6.12 ;;
	esac
done
