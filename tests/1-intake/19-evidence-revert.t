#!/bin/bash
# 19-evidence-revert.t: a patch released and later reverted is held,
# whatever Debian's changelog writes around the revert (issue 34, item 1).
# Debian's changelog of linux 6.1 writes its reverts as
#   Revert "drm: Fix ... when
#     calling drm_dev_unplug" (regression in 6.1.167)
#   scsi: Revert "scsi: qla2xxx: ..." (CVE-2025-68818)
#   [s390x] Revert "s390/cio: ..." (regression in 6.1.165)
#   Revert "x86/bugs: ..." on v6.6 and older
#   Revert "Revert "..."" (a revert of a revert: the patch is back)
# The changelog here is written in that format; the subjects are made up.
# A real git tree at 6.1.170; each patch applies (it was taken out again).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/verdicts.sh"
set -u
T=$(mktemp -d)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

NAMES="drm cve closes scsi cio bugs plain rr back"
G init -q "$T/linux"
cd "$T/linux"
printf 'VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 170\n' > Makefile
for f in $NAMES; do
	for i in 1 2 3 4 5 6; do
		printf 'static int %s_function_%d(struct %s_device *dev) { return dev->field_%d; }\n' "$f" "$i" "$f" "$i"
	done > "$f.c"
done
# "back" came back (the revert of its revert): its line is in the tree
sed -i '3a\static int back_line_of_the_fix_that_came_back = 1;' back.c
G add -A && G commit -qm "Linux 6.1.170" && G tag v6.1.170 && G branch -q linux-6.1.y
ok $? "a 6.1.170 tree"

