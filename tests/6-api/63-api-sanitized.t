#!/bin/sh
# 63-api-sanitized.t: the API's tests (60-api.t: every route and its bad-input
# battery) once more, against var/san/stableq: the daemon, its steps and the
# CLI built with ASan+UBSan (make unit-check builds it; ./stableq is left as
# it is). A sanitizer report fails the test: 60-api.t reads the daemon's log.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
SAN="$TOP/var/san/stableq"
if [ ! -x "$SAN" ]; then
	echo "not ok 1 - $SAN is missing (make unit-check builds it)"
	echo "1..1"
	exit 1
fi
STABLEQ="$SAN" exec python3 "$TOP/tests/6-api/60-api.t"
