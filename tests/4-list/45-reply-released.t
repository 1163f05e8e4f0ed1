#!/bin/bash
# 45-reply-released.t: revert-first after release, and replies read as a
# person reads them. Patches come in through a maildir and `stableq
# intake`; three are released by `stableq release`, one was applied to the
# branch by hand with `git am` (the checks find it there). Then, on the
# list: a "[REGRESSION] 6.1.11: ..." thread with `#regzbot introduced:
# <upstream sha>`, another naming the stable commit the release made, a
# "please revert" in the thread of the git-am'd patch: each released patch
# is flagged broken, the reporter's mail quoted safely in the flag, as a
# flag from the list (untrusted: nothing is reverted by itself). "No NAK
# from me, this is fine" holds nothing; "NAK withdrawn" from the NAK's
# author is recorded beside the hold (the hold stays), from anyone else it
# is not; a NAK carrying a Tested-by gives no Tested-by; a version range is
# recorded, not resolved.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-45.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib/replies.sh"
replies_tree || exit 1
cd "$T" || exit 1
replies_conf "auto_revert = yes"
id() { q "SELECT id FROM patches WHERE message_id = 'p$1@example.org'"; }

# --- patch 4 applied to the branch by hand, as a maintainer does: git am -------------
patch 4 p4@example.org > "$T/p4.mbox"
(cd "$T/linux" && G checkout -q linux-6.1.y && G am -q "$T/p4.mbox" && G checkout -q master)
ok $? "git am: patch 4 applied to linux-6.1.y by hand"
cp "$T/p4.mbox" "$T/Maildir/new/1004.p4.host"
for n in 1 2 3; do patch "$n" "p$n@example.org" > "$T/Maildir/new/100$n.p$n.host"; done
out=$(SQ intake 2>&1)
like "$out" "4 patches" "stableq intake: four patches" || diag "$out"
is "$(q "SELECT state FROM patches WHERE id = $(id 4)")" released "patch 4 is in the tree already: released by the checks"
out=$(SQ release --force 2>&1)
ok $? "stableq release --force: patches 1 to 3 onto linux-6.1.y" || diag "$out"
is "$(q "SELECT count(*) FROM patches WHERE state = 'released' AND released_commit IS NOT NULL")" 3 "... each with the commit the release made"
stable2=$(q "SELECT released_commit FROM patches WHERE id = $(id 2)")
is "$(git -C "$T/linux" log -1 --format=%s "$stable2")" "lib: fix line 2" "... patch 2's stable commit is on the branch"

# later patches, still in the queue
for n in 5 6 7 8; do patch "$n" "p$n@example.org" > "$T/Maildir/new/200$n.p$n.host"; done
SQ intake >/dev/null 2>&1
is "$(q "SELECT count(*) FROM patches WHERE state = 'queued'")" 4 "four more patches queued"

# --- reports against released patches --------------------------------------------------
up1=$(up 1)
reply "Reg Reporter <reg@example.org>" reg1@example.org "" \
	"Since 6.1.11 the frobnicator hangs at boot, $(printf '\033[31m')red$(printf '\033[0m').
Reverting the lib change makes it boot again.

#regzbot introduced: ${up1:0:12}" "[REGRESSION] 6.1.11: frobnicator hangs at boot" > "$T/Maildir/new/3001.reg1.host"
reply "Tess Tracker <tess@example.org>" reg2@example.org "" \
	"Bisected to the stable commit:

#regzbot introduced: ${stable2:0:12}" "[REGRESSION] 6.1.11: lib line 10 is wrong" > "$T/Maildir/new/3002.reg2.host"
reply "Dora Dropper <dora@example.org>" d4@example.org p4@example.org \
	"Please revert this in 6.1.y, it breaks boot on my box." > "$T/Maildir/new/3003.d4.host"
reply "Fred Fine <fred@example.org>" f3@example.org p3@example.org \
	"No NAK from me, this is fine." > "$T/Maildir/new/3004.f3.host"
reply "Rob Range <rob@example.org>" reg3@example.org "" \
	"Something between these broke my box:

#regzbot introduced: v6.1.10..v6.1.11" "[REGRESSION] 6.1.11: something" > "$T/Maildir/new/3005.reg3.host"
# --- and replies to queued patches --------------------------------------------------------
reply "Fred Fine <fred@example.org>" f5@example.org p5@example.org \
	"No NAK from me, this is fine." > "$T/Maildir/new/3006.f5.host"
reply "Nina Nak <nina@example.org>" n6@example.org p6@example.org \
	"NAK: this breaks suspend on my laptop." > "$T/Maildir/new/3007.n6.host"
reply "Nina Nak <nina@example.org>" n7@example.org p7@example.org \
	"NAK, the caller holds the lock already." > "$T/Maildir/new/3008.n7.host"
reply "Tom Tester <tom@example.org>" t8@example.org p8@example.org \
	"NAK: breaks boot on arm64.

Tested-by: Tom Tester <tom@example.org>" > "$T/Maildir/new/3009.t8.host"
out=$(SQ intake 2>&1)
ok $? "stableq intake: the reports and replies" || diag "$out"

