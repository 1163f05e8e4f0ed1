#!/bin/bash
# 44-holds-survive.t: holds made by replies on the list survive the checks.
# Patches and replies come in through the real intake (a maildir, `stableq
# intake`): two NAKs (a line starting NAK, a Nacked-by: trailer), two drop
# requests, two #regzbot reports (a new thread, and ^introduced in another
# patch's thread) hold six patches; a quote indented by a space (" > NAK"),
# "we drop this lock" in a review and "No NAK from me" hold nothing. Then
# `stableq check` (the README's "run the checks again") and the daemon's
# check step, set off by a patch left 'imported': the six stay held, their
# reasons as they were, while a hold the checks made (a fix-up of a broken
# patch) is still theirs to re-evaluate.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d /tmp/stableq-44.XXXXXX)
trap 'kill $(cat "$T/daemon.pid" 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib/replies.sh"
replies_tree || exit 1
cd "$T" || exit 1
for n in 1 2 3 4 5 6 7 8 9 10; do patch "$n" "p$n@example.org" > "$T/Maildir/new/10$n.p$n.host"; done

replies_conf "auto_revert = plan"
id() { q "SELECT id FROM patches WHERE message_id = 'p$1@example.org'"; }

out=$(SQ intake 2>&1)
like "$out" "10 patches" "stableq intake: ten patches from the maildir" || diag "$out"
is "$(q "SELECT count(*) FROM patches WHERE state = 'queued'")" 10 "... checked and queued"

# --- the replies ------------------------------------------------------------------------
reply "Nina Nak <nina@example.org>" r1@example.org p1@example.org \
	"NAK: this breaks suspend on my laptop." > "$T/Maildir/new/2001.r1.host"
reply "Nora Nack <nora@example.org>" r2@example.org p2@example.org \
	"Looks wrong to me, the caller holds the lock already.

Nacked-by: Nora Nack <nora@example.org>" > "$T/Maildir/new/2002.r2.host"
reply "Dora Dropper <dora@example.org>" r3@example.org p3@example.org \
	"Please drop this patch, it needs a prerequisite." > "$T/Maildir/new/2003.r3.host"
reply "Dan Drop <dan@example.org>" r4@example.org p4@example.org \
	"Greg, please don't apply this one, it is wrong for 6.1." > "$T/Maildir/new/2004.r4.host"
up5=$(up 5)
reply "Reg Reporter <reg@example.org>" r5@example.org "" \
	"Since 6.1.11 the frobnicator hangs at boot.

#regzbot introduced: ${up5:0:12}" "[REGRESSION] 6.1.11: frobnicator hangs at boot" > "$T/Maildir/new/2005.r5.host"
up6=$(up 6)
reply "Thorsten Tracker <tt@example.org>" r6@example.org p7@example.org \
	"> The lock is taken twice.

The culprit is the patch for line 6, not this one:

#regzbot ^introduced: ${up6:0:12}" > "$T/Maildir/new/2006.r6.host"
reply "Quentin Quote <quentin@example.org>" r7@example.org p7@example.org \
	" > NAK
 > Nacked-by: Someone <someone@example.org>

Whoever wrote that was wrong: this is fine." > "$T/Maildir/new/2007.r7.host"
reply "Rita Reviewer <rita@example.org>" r8@example.org p8@example.org \
	"In this version we drop this lock before calling the callback,
which is what upstream does.

Reviewed-by: Rita Reviewer <rita@example.org>" > "$T/Maildir/new/2008.r8.host"
reply "Fred Fine <fred@example.org>" r9@example.org p9@example.org \
	"No NAK from me, this is fine." > "$T/Maildir/new/2009.r9.host"

out=$(SQ intake 2>&1)
like "$out" "6 held" "the replies: six patches held" || diag "$out"
held=$(q "SELECT group_concat(id) FROM (SELECT id FROM patches WHERE state = 'held' ORDER BY id)")
is "$held" "$(q "SELECT group_concat(id) FROM (SELECT id FROM patches WHERE message_id IN ('p1@example.org', 'p2@example.org', 'p3@example.org', 'p4@example.org', 'p5@example.org', 'p6@example.org') ORDER BY id)")" "... patches 1 to 6"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 1)")" "NAK in a reply from Nina Nak <nina@example.org> (Message-Id <r1@example.org>)" "a line starting NAK: held, naming the reply"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 2)")" "NAK in a reply from Nora Nack" "a Nacked-by: trailer: held"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 3)")" "drop requested in a reply from Dora Dropper" "\"Please drop this patch\": held"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 4)")" "drop requested in a reply from Dan Drop" "\"please don't apply\": held"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 5)")" "regression reported in a reply from Reg Reporter <reg@example.org> (Message-Id <r5@example.org>), #regzbot introduced: ${up5:0:12}" "#regzbot introduced: in a new thread holds the patch it names"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 6)")" "regression reported in a reply from Thorsten Tracker" "#regzbot ^introduced: in another thread holds the patch it names"
like "$(q "SELECT state_reason FROM patches WHERE id = $(id 1)")" "stableq override $(id 1) --reason TEXT" "... the reason names the one command that lifts it"
is "$(q "SELECT state FROM patches WHERE id = $(id 7)")" queued "\" > NAK\", a quote indented by a space: no hold"
is "$(q "SELECT state FROM patches WHERE id = $(id 8)")" queued "\"we drop this lock\" in a review: no hold"
is "$(q "SELECT value FROM patch_tags WHERE patch_id = $(id 8) AND kind = 'reviewed_by'")" rita@example.org "... its Reviewed-by taken"
is "$(q "SELECT state FROM patches WHERE id = $(id 9)")" queued "\"No NAK from me, this is fine\": no hold"
is "$(q "SELECT group_concat(DISTINCT hold) FROM patches WHERE state = 'held'")" reply "... each hold a reply's"
q "SELECT id || ':' || state_reason FROM patches WHERE state = 'held' ORDER BY id" > "$T/reasons.before"

