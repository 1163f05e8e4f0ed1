#!/bin/bash
# 34-review-cycle.t: the list's mail read in. A real public-inbox v2 archive
# (public-inbox-init -V2, messages delivered by public-inbox-mda, offline,
# with PI_CONFIG and HOME in the temp dir) and a maildir: a [PATCH 6.1 0/2]
# series imported through the importer, a patch for another branch left
# alone, a second delivery of a message changing nothing, a Reviewed-by in a
# reply added to its patch, a NAK holding its patch with the mail quoted, a
# v2 dropping the v1, a #regzbot report, stableq's own mail ignored, bad mail
# (no Message-Id, broken MIME, HTML only) counted invalid with nothing
# stored, incremental passes, and the daemon holding a patch after a reply
# lands in the maildir.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-57.XXXXXX)
trap 'kill $(cat "$T/daemon.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
command -v public-inbox-mda >/dev/null || { echo "Bail out! no public-inbox: make deps"; exit 1; }

# --- a stable tree: 6.1.10 with lib.c --------------------------------------------
G init -q "$T/linux" && cd "$T/linux" || exit 1
for i in $(seq 1 50); do echo "line $i"; done > lib.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
cd "$T" || exit 1

# patch N PREFIX MSGID [IRT] [UPSTREAM] [MARK]: a mail changing lib.c line 8*N
patch() {
	d=$(cd "$T/linux" && sed -i "s/^line $(($1 * 8))\$/line $(($1 * 8))${6:-!}/" lib.c && git diff && git checkout -q lib.c)
	cat <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:0$1 +0000
Subject: [$2] lib: fix line $1
Message-Id: <$3>
${4:+In-Reply-To: <$4>}
${4:+References: <$4>}

commit ${5:-$(printf '%040d' "$1" | tr 0 a | sed "s/^a/$1/")} upstream.

Fix line $1.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
}
# reply FROM MSGID IRT BODY
reply() {
	cat <<MAIL
From: $1
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 11:00:00 +0000
Subject: Re: lib
Message-Id: <$2>
In-Reply-To: <$3>

> quoted text from the patch; NAK here is quoted and does not count

$4
MAIL
}
cover() { # MSGID PREFIX [IRT]
	cat <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [$2] lib fixes
Message-Id: <$1>
${3:+In-Reply-To: <$3>}
${3:+References: <$3>}

Two fixes for lib.c.
MAIL
}

# --- a public-inbox v2 archive, made by public-inbox's own tools -------------------
export HOME=$T/home PI_CONFIG=$T/home/pi.config
mkdir -p "$HOME"
public-inbox-init -V2 stable "$T/inbox" http://example.com/stable stable@vger.kernel.org >/dev/null 2>&1
ok $? "public-inbox-init -V2: an archive in the temp dir"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
mda() { ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck; }
cover c1@example.org "PATCH 6.1 0/2" | mda &&
	patch 2 "PATCH 6.1 2/2" p2@example.org c1@example.org | mda &&
	patch 1 "PATCH 6.1 1/2" p1@example.org c1@example.org | mda &&
	patch 5 "PATCH 5.10" other@example.org | mda
ok $? "public-inbox-mda: a cover, its two patches (2/2 first) and a 5.10 patch"
is "$(git --git-dir="$T/inbox/git/0.git" rev-list --count HEAD)" 4 "... four commits in epoch 0"

mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
# the list's copy of patch 1 arrives in the maildir too: a second delivery
patch 1 "PATCH 6.1 1/2" p1@example.org c1@example.org > "$T/Maildir/new/1000.p1copy.host"
reply "Rita Reviewer <rita@example.org>" r1@example.org p1@example.org \
	"Looks right.

Reviewed-by: Rita Reviewer <rita@example.org>" > "$T/Maildir/cur/1001.r1.host:2,S"

cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
tree_dir = $T/linux
build_dir = $T/build
queue_dir = $T/queue
queue_seed =
coverage_build_dir = $T/cover
kernel_config_dir = $TOP/config/kernel/6.1/quick
poll_interval = 1
listen = 127.0.0.1:$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
intake_maildir = $T/Maildir
intake_inbox = $T/inbox
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }

