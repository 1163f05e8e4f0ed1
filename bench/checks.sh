#!/bin/sh
# bench/checks.sh: the checks of 1,000 generated patches against a tree that
# has their files, with Debian's changelog of linux-source-6.1 indexed, next
# to the import of the same patches (bench/import.sh's generator). Goal:
# the checks take at most 2x the import (each side the fastest of RUNS). The changelog is indexed once per
# file (in the store); the first check run pays for that, and says so.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib/patches.sh"
N=${N:-1000}
CL=${CL:-/usr/share/doc/linux-source-6.1/changelog.Debian.gz}
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "bench/checks: $*" >&2; cat "$T/out" >&2 2>/dev/null; exit 1; }
now() { date +%s.%N; }
[ -r "$CL" ] || fail "$CL is missing (Debian package linux-source-6.1)"

# the patches, and a tree holding the lines each one changes
bench_queue_and_tree "$T" "$N" || fail "tree"

cat > "$T/import.conf" <<CONF
db = $T/bench.db
tree_dir = $T/no-tree
CONF
cat > "$T/check.conf" <<CONF
db = $T/bench.db
tree_dir = $T/linux
debian_changelog = $CL
CONF
export STABLEQ_NO_DEFAULT_CONFIG=1
# Each is timed RUNS times and the fastest run counts, on both sides: on a
# shared 2-core machine one run's ratio swings between 1.5x and 3.5x.
RUNS=${RUNS:-5}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
imp= c1= c2=
r=1
while [ $r -le "$RUNS" ]; do
	rm -f "$T"/bench.db*
	s=$(now)
	"$TOP/stableq" -c "$T/import.conf" import "$T/q" > "$T/out" 2>&1 || fail "import failed"
	e=$(now)
	imp=$(best "$imp" "$(echo "$e - $s" | bc)")
	# the first check indexes the changelog (once per file and store)
	"$TOP/stableq" -c "$T/check.conf" check > "$T/out" 2>&1 || fail "first check failed"
	e1=$(now)
	c1=$(best "$c1" "$(echo "$e1 - $e" | bc)")
	tail -1 "$T/out" | grep -q "checked $N: $N queued" || fail "not every patch queued"
	"$TOP/stableq" -c "$T/check.conf" check > "$T/out" 2>&1 || fail "second check failed"
	e2=$(now)
	c2=$(best "$c2" "$(echo "$e2 - $e1" | bc)")
	r=$((r + 1))
done
entries=$(sqlite3 "$T/bench.db" "SELECT entries FROM changelog_sources")
sources=$(sqlite3 "$T/bench.db" "SELECT COUNT(*) FROM changelog_sources")
[ "$sources" = 1 ] || fail "the changelog was indexed $sources times"
awk -v imp="$imp" -v c1="$c1" -v c2="$c2" -v n="$N" -v ent="$entries" -v runs="$RUNS" 'BEGIN {
	printf "fastest of %d runs each; import of %d patches: %.3f s\n", runs, n, imp
	printf "checks of %d patches, changelog indexed first (%d entries, once per file): %.3f s = %.2fx the import\n", n, ent, c1, c1 / imp
	printf "checks of %d patches with the index in the store: %.3f s = %.2fx the import (goal <= 2x)\n", n, c2, c2 / imp
}'
