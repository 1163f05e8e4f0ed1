#!/bin/bash
# 90-make-run.t: the README's Quick start, `make run`, as written, in a
# copy of this checkout (its tracked files, its .git): the daemon with its
# defaults seeds var/queue-6.1 from the shipped queue, processes it end to
# end (import, checks, a candidate that builds, boots and passes) and
# serves the dashboard. Then a maintainer flags a patch over the API and
# the daemon drops it and confirms the queue again. Running all that
# writes nothing into tracked files: `git status` is what it was.
# The copy shares this checkout's stable tree and build directory
# (var/linux, var/build) so that it builds incrementally.
. "$(dirname "$0")/lib/tap.sh"
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

# the shared tree, made once per checkout (as the other kernel tests do)
printf 'tree_dir = %s\n' "$TOP/var/linux" > "$T/init.conf"
(cd "$TOP" && "$STABLEQ" -c "$T/init.conf" --db "$T/init.db" tree init > "$T/init.log" 2>&1)
ok $? "the stable tree is there"

CO=$T/co
mkdir -p "$CO/var"
(cd "$TOP" && git ls-files -z --cached --others --exclude-standard | cpio -0pdm --quiet "$CO")
cp -a "$TOP/.git" "$CO/.git"
ln -s "$TOP/var/linux" "$CO/var/linux"
mkdir -p "$TOP/var/build"
ln -s "$TOP/var/build" "$CO/var/build"
# the objects too, so that make only relinks
[ -d "$TOP/var/obj/plain" ] && mkdir -p "$CO/var/obj" && cp -a "$TOP/var/obj/plain" "$CO/var/obj/"
[ -d "$TOP/var/gen" ] && cp -a "$TOP/var/gen" "$CO/var/"
before=$(git -C "$CO" status --porcelain)

if curl -s -o /dev/null "$URL/"; then
	ok 1 "port 8080 is free for make run" || diag "something already listens on 127.0.0.1:8080"
	done_testing
	exit
fi
(cd "$CO" && exec setsid make run > "$T/run.log" 2>&1 < /dev/null) &
RUN=$!
up=1
for _ in $(seq 600); do
	curl -s -o /dev/null "$URL/api/v1/health" && { up=0; break; }
	sleep 0.5
done
ok $up "make run: the daemon answers on $URL" || diag "$(tail -20 "$T/run.log")"

db() { sqlite3 "$CO/var/stableq.db" "$1" 2> /dev/null; }
verdict=
for _ in $(seq 1500); do
	verdict=$(db "SELECT verdict FROM candidates WHERE purpose = 'queue' ORDER BY id DESC LIMIT 1")
	[ -n "$verdict" ] && break
	sleep 1
done
is "$verdict" pass "the shipped queue is processed end to end: its candidate passes" || diag "$(tail -20 "$T/run.log")"
is "$(db "SELECT COUNT(*) FROM patches WHERE state = 'queued'")" 2 "both shipped patches are queued"
like "$(cat "$T/run.log")" "seeded it from kernel-queue/queue-6.1" "the log says where the running queue lives"
ok $([ -f "$CO/var/queue-6.1/series" ]; echo $?) "the running queue is var/queue-6.1"
page=$(curl -s "$URL/")
like "$page" "<html" "the dashboard is served"
is "$(curl -s "$URL/api/v1/patches" | py "import json,sys; print(len(json.load(sys.stdin)['patches']))")" 2 "GET /api/v1/patches lists them"

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
