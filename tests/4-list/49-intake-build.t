#!/bin/bash
# 49-intake-build.t: what stableq builds, and how. A small git tree whose
# Makefile's tinyconfig rule writes `id` outside the build directory (a
# world-writable directory of the checkout), and mail from the list:
#  - intake_build = none (the default): a list patch is imported and
#    checked, then waits in `checked` for a maintainer, through re-checks
#    and a running daemon (no candidate, nothing built); `stableq
#    override` queues it;
#  - intake_build = trusted: a sender in intake_trusted (an address or an
#    @domain) is queued by the checks, anyone else waits;
#  - `sandbox = none` as root: `stableq candidate` refuses to build,
#    naming the fix, and nothing runs;
#  - `sandbox = bwrap`: the rule runs as the build user, its write outside
#    fails (read-only), the build is reported failed.
# Fails before intake_build (the daemon builds the list patch as root and
# the marker appears) and before the sandbox.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
OUT=$TOP/var/t49-outside.$$
DPID=
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	rm -rf "$T" "$OUT"
}
trap cleanup EXIT
chmod 755 "$T" # the build user reaches the tree and build directory
mkdir -p "$TOP/var" "$OUT" && chmod 1777 "$OUT"
G() { git -c user.name=t -c user.email=t@example.org -c init.defaultBranch=master "$@"; }

G init -q "$T/linux"
cd "$T/linux"
for i in $(seq 1 40); do echo "lib line $i"; done > lib.c
cat > Makefile <<MK
# a kernel tree's Makefile, as far as stableq's build is concerned
tinyconfig:
	id -u > \$(O)/whoami
	id > $OUT/marker
MK
G add -A && G commit -qm "Linux 6.1.10" && G tag v6.1.10 && G branch -q linux-6.1.y
cd "$TOP"

mkdir -p "$T/Maildir/new" "$T/Maildir/cur" "$T/Maildir/tmp" "$T/kconfig"
echo "CONFIG_PRINTK=y" > "$T/kconfig/base.config"
n=0
mail() { # FROM LINE: a patch mail changing lib.c's line LINE
	n=$((n + 1))
	sed -i "s/^lib line $2\$/lib line $2 fixed/" "$T/linux/lib.c"
	d=$(git -C "$T/linux" diff)
	git -C "$T/linux" checkout -q lib.c
	cat > "$T/Maildir/tmp/$n.host" <<MAIL
From: Sender $n <$1>
To: stable@vger.kernel.org
Date: Mon, 1 Sep 2025 10:00:0$n +0000
Subject: [PATCH 6.1] lib: fix line $2
Message-Id: <m$n.$$@example.org>

commit $(printf '%012d' "$n")aaaaaaaaaaaaaaaaaaaaaaaaaaaa upstream.

Fix line $2.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Sender $n <$1>
---
$d
MAIL
	mv "$T/Maildir/tmp/$n.host" "$T/Maildir/new/"
}
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$T/stableq.conf" <<CONF
db = $T/stableq.db
var_dir = $T/var
debian_changelog =
tree_dir = $T/linux
build_dir = $T/build
build_cache_dir = $T/build-cache
queue_dir = $T/queue
queue_seed =
kernel_config_dir = $T/kconfig
test_baseline = no
poll_interval = 1
listen = 127.0.0.1:$PORT
intake_maildir = $T/Maildir
CONF
SQ() { "$STABLEQ" -c "$T/stableq.conf" "$@"; }
q() { sqlite3 "$T/stableq.db" "$1"; }
state() { q "SELECT state FROM patches WHERE id = $1"; }
line() { q "SELECT $1 FROM patches WHERE subject = 'lib: fix line $2'"; }

like "$(SQ serve -n 2>&1)" "builds: in bubblewrap as $(id -un stableq-build 2>/dev/null || id -un)" "serve -n says how builds run"
sed 's/^debian_changelog =$/build_user = no-such-user-49\n&/' "$T/stableq.conf" > "$T/nouser.conf"
out=$("$STABLEQ" -c "$T/nouser.conf" serve -n 2>&1)
rc=$?
if [ "$(id -u)" = 0 ]; then
	is "$rc" 1 "serve -n, run as root, with a build_user that does not exist: refused"
	like "$out" "build_user no-such-user-49: no such user: \`make deps\` makes it" "... naming the fix"
else
	is "$rc" 0 "serve -n as a user: build_user is not used"
fi

# --- intake_build = none: list mail is checked, not built -----------------------
is "$(SQ config | sed -n 's/^intake_build = //p')" none "intake_build is none by default"
mail anyone@evil.example 3
SQ intake > "$T/intake1.log" 2>&1
ok $? "stableq intake reads the list's patch"
is "$(state 1)" checked "it is checked, not queued"
like "$(q "SELECT state_reason FROM patches WHERE id = 1")" \
	"from the list (anyone@evil.example): not built before a maintainer queues it (intake_build = none): stableq override 1" \
	"... the reason says why and names the command"
