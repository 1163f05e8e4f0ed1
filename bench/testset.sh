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
trap 'rm -rf "$T"' EXIT
cp "$TOP/config/tests.conf" "$T/tests.conf"
printf '\n[test tip-known]\nkind = guest\ncommand = false\ntimeout = 10\n' >> "$T/tests.conf"
mkdir -p "$T/q"
cp "$TOP"/kernel-queue/queue-6.1/*.patch "$T/q/"
head -n 1 "$TOP/kernel-queue/queue-6.1/series" > "$T/q/series"
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
echo "test set on 6.1 (config/kernel on tinyconfig, TCG, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)):"
echo "  results per candidate:       $all ($kunit KUnit cases, $(db "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c1 AND name NOT LIKE 'kunit.%'") other tests)"
echo "  standing of candidate $c1:    $(db "SELECT group_concat(status || ' ' || n, ', ') FROM (SELECT status, COUNT(*) n FROM test_cases WHERE candidate_id = $c1 GROUP BY status)")"
echo "  whole set, one boot:         $(secs "$confirm") s (stableq, the confirmation step, state cached)"
echo "  raw QEMU, same kernel+initrd: $(printf '%.1f' "$raw") s   ratio $(echo "$(secs "$confirm") / $raw" | bc -l | xargs printf '%.2f')x (goal <= 1.10x)"
echo "  search step, only the regressing test: $(secs "$search") s (goal < 60 s)"
echo "  bisection: $(db "SELECT COUNT(*) FROM bisection_steps WHERE bisection_id = $bid") steps, $(db "SELECT builds_used FROM bisections WHERE id = $bid") builds, $(db "SELECT boots_used FROM bisections WHERE id = $bid") boots, steering $(db "SELECT failing_tests FROM bisections WHERE id = $bid")"
