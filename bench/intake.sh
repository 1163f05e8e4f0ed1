#!/bin/sh
# bench/intake.sh: the mail intake (stableq intake) on a public-inbox v2
# archive of N messages (default 10,000: 2,000 [PATCH 6.1] patches in 1,000
# two-patch series, 2,000 patches for other trees, 6,000 replies, some with
# Reviewed-by), cold, then with one new message, each against `git log -p`
# walking the same epoch (reading every message) and `public-inbox-index`
# indexing the same archive (public-inbox's own reader), measured in this
# one run. Then, with the daemon running (`stableq serve`): the time from
# a NAK landing in a maildir to its patch held, and from a regression
# report landing in the maildir (a revert of a released patch posted to
# the list) to the revert planned. Prints the figures.
#
# The archive: public-inbox-init -V2 and public-inbox-mda make it and add
# its first message; the N-2 after it and the new one are written with git
# fast-import in the same layout (one commit a message, the message in the
# blob `m`), since public-inbox-mda takes about 1.7 s a message here.
# public-inbox-index then indexes what fast-import wrote, as it indexes
# what any writer added to the epoch.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
N=${N:-10000}
T=$(mktemp -d)
DPID=
trap '[ -n "$DPID" ] && kill $DPID 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"' EXIT
export HOME=$T/home PI_CONFIG=$T/home/pi.config
mkdir -p "$HOME" "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp"
public-inbox-init -V2 stable "$T/inbox" http://example.com/stable stable@vger.kernel.org >/dev/null 2>&1
git config -f "$PI_CONFIG" publicinboxmda.spamcheck none
mda() { ORIGINAL_RECIPIENT=stable@vger.kernel.org public-inbox-mda --no-precheck; }
now() { date +%s.%N; }

# message I as mail text (python: fast)
python3 - "$N" "$T/stream" "$T/first.eml" "$T/last.stream" <<'PY'
import hashlib
import sys
n = int(sys.argv[1])
def diff(i):
    return ("diff --git a/f%d.c b/f%d.c\n--- a/f%d.c\n+++ b/f%d.c\n"
            "@@ -1,3 +1,3 @@\n a\n-b\n+b%d\n c\n" % (i, i, i, i, i))
def msg(i):
    k = i % 10
    a = (i - k) % 97   # a series' patches share their author
    h = "From: Dev %d <dev%d@example.org>\nDate: Mon, 1 Sep 2025 10:00:00 +0000\n" % (a, a)
    if k in (0, 1):   # a two-patch series for 6.1: i and i+1 (k=0 part 1, k=1 part 2)
        part = k + 1
        root = i - k
        h += "Subject: [PATCH 6.1 %d/2] fix %d\nMessage-Id: <m%d@example.org>\n" % (part, i, i)
        if part == 2:
            h += "In-Reply-To: <m%d@example.org>\n" % root
        # upstream SHAs as git makes them: no two share a 12-digit prefix
        sha = hashlib.sha1(b"upstream %d" % i).hexdigest()
        return h + "\ncommit %s upstream.\n\nFix %d.\n\nCc: stable@vger.kernel.org\nSigned-off-by: Dev <dev@example.org>\n---\n%s" % (sha, i, diff(i))
    if k in (2, 3):   # other trees
        h += "Subject: [PATCH 5.10] fix %d\nMessage-Id: <m%d@example.org>\n" % (i, i)
        return h + "\nFix %d.\n\nSigned-off-by: Dev <dev@example.org>\n---\n%s" % (i, diff(i))
    target = i - k    # replies to the series' first patch
    body = "Looks good.\n\nReviewed-by: R%d <r%d@example.org>\n" % (i, i) if k == 4 else "Some comment %d.\n" % i
    h += "Subject: Re: [PATCH 6.1 1/2] fix %d\nMessage-Id: <m%d@example.org>\nIn-Reply-To: <m%d@example.org>\n" % (target, i, target)
    return h + "\n> quoted\n\n" + body
with open(sys.argv[3], "w") as f:
    f.write(msg(n + 10))
def commit(out, i, m, first):
    m = m.encode()
    out.write(b"commit refs/heads/master\ncommitter Dev <dev@example.org> %d +0000\ndata 3\nm%d\n" % (1756720800 + i, i % 10))
    if first:
        out.write(b"from refs/heads/master^0\n")
    out.write(b"M 100644 inline m\ndata %d\n" % len(m) + m + b"\n")
# the one new message, a commit of its own after the others
with open(sys.argv[4], "wb") as f:
    commit(f, n + 14, msg(n + 14).replace("Some comment", "One more comment"), True)
out = open(sys.argv[2], "wb")
for i in range(n - 2):
    commit(out, i, msg(i), i == 0)
PY
mda < "$T/first.eml"
git --git-dir="$T/inbox/git/0.git" fast-import --quiet < "$T/stream"
cat > "$T/conf" <<CONF
db = $T/bench.db
var_dir = $T/var
tree_dir = $T/no-tree
linux_source = $T/no-linux-source.tar.xz
queue_dir = $T/queue
queue_seed =
debian_changelog =
intake_inbox = $T/inbox
intake_maildir = $T/Maildir
poll_interval = 1
listen = 127.0.0.1:0
CONF
msgs=$(git --git-dir="$T/inbox/git/0.git" rev-list --count HEAD)
secs() { echo "$2 - $1" | bc | sed 's/^\./0./'; }

