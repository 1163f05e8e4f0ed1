#!/bin/bash
# 21-revert-guards.t: the guards of automatic reverts hold for every door, on
# a real git tree and real stores made here. A dependent's
# Stable-no-autorevert: stops the automatic drop of its culprit's plan (the
# plan waits for the maintainer); revert_daily_limit counts the patches
# automatic reverts take out, `stableq revert ID --auto` included; an
# out-of-office reply (RFC 3834) does not stop a proposed revert, a person's
# reply does; with auto_revert = propose and the limit reached while
# proposals wait, the daemon stores one plan per proposal and does not spin
# (30 s of the real daemon: its steps, its rows and its CPU time).
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-21.XXXXXX)
trap 'kill $(cat "$T/daemon.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

G init -q "$T/linux"
cd "$T/linux" || exit 1
for f in a b c d e f g h; do for i in $(seq 1 12); do echo "$f line $i"; done > $f.c; done
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y

mkdir -p "$T/q"
n=0
mail() { # NAME SUBJECT UPSTREAM TRAILERS FILE SED
	n=$((n + 1))
	sed -i "$6" "$5"
	d=$(git diff "$5")
	git checkout -q "$5"
	cat > "$T/q/$1" <<MAIL
From: Dev $n <dev$n@example.org>
Date: Mon, 1 Sep 2025 10:00:0$n +0000
Subject: [PATCH 6.1] $2
Message-Id: <guard$n.$$@example.org>

commit $3 upstream.

Body of $2.

Cc: <stable@vger.kernel.org> # 6.1.x
$4
Signed-off-by: Dev $n <dev$n@example.org>
---
$d
MAIL
	echo "$1" >> "$T/q/series"
}
up() { printf '%s%s' "$1" "$(printf '0%.0s' $(seq 1 $((40 - ${#1}))))"; }
C=$(up cccccccccccc)
W=$(up 777777777777)
# 1 the culprit, 2 brought in for it and refusing automatic reverts
mail 1-culprit.patch "b: the culprit" "$C" "" b.c 's/b line 3/b line three/'
mail 2-dep.patch "c: brought in for the culprit" "$(up 222222222222)" \
	"Stable-dep-of: ${C:0:12} (\"b: the culprit\")
Stable-no-autorevert: the driver's test is flaky on this board" c.c 's/c line 3/c line three/'
# 3 with its dependent 4, 5 with its dependent 6, 7 and 8 alone
mail 3-x.patch "d: x" "$(up 333333333333)" "" d.c 's/d line 3/d line three/'
mail 4-y.patch "d: y goes with x" "$(up 444444444444)" "Stable-dep-of: 333333333333 (\"d: x\")" d.c 's/d line 9/d line nine/'
mail 5-w.patch "e: w" "$W" "" e.c 's/e line 3/e line three/'
mail 6-v.patch "e: v goes with w" "$(up 666666666666)" "Stable-dep-of: ${W:0:12} (\"e: w\")" e.c 's/e line 9/e line nine/'
mail 7-z.patch "f: z" "$(up 888888888888)" "" f.c 's/f line 3/f line three/'
mail 8-q.patch "g: q" "$(up 999999999999)" "" g.c 's/g line 3/g line three/'
cd "$T" || exit 1

conf() { # NAME [SERIES...]: a store, a copy of the tree, a queue of those patches
	local name=$1
	shift
	rm -rf "$T/linux-$name" "$T/q-$name"
	git clone -q --mirror "$T/linux" "$T/linux-$name/.git" && git -C "$T/linux-$name" config core.bare false &&
		git -C "$T/linux-$name" checkout -q linux-6.1.y
	mkdir -p "$T/q-$name" "$T/Maildir-$name/new" "$T/Maildir-$name/cur" "$T/Maildir-$name/tmp"
	for p in "$@"; do cp "$T/q/$p" "$T/q-$name/" && echo "$p" >> "$T/q-$name/series"; done
	cat > "$T/$name.conf" <<CONF
db = $T/$name.db
var_dir = $T/var-$name
tree_dir = $T/linux-$name
queue_dir = $T/q-$name
queue_seed =
debian_changelog =
build_dir = $T/build-$name
poll_interval = 1
intake_maildir = $T/Maildir-$name
listen = 127.0.0.1:$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
CONF
}
db() { sqlite3 "$T/$1.db" "$2"; }
states() { db "$1" "SELECT group_concat(state) FROM (SELECT state FROM patches ORDER BY id)"; }