# --- the first pass ----------------------------------------------------------------
out=$(SQ intake 2>&1)
ok $? "stableq intake"
like "$out" "intake: 6 messages read (0 seen before): 2 patches in 1 series" "... 6 read, one series of two patches"
like "$out" "1 trailers" "... a trailer from a reply"
is "$(q "SELECT group_concat(subject_prefix || '|' || subject, ';') FROM (SELECT * FROM patches ORDER BY queue_pos)")" \
	"PATCH 6.1 1/2|lib: fix line 1;PATCH 6.1 2/2|lib: fix line 2" "the series in n/m order, though 2/2 came first"
is "$(q "SELECT kind FROM sources WHERE id = (SELECT source_id FROM patches WHERE id = 1)")" api "imported through the importer (one source row)"
is "$(q "SELECT count(*) FROM patches WHERE subject LIKE '%line 5%'")" 0 "the 5.10 patch is not for a configured branch: left alone"
is "$(q "SELECT kind || ':' || coalesce(error, '') FROM mail_messages WHERE message_id = 'other@example.org'")" \
	"ignored:not for a configured branch" "... recorded as ignored, saying why"
is "$(q "SELECT value FROM patch_tags WHERE patch_id = 1 AND kind = 'reviewed_by'")" rita@example.org "Reviewed-by from the reply is a tag of patch 1"
is "$(q "SELECT kind || ':' || patch_id FROM mail_messages WHERE message_id = 'c1@example.org'")" cover:1 "the cover letter is recorded with its series"

out=$(SQ intake 2>&1)
like "$out" "intake: 0 messages read" "a second pass reads nothing new"
is "$(q "SELECT count(*) FROM patches")" 2 "... and stores nothing"

# --- a NAK in a reply holds the patch ------------------------------------------------
SQ check >/dev/null 2>&1
st2=$(q "SELECT state FROM patches WHERE id = 2")
reply "Nina Nak <nina@example.org>" n1@example.org p2@example.org \
	"This breaks the frobnicator on my box, $(printf '\033[31m')red.
NAK" > "$T/Maildir/new/1002.n1.host"
# a copy of the same NAK: the same Message-Id, nothing twice
cp "$T/Maildir/new/1002.n1.host" "$T/Maildir/new/1003.n1copy.host"
out=$(SQ intake 2>&1)
like "$out" "1 held" "a NAK in a reply to patch 2: held ($st2 before)"
like "$out" "(1 seen before)" "... its copy seen before"
is "$(q "SELECT state FROM patches WHERE id = 2")" held "patch 2 is held"
reason=$(q "SELECT state_reason FROM patches WHERE id = 2")
like "$reason" "NAK in a reply from Nina Nak <nina@example.org> (Message-Id <n1@example.org>)" "the reason names the reply"
like "$reason" "> This breaks the frobnicator on my box, [31mred." "... and quotes it, its ESC dropped"
case "$reason" in *$'\033'*) ok 1 "no ESC in the reason" ;; *) ok 0 "no ESC in the reason" ;; esac
case "$reason" in *"quoted text"*) ok 1 "the quoted lines of the reply are not quoted back" ;; *) ok 0 "the quoted lines of the reply are not quoted back" ;; esac
is "$(q "SELECT state FROM patches WHERE id = 1")" "$(q "SELECT state FROM patches WHERE id = 1")" "patch 1 untouched"
SQ override 2 --reason "the NAK was about another box" >/dev/null 2>&1
is "$(q "SELECT state FROM patches WHERE id = 2")" queued "the maintainer decides: override queues it"

# --- stableq's own mail is never acted on -------------------------------------------
reply "stableq <stableq@localhost>" own1@example.org p1@example.org "NAK" > "$T/Maildir/new/1004.own.host"
out=$(SQ intake 2>&1)
like "$out" "1 ignored" "stableq's own mail (its From) is ignored"
is "$(q "SELECT kind || ':' || error FROM mail_messages WHERE message_id = 'own1@example.org'")" "ignored:stableq's own mail" "... and recorded so"
is "$(q "SELECT state FROM patches WHERE id = 1")" "$(q "SELECT state FROM patches WHERE id = 1 AND state != 'held'")" "... patch 1 not held"

# --- a regression report names the upstream commit ----------------------------------
up1=$(q "SELECT upstream FROM patches WHERE id = 1")
cat > "$T/Maildir/new/1005.reg.host" <<MAIL
From: Reg Reporter <reg@example.org>
Subject: lib: line 1 is broken since 6.1.11
Message-Id: <reg1@example.org>

