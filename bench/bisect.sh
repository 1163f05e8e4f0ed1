#!/bin/bash
# bench/bisect.sh: builds used and wall time to bisect queues of 8, 32 and 64
# patches with one culprit, on the real kernel (the shipped queue, then
# harmless one-line comment patches to leaf files, the culprit from
# tests/fixtures/bisect-queue at a random-ish place), against the goal
# ceil(log2(N+1)) search builds + 2 confirmation builds. Prints the figures.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
STABLEQ=$TOP/stableq
TREE=${TREE:-$TOP/var/linux}
T=$(mktemp -d)
trap 'rm -rf "$T"; git -C "$TREE" branch -D bench-bisect > /dev/null 2>&1' EXIT
printf 'tree_dir = %s\n' "$TREE" > "$T/init.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/init.conf" --db "$T/init.db" tree init > /dev/null) || exit 1
tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)

# leaf files compiled into the tinyconfig kernel: a comment change rebuilds one object
mapfile -t FILES < <(cd "$TREE" && ls lib/*.c kernel/*.c mm/*.c fs/*.c | while read -r f; do
	[ -f "$TOP/var/build/${f%.c}.o" ] && echo "$f"; done | head -80)
[ "${#FILES[@]}" -ge 64 ] || { echo "bench/bisect: build the kernel first (make check)" >&2; exit 1; }

mkq() { # N CULPRIT-POSITION DIR
	local n=$1 pos=$2 dir=$3 i=1 k=0
	mkdir -p "$dir"
	cp "$TOP"/kernel-queue/queue-6.1/*.patch "$dir/"
	cp "$TOP/kernel-queue/queue-6.1/series" "$dir/series"
	while [ $i -le $((n - 2)) ]; do
		if [ $i -eq "$pos" ]; then
			cp "$TOP/tests/fixtures/bisect-queue/lib-cmdline-let-simple_strtol-parse-the-sign-in-get_option.patch" "$dir/culprit.patch"
			echo culprit.patch >> "$dir/series"
		else
			f=${FILES[$k]}
			k=$((k + 1))
			git -C "$TREE" show "$tag:$f" > "$T/orig"
			{ cat "$T/orig"; echo "/* bench-bisect $i */"; } > "$T/new"
			{
				echo "From: Bench <bench@example.org>"
				echo "Subject: [PATCH 6.1] $f: comment $i"
				echo "Message-Id: <bench-$n-$i@example.org>"
				echo
				echo "Cc: <stable@vger.kernel.org> # 6.1.x"
				echo "Signed-off-by: Bench <bench@example.org>"
				echo "---"
				diff -u --label "a/$f" --label "b/$f" "$T/orig" "$T/new"
			} > "$dir/p$i.patch"
			echo "p$i.patch" >> "$dir/series"
		fi
		i=$((i + 1))
	done
}

printf '%-4s %-9s %-8s %-12s %-12s %-10s %s\n' N culprit search goal confirm builds wall
for n in 8 32 64; do
	pos=$(( (n * 5) / 7 ))
	git -C "$TREE" branch -f bench-bisect "$tag"
	mkq "$n" "$pos" "$T/q$n"
	cat > "$T/$n.conf" <<CONF
db = $T/$n.db
var_dir = $T/var$n
tree_dir = $TREE
branch = bench-bisect
build_dir = $TOP/var/build
queue_dir = $T/q$n
kernel_config_dir = $TOP/config/kernel
tests_file = $TOP/config/tests.conf
CONF
	SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/$n.conf" "$@"); }
	SQ import "$T/q$n" > "$T/imp$n.log" 2>&1
	SQ candidate > "$T/c$n.log" 2>&1
	cid=$(sqlite3 "$T/$n.db" "SELECT MAX(id) FROM candidates")
	start=$(date +%s.%N)
	SQ bisect "$cid" > "$T/b$n.log" 2>&1
	end=$(date +%s.%N)
	search=$(sqlite3 "$T/$n.db" "SELECT COUNT(*) FROM bisection_steps WHERE kind='search'")
	confirm=$(sqlite3 "$T/$n.db" "SELECT COUNT(*) FROM bisection_steps WHERE kind='confirm'")
	found=$(sqlite3 "$T/$n.db" "SELECT COALESCE(p.filename, '?') FROM bisections b LEFT JOIN patches p ON p.id = b.culprit_patch_id")
	goal=$(awk -v n="$n" 'BEGIN { g = 0; while (2 ^ g < n + 1) g++; print g }')
	wall=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.0f s", e - s }')
	printf '%-4s %-9s %-8s %-12s %-12s %-10s %s\n' "$n" "$([ "$found" = culprit.patch ] && echo found || echo "MISSED:$found")" \
		"$search" "<= $goal" "$confirm" "$((search + confirm))" "$wall"
done
