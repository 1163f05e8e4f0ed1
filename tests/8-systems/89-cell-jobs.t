#!/bin/bash
# 89-cell-jobs.t: the matrix's cells side by side (cell_jobs). A branch
# testing `arches = x86_64 arm64` and the shipped 6.1 queue:
# - cell_jobs = 2: the arm64 cell's child candidate runs in a process of
#   its own (`stableq candidate --run`, its log var/log/cell-N.log),
#   started before the candidate's own cell applies its patches, in a
#   worktree of the tree of its own (var/linux-arm64-gcc); both pass;
# - cell_jobs = 1: it starts only once the own cell has booted and tested;
# - the own cell fails first (a patch that breaks the x86 build; the arm64
#   cell waits on its build lock, held here): the arm64 cell is stopped,
#   its process gone, and it is "not run", saying why, never a verdict.
# Real builds from the kernel tests' build cache, and QEMU boots.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
chmod 755 "$T" # the build user reaches the cells' build dirs in it
HOLD=
release() { # the arm64 cell's build lock, held below: let go
	[ -n "$HOLD" ] || return 0
	pkill -P "$HOLD" sleep 2> /dev/null
	wait "$HOLD" 2> /dev/null
	HOLD=
}
trap 'release; git -C "$TREE" branch -D t36 > /dev/null 2>&1; rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
j() { py "import json; j = json.load(open('$T/$1.json')); print($2)"; }
line() { grep -n -m1 -- "$2" "$T/$1.log" | cut -d: -f1; }
conf() { # the kernel tests' shared directories (kernel.sh), two cells
	{
		coverage_conf "$T" t36 "$T/q"
		printf 'arches = x86_64 arm64\ncell_jobs = %s\n' "$1"
	} > "$T/stableq.conf"
}
stable_tree
git -C "$TREE" branch -f t36 "$tag"
mkdir -p "$T/q"
cp "$TOP"/config/queues/6.1/*.patch "$TOP/config/queues/6.1/series" "$T/q/"
conf 2
SQ import "$T/q" > "$T/import.log" 2>&1
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 2 "the shipped queue: two patches queued"

# --- side by side -----------------------------------------------------------
SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
is "$?" 0 "cell_jobs = 2: the candidate passes"
c1=$(j c1 "j['id']")
arm1=$(db "SELECT id FROM candidates WHERE cell_of = $c1 AND arch = 'arm64'")
is "$(j c1 "' '.join(c['arch'] + '/' + c['compiler'] + ':' + str(c['verdict']) for c in j['cells'])")" "x86_64/gcc:pass arm64/gcc:pass" "both cells pass"
like "$(cat "$T/c1.log")" "candidate $c1: 2 cells, 2 at once (cell_jobs)" "the run says how many cells run at once"
runs=$(line c1 "cell arm64/gcc: candidate $arm1 runs (pid")
apply=$(line c1 "candidate $c1: phase apply")
ok $([ -n "$runs" ] && [ -n "$apply" ] && [ "$runs" -lt "$apply" ] && echo 0 || echo 1) "the arm64 cell's process starts before the own cell applies its patches (log lines $runs, $apply)"
like "$(cat "$T/var/log/cell-$arm1.log")" "candidate $arm1: pass" "it ran as a process of its own, its output in var/log/cell-$arm1.log"
like "$(git -C "$TREE" worktree list --porcelain)" "worktree $TOP/var/linux-arm64-gcc" "the arm64 cell's worktree is a worktree of the tree"
arm_commit=$(db "SELECT commit_sha FROM candidates WHERE id = $arm1")
ok $([ -n "$arm_commit" ] && git -C "$TOP/var/linux-arm64-gcc" cat-file -e "$arm_commit^{commit}" && echo 0 || echo 1) "... sharing its objects: the cell's state ($arm_commit) is in it"
is "$(db "SELECT COUNT(*) FROM candidates WHERE cell_of = $c1 AND (step != 'done' OR verdict IS NULL)")" 0 "no cell left running or without a verdict"

# --- one after another ------------------------------------------------------
conf 1
SQ candidate --json > "$T/c2.json" 2> "$T/c2.log"
is "$?" 0 "cell_jobs = 1: the candidate passes"
c2=$(j c2 "j['id']")
arm2=$(db "SELECT id FROM candidates WHERE cell_of = $c2 AND arch = 'arm64'")
like "$(cat "$T/c2.log")" "candidate $c2: 2 cells, 1 at once (cell_jobs)" "the run says one at a time"
runs=$(line c2 "cell arm64/gcc: candidate $arm2 runs (pid")
booted=$(line c2 "candidate $c2: phase boot: ")
ok $([ -n "$runs" ] && [ -n "$booted" ] && [ "$runs" -gt "$booted" ] && echo 0 || echo 1) "the arm64 cell starts after the own cell booted and tested (log lines $booted, $runs)"
like "$(cat "$T/c2.log")" "cell arm64/gcc: candidate $arm2: pass in" "... and its end is said"

# --- the own cell fails first: the others are stopped -------------------------
cp "$TOP/tests/fixtures/matrix/lib-cmdline-break-the-x86-build.patch" "$T/q/"
echo lib-cmdline-break-the-x86-build.patch >> "$T/q/series"
SQ import "$T/q" > "$T/import2.log" 2>&1
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 3 "the x86 breaker queued too"
conf 2
mkdir -p "$TOP/var/build-arm64-gcc"
# the lock held by flock itself (-o: not by its sleep, which ends with it)
flock -o "$TOP/var/build-arm64-gcc/.stableq-candidate.lock" sleep 900 > /dev/null 2>&1 &
HOLD=$!
sleep 1
SQ candidate --json > "$T/c3.json" 2> "$T/c3.log"
is "$?" 3 "the own cell fails: exit 3"
release
c3=$(j c3 "j['id']")
arm3=$(db "SELECT id FROM candidates WHERE cell_of = $c3 AND arch = 'arm64'")
is "$(j c3 "j['verdict']")" build-failed "verdict: build-failed, the own cell's"
like "$(j c3 "j['detail']")" "this patch breaks the x86 build only" "... with gcc's error"
is "$(db "SELECT COALESCE(verdict, 'none') || ' ' || step FROM candidates WHERE id = $arm3")" "none done" "the arm64 cell has no verdict, and is done"
is "$(db "SELECT not_run FROM candidates WHERE id = $arm3")" "candidate $c3's own cell was build-failed first" "... not run, saying why"
pid=$(grep -m1 "cell arm64/gcc: candidate $arm3 runs (pid" "$T/c3.log" | sed 's/.*(pid \([0-9]*\),.*/\1/')
ok $([ -n "$pid" ] && ! kill -0 "$pid" 2> /dev/null && echo 0 || echo 1) "its process ($pid) is gone"
is "$(j c3 "[c['not_run'] for c in j['cells'] if c['arch'] == 'arm64'][0]")" "candidate $c3's own cell was build-failed first" "the candidate's matrix shows it not run"
like "$(cat "$T/c3.log")" "cell arm64/gcc not run: candidate $c3's own cell was build-failed first" "... and the run said so"
done_testing
