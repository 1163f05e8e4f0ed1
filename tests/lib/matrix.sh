# tests/lib/matrix.sh: the world of the matrix's cell tests (8-systems/81,
# 82): the real 6.1 tree on a branch of its own at its tag, the shipped
# 6.1 queue with one breaker patch of tests/fixtures/matrix after it, a
# config naming the cells, and the candidate of that queue run.
#   matrix_world BRANCH BREAKER.patch 'KEY = VALUE'
# sets T, TREE, tag and c1.json/c1.log in $T; SQ, db, py and j (a Python
# expression on the candidate's JSON) for the test. Source tap.sh first.
. "$(dirname "${BASH_SOURCE[0]}")/kernel.sh"

matrix_world() {
	local branch=$1 breaker=$2 cells=$3
	T=$(mktemp -d)
	chmod 755 "$T" # the build user reaches the cells' build dirs in it
	trap 'rm -rf "$T"' EXIT
	stable_tree
	git -C "$TREE" branch -f "$branch" "$tag"
	mkdir -p "$T/q"
	cp "$TOP"/config/queues/6.1/*.patch "$TOP/tests/fixtures/matrix/$breaker" "$T/q/"
	{ cat "$TOP/config/queues/6.1/series"; echo "$breaker"; } > "$T/q/series"
	cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TREE
branch = $branch
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
bisect_confirm = 1
$cells
CONF
	SQ import "$T/q" > "$T/import.log" 2>&1
	is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 3 "three patches queued (test, fix, the breaker $breaker)"
	SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
	is "$?" 3 "the candidate does not pass (exit 3)"
}
py() { /usr/bin/python3 -c "$1"; }
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
j() { py "import json; j = json.load(open('$T/c1.json')); print($1)"; }
