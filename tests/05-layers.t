#!/bin/bash
# 05-layers.t: the folders are layers. Every #include "x.h" in a layer's
# sources names a header of its own folder or of a layer below it:
#   lib < mail < qemu-runner < kernel-queue < daemon
# (mail and qemu-runner stand on lib alone; kernel-queue on all three.)
# The Makefile compiles each folder with only those include paths, so a
# wrong include also fails to build; this test says which line is wrong.
. "$(dirname "$0")/lib/tap.sh"
set -u
cd "$TOP"

declare -A allowed=(
	[lib]="lib"
	[mail]="lib mail"
	[qemu-runner]="lib qemu-runner"
	[kernel-queue]="lib mail qemu-runner kernel-queue"
	[daemon]="lib mail qemu-runner kernel-queue daemon"
)

# which folder holds a header of that name (headers are unique across layers)
home_of() {
	local h=$1 d
	for d in lib mail qemu-runner kernel-queue daemon; do
		[ -f "$d/$h" ] && { echo "$d"; return; }
	done
	echo "nowhere"
}

# The check itself, on a folder given: prints each include that reaches up.
violations() { # violations DIR ALLOWED...
	local dir=$1 f line h home
	shift
	for f in "$dir"/*.[ch]; do
		[ -f "$f" ] || continue
		while IFS= read -r line; do
			h=${line#*\"}
			h=${h%%\"*}
			home=$(home_of "$h")
			case " $* " in
			*" $home "*) ;;
			*) echo "$f: #include \"$h\" is in $home/" ;;
			esac
		done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
	done
}

for dir in lib mail qemu-runner kernel-queue daemon; do
	n=$(ls "$dir"/*.[ch] 2>/dev/null | wc -l)
	ok $([ "$n" -gt 0 ]; echo $?) "$dir/ has sources ($n)"
	v=$(violations "$dir" ${allowed[$dir]})
	is "$v" "" "$dir/ includes only from: ${allowed[$dir]}"
done

# The check can fail: a lib file that reaches up into daemon/ is caught.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir "$T/lib"
printf '#include "strbuf.h"\n#include "api.h"\n' > "$T/lib/bad.c"
cd "$T"
mkdir -p daemon && cp "$TOP/daemon/api.h" daemon/ && cp "$TOP/lib/strbuf.h" lib/
v=$(violations lib lib)
is "$v" 'lib/bad.c: #include "api.h" is in daemon/' "a lib file including a daemon header is named"

# The README's Layout section names every layer.
layout=$(sed -n '/^## Layout/,/^## /p' "$TOP/README.md")
for dir in lib mail qemu-runner kernel-queue daemon; do
	like "$layout" "\`$dir/\`" "README Layout names $dir/"
done

done_testing
