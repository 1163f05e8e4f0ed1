#!/bin/bash
# 48-build-sandbox.t: a candidate is built from a patch whose top-level
# Makefile gives `tinyconfig` (the first target a candidate's build makes,
# kbuild/guestconf.c) a prerequisite that runs `id -u` into the build
# directory, then tries to write outside it: into a world-writable
# directory of the checkout, into the kernel tree, into /tmp, and to a
# port on the host's loopback. Built on the real 6.1 tree with the default
# `sandbox = bwrap`: the writes fail, the build is reported as failed,
# nothing outside the build directory changed, and the rule ran as the
# build user, not root (docs/sandbox.md). Fails before the sandbox: the
# marker appears with uid 0.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
# outside the build directory, writable by anyone: only the sandbox can
# keep a build from writing here (not under /tmp: the sandbox has its own)
OUT=$TOP/var/t48-outside.$$
LPID=
TREE=$TOP/var/linux
# what the probe writes when nothing stops it (a run without the sandbox)
PROBED="$TREE/stableq-probe-tree /tmp/stableq-probe-$$"
cleanup() {
	[ -n "$LPID" ] && kill "$LPID" 2>/dev/null
	rm -rf "$T" "$OUT"
	rm -f $PROBED
}
trap cleanup EXIT
# the build user reaches the build directory below it
chmod 755 "$T"
mkdir -p "$OUT" && chmod 1777 "$OUT"
rm -f "$TREE/stableq-probe-tree" # left by a run without the sandbox
(cd "$TOP" && "$STABLEQ" --db "$T/init.db" -c /dev/null tree init > "$T/init.log" 2>&1)
ok $? "tree init imports linux-source-6.1 (or finds it imported)"
tag=$(git -C "$TREE" describe --tags --abbrev=0 linux-6.1.y)
git -C "$TREE" branch -f t48 "$tag"

# a listener on the host's loopback: the build must not reach it
PORT=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
/usr/bin/python3 -c "
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $PORT)); s.listen(5)
while True:
    c, _ = s.accept(); open('$T/connected', 'w').write('yes'); c.close()
" &
LPID=$!

# the patch: a prerequisite of tinyconfig that reaches out
mkdir -p "$T/a" "$T/b" "$T/q"
git -C "$TREE" show "$tag:Makefile" > "$T/a/Makefile"
cp "$T/a/Makefile" "$T/b/Makefile"
cat >> "$T/b/Makefile" <<MK

# stableq-probe: a harmless-looking rule that is not
tinyconfig: stableq-probe
PHONY += stableq-probe
stableq-probe:
	id -u > \$(abs_objtree)/whoami
	-touch \$(abs_srctree)/stableq-probe-tree 2>> \$(abs_objtree)/probe.log
	-echo tmp > /tmp/stableq-probe-$$ 2>> \$(abs_objtree)/probe.log
	-python3 -c "import socket; socket.create_connection(('127.0.0.1', $PORT), 3)" 2>> \$(abs_objtree)/probe.log
	id > $OUT/marker && false # written: stop here (no kernel build for a test that failed)
MK
{
	cat <<'HDR'
From 0000000000000000000000000000000000000048 Mon Sep 17 00:00:00 2001
From: Anyone <anyone@evil.example>
Date: Sat, 6 Dec 2025 06:00:00 +0000
Subject: [PATCH 6.1] kbuild: harmless fix
Message-Id: <20251206060000.48-6.1-queue@stableq.invalid>

This is not an upstream commit: tests/48-build-sandbox.t builds it to see
its Makefile rule fail inside the build sandbox.

Cc: <stable@vger.kernel.org> # 6.1.x
Signed-off-by: Anyone <anyone@evil.example>
---
HDR
	(cd "$T" && diff -u a/Makefile b/Makefile)
	printf -- '-- \n2.39.5\n'
} > "$T/q/0001-kbuild-harmless-fix.patch"
echo 0001-kbuild-harmless-fix.patch > "$T/q/series"
grep -q "id > $OUT/marker" "$T/q/0001-kbuild-harmless-fix.patch"
ok $? "the patch's rule writes outside the build directory"

printf '%s = %s\n' db "$T/stableq.db" var_dir "$T/var" tree_dir "$TREE" branch t48 \
	build_dir "$T/build" build_cache_dir "$T/build-cache" queue_dir "$T/q" \
	kernel_config_dir "$TOP/config/kernel/6.1/quick" tests_file "$TOP/config/tests.conf" > "$T/stableq.conf"
SQ() { (cd "$TOP" && "$STABLEQ" -c "$T/stableq.conf" "$@"); }
db() { sqlite3 "$T/stableq.db" "$1"; }
SQ import "$T/q" > "$T/import.log" 2>&1
ok $? "the patch is imported"
is "$(db "SELECT state FROM patches WHERE id = 1")" queued "... and queued (a maintainer's import)"
is "$(SQ config | sed -n 's/^sandbox = //p')" bwrap "builds run in the sandbox by default"

SQ candidate --json > "$T/c1.json" 2> "$T/c1.log"
rc=$?
is "$rc" 3 "the candidate does not pass (exit 3)"
py() { /usr/bin/python3 -c "$1"; }
is "$(py "import json; print(json.load(open('$T/c1.json'))['verdict'])")" build-failed "verdict: build-failed"
is "$(py "import json; print(json.load(open('$T/c1.json'))['build']['result'])")" failed "... its build: failed"
log=$(db "SELECT log_path FROM builds ORDER BY id DESC LIMIT 1")
like "$(cat "$log")" "$OUT/marker: Read-only file system" "the rule's write outside the build directory failed: read-only"

ok "$([ ! -e "$OUT/marker" ] && echo 0 || echo 1)" "nothing was written outside the build directory"
[ -e "$OUT/marker" ] && diag "marker: $(cat "$OUT/marker")"
is "$(ls -A "$OUT" | wc -l)" 0 "... the world-writable directory is empty"
ok "$([ ! -e "$TREE/stableq-probe-tree" ] && echo 0 || echo 1)" "the kernel tree was not written"
like "$(cat "$T/build/probe.log" 2>/dev/null)" "stableq-probe-tree': Read-only file system" "... the rule's touch there failed: read-only"
ok "$([ ! -e "/tmp/stableq-probe-$$" ] && echo 0 || echo 1)" "the host's /tmp was not written (the sandbox has its own)"
ok "$([ ! -e "$T/connected" ] && echo 0 || echo 1)" "the host's loopback was not reached (no network)"
like "$(cat "$T/build/probe.log" 2>/dev/null)" "ConnectionRefusedError" "... the connection was refused inside"
git -C "$TREE" diff --quiet HEAD
ok $? "the tree's files are the candidate's commit, none changed by the build"
is "$(git -C "$TREE" status --porcelain --untracked-files=all | grep -c stableq-probe)" 0 "... and none added"

who=$(cat "$T/build/whoami" 2>/dev/null)
want=$(id -u stableq-build 2>/dev/null || id -u)
ok "$([ -n "$who" ] && [ "$who" != 0 ] && echo 0 || echo 1)" "the rule ran as a non-root user (uid ${who:-none})"
is "$who" "$want" "... the build user"
is "$(stat -c %U "$T/build/whoami" 2>/dev/null)" "$(id -un "$want")" "... whose file it wrote in the build directory"
diag "$(grep -h 'building\|build [0-9]* \|FAILED' "$T/c1.log")"
done_testing
