#!/bin/bash
# 46-replies-doc.t: docs/replies.md's example, as written. Its mails
# (```mail blocks) are delivered to a maildir and its commands (```sh
# blocks) run one line at a time with `sh -c`, in the order the page has
# them, with `stableq` on PATH and the store's config/stableq.conf in the
# working directory (the default a maintainer's checkout has). Each command
# must succeed; an output block (``` alone) must be what the command before
# it printed, line by line; the end state must be what the page says.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-46.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib/replies.sh"
DOC="$TOP/docs/replies.md"
replies_tree || exit 1
cd "$T" || exit 1
replies_conf

# patches 1 to 3, one pass each so that their ids are 1, 2, 3
for n in 1 2 3; do
	patch "$n" "p$n@example.org" > "$T/Maildir/new/100$n.p$n.host"
	SQ intake >/dev/null 2>&1
done
is "$(q "SELECT group_concat(id || ':' || state) FROM (SELECT * FROM patches ORDER BY id)")" "1:queued,2:queued,3:queued" "patches 1 to 3 queued"
is "$(q "SELECT message_id FROM patches WHERE id = 3")" p3@example.org "... patch 3 is <p3@example.org>, as the page says"

mkdir -p "$T/config" "$T/bin"
mv "$T/stableq.conf" "$T/config/stableq.conf"
ln -s "$STABLEQ" "$T/bin/stableq"

# the page's fenced blocks, in order: "@@ KIND" opens one ("out" for a bare ```)
awk '/^```/ { if (inb) { inb = 0; print "@@END"; next }
	      inb = 1; k = substr($0, 4); print "@@ " (k == "" ? "out" : k); next }
     inb { print }' "$DOC" > "$T/blocks"
ok $? "the page's blocks read"
is "$(grep -c '^@@ sh$' "$T/blocks") $(grep -c '^@@ mail$' "$T/blocks")" "4 2" "... four blocks of commands, two mails"

kind="" body="" last="" nmail=0 ncmd=0 nout=0
while IFS= read -r line; do
	case "$line" in
	"@@ "*) kind=${line#@@ } body="" ;;
	"@@END")
		case "$kind" in
		mail)
			nmail=$((nmail + 1))
			printf '%s\n' "$body" > "$T/Maildir/new/20$nmail.doc.host"
			;;
		sh)
			while IFS= read -r cmd; do
				[ -n "$cmd" ] || continue
				ncmd=$((ncmd + 1))
				last=$(env -u STABLEQ_NO_DEFAULT_CONFIG PATH="$T/bin:$PATH" sh -c "$cmd" 2>&1)
				ok $? "\$ $cmd" || diag "$last"
			done <<< "$body"
			;;
		out)
			nout=$((nout + 1))
			miss=""
			while IFS= read -r want; do
				case "$last" in *"$want"*) ;; *) miss="$want" ;; esac
			done <<< "$body"
			is "$miss" "" "the output the page shows is what the command printed"
			[ -z "$miss" ] || diag "$last"
			;;
		esac
		kind="" ;;
	*) body=${body:+$body$'\n'}$line ;;
	esac
done < "$T/blocks"
is "$ncmd $nmail $nout" "6 2 1" "six commands run, two mails delivered, one output compared"

is "$(q "SELECT effect FROM reviews WHERE message_id = 'n3@example.org'")" held "the NAK held patch 3"
is "$(q "SELECT effect FROM reviews WHERE message_id = 'w3@example.org'")" withdrawn "... the retraction was recorded beside it"
like "$last" "patch 3 queued by override" "the last command: the maintainer's override"
is "$(q "SELECT state FROM patches WHERE id = 3")" queued "patch 3 queued again, as the page ends"
is "$(q "SELECT count(*) FROM events WHERE subject_kind = 'patch' AND subject_id = 3 AND kind = 'hold'")" 1 "... its retraction in the events (a 'hold' event)"

done_testing
