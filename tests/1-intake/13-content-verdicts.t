#!/bin/bash
# 13-content-verdicts.t: verdicts from a patch's own lines, never from a
# subject alone (issue 21). A real git tree at 6.1.10 with a history, a
# Debian changelog in Debian's format, and patches made here: released by
# subject but not by content, already there though it applies, released and
# reverted, code that is nowhere, Debian's arch rewrites, older changelog
# sections, a Stable-dep-of whose dependent is not queued, a display name
# with parentheses.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- the tree ------------------------------------------------------------------
G init -q "$T/linux"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
cat > a.c <<'EOF'
static int alpha_read(struct alpha_dev *adev, char *buf, size_t len)
{
	size_t avail = alpha_bytes_available(adev);

	memcpy(buf, adev->fifo, avail);
	return avail;
}
EOF
# beta_start has the released check; a later release changed the line after it
cat > b.c <<'EOF'
static int beta_start(struct beta_dev *bdev)
{
	if (!bdev->regs)
		return -ENODEV;
	beta_write_register(bdev, BETA_CTRL, BETA_CTRL_ENABLE);
	beta_wait_for_ready_bit(bdev, BETA_READY_TIMEOUT_MS);
	return 0;
}
EOF
# a later release moved the flush before the first reset write
cat > c.c <<'EOF'
static void gamma_reset(struct gamma_dev *gdev)
{
	gamma_clear_interrupts(gdev);
	gamma_flush_dma_queue(gdev, GAMMA_FLUSH_ALL);
	gamma_write_register(gdev, GAMMA_RESET, 1);
	gamma_write_register(gdev, GAMMA_RESET, 0);
}
EOF
# the unlock a fix adds is in the file already, on another error path
cat > k.c <<'EOF'
static int kilo_set(struct kilo_dev *kdev, int val)
{
	mutex_lock(&kdev->config_lock);
	if (val > 100) {
		mutex_unlock(&kdev->config_lock);
		return -ERANGE;
	}
	if (val < 0) {
		return -EINVAL;
	}
	kdev->val = val;
	mutex_unlock(&kdev->config_lock);
	return 0;
}
EOF
for f in d knob e e2 f1 f2 f3 g h; do
	for i in 1 2 3 4 5 6; do
		printf 'static int %s_function_%d(struct %s_device *dev) { return dev->field_%d; }\n' "$f" "$i" "$f" "$i"
	done > "$f.c"
done
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10
printf '/* the knob */\n' >> knob.c
G commit -qam "knob: say what the file is"
G commit -q --allow-empty -m 'Revert "knob: turn the knob up"

This reverts commit 0123456789abcdef0123456789abcdef01234567.'
G branch -q linux-6.1.y
ok $? "a 6.1.10 tree with a history and a revert in it"

# --- Debian's changelog --------------------------------------------------------
cat > "$T/changelog" <<'EOF'
linux (6.1.10-1) bookworm; urgency=medium

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.4
    - delta: cache the delta id
    - [x86] bhi: add the bhi helper
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.7
    - alpha: bound the read by the buffer length
    - Revert "delta: cache the delta id"
    - [arm64] add the arm64 helper
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.9
    - alpha: bound the read by the buffer length
    - [s390x] mm: add the s390 helper

 -- Jane Maintainer <jane@example.org>  Mon, 13 Jan 2025 10:00:00 +0100

linux (5.10.3-1) bullseye; urgency=medium

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v5.x/ChangeLog-5.10.3
    - golf: add the golf pool

 -- Jane Maintainer <jane@example.org>  Wed, 13 Jan 2021 10:00:00 +0100
EOF