The box stopped booting.

#regzbot introduced: ${up1:0:12}
MAIL
out=$(SQ intake 2>&1)
is "$(q "SELECT state FROM patches WHERE id = 1")" held "#regzbot introduced: <upstream> holds that patch (no thread needed)"
like "$(q "SELECT state_reason FROM patches WHERE id = 1")" "regression reported in a reply from Reg Reporter" "... saying so"
SQ override 1 --reason "not this patch" >/dev/null 2>&1

# --- a v2 of the series, sent in the v1's thread, supersedes the v1 --------------------
cover c2@example.org "PATCH v2 6.1 0/2" c1@example.org | mda &&
	patch 1 "PATCH v2 6.1 1/2" q1@example.org c2@example.org "" "!!" | mda &&
	patch 3 "PATCH v2 6.1 2/2" q2@example.org c2@example.org | mda
out=$(SQ intake 2>&1)
like "$out" "1 superseded" "v2: the v1 patch it replaces is dropped (2/2 changed subject: kept)"
is "$(q "SELECT state FROM patches WHERE id = 1")" dropped "v1's 1/2 dropped"
like "$(q "SELECT state_reason FROM patches WHERE id = 1")" "superseded by v2 of the series" "... saying by what"

# --- bad mail -----------------------------------------------------------------------
printf 'From: x@example.org\nSubject: [PATCH 6.1] no id\n\nbody\n' > "$T/Maildir/new/1006.noid.host"
cat > "$T/Maildir/new/1007.mime.host" <<'MAIL'
From: Broken <b@example.org>
Subject: [PATCH 6.1] broken mime
Message-Id: <mime1@example.org>
Content-Type: multipart/mixed

no boundary here
MAIL
cat > "$T/Maildir/new/1008.html.host" <<'MAIL'
From: Html <h@example.org>
Subject: Re: [PATCH 6.1 1/2] lib: fix line 1
Message-Id: <html1@example.org>
In-Reply-To: <q1@example.org>
Content-Type: text/html

<html><body><b>NAK</b><script>alert(1)</script></body></html>
MAIL
# delivered a while ago: a young file that does not parse is read again
# (a writer may still be writing it; 41-intake-durable shows it)
touch -d '2 minutes ago' "$T/Maildir/new/1006.noid.host" "$T/Maildir/new/1007.mime.host" "$T/Maildir/new/1008.html.host"
before=$(q "SELECT count(*) FROM patches")
out=$(SQ intake 2>&1)
ok $? "intake with bad mail in the maildir still succeeds"
like "$out" "2 invalid" "no Message-Id and broken MIME: 2 invalid"
like "$out" "no Message-Id header" "... each named with what was wrong"
like "$out" "boundary" "... the MIME one too"
is "$(q "SELECT count(*) FROM patches")" "$before" "... nothing of them stored"
ls "$T/Maildir/new/1006.noid.host" "$T/Maildir/new/1007.mime.host" >/dev/null 2>&1
ok $? "... and the files stay where they are"

# --- the daemon: a reply landing in the maildir holds its patch -----------------------
q3=$(q "SELECT id FROM patches WHERE message_id = 'q2@example.org'")
SQ check >/dev/null 2>&1
"$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
sleep 1
reply "Dora Dropper <dora@example.org>" d1@example.org q2@example.org "Please drop this one, it needs a prerequisite." > "$T/Maildir/tmp/1009.d1.host"
mv "$T/Maildir/tmp/1009.d1.host" "$T/Maildir/new/"
for _ in $(seq 60); do
	[ "$(q "SELECT state FROM patches WHERE id = $q3")" = held ] && break
	sleep 0.5
done
is "$(q "SELECT state FROM patches WHERE id = $q3")" held "the daemon: a drop request in the maildir holds the patch"
like "$(grep -m1 'step mail intake' "$T/daemon.log")" "started" "... through its mail intake step"
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null

