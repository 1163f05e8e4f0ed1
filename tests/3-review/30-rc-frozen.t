#!/bin/bash
# 30-rc-frozen.t: an rc is a frozen set. A real tree (6.1.192), patches and
# replies read from a maildir by the intake, `stableq rc` of patches 1, 2
# and 4 (3 is held by a NAK): the tree gets v6.1.193-rc1 and the patch file;
# `stableq rc` again with nothing changed makes no new rc; four patches
# queued in the window wait; `release` refuses in the window, then (after the
# deadline, --force) releases exactly the rc's three, saying four wait. The
# released commits carry their replies' trailers as `b4 am -t -s` gives them
# (b4 on the same mails, git am into a clone: the same messages), the
# maintainer's Signed-off-by at the bottom, then "Linux 6.1.193" (Makefile
# SUBLEVEL) tagged v6.1.193. The next rc is 6.1.194-rc1; a patch of it
# edited after it was sent makes release refuse, naming the patch.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-30.XXXXXX)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
command -v b4 >/dev/null || { echo "Bail out! no b4: make deps"; exit 1; }

# --- a stable tree: 6.1.192 with lib.c ----------------------------------------------
G init -q "$T/linux" && cd "$T/linux" || exit 1
for i in $(seq 1 80); do echo "line $i"; done > lib.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 192\nEXTRAVERSION =\nNAME = Curry Ramen\n' > Makefile
G add -A && G commit -qm "Linux 6.1.192" && G tag -a -m "Linux 6.1.192" v6.1.192 && G branch -q linux-6.1.y
cd "$T" || exit 1

# patch N [EXTRA-TRAILER]: a mail changing lib.c line 8*N
patch() {
	d=$(cd "$T/linux" && sed -i "s/^line $(($1 * 8))\$/line $(($1 * 8))!/" lib.c && git diff && git checkout -q lib.c)
	cat <<MAIL
From: Jane Dev <jane@example.org>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:0$(($1 % 10)) +0000
Subject: [PATCH 6.1] lib: fix line $1
Message-Id: <p$1@example.org>

commit $(printf '%040d' "$1" | tr 0 a | sed "s/^a/$1/") upstream.

Fix line $1.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>${2:+
$2}
---
$d
MAIL
}
# reply FROM N BODY
reply() {
	cat <<MAIL
From: $1
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 1$2:00:00 +0000
Subject: Re: [PATCH 6.1] lib: fix line $2
Message-Id: <r$RANDOM$RANDOM@example.org>
In-Reply-To: <p$2@example.org>
References: <p$2@example.org>

> Fix line $2.

$3
MAIL
}
mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
patch 1 > "$T/Maildir/new/1.p1"
patch 2 "Signed-off-by: Greg Maint <greg@example.org>" > "$T/Maildir/new/2.p2"
patch 3 > "$T/Maildir/new/3.p3"
patch 4 > "$T/Maildir/new/4.p4"
reply "Tom Tester <tom@example.org>" 1 "Works here.

Tested-by: Tom Tester <tom@example.org>" > "$T/Maildir/new/5.r1"
reply "Rita Rev <rita@example.org>" 1 "Reviewed-by: Rita Rev <rita@example.org>" > "$T/Maildir/new/6.r2"
reply "Alex Ack <alex@example.org>" 2 "Acked-by: Alex Ack <alex@example.org>" > "$T/Maildir/new/7.r3"

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
rc_list = Stable list <stable@vger.kernel.org>
rc_window = 4
release_signoff = Greg Maint <greg@example.org>
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
wait_window() { # RC_ID: until its review window has closed
	local d
	d=$(q "SELECT deadline FROM rcs WHERE id = $1")
	while [ "$(date +%s)" -le "${d:-0}" ]; do sleep 0.5; done
}
queue_all() { # the maintainer queues what the checks left for a human
	# (not `stableq check` again: it lets go of NAK holds, issue 33's item 3)
	[ "${1:-}" = check ] && SQ check >/dev/null 2>&1
	for id in $(q "SELECT id FROM patches WHERE state IN ('imported','checked') ORDER BY id"); do
		SQ override "$id" --reason "reviewed" >/dev/null 2>&1
	done
}
id_of() { q "SELECT id FROM patches WHERE message_id = 'p$1@example.org'"; }

out=$(SQ intake 2>&1)
ok $? "intake: four patches and their replies" || diag "$out"
queue_all check
reply "Nina Nak <nina@example.org>" 3 "NAK: this breaks my box." > "$T/Maildir/new/8.r4"
SQ intake >/dev/null 2>&1
p1=$(id_of 1) p2=$(id_of 2) p3=$(id_of 3) p4=$(id_of 4)
sorted() { tr ', ' '\n\n' | grep . | sort -n | paste -sd,; }
is "$(q "SELECT state FROM patches WHERE id = $p3")" held "patch 3 is held by its NAK"
is "$(q "SELECT group_concat(state) FROM patches WHERE id IN ($p1, $p2, $p4)")" "queued,queued,queued" "1, 2 and 4 queued"

