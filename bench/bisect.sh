#!/bin/bash
# bench/bisect.sh: what bisecting costs on the real kernel, builds and boots
# apart. Queues of 8, 32 and 64 patches with one culprit (the shipped queue,
# then harmless one-line comment patches to leaf files, the culprit from
# tests/fixtures/bisect-queue at a random-ish place), against the goal of
# ceil(log2(N+1)) builds in all: the build cache makes the confirmation
# reboots only. Then a queue of 32 with two independent culprits (one breaks
# a KUnit suite, one the module-reload test): both must be found, each by
# its own bisection after the first is dropped. Prints the figures.
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
	[ -f "$TOP/var/build/${f%.c}.o" ] && [ "$f" != lib/test_module.c ] && echo "$f"; done | head -80)
[ "${#FILES[@]}" -ge 64 ] || { echo "bench/bisect: build the kernel first (make check)" >&2; exit 1; }
CULPRIT_A=$TOP/tests/fixtures/bisect-queue/lib-cmdline-let-simple_strtol-parse-the-sign-in-get_option.patch

culprit_b() { # a module whose init fails: the module-reload test breaks
	git -C "$TREE" show "$tag:lib/test_module.c" > "$T/orig"
	sed 's/^\treturn 0;$/\treturn -EINVAL; \/* bench-bisect: broken *\//' "$T/orig" > "$T/new"
	{
		echo "From: Bench <bench@example.org>"
		echo "Subject: [PATCH 6.1] lib/test_module: refuse to load"
		echo "Message-Id: <bench-culprit-b@example.org>"
		echo
		echo "Cc: <stable@vger.kernel.org> # 6.1.x"
		echo "Signed-off-by: Bench <bench@example.org>"
		echo "---"
		diff -u --label a/lib/test_module.c --label b/lib/test_module.c "$T/orig" "$T/new"
	} > "$1"
}

mkq() { # N DIR POSITION=FILE...: the shipped queue, comment patches, culprits at their places
	local n=$1 dir=$2 i=1 k=0 pos f
	shift 2
	mkdir -p "$dir"
	cp "$TOP"/config/queues/6.1/*.patch "$dir/"
	cp "$TOP/config/queues/6.1/series" "$dir/series"
	while [ $i -le $((n - 2)) ]; do
		local placed=
		for c in "$@"; do
			pos=${c%%=*}
			if [ "$i" -eq "$pos" ]; then
				cp "${c#*=}" "$dir/culprit-$i.patch"
				echo "culprit-$i.patch" >> "$dir/series"
				placed=1
			fi
		done
		if [ -z "$placed" ]; then
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

setup() { # NAME QUEUE-DIR: a config and a fresh branch (and build cache) of its own
	git -C "$TREE" branch -f bench-bisect "$tag"
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
tree_dir = $TREE
branch = bench-bisect
build_dir = $TOP/var/build
queue_dir = $2
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $TOP/config/tests.conf
CONF
}
SQ() { local name=$1; shift; (cd "$TOP" && "$STABLEQ" -c "$T/$name.conf" "$@"); }
db() { sqlite3 "$T/$1.db" "$2"; }
goal() { awk -v n="$1" 'BEGIN { g = 0; while (2 ^ g < n + 1) g++; print g }'; }
secs() { awk -v s="$1" -v e="$2" 'BEGIN { printf "%.0f s", e - s }'; }

echo "one culprit (bisect_confirm = 2: each confirmation boots twice)"
printf '%-4s %-8s %-7s %-8s %-15s %-6s %s\n' N culprit search builds "goal (builds)" boots wall
for n in 8 32 64; do
	pos=$(( (n * 5) / 7 ))
	mkq "$n" "$T/q$n" "$pos=$CULPRIT_A"
	setup "n$n" "$T/q$n"
	SQ "n$n" import "$T/q$n" > "$T/imp$n.log" 2>&1
	SQ "n$n" candidate > "$T/c$n.log" 2>&1
	cid=$(db "n$n" "SELECT MAX(id) FROM candidates")
	start=$(date +%s.%N)
	SQ "n$n" bisect "$cid" > "$T/b$n.log" 2>&1
	end=$(date +%s.%N)
	search=$(db "n$n" "SELECT COUNT(*) FROM bisection_steps WHERE kind = 'search'")
	builds=$(db "n$n" "SELECT builds_used FROM bisections")
	boots=$(db "n$n" "SELECT boots_used FROM bisections")
	found=$(db "n$n" "SELECT COALESCE(p.filename, '?') FROM bisections b LEFT JOIN patches p ON p.id = b.culprit_patch_id")
	printf '%-4s %-8s %-7s %-8s %-15s %-6s %s\n' "$n" "$([ "$found" = "culprit-$pos.patch" ] && echo found || echo "MISSED:$found")" \
		"$search" "$builds" "<= $(goal "$n")" "$boots" "$(secs "$start" "$end")"
done

echo
echo "two independent culprits in 32 patches: bisect, drop, bisect the confirmation, drop"
culprit_b "$T/culprit-b.patch"
mkq 32 "$T/q2" "9=$CULPRIT_A" "24=$T/culprit-b.patch"
setup two "$T/q2"
SQ two import "$T/q2" > "$T/imp2.log" 2>&1
SQ two candidate > "$T/c2.log" 2>&1
start=$(date +%s.%N)
for round in 1 2; do
	SQ two bisect > "$T/b2-$round.log" 2>&1
	culprit=$(db two "SELECT culprit_patch_id FROM bisections ORDER BY id DESC LIMIT 1")
	[ -n "$culprit" ] || break
	SQ two revert "$culprit" --reason "bench: found by bisection" > "$T/r2-$round.log" 2>&1
done
end=$(date +%s.%N)
printf '%-10s %-18s %-8s %-15s %s\n' bisection culprit builds "goal (builds)" boots
db two "SELECT b.id, COALESCE(p.filename, '-'), b.builds_used, b.boots_used, json_array_length(c.patch_ids)
	FROM bisections b JOIN candidates c ON c.id = b.candidate_id LEFT JOIN patches p ON p.id = b.culprit_patch_id ORDER BY b.id" |
	while IFS='|' read -r id file builds boots npatches; do
		printf '%-10s %-18s %-8s %-15s %s\n' "$id" "$file" "$builds" "<= $(goal "$npatches") (of $npatches)" "$boots"
	done
both=$(db two "SELECT COUNT(*) FROM patches WHERE filename IN ('culprit-9.patch', 'culprit-24.patch') AND state = 'dropped'")
last=$(db two "SELECT verdict FROM candidates ORDER BY id DESC LIMIT 1")
echo "both culprits found and dropped: $([ "$both" = 2 ] && echo yes || echo "NO ($both)"); the queue then: $last;" \
	"builds in all (candidates and bisections): $(db two "SELECT COUNT(*) FROM builds WHERE cached = 0"), boots: $(db two "SELECT SUM(boots) FROM candidates"); $(secs "$start" "$end")"
