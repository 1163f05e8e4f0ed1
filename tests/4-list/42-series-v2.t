#!/bin/bash
# 42-series-v2.t: a v2 of a series supersedes the v1 patch by patch, as
# `b4 am` sees the series. Real tools throughout: the series made by
# `git format-patch --cover-letter` and its v2 by `git format-patch -v2
# --cover-letter --in-reply-to=<v1's cover>` (1/3 and 2/3 unchanged, 3/3
# changed), delivered into a public-inbox v2 archive by public-inbox-mda,
# read by `stableq intake`; `b4 am` on the archive's messages says which
# series is current. The v2 keeps the stored 1/3 and 2/3 with their checks
# and replaces 3/3 in its place; nothing is invalid. A forged v2 (another
# sender, another thread; or another sender in the thread, naming the
# author in an in-body From:) supersedes nothing: it is stored apart and
# held. A v3 changing a patch that is in an open rc is held, naming the rc.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-42.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export HOME=$T/home PI_CONFIG=$T/home/pi.config
mkdir -p "$HOME"
git config --global user.name "Sam Stable"
git config --global user.email sam@example.org
git config --global init.defaultBranch master
G() { git -c user.name="Jane Dev" -c user.email=jane@example.org "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
msgid() { sed -n 's/^Message-I[dD]: <\(.*\)>$/\1/p' "$1" | head -1; }
for tool in public-inbox-mda b4; do
	command -v $tool >/dev/null || { echo "Bail out! no $tool: make deps"; exit 1; }
done

# --- a stable tree, 6.1.10, and the author's tree with three fixes ---------------
G init -q "$T/linux" && cd "$T/linux" || exit 1
for i in $(seq 1 50); do echo "line $i"; done > lib.c
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
git clone -q "$T/linux" "$T/dev" && cd "$T/dev" || exit 1
fix() { # LINE TEXT: a backport of upstream commit <LINE repeated>
	sed -i "s/^line $1\( .*\)\?\$/line $1 $2/" lib.c
	G commit -qam "lib: fix line $1

commit $(printf '%040d' "$1" | tr 0 c) upstream.

Fix line $1.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>"
}
fix 8 fixed && fix 16 fixed && fix 24 fixed

# --- a public-inbox v2 archive ------------------------------------------------------
public-inbox-init -V2 stable "$T/inbox" http://example.com/stable stable@vger.kernel.org >/dev/null 2>&1
ok $? "public-inbox-init -V2: an archive in the temp dir"
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
deliver() { # FILE...: each mail (format-patch's "From <sha>" line off) into the archive
	for f in "$@"; do
		sed 1d "$f" | ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck || return 1
	done
}
# every message of the archive as one mbox, for b4
archive_mbox() {
	for c in $(git --git-dir="$T/inbox/git/0.git" rev-list --reverse HEAD); do
		echo "From mboxrd@z Thu Jan  1 00:00:00 1970"
		git --git-dir="$T/inbox/git/0.git" show "$c:m" | sed 's/^\(>*From \)/>\1/'
		echo
	done > "$T/archive.mbox"
}
# the patch-ids (git patch-id --stable) of an mbox's patches, in order
mbox_ids() { git patch-id --stable < "$1" | cut -d' ' -f1; }
# ... and of the store's patches IDS, in queue order
store_ids() {
	for id in "$@"; do
		"$STABLEQ" -c "$T/stableq.conf" show --json "$id" |
			/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["diff"], end="")' |
			git patch-id --stable | cut -d' ' -f1
	done
}
# the live patches of lib fixes, in queue order
live() { q "SELECT id FROM patches WHERE subject LIKE 'lib: fix line %' AND state IN ('imported','checked','queued') ORDER BY queue_pos" | tr '\n' ' '; }

cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
tree_dir = $T/linux
build_dir = $T/build
queue_dir = $T/queue
queue_seed =
kernel_config_dir = $TOP/config/kernel/6.1/quick
intake_inbox = $T/inbox
rc_list = Stable list <stable@vger.kernel.org>
intake_build = trusted
intake_trusted = @example.org
listen = 127.0.0.1:0
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }

# --- v1: the cover and three patches ---------------------------------------------------
G format-patch -q --cover-letter --thread=shallow --subject-prefix="PATCH 6.1" \
	--to=stable@vger.kernel.org -3 -o "$T/v1"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/lib fixes/' "$T/v1/0000-cover-letter.patch"
