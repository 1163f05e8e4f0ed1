#!/bin/bash
# 52-coverage.t: build coverage on the real tree. A comment in lib/ctype.c
# (linked into the guest kernel), then four patches the guest config never
# compiles: a harmless driver change with its header, a driver change that
# adds a compiler warning, an arch/arm64 change, and a driver change that no
# longer compiles. The candidate is build-failed naming the object
# and the error, bisection finds the breaking patch, the warning is a
# 'warnings' verdict, arm64 is recorded as not built (no cross compiler) or
# built (when gcc-aarch64-linux-gnu is installed), and once the breaking
# patch is dropped the candidate passes with "N of M patches compiled, K in
# the booted kernel" - in `candidate --json`, `show`, the API and the
# dashboard (headless chromium). The allmodconfig build directory is
# $TOP/var/build-cover (shared, configured once), so the objects are a
# handful of ccache hits after the first run.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill $DPID 2>/dev/null; rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
git -C "$TREE" branch -f t52 "$tag"
PORT=$(py "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
coverage_conf "$T" t52 "$T/q" > "$T/stableq.conf"
cat >> "$T/stableq.conf" <<CONF
listen = 127.0.0.1:$PORT
# the daemon here only answers (52, 53) or reverts (56): no idle baseline
baseline_idle = no
bisect_confirm = 1
auto_revert = plan
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
jq_() { py "import json,sys; j=json.load(open('$1')); print($2)"; }

# mkpatch N SUBJECT FILE SED [FILE SED]: a stable-style mail changing FILEs
# of the tag
mkpatch() {
	local n=$1 subject=$2 d="$T/mk$1" file expr
	shift 2
	{
		printf 'From: Cov Example <cov%s@fixture.stableq.invalid>\n' "$n"
		printf 'Date: Thu, 4 Dec 2025 11:00:0%s +0000\n' "$n"
		printf 'Subject: [PATCH 6.1] %s\n' "$subject"
		printf 'Message-Id: <2025120411000%s-coverage@stableq.invalid>\n\n' "$n"
		printf 'commit c0e%037d upstream.\n\n' "$n"
		printf '[ stableq test fixture: build coverage ]\n\n'
		printf 'Cc: <stable@vger.kernel.org> # 6.1.x\n'
		printf 'Signed-off-by: Cov Example <cov%s@fixture.stableq.invalid>\n---\n' "$n"
		while [ $# -ge 2 ]; do
			file=$1 expr=$2
			shift 2
			mkdir -p "$d/a/$(dirname "$file")" "$d/b/$(dirname "$file")"
			git -C "$TREE" show "$tag:$file" > "$d/a/$file"
			sed "$expr" "$d/a/$file" > "$d/b/$file"
			(cd "$d" && git diff --no-index --no-prefix "a/$file" "b/$file" |
				sed "s|^diff --git a/a/|diff --git a/|; s| b/b/| b/|; s|^--- a/a/|--- a/|; s|^+++ b/b/|+++ b/|")
		done
	} > "$T/q/$(printf '%04d' "$n")-cov.patch"
}
mkdir -p "$T/q"
: > "$T/q/series"
mkpatch 1 "lib/ctype: say where the table comes from" lib/ctype.c '12i\/* ISO 8859-1 */'
mkpatch 2 "misc: dummy-irq: say why IRQ_NONE" drivers/misc/dummy-irq.c '30i\	/* not ours: another handler may want it */' \
	drivers/misc/hpilo.h '10i\/* the HP iLO driver */'
mkpatch 4 "misc: ds1682: keep a spare variable" drivers/misc/ds1682.c '56a\	int stableq_unused;'
mkpatch 5 "arm64: cpuinfo: comment the VPIPT case" arch/arm64/kernel/cpuinfo.c '40i\		/* VMID-tagged PIPT */'
mkpatch 3 "misc: isl29003: shift by the field" drivers/misc/isl29003.c '69s/>> shift;/>> stableq_undeclared;/'
ls "$T/q" | grep -- '-cov.patch' >> "$T/q/series"
grep -q 'stableq_undeclared' "$T/q/0003-cov.patch"
ok $? "the fixture patches are made from the tree (the breaking one shifts by an undeclared name)"
SQ import "$T/q" > "$T/import.log" 2>&1
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 5 "five patches queued"
pid_of() { db "SELECT id FROM patches WHERE subject LIKE '$1%'"; }
A=$(pid_of 'misc: dummy-irq'); W=$(pid_of 'misc: ds1682'); ARM=$(pid_of 'arm64: cpuinfo'); BAD=$(pid_of 'misc: isl29003')
LIB=$(pid_of 'lib/ctype')

# ---- the whole queue: one object no longer compiles ----
SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
is "$?" 3 "the candidate does not pass (exit 3)"
is "$(jq_ "$T/c1.json" "j['verdict']")" build-failed "verdict: build-failed"
d1=$(jq_ "$T/c1.json" "j['detail']")
like "$d1" "drivers/misc/isl29003.o" "the detail names the object"
like "$d1" "error:" "... and its first error"
like "$d1" "stableq_undeclared" "... which is the undeclared name"
like "$d1" "patch $BAD" "... and the patch"
is "$(jq_ "$T/c1.json" "j['build']['result']")" ok "the guest kernel itself built"
cov() { jq_ "$1" "[p for p in j['coverage']['patches'] if p['patch_id']==$2][0]$3"; }
is "$(cov "$T/c1.json" "$A" "['status']")" compiled "the harmless driver patch: compiled"
is "$(cov "$T/c1.json" "$A" "['files'][0]['path']")" drivers/misc/dummy-irq.c "... its .c file"
is "$(cov "$T/c1.json" "$A" "['files'][0]['config']")" "x86_64 allmodconfig" "... under x86_64 allmodconfig"
is "$(cov "$T/c1.json" "$A" "['files'][0]['objects'][0]")" drivers/misc/dummy-irq.o "... as its object"
is "$(cov "$T/c1.json" "$BAD" "['status']")" failed "the breaking patch: failed"
if command -v aarch64-linux-gnu-gcc > /dev/null; then
	is "$(cov "$T/c1.json" "$ARM" "['status']")" compiled "the arm64 patch is compiled with the cross compiler"
else
	is "$(cov "$T/c1.json" "$ARM" "['status']")" not-built "the arm64 patch is recorded as not built here"
	like "$(cov "$T/c1.json" "$ARM" "['files'][0]['detail']")" "gcc-aarch64-linux-gnu is not installed" "... with why (the Debian package)"
fi
is "$(cov "$T/c1.json" "$LIB" "['status']")" booted "the lib/ctype.c patch: in the booted kernel (lib.a of the guest build)"
is "$(cov "$T/c1.json" "$LIB" "['files'][0]['config']")" guest "... built by the guest config"
is "$(cov "$T/c1.json" "$A" "['files'][1]['path']")" drivers/misc/hpilo.h "the header of the harmless patch"
is "$(cov "$T/c1.json" "$A" "['files'][1]['kind']")" header "... is a header"
is "$(cov "$T/c1.json" "$A" "['files'][1]['objects']")" "['drivers/misc/hpilo.o']" "... compiled through the .c file that includes it"
is "$(cov "$T/c1.json" "$A" "['files'][1]['status']")" compiled "... which compiles"
like "$(cov "$T/c1.json" "$W" "['files'][0]['warnings']")" "stableq_unused" "the warning patch's new warning is recorded"
like "$(cov "$T/c1.json" "$W" "['files'][0]['warnings']")" "unused variable" "... an unused variable warning"
is "$(cov "$T/c1.json" "$A" "['files'][0]['warnings']")" None "the harmless patch has no new warning"
is "$(db "SELECT result FROM verdicts WHERE patch_id = $W AND check_name = 'warnings' ORDER BY id DESC LIMIT 1")" added "a 'warnings' verdict flags it"
SQ show "$W" > "$T/show-w.txt"
like "$(cat "$T/show-w.txt")" "warnings    added: drivers/misc/ds1682.o" "stableq show: the warnings check with the object"
like "$(cat "$T/show-w.txt")" "coverage:   compiled" "stableq show: its coverage"
like "$(cat "$T/show-w.txt")" "drivers/misc/ds1682.c: compiled (x86_64 allmodconfig: drivers/misc/ds1682.o)" "stableq show: the file, config and object"
is "$(db "SELECT COUNT(*) FROM verdicts WHERE patch_id = $A AND check_name = 'warnings'")" 0 "no warnings verdict for the harmless patch"

# ---- bisection: the first prefix that fails to build ----
cid=$(db "SELECT MAX(id) FROM candidates")
SQ bisect "$cid" --json > "$T/bisect.json" 2> "$T/bisect.log"
ok $? "bisect runs"
is "$(jq_ "$T/bisect.json" "j['culprit_patch_id']")" "$BAD" "the bisection names the breaking patch"
is "$(jq_ "$T/bisect.json" "j['state']")" found "... found"
is "$(db "SELECT state FROM patches WHERE id = $BAD")" broken "the breaking patch is flagged broken"
like "$(db "SELECT evidence FROM flags WHERE patch_id = $BAD")" "drivers/misc/isl29003.o" "the flag's evidence names the object"
like "$(db "SELECT headers_and_body FROM mail WHERE patch_id = $BAD AND kind = 'flagged'")" "stableq_undeclared" "the author's mail carries the failure"
like "$(db "SELECT headers_and_body FROM mail WHERE patch_id = $BAD AND kind = 'flagged'")" "patches compiled" "... and the coverage line"

# ---- without it: pass, with the coverage in the summary ----
SQ revert "$BAD" --reason "does not compile" > "$T/revert.log" 2>&1
ok $? "the breaking patch is dropped"
SQ candidate --json > "$T/c2.json" 2> "$T/c2.log"
ok $? "the candidate without it passes"
s2=$(jq_ "$T/c2.json" "j['summary']")
compiled=3
command -v aarch64-linux-gnu-gcc > /dev/null && compiled=4
like "$s2" "pass: " "the summary starts with the verdict"
like "$s2" " tests, 0 regressions, 0 known failures, 0 flaky; $compiled of 4 patches compiled, 1 in the booted kernel" "the summary: $s2"
SQ candidate --show "$(db "SELECT MAX(id) FROM candidates")" > "$T/c2.txt" 2>&1
like "$(cat "$T/c2.txt")" "$s2" "stableq candidate --show ID prints the summary"
like "$(cat "$T/c2.txt")" "drivers/misc/dummy-irq.c: compiled (x86_64 allmodconfig" "... and each patch's files"
n=$(grep -c 'make allmodconfig' "$T"/var/log/coverage-*.log | awk -F: '{s += $2} END {print s}')
ok $([ "$n" -le 1 ] && echo 0 || echo 1) "allmodconfig ran at most once in this test ($n)"
diag "$(grep -h 'coverage:' "$T/c1.log" "$T/c2.log")"

# ---- the API and the dashboard ----
C2=$(db "SELECT MAX(id) FROM candidates")
(cd "$TOP" && exec "$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1) &
DPID=$!
for i in $(seq 1 100); do curl -sf "127.0.0.1:$PORT/api/v1/health" > /dev/null && break; sleep 0.2; done
curl -sf "127.0.0.1:$PORT/api/v1/candidates/$C2" > "$T/api-c2.json"
is "$(jq_ "$T/api-c2.json" "j['coverage']['summary']")" "$compiled of 4 patches compiled, 1 in the booted kernel" "GET /candidates/ID: coverage.summary"
is "$(jq_ "$T/api-c2.json" "j['summary']")" "$s2" "GET /candidates/ID: summary"
curl -sf "127.0.0.1:$PORT/api/v1/patches/$W" > "$T/api-w.json"
is "$(jq_ "$T/api-w.json" "j['coverage']['status']")" compiled "GET /patches/ID: coverage.status"
like "$(jq_ "$T/api-w.json" "j['coverage']['files'][0]['warnings']")" "unused variable" "GET /patches/ID: the file's new warnings"
is "$(jq_ "$T/api-w.json" "j['verdicts']['warnings']['result']")" added "GET /patches/ID: the warnings verdict among the others"
ok "$([ -x /usr/bin/chromedriver ] && echo 0 || echo 1)" "Debian's chromium-driver is installed (make deps)"
node "$TOP/tests/lib/coverage-dashboard.mjs" "http://127.0.0.1:$PORT" "$C2" "$W" "$ARM" > "$T/chromium.txt" 2>&1
while read -r line; do
	ok "$(py "import json; print(0 if json.loads('''$line''')['ok'] else 1)" 2>/dev/null || echo 1)" \
		"chromium: $(py "import json; print(json.loads('''$line''')['name'])" 2>/dev/null || echo "$line")" ||
		diag "$(py "import json; print(json.loads('''$line''').get('diag'))" 2>/dev/null)"
done < "$T/chromium.txt"
is "$(grep -c '"ok"' "$T/chromium.txt")" 4 "the browser run reports its four checks"
kill $DPID 2>/dev/null
wait $DPID 2>/dev/null
DPID=
done_testing
