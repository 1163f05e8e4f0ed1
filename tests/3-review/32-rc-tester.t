#!/bin/bash
# 32-rc-tester.t: stableq as the first tester of its own rc, and the rc's
# replies. `stableq rc` (tester_identity set) makes a candidate of exactly
# the rc's patches; once it is done (its rows written here: a kernel build
# is the serial tests' business) the daemon's "rc report" step replies to
# the cover in the list's format (Build results / Qemu test results, the
# KUnit and kselftest counts with regressions and known failures apart,
# Tested-by on a pass), delivered over SMTP on loopback; the list's copy
# read by stableq's own intake records its Tested-by and report. A NAK on
# the cover holds the release until `stableq rc override`; a tester's
# failing report without a Tested-by holds it again until POST
# /rc/override; the rc's dashboard page shows every report. A failing
# candidate's report names the culprit and its revert.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-32.XXXXXX)
cleanup() {
	for p in daemon relay; do kill "$(cat "$T/$p.pid" 2>/dev/null)" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
PY=/usr/bin/python3

G init -q "$T/linux" && cd "$T/linux" || exit 1
for i in $(seq 1 80); do echo "line $i"; done > lib.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\nNAME = Curry Ramen\n' > Makefile
G add -A && G commit -qm "Linux 6.1.192" && G tag -a -m "Linux 6.1.192" v6.1.192 && G branch -q linux-6.1.y
cd "$T" || exit 1
patch() { # N LINE
	d=$(cd "$T/linux" && sed -i "s/^line $2\$/line $2!/" lib.c && git diff && git checkout -q lib.c)
	cat <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:0$1 +0000
Subject: [PATCH 6.1] lib: fix line $2
Message-Id: <p$1@example.org>

commit $(printf '%040d' "$1" | tr 0 c | sed "s/^c/$1/") upstream.

Fix line $2.

Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
}
reply() { # FROM MSGID IRT BODY
	cat <<MAIL
From: $1
To: stable@localhost
Date: Mon, 1 Sep 2025 11:00:00 +0000
Subject: Re: [PATCH 6.1 00/2] 6.1.193-rc1 review
Message-Id: <$2>
In-Reply-To: <$3>

> This is the start of the stable review cycle for the 6.1.193 release.

$4
MAIL
}
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
$PY "$TOP/tests/lib/smtpd.py" --dir "$T/relay" --port-file "$T/port" 2>"$T/relay.log" &
echo $! > "$T/relay.pid"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
HP=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
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
intake_maildir = $T/Maildir
listen = 127.0.0.1:$HP
poll_interval = 1
smtp_url = smtp://127.0.0.1:$(cat "$T/port")
rc_list = Stable list <stable@localhost>
rc_window = 3
tester_identity = stableq CI <ci@example.org>
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
queue_new() {
	SQ intake >/dev/null 2>&1
	for id in $(q "SELECT id FROM patches WHERE state IN ('imported','checked') ORDER BY id"); do
		SQ override "$id" --reason "reviewed" >/dev/null 2>&1
	done
}
patch 1 8 > "$T/Maildir/new/1.p1" && queue_new
patch 2 24 > "$T/Maildir/new/2.p2" && queue_new

# --- the rc, and a candidate of exactly its patches ------------------------------------
out=$(SQ rc 2>&1)
ok $? "stableq rc" || diag "$out"
ids=$(q "SELECT json_group_array(patch_id) FROM (SELECT patch_id FROM rc_patches WHERE rc_id = 1 ORDER BY pos)")
cand=$(q "SELECT id FROM candidates WHERE patch_ids = '$ids' AND purpose = 'queue'")
ok "$([ -n "$cand" ]; echo $?)" "tester_identity: a candidate of exactly the rc's patches ($ids) waits to run"
SQ rc report >/dev/null 2>&1
ok $((! $?)) "stableq rc report refuses while that candidate is not done"
# the candidate's verdict and test cases, as a run stores them
q "UPDATE candidates SET step = 'done', verdict = 'pass', finished_at = strftime('%Y-%m-%dT%H:%M:%SZ','now') WHERE id = $cand"
for t in boot:pass user-copy:pass kunit.list.add:pass kunit.list.del:pass kunit.time.y2038:known \
	kunit.mm.skip:skip kselftest.net.loopback:pass kselftest.timers.posix:known; do
	q "INSERT INTO test_cases (candidate_id, name, status, tip, runs, fails) VALUES ($cand, '${t%%:*}', '${t#*:}', NULL, 1, $([ "${t#*:}" = known ] && echo 1 || echo 0))"
done

# --- the daemon's step: the report, over SMTP ------------------------------------------
SQ mail send >/dev/null 2>&1
nsent=$(ls "$T/relay/"*.eml | wc -l)
"$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 120); do
	[ "$(ls "$T/relay/"*.eml | wc -l)" -gt "$nsent" ] && break
	sleep 0.5
done
like "$(grep -m1 'step rc report' "$T/daemon.log")" "started" "the daemon's rc report step ran"
rep=$(grep -l '^X-Stableq-Kind: rc-report' "$T/relay/"*.eml | head -1)
ok "$([ -n "$rep" ]; echo $?)" "stableq's report went over SMTP"
R=$(tr -d '\r' < "$rep" 2>/dev/null)
cid=$(q "SELECT cover_message_id FROM rcs WHERE id = 1")
like "$R" "Subject: Re: [PATCH 6.1 00/2] 6.1.193-rc1 review" "... Re: the cover's subject"
like "$R" "In-Reply-To: <$cid>" "... In-Reply-To the cover"
like "$R" "Build results:
	total: 1 pass: 1 fail: 0
Qemu test results:
	total: 2 pass: 2 fail: 0" "... Build results and Qemu test results, as the list writes them"
like "$R" "KUnit test results:
	total: 4 pass: 2 fail: 1 skip: 1
	regressions against the tip: 0
	known failures (failing on the tip too): 1" "... KUnit: regressions and known failures apart"
like "$R" "kselftest results:
	total: 2 pass: 1 fail: 1 skip: 0" "... kselftest"
like "$R" "Tested-by: stableq CI <ci@example.org>" "... a pass: Tested-by: tester_identity"
is "$(q "SELECT report_message_id IS NOT NULL FROM rcs WHERE id = 1")" 1 "... recorded as the rc's report"

# --- read back by stableq's own intake ---------------------------------------------------
cp "$rep" "$T/Maildir/new/3.own-report"
SQ intake > "$T/intake1.log" 2>&1
json=$(SQ rc --show --json)
is "$(printf '%s' "$json" | $PY -c 'import json,sys; print(",".join(t["tester"] for t in json.load(sys.stdin)["tested"]))')" "ci@example.org" \
	"the list's copy, read by stableq's own intake: its Tested-by on the rc"
is "$(printf '%s' "$json" | $PY -c 'import json,sys; r=json.load(sys.stdin)["reports"][0]; print(r["kind"], r["build_total"], r["build_fail"], r["qemu_total"], r["qemu_fail"], r["holds"])')" \
	"report 1 0 2 0 0" "... and its report parsed back: build 1/0, qemu 2/0, holding nothing"

# --- a NAK on the cover holds the release until `stableq rc override` ---------------------
reply "Nina Nak <nina@example.org>" nak1@example.org "$cid" "NAK, 6.1.193-rc1 breaks suspend on my laptop.

Tested-by: Nina Nak <nina@example.org>" > "$T/Maildir/new/4.nak"
out=$(SQ intake 2>&1)
like "$out" "1 held" "a NAK on the cover: the intake holds the rc"
is "$(SQ rc --show --json | $PY -c 'import json,sys; print(",".join(t["tester"] for t in json.load(sys.stdin)["tested"]))')" "ci@example.org" \
	"... a NAK is not recorded as a Tested-by"
d=$(q "SELECT deadline FROM rcs WHERE id = 1"); while [ "$(date +%s)" -le "$d" ]; do sleep 0.3; done
out=$(SQ release --force 2>&1)
ok $((! $?)) "after the window, release refuses"
like "$out" "a NAK from Nina Nak <nina@example.org> (Message-Id <nak1@example.org>) holds the release of 6.1.193-rc1" "... naming the NAK"
out=$(SQ rc override 2>&1)
ok $((! $?)) "stableq rc override without a reason: refused"
out=$(SQ rc override --reason "the suspend bug is the laptop's firmware" 2>&1)
ok $? "stableq rc override --reason ..." || diag "$out"
like "$(q "SELECT detail FROM events WHERE subject_kind = 'rc' AND kind = 'override'")" "the suspend bug is the laptop's firmware" "... an event with the reason"

# --- a failing report without Tested-by holds it again; POST /rc/override ------------------
reply "Guenter Tester <gt@example.org>" gt1@example.org "$cid" "Build results:
	total: 158 pass: 156 fail: 2
Failed builds:
	arm:allmodconfig
	parisc:allmodconfig
Qemu test results:
	total: 528 pass: 528 fail: 0" > "$T/Maildir/new/5.gt"
reply "Happy Tester <ht@example.org>" ht1@example.org "$cid" "Build results:
	total: 10 pass: 9 fail: 1
Qemu test results:
	total: 5 pass: 5 fail: 0

The build failure is known and unrelated.

Tested-by: Happy Tester <ht@example.org>" > "$T/Maildir/new/6.ht"
SQ intake > /dev/null 2>&1
out=$(SQ release --force 2>&1)
ok $((! $?)) "a tester's failing report without a Tested-by: release refuses again"
like "$out" "a failing report without a Tested-by from Guenter Tester <gt@example.org> (Message-Id <gt1@example.org>)" "... naming it"
is "$(SQ rc --show --json | $PY -c 'import json,sys; print(sorted((r["tester"], r["holds"]) for r in json.load(sys.stdin)["reports"]))')" \
	"[('gt@example.org', 1), ('ht@example.org', 0), ('nina@example.org', 0), ('stableq@localhost', 0)]" \
	"... the reports: the failing one holds, the one with a Tested-by and the overridden NAK do not"
dom=$(timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --user-data-dir="$T/chrome" \
	--virtual-time-budget=5000 --dump-dom "http://127.0.0.1:$HP/#/rc" 2>/dev/null)
like "$dom" "Build results: total: 158 pass: 156 fail: 2" "dashboard: the rc's page shows the testers' reports (headless chromium)"
like "$dom" "holds the release" "... which of them holds its release"
like "$dom" "nina@example.org" "... and the NAK"
TOKEN=$(SQ token add t32 --scope admin 2>/dev/null)
code=$(curl -s -o "$T/ov.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
	-d '{"reason":"arm and parisc allmodconfig fail on the tip too"}' "http://127.0.0.1:$HP/api/v1/rc/override?branch=6.1")
is "$code" 200 "POST /rc/override with an admin token"
is "$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["override"]["reason"])' "$T/ov.json")" "arm and parisc allmodconfig fail on the tip too" "... the rc says why"
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null
out=$(SQ release --force 2>&1)
ok $? "release once overridden" || diag "$out"
like "$out" "released 2 patches onto linux-6.1.y (6.1-stable) as 6.1.193" "... the rc's two patches"

# --- a failing candidate: the report names the culprit and its revert ----------------------
patch 3 40 > "$T/Maildir/new/7.p3" && queue_new
patch 4 56 > "$T/Maildir/new/8.p4" && queue_new
SQ rc > /dev/null 2>&1
p4=$(q "SELECT id FROM patches WHERE message_id = 'p4@example.org'")
ids=$(q "SELECT json_group_array(patch_id) FROM (SELECT patch_id FROM rc_patches WHERE rc_id = 2 ORDER BY pos)")
cand=$(q "SELECT id FROM candidates WHERE patch_ids = '$ids' AND purpose = 'queue'")
q "UPDATE candidates SET step = 'done', verdict = 'fail' WHERE id = $cand"
q "INSERT INTO test_cases (candidate_id, name, status, tip, runs, fails) VALUES ($cand, 'boot', 'pass', 'pass', 1, 0), ($cand, 'user-copy', 'regression', 'pass', 2, 2)"
q "INSERT INTO bisections (candidate_id, state, culprit_patch_id) VALUES ($cand, 'found', $p4)"
SQ flag "$p4" --reason "bisection: user-copy fails from this patch on" > /dev/null 2>&1
SQ revert "$p4" --plan --reason "user-copy regression" > /dev/null 2>&1
rev=$(q "SELECT max(id) FROM reverts WHERE patch_id = $p4")
out=$(SQ rc report 2>&1)
ok $? "stableq rc report on the failing rc" || diag "$out"
F=$(q "SELECT headers_and_body FROM mail WHERE kind = 'rc-report' ORDER BY id DESC LIMIT 1" | tr -d '\r')
like "$F" "Qemu test results:
	total: 2 pass: 1 fail: 1" "... the Qemu results count the failure"
like "$F" "Regressions:
	user-copy" "... names the regression"
like "$F" "The culprit, by bisection: patch $p4 (\"lib: fix line 56\")." "... the culprit"
like "$F" "Its revert: revert $rev" "... and its revert"
case "$F" in *Tested-by*) ok 1 "... no Tested-by on a failure" ;; *) ok 0 "... no Tested-by on a failure" ;; esac
done_testing
