#!/bin/bash
# 82-arm64-cell.t: a branch testing `arches = x86_64 arm64`. The shipped
# 6.1 queue (test + fix) and a patch that breaks only the arm64 build
# (tests/fixtures/matrix: arch/arm64/kernel/setup.c calls a helper the
# tree lacks: it compiles, so build coverage passes the file for arm64,
# and only the kernel's link fails): the x86_64 cell passes as before,
# the arm64/gcc cell (ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu-) fails
# to build, so the candidate is
# "build-failed (arm64)"; the bisection runs in the arm64 cell alone and
# finds the patch; the revert drops it and its confirmation boots arm64
# (qemu-system-aarch64 -M virt under TCG) and passes. KCIDB names arm64.
# The arm64 cell builds from its own worktree of the tree (cell.h).
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/matrix.sh"
set -u
matrix_world t35 arm64-setup-break-the-arm64-build.patch 'arches = x86_64 arm64'
culprit_q="SELECT id FROM patches WHERE subject LIKE '%break the arm64 build%'"
is "$(j "j['verdict']")" build-failed "verdict: build-failed"
like "$(j "j['detail']")" "build-failed (arm64): candidate" "... in the arm64 cell, named"
like "$(j "j['detail']")" "undefined reference to \`stableq_fixture_missing_helper'" "... with the linker's error"
cov=$(db "SELECT status || ' ' || config FROM coverage WHERE candidate_id = (SELECT MIN(id) FROM candidates WHERE purpose = 'queue') AND path = 'arch/arm64/kernel/setup.c'")
is "$cov" "compiled arm64 allmodconfig" "build coverage compiled the touched file for arm64 and it compiled: only the arm64 link finds the missing helper"
is "$(j "[t['result'] for t in j['tests'] if t['name'] == 'user-copy'][0]")" pass "x86_64/gcc's own results are as before: user-copy passes"
is "$(j "' '.join(c['arch'] + '/' + c['compiler'] + ':' + str(c['verdict']) for c in j['cells'])")" "arm64/gcc:build-failed x86_64/gcc:pass" "the matrix, the failing cell first"
like "$(grep -a 'ARCH=arm64' "$T"/var/log/build-*.log | head -n 1)" "CROSS_COMPILE=aarch64-linux-gnu-" "the arm64 cell cross-builds with Debian's aarch64-linux-gnu-gcc"
is "$(grep -a -l 'ARCH=arm64' "$T"/var/log/build-*.log | head -n 1 | xargs grep -a -m1 'stableq: the source:')" "stableq: the source: $TREE-arm64-gcc" "... from the arm64 cell's own worktree of the tree"

cid=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue' AND cell_of IS NULL")
SQ bisect "$cid" --json > "$T/bisect.json" 2> "$T/bisect.log"
ok $? "bisect runs" || diag "$(tail -5 "$T/bisect.log")"
culprit=$(db "$culprit_q")
is "$(py "import json; print(json.load(open('$T/bisect.json'))['culprit_patch_id'])")" "$culprit" "the bisection names the arm64 breaker"
is "$(db "SELECT COUNT(*) FROM bisection_steps s JOIN candidates c ON c.id = s.candidate_id WHERE COALESCE(c.arch, 'x86_64') != 'arm64'")" 0 "every step ran in the arm64 cell"
SQ revert "$culprit" --reason "bisection: breaks the arm64 build" > "$T/revert.log" 2>&1
ok $? "revert: dropped, the confirmation passes" || diag "$(tail -5 "$T/revert.log")"
is "$(db "SELECT state FROM patches WHERE id = $culprit")" dropped "the culprit is dropped"
conf=$(db "SELECT confirm_candidate_id FROM reverts")
is "$(db "SELECT verdict FROM candidates WHERE id = $conf")" pass "the confirmation candidate passes"
arm=$(db "SELECT id FROM candidates WHERE cell_of = $conf AND arch = 'arm64'")
is "$(db "SELECT verdict FROM candidates WHERE id = $arm")" pass "... in the arm64 cell too"
log=$(db "SELECT log_path FROM candidates WHERE id = $arm")
like "$(grep -a -m1 'Machine model' "$log")" "linux,dummy-virt" "the arm64 kernel booted on QEMU's virt board"
ok $([ "$(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $arm AND name LIKE 'kunit.%' AND result = 'pass'")" -ge 20 ] && echo 0 || echo 1) "... and ran KUnit ($(db "SELECT COUNT(*) FROM test_results WHERE candidate_id = $arm AND name LIKE 'kunit.%'") cases)"
SQ kcidb > "$T/kcidb.json" 2> "$T/kcidb.log"
is "$(py "import json; print(sorted(set(b['architecture'] for b in json.load(open('$T/kcidb.json'))['builds'])))")" "['arm64', 'x86_64']" "KCIDB: each build names its architecture"
git -C "$TREE" branch -D t35 > /dev/null
diag "$(grep -h 'build [0-9]* ok\|build [0-9]* FAILED\|results in' "$T/c1.log" "$T/revert.log" | head -20)"
done_testing