# --- a dependent's opt-out stops the automatic drop of the whole plan ---------
conf o 1-culprit.patch 2-dep.patch 3-x.patch
SQ() { "$STABLEQ" -c "$T/o.conf" "$@"; }
SQ import "$T/q-o" > "$T/out" 2>&1
is "$(states o)" "queued,queued,queued" "three patches queued" || diag "$(cat "$T/out")"
SQ flag 1 --reason "boot test user-copy fails with it" > /dev/null 2>&1
out=$(SQ revert 1 --auto 2>&1)
ok $? "stableq revert 1 --auto (the daemon's command) succeeds" || diag "$out"
like "$out" "not reverted automatically" "the dependent's Stable-no-autorevert: refuses the automatic revert"
is "$(states o)" "broken,queued,queued" "... nothing is dropped: the culprit stays broken, its dependent queued"
is "$(db o "SELECT state FROM reverts WHERE patch_id = 1")" planned "... the plan is stored for the maintainer"
like "$(db o "SELECT reason FROM reverts WHERE patch_id = 1")" \
	"patch 2, which goes with it (Stable-dep-of: brought in for patch 1), carries the Stable-no-autorevert: trailer" \
	"... its reason names the dependent that refused"
is "$(db o "SELECT group_concat(patch_id) FROM (SELECT patch_id FROM revert_items WHERE revert_id = (SELECT id FROM reverts WHERE patch_id = 1) ORDER BY ord)")" \
	"2,1" "... the plan holds both patches, newest first"
SQ revert 1 --auto > /dev/null 2>&1
is "$(db o "SELECT count(*) FROM reverts WHERE patch_id = 1")" 1 "asked again: still one plan"
out=$(SQ revert 1 --reason "the maintainer decides: both go" --no-confirm 2>&1)
ok $? "the maintainer runs the plan (stableq revert 1)" || diag "$out"
is "$(states o)" "dropped,dropped,queued" "... culprit and dependent dropped"
is "$(db o "SELECT group_concat(state) FROM reverts WHERE patch_id = 1")" done "... the stored plan became the revert"

# --- the daily limit counts patches, and `stableq revert ID --auto` ---------
conf l 3-x.patch 4-y.patch 5-w.patch 6-v.patch 7-z.patch 8-q.patch
echo "revert_daily_limit = 3" >> "$T/l.conf"
SQ() { "$STABLEQ" -c "$T/l.conf" "$@"; }
SQ import "$T/q-l" > /dev/null 2>&1
is "$(states l)" "queued,queued,queued,queued,queued,queued" "six patches queued"
for id in 1 3 5 6; do SQ flag $id --reason "boot test net-loopback fails with it" > /dev/null 2>&1; done
# (--auto confirms at once: that candidate cannot build here, a tiny tree)
out=$(SQ revert 1 --auto 2>&1)
like "$out" "revert 1: done" "stableq revert 1 --auto: patch 1 and its dependent" || diag "$out"
is "$(states l)" "dropped,dropped,broken,queued,broken,broken" "... two patches taken out automatically"
is "$(db l "SELECT automatic FROM reverts WHERE patch_id = 1")" 1 "... recorded as an automatic revert, though a maintainer typed it"
out=$(SQ revert 3 --auto 2>&1)
like "$out" "not reverted automatically" "2 taken out today, limit 3: a plan of two more is refused (one revert so far, two patches)"
like "$(db l "SELECT reason FROM reverts WHERE patch_id = 3")" \
	"2 patches taken out by automatic reverts today on 6.1 already, and this one takes out 2 (revert_daily_limit = 3 patches a day)" \
	"... the plan says why, in patches"
is "$(states l)" "dropped,dropped,broken,queued,broken,broken" "... nothing more taken out"
out=$(SQ revert 5 --auto 2>&1)
like "$out" "revert 3: done" "a plan of one patch still fits: 2 + 1 = 3" || diag "$out"
out=$(SQ revert 6 --auto 2>&1)
like "$out" "not reverted automatically" "3 taken out: the limit is reached"
is "$(db l "SELECT count(*) FROM reverts WHERE state = 'planned'")" 2 "... two plans wait for the maintainer"
out=$(SQ revert 6 --reason "the maintainer's own revert" --no-confirm 2>&1)
ok $? "a maintainer's revert is not automatic: the limit does not hold it" || diag "$out"
is "$(db l "SELECT automatic FROM reverts WHERE patch_id = 6")" 0 "... not counted"

# --- an out-of-office reply does not stop a proposal; a person's reply does -----
conf a 7-z.patch 8-q.patch
printf 'auto_revert = propose\nrevert_grace = 3600\n' >> "$T/a.conf"
SQ() { "$STABLEQ" -c "$T/a.conf" "$@"; }
SQ import "$T/q-a" > /dev/null 2>&1
SQ flag 1 --reason "boot test user-copy fails with it" > /dev/null 2>&1
out=$(SQ revert 1 --propose 2>&1)
ok $? "stableq revert 1 --propose" || diag "$out"
pm=$(db a "SELECT message_id FROM revert_proposals WHERE patch_id = 1")
ok $([ -n "$pm" ] && echo 0 || echo 1) "... the proposal's mail has a Message-Id"
reply() { # FILE FROM MSGID EXTRA-HEADER BODY
	cat > "$T/Maildir-a/tmp/$1" <<MAIL
From: $2
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 11:00:00 +0000
Subject: Re: An automatic revert of your patch is proposed
Message-Id: <$3>
In-Reply-To: <$pm>
References: <$pm>
$4

$5
MAIL
	mv "$T/Maildir-a/tmp/$1" "$T/Maildir-a/new/$1"
}
reply 1001.ooo.host "Dev 7 <dev7@example.org>" ooo1@example.org "Auto-Submitted: auto-replied (vacation)" \
	"I am out of the office until Monday. For urgent matters contact my manager."