is "$(q "SELECT result FROM verdicts WHERE patch_id = 1 AND check_name = 'applies'")" clean "... its checks ran (it applies)"
is "$(q "SELECT origin || ' ' || sender FROM patch_origins WHERE patch_id = 1")" "list anyone@evil.example" "... and its origin is stored"
SQ check > "$T/check1.log" 2>&1
is "$(state 1)" checked "checking again keeps it waiting"

# the daemon: intake, checks, and no candidate of it
"$STABLEQ" -c "$T/stableq.conf" serve -d > "$T/daemon.log" 2>&1 &
DPID=$!
mail anyone@evil.example 10
for _ in $(seq 60); do
	[ "$(state 2)" = checked ] && break
	sleep 0.5
done
is "$(state 2)" checked "the daemon's intake and checks: the second list patch waits too"
sleep 4 # several passes of the daemon
is "$(q "SELECT COUNT(*) FROM candidates")" 0 "... and the daemon builds nothing of them"
ok "$([ ! -e "$OUT/marker" ] && echo 0 || echo 1)" "... nothing ran"
[ -e "$OUT/marker" ] && diag "marker: $(cat "$OUT/marker")"
kill "$DPID"; wait "$DPID" 2>/dev/null; DPID=

SQ override 1 --reason "reviewed: a harmless fix" > "$T/override.log" 2>&1
ok $? "a maintainer queues it (stableq override)"
is "$(state 1)" queued "... it is queued"
SQ check > "$T/check2.log" 2>&1
is "$(state 1)" queued "... and stays queued when checked again"
is "$(state 2)" checked "... the other one still waits"

# --- intake_build = trusted ---------------------------------------------------------
printf 'intake_build = trusted\nintake_trusted = Maint@Example.org, @trusted.example\n' >> "$T/stableq.conf"
mail dev@TRUSTED.example 17
mail maint@example.org 24
mail other@evil.example 31
SQ intake > "$T/intake2.log" 2>&1
ok $? "stableq intake with intake_build = trusted"
is "$(line state 17)" queued "a sender of a trusted @domain (any case): queued by its checks"
is "$(line state 24)" queued "a trusted address (any case): queued"
is "$(line state 31)" checked "anyone else: waits"
like "$(line state_reason 31)" "(intake_build = trusted, the sender is not in intake_trusted)" "... saying so"
SQ check > "$T/check3.log" 2>&1
is "$(line state 17),$(line state 24),$(line state 31)" "queued,queued,checked" "checked again: the same"

# --- sandbox = none as root: refused ---------------------------------------------------
printf 'sandbox = none\n' >> "$T/stableq.conf"
ncand=$(q "SELECT COUNT(*) FROM candidates")
out=$(SQ candidate 2>&1)
rc=$?
if [ "$(id -u)" = 0 ]; then
	ok "$([ "$rc" -ne 0 ] && [ "$rc" -ne 3 ] && echo 0 || echo 1)" "sandbox = none as root: stableq candidate refuses (exit $rc)"
	like "$out" "refusing to run code from a patch as root outside the sandbox" "... saying so"
	like "$out" "set \`sandbox = bwrap\`" "... and naming the fix"
	diag "$out"
	is "$(q "SELECT COUNT(*) FROM builds")" 0 "... nothing was built"
	is "$(q "SELECT COUNT(*) FROM candidates")" "$ncand" "... no candidate was made"
	ok "$([ ! -e "$OUT/marker" ] && echo 0 || echo 1)" "... nothing ran"
else
	ok "$([ "$rc" -ne 0 ] || [ -e "$OUT/marker" ] && echo 0 || echo 1)" "sandbox = none as a user: the build runs as that user"
fi

# --- sandbox = bwrap: the rule runs, as the build user, and cannot write outside --------
sed -i 's/^sandbox = none$/sandbox = bwrap/' "$T/stableq.conf"
rm -f "$OUT/marker"
SQ candidate --json > "$T/c.json" 2> "$T/c.log"
is "$?" 3 "sandbox = bwrap: the candidate runs and does not pass (exit 3)"
is "$(/usr/bin/python3 -c "import json; print(json.load(open('$T/c.json'))['verdict'])")" build-failed "... build-failed"
log=$(q "SELECT log_path FROM builds ORDER BY id DESC LIMIT 1")
like "$(cat "$log" 2>/dev/null)" "$OUT/marker: Read-only file system" "... the rule's write outside the build directory: read-only"
ok "$([ ! -e "$OUT/marker" ] && echo 0 || echo 1)" "... nothing was written there"
who=$(cat "$T/build/whoami" 2>/dev/null)
ok "$([ -n "$who" ] && [ "$who" != 0 ] && echo 0 || echo 1)" "... the rule ran, not as root (uid ${who:-none})"
is "$who" "$(id -u stableq-build 2>/dev/null || id -u)" "... as the build user"
diag "$(cat "$T/c.log")"
done_testing
