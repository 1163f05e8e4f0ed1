#!/bin/bash
# 28-released-edited.t: released patches whose lines later releases edited,
# decided from evidence a maintainer has (issue 34, item 3), on a tree
# without history (what `stableq tree init` makes of Debian's tarball: one
# commit). A stable-queue checkout (stable_queue_repo: releases/6.1.N/,
# each with its patches and series file, in the stable-queue's format; the
# patches here are made up) shows which later release changed the lines:
# with it the patches are released naming both releases; without it the
# reason says which evidence is missing and how to give it. A linux-stable
# clone (upstream_repo, its v6.1.N tags) tells the release too, by
# bisecting its tags, but for a series edited within its own release.
#   xray     a block of five lines, two of them edited in 6.1.12
#   sierra1  the first patch of a series; the second (sierra2, same release)
#            and 6.1.14 edited its lines
#   delta    its file deleted in 6.1.16
#   zulu     a pure deletion of a duplicate cleanup (the same lines stand
#            elsewhere by definition), a context line edited in 6.1.13:
#            judged by its lines, with or without the checkout
# And follow-ups on that tree (issue 34, item 5), with a linux-stable-shaped
# upstream clone indexed: one backported in 6.1.8, one Debian's changelog
# lists, one whose lines the tree has, one released in v6.1 itself: none is
# missing; one is nowhere: missing.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
set -u
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- 6.1.8's files, in a linux-stable-shaped repository: a commit per
# patch, a tag per release ---------------------------------------------------------
mkdir -p "$T/sq/releases" "$T/q"
G init -q "$T/w"
cd "$T/w"
cat > x.c <<'EOF'
static int xray_setup(struct xray_dev *xdev)
{
	xray_power_on(xdev);
	return 0;
}
EOF
cat > s.c <<'EOF'
static void sierra_init(struct sierra_dev *sdev)
{
	sierra_reset_the_chip(sdev);
}
EOF
cat > d.c <<'EOF'
static int delta_probe(struct delta_dev *ddev)
{
	delta_map_the_registers(ddev);
	delta_enable_the_clock(ddev);
	return 0;
}
EOF
cat > z.c <<'EOF'
static void zulu_close(struct zulu_dev *zdev)
{
	zulu_stop_the_receiver(zdev);
	kfree(zdev->rx_buffer);
	zdev->rx_buffer = NULL;
	zulu_release_the_channel(zdev);
	kfree(zdev->rx_buffer);
	zdev->rx_buffer = NULL;
	zulu_power_the_block_down(zdev);
	zulu_count_the_close(zdev, 1);
}
EOF

# release REL NAME SUBJECT SHA FILE SED: a stable-queue patch of release
# 6.1.REL changing FILE by the sed script (FILE deleted when SED is "rm"),
# applied to the files; NAME also becomes a queued mail when QUEUE is set
n=0
release() {
	local rel=$1 name=$2 subj=$3 sha=$4 f=$5 ed=$6 d
	n=$((n + 1))
	if [ "$ed" = rm ]; then
		d=$(diff -u --label "a/$f" --label /dev/null "$f" /dev/null)
		rm "$f"
	else
		sed "$ed" "$f" > "$T/new"
		d=$(diff -u --label "a/$f" --label "b/$f" "$f" "$T/new")
		cp "$T/new" "$f"
	fi
	mkdir -p "$T/sq/releases/6.1.$rel"
	cat > "$T/sq/releases/6.1.$rel/$name.patch" <<PATCH
From $sha Mon Sep 17 00:00:00 2001
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: $subj

From: Jane Dev <jane@example.org>

commit $sha upstream.

Body of $subj.

Signed-off-by: Jane Dev <jane@example.org>
Signed-off-by: Greg Kroah-Hartman <gregkh@linuxfoundation.org>
---
 $f | 1 +

$d
PATCH
	echo "$name.patch" >> "$T/sq/releases/6.1.$rel/series"
	G add -A && G commit -qm "$subj

commit $sha upstream."
	if [ -n "${QUEUE:-}" ]; then
		cat > "$T/q/$name.patch" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:$(printf %02d $n) +0000
Subject: [PATCH 6.1] $subj
Message-Id: <$name.$$@example.org>

commit $sha upstream.

Body of $subj.

Cc: stable@vger.kernel.org # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
$d
MAIL
		echo "$name.patch" >> "$T/q/series"
	fi
}
sha() { printf '%040x' "$1"; }
G add -A && G commit -qm "Linux 6.1.8" && G tag v6.1.8
# 6.1.9: the patches queued again here, and a release patch of no concern
QUEUE=1 release 9 xray "xray: check the mode before powering up" "$(sha 0xa1)" x.c \
	'3a\	if (xdev->mode > XRAY_MODE_MAX) {\n		dev_err(xdev->dev, "bad mode %d\\n", xdev->mode);\n		xray_power_off_the_device(xdev);\n		return -EINVAL;\n	}'
