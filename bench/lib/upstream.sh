# bench/lib/upstream.sh: a generated upstream clone for the benchmarks (sourced).
# bench_upstream_commits FROM TO: git fast-import commands for commits FROM..TO
# of refs/heads/master, C files only; a version tag v6.K every 1,000 commits
# (from v6.2: the commits are newer than a 6.1 branch's base),
# every 10th commit I with a Fixes: naming the upstream commit of bench patch
# I (bench/lib/patches.sh), every 50th a revert instead.
bench_upstream_commits() {
	awk -v from="$1" -v to="$2" 'BEGIN {
	for (i = from; i <= to; i++) {
		msg = sprintf("subsys%d: change number %d\n\nA change.\n", i % 37, i)
		if (i % 10 == 0)
			msg = msg sprintf("\nFixes: %08x%04x (\"subsys: the bug\")\n", i * 7919 + 1048576, 0)
		if (i % 50 == 0)
			msg = "Revert \"subsys: change\"\n\nThis reverts commit " sprintf("%040x", i) ".\n"
		printf "commit refs/heads/master\nmark :%d\ncommitter U <u@example.org> %d +0000\ndata %d\n%s", i, 1600000000 + i * 60, length(msg), msg
		if (i == from && from > 1) printf "from refs/heads/master^0\n"
		printf "M 644 inline f%d.c\ndata %d\n%s\n", i % 100, length(i ""), i
		if (i % 1000 == 0)
			printf "reset refs/tags/v6.%d\nfrom :%d\n", i / 1000 + 1, i
	}
	}'
}

# bench_upstream DIR C: DIR, a git repository of C such commits.
bench_upstream() {
	git init -q "$1" &&
		bench_upstream_commits 1 "$2" | (cd "$1" && git fast-import --quiet) &&
		{ git -C "$1" checkout -q master 2>/dev/null || true; }
}