v1c=$(msgid "$T/v1/0000-cover-letter.patch")
deliver "$T"/v1/*.patch
ok $? "git format-patch --cover-letter: v1 0/3..3/3 delivered by public-inbox-mda"
out=$(SQ intake 2>&1)
like "$out" "3 patches in 1 series" "stableq intake: v1 stored, one series of three" || diag "$out"
read -r p1 p2 p3 <<< "$(live)"
SQ check >/dev/null 2>&1
is "$(q "SELECT group_concat(state) FROM patches WHERE id IN ($p1, $p2, $p3)")" "queued,queued,queued" "... checked: queued"
checks1=$(q "SELECT group_concat(id) FROM verdicts WHERE patch_id IN ($p1, $p2) ORDER BY id")

# --- v2: 1/3 and 2/3 unchanged, 3/3 changed, in the v1's thread ------------------------
sleep 1.1  # format-patch's Message-Ids carry the second
sed -i 's/^line 24 fixed$/line 24 fixed better/' lib.c && G commit -q --amend --no-edit -a
G format-patch -q -v2 --cover-letter --thread=shallow --in-reply-to="$v1c" \
	--subject-prefix="PATCH 6.1" --to=stable@vger.kernel.org -3 -o "$T/v2"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/lib fixes/' "$T/v2/v2-0000-cover-letter.patch"
v2c=$(msgid "$T/v2/v2-0000-cover-letter.patch")
deliver "$T"/v2/*.patch
ok $? "git format-patch -v2 --cover-letter --in-reply-to=<v1 cover>: delivered"
out=$(SQ intake 2>&1)
ok $? "stableq intake of the v2" || diag "$out"
like "$out" "3 patches in 1 series, 1 superseded" "... one patch superseded, the series whole" || diag "$out"
like "$out" "0 invalid" "... nothing invalid"
is "$(q "SELECT count(*) FROM mail_messages WHERE kind = 'invalid'")" 0 "... no mail row invalid"
read -r n1 n2 n3 <<< "$(live)"
is "$n1 $n2" "$p1 $p2" "1/3 and 2/3 unchanged: the stored patches are kept"
is "$(q "SELECT group_concat(state) FROM patches WHERE id IN ($p1, $p2)")" "queued,queued" "... still queued"
is "$(q "SELECT group_concat(id) FROM verdicts WHERE patch_id IN ($p1, $p2) ORDER BY id")" "$checks1" "... with their checks, not run again"
like "$(q "SELECT group_concat(kind || ':' || action) FROM mail_messages WHERE message_id = '$(msgid "$T"/v2/v2-0001-*.patch)'")" \
	"patch:kept patch $p1 (unchanged)" "... the v2 mail of 1/3 says so"
is "$(q "SELECT state FROM patches WHERE id = $p3")" dropped "3/3 changed: the v1's 3/3 is dropped"
like "$(q "SELECT state_reason FROM patches WHERE id = $p3")" "superseded by v2 of the series (Message-Id <$(msgid "$T"/v2/v2-0003-*.patch)>)" "... superseded by the v2, saying which mail"
ok "$([ -n "$n3" ] && [ "$n3" != "$p3" ]; echo $?)" "... the v2's 3/3 is a new patch ($n3)"
is "$(q "SELECT state FROM patches WHERE id = $n3")" queued "... checked and queued"
is "$(q "SELECT subject FROM patches WHERE id = $n3")" "lib: fix line 24" "... in the third place of the series"

# what b4 am makes of the archive is the series in the queue
archive_mbox
mkdir -p "$T/b4"
(cd "$T/dev" && b4 --offline-mode am -m "$T/archive.mbox" -o "$T/b4" "$v1c") > "$T/b4.log" 2>&1
ok $? "b4 am on the archive" || diag "$(cat "$T/b4.log")"
like "$(cat "$T/b4.log")" "Will use the latest revision: v2" "... b4 takes the v2"
is "$(mbox_ids "$T"/b4/v2_*.mbx | tr '\n' ' ')" "$(store_ids $n1 $n2 $n3 | tr '\n' ' ')" \
	"... its three patches are the queue's live series, in order (git patch-id)"

# a reply to the v2's 1/3 reaches the patch it kept
cat > "$T/r1.eml" <<MAIL
From: Rita Reviewer <rita@example.org>
To: stable@vger.kernel.org
Subject: Re: [PATCH 6.1 v2 1/3] lib: fix line 8
Message-Id: <r1-42@example.org>
In-Reply-To: <$(msgid "$T"/v2/v2-0001-*.patch)>
Date: Mon, 1 Sep 2025 12:00:00 +0000

Reviewed-by: Rita Reviewer <rita@example.org>
MAIL
ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck < "$T/r1.eml"
SQ intake >/dev/null 2>&1
is "$(q "SELECT value FROM patch_tags WHERE patch_id = $p1 AND kind = 'reviewed_by'")" rita@example.org \
	"a Reviewed-by on the v2's 1/3 lands on the patch it kept"

# --- a forged v2: another sender, another thread ----------------------------------------
eve() { # N/3 SUBJECT-LINE MSGID [IRT] [IN-BODY-FROM]: Eve's version of a part
	cat <<MAIL
From: Eve Mallory <eve@evil.example>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 13:00:00 +0000
Subject: [PATCH 6.1 $1] $2
Message-Id: <$3>
${4:+In-Reply-To: <$4>}

${5:+From: $5
}
commit $(printf '%040d' 16 | tr 0 c) upstream.

Fix line 16, differently.

Cc: <stable@vger.kernel.org>
Signed-off-by: Jane Dev <jane@example.org>
---
diff --git a/lib.c b/lib.c
--- a/lib.c
+++ b/lib.c
@@ -13,7 +13,7 @@ line 12
 line 13
 line 14
 line 15
-line 16 fixed
+line 16 evil
 line 17
 line 18
 line 19
MAIL
}
eve "v2 2/3" "lib: fix line 16" e1@evil.example > "$T/e1.eml"
ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck < "$T/e1.eml"
out=$(SQ intake 2>&1)
like "$out" "0 superseded" "a forged v2 (other sender, other thread): supersedes nothing" || diag "$out"
is "$(q "SELECT state FROM patches WHERE id = $p2")" queued "... the patch it names stays queued"
e1=$(q "SELECT id FROM patches WHERE message_id = 'e1@evil.example'")
is "$(q "SELECT state FROM patches WHERE id = '$e1'")" held "... the forged diff is stored apart, held"
like "$(q "SELECT state_reason FROM patches WHERE id = '$e1'")" "would replace patch $p2, but it was not sent in the earlier version's thread: stored apart and held until a maintainer confirms it" "... saying why"

# ... and in the thread, naming Jane as the author (git am's in-body From:)
eve "v3 2/3" "lib: fix line 16" e2@evil.example "$v2c" "Jane Dev <jane@example.org>" |
	sed 's/^+line 16 evil$/+line 16 evil too/' > "$T/e2.eml"
ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck < "$T/e2.eml"
out=$(SQ intake 2>&1)
like "$out" "0 superseded" "a forged v3 in the thread from another sender (in-body From: the author): supersedes nothing" || diag "$out"
is "$(q "SELECT state FROM patches WHERE id = $p2")" queued "... the patch stays queued"
like "$(q "SELECT state_reason FROM patches WHERE message_id = 'e2@evil.example'")" "another address sent it than the earlier version's" "... the forged one held, saying another address sent it"

# --- a v3 changing a patch that is in an open rc ------------------------------------------
out=$(SQ rc 2>&1)
like "$out" "6.1.11-rc1 (open), 3 patches" "stableq rc: 6.1.11-rc1 of the three live patches" || diag "$out"
sleep 1.1
# 2/3 changed, 1/3 and 3/3 as they were
cd "$T/dev" && G checkout -q -b v3 master~2 && fix 16 "fixed again" && G cherry-pick master >/dev/null
G format-patch -q -v3 --cover-letter --thread=shallow --in-reply-to="$v2c" \
	--subject-prefix="PATCH 6.1" --to=stable@vger.kernel.org -3 -o "$T/v3"
sed -i 's/\*\*\* SUBJECT HERE \*\*\*/lib fixes/' "$T/v3/v3-0000-cover-letter.patch"
deliver "$T"/v3/*.patch
out=$(SQ intake 2>&1)
like "$out" "0 superseded" "the v3 changes 2/3, which is in the open rc: nothing replaced" || diag "$out"
is "$(q "SELECT state FROM patches WHERE id = $p2")" queued "... the rc's patch stays queued"
v3p2=$(q "SELECT id FROM patches WHERE message_id = '$(msgid "$T"/v3/v3-0002-*.patch)'")
is "$(q "SELECT state FROM patches WHERE id = '$v3p2'")" held "... the v3's 2/3 is stored beside it, held"
like "$(q "SELECT state_reason FROM patches WHERE id = '$v3p2'")" "is in the open rc 6.1.11-rc1: not replaced; a maintainer decides" "... naming the rc"
is "$(live)" "$n1 $p2 $n3 " "... the live series is the rc's"

done_testing