# --- the rc: a frozen set, tagged and written as a patch file --------------------------
out=$(SQ rc 2>&1)
ok $? "stableq rc" || diag "$out"
like "$out" "rc 1: 6.1.193-rc1 (open), 3 patches" "... 6.1.193-rc1 of patches 1, 2 and 4"
is "$(q "SELECT group_concat(patch_id) FROM (SELECT patch_id FROM rc_patches WHERE rc_id = 1 ORDER BY pos)")" \
	"$(q "SELECT group_concat(id) FROM (SELECT id FROM patches WHERE id IN ($p1, $p2, $p4) ORDER BY queue_pos)")" "... exactly them, in queue order"
is "$(q "SELECT count(*) FROM rc_patches WHERE rc_id = 1 AND length(diff_hash) = 64")" 3 "... each with the hash of its diff"
is "$(git -C "$T/linux" log -1 --format=%s v6.1.193-rc1)" "Linux 6.1.193-rc1" "the tree: tag v6.1.193-rc1 on \"Linux 6.1.193-rc1\""
is "$(git -C "$T/linux" show v6.1.193-rc1:Makefile | sed -n 's/^\(SUBLEVEL\|EXTRAVERSION\) = //p' | tr '\n' ' ')" "193 -rc1 " "... its Makefile: SUBLEVEL 193, EXTRAVERSION -rc1"
is "$(git -C "$T/linux" rev-list --count v6.1.192..v6.1.193-rc1)" 4 "... the three patches and the bump on 6.1.192"
is "$(git -C "$T/linux" rev-parse linux-6.1.y)" "$(git -C "$T/linux" rev-parse 'v6.1.192^{commit}')" "... the branch itself does not move"
pf="$T/var/stable-review/patch-6.1.193-rc1.gz"
ok "$([ -s "$pf" ]; echo $?)" "the patch file var_dir/stable-review/patch-6.1.193-rc1.gz"
G clone -q -b linux-6.1.y "$T/linux" "$T/try" && zcat "$pf" | git -C "$T/try" apply --index && \
	[ -z "$(git -C "$T/try" diff --cached v6.1.193-rc1 --stat)" ]
ok $? "... applied to 6.1.192 by git apply, it is the tag's tree"

out=$(SQ rc 2>&1)
ok $? "stableq rc again, nothing changed"
like "$out" "rc 1: 6.1.193-rc1 (open), 3 patches" "... the same rc"
like "$out" "no new rc" "... saying so"
is "$(q "SELECT count(*) FROM rcs")" 1 "... one rc in the store"
is "$(q "SELECT count(*) FROM mail WHERE kind = 'rc'")" 4 "... one mail series (cover and 3 patches)"

# --- four patches queued in the window wait for the next rc ------------------------------
for n in 5 6 7 8; do patch $n > "$T/Maildir/new/1$n.p$n"; done
SQ intake >/dev/null 2>&1
queue_all
is "$(q "SELECT count(*) FROM patches WHERE state = 'queued'")" 7 "seven patches queued now, four after the rc"
out=$(SQ release 2>&1)
ok $((! $?)) "release in the window refuses"
like "$out" "the review window of 6.1.193-rc1 is open until" "... naming the window"
like "$out" "4 patches queued after 6.1.193-rc1 wait for -rc2" "... and the four waiting"
wait_window 1
out=$(SQ release 2>&1)
ok $((! $?)) "after the deadline, without a passing candidate of the rc's set: refused"
like "$out" "have not passed a candidate" "... saying why"
out=$(SQ release --force 2>&1)
ok $? "release --force after the deadline" || diag "$out"
like "$out" "released 3 patches onto linux-6.1.y (6.1-stable) as 6.1.193 (tag v6.1.193)" "... exactly the rc's three"
like "$out" "4 patches queued after 6.1.193-rc1 wait for 6.1.194-rc1" "... naming the four waiting"
is "$(q "SELECT group_concat(id) FROM patches WHERE state = 'released'" | sorted)" "$(echo "$p1,$p2,$p4" | sorted)" "released: 1, 2 and 4"
is "$(q "SELECT count(*) FROM patches WHERE state = 'queued'")" 4 "... 5 to 8 still queued"
is "$(q "SELECT state FROM patches WHERE id = $p3")" held "... 3 still held"
is "$(q "SELECT state FROM rcs WHERE id = 1")" released "the rc is released"

