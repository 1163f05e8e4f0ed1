#!/bin/bash
# 15-bad-input.t: every kind of bad input to `stableq import` gets a one-line
# error naming the file (and line where it helps), a non-zero exit, and no
# change to a real database that already holds patches.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F=$TOP/tests/fixtures/intake
SQ() { "$STABLEQ" --db "$T/db" "$@"; }
snapshot() {
	sqlite3 "$T/db" "SELECT COUNT(*) FROM patches; SELECT COUNT(*) FROM patch_tags;
		SELECT COUNT(*) FROM patch_files; SELECT COUNT(*) FROM sources; SELECT COUNT(*) FROM events;
		SELECT COUNT(*) FROM verdicts; SELECT COUNT(*) FROM mail"
}
SQ import "$F/series-3.mbox" "$F/001-commit-1c109fabbd51-fix-minor-infoleak-in-get-user-ex.patch" > "$T/good.log" 2>&1
ok $? "good input first: an mbox of three and the seed patch as is"
is "$(sqlite3 "$T/db" "SELECT COUNT(*) FROM patches")" 4 "four patches stored"
is "$(sqlite3 "$T/db" "SELECT upstream FROM patches WHERE subject LIKE 'fix minor infoleak%'")" 1c109fabbd51863475cd12ac206bdd249aee35af "the seed's 'commit' line is its upstream SHA"
before=$(snapshot)
# a store whose stable tree is missing: the patches are imported, the checks
# are not run, and the reason is said once
printf 'db = %s\ntree_dir = %s\n' "$T/notree.db" "$T/no-tree" > "$T/notree.conf"
"$STABLEQ" -c "$T/notree.conf" import "$F/series-3.mbox" > "$T/notree.log" 2>&1
ok $? "no tree: the import itself goes through"
is "$(grep -c 'is not there' "$T/notree.log")" 1 "no tree: the checks say why, in one line"
is "$(grep -o 'is not there' "$T/notree.log" | wc -l)" 1 "  and say it once (an error quoting itself doubled it)"

bad() { # DESCRIPTION EXPECTED-SUBSTRING PATH...
	local what=$1 want=$2
	shift 2
	out=$(SQ import "$@" 2>&1)
	rc=$?
	ok $([ $rc -ne 0 ] && echo 0 || echo 1) "$what: non-zero exit"
	like "$out" "$want" "$what: the error says '$want'"
	is "$(echo "$out" | grep -c .)" 1 "$what: one line"
	is "$(snapshot)" "$before" "$what: the database is unchanged"
}
bad "no diff in the mail" "bad-nodiff.patch" "$F/bad-nodiff.patch"
bad "a truncated hunk" "bad-truncated-hunk.patch:" "$F/bad-truncated-hunk.patch"
bad "NUL bytes" "bad-nul.patch" "$F/bad-nul.patch"
bad "a non-UTF-8 header" "bad-header-8bit.patch" "$F/bad-header-8bit.patch"
bad "a Fixes: line with a non-hex SHA" "bad-fixes-nonhex.patch:" "$F/bad-fixes-nonhex.patch"
bad "two patches attached to one mail" "bad-two-attached.patch:23: 2 patches attached to one mail (0001-first.patch, 0002-second.patch)" "$F/bad-two-attached.patch"
# a 20 MB body
{ sed -n '1,/^---$/p' "$F/format-patch-single.patch"; head -c 20000000 /dev/zero | tr '\0' 'x' | fold -w 72; } > "$T/huge.patch"
bad "a 20 MB body" "huge.patch" "$T/huge.patch"
# a good file next to a bad one: nothing of the good one is stored either
bad "a good patch with a bad one" "bad-nodiff.patch" "$F/stable-backport.patch" "$F/bad-nodiff.patch"

# hostile text quoted in an error reaches the terminal in caret form
printf 'Subject: x\n\nFixes: \033[2Jdeadbeef\n---\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n+b\n' > "$T/esc.patch"
bad "an ESC in a Fixes: line" "esc.patch:3: Fixes: '^[[2Jdeadbeef' is not a hex SHA" "$T/esc.patch"
is "$(printf '%s' "$out" | grep -c "$(printf '\033')")" 0 "... the message carries no ESC byte"

