#!/bin/bash
# 84-clang-coverage.t: build coverage with clang. On the real 6.1 tree, a
# queue of four patches. Two touch files the quick guest does not build:
# one adds `rc = rc;` to drivers/misc/ds1682.c (clang's -Wself-assign; gcc
# 12 says nothing), one makes drivers/misc/isl29003.c fail under clang
# alone (an #error under __clang__). Two touch files of the booted kernel:
# one adds `ret = ret;` to lib/test_user_copy.c, one an #error under
# __clang__ to lib/ctype.c. With `compilers = gcc clang` build coverage
# compiles all four with LLVM=1 too (coverage_build_dir/x86_64-clang): each
# self-assign is a new warning under clang and not under gcc, a 'warnings'
# verdict of its patch naming clang, booted or not; the clang-only failure
# of isl29003.c makes the candidate build-failed naming clang, the object
# and clang's error, while lib/ctype.c's clang failure is shown on its
# clang row and left to the x86_64/clang cell (whose own build compiles
# the booted kernel with clang: 81-clang-cell.t), never the candidate's
# detail although its patch comes first. The same queue with `compilers =
# gcc` runs no clang coverage and passes; with a clang older than the
# tree's minimum, coverage says "not run (clang):" and why, never a pass.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
chmod 755 "$T" # the build user reaches the build dirs in it
trap 'rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
git -C "$TREE" branch -f t84 "$tag"

# mkpatch N SUBJECT FILE SED: a stable-style mail changing FILE of the tag
mkpatch() {
	local n=$1 subject=$2 file=$3 expr=$4 d="$T/mk$1"
	mkdir -p "$d/a/$(dirname "$file")" "$d/b/$(dirname "$file")"
	git -C "$TREE" show "$tag:$file" > "$d/a/$file"
	sed "$expr" "$d/a/$file" > "$d/b/$file"
	{
		printf 'From: Clang Cov <cc%s@fixture.stableq.invalid>\n' "$n"
		printf 'Date: Mon, 7 Dec 2026 05:00:0%s +0000\n' "$n"
		printf 'Subject: [PATCH 6.1] %s\n' "$subject"
		printf 'Message-Id: <2026120705000%s-clangcov@stableq.invalid>\n\n' "$n"
		printf 'commit c1a%037d upstream.\n\n' "$n"
		printf '[ stableq test fixture: build coverage with clang ]\n\n'
		printf 'Cc: <stable@vger.kernel.org> # 6.1.x\n'
		printf 'Signed-off-by: Clang Cov <cc%s@fixture.stableq.invalid>\n---\n' "$n"
		(cd "$d" && git diff --no-index --no-prefix "a/$file" "b/$file" |
			sed "s|^diff --git a/a/|diff --git a/|; s| b/b/| b/|; s|^--- a/a/|--- a/|; s|^+++ b/b/|+++ b/|")
	} > "$T/q/$(printf '%04d' "$n")-clangcov.patch"
}
mkdir -p "$T/q"
mkpatch 1 "misc: ds1682: read rc back" drivers/misc/ds1682.c '69a\	rc = rc;'
mkpatch 2 "lib: test_user_copy: keep ret" lib/test_user_copy.c '101a\	ret = ret;'
mkpatch 3 "lib: ctype: not with clang" lib/ctype.c \
	$'/^#include <linux\\/export.h>/a\\\n#ifdef __clang__\\\n#error "stableq: this booted file breaks the clang build only"\\\n#endif'
mkpatch 4 "misc: isl29003: not with clang" drivers/misc/isl29003.c \
	$'/^#include <linux\\/module.h>/a\\\n#ifdef __clang__\\\n#error "stableq: this patch breaks the clang build only"\\\n#endif'
printf '%04d-clangcov.patch\n' 1 2 3 4 > "$T/q/series"
grep -q '^+	rc = rc;' "$T/q/0001-clangcov.patch"
ok $? "the self-assign patch adds rc = rc;" || diag "$(cat "$T/q/0001-clangcov.patch")"
grep -q '^+	ret = ret;' "$T/q/0002-clangcov.patch"
ok $? "the self-assign patch of a booted file adds ret = ret;" || diag "$(cat "$T/q/0002-clangcov.patch")"
grep -q '^+#error "stableq: this booted file breaks the clang build only"' "$T/q/0003-clangcov.patch"
ok $? "the booted clang breaker adds an #error under __clang__" || diag "$(cat "$T/q/0003-clangcov.patch")"
grep -q '^+#error "stableq: this patch breaks the clang build only"' "$T/q/0004-clangcov.patch"
ok $? "the clang breaker adds an #error under __clang__" || diag "$(cat "$T/q/0004-clangcov.patch")"

