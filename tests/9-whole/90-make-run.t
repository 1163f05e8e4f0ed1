#!/bin/bash
# 90-make-run.t: the README's Quick start, `make run`, as written, in a
# copy of this checkout (its tracked files, its .git): the daemon with its
# defaults seeds var/queue-6.1 and var/queue-6.12 from the shipped queues,
# processes both end to end (import, checks, a 6.1 candidate that builds,
# boots and passes; on 6.12 the fix's own test passes without it: the fix
# is not-present, and the queue's candidate passes) and serves the
# dashboard. Then a maintainer flags a patch over the API and the daemon
# drops it and confirms the queue again. Running all that writes nothing
# into tracked files: `git status` is what it was.
# The copy shares this checkout's stable trees and build directories
# (var/linux, var/build, var/linux-6.12, var/build-6.12) and build cache
# (var/build-cache) so that it builds incrementally.
# check: serial (kernel trees, builds and QEMU: one such test at a time)
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
RUN=
cleanup() {
	[ -n "$RUN" ] && kill -TERM -- "-$RUN" 2> /dev/null && sleep 2
	[ -n "$RUN" ] && kill -KILL -- "-$RUN" 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
py() { /usr/bin/python3 -c "$1"; }
URL=http://127.0.0.1:8080

# the shared trees, made once per checkout (as the other kernel tests do)
printf 'tree_dir = %s\n' "$TOP/var/linux" > "$T/init.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/init.conf" --db "$T/init.db" tree init > "$T/init.log" 2>&1)
ok $? "the stable tree is there"
printf 'tree_dir = %s\nbranch = linux-6.12.y\nlinux_source = /usr/src/linux-source-6.12.tar.xz\n' "$TOP/var/linux-6.12" > "$T/init612.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/init612.conf" --db "$T/init.db" tree init > "$T/init612.log" 2>&1)
ok $? "the 6.12 tree is there"

CO=$T/co
mkdir -p "$CO/var"
(cd "$TOP" && git ls-files -z --cached --others --exclude-standard | cpio -0pdm --quiet "$CO")
cp -a "$TOP/.git" "$CO/.git"
ln -s "$TOP/var/linux" "$CO/var/linux"
ln -s "$TOP/var/linux-6.12" "$CO/var/linux-6.12"
mkdir -p "$TOP/var/build" "$TOP/var/build-6.12"
ln -s "$TOP/var/build" "$CO/var/build"
ln -s "$TOP/var/build-6.12" "$CO/var/build-6.12"
# and the built states (make run's var/build-cache), as the other kernel
# tests share them: a state any of them built boots from there
mkdir -p "$TOP/var/build-cache"
ln -s "$TOP/var/build-cache" "$CO/var/build-cache"
# the objects too, so that make only relinks
[ -d "$TOP/var/obj/plain" ] && mkdir -p "$CO/var/obj" && cp -a "$TOP/var/obj/plain" "$CO/var/obj/"
[ -d "$TOP/var/gen" ] && cp -a "$TOP/var/gen" "$CO/var/"
before=$(git -C "$CO" status --porcelain)

if curl -s -o /dev/null "$URL/"; then
	ok 1 "port 8080 is free for make run" || diag "something already listens on 127.0.0.1:8080"
	done_testing
	exit
fi
# as a user runs it: stableq reads config/stableq.conf (both branches)
(cd "$CO" && exec env -u STABLEQ_NO_DEFAULT_CONFIG setsid make run > "$T/run.log" 2>&1 < /dev/null) &
RUN=$!
up=1
for _ in $(seq 600); do
	curl -s -o /dev/null "$URL/api/v1/health" && { up=0; break; }
	sleep 0.5
done
ok $up "make run: the daemon answers on $URL" || diag "$(tail -20 "$T/run.log")"

db() { sqlite3 "$CO/var/stableq.db" "$1" 2> /dev/null; }
of() { echo "(SELECT id FROM branches WHERE key = '$1')"; }
verdict=
for _ in $(seq 1500); do
	verdict=$(db "SELECT verdict FROM candidates WHERE purpose = 'queue' AND branch_id = $(of 6.1) ORDER BY id DESC LIMIT 1")
	[ -n "$verdict" ] && break
	sleep 1
done
is "$verdict" pass "the shipped 6.1 queue is processed end to end: its candidate passes" || diag "$(tail -20 "$T/run.log")"
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued' AND branch_id = $(of 6.1)")" 2 "both shipped 6.1 patches are queued"
like "$(cat "$T/run.log")" "seeded it from config/queues/6.1" "the log says where the running queue lives"
like "$(cat "$T/run.log")" "seeded it from config/queues/6.12" "... and 6.12's"
ok $([ -f "$CO/var/queue-6.1/series" ]; echo $?) "the running queue is var/queue-6.1"
ok $([ -f "$CO/var/queue-6.12/series" ]; echo $?) "6.12's is var/queue-6.12"
page=$(curl -s "$URL/")
like "$page" "<html" "the dashboard is served"
is "$(curl -s "$URL/api/v1/patches" | py "import json,sys; print(len(json.load(sys.stdin)['patches']))")" 4 "GET /api/v1/patches lists both queues' patches"

# a maintainer says the test patch is broken: revert first
TOKEN=$(cd "$CO" && ./stableq token add maintainer 2> /dev/null)
victim=$(db "SELECT id FROM patches WHERE subject LIKE '%test_user_copy%'")
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
	-H 'Content-Type: application/json' -d '{"reason": "not wanted here"}' \
	"$URL/api/v1/patches/$victim/flag")
is "$code" 200 "POST /patches/$victim/flag with a token"
state=
for _ in $(seq 900); do
	state=$(db "SELECT state FROM reverts ORDER BY id DESC LIMIT 1")
	[ "$state" = confirmed ] && break
	sleep 1
done
is "$state" confirmed "the daemon drops it and confirms the queue that is left"
# 6.12: the fix's own test passes without it: the bug is not in 6.12
fix=$(db "SELECT id FROM patches WHERE branch_id = $(of 6.12) AND subject LIKE 'x86/uaccess:%'")
v612=
for _ in $(seq 1800); do
	v612=$(db "SELECT verdict FROM candidates WHERE purpose = 'queue' AND branch_id = $(of 6.12) ORDER BY id DESC LIMIT 1")
	[ -n "$v612" ] && break
	sleep 1
done
is "$(db "SELECT state FROM patches WHERE id = $fix")" rejected "6.12: the copy of the get_user_ex fix is rejected"
like "$(db "SELECT detail FROM verdicts WHERE patch_id = $fix AND check_name = 'test'")" \
	"6.12: kunit.usercopy.usercopy_test_unsafe_get_user_fault passes without this patch in candidate" "... as not-present, by its test, in a candidate"
is "$v612" pass "the shipped 6.12 queue (the test) is processed end to end: its candidate passes" || diag "$(tail -20 "$T/run.log")"
is "$(db "SELECT state FROM patches WHERE id = $victim")" dropped "the flagged patch is dropped"
like "$(cat "$CO/var/queue-6.1/series")" "# " "the running queue's series comments it out"

kill -TERM -- "-$RUN"
for _ in $(seq 100); do
	kill -0 "$RUN" 2> /dev/null || break
	sleep 0.1
done
ok $(kill -0 "$RUN" 2> /dev/null; [ $? -ne 0 ]; echo $?) "make run stops on SIGTERM"
RUN=
is "$(git -C "$CO" status --porcelain)" "$before" "git status is what it was: nothing tracked was written"
done_testing
