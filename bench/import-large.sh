#!/bin/sh
# bench/import-large.sh: what a one-patch import costs (the import and the
# checks it runs), in time and memory, into an empty queue, into a queue of
# 300 generated patches, and into a queue holding three huge ones (10,000
# files and 100,000 changed lines in all): each once starting from the
# running tree the last check run kept (issue 23 item 8), and once cold (the
# kept tree forgotten: every queued patch applied first, as before). Prints
# figures; times nothing as a test.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
. "$TOP/bench/lib/patches.sh"
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
fail() { echo "bench/import-large: $*" >&2; cat "$T/out" >&2 2>/dev/null; exit 1; }
export STABLEQ_NO_DEFAULT_CONFIG=1
RUNS=${RUNS:-3}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }

conf() { # NAME TREE
	printf 'db = %s/%s.db\nvar_dir = %s/%s.var\ntree_dir = %s\n' "$T" "$1" "$T" "$1" "$2" > "$T/$1.conf"
}
# one_import NAME PATCH [cold|warm]: "seconds maxrss-KB" of importing PATCH into
# a copy of store NAME (the copy thrown away after), fastest of RUNS
one_import() {
	s= m=
	r=1
	while [ $r -le "$RUNS" ]; do
		cp "$T/$1.db" "$T/run.db"
		[ "${3:-}" = cold ] && sqlite3 "$T/run.db" "DELETE FROM check_prefix"
		sed "s|$T/$1.db|$T/run.db|" "$T/$1.conf" > "$T/run.conf"
		/usr/bin/time -f '%e %M' -o "$T/time" "$TOP/stableq" -c "$T/run.conf" import "$2" > "$T/out" 2>&1 || fail "import of $2 into $1"
		grep -q "imported 1 new patch" "$T/out" || fail "$2 not imported into $1"
		if [ "${3:-}" = cold ]; then
			! grep -q "kept tree" "$T/out" || fail "a cold import used the kept tree"
		elif [ "${3:-}" = warm ]; then
			grep -q "kept tree" "$T/out" || fail "the import into $1 did not start from the kept tree"
		fi
		read -r e k < "$T/time"
		s=$(best "$s" "$e")
		m=$(best "$m" "$k")
		rm -f "$T"/run.db*
		r=$((r + 1))
	done
	echo "$s $m"
}

# --- 300 patches of bench/lib/patches.sh, and a 301st ---------------------
TOPT=$T
bench_queue_and_tree "$T/small" 301 || fail "tree"
T=$TOPT # bench_queue_and_tree sets T
mv "$T/small/q/$(tail -1 "$T/small/q/series")" "$T/small/one.patch"
sed -i '$d' "$T/small/q/series"
conf small "$T/small/linux"
"$TOP/stableq" -c "$T/small.conf" import "$T/small/q" > "$T/out" 2>&1 || fail "import of 300"
grep -q "checked 300: 300 queued" "$T/out" || grep -q "imported 300 new" "$T/out" || fail "300 not imported"
[ "$(sqlite3 "$T/small.db" "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" = 300 ] || fail "not all 300 queued"
conf empty "$T/small/linux"
# the store made, Debian's changelog indexed (once per store), no patch
"$TOP/stableq" -c "$T/empty.conf" check > "$T/out" 2>&1 || fail "empty store"

# --- three huge patches: 10,000 files, 100,000 changed lines --------------
/usr/bin/python3 - "$T/huge" <<'PY'
import os, sys
top = sys.argv[1]
files, per = 10000, 3
os.makedirs(f"{top}/q")
def body(i):
    return [f"/* file {i} line {n} */" for n in range(1, 21)]
for i in range(files + 1):
    d = f"{top}/linux/drivers/huge{i % 100}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i}.c", "w") as f:
        f.write("\n".join(body(i)) + "\n")
with open(f"{top}/linux/Makefile", "w") as f:
    f.write("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n")
