#!/bin/bash
# 37-mail-smtp.t: the outbox delivered to a real SMTP relay on loopback (aiosmtpd).
#
# Patches are rows written with the sqlite3 CLI (as the importer would);
# each mail is enqueued by tests/bin/t-outbox.t's `enqueue` helper (an event
# and compose_notice() in one transaction, as the queue code does); delivery is
# `stableq mail send`. Checked: headers, threading and body as received,
# CRLF and dots on the wire, a relay down then back, a recipient refused,
# an invalid author, kill -9 while the relay stalls in DATA (restart: sent
# once) and while it stalls on QUIT (already recorded as sent).
. "$(dirname "$0")/../lib/tap.sh"
cd "$TOP" || exit 1

PY=/usr/bin/python3 # Debian's, which has aiosmtpd (a pyenv one may not)
SQ=$STABLEQ
ENQ=tests/bin/t-outbox.t

bail() {
	echo "Bail out! $*"
	exit 1
}

# make check has built both; run alone, the helper must match the schema
[ -x "$SQ" ] || make -s stableq >&2 || bail "cannot build stableq"
make -s "$ENQ" >&2 || bail "cannot build $ENQ"
$PY -c 'import aiosmtpd' 2>/dev/null ||
	bail "$PY has no aiosmtpd: make deps (python3-aiosmtpd)"
command -v sqlite3 >/dev/null || bail "no sqlite3 CLI: make deps"

