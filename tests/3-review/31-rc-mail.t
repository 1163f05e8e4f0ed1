#!/bin/bash
# 31-rc-mail.t: the rc's mails as testers' tools expect them, delivered to a
# real SMTP server on loopback (tests/smtpd.py): the cover's headers
# (X-stable: review, X-Patchwork-Hint: ignore, X-KernelTest-*), Cc rc_cc,
# where to fetch the rc (the git tree and tag, the patch file served by the
# daemon), a Pseudo-Shortlog per commit topped by the version bump, and a
# diffstat equal to `git diff --stat` of the rc's tag; each patch mail
# threaded, Cc its author and sign-off chain within mail_max_recipients,
# the in-body From: followed by a blank line, a per-patch diffstat after
# "---"; `b4 am` and `git am` apply the series. Then the races: `stableq rc`
# twice makes one rc, five concurrent POST /rc make one rc and one mail
# series, a superseded rc's unsent mail is cancelled, and `stableq rc`
# racing `stableq release` never releases an rc inside its window.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-31.XXXXXX)
cleanup() {
	for p in daemon relay; do kill "$(cat "$T/$p.pid" 2>/dev/null)" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
PY=/usr/bin/python3
command -v b4 >/dev/null || { echo "Bail out! no b4: make deps"; exit 1; }
free_port() { $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# --- a stable tree: 6.1.192 -----------------------------------------------------------
G init -q "$T/linux" && cd "$T/linux" || exit 1
for i in $(seq 1 80); do echo "line $i"; done > lib.c
mkdir -p drivers/net/ethernet/intel/ice
for i in $(seq 1 40); do echo "ice $i"; done > drivers/net/ethernet/intel/ice/ice_main.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\nNAME = Curry Ramen\n' > Makefile
G add -A && G commit -qm "Linux 6.1.192" && G tag -a -m "Linux 6.1.192" v6.1.192 && G branch -q linux-6.1.y
cd "$T" || exit 1

# mail N FILE SED AUTHOR [TRAILERS...]: a patch mail
mail() {
	local n=$1 file=$2 expr=$3 author=$4
	shift 4
	d=$(cd "$T/linux" && sed -i "$expr" "$file" && git diff && git checkout -q "$file")
	cat <<MAIL
From: $author
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:0$((n % 10)) +0000
Subject: [PATCH 6.1] fix number $n
Message-Id: <m$n@example.org>

commit $(printf '%040d' "$n" | tr 0 b | sed "s/^b/$n/") upstream.

Fix number $n.

Cc: <stable@vger.kernel.org>
$(printf '%s\n' "$@")
---
$d
MAIL
}
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp" "$T/later"
mail 1 lib.c 's/^line 8$/line 8!/' "Jane Dev <jane@example.org>" \
	"Signed-off-by: Jane Dev <jane@example.org>" "Signed-off-by: Sub Maint <sub@example.org>" \
	"Signed-off-by: Broken <broken@@example.org>" > "$T/Maildir/new/1.m1"
mail 2 drivers/net/ethernet/intel/ice/ice_main.c 's/^ice 20$/ice 20!/; s/^ice 21$/ice twenty-one/' \
	"Bob Net <bob@example.org>" "Signed-off-by: Bob Net <bob@example.org>" > "$T/later/2.m2"
mail 3 lib.c 's/^line 40$/line 40!/' "Carl Many <carl@example.org>" \
	"Signed-off-by: Carl Many <carl@example.org>" "Signed-off-by: S1 <s1@example.org>" \
	"Signed-off-by: S2 <s2@example.org>" "Signed-off-by: S3 <s3@example.org>" \
	"Signed-off-by: S4 <s4@example.org>" > "$T/later/3.m3"

$PY "$TOP/tests/lib/smtpd.py" --dir "$T/relay" --port-file "$T/port" 2>"$T/relay.log" &
echo $! > "$T/relay.pid"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
HP=$(free_port)
cat > "$T/daemon.conf" <<CONF
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
public_url = http://127.0.0.1:$HP
poll_interval = 3600
rc_list = Stable list <stable@localhost>
rc_cc = Tester One <t1@example.org>, t2@example.org
rc_git_url = $T/linux
rc_window = 3
mail_max_recipients = 4
mail_bulk_limit = 1
release_signoff = Greg Maint <greg@example.org>
CONF
# the CLI delivers; the daemon (which serves the API) does not
{ cat "$T/daemon.conf"; echo "smtp_url = smtp://127.0.0.1:$(cat "$T/port")"; } > "$T/stableq.conf"
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
queue_new() { # intake, then the maintainer queues what waits for a human
	SQ intake >/dev/null 2>&1
	for id in $(q "SELECT id FROM patches WHERE state IN ('imported','checked') ORDER BY id"); do
		SQ override "$id" --reason "reviewed" >/dev/null 2>&1
	done
}
# one at a time: the queue in this order
queue_new
mv "$T/later/2.m2" "$T/Maildir/new/" && queue_new
mv "$T/later/3.m3" "$T/Maildir/new/" && queue_new
is "$(q "SELECT count(*) FROM patches WHERE state = 'queued'")" 3 "three patches queued"

# --- the rc, out over SMTP ------------------------------------------------------------
out=$(SQ rc 2>&1)
ok $? "stableq rc" || diag "$out"
is "$(q "SELECT count(*) FROM mail WHERE kind = 'rc' AND hold IS NOT NULL")" 0 \
	"the series is not held by the bulk-mail guard (mail_bulk_limit = 1): the maintainer sent it"
SQ mail send > "$T/send.log" 2>&1
ls "$T/relay/"*.eml > "$T/sent1" 2>/dev/null
is "$(wc -l < "$T/sent1")" 4 "the cover and three patch mails went over SMTP"
cover=$(grep -l '^Subject: \[PATCH 6.1 00/3\] 6.1.193-rc1 review' $(cat "$T/sent1"))
ok $? "the cover: [PATCH 6.1 00/3] 6.1.193-rc1 review"
C=$(tr -d '\r' < "$cover")
cid=$(printf '%s\n' "$C" | sed -n 's/^Message-ID: <\(.*\)>$/\1/p')
hdr() { printf '%s\n' "$1" | sed '/^$/q'; }
like "$(hdr "$C")" "X-stable: review" "... X-stable: review"
like "$(hdr "$C")" "X-Patchwork-Hint: ignore" "... X-Patchwork-Hint: ignore"
like "$(hdr "$C")" "X-KernelTest-Version: 6.1.193-rc1" "... X-KernelTest-Version"
ok "$(hdr "$C" | grep -Eq '^X-KernelTest-Deadline: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}\+00:00$'; echo $?)" "... X-KernelTest-Deadline, as 2025-01-08T15:11+00:00"
like "$(hdr "$C")" "X-KernelTest-Tree: $T/linux" "... X-KernelTest-Tree"
like "$(hdr "$C")" "Cc: Tester One <t1@example.org>, <t2@example.org>" "... Cc rc_cc"
is "$($PY -c 'import json,sys; print(",".join(sorted(json.load(open(sys.argv[1]))["rcpt_tos"])))' "${cover%.eml}.json")" \
	"stable@localhost,t1@example.org,t2@example.org" "... the envelope: the list and the testers"
like "$C" "The whole patch series can be found in one patch at:
	http://127.0.0.1:$HP/api/v1/rc/1/patch
or in the git tree and tag at:
	$T/linux v6.1.193-rc1
and the diffstat can be found below." "... where to fetch it: the patch file and the git tree and tag"
like "$C" "Pseudo-Shortlog of commits:

Greg Maint <greg@example.org>
    Linux 6.1.193-rc1

Carl Many <carl@example.org>
    fix number 3

Bob Net <bob@example.org>
    fix number 2

Jane Dev <jane@example.org>
    fix number 1

-------------" "... a Pseudo-Shortlog per commit, newest first, topped by the version bump"
stat=$(printf '%s\n' "$C" | sed '1,/^Diffstat:$/d' | sed '1d')
want=$(env -u COLUMNS git -C "$T/linux" diff --stat v6.1.192 v6.1.193-rc1)
is "$stat" "$want" "the cover's diffstat is git diff --stat of the rc's tag, exactly"
like "$stat" " 3 files changed" "... three files, the Makefile bump included"
like "$stat" " Makefile                                  | 4 ++--" "... sorted and aligned"

# the patch file from the daemon, the tag from the git tree
"$STABLEQ" -c "$T/daemon.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 100); do curl -s "http://127.0.0.1:$HP/api/v1/health" >/dev/null && break; sleep 0.1; done
G clone -q -b linux-6.1.y "$T/linux" "$T/tester"
curl -sf "http://127.0.0.1:$HP/api/v1/rc/1/patch" -o "$T/rc1.gz"
ok $? "GET the cover's patch URL: the patch file"
zcat "$T/rc1.gz" | git -C "$T/tester" apply --index && git -C "$T/tester" fetch -q "$T/linux" tag v6.1.193-rc1 && \
	[ -z "$(git -C "$T/tester" diff --cached v6.1.193-rc1)" ]
ok $? "... it applies to 6.1.192 and is the tag's tree, fetched from rc_git_url"
git -C "$T/tester" reset -q --hard v6.1.192

# each patch mail
p1=$(grep -l '^Subject: \[PATCH 6.1 01/3\] fix number 1' $(cat "$T/sent1")) && P1=$(tr -d '\r' < "$p1")
p3=$(grep -l '^Subject: \[PATCH 6.1 03/3\] fix number 3' $(cat "$T/sent1")) && P3=$(tr -d '\r' < "$p3")
like "$(hdr "$P1")" "In-Reply-To: <$cid>" "patch mails: In-Reply-To the cover"
like "$(hdr "$P1")" "X-stable: review" "... X-stable: review"
like "$(hdr "$P1")" "X-Patchwork-Hint: ignore" "... X-Patchwork-Hint: ignore"
like "$(hdr "$P1")" "Cc: Jane Dev <jane@example.org>, Sub Maint <sub@example.org>" "... Cc its author and sign-off chain"
case "$(hdr "$P1")" in *broken@@*) ok 1 "... a malformed sign-off left out" ;; *) ok 0 "... a malformed sign-off left out" ;; esac
is "$(hdr "$P3" | sed -n 's/^Cc: //p')" "Carl Many <carl@example.org>, S1 <s1@example.org>, S2 <s2@example.org>" \
	"... within mail_max_recipients = 4 (the list and three)"
