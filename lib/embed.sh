#!/bin/sh
# embed.sh: writes C that compiles the given files (sql/, web/) into the binary.
set -eu
i=0
for f in "$@"; do
	printf '__asm__(".section .rodata\\n.balign 16\\nembed_%d_start:\\n.incbin \\"%s\\"\\nembed_%d_end:\\n.byte 0\\n.previous");\n' "$i" "$f" "$i"
	printf 'extern const char embed_%d_start[], embed_%d_end[];\n' "$i" "$i"
	i=$((i + 1))
done
echo '#include "embed.h"'
echo 'const struct embedded_file embedded_files[] = {'
i=0
for f in "$@"; do
	printf '\t{ "%s", embed_%d_start, embed_%d_end },\n' "$f" "$i" "$i"
	i=$((i + 1))
done
echo '\t{ 0, 0, 0 },'
echo '};'