cat > "$T/changelog" <<'EOF'
linux (6.1.170-1) bookworm-security; urgency=high

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.168
    - Revert "drm: Fix use-after-free on framebuffers and property blobs when
      calling drm_dev_unplug" (regression in 6.1.167)
    - Revert "net/foo: Introduce the foo offload for the bar" (CVE-2026-10001)
    - Revert "wifi: baz: avoid the unnecessary wait for the ready message"
      (Closes: #1120680)
    - scsi: Revert "scsi: qla: Perform lockless command completion in abort
      path" (CVE-2025-68818)
    - [s390x] Revert "s390/cio: Fix device lifecycle handling in
      css_alloc_subchannel()" (regression in 6.1.165)
    - Revert "x86/bugs: Make the spectre user default depend on the
      mitigation" on v6.6 and older
    - Revert "plain: take the lock around the plain counter"
    - Revert "Revert "rr: drop the stale rr reference"" (regression in
      6.1.160)
    - Revert "Revert "back: keep the back line after the fix"" (Closes:
      #1000002)

 -- Jane Maintainer <jane@example.org>  Mon, 13 Jan 2026 10:00:00 +0100

linux (6.1.166-1) bookworm-security; urgency=high

  * New upstream stable update:
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.166
    - drm: Fix use-after-free on framebuffers and property blobs when calling
      drm_dev_unplug
    - net/foo: Introduce the foo offload for the bar
    - wifi: baz: avoid the unnecessary wait for the ready message
    - scsi: qla: Perform lockless command completion in abort path
      (CVE-2025-10005)
    - [s390x] cio: Fix device lifecycle handling in css_alloc_subchannel()
    - [x86] bugs: Make the spectre user default depend on the mitigation
    - plain: take the lock around the plain counter
    - Revert "rr: drop the stale rr reference"
    - Revert "back: keep the back line after the fix"
    https://www.kernel.org/pub/linux/kernel/v6.x/ChangeLog-6.1.165
    - back: keep the back line after the fix

 -- Jane Maintainer <jane@example.org>  Mon, 06 Jan 2026 10:00:00 +0100
EOF

mkdir -p "$T/q"
n=0
mail() { # NAME SUBJECT: a patch adding a line to NAME.c
	n=$((n + 1))
	cp "$1.c" "$T/new" && sed -i "2a\\static int $1_line_of_the_fix_number_$n = 1;" "$T/new"
	{
		printf 'From: Greg KH <greg@example.org>\nDate: Mon, 1 Sep 2025 10:00:%02d +0000\n' "$n"
		printf 'Subject: [PATCH 6.1] %s\nMessage-Id: <rv%d.%d@example.org>\n\n' "$2" "$n" $$
		printf 'Body.\n\nCc: stable@vger.kernel.org # 6.1.x\nSigned-off-by: Jane Dev <jane@example.org>\n---\n'
		diff -u --label "a/$1.c" --label "b/$1.c" "$1.c" "$T/new"
	} > "$T/q/$1.patch"
	echo "$1.patch" >> "$T/q/series"
}
mail drm "drm: Fix use-after-free on framebuffers and property blobs when calling drm_dev_unplug"
mail cve "net/foo: Introduce the foo offload for the bar"
mail closes "wifi: baz: avoid the unnecessary wait for the ready message"
mail scsi "scsi: qla: Perform lockless command completion in abort path"
mail cio "s390/cio: Fix device lifecycle handling in css_alloc_subchannel()"
mail bugs "x86/bugs: Make the spectre user default depend on the mitigation"
mail plain "plain: take the lock around the plain counter"
mail rr 'Revert "rr: drop the stale rr reference"'
# back: its line is in the tree; a patch adding it again elsewhere is not
# the point: the released patch itself, whose line the tree has
cp back.c "$T/new" && sed -i '4d' "$T/new"
{
	printf 'From: Greg KH <greg@example.org>\nDate: Mon, 1 Sep 2025 10:00:59 +0000\n'
	printf 'Subject: [PATCH 6.1] back: keep the back line after the fix\nMessage-Id: <rv-back.%d@example.org>\n\n' $$
	printf 'Body.\n\nCc: stable@vger.kernel.org # 6.1.x\nSigned-off-by: Jane Dev <jane@example.org>\n---\n'
	diff -u --label "a/back.c" --label "b/back.c" "$T/new" back.c
} > "$T/q/back.patch"
echo back.patch >> "$T/q/series"
n=$((n + 1))
cd "$T"
verdicts_conf

out=$(SQ import "$T/q" 2>&1)
ok $? "import of $n patches" || diag "$out"
for p in drm cve closes scsi cio bugs plain rr; do
	is "$(v $p fixup)" held "$p: released in 6.1.166, reverted in 6.1.168 -> fixup held"
	is "$(st $p)" held "... $p held, not queued"
done
like "$(vd drm fixup)" "released in 6.1.166 and reverted in 6.1.168" "a revert wrapped and ending in (regression in 6.1.167): both releases named"
like "$(vd cve fixup)" "reverted in 6.1.168" "a revert ending in (CVE-...)"
like "$(vd closes fixup)" "reverted in 6.1.168" "a revert whose (Closes: ...) is on the next line"
like "$(vd scsi fixup)" "reverted in 6.1.168" "scsi: Revert \"scsi: ...\" (CVE-...): the subsystem before the Revert"
like "$(vd cio fixup)" "reverted in 6.1.168" "[s390x] Revert \"s390/cio: ...\" of a patch Debian lists as [s390x] cio: ..."
like "$(vd bugs fixup)" "reverted in 6.1.168" "Revert \"...\" on v6.6 and older"
like "$(vd rr fixup)" "reverted in 6.1.168" "Revert \"Revert \"...\"\" (regression in ...): the revert patch reverted"
is "$(q "SELECT COUNT(*) FROM mail WHERE patch_id = $(id drm)")" 1 "the author of a held patch is told"
# a revert of its revert brought it back: in the tree, not held
is "$(v back fixup)" ok "back: released in 6.1.165, reverted in 6.1.166, back in 6.1.168 -> not held"
is "$(v back applies)" already-applied "... its lines are in the tree -> already-applied"
is "$(st back)" released "... released"
done_testing
