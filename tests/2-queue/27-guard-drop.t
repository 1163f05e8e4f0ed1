#!/bin/bash
# 27-guard-drop.t: fixes that drop an `if (COND)` guard and dedent the
# statement it guarded are queued, never released as "already in the tree"
# (issue 34, item 2: 12 of 20 such fixes built on 6.1.192 code came out
# released, "every line it adds is in the tree already"). Each applies
# cleanly at its place, where the lines it removes stand: applying it would
# change the tree. Made from real code: files of the 6.1 tree at var/linux
# when it is there, and always tests/fixtures/evidence/guards.c (our own).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
set -u
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

FILES="kernel/fork.c mm/memory.c net/ipv4/tcp.c fs/namei.c drivers/base/core.c"
mkdir -p "$T/linux/own"
cp "$TOP/tests/fixtures/evidence/guards.c" "$T/linux/own/guards.c"
real=
for f in $FILES; do
	[ -r "$TOP/var/linux/$f" ] || continue
	mkdir -p "$T/linux/$(dirname "$f")"
	cp "$TOP/var/linux/$f" "$T/linux/$f"
	real="$real $f"
done
[ -n "$real" ] || diag "var/linux is not there: only own/guards.c"
G init -q "$T/linux"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\n' > Makefile
G add -A && G commit -qm "Linux 6.1.192" && G tag v6.1.192 && G branch -q linux-6.1.y
ok $? "a 6.1.192 tree of real C files:${real:- none} and own/guards.c"

cat > "$T/changelog" <<'EOF'
linux (6.1.192-1) bookworm-security; urgency=high

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.192
    - nothing: a release that lists none of these

 -- Jane Maintainer <jane@example.org>  Mon, 13 Jan 2026 10:00:00 +0100
EOF

# guards FILE MAX: the line numbers of `if (COND)` guards of one statement
# (one tab deeper, then a line no deeper that is no `else`), 12 or more
# lines apart, at most MAX spread over the file
guards() {
	awk -v max="$2" '
	function ind(s) { match(s, /^\t*/); return RLENGTH }
	{ l[NR] = $0 }
	END {
		for (i = 1; i + 2 <= NR; i++) {
			a = ind(l[i])
			if (a == 0 || l[i] !~ /^\t+if \(.*\)$/) continue
			if (ind(l[i+1]) != a + 1 || l[i+1] !~ /;$/ || l[i+1] ~ /^\t+(return|goto|break)/) continue
			if (ind(l[i+2]) > a || substr(l[i+2], a + 1, 4) == "else") continue
			if (n && i - c[n] < 12) continue
			c[++n] = i
		}
		step = n > max ? n / max : 1
		for (k = 1; k <= n && m < max; k += step) { print c[int(k)]; m++ }
	}' "$1"
}
mkdir -p "$T/q"
n=0
for f in own/guards.c $real; do
	max=4
	[ "$f" = own/guards.c ] && max=8
	for at in $(guards "$f" $max); do
		n=$((n + 1))
		name=$(printf 'guard-%02d' $n)
		# drop the guard, dedent the statement
		sed "${at}d;$((at + 1))s/^\t//" "$f" > "$T/new"
		{
			printf 'From: Jane Dev <jane@example.org>\nDate: Mon, 1 Sep 2025 10:00:%02d +0000\n' $((n % 60))
			printf 'Subject: [PATCH 6.1] %s: always do it (%s:%s)\n' "${f%%/*}" "$f" "$at"
			printf 'Message-Id: <%s.%d@example.org>\n\n' "$name" $$
			printf 'The guard is wrong: do it every time.\n\nCc: stable@vger.kernel.org # 6.1.x\n'
			printf 'Signed-off-by: Jane Dev <jane@example.org>\n---\n'
			diff -u --label "a/$f" --label "b/$f" "$f" "$T/new"
		} > "$T/q/$name.patch"
		echo "$name.patch" >> "$T/q/series"
	done
done
cd "$T"
verdicts_conf
[ "$n" -ge 8 ]
ok $? "$n guard-dropping fixes made from the tree's code"
out=$(SQ import "$T/q" 2>&1)
ok $? "imported" || diag "$out"
is "$(q "SELECT COUNT(*) FROM patches WHERE state = 'released'")" 0 "none is released as already in the tree"
q "SELECT filename || ': ' || state_reason FROM patches WHERE state = 'released'" | head -3 | while read -r l; do diag "$l"; done
is "$(q "SELECT COUNT(*) FROM verdicts WHERE check_name = 'applies' AND result = 'already-applied'")" 0 "... no applies verdict says already-applied"
is "$(q "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" "$n" "every one is queued"
is "$(q "SELECT COUNT(DISTINCT patch_id) FROM verdicts WHERE check_name = 'applies' AND result = 'clean'")" "$n" "... each applies cleanly on the branch and the patches before it"

# the same fixes once in the tree: each comes out in reverse, released
cd "$T/linux"
for p in $(cat "$T/q/series"); do G apply "$T/q/$p" || break; done
G commit -qam "Linux 6.1.193: the guards dropped" && G tag v6.1.193 &&
	printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 193\n' > Makefile &&
	G commit -qam "6.1.193" && G branch -qf linux-6.1.y
ok $? "a tree with every fix in it"
cd "$T"
rm -f "$T/stableq.db"*
out=$(SQ import "$T/q" 2>&1)
ok $? "imported again, into a new store" || diag "$out"
is "$(q "SELECT COUNT(*) FROM patches WHERE state = 'released'")" "$n" "once in the tree, every one is released"
like "$(q "SELECT state_reason FROM patches LIMIT 1")" "the diff applies in reverse" "... the diff applying in reverse says so"
done_testing
