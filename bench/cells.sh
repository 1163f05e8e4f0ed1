#!/bin/sh
# bench/cells.sh: the matrix's cells one after another (cell_jobs = 1)
# against side by side (cell_jobs = 0: one per CPU), in one run on this
# machine (docs/matrix.md). The same queue (the shipped one of the branch)
# is run as one candidate by the real CLI, each way twice: cold (an empty
# build directory, build coverage directory, ccache and build cache of
# its own) and warm (the same directories again, a new build cache: every
# state built, from warm ccache and objects). Prints each run's wall time, each cell's build and
# boot, and the ratio. The cells' worktrees (TREE-ARCH-COMPILER) are made
# before the first run, outside the timing. Knobs: BRANCH (6.1 or 6.12),
# ARCHES (default "x86_64 arm64"), COMPILERS ("gcc"), MODES ("cold warm"),
# JOBS_WAYS ("1 0": the cell_jobs values, in order), TREE (default
# var/bench-linux-BRANCH: made from the branch's linux-source tarball when
# missing; the kernel tests' var/linux is never used), KEEP=1.
# Run it alone on a quiet machine: `sh bench/cells.sh`.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
STABLEQ=${STABLEQ:-$TOP/stableq}
BRANCH=${BRANCH:-6.1}
ARCHES=${ARCHES:-x86_64 arm64}
COMPILERS=${COMPILERS:-gcc}
MODES=${MODES:-cold warm}
JOBS_WAYS=${JOBS_WAYS:-1 0}
TREE=${TREE:-$TOP/var/bench-linux-$BRANCH}
[ -x "$STABLEQ" ] || { echo "bench/cells: build ./stableq first" >&2; exit 1; }
case $BRANCH in
6.1) SECTION="linux_source = /usr/src/linux-source-6.1.tar.xz
branch = linux-6.1.y
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf" ;;
6.12) SECTION="linux_source = /usr/src/linux-source-6.12.tar.xz
branch = linux-6.12.y
kernel_config_dir = $TOP/config/kernel/6.12/quick
tests_file = $TOP/config/tests-6.12.conf
debian_changelog = /usr/share/doc/linux-source-6.12/changelog.Debian.gz" ;;
*) echo "bench/cells: BRANCH is 6.1 or 6.12, not $BRANCH" >&2; exit 2 ;;
esac
T=$(mktemp -d)
chmod 755 "$T" # the build user (docs/sandbox.md) works in it
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM
py() { /usr/bin/python3 -c "$1"; }

conf() { # jobs kind -> the config of that run
	d=$T/jobs$1
	cat <<CONF
db = $d/$2.db
var_dir = $d/var-$2
build_cache_dir = $d/cache-$2
ccache_dir = $d/ccache
coverage_build_dir = $d/cover
make_jobs = 0
arches = $ARCHES
compilers = $COMPILERS
cell_jobs = $1
kunit_deny = $TOP/config/kunit-deny.conf
[branch $BRANCH]
tree_dir = $TREE
build_dir = $d/build
queue_dir = $d/q-$2
$SECTION
CONF
}

step() { # conf-file words...: a stableq step that must work
	c=$1
	shift
	# shellcheck disable=SC2068 # the step's words
	(cd "$TOP" && "$STABLEQ" -c "$c" $@ > "$c.step.log" 2>&1) || {
		echo "bench/cells: stableq $*: failed:" >&2
		cat "$c.step.log" >&2
		exit 1
	}
}

echo "bench/cells: BRANCH=$BRANCH ARCHES=\"$ARCHES\" COMPILERS=\"$COMPILERS\", cell_jobs \"$JOBS_WAYS\", $(nproc) cores"
# the tree, and each other cell's worktree, before any timing
conf 1 setup > "$T/setup.conf"
step "$T/setup.conf" tree init
first=
for a in $ARCHES; do
	for c in $COMPILERS; do
		if [ -z "$first" ]; then first=$a/$c; continue; fi
		[ -e "$TREE-$a-$c/.git" ] || git -C "$TREE" worktree add -q --detach "$TREE-$a-$c" > /dev/null
	done
done

for kind in $MODES; do
	for n in $JOBS_WAYS; do
		mkdir -p "$T/jobs$n"
		conf "$n" "$kind" > "$T/jobs$n/$kind.conf"
		step "$T/jobs$n/$kind.conf" import "$TOP/config/queues/$BRANCH"
		t0=$(date +%s.%N)
		(cd "$TOP" && "$STABLEQ" -c "$T/jobs$n/$kind.conf" candidate --json > "$T/jobs$n/$kind.json" 2> "$T/jobs$n/$kind.log") || true
		t1=$(date +%s.%N)
		py "
import json, sqlite3
j = json.load(open('$T/jobs$n/$kind.json'))
db = sqlite3.connect('$T/jobs$n/$kind.db')
cells = []
for cid, arch, cc in db.execute('SELECT id, COALESCE(arch, \'x86_64\'), COALESCE(compiler, \'gcc\') FROM candidates WHERE id = ? OR cell_of = ? ORDER BY id', (j['id'], j['id'])):
    b = db.execute('SELECT b.seconds FROM builds b JOIN candidates c ON c.build_id = b.id WHERE c.id = ?', (cid,)).fetchone()
    ph = dict(db.execute('SELECT phase, SUM(seconds) FROM candidate_phases WHERE candidate_id = ? GROUP BY phase', (cid,)).fetchall())
    v = db.execute('SELECT COALESCE(verdict, \'not run\') FROM candidates WHERE id = ?', (cid,)).fetchone()[0]
    cells.append('%s/%s build %.1f s boot+tests %.1f s %s' % (arch, cc, (b[0] if b else 0) or 0, (ph.get('boot') or 0) + (ph.get('tests') or 0), v))
print('%-5s cell_jobs %s %-4s whole %7.1f s  verdict %-12s | %s' % ('$BRANCH', '$n', '$kind', $t1 - $t0, j.get('verdict'), '; '.join(cells)), flush=True)
open('$T/whole-$kind-$n', 'w').write('%.3f' % ($t1 - $t0))
"
	done
	set -- $JOBS_WAYS
	if [ $# -eq 2 ]; then
		py "
a = float(open('$T/whole-$kind-$1').read()); b = float(open('$T/whole-$kind-$2').read())
print('%-5s %-4s cell_jobs %s / cell_jobs %s: %.2fx (%.1f s / %.1f s)' % ('$BRANCH', '$kind', '$1', '$2', a / b, a, b))
"
	fi
done
