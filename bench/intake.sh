#!/bin/sh
# bench/intake.sh: the mail intake (stableq intake) on a public-inbox v2
# archive of N messages (default 10,000: 2,000 [PATCH 6.1] patches in 1,000
# two-patch series, 2,000 patches for other trees, 6,000 replies, some with
# Reviewed-by), cold, then with one new message, against git log -p walking
# the same epoch (reading every message: what public-inbox's own tools do).
# Then, with the daemon running, the time from a NAK landing in a maildir
# to its patch being held. Prints the figures.
#
# The archive: public-inbox-init -V2 and public-inbox-mda make it and add
# its first and last messages; the N-2 between are written with git
# fast-import in the same layout (one commit a message, the message in
# the blob `m`), since public-inbox-mda takes about 1.7 s a message here.
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
python3 - "$N" "$T/stream" "$T/first.eml" "$T/last.eml" <<'PY'
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
        return h + "\ncommit %040x upstream.\n\nFix %d.\n\nCc: stable@vger.kernel.org\nSigned-off-by: Dev <dev@example.org>\n---\n%s" % (i + 1, i, diff(i))
    if k in (2, 3):   # other trees
        h += "Subject: [PATCH 5.10] fix %d\nMessage-Id: <m%d@example.org>\n" % (i, i)
        return h + "\nFix %d.\n\nSigned-off-by: Dev <dev@example.org>\n---\n%s" % (i, diff(i))
    target = i - k    # replies to the series' first patch
    body = "Looks good.\n\nReviewed-by: R%d <r%d@example.org>\n" % (i, i) if k == 4 else "Some comment %d.\n" % i
    h += "Subject: Re: [PATCH 6.1 1/2] fix %d\nMessage-Id: <m%d@example.org>\nIn-Reply-To: <m%d@example.org>\n" % (target, i, target)
    return h + "\n> quoted\n\n" + body
with open(sys.argv[3], "w") as f:
    f.write(msg(n + 10))
with open(sys.argv[4], "w") as f:
    f.write(msg(n + 14).replace("Some comment", "One more comment"))
out = open(sys.argv[2], "wb")
for i in range(n - 2):
    m = msg(i).encode()
    out.write(b"commit refs/heads/master\ncommitter Dev <dev@example.org> %d +0000\ndata 3\nm%d\n" % (1756720800 + i, i % 10))
    if i == 0:
        out.write(b"from refs/heads/master^0\n")
    out.write(b"M 100644 inline m\ndata %d\n" % len(m) + m + b"\n")
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

s=$(now); git --git-dir="$T/inbox/git/0.git" log -p --format=%H > /dev/null; e=$(now)
glog=$(echo "$e - $s" | bc)
s=$(now); "$TOP/stableq" -c "$T/conf" intake > "$T/out1" 2>&1; e=$(now)
cold=$(echo "$e - $s" | bc)
tip=$(git --git-dir="$T/inbox/git/0.git" rev-parse HEAD)
mda < "$T/last.eml"
s=$(now); git --git-dir="$T/inbox/git/0.git" log -p --format=%H "$tip..HEAD" > /dev/null; e=$(now)
glog1=$(echo "$e - $s" | bc)
s=$(now); "$TOP/stableq" -c "$T/conf" intake > "$T/out2" 2>&1; e=$(now)
warm=$(echo "$e - $s" | bc)
patches=$(sqlite3 "$T/bench.db" "SELECT count(*) FROM patches")
echo "intake: public-inbox v2 archive of $msgs messages"
echo "  cold:        $cold s   (git log -p of the epoch: $glog s; ratio $(echo "scale=1; $cold / $glog" | bc))"
echo "               $(cat "$T/out1" | tail -1)"
echo "  one new:     $warm s   (git log -p of the new commit: $glog1 s)"
echo "               $(cat "$T/out2" | tail -1)"
echo "  patches stored: $patches"

# the daemon: a NAK in the maildir, until the patch is held
"$TOP/stableq" -c "$T/conf" serve -d > "$T/daemon.log" 2>&1 &
DPID=$!
sleep 2
id=$(sqlite3 "$T/bench.db" "SELECT id FROM patches WHERE message_id = 'm20@example.org'")
cat > "$T/Maildir/tmp/nak" <<MAIL
From: Nina <nina@example.org>
Subject: Re: [PATCH 6.1 1/2] fix 20
Message-Id: <nak-bench@example.org>
In-Reply-To: <m20@example.org>

NAK: breaks my box.
MAIL
s=$(now); mv "$T/Maildir/tmp/nak" "$T/Maildir/new/nak"
while [ "$(sqlite3 "$T/bench.db" "SELECT state FROM patches WHERE id = $id")" != held ]; do
	sleep 0.05
	[ "$(echo "$(now) - $s > 60" | bc)" = 1 ] && { echo "not held after 60 s" >&2; exit 1; }
done
e=$(now)
echo "daemon: a NAK landing in the maildir to its patch held: $(echo "$e - $s" | bc) s (poll_interval = 1)"
