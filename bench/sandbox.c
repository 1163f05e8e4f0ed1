/* sandbox.c: what the build sandbox costs: a child started through it, and one kernel build with and without it. */
#include "err.h"
#include "file.h"
#include "sandbox.h"
#include "spawn.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * bench/bin/sandbox [TREE WORKDIR [JOBS]]
 *
 * Always: 50 starts of `true` through spawn, plain and in the sandbox
 * (sandbox = bwrap, build_user stableq-build when run as root): the cost
 * of one sandboxed child. With TREE (a kernel tree nobody checks out
 * meanwhile: a copy) and WORKDIR: `make tinyconfig` and `make -jJOBS
 * bzImage` (CC=gcc, no ccache: both compile everything) out of tree, into
 * WORKDIR/plain and WORKDIR/sandbox, alternating which goes first over
 * two rounds, so that the machine's other load falls on both alike.
 * Prints one line per figure.
 */

static double run(const struct sandbox *sb, const char *const *argv,
		  const char *cwd, const struct sandbox_bind *binds,
		  const char *log)
{
	struct spawn s = SPAWN_INIT;
	double t0 = now_monotonic();

	s.argv = argv;
	s.cwd = cwd;
	s.sandbox = sb;
	s.binds = binds;
	s.log_path = log;
	if (spawn_run(&s) < 0 || s.status != 0) {
		fprintf(stderr, "%s: %s (status %d; log %s)\n", argv[0],
			err_msg(), s.status, log ? log : "-");
		exit(1);
	}
	spawn_release(&s);
	return now_monotonic() - t0;
}

static double build(const struct sandbox *sb, const char *tree,
		    const char *out, const char *jobs)
{
	char *odir = xstrfmt("O=%s", out), *j = xstrfmt("-j%s", jobs);
	char *log = xstrfmt("%s.log", out);
	const char *cfg[] = { "make", odir, "CC=gcc", "tinyconfig", NULL };
	const char *img[] = { "make", odir, "CC=gcc", j, "bzImage", NULL };
	struct sandbox_bind binds[] = { { tree, NULL, 1 },
					{ out, NULL, 0 },
					{ NULL, NULL, 0 } };
	double t;

	rm_rf(out);
	mkdir_p(out);
	if (sandbox_own(sb, out, 0) < 0) {
		fprintf(stderr, "%s\n", err_msg());
		exit(1);
	}
	t = run(sb, cfg, tree, binds, log);
	t += run(sb, img, tree, binds, log);
	free(odir);
	free(j);
	free(log);
	return t;
}

int main(int argc, char **argv)
{
	struct sandbox sb;
	const char *t[] = { "true", NULL };
	double plain = 0, boxed = 0;

	if (sandbox_init(&sb, "bwrap", "stableq-build", 4096) < 0) {
		fprintf(stderr, "%s\n", err_msg());
		return 1;
	}
	for (int i = 0; i < 50; i++) {
		plain += run(NULL, t, "/", NULL, NULL);
		boxed += run(&sb, t, "/", NULL, NULL);
	}
	printf("start of a child: %.1f ms plain, %.1f ms in the sandbox\n",
	       plain / 50 * 1000, boxed / 50 * 1000);
	if (argc < 3)
		return 0;
	const char *jobs = argc > 3 ? argv[3] : "2";
	char *a = xstrfmt("%s/plain", argv[2]), *b = xstrfmt("%s/sandbox", argv[2]);
	double ta[2], tb[2];
	for (int round = 0; round < 2; round++) {
		if (round == 0) {
			ta[round] = build(NULL, argv[1], a, jobs);
			tb[round] = build(&sb, argv[1], b, jobs);
		} else {
			tb[round] = build(&sb, argv[1], b, jobs);
			ta[round] = build(NULL, argv[1], a, jobs);
		}
		printf("round %d: tinyconfig + bzImage -j%s: %.1f s plain,"
		       " %.1f s in the sandbox\n",
		       round + 1, jobs, ta[round], tb[round]);
		fflush(stdout);
	}
	printf("mean: %.1f s plain, %.1f s in the sandbox (%+.1f %%)\n",
	       (ta[0] + ta[1]) / 2, (tb[0] + tb[1]) / 2,
	       ((tb[0] + tb[1]) / (ta[0] + ta[1]) - 1) * 100);
	free(a);
	free(b);
	sandbox_release(&sb);
	return 0;
}