QUEUE=1 release 9 sierra1 "sierra: bring the engine up at init" "$(sha 0xb1)" s.c \
	'3a\	sierra_load_the_firmware(sdev, SIERRA_FW_DEFAULT);\n	sierra_enable_the_interrupts(sdev, SIERRA_IRQ_ALL);\n	sierra_start_the_engine(sdev, 0);'
QUEUE=1 release 9 sierra2 "sierra: enable only the rx and tx interrupts" "$(sha 0xb2)" s.c \
	's/SIERRA_IRQ_ALL/SIERRA_IRQ_RX | SIERRA_IRQ_TX/;/sierra_start_the_engine/a\	sierra_wait_for_the_engine(sdev);'
QUEUE=1 release 9 delta "delta: enable the clock before the registers" "$(sha 0xd1)" d.c \
	'3i\	delta_enable_the_bus_clock(ddev);'
QUEUE=1 release 9 zulu "zulu: remove the duplicate cleanup" "$(sha 0xe1)" z.c '7,8d'
G tag v6.1.9
# later releases
release 12 xray-mode "xray: say which mode is invalid" "$(sha 0xa2)" x.c \
	's/"bad mode %d\\n"/"invalid mode %u\\n"/;s/-EINVAL/-ERANGE/'
G tag v6.1.12
release 13 zulu-count "zulu: count closes by two" "$(sha 0xe2)" z.c 's/close(zdev, 1)/close(zdev, 2)/'
G tag v6.1.13
release 14 sierra-fast "sierra: start the engine fast" "$(sha 0xb3)" s.c \
	's/engine(sdev, 0)/engine(sdev, SIERRA_ENGINE_FAST)/;s/wait_for_the_engine(sdev)/wait_for_the_engine(sdev, HZ)/'
G tag v6.1.14
release 16 delta-remove "delta: remove the driver" "$(sha 0xd2)" d.c rm
G tag v6.1.16
G commit -q --allow-empty -m "Linux 6.1.20" && G tag v6.1.20
ok 0 "a stable-queue checkout: releases 6.1.9 to 6.1.16, $n patches"

