#!/bin/bash
# 33-release-queue.t: verdicts a stable maintainer would sign. A stable-queue
# release (Greg's and Sasha's formats, tests/fixtures/release-6.1/queue) is
# imported against the tree it was released into, a tarball-style tree with
# no history, with Debian's changelog of the package (a small one in Debian's
# format) as the evidence; then patches for a newer branch and patches nothing
# here knows about; then the same release without the changelog.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
F="$TOP/tests/fixtures/release-6.1"
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

# --- the 6.1.10 tree: 6.1.8 + the queue, one commit as a tarball import ------
cp -r "$F/base" "$T/linux"
cd "$T/linux"
while read -r p; do
	case "$p" in '#'* | '') continue ;; esac
	git apply "$F/queue/$p" || echo "cannot apply $p"
done < "$F/queue/series"
sed -i 's/^SUBLEVEL = 8$/SUBLEVEL = 10/' Makefile
G init -q && G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
ok $? "the 6.1.10 tree: 6.1.8 with the release applied, no history"
cd "$T"
# a stable-queue checkout that has released the one patch the changelog lacks
mkdir -p "$T/sq/releases/6.1.10"
cp "$F/queue/widget-log-the-timer-state.patch" "$T/sq/releases/6.1.10/"

conf() { # NAME CHANGELOG SQ
	cat > "$T/$1.conf" <<CONF
db = $T/$1.db
var_dir = $T/var
tree_dir = $T/linux
debian_changelog = $2
stable_queue_repo = $3
mail_cc = stable@vger.kernel.org
CONF
}
conf rel "$F/changelog.Debian.gz" "$T/sq"
conf plain "" ""
SQ() { local c=$1; shift; "$STABLEQ" -c "$T/$c.conf" "$@"; }
q() { sqlite3 "$T/$1.db" "$2"; }

# --- the release against the tree it was released into -----------------------
out=$(SQ rel import "$F/queue" 2>&1)
ok $? "the release queue (6 patches, Greg's and Sasha's formats) is imported"
like "$out" "6 already in the tree" "... the summary says all 6 are in the tree already"
is "$(q rel "SELECT COUNT(*) FROM changelog_entries")" 13 "Debian's changelog is indexed in the store"
is "$(q rel "SELECT group_concat(DISTINCT result) FROM verdicts WHERE check_name = 'applies'")" already-applied \
	"every patch: applies = already-applied"
is "$(q rel "SELECT group_concat(DISTINCT state) FROM patches")" released "... every patch is released (in the tree), none rejected"
is "$(q rel "SELECT COUNT(*) FROM mail")" 0 "... and no mail is queued"
d() { q rel "SELECT detail FROM verdicts v JOIN patches p ON p.id = v.patch_id WHERE v.check_name = 'applies' AND p.filename = '$1'"; }
like "$(d frob-count-frobs-in-an-unsigned-int.patch)" "released in 6.1.9 (Debian's changelog" \
	"a patch later releases changed (no longer applies in reverse) names its 6.1.N"
like "$(d frob-count-frobs-in-an-unsigned-int.patch)" "later releases changed the same lines" "... and says why it does not apply"
like "$(d quux-add-a-helper-for-the-count.patch)" "released in 6.1.9" "a Sasha-style patch: 6.1.9 (its [arm*] prefix and CVE list are Debian's)"
like "$(d quux-take-the-lock-before-reading-the-count.patch)" "released in 6.1.10" "... 6.1.10"
like "$(d frob-bound-the-frobnicator-s-queue-length-against-a-full-ring-and-against-a-stale-tail.patch)" \
	"released in 6.1.10" "a subject Debian's changelog wraps over two lines: 6.1.10"
like "$(d widget-keep-the-widget-alive-until-its-timer-ran.patch)" "released in 6.1.10" "... 6.1.10"
like "$(d widget-log-the-timer-state.patch)" "released in 6.1.10 (the stable-queue checkout has releases/6.1.10/widget-log-the-timer-state.patch)" \
	"a patch the changelog lacks: the stable-queue checkout names its release"
is "$(q rel "SELECT COUNT(*) FROM patches WHERE state_reason NOT LIKE 'already in linux-6.1.y: released in 6.1.%'")" 0 \
	"each state reason says where it was released, first"
out=$(SQ rel check 2>&1)
like "$out" "checked 0" "checking again leaves released patches alone"
before=$(q rel "SELECT COUNT(*) FROM changelog_sources; SELECT indexed_at FROM changelog_sources")
SQ rel import "$F/newer/quux-document-the-counter.patch" > /dev/null 2>&1
is "$(q rel "SELECT COUNT(*) FROM changelog_sources; SELECT indexed_at FROM changelog_sources")" "$before" \
	"the changelog is indexed once, not again for the next import"