# world NAME 'KEY = VALUE': a store and config of its own, the queue imported
world() {
	local w=$T/$1
	mkdir -p "$w"
	chmod 755 "$w"
	coverage_conf "$w" t84 "$T/q" > "$w/stableq.conf"
	cat >> "$w/stableq.conf" <<CONF
baseline_idle = no
$2
CONF
	W=$w
	SQ import "$T/q" > "$w/import.log" 2>&1
}
SQ() { (cd "$TOP" && "$STABLEQ" -c "$W/stableq.conf" "$@"); }
db() { sqlite3 "$W/stableq.db" "$1"; }
j() { py "import json; j = json.load(open('$W/c.json')); print($1)"; }
# file PATCH COMPILER FIELD: a coverage row of the candidate's JSON
file() { j "[f for p in j['coverage']['patches'] if p['patch_id'] == $1 for f in p['files'] if f['compiler'] == '$2'][0]['$3']"; }

# ---- compilers = gcc clang ----
world clang 'compilers = gcc clang'
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 4 "four patches queued"
SA=$(db "SELECT id FROM patches WHERE subject LIKE '%ds1682%'")
UC=$(db "SELECT id FROM patches WHERE subject LIKE '%test_user_copy%'")
CT=$(db "SELECT id FROM patches WHERE subject LIKE '%ctype%'")
BR=$(db "SELECT id FROM patches WHERE subject LIKE '%isl29003%'")
t0=$(date +%s.%N)
SQ candidate --json > "$W/c.json" 2> "$W/c.log"
is "$?" 3 "the candidate does not pass (exit 3)"
t1=$(date +%s.%N)
is "$(j "j['verdict']")" build-failed "verdict: build-failed"
like "$(j "j['detail']")" "patch $BR (clang): drivers/misc/isl29003.o: " "the detail names the patch, clang and the object"
like "$(j "j['detail']")" "this patch breaks the clang build only" "... and clang's error"
is "$(j "'patch $CT ' in j['detail'] or 'lib/ctype' in j['detail']")" False "... not the booted lib/ctype.c's, though its patch comes first"
is "$(j "j['build']['result']")" ok "the guest kernel itself built (gcc)"
is "$(file "$BR" gcc status)" compiled "gcc: isl29003.c compiles"
is "$(file "$BR" clang status)" failed "clang: isl29003.c fails"
is "$(file "$BR" clang config)" "x86_64 allmodconfig clang" "... under x86_64 allmodconfig clang"
is "$(file "$SA" gcc status)" compiled "gcc: ds1682.c compiles"
is "$(file "$SA" gcc warnings)" None "... with no new gcc warning"
is "$(file "$SA" clang status)" compiled "clang: ds1682.c compiles"
like "$(file "$SA" clang warnings)" "drivers/misc/ds1682.o (clang): " "... with a new clang warning, named so"
like "$(file "$SA" clang warnings)" "[-Wself-assign]" "... -Wself-assign"
diag "$(file "$SA" clang warnings)"
is "$(file "$UC" gcc status)" booted "gcc: test_user_copy.c is in the booted kernel"
is "$(file "$UC" clang status)" compiled "clang: test_user_copy.c compiles, a clang row all the same"
is "$(file "$UC" clang config)" "x86_64 allmodconfig clang" "... under x86_64 allmodconfig clang"
like "$(file "$UC" clang warnings)" "lib/test_user_copy.o (clang): " "... with a new clang warning, named so"
like "$(file "$UC" clang warnings)" "[-Wself-assign]" "... -Wself-assign"
diag "$(file "$UC" clang warnings)"
is "$(db "SELECT result FROM verdicts WHERE patch_id = $UC AND check_name = 'warnings' ORDER BY id DESC LIMIT 1")" added "a 'warnings' verdict flags the booted file's self-assign patch"
like "$(db "SELECT detail FROM verdicts WHERE patch_id = $UC AND check_name = 'warnings' ORDER BY id DESC LIMIT 1")" "lib/test_user_copy.o (clang): " "... naming clang and the object"
is "$(file "$CT" gcc status)" booted "gcc: ctype.c is in the booted kernel"
is "$(file "$CT" clang status)" failed "clang: ctype.c fails, shown on its clang row"
like "$(file "$CT" clang detail)" "lib/ctype.o: " "... naming the object"
like "$(file "$CT" clang detail)" "this booted file breaks the clang build only" "... and clang's error"
like "$(file "$CT" clang detail)" "the x86_64/clang cell's build decides" "... and who decides"
diag "$(file "$CT" clang detail)"
is "$(db "SELECT result FROM verdicts WHERE patch_id = $SA AND check_name = 'warnings' ORDER BY id DESC LIMIT 1")" added "a 'warnings' verdict flags the self-assign patch"
like "$(db "SELECT detail FROM verdicts WHERE patch_id = $SA AND check_name = 'warnings' ORDER BY id DESC LIMIT 1")" "(clang)" "... naming clang"
SQ show "$SA" > "$W/show.txt"
like "$(cat "$W/show.txt")" "drivers/misc/ds1682.c: compiled (x86_64 allmodconfig clang: drivers/misc/ds1682.o)" "stableq show: the clang row, its config and object"
like "$(cat "$W/show.txt")" "drivers/misc/ds1682.c: compiled (x86_64 allmodconfig: drivers/misc/ds1682.o)" "stableq show: the gcc row beside it"
SQ show "$UC" > "$W/show-uc.txt"
like "$(cat "$W/show-uc.txt")" "lib/test_user_copy.c: booted (guest: lib/test_user_copy.o)" "stableq show: a booted file's gcc row"
like "$(cat "$W/show-uc.txt")" "lib/test_user_copy.c: compiled (x86_64 allmodconfig clang: lib/test_user_copy.o)" "... and its clang row"
like "$(grep -a 'LLVM=1' "$W"/var/log/coverage-*.log | head -n 1)" "x86_64-clang" "clang's objects are compiled with LLVM=1 in coverage_build_dir/x86_64-clang"
ok "$([ -x "$TOP/var/build-cover/x86_64-clang/stableq-cc" ] && grep -q 'ccache clang' "$TOP/var/build-cover/x86_64-clang/stableq-cc" && echo 0 || echo 1)" "... through ccache clang"
diag "$(grep -h 'coverage' "$W/c.log")"
diag "candidate with clang coverage: $(py "print(round($t1 - $t0, 1))") s"

