#!/bin/sh
# bench/import.sh: import of a generated 1,000-patch stable-queue directory
# into a fresh database (parsing, dedupe, tags, files, dependencies: one
# transaction). Goal: >= 1,000 patches/s. Prints the figures.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-1000}
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "bench/import: $*" >&2; cat "$T/out" >&2; exit 1; }
mkdir -p "$T/q"
i=1
while [ $i -le $N ]; do
	f=$(printf '%04d-fix-%d.patch' $i $i)
	up=$(printf '%08x%032x' $((i * 7919 + 1048576)) $i)
	cat > "$T/q/$f" <<MAIL
From $up Mon Sep 17 00:00:00 2001
From: Developer $i <dev$i@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1 $i/$N] subsys$((i % 37)): fix the thing number $i
Message-Id: <bench-$i@example.org>

commit $up upstream.

The thing number $i went wrong when the other thing happened first; this
makes it wait for the other thing. A few more words so that the message
looks like a real one, which has a paragraph or two of explanation.

Fixes: $(printf '%012x' $((i * 104729 + 17))) ("subsys: add the thing")
Cc: <stable@vger.kernel.org> # 6.1.x
Reported-by: Reporter <rep@example.org>
Link: https://lore.kernel.org/r/bench-$i@example.org
Signed-off-by: Developer $i <dev$i@example.org>
Signed-off-by: Maintainer <maint@example.org>
---
 drivers/subsys$((i % 37))/file$i.c | 4 +++-
 1 file changed, 3 insertions(+), 1 deletion(-)

diff --git a/drivers/subsys$((i % 37))/file$i.c b/drivers/subsys$((i % 37))/file$i.c
index 1234567..89abcde 100644
--- a/drivers/subsys$((i % 37))/file$i.c
+++ b/drivers/subsys$((i % 37))/file$i.c
@@ -10,7 +10,9 @@ static int thing_$i(struct device *dev)
 {
 	int ret;
 
-	ret = do_thing(dev);
+	ret = wait_other_thing(dev);
+	if (!ret)
+		ret = do_thing(dev);
 	if (ret)
 		return ret;
 	return 0;
MAIL
	echo "$f" >> "$T/q/series"
	i=$((i + 1))
done
cat > "$T/conf" <<CONF
db = $T/bench.db
tree_dir = $T/no-tree
CONF
start=$(date +%s.%N)
"$TOP/stableq" -c "$T/conf" import "$T/q" > "$T/out" 2>&1 || fail "import failed"
end=$(date +%s.%N)
again_start=$(date +%s.%N)
"$TOP/stableq" -c "$T/conf" import "$T/q" > "$T/out2" 2>&1
again_end=$(date +%s.%N)
rows=$(sqlite3 "$T/bench.db" "SELECT COUNT(*) FROM patches")
awk -v s="$start" -v e="$end" -v s2="$again_start" -v e2="$again_end" -v n="$N" -v rows="$rows" 'BEGIN {
	t = e - s; t2 = e2 - s2
	printf "import: %d patches (%d rows) in %.3f s = %.0f patches/s (goal >= 1000)\n", n, rows, t, n / t
	printf "re-import (all duplicates, nothing stored): %.3f s = %.0f patches/s\n", t2, n / t2
}'
