#!/bin/bash
# 05-layers.t: the folders are layers, some split into rooms (subfolders).
# Every #include "x.h" in a layer's sources names a header of its own layer
# or of a layer below it:
#   lib < mail < patch < git;  lib < qemu-runner;  lib < kbuild;
#   all of them < kernel-queue < daemon
# Inside kernel-queue/ the rooms stand on floors, lowest first, and a room
# includes only its own headers and those of the floors below it:
#   store < checks < candidates < revert < review, export, branches < intake
# (review, export and branches, on one floor, never include each other). In daemon/,
# the two doors (http/ and cli/) never include each other; struct app
# (output mode, verbosity) stays in daemon/, the domain below it takes a
# branch context.
# The Makefile compiles each folder (each room of kernel-queue/) with only
# those include paths, so a wrong include also fails to build; this test
# says which line is wrong, and that the Makefile's floors are these.
. "$(dirname "$0")/../lib/tap.sh"
set -u
cd "$TOP"

LAYERS="lib mail patch git qemu-runner kbuild kernel-queue daemon"
declare -A allowed=(
	[lib]="lib"
	[mail]="lib mail"
	[patch]="lib mail patch"
	[git]="lib mail patch git"
	[qemu-runner]="lib qemu-runner"
	[kbuild]="lib kbuild"
	[kernel-queue]="lib mail patch git qemu-runner kbuild kernel-queue"
	[daemon]="lib mail patch git qemu-runner kbuild kernel-queue daemon"
)
# kernel-queue/'s floors, lowest first (rooms of one floor joined by ","):
# a room may include itself and the rooms of the floors below it
KQ_FLOORS="store checks candidates revert review,export,branches intake"
KQ_ROOMS=$(tr "," " " <<<"$KQ_FLOORS")
declare -A below=()
seen=
for floor in $KQ_FLOORS; do
	for r in ${floor//,/ }; do below[$r]=${seen# }; done
	seen+=" ${floor//,/ }"
done
# rooms: a folder of a layer whose sources may not include another room's
declare -A forbidden_rooms=(
	[daemon/http]="daemon/cli"
	[daemon/cli]="daemon/http"
)
# a kernel-queue room's forbidden rooms: every room not below it
for r in $KQ_ROOMS; do
	for o in $KQ_ROOMS; do
		case " $r ${below[$r]} " in
		*" $o "*) ;;
		*) forbidden_rooms[kernel-queue/$r]+="kernel-queue/$o " ;;
		esac
	done
done