# --- the -rc review cycle: out over SMTP, replies in, release refused then allowed ------
PY=/usr/bin/python3
$PY "$TOP/tests/lib/smtpd.py" --dir "$T/relay" --port-file "$T/port" 2>"$T/relay.log" &
echo $! > "$T/relay.pid"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
trap 'kill $(cat "$T/daemon.pid" "$T/relay.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
cat >> "$T/stableq.conf" <<CONF
smtp_url = smtp://127.0.0.1:$(cat "$T/port")
rc_list = Stable list <stable@vger.kernel.org>
rc_window = 20
auto_revert = propose
revert_grace = 20
CONF
# the live patches are queued for the rc (the maintainer's call after the NAKs)
for id in $(q "SELECT id FROM patches WHERE state IN ('checked','held') ORDER BY id"); do
	SQ override "$id" --reason "reviewed" >/dev/null 2>&1
done
nq=$(q "SELECT count(*) FROM patches WHERE state = 'queued'")
# the window is 20 s, so that "still open" holds on a loaded machine (make
# check runs kernel builds beside this test); "closed" is waited for by the
# rc's own deadline
wait_window() { # RC_ID: until its review window has closed
	local d
	d=$(q "SELECT deadline FROM rcs WHERE id = $1")
	while [ "$(date +%s)" -le "${d:-0}" ]; do sleep 0.5; done
}
out=$(SQ rc 2>&1)
ok $? "stableq rc"
like "$out" "rc 1: 6.1.11-rc1 (open), $nq patches, window open" "... 6.1.11-rc1 of the $nq queued patches, its window open"
out=$(SQ release 2>&1)
ok $((! $?)) "stableq release refuses while the window is open"
like "$out" "the review window of 6.1.11-rc1 is open until" "... naming why"
SQ mail send > "$T/send.log" 2>&1
ls "$T/relay/"*.eml > "$T/sent" 2>/dev/null
is "$(wc -l < "$T/sent")" $((nq + 1)) "the cover and $nq patch mails went over SMTP"
cover=$(grep -l "^Subject: \[PATCH 6.1 00/$nq\] 6.1.11-rc1 review" "$T/relay/"*.eml)
ok $? "the cover: [PATCH 6.1 00/$nq] 6.1.11-rc1 review"
cid=$(sed -n 's/^Message-ID: <\(.*\)>\r$/\1/p' "$cover")
like "$(cat "$cover")" "This is the start of the stable review cycle for the 6.1.11 release." "... the version"
like "$(cat "$cover")" "Responses should be made by " "... the deadline"
like "$(cat "$cover")" "Jane Dev <jane@example.org>" "... the patches by author"
like "$(cat "$cover")" " lib.c    | " "... a diffstat (git diff --stat's: the Makefile bump beside lib.c)"
like "$(cat "$cover")" "The patches are in this thread" "... where to fetch it (no rc_git_url, no public_url: the thread)"
p2=$(grep -l "^Subject: \[PATCH 6.1 02/$nq\]" "$T/relay/"*.eml)
ok $? "patch mails numbered: [PATCH 6.1 02/$nq] ..."
like "$(cat "$p2")" "In-Reply-To: <$cid>" "... threaded: In-Reply-To the cover"
like "$(cat "$p2")" "6.1-stable review patch.  If anyone has any objections, please let me know." "... the stable review note"
p2id=$(sed -n 's/^Message-ID: <\(.*\)>\r$/\1/p' "$p2")
held_id=$(q "SELECT patch_id FROM rc_patches WHERE message_id = '$p2id'")

# the list sends them back: they land in the archive, stableq knows its own
for f in $(cat "$T/sent"); do tr -d '\r' < "$f" | mda; done
reply "Tom Tester <tom@example.org>" t1@example.org "$cid" "Built and booted on x86_64, no regressions.

