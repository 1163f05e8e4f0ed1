#!/bin/bash
# 07-manual.t: the README is a front door (at most 200 lines) and the manual
# stands beside it: every link of README.md and docs/*.md leads to a file,
# both man pages render with man -l and pass mandoc's lint without a
# warning, stableq.1 has every command of `stableq --help` and
# stableq.conf.5 every key of `stableq config`, and the commands shown run
# as written: the man page's examples, docs/configuration.md's (the
# configuration, `make install` staged, whose files are checked) and the
# README's (the manual, one test at a time).
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T" "$TOP/var/stage"' EXIT
cd "$TOP"
status_before=$(git status --porcelain)

n=$(wc -l < README.md)
ok $([ "$n" -le 200 ]; echo $?) "README.md is at most 200 lines ($n)"

# every relative link [text](path) of the documents names a file
bad=
for f in README.md docs/*.md; do
	for l in $(grep -oE '\]\([^)#]+' "$f" | sed 's/^](//' | grep -v '^[a-z]*:'); do
		[ -e "$(dirname "$f")/$l" ] || bad+="$f: $l "
	done
done
is "$bad" "" "every link of README.md and docs/*.md leads to a file"

# both man pages: rendered, linted, complete
for m in man/stableq.1 man/stableq.conf.5; do
	out=$(MANWIDTH=80 man -l "$m" 2>"$T/err")
	ok $? "man -l $m renders"
	is "$(cat "$T/err")" "" "... without a warning"
	like "$out" "DESCRIPTION" "... with its sections"
	is "$(mandoc -T lint -W warning "$m" 2>&1)" "" "mandoc -T lint: $m has no warning"
done
missing=
for c in $("$STABLEQ" --help | sed -n 's/^  stableq \([a-z-]*\).*/\1/p'); do
	grep -q "^\.It Cm $c\b" man/stableq.1 || missing+="$c "
done
is "$missing" "" "stableq.1 describes every command of stableq --help"
missing=
for k in $("$STABLEQ" --db "$T/keys.db" config | sed -n 's/^\([a-z_]*\) *=.*/\1/p'); do
	grep -q "^\.It Cm $k\b" man/stableq.conf.5 || missing+="$k "
done
is "$missing" "" "stableq.conf.5 describes every key of stableq config"
# ... and that check can fail: a key the page does not have is named
grep -v '^\.It Cm poll_interval' man/stableq.conf.5 > "$T/short.5"
grep -q '^\.It Cm poll_interval\b' "$T/short.5"
is "$?" 1 "... (a page without poll_interval would be caught)"

# the man page's examples, as written, in a directory of their own
mkdir -p "$T/ex/config/queues"
cp -R config/queues/6.1 "$T/ex/config/queues/"
stableq() { "$STABLEQ" --db "$T/ex.db" "$@"; }
while IFS= read -r cmd; do
	out=$(cd "$T/ex" && eval "$cmd" 2>&1)
	ok $? "stableq.1's example runs as written: $cmd" || diag "$out"
done < <(sed -n '/^\.Sh EXAMPLES/,/^\.Sh/p' man/stableq.1 | sed -n 's/^\$ //p')
like "$(cd "$T/ex" && stableq show 2)" "broken" "... and the flagged patch is broken"
unset -f stableq

# docs/configuration.md's commands, as written, from the top
out=$(./stableq config 2>&1)
ok $? "./stableq config runs" || diag "$out"
like "$out" "queue_seed = config/queues/6.1" "... naming the shipped queue"
out=$(make -s install PREFIX=/usr DESTDIR=$PWD/var/stage 2>&1)
ok $? "make install PREFIX=/usr DESTDIR=\$PWD/var/stage" || diag "$out"
S=$TOP/var/stage
for f in usr/bin/stableq usr/share/man/man1/stableq.1 usr/share/man/man5/stableq.conf.5 \
	usr/lib/systemd/system/stableq.service usr/share/stableq/config/stableq.conf \
	usr/share/stableq/config/queues/6.1/series; do
	ok $([ -e "$S/$f" ]; echo $?) "... installs $f"
done
is "$(readlink "$S/usr/share/stableq/var")" "/var/lib/stableq" "... with var/ a link to /var/lib/stableq"
unit=$(cat "$S/usr/lib/systemd/system/stableq.service")
like "$unit" "ExecStart=/usr/bin/stableq -c config/stableq.conf serve -d" "... a unit that starts the installed binary"
like "$unit" "WorkingDirectory=/usr/share/stableq" "... in the installed data directory"
out=$(MANWIDTH=80 man -l "$S/usr/share/man/man5/stableq.conf.5" 2>&1 >/dev/null)
is "$out" "" "... and man renders the installed stableq.conf.5"

# the README's commands, as written
out=$(man -l man/stableq.1 2>&1)
ok $? "man -l man/stableq.1" || diag "$out"
out=$(man -l man/stableq.conf.5 2>&1)
ok $? "man -l man/stableq.conf.5" || diag "$out"
while IFS= read -r cmd; do
	out=$(sh -c "$cmd" 2>&1)
	ok $? "README's test command runs as written: $cmd" || diag "$out"
done < <(sed -n '/^## Testing/,/^## /p' README.md | sed -n 's/^    //p')
is "$(git status --porcelain)" "$status_before" "... and nothing tracked changed"

done_testing