# the folder (layer/room) that holds a header of that name; headers are
# unique across the tree, which this test also checks
# (indexed once per repository: one git ls-files, not one per include)
# the project's own files (not tests, fuzzers, benches, guest programs)
sources() { git ls-files -- "$@" | grep -v -e '^tests/' -e '^fuzz/' -e '^bench/' -e '/guest/'; }
declare -A HOME_OF=()
HOME_OF_IN=
index_headers() {
	local f
	HOME_OF=()
	while IFS= read -r f; do
		case "$f" in */*) ;; *) f=./$f ;; esac
		[ -n "${HOME_OF[${f##*/}]:-}" ] || HOME_OF[${f##*/}]=${f%/*}
	done < <(sources '*.h')
	HOME_OF_IN=$PWD
}
home_of() { # home_of HEADER: sets HDIR to its folder, or "nowhere"
	local f
	case "$1" in
	*/*) # a path: the file that ends with it
		f=$(sources "$1" "*/$1" | head -n1)
		HDIR=${f:+$(dirname "$f")}
		HDIR=${HDIR:-nowhere}
		return ;;
	esac
	[ "$HOME_OF_IN" = "$PWD" ] || index_headers
	HDIR=${HOME_OF[$1]:-nowhere}
}
where_is() {
	local HDIR
	home_of "$1"
	echo "$HDIR"
}
# The check itself, on one folder: prints each include that reaches up or
# across into a forbidden room.
violations() { # violations DIR LAYER ALLOWED...
	local dir=$1 f line h home top HDIR
	shift
	for f in "$dir"/*.[ch]; do
		[ -f "$f" ] || continue
		while IFS= read -r line; do
			h=${line#*\"}
			h=${h%%\"*}
			home_of "$h"
			home=$HDIR
			top=${home%%/*}
			case " $* " in
			*" $top "*) ;;
			*) echo "$f: #include \"$h\" is in $home/"; continue ;;
			esac
			for r in ${forbidden_rooms[$dir]:-}; do
				[ "$home" = "$r" ] || continue
				case $dir in
				kernel-queue/*) echo "$f: #include \"$h\" is in $home/, not on a floor below" ;;
				*) echo "$f: #include \"$h\" is in $home/, another door" ;;
				esac
			done
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	done
}

# struct app (the output mode, verbosity) is the daemon's: below daemon/ no
# source includes app.h or names struct app (a forward declaration passes
# the include check); the domain takes a struct branch_ctx (lib/ctx.h).
app_below_daemon() {
	git ls-files -- '*.c' '*.h' | grep -v -e '^daemon/' -e '^tests/' -e '^fuzz/' -e '^bench/' |
		xargs -r grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"app\.h"|\<struct app\>' || true
}

# every folder that holds sources, below the layers
index_headers
folders=$(sources '*.c' '*.h' | xargs -n1 dirname | sort -u)
for dir in $folders; do
	layer=${dir%%/*}
	[ -n "${allowed[$layer]:-}" ]
	ok $? "$dir/ is in a known layer ($layer)" || continue
	v=$(violations "$dir" ${allowed[$layer]})
	is "$v" "" "$dir/ includes only from: ${allowed[$layer]}${forbidden_rooms[$dir]:+ (not ${forbidden_rooms[$dir]})}"
done
for layer in $LAYERS; do
	n=$(git ls-files -- "$layer/*.c" | grep -vc '/guest/')
	ok $([ "$n" -gt 0 ]; echo $?) "$layer/ has sources ($n)"
done
# kernel-queue/ holds rooms only: no code at its top; each room is on a floor
n=$(ls kernel-queue/*.[ch] 2>/dev/null | wc -l)
is "$n" "0" "kernel-queue/ keeps its code in rooms ($KQ_ROOMS)"
rooms=$(sources 'kernel-queue/*' | cut -d/ -f2 | sort -u | tr '\n' ' ')
is "$rooms" "$(tr ' ' '\n' <<<"$KQ_ROOMS" | sort | tr '\n' ' ')" "every room of kernel-queue/ stands on a floor"
# the Makefile compiles each room with the include paths of these floors
for r in $KQ_ROOMS; do
	mk=$(sed -n "s/^KQ_BELOW_$r :=[[:space:]]*//p" Makefile)
	is "$mk" "${below[$r]}" "the Makefile builds kernel-queue/$r/ seeing only ${below[$r]:-itself}"
done
inc=$(make -s -n -B "var/obj/plain/kernel-queue/checks/check.o" 2>/dev/null | grep -o -- '-Ikernel-queue/[a-z]*' | tr '\n' ' ')
is "$inc" "-Ikernel-queue/store -Ikernel-queue/checks " "... so a file of checks/ is compiled with store/ and checks/ only"
is "$(where_is app.h)" "daemon" "app.h (struct app) is in daemon/"
is "$(app_below_daemon)" "" "below daemon/ nothing includes app.h or names struct app"
# each C file's first line names it and says what it is ("/* queue.c: ...")
unnamed=$(git ls-files '*.c' '*.h' | grep -v -e '/guest/' -e '^tests/fixtures/' | while read -r f; do
	head -n 1 "$f" | grep -qE "^(/\*|//) ${f##*/}: " || echo "$f"
done)
is "$unnamed" "" "each C file's first line names it"
dups=$(sources '*.h' | xargs -n1 basename | sort | uniq -d)
is "$dups" "" "header names are unique across the tree"

# The check can fail: a lib file that reaches up into daemon/, and a CLI
# file that reaches into the HTTP door, are caught.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T"
git init -q .
mkdir -p lib daemon/http daemon/cli
printf '#include "strbuf.h"\n#include "api.h"\n' > lib/bad.c
printf '#include "cli.h"\n#include "api.h"\n' > daemon/cli/cmd-bad.c
printf '/* api.h */\n' > daemon/http/api.h && printf '/* strbuf.h */\n' > lib/strbuf.h && printf '/* cli.h */\n' > daemon/cli/cli.h
git add -A
v=$(violations lib lib)
is "$v" 'lib/bad.c: #include "api.h" is in daemon/http/' "a lib file including a daemon header is named"
v=$(violations daemon/cli lib daemon)
is "$v" 'daemon/cli/cmd-bad.c: #include "api.h" is in daemon/http/, another door' "a CLI file including the HTTP door's header is named"
# ... and so are a store file that reaches up into candidates/, and a
# review file that reaches across into export/ (the floor it shares)
mkdir -p kernel-queue/store kernel-queue/candidates kernel-queue/review kernel-queue/export
printf '#include "queue.h"\n#include "candidate.h"\n' > kernel-queue/store/bad.c
printf '#include "candidate.h"\n#include "kcidb.h"\n' > kernel-queue/review/bad.c
printf '/* queue.h */\n' > kernel-queue/store/queue.h && printf '/* candidate.h */\n' > kernel-queue/candidates/candidate.h
printf '/* kcidb.h */\n' > kernel-queue/export/kcidb.h
git add -A
HOME_OF_IN=
v=$(violations kernel-queue/store ${allowed[kernel-queue]})
is "$v" 'kernel-queue/store/bad.c: #include "candidate.h" is in kernel-queue/candidates/, not on a floor below' "a store file including a candidates header (up a floor) is named"
v=$(violations kernel-queue/review ${allowed[kernel-queue]})
is "$v" 'kernel-queue/review/bad.c: #include "kcidb.h" is in kernel-queue/export/, not on a floor below' "a review file including an export header (beside it) is named"
printf 'struct app;\nint f(struct app *a);\n' > lib/fwd.h
printf '#include "app.h"\n' > lib/inc.c && printf '/* app.h */\n' > daemon/app.h
git add -A
is "$(app_below_daemon)" 'lib/fwd.h:1:struct app;
lib/fwd.h:2:int f(struct app *a);
lib/inc.c:1:#include "app.h"' "a lib file naming struct app or including app.h is named"
cd "$TOP"

# The README's Layout section names every layer and room.
layout=$(sed -n '/^## Layout/,/^## /p' "$TOP/README.md")
for dir in $LAYERS $(printf 'kernel-queue/%s ' $KQ_ROOMS) daemon/http daemon/cli; do
	like "$layout" "\`$dir/\`" "README Layout names $dir/"
done

done_testing
