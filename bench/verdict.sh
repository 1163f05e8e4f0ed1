#!/bin/bash
# bench/verdict.sh: time to verdict on the real 6.1 tree and the broad guest.
# A generated queue of five patches (four comment fixes, and one that breaks
# the linear-ranges-test KUnit suite, which only the broad guest runs) is
# handed to the real daemon; the bench measures the queue change -> the
# verdict -> the culprit's revert confirmed, and prints each phase of each
# candidate (apply, build, boot, tests, retry, baseline) and each step of
# the bisection (its build and its boot).
#
#   bench/verdict.sh [cold|warm]...     (default: cold warm, in that order)
#
# cold: an empty build cache and build directory (ccache stays warm), and
#       the tip and the queue change at once: nothing is known ahead, the
#       tip's baseline is run when the failing candidate needs it.
# warm: the build cache and directory as they are (after a cold run: its
#       states); the daemon starts with an empty queue and runs the tip's
#       baseline while idle (its time is printed apart: it is not on the way
#       to the verdict), then the queue changes.
# Goals (2 cores, TCG): verdict < 45 min cold, < 15 min warm; the revert
# confirmed < 20 min after the verdict; a retry < 2 min; a bisection step
# < 60 s plus its build when the state is cached.
#
# Expensive (a broad build, 10+ minute boots): run it alone, e.g.
# `flock /work/kernel.lock bench/verdict.sh warm`. KEEP=1 keeps its temp
# dir. The build directory and cache are its own (var/build-bench-verdict,
# var/build-cache-bench-verdict), never the kernel tests' shared ones.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
STABLEQ=$TOP/stableq
TREE=${TREE:-$TOP/var/linux}
BUILD=${BUILD:-$TOP/var/build-bench-verdict}
CACHE=${CACHE:-$TOP/var/build-cache-bench-verdict}
LIMIT=${LIMIT:-10800} # seconds a run may take in all
MODES=${*:-cold warm}
T=$(mktemp -d)
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2> /dev/null && wait "$DPID" 2> /dev/null
	git -C "$TREE" branch -D bench-verdict > /dev/null 2>&1
	[ -n "${KEEP:-}" ] && echo "kept $T" || rm -rf "$T"
}
trap cleanup EXIT
printf 'tree_dir = %s\n' "$TREE" > "$T/init.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/init.conf" --db "$T/init.db" tree init > /dev/null) || exit 1
tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)
PORT=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")

patch_of() { # I FILE SUBJECT SED: a mail-format backport changing FILE by SED
	git -C "$TREE" show "$tag:$2" > "$T/orig"
	sed "$4" "$T/orig" > "$T/new"
	cmp -s "$T/orig" "$T/new" && { echo "bench/verdict: $2: nothing changed" >&2; exit 1; }
	cat <<MAIL
From: Developer $1 <dev$1@example.org>
Date: Mon, 1 Sep 2025 10:0$1:00 +0000
Subject: [PATCH 6.1] $3
Message-Id: <bench-verdict-$1@example.org>

commit $(printf '%040x' $((0xbe5c0000 + $1))) upstream.

$3.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Developer $1 <dev$1@example.org>
---
MAIL
	diff -u --label "a/$2" --label "b/$2" "$T/orig" "$T/new"
}

mkqueue() { # DIR: four comment fixes, then the culprit
	mkdir -p "$1"
	patch_of 1 lib/ratelimit.c "lib/ratelimit: reword a comment" \
		'0,/ \* /s// * (bench) /' > "$1/1.patch"
	patch_of 2 lib/kstrtox.c "lib/kstrtox: reword a comment" \
		'0,/ \* /s// * (bench) /' > "$1/2.patch"
	patch_of 3 lib/bitmap.c "lib/bitmap: reword a comment" \
		'0,/ \* /s// * (bench) /' > "$1/3.patch"
	patch_of 4 lib/sort.c "lib/sort: reword a comment" \
		'0,/ \* /s// * (bench) /' > "$1/4.patch"
	patch_of 5 lib/linear_ranges.c \
		"lib/linear_ranges: count the values of a range once" \
		's/return r->max_sel - r->min_sel + 1;/return r->max_sel - r->min_sel;/' \
		> "$1/5.patch"
	printf '%s\n' 1.patch 2.patch 3.patch 4.patch 5.patch > "$1/series"
}

q() { sqlite3 "$T/$M.db" "$1" 2> /dev/null; }
wait_for() { # SECONDS SQL: until it answers non-empty, non-zero
	local i v
	for i in $(seq "$1"); do
		v=$(q "$2")
		[ -n "$v" ] && [ "$v" != 0 ] && return 0
		kill -0 "$DPID" 2> /dev/null || return 1
		sleep 1
	done
	return 1
}
secs() { # A B: seconds from store time A to B
	q "SELECT CAST(round((julianday('$2') - julianday('$1')) * 86400) AS INTEGER)"
}
mins() { python3 -c "s=$1; print('%d min %02d s' % (s // 60, s % 60))"; }
phases() { # CANDIDATE: its phases on one line
	q "SELECT group_concat(phase || ' ' || printf('%.1f', seconds) || ' s' || COALESCE(' (' || detail || ')', ''), ', ')
	   FROM (SELECT * FROM candidate_phases WHERE candidate_id = $1 ORDER BY id)"
}

