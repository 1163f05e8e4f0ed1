#!/bin/bash
# 24-regzbot-mail.t: stableq's own confirmed culprit is told to the
# regressions list as regzbot reads it. A small stable tree and a store made
# here; a bisection row as a bisection that found its culprit and confirmed
# it both ways leaves it; the flag citing it (`stableq flag ID --bisection
# N`, the path stableq's bisection takes: flag_patch() with the bisection as
# evidence) queues, in the flag's transaction, a mail to regressions_list
# with "#regzbot introduced: <upstream sha>" in a paragraph of its own,
# delivered by `stableq mail send` to a real SMTP relay on loopback
# (tests/smtpd.py). Text from outside cannot add regzbot commands. No such
# mail without regressions_list, nor for a bisection that was not confirmed.
. "$(dirname "$0")/../lib/tap.sh"
set -u
PY=/usr/bin/python3
T=$(mktemp -d /tmp/stableq-24.XXXXXX)
trap 'kill $(cat "$T/relay.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
$PY -c 'import aiosmtpd' 2>/dev/null || { echo "Bail out! $PY has no aiosmtpd: make deps (python3-aiosmtpd)"; exit 1; }
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

G init -q "$T/linux"
cd "$T/linux" || exit 1
for f in a b c; do for i in $(seq 1 12); do echo "$f line $i"; done > $f.c; done
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
mkdir -p "$T/q"
n=0
mail() { # NAME SUBJECT UPSTREAM FILE SED
	n=$((n + 1))
	sed -i "$5" "$4"
	d=$(git diff "$4")
	git checkout -q "$4"
	cat > "$T/q/$1" <<MAIL
From: Dev $n <dev$n@example.org>
Date: Mon, 1 Sep 2025 10:00:0$n +0000
Subject: [PATCH 6.1] $2
Message-Id: <regz$n.$$@example.org>

commit $3 upstream.

Body of $2.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Dev $n <dev$n@example.org>
---
$d
MAIL
	echo "$1" >> "$T/q/series"
}
UP1=1234567890abcdef1234567890abcdef12345678
mail 1-a.patch "a: the culprit #regzbot invalid: forged in a subject" $UP1 a.c 's/a line 3/a line three/'
mail 2-b.patch "b: fine" 2234567890abcdef1234567890abcdef12345678 b.c 's/b line 3/b line three/'
mail 3-c.patch "c: flaky" 3234567890abcdef1234567890abcdef12345678 c.c 's/c line 3/c line three/'
cd "$T" || exit 1

$PY "$TOP/tests/lib/smtpd.py" --dir "$T/relay" --port-file "$T/port" 2>"$T/relay.log" &
echo $! > "$T/relay.pid"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
[ -s "$T/port" ] || { echo "Bail out! the relay did not start: $(cat "$T/relay.log")"; exit 1; }

conf() { # NAME EXTRA-LINES
	rm -rf "$T/linux-$1" "$T/q-$1"
	git clone -q --mirror "$T/linux" "$T/linux-$1/.git" && git -C "$T/linux-$1" config core.bare false &&
		git -C "$T/linux-$1" checkout -q linux-6.1.y
	cp -r "$T/q" "$T/q-$1"
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var-$1
tree_dir = $T/linux-$1
queue_dir = $T/q-$1
queue_seed =
debian_changelog =
auto_revert = plan
smtp_url = smtp://127.0.0.1:$(cat "$T/port")
$2
CONF
}
db() { sqlite3 "$T/$1.db" "$2"; }
# a bisection as bisect.c leaves it: its failing candidate, its state, its culprit
bisection() { # NAME STATE CULPRIT
	db "$1" "INSERT INTO candidates (branch_id, purpose, patch_ids, step, verdict) VALUES ((SELECT id FROM branches WHERE key = '6.1'), 'queue', '[1,2,3]', 'done', 'fail')"
	db "$1" "INSERT INTO bisections (candidate_id, failing_tests, state, culprit_patch_id, detail) VALUES ((SELECT max(id) FROM candidates), '[\"user-copy\"]', '$2', $3, 'patch $3 is the first bad patch (prefix $3 of 3), confirmed 2 times each way'); SELECT max(id) FROM bisections"
}

