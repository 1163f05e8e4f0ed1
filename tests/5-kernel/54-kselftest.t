#!/bin/bash
# 54-kselftest.t: kselftests from the candidate's own tree, end to end on
# the real 6.1 tree: the small guest kernel (config/kernel/6.1/quick) built and booted
# in QEMU, three targets of tools/testing/selftests built against the
# candidate's headers (size, kcmp, and user_events, which never builds on
# 6.1: its uapi header is not there). The queue is one patch that breaks
# two selftests in the candidate's own tree: size's get_size reports "not
# ok" and exits 1, kcmp_test.c no longer compiles. Its run fails on both,
# as regressions against the tip's run (where both pass), the compiler's
# error carried; user_events fails on the tip too: a known failure.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TREE=$TOP/var/linux
cp "$TOP/config/tests.conf" "$T/tests.conf"
(cd "$TOP" && "$STABLEQ" --db "$T/init.db" -c /dev/null tree init > "$T/init.log" 2>&1)
ok $? "tree init imports linux-source-6.1 (or finds it imported)"
tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)
git -C "$TREE" branch -f t54 "$tag"
cat >> "$T/tests.conf" <<'CONF'

[test kselftest-three]
kind = kselftest
targets = size kcmp user_events
timeout = 30
guest_config = quick
description = three kselftest targets of the candidate's own tree
CONF

grep -q '^targets = .*\<size\>' "$TOP/config/tests.conf"
ok $? "the shipped broad set has size too: a quick section may share it"

# the queue: a patch that breaks two selftests of the tree
S=tools/testing/selftests
mkdir -p "$T/a/$S/size" "$T/a/$S/kcmp" "$T/q"
git -C "$TREE" show "$tag:$S/size/get_size.c" > "$T/a/$S/size/get_size.c"
git -C "$TREE" show "$tag:$S/kcmp/kcmp_test.c" > "$T/a/$S/kcmp/kcmp_test.c"
cp -r "$T/a" "$T/b"
sed -i 's/if (ccode < 0) {/if (ccode >= 0) {/; s/syscall(SYS_exit, ccode);/syscall(SYS_exit, 1);/' "$T/b/$S/size/get_size.c"
sed -i 's/^int main(int argc, char \*\*argv)$/int main(int argc, char **argv)\nthis_does_not_compile;/' "$T/b/$S/kcmp/kcmp_test.c"
{
	cat <<'HDR'
From 0000000000000000000000000000000000000054 Mon Sep 17 00:00:00 2001
From: stableq tests <tests@stableq.invalid>
Date: Fri, 5 Dec 2025 06:00:00 +0000
Subject: [PATCH 6.1] selftests: break size and kcmp
Message-Id: <20251205060000.54-6.1-queue@stableq.invalid>

This is not an upstream commit: tests/54-kselftest.t breaks two selftests
of the tree to see them fail as regressions of the candidate.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: stableq tests <tests@stableq.invalid>
---
HDR
	(cd "$T" && diff -ruN a b)
	printf -- '-- \n2.39.5\n'
} > "$T/q/0001-selftests-break-size-and-kcmp.patch"
echo 0001-selftests-break-size-and-kcmp.patch > "$T/q/series"
grep -q 'this_does_not_compile' "$T/q/0001-selftests-break-size-and-kcmp.patch"
ok $? "the patch breaks kcmp_test.c"

printf '%s = %s\n' db "$T/stableq.db" var_dir "$T/var" tree_dir "$TREE" branch t54 \
	build_dir "$TOP/var/build" build_cache_dir "$TOP/var/build-cache" queue_dir "$T/q" kernel_config_dir "$TOP/config/kernel/6.1/quick" \
	tests_file "$T/tests.conf" test_retries 0 > "$T/stableq.conf"
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the patch is imported"
is "$(db "SELECT state FROM patches WHERE id = 1")" queued "... and queued"

SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
is "$?" 3 "the candidate fails (exit 3)"
c1=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue'")
tip=$(db "SELECT tip_candidate_id FROM candidates WHERE id = $c1")
like "$(cat "$T/c1.log")" ": 1 of 3 targets built, 1 tests (" \
	"the candidate's kselftests: kcmp and user_events do not build"
like "$(cat "$T/c1.log")" ": 2 of 3 targets built, 2 tests" \
	"the tip's: kcmp builds there"
like "$(cat "$T/c1.log")" "running the test set on the tip" "the tip runs the set"
st() { db "SELECT status FROM test_cases WHERE candidate_id = $c1 AND name = '$1'"; }
tipres() { db "SELECT result FROM test_results WHERE candidate_id = $tip AND name = '$1'"; }
is "$(tipres kselftest.size.get_size)" pass "on the tip, size's get_size passes (a result of its own, stored)"
is "$(tipres kselftest.size.get_size.get_runtime_memory_use)" pass "... and so does its TAP line"
is "$(tipres kselftest.kcmp)" pass "on the tip, kcmp builds"
is "$(st kselftest.size.get_size)" regression "the candidate's own get_size fails: a regression"
is "$(st kselftest.size.get_size.get_runtime_memory_use)" regression "... its TAP line too"
like "$(db "SELECT detail FROM test_results WHERE candidate_id = $c1 AND name = 'kselftest.size.get_size'")" \
	"not ok 1 get runtime memory use" "its detail quotes the test's output"
is "$(st kselftest.kcmp)" regression "kcmp does not build here but did on the tip: a regression"
kd=$(db "SELECT detail FROM test_results WHERE candidate_id = $c1 AND name = 'kselftest.kcmp'")
like "$kd" "does not build:" "... it does not build"
like "$kd" "kcmp_test.c:31:1: error: expected declaration specifiers before" "... carrying the compiler's error"
is "$(st kselftest.user_events)" known "user_events never built: a known failure, reported"
like "$(db "SELECT detail FROM test_results WHERE candidate_id = $c1 AND name = 'kselftest.user_events'")" \
	"user_events.h" "... saying why"
is "$(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $c1 AND name LIKE 'kselftest.user_events.%'")" 0 \
	"... and none of its tests ran"
like "$(py() { /usr/bin/python3 -c "$1"; }; py "import json; print(json.load(open('$T/c1.json'))['detail'])")" \
	"kselftest.size.get_size failed (passes on the tip)" "the candidate's detail names the regression"

# the same state again: its kselftests come from the cache
SQ candidate > "$T/c2.log" 2>&1
like "$(cat "$T/c2.log")" ": 1 of 3 targets built, 1 tests (cached" \
	"an unchanged tree's kselftests are not built again"
diag "$(grep -h 'kselftests\|results in' "$T/c1.log" "$T/c2.log")"
done_testing