partial() { # what was measured before a run stopped short
	echo "  stopped: $(tail -n 2 "$T/daemon-$M.log" | tr '\n' ' ')"
	q "SELECT id FROM candidates ORDER BY id" | while read -r id; do
		echo "  candidate $id ($(q "SELECT purpose || ', ' || step FROM candidates WHERE id = $id")): $(phases "$id")"
	done
}

run_mode() {
	M=$1
	echo "== $M =="
	git -C "$TREE" branch -f bench-verdict "$tag"
	if [ "$M" = cold ]; then
		rm -rf "$BUILD" "$CACHE"
	fi
	mkqueue "$T/q-$M"
	cat > "$T/$M.conf" <<CONF
db = $T/$M.db
var_dir = $T/var-$M
tree_dir = $TREE
branch = bench-verdict
build_dir = $BUILD
build_cache_dir = $CACHE
queue_dir = $T/empty-$M
kernel_config_dir = $TOP/config/kernel
tests_file = $TOP/config/tests.conf
guest_config = broad
listen = 127.0.0.1:$PORT
poll_interval = 1
CONF
	mkdir -p "$T/empty-$M"
	SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/$M.conf" "$@"); }
	if [ "$M" = cold ]; then
		# the tip and the queue at once: nothing ahead
		t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
		SQ import "$T/q-$M" > "$T/import-$M.log" 2>&1 || return 1
	fi
	(cd "$TOP" && exec "$STABLEQ" -c "$T/$M.conf" serve -d > "$T/daemon-$M.log" 2>&1) &
	DPID=$!
	if [ "$M" = warm ]; then
		wait_for "$LIMIT" "SELECT id FROM candidates WHERE purpose = 'baseline' AND step = 'done'" ||
			{ echo "no baseline"; partial; return 1; }
		b=$(q "SELECT MIN(id) FROM candidates WHERE purpose = 'baseline'")
		echo "the tip's baseline, while idle (ahead of the queue change): candidate $b," \
			"$(mins "$(secs "$(q "SELECT started_at FROM candidates WHERE id = $b")" "$(q "SELECT finished_at FROM candidates WHERE id = $b")")")"
		echo "  $(phases "$b")"
		t0=$(date -u +%Y-%m-%dT%H:%M:%SZ)
		SQ import "$T/q-$M" > "$T/import-$M.log" 2>&1 || return 1
	fi
	wait_for "$LIMIT" "SELECT id FROM candidates WHERE purpose = 'queue' AND step = 'done'" ||
		{ echo "no verdict"; partial; return 1; }
	c=$(q "SELECT MIN(id) FROM candidates WHERE purpose = 'queue'")
	tv=$(q "SELECT finished_at FROM candidates WHERE id = $c")
	echo "queue change -> verdict: $(mins "$(secs "$t0" "$tv")") (candidate $c: $(q "SELECT verdict || ': ' || COALESCE(detail, '') FROM candidates WHERE id = $c"))"
	echo "  $(phases "$c")"
	tip=$(q "SELECT tip_candidate_id FROM candidates WHERE id = $c")
	[ -n "$tip" ] && [ "$M" = cold ] && echo "  the tip's run, made for it: candidate $tip: $(phases "$tip")"
	wait_for "$LIMIT" "SELECT id FROM reverts WHERE state IN ('confirmed','failed')" ||
		{ echo "no revert confirmed"; partial; return 1; }
	bid=$(q "SELECT MAX(id) FROM bisections")
	echo "bisection $bid: $(q "SELECT state || ', culprit ' || COALESCE(culprit_patch_id, '-') || ', ' || builds_used || ' builds, ' || boots_used || ' boots, ' || steps_done || ' steps' FROM bisections WHERE id = $bid")," \
		"$(mins "$(secs "$(q "SELECT started_at FROM bisections WHERE id = $bid")" "$(q "SELECT finished_at FROM bisections WHERE id = $bid")")")"
	q "SELECT s.kind || ' prefix ' || s.prefix_len || ': ' || s.result || ', candidate ' || s.candidate_id FROM bisection_steps s WHERE s.bisection_id = $bid ORDER BY s.id" |
		while read -r line; do
			sc=${line##* }
			echo "  $line: $(phases "$sc")"
		done
	r=$(q "SELECT MAX(id) FROM reverts")
	rc=$(q "SELECT confirm_candidate_id FROM reverts WHERE id = $r")
	tr=$(q "SELECT finished_at FROM candidates WHERE id = $rc")
	echo "revert $r: $(q "SELECT state FROM reverts WHERE id = $r"), its confirmation candidate $rc: $(q "SELECT verdict FROM candidates WHERE id = $rc")"
	echo "  $(phases "$rc")"
	echo "verdict -> revert confirmed: $(mins "$(secs "$tv" "$tr")")"
	echo "queue change -> revert confirmed: $(mins "$(secs "$t0" "$tr")")"
	retry=$(q "SELECT printf('%.1f', seconds) FROM candidate_phases WHERE candidate_id = $c AND phase = 'retry'")
	echo "the retry: ${retry:-none} s"
	kill "$DPID" && wait "$DPID" 2> /dev/null
	DPID=
}

for m in $MODES; do
	run_mode "$m" || echo "$m: did not finish (see above)"
done
