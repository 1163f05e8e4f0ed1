#!/bin/bash
# 16-bad-input-san.t: the bad-input battery of 15-bad-input.t once more,
# against the sanitized binary (var/san/stableq: ASan+UBSan, built by
# `make check` beside ./stableq): every error path of intake runs under the
# sanitizers, and none of them reports.
. "$(dirname "$0")/../lib/tap.sh"
set -u
SAN=$TOP/var/san/stableq
L=$(mktemp -d)
trap 'rm -rf "$L"' EXIT
if [ ! -x "$SAN" ]; then
	ok 1 "the sanitized binary is built ($SAN: make var/san/stableq)"
	done_testing
	exit
fi
ok 0 "the sanitized binary is built"
out=$(STABLEQ=$SAN ASAN_OPTIONS=log_path=$L/asan \
	UBSAN_OPTIONS=log_path=$L/ubsan:print_stacktrace=1 \
	bash "$TOP/tests/1-intake/15-bad-input.t" 2>&1)
rc=$?
printf '%s\n' "$out" | sed 's/^/#   /'
ok $rc "15-bad-input.t passes against $SAN"
like "$out" "1..$(printf '%s\n' "$out" | grep -c '^ok ')" "... every one of its tests ok"
reports=$(ls "$L")
is "$reports" "" "no sanitizer report"
for r in $reports; do sed 's/^/# /' "$L/$r"; done
done_testing