def mail(n, subject, ids):
    out = [f"From: Developer <dev{n}@example.org>",
           "Date: Mon, 1 Sep 2025 10:00:00 +0000",
           f"Subject: [PATCH 6.1] huge: {subject}",
           f"Message-Id: <huge-{n}@example.org>", "",
           f"{subject}.", "", "Cc: <stable@vger.kernel.org> # 6.1.x",
           "Signed-off-by: Developer <dev@example.org>", "---"]
    for i in ids:
        p = f"drivers/huge{i % 100}/f{i}.c"
        b = body(i)
        out += [f"diff --git a/{p} b/{p}", f"--- a/{p}", f"+++ b/{p}",
                "@@ -5,11 +5,11 @@"]
        out += [" " + l for l in b[4:7]]
        out += ["-" + l for l in b[7:12]]
        out += ["+" + l.replace("line", "LINE") for l in b[7:12]]
        out += [" " + l for l in b[12:15]]
    return "\n".join(out) + "\n"
series = []
for k in range(per):
    ids = range(k * files // per, (k + 1) * files // per)
    name = f"{k + 1:02d}-huge.patch"
    with open(f"{top}/q/{name}", "w") as f:
        f.write(mail(k + 1, f"change {len(ids)} files", ids))
    series.append(name)
with open(f"{top}/q/series", "w") as f:
    f.write("\n".join(series) + "\n")
with open(f"{top}/one.patch", "w") as f:
    f.write(mail(99, "change one more file", [files]))
PY
(cd "$T/huge/linux" && git init -q && git add -A &&
	git -c user.name=b -c user.email=b@example.org commit -qm "Linux 6.1.192" &&
	git tag v6.1.192 && git branch linux-6.1.y) || fail "huge tree"
conf huge "$T/huge/linux"
/usr/bin/time -f '%e %M' -o "$T/time" "$TOP/stableq" -c "$T/huge.conf" import "$T/huge/q" > "$T/out" 2>&1 || fail "import of the huge patches"
read -r hs hm < "$T/time"
[ "$(sqlite3 "$T/huge.db" "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" = 3 ] || fail "not all 3 huge patches queued"
conf hempty "$T/huge/linux"
"$TOP/stableq" -c "$T/hempty.conf" check > "$T/out" 2>&1 || fail "empty store"

lines=$(cat "$T"/huge/q/*.patch | grep -c '^[-+][^-+]')
set -- $(one_import empty "$T/small/one.patch")
e_s=$1 e_m=$2
set -- $(one_import small "$T/small/one.patch" warm)
w_s=$1 w_m=$2
set -- $(one_import small "$T/small/one.patch" cold)
c_s=$1 c_m=$2
set -- $(one_import hempty "$T/huge/one.patch")
he_s=$1 he_m=$2
set -- $(one_import huge "$T/huge/one.patch" warm)
hw_s=$1 hw_m=$2
set -- $(one_import huge "$T/huge/one.patch" cold)
hc_s=$1 hc_m=$2
awk -v runs="$RUNS" -v lines="$lines" -v hs="$hs" -v hm="$hm" \
	-v es="$e_s" -v em="$e_m" -v ws="$w_s" -v wm="$w_m" -v cs="$c_s" -v cm="$c_m" \
	-v hes="$he_s" -v hem="$he_m" -v hws="$hw_s" -v hwm="$hw_m" -v hcs="$hc_s" -v hcm="$hc_m" 'BEGIN {
	printf "one-patch import (with its checks), fastest of %d runs, max RSS:\n", runs
	printf "  301-file tree, empty queue:                 %6.2f s %7.1f MB\n", es, em / 1024
	printf "  queue of 300, from the kept tree:           %6.2f s %7.1f MB (%.2fx the empty queue)\n", ws, wm / 1024, ws / es
	printf "  queue of 300, cold (all applied first):     %6.2f s %7.1f MB (%.2fx)\n", cs, cm / 1024, cs / es
	printf "  10,001-file tree, empty queue:              %6.2f s %7.1f MB\n", hes, hem / 1024
	printf "  3 huge patches (10,000 files, %d changed lines), from the kept tree: %6.2f s %7.1f MB (%.2fx the empty queue)\n", lines, hws, hwm / 1024, hws / hes
	printf "  3 huge patches, cold (all applied first):   %6.2f s %7.1f MB (%.2fx)\n", hcs, hcm / 1024, hcs / hes
	printf "  (importing the 3 huge patches themselves, once: %.2f s %.1f MB)\n", hs, hm / 1024
}'