# --- a hold of the checks' own: a fix-up of a broken patch ----------------------------------
SQ flag "$(id 10)" --reason "boot test user-copy fails with it" >/dev/null 2>&1
up10=$(up 10)
patch 11 p11@example.org "Fixes: ${up10:0:12} (\"lib: fix line 10\")" > "$T/Maildir/new/3011.p11.host"
SQ intake >/dev/null 2>&1
is "$(q "SELECT state || ':' || hold FROM patches WHERE id = $(id 11)")" held:check "a fix-up of the broken patch 10: held by the checks"
fixups=$(q "SELECT count(*) FROM verdicts WHERE patch_id = $(id 11) AND check_name = 'fixup'")

# --- stableq check ---------------------------------------------------------------------------
out=$(SQ check 2>&1)
ok $? "stableq check (every patch of the queue again)" || diag "$out"
is "$(q "SELECT count(*) FROM patches WHERE state = 'held' AND hold = 'reply'")" 6 "after stableq check: the six reply holds stay"
q "SELECT id || ':' || state_reason FROM patches WHERE state = 'held' AND hold = 'reply' ORDER BY id" > "$T/reasons.after"
cmp -s "$T/reasons.before" "$T/reasons.after"
ok $? "... their reasons as they were" || diff "$T/reasons.before" "$T/reasons.after" | sed 's/^/# /'
is "$(q "SELECT count(*) FROM verdicts WHERE patch_id = $(id 1) AND check_name = 'applies'")" 2 "... though the checks did run on them (their verdicts are history)"
is "$(q "SELECT count(*) FROM verdicts WHERE patch_id = $(id 11) AND check_name = 'fixup'")" $((fixups + 1)) "the checks' own hold is re-evaluated: a new fixup verdict"
is "$(q "SELECT state || ':' || hold FROM patches WHERE id = $(id 11)")" held:check "... and it still holds (its target is still broken)"

# a hold the checks made that no longer stands (the verdict it rested on
# is gone) is theirs to lift; the same check leaves the replies' alone
q "UPDATE patches SET state = 'held', hold = 'check', state_reason = 'held by an earlier check' WHERE id = $(id 9)"
SQ check >/dev/null 2>&1
is "$(q "SELECT state FROM patches WHERE id = $(id 9)")" queued "a check's hold whose reason is gone: the next check queues it"
is "$(q "SELECT count(*) FROM patches WHERE state = 'held' AND hold = 'reply'")" 6 "... in the same run the six reply holds stay"

# --- the daemon's check step, set off by a patch left 'imported' -----------------------------
# the tree away while a patch comes in: its checks fail, it waits in
# 'imported' for the daemon's check step (which checks the whole queue)
patch 12 p12@example.org > "$T/p12.mail"
mv "$T/linux" "$T/linux.away"
mv "$T/p12.mail" "$T/Maildir/new/3012.p12.host"
out=$(SQ intake 2>&1)
mv "$T/linux.away" "$T/linux"
st=$(q "SELECT state FROM patches WHERE id = $(id 12)")
is "$st" imported "a patch left imported (its checks could not run)"
[ "$st" = imported ] || diag "$out"
"$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1 &
echo $! > "$T/daemon.pid"
for _ in $(seq 120); do
	[ "$(q "SELECT state FROM patches WHERE id = $(id 12)")" != imported ] && break
	sleep 0.5
done
kill "$(cat "$T/daemon.pid")"; wait "$(cat "$T/daemon.pid")" 2>/dev/null
is "$(q "SELECT state FROM patches WHERE id = $(id 12)")" queued "the daemon checked it"
like "$(grep -m1 'step check' "$T/daemon.log")" "started" "... through its check step" || sed 's/^/# /' "$T/daemon.log" | head -20
is "$(q "SELECT count(*) FROM patches WHERE state = 'held' AND hold = 'reply'")" 6 "after the daemon's check step: the six reply holds stay"
q "SELECT id || ':' || state_reason FROM patches WHERE state = 'held' AND hold = 'reply' ORDER BY id" > "$T/reasons.daemon"
cmp -s "$T/reasons.before" "$T/reasons.daemon"
ok $? "... their reasons as they were" || diff "$T/reasons.before" "$T/reasons.daemon" | sed 's/^/# /'

# --- only a maintainer lifts a reply's hold -------------------------------------------------
out=$(SQ override "$(id 1)" --reason "the suspend bug is in another driver" 2>&1)
ok $? "stableq override, the command the reason names" || diag "$out"
is "$(q "SELECT state || ':' || coalesce(hold, 'none') FROM patches WHERE id = $(id 1)")" queued:none "... queues the NAKed patch, its hold ended"

done_testing
