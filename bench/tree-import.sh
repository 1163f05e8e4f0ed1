#!/bin/sh
# bench/tree-import.sh: `stableq tree init` against `git add -f -A && git commit`
# on the same extracted tree, then a checkout of a one-file change.
#
#   sh bench/tree-import.sh            (from the top of the stableq checkout)
#   TARBALL=... WORK=... STABLEQ=... KEEP=1 sh bench/tree-import.sh
#
# git runs before and after stableq (the mean is the reference: other jobs
# on the machine make single runs noisy), and CPU seconds (user + system,
# less sensitive to the load) are printed next to the wall times. Needs
# about 5 GB in WORK, removed at the end unless KEEP=1.
# Goal: tree init <= 2x git add + commit.
set -eu

TARBALL=${TARBALL:-/usr/src/linux-source-6.1.tar.xz}
WORK=${WORK:-var/bench-tree}
STABLEQ=${STABLEQ:-./stableq}
KEEP=${KEEP:-0}

if [ ! -f "$TARBALL" ]; then
	echo "bench/tree-import: $TARBALL missing (Debian package linux-source-6.1); skipped"
	exit 0
fi
case $WORK in /*) ;; *) WORK=$(pwd)/$WORK ;; esac
case $STABLEQ in /*) ;; *) STABLEQ=$(pwd)/$STABLEQ ;; esac
rm -rf "$WORK"
mkdir -p "$WORK/src"
now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.1f", $2 - $1 }'; }
msecs() { echo "$1 $2" | awk '{ printf "%.0f", ($2 - $1) * 1000 }'; }
load() { cut -d' ' -f1 /proc/loadavg; }
cat > "$WORK/bench.conf" <<EOF
tree_dir = $WORK/stableq
linux_source = $TARBALL
branch = linux-6.1.y
var_dir = $WORK/var
db = $WORK/var/bench.db
EOF
sq() { STABLEQ_NO_DEFAULT_CONFIG=1 "$STABLEQ" -c "$WORK/bench.conf" "$@"; }
# measure CMD...: "wall user sys" in seconds, of CMD and its children
measure() {
	python3 -c 'import resource, subprocess, sys, time
t = time.time()
rc = subprocess.run(sys.argv[1:]).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.1f %.1f %.1f" % (time.time() - t, r.ru_utime, r.ru_stime))
sys.exit(rc)' "$@"
}
git_run() {
	rm -rf "$WORK/src/.git"
	sync
	measure sh -c 'cd "$1" && git init -q && git add -f -A &&
		git -c user.name=bench -c user.email=bench@localhost commit -q -m bench' - "$WORK/src"
}
wall() { echo "$1" | cut -d' ' -f1; }
cpu() { echo "$1" | awk '{ printf "%.1f", $2 + $3 }'; }

echo "bench/tree-import: $(nproc) CPUs, load at start $(load)"
tar_m=$(measure tar -xf "$TARBALL" -C "$WORK/src" --strip-components=1)
tar_alone=$(wall "$tar_m")

git1_m=$(git_run)
git1=$(wall "$git1_m")
l1=$(load)

sync
init_m=$(measure sh -c 'STABLEQ_NO_DEFAULT_CONFIG=1 "$1" -c "$2" tree init 2> "$3" > "$4"' \
	- "$STABLEQ" "$WORK/bench.conf" "$WORK/init.log" "$WORK/init.out")
init=$(wall "$init_m")
l2=$(load)
# "tree: extracting: 78635/78635 files (100%) [12.3 s]": tar ended there
# (the blobs of the files tar had finished were written meanwhile)
tar_in_init=$(sed -n 's#^tree: extracting: \([0-9]*\)/\1 files (100%) \[\([0-9.]*\) s\]$#\2#p' "$WORK/init.log")

git2_m=$(git_run)
git2=$(wall "$git2_m")
l3=$(load)
git=$(echo "$git1 $git2" | awk '{ printf "%.1f", ($1 + $2) / 2 }')
git_cpu=$(echo "$(cpu "$git1_m") $(cpu "$git2_m")" | awk '{ printf "%.1f", ($1 + $2) / 2 }')

st_tree=$(git -C "$WORK/stableq" rev-parse 'linux-6.1.y^{tree}')
git_tree=$(git -C "$WORK/src" rev-parse 'HEAD^{tree}')
same=same
[ "$st_tree" = "$git_tree" ] || same="DIFFERENT ($st_tree vs $git_tree)"

# a commit changing one file (made with git plumbing: the worktree stays)
cd "$WORK/stableq"
GIT_INDEX_FILE=$WORK/tmp-index git read-tree HEAD
blob=$( (git cat-file blob HEAD:lib/test_user_copy.c; echo '/* bench */') | git hash-object -w --stdin)
GIT_INDEX_FILE=$WORK/tmp-index git update-index --cacheinfo 100644,"$blob",lib/test_user_copy.c
tree=$(GIT_INDEX_FILE=$WORK/tmp-index git write-tree)
one=$(echo "bench: one file" | git -c user.name=bench -c user.email=bench@localhost commit-tree "$tree" -p HEAD)
base=$(git rev-parse HEAD)
before=$(stat -c %y Makefile)
t=$(now)
sq tree checkout "$one" > /dev/null
co1=$(msecs "$t" "$(now)")
changed=$(tail -1 lib/test_user_copy.c)
t=$(now)
sq tree checkout "$base" > /dev/null
co2=$(msecs "$t" "$(now)")
after=$(stat -c %y Makefile)
untouched=yes
[ "$before" = "$after" ] || untouched=NO
cd - > /dev/null

echo "                                 wall      CPU (user+sys)"
echo "tar -xf alone:                    ${tar_alone} s    $(cpu "$tar_m") s"
echo "git add -f -A && git commit:      ${git} s    ${git_cpu} s   (mean of ${git1} s at load ${l1} and ${git2} s at load ${l3})"
echo "stableq tree init:                ${init} s    $(cpu "$init_m") s   (at load ${l2}; tar ended at ${tar_in_init:-?} s, blobs written meanwhile)"
echo "$init $git $tar_alone $(cpu "$init_m") $git_cpu $(cpu "$tar_m")" | awk '{
	printf "ratio init / git:          %.2fx wall, %.2fx CPU  (goal <= 2.00x)\n", $1 / $2, $4 / $5
	printf "ratio init / (tar + git):  %.2fx wall, %.2fx CPU\n", $1 / ($3 + $2), $4 / ($6 + $5) }'
echo "trees: $same"
echo "stableq tree checkout, one-file change: ${co1} ms, and back: ${co2} ms (whole command; file now '$changed'; Makefile untouched: $untouched)"

[ "$KEEP" = 1 ] || rm -rf "$WORK"