# --- patches for a newer branch, and patches nothing here knows ---------------
conf new "$F/changelog.Debian.gz" ""
out=$(SQ new import "$F/newer" 2>&1)
ok $? "patches for a newer branch and others are imported"
v() { q new "SELECT result FROM verdicts v JOIN patches p ON p.id = v.patch_id WHERE v.check_name = '$2' AND p.filename = '$1' ORDER BY v.id DESC LIMIT 1"; }
vd() { q new "SELECT detail FROM verdicts v JOIN patches p ON p.id = v.patch_id WHERE v.check_name = '$2' AND p.filename = '$1' ORDER BY v.id DESC LIMIT 1"; }
st() { q new "SELECT state FROM patches WHERE filename = '$1'"; }
is "$(v drm-xe-fix-the-bo-size-check.patch fixes)" absent "a fix of a file 6.1 does not have -> absent"
like "$(vd drm-xe-fix-the-bo-size-check.patch fixes)" "drivers/gpu/drm/xe/xe_bo.c is not in linux-6.1.y (6.1.10): the bug cannot be in this tree" \
	"... the missing path is the evidence, first"
is "$(st drm-xe-fix-the-bo-size-check.patch)" rejected "... rejected, never queued"
is "$(v wifi-mt76-mt7996-cap-the-tx-power.patch fixes)" absent "an AUTOSEL patch (no tags) for files 6.1 lacks -> absent"
like "$(vd wifi-mt76-mt7996-cap-the-tx-power.patch fixes)" "mt7996/mac.c, drivers/net/wireless/mediatek/mt76/mt7996/mt7996.h are not in" \
	"... naming every missing path"
is "$(v drm-xe-add-a-helper-for-the-bo-size.patch fixes)" absent "a Stable-dep-of prerequisite of an absent patch -> absent: it goes with it"
like "$(vd drm-xe-add-a-helper-for-the-bo-size.patch fixes)" "\"drm/xe: fix the bo size check\" needs it, and its fixes verdict is absent" \
	"... its reason names the patch that needs it"
is "$(st drm-xe-add-a-helper-for-the-bo-size.patch)" rejected "... rejected with it"
is "$(v frob-add-a-ring-helper.patch fixes)" present "a prerequisite of a present patch -> present"
is "$(st frob-add-a-ring-helper.patch)" queued "... queued"
is "$(v frob-pop-only-what-was-pushed.patch fixes)" present "Fixes: a target nothing knows, the lines it removes are in the tree -> present"
like "$(vd frob-pop-only-what-was-pushed.patch fixes)" "the lines it changes are in linux-6.1.y" "... the tree is the evidence, first"
like "$(vd frob-pop-only-what-was-pushed.patch fixes)" "Fixes: 9999aaaa9999 (\"frob: add a pop\") is unknown here" "... then what else was asked"
is "$(v quux-document-the-counter.patch fixes)" unknown "Fixes: a target nothing knows, a patch that only adds lines -> unknown"
is "$(st quux-document-the-counter.patch)" checked "... it waits for a human"
is "$(v frob-check-the-ring-before-pushing.patch fixes)" present "Fixes: a target Debian's changelog lists -> present"
like "$(vd frob-check-the-ring-before-pushing.patch fixes)" "Fixes: f0f0f0f0f0f0 (\"frob: add the frobnicator\") is in linux-6.1.y: Debian's changelog lists it in 6.1.8" \
	"... naming the release it came in"
is "$(v widget-poison-the-state-before-freeing.patch fixes)" absent "Fixes: a target released, then reverted -> absent"
like "$(vd widget-poison-the-state-before-freeing.patch fixes)" "released in 6.1.8 and reverted in 6.1.10" "... saying so"
is "$(q new "SELECT COUNT(*) FROM patches WHERE state = 'queued' AND id IN (SELECT patch_id FROM verdicts WHERE check_name = 'fixes' AND result = 'absent')")" 0 \
	"no absent patch is queued"
is "$(q new "SELECT COUNT(*) FROM mail")" 0 "rejections are nobody's mail: nothing is queued"
is "$(q new "SELECT COUNT(*) FROM patches WHERE state = 'rejected' AND (state_reason LIKE 'Fixes: target absent%' OR state_reason LIKE '%no Fixes: tag%')")" 0 \
	"no reason contradicts its verdict"

# --- the same release without the changelog or a stable-queue checkout -------
out=$(SQ plain import "$F/queue" 2>&1)
ok $? "the release imported with no changelog and no stable-queue checkout"
is "$(q plain "SELECT group_concat(DISTINCT result) FROM verdicts WHERE check_name = 'applies'")" already-applied \
	"every patch is still already-applied"
like "$(q plain "SELECT detail FROM verdicts v JOIN patches p ON p.id = v.patch_id WHERE v.check_name = 'applies' AND p.filename = 'frob-count-frobs-in-an-unsigned-int.patch'")" \
	"applies in reverse once the later queued patch 4 touching the same files is taken out" \
	"a patch later ones changed: it comes out once they are taken out"
is "$(q plain "SELECT COUNT(*) FROM mail")" 0 "... and no mail"
done_testing
