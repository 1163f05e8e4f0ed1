#!/bin/bash
# 58-regressions.t: a regression is bisected by its failing test alone, while
# a known failure of the tip does not fail the candidate. Real kernel builds
# (ccache, the build directory shared with the other kernel tests) and QEMU
# boots. The test set is config/tests.conf plus a guest test that fails
# everywhere (tip-known); the queue is the shipped get_user_ex regression
# test alone, whose user-copy test fails on the candidate and passes on the
# tip. The candidate boots again (test_retries = 1), the set runs on the tip
# once (a baseline candidate of no patches, reused by the next candidate):
# user-copy is a regression, tip-known a known failure; the bisection steers
# by user-copy alone, its search step boots only user-copy, its
# confirmation the whole set.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/kernel.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
py() { /usr/bin/python3 -c "$1"; }
stable_tree
git -C "$TREE" branch -f t57 "$tag"
cp "$TOP/config/tests.conf" "$T/tests.conf"
tip_known "$T/tests.conf"
mkdir -p "$T/q"
Q=$TOP/config/queues/6.1
cp "$Q"/*.patch "$T/q/"
head -n 1 "$Q/series" > "$T/q/series"
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
build_cache_dir = $TOP/var/build-cache
tree_dir = $TREE
branch = t57
build_dir = $TOP/var/build
queue_dir = $T/q
kernel_config_dir = $TOP/config/kernel/6.1/quick
tests_file = $T/tests.conf
test_retries = 1
bisect_confirm = 1
CONF
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the regression test alone is queued"

SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
is "$?" 3 "the candidate fails (exit 3)"
c1=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue'")
is "$(db "SELECT verdict FROM candidates WHERE id = $c1")" fail "verdict: fail"
is "$(db "SELECT status FROM test_cases WHERE candidate_id = $c1 AND name = 'user-copy'")" regression \
	"user-copy passes on the tip and fails here: a regression"
is "$(db "SELECT status || ' ' || tip FROM test_cases WHERE candidate_id = $c1 AND name = 'tip-known'")" "known fail" \
	"tip-known fails on the tip too: a known failure"
is "$(db "SELECT COUNT(*) FROM test_cases WHERE candidate_id = $c1 AND status = 'regression'")" 1 "one regression"
is "$(db "SELECT boots FROM candidates WHERE id = $c1")" 2 "a failing test: one boot more (test_retries = 1)"
summary=$(py "import json; print(json.load(open('$T/c1.json'))['summary'])")
like "${summary%%:*}:" "fail:" "the summary starts with the verdict"
like "$summary" " tests, 1 regression, 1 known failure, 0 flaky" "the summary counts them: $summary"
like "$(py "import json; print(json.load(open('$T/c1.json'))['detail'])")" "user-copy failed (passes on the tip)" \
	"the detail names the regression"
ok "$(py "import json; print(0 if 'tip-known' not in json.load(open('$T/c1.json'))['detail'] else 1)")" \
	"... and not the known failure"
tip=$(db "SELECT tip_candidate_id FROM candidates WHERE id = $c1")
is "$(db "SELECT purpose || ' ' || patch_ids || ' ' || verdict FROM candidates WHERE id = $tip")" "baseline [] fail" \
	"the tip's run: a baseline candidate of no patches"
like "$(cat "$T/c1.log")" "running the test set on the tip" "... run for it"
# no run of the tip was known: the tip ran first, then only what passes on it was retried
like "$(cat "$T/c1.log")" "candidate $c1: no run of its tip is known: the tip runs first" \
	"with no run of the tip known, the failing candidate runs the tip first"
is "$(db "SELECT group_concat(DISTINCT name) FROM test_results WHERE candidate_id = $c1 AND run = 2")" user-copy \
	"... then retries user-copy alone, not tip-known, which fails on the tip"
is "$(db "SELECT (SELECT MIN(id) FROM test_results WHERE candidate_id = $c1 AND run = 2) > (SELECT MAX(id) FROM test_results WHERE candidate_id = $tip)")" 1 \
	"... after the tip's run"
is "$(db "SELECT boots || ' ' || (SELECT COUNT(*) FROM test_results WHERE candidate_id = $tip AND run = 2) FROM candidates WHERE id = $tip")" "1 0" \
	"the tip's run made for it retries nothing: a tip's failure is known either way"
like "$(db "SELECT seconds || ' ' || detail FROM candidate_phases WHERE candidate_id = $c1 AND phase = 'baseline'")" ", run now" \
	"the candidate's baseline phase: the tip's run, made now"

# the same tip state: its run is reused
SQ candidate --json > "$T/c2.json" 2> "$T/c2.log"
c2=$(db "SELECT MAX(id) FROM candidates WHERE purpose = 'queue'")
is "$(db "SELECT tip_candidate_id FROM candidates WHERE id = $c2")" "$tip" "the next candidate is compared with the same run of the tip"
is "$(db "SELECT COUNT(*) FROM candidates WHERE purpose = 'baseline'")" 1 "... which ran once"

# a known failure alone does not fail a candidate: the queue without the test
SQ bisect "$c1" --json > "$T/bisect.json" 2> "$T/bisect.log"
ok $? "bisect runs"
bid=$(db "SELECT MAX(id) FROM bisections")
is "$(db "SELECT failing_tests FROM bisections WHERE id = $bid")" '["user-copy"]' "it steers by the regression alone"
is "$(py "import json; print(json.load(open('$T/bisect.json'))['culprit_patch_id'])")" 1 "the culprit: the test patch"
search=$(db "SELECT candidate_id FROM bisection_steps WHERE bisection_id = $bid AND kind = 'search' LIMIT 1")
is "$(db "SELECT tests_only FROM candidates WHERE id = $search")" '["user-copy"]' "its search step boots only user-copy"
is "$(db "SELECT group_concat(DISTINCT name) FROM test_results WHERE candidate_id = $search AND name IN ('user-copy','tip-known','badptr')")" \
	"user-copy" "... and runs no other guest test"
confirm=$(db "SELECT candidate_id FROM bisection_steps WHERE bisection_id = $bid AND kind = 'confirm' ORDER BY id LIMIT 1")
is "$(db "SELECT COUNT(DISTINCT name) FROM test_results WHERE candidate_id = $confirm AND name IN ('user-copy','tip-known','badptr')")" 3 \
	"the confirmation runs the whole set"
like "$(db "SELECT evidence FROM flags WHERE patch_id = 1")" "user-copy" "the culprit's evidence names the regressing test"
# the author's mail: the regressing test named, its console lines quoted
# (the confirmation's boot: from its begin marker to its end marker)
mail=$(db "SELECT headers_and_body FROM mail WHERE patch_id = 1 ORDER BY id DESC LIMIT 1" | tr -d '\r')
like "$mail" "regression tests fail from this patch on: user-copy" "the culprit's mail names the regressing test"
like "$mail" "Log of the failing test, user-copy:" "... and quotes its log"
like "$mail" "@@stableq end user-copy " "... its lines of the console, to its end marker"
diag "$(grep -h 'booting\|results in\|tip\|only the steering' "$T/c1.log" "$T/bisect.log")"
done_testing
