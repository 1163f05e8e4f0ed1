#!/bin/sh
# bench/matrix.sh: what each cell of the matrix costs (docs/matrix.md), per
# branch (6.1, 6.12), against x86_64/gcc measured in the same run: the quick
# guest's cold build (empty build directory, ccache and build cache), its
# warm build (the same directory again, nothing to compile), the boot and
# the whole test set under QEMU, and the KUnit cases that passed. Runs the
# real CLI, one cell at a time (a branch whose arches and compilers name
# that cell alone), under /work/kernel.lock-style serialization: run it by
# hand with `flock /work/kernel.lock sh bench/matrix.sh` on a quiet
# machine. CELLS="x86_64/gcc x86_64/clang arm64/gcc" BRANCHES="6.1 6.12"
# JOBS=make -j (0: all cores); KEEP=1 keeps the temp dir.
# GUEST=broad measures the broad guest (broad_config_dir, every KUnit suite,
# the kselftests) instead of the quick one. MODES="cold warm" (or one of
# them). CCACHE=DIR: every run uses that ccache (a cell's "cold" run then
# has an empty build directory and build cache, but ccache as DIR holds it)
# instead of a new one per cell. TREE_6_1, TREE_6_12: the trees (default
# var/linux, var/linux-6.12; a run checks its states out in them).
# BUILD_TIMEOUT: build_timeout (default 4 h: a cold broad arm64 build on 2
# cores outlasts an hour).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
STABLEQ=${STABLEQ:-$TOP/stableq}
CELLS=${CELLS:-x86_64/gcc x86_64/clang arm64/gcc}
BRANCHES=${BRANCHES:-6.1 6.12}
JOBS=${JOBS:-0}
GUEST=${GUEST:-quick}
MODES=${MODES:-cold warm}
TREE_6_1=${TREE_6_1:-$TOP/var/linux}
TREE_6_12=${TREE_6_12:-$TOP/var/linux-6.12}
case $GUEST in quick | broad) ;; *) echo "bench/matrix: GUEST is quick or broad, not $GUEST" >&2; exit 2 ;; esac
T=$(mktemp -d)
chmod 755 "$T" # the build user (docs/sandbox.md) works in it
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT INT TERM
[ -x "$STABLEQ" ] || { echo "bench/matrix: build ./stableq first" >&2; exit 1; }
py() { /usr/bin/python3 -c "$1"; }

# branch -> the lines of its section
section() {
	case $1 in
	6.1) printf 'tree_dir = %s\nkernel_config_dir = %s\ntests_file = %s\n' \
		"$TREE_6_1" "$TOP/config/kernel/6.1/quick" "$TOP/config/tests.conf" ;;
	6.12) printf 'linux_source = /usr/src/linux-source-6.12.tar.xz\nbranch = linux-6.12.y\ntree_dir = %s\nkernel_config_dir = %s\ntests_file = %s\ndebian_changelog = /usr/share/doc/linux-source-6.12/changelog.Debian.gz\n' \
		"$TREE_6_12" "$TOP/config/kernel/6.12/quick" "$TOP/config/tests-6.12.conf" ;;
	esac
	[ "$GUEST" = broad ] &&
		printf 'guest_config = broad\nbroad_config_dir = %s\n' "$TOP/config/kernel/$1/broad"
	return 0
}

# one run: branch cell tag (cold|warm) -> a line of figures
run() {
	b=$1 cell=$2 kind=$3
	arch=${cell%/*} cc=${cell#*/}
	d=$T/$b-$arch-$cc
	mkdir -p "$d"
	# cold: a new ccache; warm: the cold run's build directory and ccache,
	# a new build cache (so the state is built, from a warm directory)
	cat > "$d/$kind.conf" <<CONF
db = $d/$kind.db
var_dir = $d/var-$kind
build_cache_dir = $d/cache-$kind
ccache_dir = ${CCACHE:-$d/ccache}
make_jobs = $JOBS
build_timeout = ${BUILD_TIMEOUT:-14400}
arches = $arch
compilers = $cc
kunit_deny = $TOP/config/kunit-deny.conf
[branch $b]
build_dir = $d/build
queue_dir = $d/q-$kind
$(section "$b")
CONF
	for step in "tree init" "import $TOP/config/queues/$b"; do
		# shellcheck disable=SC2086 # the step's words
		(cd "$TOP" && "$STABLEQ" -c "$d/$kind.conf" $step > "$d/$kind-step.log" 2>&1) || {
			echo "bench/matrix: $b $cell $kind: stableq $step failed:" >&2
			cat "$d/$kind-step.log" >&2
			exit 1
		}
	done
	t0=$(date +%s.%N)
	(cd "$TOP" && "$STABLEQ" -c "$d/$kind.conf" candidate --json > "$d/$kind.json" 2> "$d/$kind.log") || true
	t1=$(date +%s.%N)
	py "
import json, re
j = json.load(open('$d/$kind.json'))
b = j.get('build') or {}
log = open('$d/$kind.log', errors='replace').read()
boot = sum(float(x) for x in re.findall(r'results in ([0-9.]+) s', log))
tests = j.get('tests', [])
kunit = len([t for t in tests if t['name'].startswith('kunit.') and t['result'] == 'pass'])
ksft = len([t for t in tests if t['name'].startswith('kselftest.') and t['result'] in ('pass', 'fail', 'skip')])
print('%-5s %-13s %-4s %-5s build %7.1f s  boot+set %6.1f s  whole %7.1f s  KUnit cases %4d  kselftest results %4d  results %5d  verdict %s' % (
    '$b', '$cell', '$kind', '$GUEST', b.get('seconds') or 0, boot, $t1 - $t0, kunit, ksft, len(tests), j.get('verdict')), flush=True)
"
}

echo "bench/matrix: the $GUEST guest per cell (CELLS=\"$CELLS\", MODES=\"$MODES\"${CCACHE:+, ccache $CCACHE}), $(nproc) cores"
for b in $BRANCHES; do
	for cell in $CELLS; do
		for m in $MODES; do
			case $m in cold | warm) run "$b" "$cell" "$m" ;;
			*) echo "bench/matrix: MODES names cold or warm, not $m" >&2; exit 2 ;; esac
		done
	done
done