# ---- compilers = gcc: no clang coverage ----
world gcc ''
SQ candidate --json > "$W/c.json" 2> "$W/c.log"
ok $? "with compilers = gcc the same queue passes" || diag "$(tail -5 "$W/c.log")"
is "$(db "SELECT COUNT(*) FROM coverage WHERE compiler = 'clang'")" 0 "no clang coverage rows"
is "$(db "SELECT COUNT(*) FROM coverage WHERE compiler = 'gcc' AND status = 'compiled'")" 2 "gcc's two rows, compiled"
is "$(db "SELECT COUNT(*) FROM verdicts WHERE check_name = 'warnings' AND result = 'added'")" 0 "no new warning (gcc gives none)"
is "$(db "SELECT COUNT(*) FROM verdicts WHERE patch_id = $UC AND check_name = 'warnings'")" 0 "... none for the booted file's self-assign"
is "$(db "SELECT COUNT(*) FROM coverage WHERE compiler = 'gcc' AND status = 'booted'")" 2 "gcc's two booted rows"
diag "$(grep -h 'coverage' "$W/c.log")"
ok "$(grep -q 'LLVM=1\|allmodconfig clang' "$W"/var/log/coverage-*.log && echo 1 || echo 0)" "coverage ran no clang build (no LLVM=1 in its log)" ||
	diag "$(grep -h 'LLVM=1\|allmodconfig clang' "$W"/var/log/coverage-*.log | head -3)"
like "$(j "j['summary']")" "pass: " "the summary: $(j "j['summary']")"
like "$(j "j['summary']")" "; 4 of 4 patches compiled, 2 in the booted kernel" "... all four compiled (by gcc), two in the booted kernel"

# ---- clang older than the tree's minimum: not run, never a pass ----
mkdir -p "$T/oldclang"
printf '#!/bin/sh\n[ "$1" = -dumpversion ] && { echo 10.0.0; exit 0; }\nexec /usr/bin/clang "$@"\n' > "$T/oldclang/clang"
chmod 755 "$T/oldclang/clang"
world old 'compilers = gcc clang'
PATH=$T/oldclang:$PATH SQ candidate --json > "$W/c.json" 2> "$W/c.log"
ok $? "with a clang too old, the queue passes gcc's coverage" || diag "$(tail -5 "$W/c.log")"
diag "$(grep -h 'coverage' "$W/c.log")"
like "$(j "j['coverage']['summary']")" "; not run (clang): kernel build (x86_64/clang): clang 10.0.0 is older than 11.0.0" "coverage: not run (clang), and why"
is "$(file "$SA" clang status)" not-built "the clang row is not-built, never compiled"
like "$(file "$SA" clang detail)" "not run (clang): " "... its detail: not run (clang): ..."
is "$(file "$UC" clang status)" not-built "... the booted file's clang row too"
git -C "$TREE" branch -D t84 > /dev/null
done_testing