Tested-by: Tom Tester <tom@example.org>" > "$T/Maildir/new/2001.t1.host"
reply "Nina Nak <nina@example.org>" n2@example.org "$p2id" "NAK: this one breaks my laptop's suspend." > "$T/Maildir/new/2002.n2.host"
out=$(SQ intake 2>&1)
like "$out" "$((nq + 1)) ignored" "the rc's own mails back from the list: ignored"
like "$out" "1 tested" "a Tested-by on the cover"
is "$(SQ rc --show --json | $PY -c 'import json,sys; print(json.load(sys.stdin)["tested"][0]["tester"])')" tom@example.org "... recorded for the rc"
is "$(q "SELECT state FROM patches WHERE id = $held_id")" held "a NAK on an rc patch mail holds the patch"
wait_window 1
out=$(SQ release --force 2>&1)
ok $((! $?)) "after the window, release still refuses: a patch of the rc is held"
like "$out" "patch $held_id (" "... naming the patch"
out=$(SQ rc 2>&1)
like "$out" "rc 2: 6.1.11-rc2 (open), $((nq - 1)) patches" "stableq rc again: 6.1.11-rc2 without the held patch"
is "$(q "SELECT count(*) FROM rc_patches WHERE rc_id = 2 AND patch_id = $held_id")" 0 "... the held patch left it"
is "$(q "SELECT state FROM rcs WHERE id = 1")" superseded "... rc1 superseded"
out=$(SQ release --force 2>&1)
ok $((! $?)) "rc2's window open: release refused"
wait_window 2
out=$(SQ release --force 2>&1)
ok $? "after rc2's window: release allowed"
is "$(q "SELECT count(*) FROM patches WHERE state = 'released'")" $((nq - 1)) "... the rc2's patches released"
is "$(q "SELECT state FROM rcs WHERE id = 2")" released "... and rc2 with them"

# --- guarded reverts: proposed to the author, stopped by a reply, carried out after the grace ---
patch 5 "PATCH 6.1" r5@example.org "" "" > "$T/Maildir/new/3001.r5.host"
patch 6 "PATCH 6.1" r6@example.org "" "" > "$T/Maildir/new/3002.r6.host"
{ patch 4 "PATCH 6.1" r4@example.org "" "" | sed 's/^Signed-off-by: Jane/Stable-no-autorevert: the test is known flaky on this driver\nSigned-off-by: Jane/'; } > "$T/Maildir/new/3003.r4.host"
out=$(SQ intake 2>&1)
ok $? "intake: three more patches" || diag "$out"
like "$out" "3 patches in 3 series" "... all three stored" || diag "$out"
a=$(q "SELECT id FROM patches WHERE message_id = 'r5@example.org'")
b=$(q "SELECT id FROM patches WHERE message_id = 'r6@example.org'")
c=$(q "SELECT id FROM patches WHERE message_id = 'r4@example.org'")
SQ flag "$c" --reason "boot test user-copy fails with it" >/dev/null 2>&1
out=$(SQ revert "$c" --auto 2>&1)
like "$out" "not reverted automatically" "an author's Stable-no-autorevert: trailer refuses the automatic revert"
like "$(q "SELECT reason FROM reverts WHERE patch_id = $c")" "its author refused automatic reverts (Stable-no-autorevert: trailer); waiting for a maintainer" "... the plan waits for the maintainer, saying why"
SQ flag "$a" --reason "boot test user-copy fails with it" >/dev/null 2>&1
SQ flag "$b" --reason "boot test net-loopback fails with it" >/dev/null 2>&1
nsent=$(ls "$T/relay/"*.eml | wc -l)
"$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon2.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 60); do
	[ "$(q "SELECT count(*) FROM revert_proposals")" = 2 ] && [ "$(ls "$T/relay/"*.eml | wc -l)" -ge $((nsent + 2)) ] && break
	sleep 0.5
done
is "$(q "SELECT count(*) FROM revert_proposals WHERE state = 'waiting'")" 2 "auto_revert = propose: the daemon proposes both reverts"
pm=$(grep -l "^X-Stableq-Patch: $a" $(ls "$T/relay/"*.eml | tail -n +$((nsent + 1))) | head -1)
like "$(cat "$pm" 2>/dev/null)" "An automatic revert of your patch is proposed in the 6.1-stable queue" "... mailed to the author over SMTP"
like "$(cat "$pm" 2>/dev/null)" "Found: boot test user-copy fails with it" "... stating the evidence"
like "$(cat "$pm" 2>/dev/null)" "unless someone replies to this mail" "... and how to stop it"
pa=$(q "SELECT message_id FROM revert_proposals WHERE patch_id = $a")
reply "Jane Dev <jane@example.org>" stop1@example.org "$pa" "The failure is a bug in the test, see the thread on the list." > "$T/Maildir/new/3004.stop.host"
port=$(sed -n 's/^listen = 127.0.0.1://p' "$T/stableq.conf")
api=$(curl -s "http://127.0.0.1:$port/api/v1/rc?branch=6.1" | $PY -c 'import json,sys; r=json.load(sys.stdin); print(r["version"], r["state"], len(r["patches"]))')
is "$api" "6.1.11-rc2 released $((nq - 1))" "GET /api/v1/rc?branch=6.1: the newest rc, released, its patches"
# the dashboard's Review page in Debian's headless chromium
dom=$(timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom "http://127.0.0.1:$port/#/rc" 2>/dev/null)
like "$dom" "Review cycle 6.1.11-rc2" "dashboard: the Review page shows the newest rc (headless chromium)"
like "$dom" 'id="send-rc"' "... with the button that sends the next one"
for _ in $(seq 60); do
	[ "$(q "SELECT state FROM patches WHERE id = $b")" = dropped ] && [ "$(q "SELECT state FROM revert_proposals WHERE patch_id = $a")" = stopped ] && break
	sleep 0.5
