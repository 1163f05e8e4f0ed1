#!/bin/bash
# 09-exports.t: what a file exports, another file uses. For each object of
# the binary's sources (nm on var/obj/), every global symbol it defines is
# used by another object, or named by a unit test, a fuzzer or a benchmark
# (they reach a module's functions directly); one that no other file uses
# is a file-local function that should be static, or dead code.
. "$(dirname "$0")/../lib/tap.sh"
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$TOP"

# lonely OBJDIR SOURCES... : "symbol file" for each global symbol defined by
# a source's object and used by no other object nor by tests/fuzz/bench
lonely() {
	local dir=$1 c o
	shift
	: > "$T/def"
	: > "$T/use"
	for c in "$@"; do
		o=$dir/${c%.c}.o
		[ -f "$o" ] || { echo "MISSING $o"; continue; }
		nm -g --defined-only "$o" | awk -v f="$c" '$2 ~ /^[TDBR]$/ && $3 != "main" {print $3, f}' >> "$T/def"
		nm -u "$o" | awk -v f="$c" '{print $2, f}' >> "$T/use"
	done
	local others
	others=$(git ls-files 'tests/unit/*.[ch]' 'tests/*.c' 'fuzz/*.c' 'bench/*.c' 2>/dev/null)
	# defined here, used by no other object ...
	sort -u "$T/def" | awk 'NR == FNR { use[$1] = use[$1] " " $2 " "; next }
		{ u = use[$1]; gsub(" " $2 " ", " ", u); if (u !~ /[^ ]/) print }' "$T/use" - |
	while read -r sym file; do
		# ... nor named by a unit test, a fuzzer or a benchmark
		[ -n "$others" ] && grep -qw -- "$sym" $others && continue
		echo "$sym $file"
	done
}

# the objects of ./stableq as the Makefile builds them
obj=var/obj/plain
[ -d "$obj" ] || obj=var/obj/san
srcs=$(git ls-files -- 'lib/*.c' 'mail/*.c' 'patch/*.c' 'git/*.c' 'qemu-runner/*.c' 'kbuild/*.c' 'kernel-queue/*.c' 'daemon/*.c' | grep -v '/guest/')
out=$(lonely "$obj" $srcs)
is "$(grep '^MISSING' <<<"$out")" "" "every source of ./stableq has its object in $obj (make first)"
is "$(grep -v '^MISSING' <<<"$out")" "" "every exported symbol is used by another file (else: static, or gone)"

# The check can fail: an exported function no other file calls is named,
# one another file calls is not.
mkdir -p "$T/x/obj"
printf 'int used(void) { return 1; }\nint lonely_one(void) { return 2; }\n' > "$T/x/a.c"
printf 'int used(void);\nint b(void) { return used(); }\n' > "$T/x/b.c"
(cd "$T/x" && cc -c -o obj/a.o a.c && cc -c -o obj/b.o b.c)
got=$(cd "$T/x" && lonely obj a.c b.c)
is "$got" "b b.c
lonely_one a.c" "an exported function no other file uses is named (and b, which no one calls)"

done_testing