T=$(mktemp -d /tmp/stableq-40.XXXXXX) || bail mktemp
RELAY=
SENDER=
cleanup() {
	[ -n "$SENDER" ] && kill -9 "$SENDER" 2>/dev/null
	[ -n "$RELAY" ] && kill "$RELAY" 2>/dev/null && wait "$RELAY" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
INBOX=$T/inbox
DB=$T/stableq.db
CONF=$T/stableq.conf
PORT=0

start_relay() {
	rm -f "$T/port"
	$PY tests/lib/smtpd.py --dir "$INBOX" --port-file "$T/port" \
		--port "$PORT" --stall-file "$T/stall" \
		--stall-quit-file "$T/stall-quit" 2>"$T/relay.log" &
	RELAY=$!
	for _ in $(seq 100); do
		[ -s "$T/port" ] && break
		kill -0 "$RELAY" 2>/dev/null || break
		sleep 0.1
	done
	[ -s "$T/port" ] || { cat "$T/relay.log" >&2; bail "relay did not start"; }
	PORT=$(cat "$T/port")
}
stop_relay() {
	kill "$RELAY" && wait "$RELAY" 2>/dev/null
	RELAY=
}
sql() { sqlite3 -batch "$DB" "$@"; }
received() { ls "$INBOX"/*.eml 2>/dev/null | wc -l | tr -d ' '; }
# The file(s) in the inbox whose Message-ID is $1 (with <>).
copies() {
	$PY - "$INBOX" "$1" <<'EOF'
import email, email.policy, glob, sys
n = 0
for f in sorted(glob.glob(sys.argv[1] + "/*.eml")):
    m = email.message_from_bytes(open(f, "rb").read(), policy=email.policy.default)
    if m["Message-ID"] == sys.argv[2]:
        print(f)
EOF
}
# Header $2 of message file $1, RFC 2047 decoded and unfolded.
hdr() {
	$PY - "$1" "$2" <<'EOF'
import email, email.policy, sys
m = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)
v = m.get_all(sys.argv[2])
print("\n".join(str(x) for x in v) if v else "(none)")
EOF
}
body() {
	$PY - "$1" <<'EOF'
import email, email.policy, sys
m = email.message_from_bytes(open(sys.argv[1], "rb").read(), policy=email.policy.default)
sys.stdout.write(m.get_content().replace("\r\n", "\n"))
EOF
}
enqueue() { # enqueue PATCH KIND [--what ...]
	"$ENQ" enqueue "$DB" "$CONF" "$@" 2>>"$T/enqueue.log"
}

start_relay
cat >"$CONF" <<EOF
smtp_url = smtp://127.0.0.1:$PORT
mail_from = stableq test <stableq@stableq.test>
mail_cc = stable-list@lists.test, Greg K-H <GREG@kroah.test>
mail_backoff = 30
mail_max_attempts = 3
branch = linux-6.1.y
EOF

# The store, and patches as the importer writes them.
$SQ -c "$CONF" --db "$DB" mail list >/dev/null || bail "cannot create the store"
sql <<'EOF' || bail "cannot insert patches"
INSERT INTO patches (id, queue_pos, subject, subject_prefix, author_name,
  author_email, message_id, in_reply_to, upstream, patch_id, message, diff)
VALUES
 (1, 1, 'net: fix the frobnicator', 'PATCH 6.1 2/3', 'Jürgen Groß',
  'jgross@suse.test', '20240101.abc@kernel.test', 'cover.1@kernel.test',
  '0123456789abcdef0123456789abcdef01234567', 'p1', 'm', 'd'),
 (2, 2, 'mm: do not leak the pages', 'PATCH 6.1', 'Ann Author',
  'ann@example.test', 'mm.2@kernel.test', NULL, NULL, 'p2', 'm', 'd'),
 (3, 3, 'fs: refused recipient', NULL, 'Rex', 'rex@reject.test',
  'fs.3@kernel.test', NULL, NULL, 'p3', 'm', 'd'),
 (4, 4, 'drm: bad author address', NULL, 'Nobody', 'not an address',
  'drm.4@kernel.test', NULL, NULL, 'p4', 'm', 'd'),
 (5, 5, 'Re: [PATCH 6.1] usb: fix the hub', 'PATCH 6.1', 'Una',
  'Una@Example.test', 'usb.5@kernel.test', NULL, NULL, 'p5', 'm', 'd'),
 (6, 6, 'x"' || char(13, 10) || 'Bcc: evil@attacker.test =?UTF-8?Q?=0D=0ABcc:_e@attacker.test?= caf' || char(233), NULL,
  'Evil', 'evil@example.test', 'x.6@kernel.test', NULL, NULL, 'p6', 'm', 'd');
INSERT INTO patch_tags (patch_id, kind, value, extra) VALUES
 (1, 'signed_off_by', 'JGross@SUSE.test', 'Jürgen Groß'),
 (1, 'signed_off_by', 'sasha@kernel.test', 'Sasha Levin'),
 (1, 'signed_off_by', 'greg@kroah.test', 'Greg Kroah-Hartman'),
 (1, 'signed_off_by', 'Sasha@kernel.test', 'Sasha Levin'),
 (2, 'signed_off_by', 'ann@example.test', 'Ann Author');
EOF

# ---- 1. a mail as the relay receives it ----------------------------------
printf '[    1.0] booting\n.\n..\n.leading dot\n[    2.0] FAIL: net-loopback\n' >"$T/log"
printf 'From 1234 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Revert "net: fix the frobnicator"\n\nThis reverts commit 0123.\n---\n net/x.c | 2 +-\n' >"$T/revert"
M1=$(enqueue 1 reverted --what "Your patch was reverted from linux-6.1.y." \
	--why "It breaks the net-loopback test (bisected, confirmed twice)." \
	--log "$T/log" --revert "$T/revert")
is "$M1" 1 "enqueue: mail 1"
out=$($SQ -c "$CONF" --db "$DB" mail send)
st=$?
is "$st" 0 "mail send: exit 0 when everything due went out"
like "$out" "mail 1: sent to jgross@suse.test (patch 1, attempt 1)" "mail send: a line per mail"
is "$(received)" 1 "the relay received one message"
F=$INBOX/0001.eml
ID1=$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = 1")
is "$(sql "SELECT state || ' ' || attempts || ' ' || (sent_at IS NOT NULL) FROM mail WHERE id = 1")" \
	"sent 1 1" "store: sent, one attempt, sent_at set"
is "$(hdr "$F" From)" "stableq test <stableq@stableq.test>" "From"
is "$(hdr "$F" To)" "Jürgen Groß <jgross@suse.test>" "To: the author, name decoded from RFC 2047"
grep -q '^To: =?UTF-8?B?' "$F"
ok $? "To: encoded on the wire"
is "$(hdr "$F" Cc)" "Sasha Levin <sasha@kernel.test>, Greg Kroah-Hartman <greg@kroah.test>, stable-list@lists.test" \
	"Cc: sign-off chain deduplicated, minus the author, plus the list"
is "$(hdr "$F" Subject)" 'Patch "net: fix the frobnicator" has been reverted from the 6.1-stable tree' "Subject: as stable maintainers write it"
is "$(hdr "$F" In-Reply-To)" "<20240101.abc@kernel.test>" "In-Reply-To: the patch's Message-Id"
is "$(hdr "$F" References)" "<cover.1@kernel.test> <20240101.abc@kernel.test>" "References: thread of the patch"
is "$(hdr "$F" Message-ID)" "$ID1" "Message-ID: as stored"
like "$ID1" "@stableq.test>" "Message-ID: in mail_from's domain"
is "$(hdr "$F" Content-Type)" "text/plain; charset=\"UTF-8\"" "Content-Type text/plain UTF-8"
is "$(hdr "$F" Content-Transfer-Encoding)" "8bit" "8bit"
is "$(hdr "$F" MIME-Version)" "1.0" "MIME-Version"
$PY -c 'import email.utils,sys; sys.exit(email.utils.parsedate_to_datetime(sys.argv[1]) is None)' "$(hdr "$F" Date)"
ok $? "Date parses"
$PY - "$F" <<'EOF'
import sys
d = open(sys.argv[1], "rb").read()
lines = d.split(b"\r\n")
sys.exit(0 if b"\n" not in d.replace(b"\r\n", b"") and b"\r" not in d.replace(b"\r\n", b"")
         and all(len(l) <= 998 for l in lines) else 1)
EOF
ok $? "CRLF line ends, lines within 998 octets, on the wire"
B=$(body "$F")
like "$B" "Hello Jürgen Groß," "body: greets the author"
like "$B" $'This is a note to let you know that the patch titled\n\n    net: fix the frobnicator\n\nhas been reverted from the 6.1-stable tree.' "body: the patch titled, and where it stands"
like "$B" "Your patch was reverted from linux-6.1.y." "body: what happened"
like "$B" "It breaks the net-loopback test (bisected, confirmed twice)." "body: why"
like "$B" $'booting\n.\n..\n.leading dot\n[    2.0] FAIL: net-loopback' "body: log excerpt, dot lines intact through SMTP"
like "$B" 'Subject: [PATCH] Revert "net: fix the frobnicator"' "body: the revert inline"
like "$B" $'\n-- \nstableq on ' "body: footer names the instance"
is "$($PY -c 'import json,sys; e=json.load(open(sys.argv[1])); print(e["mail_from"], " ".join(sorted(e["rcpt_tos"])))' "$INBOX/0001.json")" \
	"stableq@stableq.test greg@kroah.test jgross@suse.test sasha@kernel.test stable-list@lists.test" \
	"envelope: sender and each recipient once"

# ---- 2. relay down, then back ------------------------------------------------
stop_relay
M2=$(enqueue 2 dropped --why "Bisection found it.")
M3=$(enqueue 5 flagged --why "A maintainer flagged it.")
before=$(date +%s)
out=$($SQ -c "$CONF" --db "$DB" mail send)
st=$?
is "$st" 1 "relay down: mail send exits 1"
like "$out" "mail $M2: queued, attempt 1 failed" "relay down: says so"
is "$(sql "SELECT state || ' ' || attempts FROM mail WHERE id = $M2")" "queued 1" \
	"relay down: mail stays queued, attempts 1"
like "$(sql "SELECT last_error FROM mail WHERE id = $M2")" "127.0.0.1:$PORT" "relay down: error recorded"
next=$(sql "SELECT next_attempt_at FROM mail WHERE id = $M2")
[ "$next" -ge $((before + 30)) ]
ok $? "relay down: next attempt in the future, after the backoff ($next >= $before + 30)"
is "$(sql "SELECT attempts FROM mail WHERE id = $M3")" 0 "relay down: the pass stops, the next mail is not tried"
like "$($SQ -c "$CONF" --db "$DB" mail list)" "error: smtp://127.0.0.1:$PORT" "mail list shows the error"
is "$($SQ -c "$CONF" --db "$DB" mail list --json --state queued |
	$PY -c 'import json,sys; print(" ".join("%d:%s:%d" % (m["id"], m["state"], m["attempts"]) for m in json.load(sys.stdin)))')" \
	"$M2:queued:1 $M3:queued:0" "mail list --json --state queued"

start_relay # the same port
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "mail $M3: sent" "relay back: the due mail goes out"
is "$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M2")" | wc -l)" 0 \
	"relay back: the mail in backoff waits"
# let the 30 s of backoff pass (on the clock of the store)
sql "UPDATE mail SET next_attempt_at = next_attempt_at - 30 WHERE id = $M2"
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "mail $M2: sent to ann@example.test (patch 2, attempt 2)" "after the backoff: sent"
$SQ -c "$CONF" --db "$DB" mail send >/dev/null
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "nothing sent; 0 due" "a second pass sends nothing"
is "$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M2")" | wc -l)" 1 \
	"relay back: delivered exactly once"
F=$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M2")")
is "$(hdr "$F" Subject)" 'Patch "mm: do not leak the pages" has been dropped from the 6.1-stable queue' "mail 2: Subject"
is "$(hdr "$F" Cc)" "stable-list@lists.test, Greg K-H <GREG@kroah.test>" "mail 2: Cc without the author's own sign-off"

# ---- 3. a recipient refused: that mail waits, the next goes -----------------
M4=$(enqueue 3 held --why "Fix-up of a reverted patch.")
M5=$(enqueue 2 rejected --why "Fixes: target absent.")
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "mail $M4: queued, attempt 1 failed" "refused recipient: queued again"
like "$(sql "SELECT last_error FROM mail WHERE id = $M4")" "550" "refused recipient: the relay's 550 recorded"
like "$out" "mail $M5: sent" "refused recipient: the next mail still goes"

# ---- 4. a malformed author address: reported, never sent --------------------
M6=$(enqueue 4 dropped --why "Broken.")
st=$?
is "$st" 0 "malformed author: enqueue still succeeds"
is "$(sql "SELECT state FROM mail WHERE id = $M6")" invalid "malformed author: state invalid"
like "$(sql "SELECT last_error FROM mail WHERE id = $M6")" "'not an address'" "malformed author: the error names it"
count=$(received)
$SQ -c "$CONF" --db "$DB" mail send >/dev/null
is "$(received)" "$count" "malformed author: nothing sent"
is "$(sql "SELECT attempts FROM mail WHERE id = $M6")" 0 "malformed author: never tried"
like "$($SQ -c "$CONF" --db "$DB" mail list --state invalid)" "author address 'not an address'" \
	"mail list --state invalid shows it"

# ---- 5. kill -9 while the relay stalls in DATA -------------------------------
sql "UPDATE mail SET state = 'failed' WHERE id = $M4" # out of the way
M7=$(enqueue 1 flagged --why "Flagged by a maintainer.")
ID7=$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M7")
touch "$T/stall"
rm -f "$INBOX/stalling"
$SQ -c "$CONF" --db "$DB" mail send >"$T/send.out" 2>&1 &
SENDER=$!
for _ in $(seq 200); do
	[ -e "$INBOX/stalling" ] && break
	sleep 0.1
done
[ -e "$INBOX/stalling" ]
ok $? "the relay stalls in DATA"
is "$(sql "SELECT state || ' ' || attempts FROM mail WHERE id = $M7")" "sending 1" \
	"during DATA the store says sending, attempt 1"
kill -9 "$SENDER"
wait "$SENDER" 2>/dev/null
is "$?" 137 "stableq mail send killed with SIGKILL"
SENDER=
rm -f "$T/stall"
is "$(copies "$ID7" | wc -l)" 0 "the killed transfer delivered nothing"
out=$($SQ -c "$CONF" --db "$DB" mail send)
st=$?
like "$out" "mail $M7: sent to jgross@suse.test (patch 1, attempt 2)" "restart: the mail left 'sending' is delivered"
is "$st" 0 "restart: exit 0"
is "$(copies "$ID7" | wc -l)" 1 "delivered exactly once, not lost"
$SQ -c "$CONF" --db "$DB" mail send >/dev/null
is "$(copies "$ID7" | wc -l)" 1 "and not again"
is "$(sql "SELECT state || ' ' || attempts FROM mail WHERE id = $M7")" "sent 2" "store: sent after 2 attempts"

# ---- 6. the duplicate window ends before QUIT ---------------------------------
# The relay has taken the mail and stalls on QUIT: the store must already
# say 'sent', so a kill -9 now sends nothing twice.
M9=$(enqueue 2 held --why "y")
ID9=$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M9")
touch "$T/stall-quit"
$SQ -c "$CONF" --db "$DB" mail send >"$T/send.out" 2>&1 &
SENDER=$!
for _ in $(seq 200); do
	[ -e "$INBOX/quitting" ] && break
	sleep 0.1
done
[ -e "$INBOX/quitting" ]
ok $? "the relay took the mail and stalls on QUIT"
is "$(sql "SELECT state FROM mail WHERE id = $M9")" sent "the store says sent before QUIT is answered"
kill -9 "$SENDER"
wait "$SENDER" 2>/dev/null
SENDER=
rm -f "$T/stall-quit"
$SQ -c "$CONF" --db "$DB" mail send >/dev/null
is "$(copies "$ID9" | wc -l)" 1 "kill -9 during QUIT: delivered once, not again"
M10=$(enqueue 2 held --why "z")
touch "$T/stall-quit"
t0=$(date +%s)
out=$($SQ -c "$CONF" --db "$DB" mail send)
st=$?
t1=$(date +%s)
rm -f "$T/stall-quit"
like "$out" "mail $M10: sent" "a relay silent after the mail: sent"
# the relay would stall 60 s; SMTP_RESPONSE_TIMEOUT_S (30 s) ends the wait
[ "$st" = 0 ] && [ $((t1 - t0)) -lt 50 ]
ok $? "... and mail send gives up waiting for QUIT's answer (exit $st, $((t1 - t0))s)"

# ---- 6b. one mail per chain of events; hostile subjects stay text ----------
# Patch 5's flag (mail $M3) went out; a drop then a revert of it, before any
# delivery, are one mail: the second amends the first.
M11=$(enqueue 5 dropped --why "Bisection 3 found it.")
M12=$(enqueue 5 reverted --why "Released, then found broken.")
is "$M12" "$M11" "dropped, then reverted before delivery: one mail (amended)"
M13=$(enqueue 6 held --why "Fix-up of a dropped patch.")
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "mail $M11: sent to Una@Example.test (patch 5" "the chain's mail goes out to the author as written"
F=$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M11")")
is "$(echo "$F" | grep -c .)" 1 "... once"
is "$(hdr "$F" Subject)" 'Patch "usb: fix the hub" has been reverted from the 6.1-stable tree' \
	"... its subject: the last event, Re: and [PATCH] stripped"
is "$(hdr "$F" In-Reply-To)" "<usb.5@kernel.test>" "... threaded to the patch"
B=$(body "$F")
like "$B" $'== 1 of 2: dropped ==\n\nYour patch was dropped' "... telling the drop"
like "$B" $'== 2 of 2: reverted ==\n\nYour patch was reverted' "... then the revert"
F=$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M13")")
is "$(hdr "$F" Subject)" 'Patch "x" Bcc: evil@attacker.test =?UTF-8?Q?=0D=0ABcc:_e@attacker.test?= café" is held in the 6.1-stable queue' \
	"hostile subject: decoded by Python's email to the text itself, encoded words not decoded"
is "$(hdr "$F" Bcc)" "(none)" "hostile subject: no Bcc header"
is "$($PY -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1]))["rcpt_tos"])))' "${F%.eml}.json")" \
	"GREG@kroah.test evil@example.test stable-list@lists.test" "hostile subject: nobody else in the envelope"

# ---- 6c. the patch's own branch names the queue, not the config's ----------
# The config's branch is linux-6.1.y; patch 7 is in the 6.12 queue.
sql <<'EOF' || bail "cannot insert the 6.12 patch"
INSERT INTO branches (key, name, version, base_tag) VALUES
 ('6.12', 'linux-6.12.y', '6.12.118', 'v6.12.118');
INSERT INTO patches (id, queue_pos, subject, subject_prefix, author_name,
  author_email, message_id, upstream, patch_id, message, diff, branch_id)
VALUES (7, 7, 'x86: zero the value on a faulting get_user', 'PATCH 6.12',
  'Ada', 'ada@example.test', 'x86.7@kernel.test', NULL, 'p7', 'm', 'd',
  (SELECT id FROM branches WHERE key = '6.12'));
EOF
M14=$(enqueue 7 dropped --why "The bug is not in 6.12.118.")
out=$($SQ -c "$CONF" --db "$DB" mail send)
like "$out" "mail $M14: sent to ada@example.test (patch 7" "a 6.12 patch's mail goes out"
F=$(copies "$(sql "SELECT '<' || message_id || '>' FROM mail WHERE id = $M14")")
is "$(hdr "$F" Subject)" 'Patch "x86: zero the value on a faulting get_user" has been dropped from the 6.12-stable queue' \
	"a 6.12 patch: dropped from the 6.12-stable queue (its branch, not the config's 6.1)"
B=$(body "$F")
like "$B" "stableq patch 7, branch linux-6.12.y" "... its body names linux-6.12.y"
like "$B" "for linux-6.12.y, the revert-first stable queue" "... and so does its signature"

# ---- 7. no relay configured: nothing sent, one log line ---------------------
M8=$(enqueue 2 dropped --why "x")
printf 'mail_from = stableq test <stableq@stableq.test>\n' >"$T/norelay.conf"
err=$($SQ -c "$T/norelay.conf" --db "$DB" mail send 2>&1 >/dev/null)
st=$?
is "$st" 1 "no smtp_url: exit 1, mail waits"
like "$err" "smtp_url is not set: 1 mail(s) stay queued" "no smtp_url: one log line"
is "$(sql "SELECT state || ' ' || attempts FROM mail WHERE id = $M8")" "queued 0" "no smtp_url: untouched"

# The helper is built with ASan+UBSan: it must not have complained.
! grep -q -e Sanitizer -e 'runtime error' "$T/enqueue.log"
ok $? "the enqueue helper ran clean under the sanitizers"

done_testing