reply 1002.bulk.host "Dev 7 <dev7@example.org>" ooo2@example.org "Precedence: bulk" "Out of office."
reply 1003.xar.host "Dev 7 <dev7@example.org>" ooo3@example.org "X-Autoreply: yes" "Out of office."
out=$(SQ intake 2>&1)
ok $? "stableq intake reads the three automatic replies" || diag "$out"
is "$(db a "SELECT state FROM revert_proposals WHERE patch_id = 1")" waiting \
	"Auto-Submitted, Precedence: bulk, X-Autoreply: the proposal still waits"
is "$(db a "SELECT count(*) FROM reverts WHERE patch_id = 1")" 0 "... no plan was handed to the maintainer"
is "$(db a "SELECT count(*) FROM events WHERE subject_kind = 'patch' AND subject_id = 1 AND kind = 'auto-reply'")" 3 \
	"... each is recorded on the patch"
reply 1004.no.host "Dev 7 <dev7@example.org>" human1@example.org "Auto-Submitted: no" \
	"Please wait, the failure is in the test, I am sending a fix for it."
out=$(SQ intake 2>&1)
like "$out" "stopped" "a person's reply (Auto-Submitted: no) stops it" || diag "$out"
is "$(db a "SELECT state FROM revert_proposals WHERE patch_id = 1")" stopped "... the proposal is stopped"
like "$(db a "SELECT reason FROM reverts WHERE patch_id = 1")" "the proposed revert was answered (a reply from Dev 7 <dev7@example.org>, Message-Id <human1@example.org>" \
	"... the plan waits for the maintainer, naming the reply"

# --- propose + the daily limit reached: one plan per proposal, no spin ---------
conf p 3-x.patch 5-w.patch 7-z.patch
printf 'auto_revert = propose\nrevert_grace = 1\nrevert_daily_limit = 1\n' >> "$T/p.conf"
SQ() { "$STABLEQ" -c "$T/p.conf" "$@"; }
SQ import "$T/q-p" > /dev/null 2>&1
for id in 1 2 3; do SQ flag $id --reason "boot test user-copy fails with it" > /dev/null 2>&1; done
SQ revert 1 --propose > /dev/null 2>&1 && SQ revert 2 --propose > /dev/null 2>&1
is "$(db p "SELECT count(*) FROM revert_proposals WHERE state = 'waiting'")" 2 "two proposals wait"
# the daemon's own automatic revert (its actor) reaches the limit of one patch
out=$(STABLEQ_ACTOR=daemon SQ revert 3 --auto 2>&1)
like "$out" "revert 1: done" "the daemon reverts patch 3: the limit (1 patch) is reached" || diag "$out"
sleep 2 # both graces are over
"$STABLEQ" -c "$T/p.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
pid=$(cat "$T/daemon.pid")
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 30 ]; do sleep 1; done
# the daemon's CPU time and its children's (its steps), in clock ticks
read -r -a st < "/proc/$pid/stat"
cpu=$(((st[13] + st[14] + st[15] + st[16]) * 100 / $(getconf CLK_TCK)))
kill "$pid"; wait "$pid" 2>/dev/null
steps=$(grep -c 'step revert grace.*started' "$T/daemon.log")
diag "30 s of the daemon: $steps 'revert grace' steps, $(db p "SELECT count(*) FROM reverts WHERE state = 'planned'") planned reverts, CPU $((cpu / 100)).$(printf '%02d' $((cpu % 100))) s"
is "$(db p "SELECT group_concat(n) FROM (SELECT count(*) AS n FROM reverts WHERE state = 'planned' GROUP BY patch_id ORDER BY patch_id)")" "1,1" \
	"exactly one planned revert per proposal after 30 s of the daemon"
is "$steps" 2 "... one 'revert grace' step per proposal (the daemon does not loop)"
ok $([ "$cpu" -lt 500 ] && echo 0 || echo 1) "... the daemon and its steps used under 5 s of CPU in 30 s"
is "$(db p "SELECT group_concat(state) FROM revert_proposals")" "waiting,waiting" "... the proposals wait for the limit to lift"
ok $([ "$(db p "SELECT min(due_at) FROM revert_proposals")" -ge $(( $(date +%s) / 86400 * 86400 + 86400 )) ] && echo 0 || echo 1) \
	"... backed off to the next UTC day"
like "$(db p "SELECT reason FROM reverts WHERE patch_id = 1 ORDER BY id LIMIT 1")" "revert_daily_limit = 1 patches a day" "... the plan says why"
is "$(states p)" "broken,broken,dropped" "... nothing more taken out"

done_testing
