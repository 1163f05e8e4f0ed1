#!/bin/bash
# 81-clang-cell.t: a branch testing `compilers = gcc clang`. The shipped
# 6.1 queue (test + fix) and a patch that breaks only the clang build
# (tests/fixtures/matrix: an #error under __clang__): x86_64/gcc passes as
# before, the x86_64/clang cell fails to build, so the candidate is
# "build-failed (clang)"; the bisection runs in the clang cell alone and
# finds the patch; the revert drops it and its confirmation passes in the
# clang cell too. The KCIDB export names each build's compiler.
# Real builds (LLVM=1 with Debian's clang and lld) and QEMU boots.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/matrix.sh"
set -u
matrix_world t34 lib-cmdline-break-the-clang-build.patch 'compilers = gcc clang'
culprit_q="SELECT id FROM patches WHERE subject LIKE '%break the clang build%'"
is "$(j "j['verdict']")" build-failed "verdict: build-failed"
like "$(j "j['detail']")" "build-failed (clang): candidate" "... in the clang cell, named"
like "$(j "j['detail']")" "this patch breaks the clang build only" "... with clang's error"
is "$(j "[t['result'] for t in j['tests'] if t['name'] == 'user-copy'][0]")" pass "x86_64/gcc's own results are as before: user-copy passes"
is "$(j "j['build']['result']")" ok "... and its gcc build is ok"
is "$(j "' '.join(c['arch'] + '/' + c['compiler'] + ':' + str(c['verdict']) for c in j['cells'])")" "x86_64/clang:build-failed x86_64/gcc:pass" "the matrix, the failing cell first"
like "$(j "j['summary']")" "build-failed: x86_64/gcc " "the summary is per cell ..."
like "$(j "j['summary']")" "tests, x86_64/clang build-failed" "... naming the clang cell's failure"
like "$(grep -a 'LLVM=1' "$T"/var/log/build-*.log | head -n 1)" "CC=ccache clang" "the clang cell builds with LLVM=1 and clang through ccache"
ls -d "$TOP/var/build-x86_64-clang" > /dev/null 2>&1
ok $? "... in its own build directory (build-x86_64-clang)"

cid=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue' AND cell_of IS NULL")
SQ bisect "$cid" --json > "$T/bisect.json" 2> "$T/bisect.log"
ok $? "bisect runs" || diag "$(tail -5 "$T/bisect.log")"
culprit=$(db "$culprit_q")
is "$(py "import json; print(json.load(open('$T/bisect.json'))['culprit_patch_id'])")" "$culprit" "the bisection names the clang breaker"
is "$(db "SELECT COUNT(*) FROM bisection_steps s JOIN candidates c ON c.id = s.candidate_id WHERE COALESCE(c.compiler, 'gcc') != 'clang'")" 0 "every step ran in the clang cell"
ok $([ "$(db "SELECT COUNT(*) FROM bisection_steps")" -ge 2 ] && echo 0 || echo 1) "... search and confirmation steps ($(db "SELECT COUNT(*) FROM bisection_steps"))"
is "$(db "SELECT state FROM patches WHERE id = $culprit")" broken "the culprit is flagged broken"
SQ revert "$culprit" --reason "bisection: breaks the clang build" > "$T/revert.log" 2>&1
ok $? "revert: dropped, the confirmation passes" || diag "$(tail -5 "$T/revert.log")"
is "$(db "SELECT state FROM patches WHERE id = $culprit")" dropped "the culprit is dropped"
conf=$(db "SELECT confirm_candidate_id FROM reverts")
is "$(db "SELECT verdict FROM candidates WHERE id = $conf")" pass "the confirmation candidate passes"
is "$(db "SELECT verdict FROM candidates WHERE cell_of = $conf AND compiler = 'clang'")" pass "... in the clang cell too"
ok $([ "$(db "SELECT COUNT(DISTINCT name) FROM test_results WHERE candidate_id = (SELECT id FROM candidates WHERE cell_of = $conf AND compiler = 'clang')")" -ge 5 ] && echo 0 || echo 1) "... where the clang kernel booted and ran the test set"
SQ kcidb > "$T/kcidb.json" 2> "$T/kcidb.log"
is "$(py "import json; print(sorted(set(b['compiler'] for b in json.load(open('$T/kcidb.json'))['builds'])))")" "['clang', 'gcc']" "KCIDB: each build names its compiler"
git -C "$TREE" branch -D t34 > /dev/null
diag "$(grep -h 'build [0-9]* ok\|build [0-9]* FAILED\|results in' "$T/c1.log" "$T/revert.log" | head -20)"
done_testing