# --- the tree: trailers as b4 am -t -s, the bump, the tag ---------------------------------
L="$T/linux"
is "$(git -C "$L" rev-list --count v6.1.192..linux-6.1.y)" 4 "the branch: three commits and the bump"
is "$(git -C "$L" log -1 --format='%s|%an <%ae>' linux-6.1.y)" "Linux 6.1.193|Greg Maint <greg@example.org>" "... \"Linux 6.1.193\" by the release_signoff"
is "$(git -C "$L" show linux-6.1.y:Makefile | sed -n 's/^SUBLEVEL = //p')" 193 "... its Makefile: SUBLEVEL 193"
is "$(git -C "$L" show linux-6.1.y:Makefile | grep -c '^EXTRAVERSION =$')" 1 "... EXTRAVERSION empty"
is "$(git -C "$L" rev-parse 'v6.1.193^{commit}')" "$(git -C "$L" rev-parse linux-6.1.y)" "tag v6.1.193 names it"
is "$(git -C "$L" cat-file -t v6.1.193)" tag "... an annotated tag"
c1=$(git -C "$L" log --format=%B -1 --grep='^lib: fix line 1$' linux-6.1.y)
like "$c1" "Signed-off-by: Jane Dev <jane@example.org>
Tested-by: Tom Tester <tom@example.org>
Reviewed-by: Rita Rev <rita@example.org>
Signed-off-by: Greg Maint <greg@example.org>" "patch 1: its replies' trailers in order, then the maintainer's sign-off"
c2=$(git -C "$L" log --format=%B -1 --grep='^lib: fix line 2$' linux-6.1.y)
like "$c2" "Signed-off-by: Jane Dev <jane@example.org>
Acked-by: Alex Ack <alex@example.org>
Signed-off-by: Greg Maint <greg@example.org>" "patch 2: its own sign-off by the maintainer moved to the bottom, as b4 does"
is "$(printf '%s\n' "$c2" | grep -c 'Greg Maint')" 1 "... once"

# b4 on the same mails: `b4 am -t -s` of each thread, git am into a clone
export HOME=$T/home
mkdir -p "$HOME" "$T/b4"
git config --global user.name "Greg Maint"
git config --global user.email greg@example.org
git config --global b4.attestation-policy off
for f in "$T"/Maildir/new/* "$T"/Maildir/cur/*; do
	[ -f "$f" ] || continue
	echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
	sed 's/^\(>*From \)/>\1/' "$f"
	echo
done > "$T/all.mbox"
G clone -q -b linux-6.1.y "$T/linux" "$T/b4tree" && git -C "$T/b4tree" reset -q --hard v6.1.192
for m in $(q "SELECT message_id FROM patches WHERE state = 'released' ORDER BY queue_pos"); do
	(cd "$T/b4" && timeout 120 b4 -q am -t -s -m "$T/all.mbox" -o "$T/b4" "$m" >/dev/null 2>&1)
	git -C "$T/b4tree" -c user.name="Greg Maint" -c user.email=greg@example.org am -q "$(ls -t "$T"/b4/*.mbx | head -1)"
done
is "$(git -C "$T/b4tree" log --format=%B v6.1.192..HEAD)" "$(git -C "$L" log --format=%B v6.1.192..linux-6.1.y~1)" \
	"the three released messages are what b4 am -t -s and git am make of the list's mails"

# --- the next rc; an edit after it makes release refuse ------------------------------------
out=$(SQ rc 2>&1)
like "$out" "rc 2: 6.1.194-rc1 (open), 4 patches" "the next rc: 6.1.194-rc1 of the four that waited"
p6=$(id_of 6)
q "UPDATE patches SET diff = replace(diff, '+line 48!', '+line 48?') WHERE id = $p6"
wait_window 2
out=$(SQ release --force 2>&1)
ok $((! $?)) "patch 6 edited after 6.1.194-rc1 was sent: release refuses"
like "$out" "patch $p6 (\"lib: fix line 6\") was edited after 6.1.194-rc1" "... naming it"
is "$(q "SELECT count(*) FROM patches WHERE state = 'released'")" 3 "... nothing released"
is "$(SQ rc --show --json | python3 -c 'import json,sys; print([p["id"] for p in json.load(sys.stdin)["patches"] if p["stale"]])')" "[$p6]" "... the rc shows it stale"
out=$(SQ rc 2>&1)
like "$out" "rc 3: 6.1.194-rc2 (open), 4 patches" "stableq rc: 6.1.194-rc2 with the edited diff"
is "$(q "SELECT state FROM rcs WHERE id = 2")" superseded "... 6.1.194-rc1 superseded"
wait_window 3
out=$(SQ release --force 2>&1)
ok $? "6.1.194-rc2 released" || diag "$out"
is "$(git -C "$L" log -1 --format=%s linux-6.1.y)" "Linux 6.1.194" "... as Linux 6.1.194"
is "$(git -C "$L" show linux-6.1.y:lib.c | sed -n 48p)" "line 48?" "... with the diff that was reviewed in -rc2"
is "$(git -C "$L" status --porcelain)" "" "the tree's worktree is untouched"
done_testing