# cold: every message of the epoch
s=$(now); git --git-dir="$T/inbox/git/0.git" log -p --format=%H > /dev/null; e=$(now)
glog=$(secs "$s" "$e")
s=$(now); "$TOP/stableq" -c "$T/conf" intake > "$T/out1" 2>&1; e=$(now)
cold=$(secs "$s" "$e")
s=$(now); public-inbox-index "$T/inbox" > "$T/pi1" 2>&1; e=$(now)
pidx=$(secs "$s" "$e")
# one new message after them
tip=$(git --git-dir="$T/inbox/git/0.git" rev-parse HEAD)
git --git-dir="$T/inbox/git/0.git" fast-import --quiet < "$T/last.stream"
s=$(now); git --git-dir="$T/inbox/git/0.git" log -p --format=%H "$tip..HEAD" > /dev/null; e=$(now)
glog1=$(secs "$s" "$e")
s=$(now); "$TOP/stableq" -c "$T/conf" intake > "$T/out2" 2>&1; e=$(now)
warm=$(secs "$s" "$e")
s=$(now); public-inbox-index "$T/inbox" > "$T/pi2" 2>&1; e=$(now)
pidx1=$(secs "$s" "$e")
patches=$(sqlite3 "$T/bench.db" "SELECT count(*) FROM patches")
indexed=$(sqlite3 "$T/inbox/msgmap.sqlite3" "SELECT count(*) FROM msgmap" 2>/dev/null || echo "?")
ratio() { echo "scale=2; $1 / $2" | bc | sed 's/^\./0./'; }
echo "intake: public-inbox v2 archive of $msgs messages (+1 new), one run"
echo "  cold:     stableq intake $cold s | git log -p of the epoch $glog s ($(ratio "$cold" "$glog")x)" \
	"| public-inbox-index $pidx s ($(ratio "$cold" "$pidx")x)"
echo "            $(tail -1 "$T/out1")"
echo "  one new:  stableq intake $warm s | git log -p of the new commit $glog1 s" \
	"| public-inbox-index $pidx1 s"
echo "            $(tail -1 "$T/out2")"
echo "  patches stored: $patches; messages public-inbox indexed: $indexed"

# the daemon: a NAK in the maildir, until the patch is held; a posted
# revert of a released patch, until its revert is planned
cat >> "$T/conf" <<CONF
auto_revert = plan
CONF
rel=$(sqlite3 "$T/bench.db" "SELECT id FROM patches WHERE message_id = 'm40@example.org'")
REL=$(echo "released 40" | sha1sum | cut -c1-40)   # its commit on the branch
sqlite3 "$T/bench.db" "UPDATE patches SET state = 'released', released_commit = '$REL' WHERE id = $rel"
"$TOP/stableq" -c "$T/conf" serve -d > "$T/daemon.log" 2>&1 &
DPID=$!
sleep 2
waitfor() { # WHAT SQL: until SQL says something, from $s
	while [ -z "$(sqlite3 "$T/bench.db" "$2")" ]; do
		sleep 0.05
		if [ "$(echo "$(now) - $s > 120" | bc)" = 1 ]; then
			echo "$1: not after 120 s" >&2
			cat "$T/daemon.log" >&2
			exit 1
		fi
	done
}
id=$(sqlite3 "$T/bench.db" "SELECT id FROM patches WHERE message_id = 'm20@example.org'")
cat > "$T/Maildir/tmp/nak" <<MAIL
From: Nina <nina@example.org>
Subject: Re: [PATCH 6.1 1/2] fix 20
Message-Id: <nak-bench@example.org>
In-Reply-To: <m20@example.org>

NAK: breaks my box.
MAIL
s=$(now); mv "$T/Maildir/tmp/nak" "$T/Maildir/new/nak"
waitfor "NAK" "SELECT 1 FROM patches WHERE id = $id AND state = 'held'"
e=$(now)
echo "daemon: a NAK landing in the maildir to its patch held: $(secs "$s" "$e") s (poll_interval = 1)"
cat > "$T/Maildir/tmp/revert" <<MAIL
From: Rex Reverter <rex@example.org>
Subject: [PATCH 6.1] Revert "fix 40"
Message-Id: <revert-bench@example.org>

This reverts commit $REL.

It breaks the frobnicator: a regression since the release.

Signed-off-by: Rex Reverter <rex@example.org>
---
diff --git a/f40.c b/f40.c
--- a/f40.c
+++ b/f40.c
@@ -1,3 +1,3 @@
 a
-b40
+b
 c
MAIL
s=$(now); mv "$T/Maildir/tmp/revert" "$T/Maildir/new/revert"
waitfor "revert" "SELECT 1 FROM reverts WHERE patch_id = $rel AND state = 'planned'"
e=$(now)
echo "daemon: a regression report (a posted revert of released patch $rel) landing in the maildir" \
	"to its revert planned: $(secs "$s" "$e") s (poll_interval = 1, auto_revert = plan)"