like "$P1" "6.1-stable review patch.  If anyone has any objections, please let me know.

------------------

From: Jane Dev <jane@example.org>

commit 1bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb1 upstream.

Fix number 1." "... the in-body From: and a blank line after it"
like "$P1" "Signed-off-by: Sub Maint <sub@example.org>
Signed-off-by: Broken <broken@@example.org>
---
 lib.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/lib.c b/lib.c" "... a per-patch diffstat after ---"

# b4 am and git am on the mails as the list has them
for f in $(cat "$T/sent1"); do echo "From mboxrd@z Thu Jan  1 00:00:00 1970"; tr -d '\r' < "$f"; echo; done > "$T/rc1.mbox"
export HOME=$T/home
mkdir -p "$HOME" "$T/b4"
git config --global user.name "T Ester" && git config --global user.email te@example.org
git config --global b4.attestation-policy off
(cd "$T/b4" && timeout 120 b4 -q am -m "$T/rc1.mbox" -o "$T/b4" "$cid" > "$T/b4.log" 2>&1)
mbx=$(ls "$T"/b4/*.mbx 2>/dev/null | head -1)
ok "$([ -n "$mbx" ]; echo $?)" "b4 am makes an mbox of the series" || diag "$(cat "$T/b4.log")"
git -C "$T/tester" am -q "$mbx"
ok $? "... git am applies it"
is "$(git -C "$T/tester" diff --stat HEAD v6.1.193-rc1 | tail -1)" " 1 file changed, 2 insertions(+), 2 deletions(-)" \
	"... the tree is the rc's but for the Makefile bump"
git -C "$T/tester" reset -q --hard v6.1.192
for f in $(cat "$T/sent1"); do grep -q '^Subject: \[PATCH 6.1 00' "$f" || echo "$f"; done | sort > "$T/patches1"
git -C "$T/tester" am -q $(cat "$T/patches1")
ok $? "git am applies the patch mails as delivered"

# --- stableq rc twice: one rc ------------------------------------------------------------
nmail=$(q "SELECT count(*) FROM mail")
out=$(SQ rc 2>&1)
like "$out" "rc 1: 6.1.193-rc1 (open)" "stableq rc again with the queue unchanged: the same rc"
is "$(q "SELECT count(*) FROM rcs"):$(q "SELECT count(*) FROM mail")" "1:$nmail" "... no new rc, no new mail"

# --- five concurrent POST /rc: one rc, one series ------------------------------------------
mail 4 lib.c 's/^line 60$/line 60!/' "Jane Dev <jane@example.org>" "Signed-off-by: Jane Dev <jane@example.org>" > "$T/Maildir/new/4.m4"
queue_new
TOKEN=$(SQ token add t31 --scope admin 2>/dev/null)
for i in 1 2 3 4 5; do
	curl -s -o "$T/post$i.json" -w '%{http_code}\n' -X POST -H "Authorization: Bearer $TOKEN" \
		-H 'Content-Type: application/json' -d '{}' "http://127.0.0.1:$HP/api/v1/rc?branch=6.1" > "$T/code$i" &
done
wait $(jobs -p | grep -v -x -e "$(cat "$T/daemon.pid")" -e "$(cat "$T/relay.pid")") 2>/dev/null
is "$(cat "$T"/code? | sort | paste -sd,)" "200,200,200,200,201" "five concurrent POST /rc: one 201 (made), four 200 (the same rc)"
is "$(q "SELECT count(*) FROM rcs")" 2 "... one new rc"
is "$(($(q "SELECT count(*) FROM mail") - nmail))" 5 "... one new mail series (cover and four)"
is "$(for i in 1 2 3 4 5; do $PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/post$i.json"; done | sort -u)" 2 "... every answer names rc 2"

# --- a superseded rc's unsent mail is cancelled ----------------------------------------------
mail 5 lib.c 's/^line 70$/line 70!/' "Jane Dev <jane@example.org>" "Signed-off-by: Jane Dev <jane@example.org>" > "$T/Maildir/new/5.m5"
queue_new
out=$(SQ rc 2>&1)
like "$out" "rc 3: 6.1.193-rc3 (open), 5 patches" "a fifth patch: stableq rc makes 6.1.193-rc3"
is "$(q "SELECT count(*) FROM mail WHERE state = 'failed' AND last_error LIKE 'cancelled: rc 2 superseded by 6.1.193-rc3%'")" 5 \
	"... rc 2's five unsent mails are cancelled"
SQ mail send > "$T/send2.log" 2>&1
ls "$T/relay/"*.eml | sort > "$T/sent2"
is "$(comm -13 "$T/sent1" "$T/sent2" | xargs grep -l '^Subject: .*6.1.193-rc2' | wc -l)" 0 "... none of rc 2's mails went out"
is "$(comm -13 "$T/sent1" "$T/sent2" | wc -l)" 6 "... rc 3's six did"

# --- stableq rc racing stableq release ---------------------------------------------------------
bad=0
for n in 6 7 8; do
	d=$(q "SELECT deadline FROM rcs WHERE state = 'open'")
	while [ "$(date +%s)" -le "${d:-0}" ]; do sleep 0.3; done
	l=$(( (n - 6) * 8 + 20 )) # 20, 28, 36: apart from each other and 8, 40, 60, 70
	mail $n lib.c "s/^line $l\$/line $l!/" "Jane Dev <jane@example.org>" \
		"Signed-off-by: Jane Dev <jane@example.org>" > "$T/Maildir/new/$n.m$n"
	queue_new
	SQ rc > "$T/race-rc$n.log" 2>&1 &
	a=$!
	SQ release --force > "$T/race-rel$n.log" 2>&1 &
	b=$!
	wait $a $b
	# never an rc released inside its window, and an open rc always open
	bad=$((bad + $(q "SELECT count(*) FROM rcs WHERE state = 'released' AND (released_at IS NULL OR released_at < deadline)")))
	[ "$(q "SELECT count(*) FROM rcs WHERE state = 'open' AND deadline > strftime('%s','now') - 1")" = 1 ] || bad=$((bad + 1))
	[ "$bad" = 0 ] || diag "race $n: $(q "SELECT group_concat(id || ':' || version || ':' || state || ':' || deadline || ':' || coalesce(released_at, '-'), ' ') FROM rcs") at $(date +%s): $(cat "$T/race-rc$n.log" "$T/race-rel$n.log")"
done
is "$bad" 0 "rc racing release, three times: no rc released inside its window, the newest rc open"
is "$(q "SELECT count(*) FROM patches p WHERE state = 'released' AND NOT EXISTS (SELECT 1 FROM rc_patches x JOIN rcs r ON r.id = x.rc_id WHERE x.patch_id = p.id AND r.state = 'released')")" 0 \
	"... every released patch was in a released rc"
SQ mail send > /dev/null 2>&1
is "$(q "SELECT count(*) FROM mail WHERE state = 'sent' AND kind = 'rc' AND message_id IN (SELECT cover_message_id FROM rcs WHERE state = 'superseded' AND id > 3)")" 0 \
	"... no superseded rc's mail went out after it was superseded" 

# --- the config check: a loopback URL is never named to a list elsewhere ------------------
out=$("$STABLEQ" -c "$T/daemon.conf" serve -n 2>&1)
ok $? "stableq serve -n: a list on this machine may be told local URLs" || diag "$out"
sed 's/^rc_list = .*/rc_list = Stable list <stable@vger.kernel.org>/' "$T/stableq.conf" > "$T/bad.conf"
out=$("$STABLEQ" -c "$T/bad.conf" serve -n 2>&1)
ok $((! $?)) "stableq serve -n: rc_git_url a local path and rc_list stable@vger.kernel.org: refused"
like "$out" "rc_git_url = $T/linux is a loopback (or local) URL" "... naming the key"
sed -i '/^rc_git_url/d' "$T/bad.conf"
out=$("$STABLEQ" -c "$T/bad.conf" serve -n 2>&1)
like "$out" "public_url = http://127.0.0.1:$HP is a loopback (or local) URL" "... public_url too"
n=$(q "SELECT count(*) FROM rcs")
out=$("$STABLEQ" -c "$T/bad.conf" rc 2>&1)
ok $((! $?)) "stableq rc refuses such a config too"
is "$(q "SELECT count(*) FROM rcs")" "$n" "... making nothing"
out=$(SQ rc --show 2>&1)
like "$out" "(open)" "stableq rc --show: the newest rc"
done_testing
