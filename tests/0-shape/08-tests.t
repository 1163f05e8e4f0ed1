#!/bin/bash
# 08-tests.t: tests/ explains itself: tests/README names every family
# folder, each integration test stands in the folder of its number's tens
# digit and says what it tests in its first lines, no two tests share a
# number, unit tests and their headers are in tests/unit/, helpers in
# tests/lib/, and tests/ holds fewer than 50 entries.
. "$(dirname "$0")/../lib/tap.sh"
set -u
cd "$TOP"

files=$(git ls-files 'tests/*.t' 'tests/*.c' 'tests/*.h' 'tests/*.py' 'tests/*.mjs' | grep -v '^tests/fixtures/')
# every integration test: tests/N-family/NN-name.t, N its tens digit
bad=
for f in $(grep '\.t$' <<<"$files"); do
	case "$f" in
	tests/[0-9]-*/[0-9][0-9]-*.t)
		d=${f#tests/}
		[ "${d:0:1}" = "$(basename "$f" | cut -c1)" ] || bad+="$f "
		;;
	*) bad+="$f " ;;
	esac
done
is "$bad" "" "every integration test is tests/N-family/NN-name.t, in its tens' folder"
dups=$(grep '\.t$' <<<"$files" | xargs -n1 basename | cut -d- -f1 | sort | uniq -d | tr '\n' ' ')
is "$dups" "" "no two tests share a number"
fams=$(ls -d tests/[0-9]-*/ | xargs -n1 basename)
missing=
for d in $fams; do grep -q "^  $d " tests/README || missing+="$d "; done
is "$missing" "" "tests/README describes every family folder ($(echo $fams | tr '\n' ' '))"
nosay=
for f in $(grep '\.t$' <<<"$files"); do
	head -n 3 "$f" | grep -qF "$(basename "$f"):" || nosay+="$f "
done
is "$nosay" "" "each test says what it tests near its top, after its name"
is "$(grep -E '\.(c|h)$' <<<"$files" | grep -v '^tests/unit/' | tr '\n' ' ')" "" "C unit tests and their headers are in tests/unit/"
is "$(grep -E '\.(py|mjs)$' <<<"$files" | grep -v '^tests/lib/' | tr '\n' ' ')" "" "the tests' helpers are in tests/lib/"
n=$(git ls-files tests | cut -d/ -f2 | sort -u | wc -l)
ok $([ "$n" -lt 50 ]; echo $?) "tests/ holds $n entries in git (fewer than 50)"

done_testing