done
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null
is "$(q "SELECT state FROM revert_proposals WHERE patch_id = $a")" stopped "a reply to the proposal stops it"
like "$(q "SELECT reason FROM reverts WHERE patch_id = $a")" "the proposed revert was answered (a reply from Jane Dev <jane@example.org>" "... the plan waits for the maintainer, naming the reply"
is "$(q "SELECT state FROM patches WHERE id = $a")" broken "... patch $a is not dropped"
is "$(q "SELECT state FROM patches WHERE id = $b")" dropped "the other proposal is carried out after its grace: patch $b dropped"
is "$(q "SELECT state FROM revert_proposals WHERE patch_id = $b")" done "... its proposal done"

# at most revert_daily_limit automatic reverts a day: the daemon made one today
{ cat "$T/stableq.conf"; echo "revert_daily_limit = 1"; } > "$T/limit.conf"
out=$("$STABLEQ" -c "$T/limit.conf" revert "$a" --auto 2>&1)
like "$out" "not reverted automatically" "revert_daily_limit = 1 after one automatic revert today: refused"
like "$(q "SELECT reason FROM reverts WHERE patch_id = $a ORDER BY id DESC LIMIT 1")" "1 patch taken out by automatic reverts today on 6.1 already, and this one takes out 1 (revert_daily_limit = 1 patches a day)" "... the plan says why"

# only a culprit confirmed both ways: a flag from a bisection that ended flaky
d=$(q "SELECT id FROM patches WHERE state = 'released' ORDER BY id LIMIT 1")
q "INSERT INTO candidates (branch_id, purpose, patch_ids) VALUES ((SELECT id FROM branches WHERE key = '6.1'), 'queue', '[]')"
q "INSERT INTO bisections (candidate_id, state, culprit_patch_id) VALUES ((SELECT max(id) FROM candidates), 'flaky', $d)"
SQ flag "$d" --reason "bisection: regression tests fail from this patch on" >/dev/null 2>&1
q "UPDATE flags SET bisection_id = (SELECT max(id) FROM bisections) WHERE patch_id = $d"
out=$(SQ revert "$d" --auto 2>&1)
like "$out" "not reverted automatically" "a culprit whose bisection was not confirmed both ways is not reverted automatically"
like "$(q "SELECT reason FROM reverts WHERE patch_id = $d")" "the bisection that named it was not confirmed both ways" "... the plan says why"

# the README's `stableq revert ID --propose`, run by hand: the proposal is
# stored and mailed to the author, nothing is reverted yet
d=$(cd "$T/linux" && sed -i 's/^line 3$/line 3?/' lib.c && git diff && git checkout -q lib.c)
cat > "$T/Maildir/new/3005.r7.host" <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:07 +0000
Subject: [PATCH 6.1] lib: fix line 3 again
Message-Id: <r7@example.org>

commit $(printf 'b7%.0s' $(seq 20)) upstream.

Fix line 3 again.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
SQ intake >/dev/null 2>&1
e=$(q "SELECT id FROM patches WHERE message_id = 'r7@example.org'")
SQ flag "$e" --reason "boot test user-copy fails with it" >/dev/null 2>&1
out=$(SQ revert "$e" --propose 2>&1)
ok $? "stableq revert ID --propose (the README's command) succeeds"
is "$(q "SELECT state FROM revert_proposals WHERE patch_id = $e")" waiting "... a proposal waits for its grace"
is "$(q "SELECT state FROM patches WHERE id = $e")" broken "... and the patch is not dropped yet"
is "$(q "SELECT count(*) FROM mail WHERE patch_id = $e AND kind = 'proposed'")" 1 "... its author's mail is in the outbox"

done_testing
