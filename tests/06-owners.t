#!/bin/bash
# 06-owners.t: one owner per table. sql/OWNERS names, for each table, the
# .c files (by basename) that may name it in SQL; SQL anywhere else that
# reads or writes it (FROM/JOIN/INTO/UPDATE/DELETE FROM <table>) fails
# here. The references not moved to their owner yet are listed as
# "pending" in OWNERS: TODO tests, and a pending line that no longer
# happens fails, so that the list only shrinks.
. "$(dirname "$0")/lib/tap.sh"
set -u
cd "$TOP"

out=$(/usr/bin/python3 tests/lib/sql_owners.py "$TOP")
ok $? "sql_owners.py reads the sources and sql/OWNERS"
n=$(grep -c '^refs ' <<<"$out")
ok $([ "$n" -gt 50 ]; echo $?) "it finds the SQL table references of the sources ($n)"
is "$(grep '^unowned ' <<<"$out")" "" "every table of sql/ has an owner in sql/OWNERS"
for t in $(awk '!/^#/ && NF && $1 != "pending" {print $1}' sql/OWNERS); do
	is "$(grep "^bad $t " <<<"$out" | cut -d' ' -f3 | tr '\n' ' ')" "" \
		"$t: SQL only in $(awk -v t="$t" '$1 == t {$1 = ""; print substr($0, 2)}' sql/OWNERS)"
done
while read -r _ t f; do
	T_N=$((T_N + 1))
	echo "not ok $T_N - $f names $t in SQL # TODO pending in sql/OWNERS: move it to its owner"
done < <(grep '^todo ' <<<"$out")
is "$(grep '^stale ' <<<"$out" | cut -d' ' -f2- | tr '\n' ';')" "" "no pending line in sql/OWNERS is done already (remove those)"

# The check can fail: a copy whose daemon file reads patches, and whose
# OWNERS has a pending line that no longer happens, is caught twice.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/sql" "$T/daemon"
cp sql/*.sql "$T/sql/"
{ grep -v '^pending' sql/OWNERS; echo "pending tokens cmd-gone.c"; } > "$T/sql/OWNERS"
printf 'int f(void) { return q("SELECT id FROM"\n\t" patches WHERE x = ?"); }\n' > "$T/daemon/api-bad.c"
printf 'int g(void) { return q("SELECT 1 FROM tokens"); }\n' > "$T/daemon/token.c"
(cd "$T" && git init -q && git add -A)
bad=$(/usr/bin/python3 tests/lib/sql_owners.py "$T")
like "$bad" "bad patches api-bad.c" "a file that is not an owner naming patches (the SQL split over two literals) is caught"
like "$bad" "stale tokens cmd-gone.c" "... and a pending line that no longer happens"
is "$(grep -c '^bad tokens' <<<"$bad")" 0 "... while the owner of tokens may name it"
done_testing
