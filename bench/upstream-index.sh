#!/bin/sh
# bench/upstream-index.sh: the upstream index (issue 21): building it from a
# generated upstream clone of C commits (git fast-import; a version tag every
# 1,000, every 10th commit with a Fixes: tag, every 50th a revert) against
# `git log --format` of the same clone (what a script would parse); a second
# build with nothing new and one after 100 new commits and a tag; then the
# checks of N bench patches (bench/lib/patches.sh) with the index against
# without it, next to their import (goal: the checks within 2x the import).
# Each figure is the fastest of RUNS.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib/patches.sh"
. "$TOP/bench/lib/upstream.sh"
C=${C:-20000}
N=${N:-1000}
RUNS=${RUNS:-3}
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "bench/upstream-index: $*" >&2; cat "$T/out" >&2 2>/dev/null; exit 1; }
now() { date +%s.%N; }
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
export STABLEQ_NO_DEFAULT_CONFIG=1

# --- the upstream clone: C commits, tags, Fixes: of the bench patches --------
bench_upstream "$T/up" "$C" || fail "fast-import"

# --- a tree and the bench patches --------------------------------------------
bench_queue_and_tree "$T" "$N" || fail "tree"

conf() { # NAME UPSTREAM TREE
	printf 'db = %s/%s.db\ntree_dir = %s\nupstream_repo = %s\ndebian_changelog =\n' \
		"$T" "$1" "$3" "$2" > "$T/$1.conf"
}
conf idx "$T/up" "$T/linux"
conf plain "" "$T/linux"
conf imp "" "$T/no-tree"
# imports into the indexed store without checking (no tree there)
printf 'db = %s/idx.db\ntree_dir = %s/no-tree\ndebian_changelog =\n' "$T" "$T" > "$T/idximp.conf"
SQ() { c=$1; shift; "$TOP/stableq" -c "$T/$c.conf" "$@" > "$T/out" 2>&1; }

# --- building the index against git log ---------------------------------------
build= glog= again= incr=
r=1
while [ $r -le "$RUNS" ]; do
	rm -f "$T"/idx.db*
	s=$(now)
	SQ idx check || fail "check (index build) failed"
	e=$(now)
	build=$(best "$build" "$(echo "$e - $s" | bc)")
	SQ idx check || fail "second check failed"
	e2=$(now)
	again=$(best "$again" "$(echo "$e2 - $e" | bc)")
	s=$(now)
	git -C "$T/up" log --format='%H%x00%s%x00%b%x00%D' master > /dev/null
	e=$(now)
	glog=$(best "$glog" "$(echo "$e - $s" | bc)")
	r=$((r + 1))
done
indexed=$(sqlite3 "$T/idx.db" "SELECT COUNT(*) FROM upstream_commits")
[ "$indexed" = "$C" ] || fail "indexed $indexed commits, not $C"
cp "$T/idx.db" "$T/base.db" # the index alone, for the checks below
# --- the checks with the index and without ------------------------------------
imp= cplain= cidx=
r=1
while [ $r -le "$RUNS" ]; do
	rm -f "$T"/imp.db* "$T"/plain.db*
	s=$(now)
	SQ imp import "$T/q" || fail "import failed"
	e=$(now)
	imp=$(best "$imp" "$(echo "$e - $s" | bc)")
	cp "$T/imp.db" "$T/plain.db"
	SQ plain check || fail "check without the index failed"
	e2=$(now)
	cplain=$(best "$cplain" "$(echo "$e2 - $e" | bc)")
	# the same patches in a store holding the index already
	rm -f "$T"/idx.db*
	cp "$T/base.db" "$T/idx.db"
	SQ idximp import "$T/q" || fail "import into the indexed store failed"
	s=$(now)
	SQ idx check || fail "check with the index failed"
	e=$(now)
	cidx=$(best "$cidx" "$(echo "$e - $s" | bc)")
	r=$((r + 1))
done
found=$(sqlite3 "$T/idx.db" "SELECT COUNT(DISTINCT patch_id) FROM verdicts WHERE check_name = 'followups' AND result = 'found'")
# 100 new commits and a tag: only they are indexed
bench_upstream_commits $((C + 1)) $((C + 100)) | (cd "$T/up" && git fast-import --quiet --force) || fail "fast-import 2"
git -C "$T/up" tag "v7.0" master
git -C "$T/up" reset -q --hard master
rm -f "$T"/idx.db*
cp "$T/base.db" "$T/idx.db"
s=$(now)
SQ idx check || fail "incremental check failed"
e=$(now)
incr=$(echo "$e - $s" | bc)
indexed2=$(sqlite3 "$T/idx.db" "SELECT COUNT(*) FROM upstream_commits")
[ "$indexed2" = $((C + 100)) ] || fail "after 100 more: $indexed2 commits"

awk -v c="$C" -v build="$build" -v glog="$glog" -v again="$again" -v incr="$incr" \
	-v n="$N" -v imp="$imp" -v cp="$cplain" -v ci="$cidx" -v runs="$RUNS" -v found="$found" 'BEGIN {
	printf "fastest of %d runs each\n", runs
	printf "index of %d upstream commits (stableq check, empty queue): %.3f s; git log --format of the same clone: %.3f s (%.2fx)\n", c, build, glog, build / glog
	printf "a second build with nothing new: %.3f s; after 100 new commits and a tag: %.3f s\n", again, incr
	printf "import of %d patches: %.3f s\n", n, imp
	printf "checks without the index: %.3f s = %.2fx the import\n", cp, cp / imp
	printf "checks with the index (%d with follow-ups found): %.3f s = %.2fx the import (goal <= 2x), %.2fx without it\n", found, ci, ci / imp, ci / cp
}'