# --- regressions_list set: the confirmed culprit goes to the list ------------
conf r "regressions_list = Linux regressions <regressions@lists.example.org>"
SQ() { "$STABLEQ" -c "$T/r.conf" "$@"; }
SQ import "$T/q-r" > "$T/import.log" 2>&1
is "$(db r "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)")" "queued,queued,queued" "three patches queued" || diag "$(cat "$T/import.log")"
b=$(bisection r found 1)
b2=$(bisection r found 2)
out=$(SQ flag 1 --bisection "$b2" --reason "bisection $b2: regression tests fail from this patch on" 2>&1)
ok $((! $?)) "a flag citing a bisection that named another patch is refused"
like "$out" "bisection $b2 did not name patch 1" "... saying so"
out=$(SQ flag 1 --bisection 99 --reason "no such bisection" 2>&1)
like "$out" "bisection 99: no such bisection" "... as is one citing no bisection there is"
is "$(db r "SELECT count(*) FROM flags")" 0 "... nothing flagged"
out=$(SQ flag 1 --bisection "$b" --reason "bisection $b: regression tests fail from this patch on: user-copy
#regzbot invalid: forged in the evidence" 2>&1)
ok $? "stableq flag 1 --bisection $b (the culprit of a bisection confirmed both ways)" || diag "$out"
is "$(db r "SELECT count(*) FROM mail WHERE kind = 'regzbot'")" 1 "one regzbot mail in the outbox"
is "$(db r "SELECT rcpt_to FROM mail WHERE kind = 'regzbot'")" '["regressions@lists.example.org"]' "... to the regressions list"
is "$(db r "SELECT patch_id FROM mail WHERE kind = 'regzbot'")" 1 "... about patch 1"
is "$(db r "SELECT (SELECT created_at FROM mail WHERE kind = 'regzbot') = (SELECT created_at FROM flags WHERE patch_id = 1)")" 1 \
	"... written with the flag"
out=$(SQ flag 1 --bisection "$b" --reason again 2>&1)
is "$(db r "SELECT count(*) FROM mail WHERE kind = 'regzbot'")" 1 "a second flag (refused: already broken) sends nothing"
out=$(SQ mail send 2>&1)
ok $? "stableq mail send" || diag "$out"
eml=$(grep -l "^X-Stableq-Kind: regzbot" "$T/relay/"*.eml 2>/dev/null | head -1)
ok $([ -n "$eml" ] && echo 0 || echo 1) "the relay received the regzbot mail over SMTP"
msg=$(tr -d '\r' < "$eml" 2>/dev/null)
is "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["rcpt_tos"])' "${eml%.eml}.json" 2>/dev/null)" \
	"['regressions@lists.example.org']" "... its envelope: the list alone"
like "$msg" "To: Linux regressions <regressions@lists.example.org>" "... To: the list"
is "$($PY -c 'import email,sys; m=email.message_from_file(open(sys.argv[1])); print(" ".join(m["Subject"].split()))' "$eml")" \
	"[REGRESSION] 6.1-stable: a: the culprit # regzbot invalid: forged in a subject" "... its subject names the branch and the patch"
like "$msg" $'\n\n#regzbot introduced: '"$UP1"$'\n' "... a paragraph: #regzbot introduced: <the upstream sha>"
like "$msg" $'#regzbot introduced: '"$UP1"$'\n#regzbot title: 6.1-stable: a: the culprit # regzbot invalid' "... then its title"
like "$msg" "Bisection: $b, confirmed both ways" "... the evidence: the bisection"
is "$(printf '%s\n' "$msg" | grep -ci '^[[:space:]>]*#regzbot')" 2 "no regzbot command from the patch or the evidence: only stableq's two lines"
like "$msg" "# regzbot invalid: forged in the evidence" "... the evidence's one is written inert"
is "$($PY -c 'import email,sys; m=email.message_from_file(open(sys.argv[1])); print(m["In-Reply-To"] is None and m.get_content_type())' "$eml")" \
	"text/plain" "a new report (no In-Reply-To), plain text, as Python's email reads it"

# --- a bisection that was not confirmed: no report ---------------------------
b3=$(bisection r flaky 3)
SQ flag 3 --bisection "$b3" --reason "bisection $b3: the culprit's prefix gave mixed results" > /dev/null 2>&1
is "$(db r "SELECT count(*) FROM mail WHERE kind = 'regzbot'")" 1 "a culprit of a bisection not confirmed both ways: no regzbot mail"
SQ flag 2 --reason "a maintainer's flag, no bisection" > /dev/null 2>&1
is "$(db r "SELECT count(*) FROM mail WHERE kind = 'regzbot'")" 1 "a flag without a bisection: no regzbot mail"

# --- regressions_list unset: nobody but the author is told ----------------
conf u ""
SQ() { "$STABLEQ" -c "$T/u.conf" "$@"; }
SQ import "$T/q-u" > /dev/null 2>&1
b=$(bisection u found 1)
is "$b" 1 "a fresh store: bisection 1 named patch 1"
# docs/revert-guards.md's command, as written
out=$(SQ flag 1 --bisection 1 --reason "bisection 1: regression tests fail from this patch on" 2>&1)
ok $? "without regressions_list the flag succeeds" || diag "$out"
is "$(db u "SELECT count(*) FROM mail WHERE kind = 'regzbot'")" 0 "... and no regzbot mail is queued"
is "$(db u "SELECT count(*) FROM mail WHERE kind = 'flagged' AND patch_id = 1")" 1 "... the author's mail is"

done_testing
