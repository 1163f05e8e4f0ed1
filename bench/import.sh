#!/bin/sh
# bench/import.sh: import of a generated 1,000-patch stable-queue directory
# into a fresh database (parsing, dedupe, tags, files, dependencies: one
# transaction). Goal: >= 1,000 patches/s. Prints the figures.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib/patches.sh"
N=${N:-1000}
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "bench/import: $*" >&2; cat "$T/out" >&2; exit 1; }
mkdir -p "$T/q"
i=1
while [ $i -le $N ]; do
	f=$(printf '%04d-fix-%d.patch' $i $i)
	bench_patch $i "PATCH 6.1 $i/$N" bench > "$T/q/$f"
	echo "$f" >> "$T/q/series"
	i=$((i + 1))
done
cat > "$T/conf" <<CONF
db = $T/bench.db
tree_dir = $T/no-tree
CONF
start=$(date +%s.%N)
"$TOP/stableq" -c "$T/conf" import "$T/q" > "$T/out" 2>&1 || fail "import failed"
end=$(date +%s.%N)
again_start=$(date +%s.%N)
"$TOP/stableq" -c "$T/conf" import "$T/q" > "$T/out2" 2>&1
again_end=$(date +%s.%N)
rows=$(sqlite3 "$T/bench.db" "SELECT COUNT(*) FROM patches")
awk -v s="$start" -v e="$end" -v s2="$again_start" -v e2="$again_end" -v n="$N" -v rows="$rows" 'BEGIN {
	t = e - s; t2 = e2 - s2
	printf "import: %d patches (%d rows) in %.3f s = %.0f patches/s (goal >= 1000)\n", n, rows, t, n / t
	printf "re-import (all duplicates, nothing stored): %.3f s = %.0f patches/s\n", t2, n / t2
}'