flag1=$(q "SELECT reason FROM flags WHERE patch_id = $(id 1)")
is "$(q "SELECT state FROM patches WHERE id = $(id 1)")" broken "#regzbot introduced: <upstream sha> in a new thread: the released patch is flagged broken"
like "$flag1" "regression reported in a reply from Reg Reporter <reg@example.org> (Message-Id <reg1@example.org>)" "... the flag names the reporter and the mail"
like "$flag1" "> Since 6.1.11 the frobnicator hangs at boot, [31mred[0m." "... and quotes it"
case "$flag1" in *$'\033'*) ok 1 "... made safe: no ESC" ;; *) ok 0 "... made safe: no ESC" ;; esac
like "$flag1" "a mail from the list (untrusted): it reverts nothing by itself" "... a flag from the list: untrusted"
is "$(q "SELECT count(*) FROM mail WHERE patch_id = $(id 1) AND kind = 'flagged'")" 1 "... its author is told"
is "$(q "SELECT state FROM patches WHERE id = $(id 2)")" broken "#regzbot introduced: <stable commit>: flagged too"
like "$(q "SELECT reason FROM flags WHERE patch_id = $(id 2)")" "Tess Tracker <tess@example.org>" "... naming its reporter"
is "$(q "SELECT state FROM patches WHERE id = $(id 4)")" broken "\"please revert\" in the thread of the patch applied with git am: flagged"
is "$(q "SELECT count(*) FROM reverts WHERE state <> 'planned'") $(q "SELECT count(*) FROM patches WHERE state = 'reverted'")" "0 0" \
	"no revert is carried out by the mail itself (auto_revert = yes)"
is "$(git -C "$T/linux" log --format=%s linux-6.1.y | grep -c '^Revert')" 0 "... nothing reverted on the branch"
is "$(q "SELECT state FROM patches WHERE id = $(id 3)") $(q "SELECT count(*) FROM flags WHERE patch_id = $(id 3)")" "released 0" \
	"\"No NAK from me, this is fine\" on a released patch: no flag"
is "$(q "SELECT count(*) FROM reviews WHERE message_id = 'reg3@example.org'") $(q "SELECT coalesce(action, '') FROM mail_messages WHERE message_id = 'reg3@example.org'")" "0 none" \
	"a version range (v6.1.10..v6.1.11) is recorded as a reply, resolved to no patch"

is "$(q "SELECT state FROM patches WHERE id = $(id 5)")" queued "\"No NAK from me, this is fine\" on a queued patch: no hold"
is "$(q "SELECT state FROM patches WHERE id = $(id 6)")" held "a NAK holds patch 6"
is "$(q "SELECT state FROM patches WHERE id = $(id 8)")" held "a NAK with a Tested-by line holds patch 8"
is "$(q "SELECT count(*) FROM patch_tags WHERE patch_id = $(id 8) AND kind = 'tested_by'")" 0 "... and gives no Tested-by"

# --- a NAK taken back --------------------------------------------------------------------
reply "Nina Nak <nina@example.org>" w6@example.org n6@example.org \
	"NAK withdrawn, the fix is in the series already." > "$T/Maildir/new/4001.w6.host"
reply "Rita Reviewer <rita@example.org>" w7@example.org n7@example.org \
	"Please ignore my NAK, I tested the wrong tree." > "$T/Maildir/new/4002.w7.host"
out=$(SQ intake 2>&1)
ok $? "stableq intake: the retractions" || diag "$out"
reason6=$(q "SELECT state_reason FROM patches WHERE id = $(id 6)")
is "$(q "SELECT state FROM patches WHERE id = $(id 6)")" held "\"NAK withdrawn\" by the NAK's author: the hold stays"
like "$reason6" "NAK withdrawn by Nina Nak <nina@example.org> (Message-Id <w6@example.org>)" "... the retraction shown beside it"
like "$reason6" "NAK in a reply from Nina Nak" "... after the NAK"
like "$reason6" "stableq override $(id 6) --reason TEXT" "... with the one command the maintainer decides with"
is "$(q "SELECT effect FROM reviews WHERE message_id = 'w6@example.org'")" withdrawn "... recorded as a retraction"
is "$(q "SELECT effect FROM reviews WHERE message_id = 'w7@example.org'")" recorded "\"ignore my NAK\" from someone who did not NAK: not a retraction"
case "$(q "SELECT state_reason FROM patches WHERE id = $(id 7)")" in *withdrawn*) ok 1 "... nothing beside patch 7's hold" ;; *) ok 0 "... nothing beside patch 7's hold" ;; esac
out=$(SQ check 2>&1)
is "$(q "SELECT state || ':' || state_reason FROM patches WHERE id = $(id 6)")" "held:$reason6" "stableq check: the hold and its retraction stay as they were"
out=$(SQ override "$(id 6)" --reason "Nina withdrew her NAK" 2>&1)
ok $? "stableq override: the maintainer decides" || diag "$out"
is "$(q "SELECT state FROM patches WHERE id = $(id 6)")" queued "... patch 6 queued"

# the same mails delivered again change nothing
cp "$T/Maildir/new/3001.reg1.host" "$T/Maildir/new/5001.reg1copy.host"
before=$(q "SELECT count(*) FROM flags; SELECT count(*) FROM reviews")
SQ intake >/dev/null 2>&1
is "$(q "SELECT count(*) FROM flags; SELECT count(*) FROM reviews")" "$before" "a report delivered twice: one flag, one review"

done_testing