# --- the tree: 6.1.20, one commit (a tarball import) ---------------------------
G init -q "$T/linux"
cp "$T"/w/*.c "$T/linux/"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 20\n' > Makefile
G add -A && G commit -qm "Linux 6.1.20" && G tag v6.1.20 && G branch -q linux-6.1.y
is "$(git rev-list --count HEAD)" 1 "a 6.1.20 tree without history"
[ ! -e d.c ]
ok $? "... 6.1.16 deleted d.c"

cat > "$T/changelog" <<'EOF'
linux (6.1.20-1) bookworm-security; urgency=high

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.9
    - xray: check the mode before powering up
    - sierra: bring the engine up at init
    - sierra: enable only the rx and tx interrupts
    - delta: enable the clock before the registers
    - zulu: remove the duplicate cleanup
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.12
    - xray: say which mode is invalid
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.13
    - zulu: count closes by two
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.14
    - sierra: start the engine fast
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.16
    - delta: remove the driver

 -- Jane Maintainer <jane@example.org>  Mon, 13 Jan 2025 10:00:00 +0100
EOF
cd "$T"

# --- without a stable-queue checkout --------------------------------------------
verdicts_conf
out=$(SQ import "$T/q" 2>&1)
ok $? "import of 5 released patches, no stable_queue_repo" || diag "$out"
for p in xray sierra1 sierra2 delta; do
	is "$(v $p applies)" unknown "$p: released, its lines changed later, nothing says by what -> applies unknown"
	like "$(vd $p applies)" "no stable-queue checkout says which (set stable_queue_repo" "... the reason names the missing evidence and the key that gives it"
done
for p in xray sierra1 sierra2; do is "$(st $p)" checked "$p waits for a human"; done
# its file is gone: the lines went with it, nothing is left to fix
is "$(st delta)" rejected "delta: the file it changes is not in the tree -> rejected, not left for a human"
like "$(why delta)" "d.c is not in linux-6.1.y" "... saying so"
is "$(v zulu applies)" already-applied "zulu: a pure deletion whose lines stand elsewhere, a context line edited later -> already-applied by its lines"
is "$(st zulu)" released "... released"

# --- with it ----------------------------------------------------------------------
rm -f "$T/stableq.db"*
echo "stable_queue_repo = $T/sq" >> "$T/stableq.conf"
out=$(SQ import "$T/q" 2>&1)
ok $? "import again, stable_queue_repo set" || diag "$out"
for p in xray sierra1 sierra2 delta zulu; do
	is "$(v $p applies)" already-applied "$p: -> already-applied"
	is "$(st $p)" released "... released"
done
like "$(vd xray applies)" "released in 6.1.9 (Debian's changelog lists \"xray: check the mode before powering up\"), its lines changed later in 6.1.12 (releases/6.1.12/xray-mode.patch)" \
	"xray: both releases named, and the later release's patch"
like "$(vd xray applies)" "the diff applies in reverse once those releases' patches (the stable-queue checkout's) are taken out" "... and how it was told"
like "$(vd sierra1 applies)" "changed later in 6.1.14 (releases/6.1.14/sierra-fast.patch), 6.1.9 (releases/6.1.9/sierra2.patch)" \
	"sierra1: the series' later patch in its own release and the later release"
like "$(vd sierra2 applies)" "changed later in 6.1.14 (releases/6.1.14/sierra-fast.patch)" "sierra2: the later release"
like "$(vd delta applies)" "changed later in 6.1.16 (releases/6.1.16/delta-remove.patch)" "delta: the release that deleted its file"

# --- with a linux-stable clone instead (upstream_repo: its v6.1.N tags) -------------
objects=$(git -C "$T/w" count-objects)
rm -f "$T/stableq.db"*
verdicts_conf
echo "upstream_repo = $T/w" >> "$T/stableq.conf"
out=$(SQ import "$T/q" 2>&1)
ok $? "import again, upstream_repo a linux-stable clone, no stable-queue checkout" || diag "$out"
for p in xray sierra2 delta zulu; do
	is "$(v $p applies)" already-applied "$p: -> already-applied"
	is "$(st $p)" released "... released"
done
like "$(vd xray applies)" "released in 6.1.9 (Debian's changelog lists \"xray: check the mode before powering up\"), its lines changed later in 6.1.12 (the upstream clone: it comes out in reverse of v6.1.9, not of v6.1.12)" \
	"xray: both releases named, found by the clone's tags"
like "$(vd sierra2 applies)" "changed later in 6.1.14 (the upstream clone" "sierra2: 6.1.14"
like "$(vd delta applies)" "changed later in 6.1.16 (the upstream clone" "delta: 6.1.16 deleted its file"
# a series' first patch, edited by the next of its own release: the tags
# do not tell it apart (the stable-queue checkout did)
is "$(v sierra1 applies)" unknown "sierra1: edited within its own release -> the clone's tags cannot tell: unknown"
is "$(git -C "$T/w" count-objects)" "$objects" "nothing was written into the maintainer's clone"
# --- follow-ups on the history-less tree ----------------------------------------
G init -q "$T/up"
cd "$T/up"
commit() { # FILE LINE MESSAGE: appends LINE to FILE and commits; prints the SHA
	echo "$2" >> "$1" && G add "$1" && G commit -qm "$3" && git rev-parse HEAD
}
commit n.c "int net_first;" "net: start" > /dev/null
G tag v6.0
E=$(commit n.c "int net_early_thing;" "net: add the early thing")
commit n.c "static int net_early_thing_fixed_before_the_series = 1;" "net: fix the early thing

Fixes: ${E:0:12} (\"net: add the early thing\")" > /dev/null
G tag v6.1
G branch -q linux-6.1.y
A=$(commit n.c "int net_thing;" "net: add the thing")
F1=$(commit n.c "static int net_thing_fixed_and_backported_in_6_1_8 = 1;" "net: fix the thing

Fixes: ${A:0:12} (\"net: add the thing\")")
F2=$(commit n.c "static int net_thing_fixed_as_debian_lists_it = 1;" "net: fix the thing as Debian lists it

Fixes: ${A:0:12} (\"net: add the thing\")")
G tag v6.4
F3=$(commit n.c "static int net_thing_fixed_with_its_lines_in_the_tree = 1;" "net: fix the thing a third time

Fixes: ${A:0:12} (\"net: add the thing\")")
F4=$(commit n.c "static int net_thing_fixed_nowhere_yet = 1;" "net: fix the thing a fourth time

Fixes: ${A:0:12} (\"net: add the thing\")")
G tag v6.5
G checkout -q linux-6.1.y
commit n.c "int net_thing;" "net: add the thing

commit $A upstream." > /dev/null
G tag v6.1.5
commit n.c "static int net_thing_fixed_and_backported_in_6_1_8 = 1;" "net: fix the thing

commit $F1 upstream.

Fixes: ${A:0:12} (\"net: add the thing\")" > /dev/null
G tag v6.1.8
G checkout -q master
ok 0 "an upstream clone shaped like linux-stable: mainline v6.0 to v6.5, stable v6.1.5 and v6.1.8"

# the tree has the thing (released in 6.1.5), F1 (6.1.8), F3's line, not F4's
cat > "$T/linux/n.c" <<'EOF'
int net_first;
int net_early_thing;
static int net_early_thing_fixed_before_the_series = 1;
int net_thing;
static int net_thing_fixed_and_backported_in_6_1_8 = 1;
static int net_thing_fixed_with_its_lines_in_the_tree = 1;
EOF
cd "$T/linux"
G add -A && G commit -q --amend -m "Linux 6.1.20" && G tag -f v6.1.20 > /dev/null && G branch -qf linux-6.1.y
is "$(git rev-list --count HEAD)" 1 "the tree still has no history"
sed -i 's|^    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.12|    - net: fix the thing as Debian lists it\n&|' "$T/changelog"
mkdir -p "$T/fq"
backport() { # NAME SUBJECT SHA DIFF
	cat > "$T/fq/$1.patch" <<MAIL
From: Jane Dev <jane@example.org>
Date: Mon, 1 Sep 2025 10:00:00 +0000
Subject: [PATCH 6.1] $2
Message-Id: <$1.$$@example.org>

commit $3 upstream.

Body.

Cc: stable@vger.kernel.org # 6.1.x
Signed-off-by: Jane Dev <jane@example.org>
---
$4
MAIL
	echo "$1.patch" >> "$T/fq/series"
}
backport net "net: add the thing" "$A" "--- a/n.c
+++ b/n.c
@@ -1,3 +1,4 @@
 int net_first;
 int net_early_thing;
 static int net_early_thing_fixed_before_the_series = 1;
+int net_thing;"
cd "$T"
rm -f "$T/stableq.db"*
verdicts_conf
echo "upstream_repo = $T/up" >> "$T/stableq.conf"
out=$(SQ import "$T/fq" 2>&1)
ok $? "import of a backport whose upstream commit four later commits fix" || diag "$out"
is "$(v net followups)" found "... one follow-up is missing"
fu=$(vd net followups)
like "$fu" "${F4:0:12} (\"net: fix the thing a fourth time\", v6.5)" "... the one that is nowhere"
notin() { case "$1" in *"$2"*) ok 1 "$3"; diag "$1" ;; *) ok 0 "$3" ;; esac; }
notin "$fu" "${F1:0:12}" "a follow-up backported in v6.1.8 (the index) is not reported missing"
notin "$fu" "${F2:0:12}" "one Debian's changelog lists is not"
notin "$fu" "${F3:0:12}" "one whose lines the tree has is not"

# a fix of a commit of v6.0 whose follow-up v6.1 released: in the tree
backport early "net: add the early thing" "$E" "--- a/n.c
+++ b/n.c
@@ -1,1 +1,2 @@
 int net_first;
+int net_early_thing;"
out=$(SQ import "$T/fq" 2>&1)
ok $? "import of a patch whose follow-up v6.1 released" || diag "$out"
is "$(v early followups)" none "a follow-up first released in v6.1 is in a 6.1.20 tree: not missing"

# the commands of docs/evidence.md, as written there
mkdir -p "$T/bin" && ln -sf "$STABLEQ" "$T/bin/stableq"
cd "$T"
out=$(PATH="$T/bin:$PATH" stableq -c stableq.conf check 2>&1)
ok $? "stableq -c stableq.conf check (docs/evidence.md)" || diag "$out"
out=$(PATH="$T/bin:$PATH" stableq -c stableq.conf show 1 2>&1)
ok $? "stableq -c stableq.conf show 1 (docs/evidence.md)" || diag "$out"
like "$out" "net: fix the thing a fourth time" "... shows the patch's missing follow-up"
done_testing