mkdir -p "$T/q1" "$T/q2" "$T/q3" "$T/empty"
cp "$F/stable-backport.patch" "$T/q1/a.patch"
printf 'a.patch\nmissing.patch\n' > "$T/q1/series"
bad "a series line naming a missing file" "missing.patch" "$T/q1"
like "$out" "series:2" "... with the series line"
cp "$F/stable-backport.patch" "$T/q2/a.patch"
printf 'a.patch\n../q1/a.patch\n' > "$T/q2/series"
bad "a series line with ../" "leaves the queue directory" "$T/q2"
printf '/etc/passwd\n' > "$T/q3/series"
bad "a series line with an absolute path" "leaves the queue directory" "$T/q3"
bad "an empty directory" "empty" "$T/empty"
# a copy whose source leaves the tree: the reason names the source
printf 'From: Eve <eve@example.org>\nSubject: [PATCH] lib: copy\n\n---\ndiff --git a/../../../etc/passwd b/lib/copied.c\nsimilarity index 100%%\ncopy from ../../../etc/passwd\ncopy to lib/copied.c\n' > "$T/copy-out.patch"
bad "copy from ../../../etc/passwd" "copy from ../../../etc/passwd: the source leaves the tree" "$T/copy-out.patch"
# a config file that cannot be read: refused with its line, nothing opened
printf 'listen = 127.0.0.1:8080\nno_such_key = 1\n' > "$T/broken.conf"
out=$(STABLEQ_NO_DEFAULT_CONFIG=1 "$STABLEQ" -c "$T/broken.conf" --db "$T/db" import "$F/bad-nodiff.patch" 2>&1)
is "$?" 2 "a broken config file: exit 2"
like "$out" "no_such_key" "... naming the bad key"
is "$(snapshot)" "$before" "... and the database is unchanged"
bad "a path that does not exist" "nothing-here" "$T/nothing-here"
# attached patches are read from their parts
SQ import "$F/attach-format-patch.patch" "$F/attach-signed-base64.patch" > "$T/attach.log" 2>&1
ok $? "patches attached to their mails import (git format-patch --attach; base64 in signed mail)" "$(cat "$T/attach.log")"
is "$(sqlite3 "$T/db" "SELECT COUNT(*) FROM patches WHERE subject IN ('lib: fix line 2', 'net: foo: do not return garbage on the error path')")" 2 "... both stored"
like "$(sqlite3 "$T/db" "SELECT diff FROM patches WHERE subject LIKE 'net: foo:%'")" "return a ? a : -EINVAL;" "... with the decoded diff"
# hostile header text is cleaned on intake: encoded CR/LF one space, ESC and BEL out
SQ import "$F/ctl-headers.patch" > "$T/ctl.log" 2>&1
ok $? "a mail with control characters in its encoded headers imports" "$(cat "$T/ctl.log")"
is "$(sqlite3 "$T/db" "SELECT subject || '|' || author_name FROM patches WHERE author_email = 'eve@example.org'")" \
	"fix it diff --git a/evil b/evil[2J andmore|Eve[31m Evil X" "... subject and name stored as one line without control characters"
# a 400 KB subject and a 2 KB name are cut with a mark, and the import says so
long=$(head -c 409600 /dev/zero | tr '\0' 's')
name=$(head -c 2000 /dev/zero | tr '\0' 'n')
printf 'From: %s <long@example.org>\nSubject: [PATCH] %s\nMessage-Id: <long-subject@example.org>\n\nLong.\n\nSigned-off-by: L <long@example.org>\n---\n--- a/lib/x.c\n+++ b/lib/x.c\n@@ -1 +1 @@\n-a\n+b\n' "$name" "$long" > "$T/long.patch"
out=$(SQ import "$T/long.patch" 2>&1)
ok $? "a patch with a 400 KB subject imports"
like "$out" "long.patch: subject cut to 1000 bytes (was 409600)" "... the import says the subject was cut"
like "$out" "long.patch: author name cut to 1000 bytes (was 2000)" "... and the name"
is "$(sqlite3 "$T/db" "SELECT length(subject) || ' ' || substr(subject, -6) FROM patches WHERE author_email = 'long@example.org'")" "1000  [cut]" "... stored as 1000 bytes ending with the mark"
is "$(sqlite3 "$T/db" "SELECT length(author_name) FROM patches WHERE author_email = 'long@example.org'")" 1000 "... the name too"
ok "$([ "$(sqlite3 "$T/db" "SELECT length(message) FROM patches WHERE author_email = 'long@example.org'")" -lt 2000 ] && echo 0 || echo 1)" "... and the message's subject line"
done_testing
