#!/bin/bash
# 06-owners.t: one owner per table. sql/OWNERS names, for each table, the
# .c files (by basename) that may name it in SQL; SQL anywhere else that
# reads or writes it (FROM/JOIN/INTO/UPDATE/DELETE FROM <table>) fails
# here: other modules call the owner's accessors.
. "$(dirname "$0")/../lib/tap.sh"
set -u
cd "$TOP"

out=$(/usr/bin/python3 tests/lib/sql_owners.py "$TOP")
ok $? "sql_owners.py reads the sources and sql/OWNERS"
n=$(grep -c '^refs ' <<<"$out")
is "$(grep '^refs ' <<<"$out" | cut -d' ' -f2 | sort -u | tr '\n' ' ')" \
	"$(awk '!/^#/ && NF {print $1}' sql/OWNERS | sort | tr '\n' ' ')" \
	"it finds SQL naming every table of sql/OWNERS ($n references): the scanner reads the sources"
is "$(grep '^unowned ' <<<"$out")" "" "every table of sql/ has an owner in sql/OWNERS"
is "$(grep '^unknown ' <<<"$out")" "" "every line of sql/OWNERS names a table of sql/"
for t in $(awk '!/^#/ && NF {print $1}' sql/OWNERS); do
	is "$(grep "^bad $t " <<<"$out" | cut -d' ' -f3 | tr '\n' ' ')" "" \
		"$t: SQL only in $(awk -v t="$t" '$1 == t {$1 = ""; print substr($0, 2)}' sql/OWNERS)"
done

# The check can fail: a copy whose daemon file reads patches, and whose
# OWNERS has a line for a table that does not exist, is caught twice.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/sql" "$T/daemon"
cp sql/*.sql "$T/sql/"
{ cat sql/OWNERS; echo "pending tokens cmd-gone.c"; } > "$T/sql/OWNERS"
printf 'int f(void) { return q("SELECT id FROM"\n\t" patches WHERE x = ?"); }\n' > "$T/daemon/api-bad.c"
printf 'int g(void) { return q("SELECT 1 FROM tokens"); }\n' > "$T/daemon/token.c"
(cd "$T" && git init -q && git add -A)
bad=$(/usr/bin/python3 tests/lib/sql_owners.py "$T")
like "$bad" "bad patches api-bad.c" "a file that is not an owner naming patches (the SQL split over two literals) is caught"
like "$bad" "unknown pending" "... and an OWNERS line for no table (an old 'pending' line)"
is "$(grep -c '^bad tokens' <<<"$bad")" 0 "... while the owner of tokens may name it"
done_testing