# --- the patches ---------------------------------------------------------------
mkdir -p "$T/q"
n=0
mail() { # NAME SUBJECT TRAILERS DIFF [FROM-LINE]
	n=$((n + 1))
	{
		printf 'From: Greg KH <greg@example.org>\nDate: Mon, 1 Sep 2025 10:00:%02d +0000\n' "$n"
		printf 'Subject: [PATCH 6.1] %s\nMessage-Id: <c%d.%d@example.org>\n\n' "$2" "$n" $$
		[ -n "${5:-}" ] && printf '%s\n\n' "$5"
		printf 'Body of %s.\n\n%s\nSigned-off-by: Jane Dev <jane@example.org>\n---\n%s\n' "$2" "$3" "$4"
	} > "$T/q/$1.patch"
	echo "$1.patch" >> "$T/q/series"
}
addline() { # FILE AFTER-LINE-NUMBER TEXT: a diff adding TEXT after that line
	cp "$1" "$T/new" && sed -i "$2a\\$3" "$T/new"
	diff -u --label "a/$1" --label "b/$1" "$1" "$T/new"
}
# A: its subject is listed (6.1.7 and 6.1.9) but its lines are not here
mail alpha "alpha: bound the read by the buffer length" "Cc: stable@vger.kernel.org # 6.1.x" "--- a/a.c
+++ b/a.c
@@ -1,6 +1,6 @@
 static int alpha_read(struct alpha_dev *adev, char *buf, size_t len)
 {
-	size_t avail = alpha_fifo_level(adev, ALPHA_FIFO_RX);
+	size_t avail = min(alpha_fifo_level(adev, ALPHA_FIFO_RX), len);
 
 	memcpy(buf, adev->fifo, avail);
 	return avail;"
# B: released (no list says so), a later release changed its context
mail beta "beta: fail the start without registers" "Cc: stable@vger.kernel.org # 6.1.x" "--- a/b.c
+++ b/b.c
@@ -1,5 +1,7 @@
 static int beta_start(struct beta_dev *bdev)
 {
+	if (!bdev->regs)
+		return -ENODEV;
 	beta_write_register(bdev, BETA_CTRL, BETA_CTRL_ENABLE);
 	beta_wait_ready(bdev);
 	return 0;"
# C: applies cleanly, but its line is here already, moved by a later release
mail gamma "gamma: flush the dma queue on reset" "Cc: stable@vger.kernel.org # 6.1.x" "--- a/c.c
+++ b/c.c
@@ -5,2 +5,3 @@
 	gamma_write_register(gdev, GAMMA_RESET, 1);
+	gamma_flush_dma_queue(gdev, GAMMA_FLUSH_ALL);
 	gamma_write_register(gdev, GAMMA_RESET, 0);"
# C2: adds a line the file has elsewhere: a fix, not code already there
mail kilo "kilo: unlock on the negative value path" "Cc: stable@vger.kernel.org # 6.1.x" \
	"$(addline k.c 8 '		mutex_unlock(\&kdev->config_lock);')"
# D: released in 6.1.4, reverted in 6.1.7 (Debian's changelog)
mail delta "delta: cache the delta id" "Cc: stable@vger.kernel.org # 6.1.x" \
	"$(addline d.c 2 'static int delta_cached_id_of_the_device = -1;')"
# D2: a revert commit of its subject is in the tree's history
mail knob "knob: turn the knob up" "Cc: stable@vger.kernel.org # 6.1.x" \
	"$(addline knob.c 2 'static int knob_position_of_the_device = 11;')"
# E: the code it changes is nowhere in e.c; an unversioned Cc: stable
newer="@@ -10,7 +10,7 @@ static int e_probe(struct platform_device *pdev)
 	struct e_priv *priv = platform_get_drvdata(pdev);
 	int irq = platform_get_irq_byname(pdev, \"e-wakeup\");
 
-	devm_request_threaded_irq(&pdev->dev, irq, NULL, e_wake, 0, \"e\", priv);
+	ret = devm_request_threaded_irq(&pdev->dev, irq, NULL, e_wake, IRQF_ONESHOT, \"e\", priv);
 	priv->wakeup_source = device_property_read_bool(&pdev->dev, \"wakeup\");
 	return e_register_the_input_device(priv);
 }"
mail epsilon "e: request the wakeup irq oneshot" "Cc: stable@vger.kernel.org" "--- a/e.c
+++ b/e.c
$newer"
# E2: the same, with a versioned annotation: it still rules
mail epsilon2 "e2: request the wakeup irq oneshot" "Cc: stable@vger.kernel.org # 6.1.x" "--- a/e2.c
+++ b/e2.c
$newer"
# F: Fixes: targets Debian lists with the architecture in brackets
mail fox1 "f1: add a line" 'Fixes: 1111aaaa1111 ("x86/bhi: add the bhi helper")' \
	"$(addline f1.c 3 'static int f1_added_line_for_the_fix = 1;')"
mail fox2 "f2: add a line" 'Fixes: 2222aaaa2222 ("arm64: add the arm64 helper")' \
	"$(addline f2.c 3 'static int f2_added_line_for_the_fix = 1;')"
mail fox3 "f3: add a line" 'Fixes: 3333aaaa3333 ("s390/mm: add the s390 helper")' \
	"$(addline f3.c 3 'static int f3_added_line_for_the_fix = 1;')"
# G: a Fixes: target listed in the changelog's 5.10 section
mail golf "g: add a line" 'Fixes: 4444aaaa4444 ("golf: add the golf pool")' \
	"$(addline g.c 3 'static int g_added_line_for_the_fix = 1;')"
# H: a prerequisite whose dependent is not in the queue
mail hotel "h: add a helper" 'Stable-dep-of: 5555aaaa5555 ("h: use the helper")' \
	"$(addline h.c 3 'static int h_added_helper_for_the_dependent = 1;')"
# I: an in-body From: with a comment in the name
mail india "h: add another line" "Cc: stable@vger.kernel.org # 6.1.x" \
	"$(addline h.c 5 'static int h_added_line_of_russell = 1;')" \
	"From: Russell King (Oracle) <rmk+kernel@armlinux.org.uk>"
cd "$T"

verdicts_conf

out=$(SQ import "$T/q" 2>&1)
ok $? "import of $n patches made against the tree"
like "$out" "imported $n new patches" "... every one is new"

# 1: a subject only points
is "$(v alpha applies)" unknown "a listed subject whose lines are not in the tree -> applies unknown, not already-applied"
is "$(st alpha)" checked "... it stays for a human, never released"
like "$(vd alpha applies)" "a patch of this subject is in 6.1.7 and 6.1.9 (Debian's changelog lists" \
	"... naming what it found: both releases that list the subject"
like "$(vd alpha applies)" "but its lines are not in the tree" "... and that its lines are not here"
like "$(vd alpha applies)" "it may need a backport" "... it may need a backport"
is "$(v beta applies)" already-applied "released lines whose context a later release changed -> already-applied"
is "$(st beta)" released "... released, not a conflict for a human"
like "$(vd beta applies)" "every line it adds is in the tree where they left it" "... the lines are the evidence"

# 2: already there though it applies
is "$(v gamma applies)" already-applied "a patch that applies, whose added line a later release moved -> already-applied"
is "$(st gamma)" released "... never queued to add the line twice"
like "$(vd gamma applies)" "applying it would add them twice" "... saying why"

is "$(v kilo applies)" clean "a fix adding an unlock its file has on another path -> clean, not already-applied"
is "$(st kilo)" queued "... and queued"

# 3: released, then reverted
is "$(v delta fixup)" held "released in 6.1.4 and reverted in 6.1.7 (the changelog) -> held"
is "$(st delta)" held "... held, not queued silently"
like "$(vd delta fixup)" "released in 6.1.4 and reverted in 6.1.7" "... both releases named"
is "$(q "SELECT COUNT(*) FROM mail WHERE patch_id = $(id delta)")" 1 "... and its author is told"
is "$(v knob fixup)" held "a revert commit of its subject in the tree's history -> held"
REV=$(git -C "$T/linux" rev-parse --short=12 linux-6.1.y)
like "$(vd knob fixup)" "reverted by $REV (Revert \"knob: turn the knob up\") in linux-6.1.y's history" "... naming the revert"

# 4: the code must be there
is "$(v epsilon fixes)" absent "removed and context lines nowhere in the file, an unversioned Cc: stable -> absent"
like "$(vd epsilon fixes)" "none of the 5 lines it removes or keeps as context is in e.c" "... with that evidence"
like "$(vd epsilon fixes)" "Cc: stable (unversioned: every tree) does not outweigh that" "... the annotation is named, and outweighed"
is "$(st epsilon)" rejected "... rejected"
is "$(v epsilon2 fixes)" present "the same with a versioned Cc: stable # 6.1.x -> present: the annotation rules"
is "$(st epsilon2)" checked "... and its conflict waits for a human"

# 5: the small ones
is "$(v fox1 fixes)" present "Fixes: x86/bhi: ... listed as [x86] bhi: ... -> present"
like "$(vd fox1 fixes)" "Debian's changelog lists it in 6.1.4" "... in 6.1.4"
is "$(v fox2 fixes)" present "Fixes: arm64: ... listed as [arm64] ... -> present"
is "$(v fox3 fixes)" present "Fixes: s390/mm: ... listed as [s390x] mm: ... -> present"
is "$(v golf fixes)" present "Fixes: a target listed in the changelog's 5.10 section -> present"
like "$(vd golf fixes)" "lists it in 5.10.3, before 6.1" "... naming the older release"
is "$(v hotel fixes)" unknown "a Stable-dep-of prerequisite whose dependent is not queued -> unknown"
like "$(vd hotel fixes)" "Stable-dep-of: 5555aaaa5555" "... with a reason naming the Stable-dep-of"
like "$(why hotel)" "Stable-dep-of: 5555aaaa5555" "... and so does the state reason"
is "$(q "SELECT COUNT(*) FROM patches WHERE state != 'queued' AND (state_reason IS NULL OR state_reason = '' OR state_reason LIKE '%(fixes unknown): ')")" 0 \
	"no patch waits, is held or rejected with an empty reason"
is "$(q "SELECT author_name FROM patches WHERE filename = 'india.patch'")" "Russell King (Oracle)" \
	"an in-body From: Russell King (Oracle) <...> keeps the name as git does"

# nothing else moved: the plain ones are queued
is "$(st fox1),$(st golf),$(st india)" "queued,queued,queued" "the patches with nothing against them are queued"
done_testing
