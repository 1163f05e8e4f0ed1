#!/bin/bash
# 18-released-lines.t: a released patch whose lines later releases touched,
# judged by its lines (issue 21; found on real 6.1.155 patches against
# Debian's 6.1 tree). A line the patch removed that other functions of the
# file also have ("unsigned long i;") does not make it look unapplied: a
# removed run counts as still there only at its place (between the telling
# lines the patch keeps beside it), or when it is long or unique. One that
# is at its place still does. A released patch's added block one line of
# which a later release edited still stands (between both its neighbours).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
set -u
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- the tree: mike released in 6.1.9, then a later release changed a line
# it kept; oscar not applied: the lines it removes stand at their place in
# the #ifndef branch it changes, the ones it adds in the #else branch
G init -q "$T/linux"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 10\n' > Makefile
cat > m.c <<'EOF'
// SPDX-License-Identifier: GPL-2.0
static unsigned long mike_collect(struct mike_dev *mdev, unsigned long nr)
{
	unsigned long i, collected = 0;
	struct mike_item *prev_item = NULL;
	int drained = 0;

	for (i = 0; i < nr; i++, collected++)
		mike_take_the_item(mdev, i, &prev_item);
	return collected;
}

static void mike_other(struct mike_dev *mdev, unsigned long nr)
{
	unsigned long i;

	for (i = 0; i < nr; i++)
		mike_touch_the_item(mdev, i);
}
EOF
cat > o.c <<'EOF'
#ifndef CONFIG_OSCAR_COUNT
static void oscar_collect(struct oscar_dev *odev, unsigned long nr)
{
	struct oscar_item *prev_item = NULL;
	bool drain_allow = true;
	unsigned long i;

	for (i = 0; i < nr; i++)
		oscar_take_the_item(odev, i, &prev_item);
}
#else
static unsigned long oscar_collect(struct oscar_dev *odev, unsigned long nr)
{
	unsigned long i, collected = 0;
	struct oscar_item *prev_item = NULL;
	bool drain_allow = true;

	for (i = 0; i < nr; i++, collected++)
		oscar_take_the_item(odev, i, &prev_item);
	return collected;
}
#endif
EOF
# papa released in 6.1.9; a later release edited one line of the block it added
cat > p.c <<'EOF'
static int papa_config(struct papa_dev *pdev, struct papa_info *info)
{
	/* only set the required fields */
	ctx.base = info->dma_ring_addr / 128;

	/* ring_len has to be a multiple of 8 */
	if (!IS_ALIGNED(info->ring_len, 8) ||
	    info->ring_len > papa_max_descriptors(pdev)) {
		ret = -EINVAL;
		goto error_context;
	}
	ctx.qlen = info->ring_len;
	ctx.rdylist = le16_to_cpu(pdev->qs_handle[0]);
	return 0;
}
EOF
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
ok $? "a 6.1.10 tree"

cat > "$T/changelog" <<'EOF'
linux (6.1.10-1) bookworm; urgency=medium

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.9
    - mike: count what mike_collect collects
    - oscar: count what oscar_collect collects
    - papa: check the ring length

 -- Jane Maintainer <jane@example.org>  Mon, 13 Jan 2025 10:00:00 +0100
EOF

# --- the patches: the same change to mike and to oscar -------------------------
mkdir -p "$T/q"
n=0
counted() { # NAME: the patch that makes NAME_collect count
	n=$((n + 1))
	cat > "$T/q/$1.patch" <<EOF
From: Greg KH <greg@example.org>
Date: Mon, 1 Sep 2025 10:00:0$n +0000
Subject: [PATCH 6.1] $1: count what $1_collect collects
Message-Id: <r$n.$$@example.org>

Return how many items were collected.

Cc: stable@vger.kernel.org # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
--- a/${1:0:1}.c
+++ b/${1:0:1}.c
@@ -2,9 +2,10 @@
-static void $1_collect(struct $1_dev *${1:0:1}dev, unsigned long nr)
+static unsigned long $1_collect(struct $1_dev *${1:0:1}dev, unsigned long nr)
 {
+	unsigned long i, collected = 0;
 	struct $1_item *prev_item = NULL;
 	bool drain_allow = true;
-	unsigned long i;
 
-	for (i = 0; i < nr; i++)
+	for (i = 0; i < nr; i++, collected++)
 		$1_take_the_item(${1:0:1}dev, i, &prev_item);
+	return collected;
 }
EOF
	echo "$1.patch" >> "$T/q/series"
}
counted mike
counted oscar
n=$((n + 1))
cat > "$T/q/papa.patch" <<'EOF'
From: Greg KH <greg@example.org>
Date: Mon, 1 Sep 2025 10:00:09 +0000
Subject: [PATCH 6.1] papa: check the ring length
Message-Id: <r-papa@example.org>

Bound the ring length a guest asks for.

Cc: stable@vger.kernel.org # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
--- a/p.c
+++ b/p.c
@@ -2,5 +2,12 @@
 {
 	/* only set the required fields */
 	ctx.base = info->dma_ring_addr / 128;
+
+	/* ring_len has to be a multiple of 8 */
+	if (!IS_ALIGNED(info->ring_len, 8) ||
+	    info->ring_len > PAPA_MAX_NUM_DESCRIPTORS) {
+		ret = -EINVAL;
+		goto error_context;
+	}
 	ctx.qlen = info->ring_len;
 	ctx.rdylist = le16_to_cpu(pdev->qs_handle[0]);
EOF
echo papa.patch >> "$T/q/series"
cd "$T"
verdicts_conf

out=$(SQ import "$T/q" 2>&1)
ok $? "import of $n patches" || diag "$out"
is "$(v mike applies)" already-applied "released, a kept line changed later, a removed line other functions have -> already-applied"
is "$(st mike)" released "... released, not left for a human"
like "$(vd mike applies)" "released in 6.1.9" "... naming the release"
like "$(vd mike applies)" "every line it adds is in the tree where they left it" "... its lines are the evidence"
is "$(v oscar applies)" clean "its added lines elsewhere, its removed lines at their place -> clean, not already-applied"
is "$(st oscar)" queued "... and queued"
is "$(v papa applies)" already-applied "released, a later release edited one line of the block it added -> already-applied"
is "$(st papa)" released "... released"
like "$(vd papa applies)" "released in 6.1.9" "... naming the release"
done_testing
