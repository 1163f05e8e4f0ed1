/* runner.c: a candidate's boot and tests: initramfs, accel, QEMU, verdict. */
#include "runner.h"
#include "err.h"
#include "file.h"
#include "initramfs.h"
#include "karch.h"
#include "qemu.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUSYBOX_PKG "busybox-static"

void runner_result_release(struct runner_result *r)
{
	if (!r)
		return;
	free(r->reason);
	console_report_release(&r->report);
	free(r->accel_why);
	free(r->log_path);
	free(r->initramfs);
	free(r->qemu_cmdline);
	memset(r, 0, sizeof(*r));
}

/*
 * Compiles src into a static out with cc (`CC -static -O2 -Wall`: gcc, or an
 * arch's cross gcc; pkg: its package) unless out is newer than src. 0, or
 * negative with the compiler's output in err_msg().
 */
static int runner_build_static_cc(const char *cc, const char *pkg,
				  const char *src, const char *out)
{
	struct stat ss, os;
	struct spawn s = SPAWN_INIT;
	char *tmp;
	int ret;

	if (stat(src, &ss) < 0)
		return err_set(ERR_NOTFOUND, "%s: %s", src, strerror(errno));
	if (stat(out, &os) == 0 && (os.st_mtim.tv_sec > ss.st_mtim.tv_sec ||
				    (os.st_mtim.tv_sec == ss.st_mtim.tv_sec &&
				     os.st_mtim.tv_nsec >= ss.st_mtim.tv_nsec)))
		return 0;
	tmp = xstrfmt("%s.tmp.%ld", out, (long)getpid());
	const char *argv[] = {cc,   "-static", "-O2", "-Wall",
			      "-o", tmp,       src,   NULL};
	s.argv = argv;
	s.capture = 1;
	s.capture_max = 16 * 1024;
	s.timeout_ms = 120 * 1000;
	ret = spawn_run(&s);
	if (ret == ERR_NOTFOUND) {
		err_set(ret, "%s not found: install the Debian package%s %s "
			     "(`make deps`)", cc, strchr(pkg, ' ') ? "s" : "",
			pkg);
	} else if (ret == 0 && s.status != 0) {
		strbuf_rtrim(&s.out);
		ret = err_set(ERR_INVALID,
			      "%s -static %s failed (status %d)%s%s", cc,
			      src, s.status, s.out.len ? ":\n" : "", s.out.buf);
	} else if (ret == 0 && rename(tmp, out) < 0) {
		ret = err_set(ERR_IO, "%s: %s", out, strerror(errno));
	}
	if (ret < 0)
		unlink(tmp);
	spawn_release(&s);
	free(tmp);
	return ret;
}

/* 1 if path is an ELF executable with a program interpreter (dynamic). */
static int elf_is_dynamic(const char *path)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int fd = open(path, O_RDONLY | O_CLOEXEC), dyn = 0;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(ph) || eh.e_phnum > 256)
		goto out;
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph),
			  (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_INTERP)
			dyn = 1;
	}
out:
	close(fd);
	return dyn;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

struct entries {
	struct initramfs_entry *v;
	size_t n, alloc;
	char **owned; /* strings the entries point into */
	size_t nowned, aowned;
};

static struct initramfs_entry *entry_add(struct entries *e,
					 enum initramfs_kind kind,
					 const char *path, unsigned mode)
{
	if (e->n == e->alloc) {
		e->alloc = e->alloc ? 2 * e->alloc : 32;
		e->v = xrealloc(e->v, e->alloc * sizeof(*e->v));
	}
	memset(&e->v[e->n], 0, sizeof(e->v[e->n]));
	e->v[e->n].kind = kind;
	e->v[e->n].path = path;
	e->v[e->n].mode = mode;
	return &e->v[e->n++];
}

static char *keep(struct entries *e, char *s)
{
	if (e->nowned == e->aowned) {
		e->aowned = e->aowned ? 2 * e->aowned : 32;
		e->owned = xrealloc(e->owned, e->aowned * sizeof(*e->owned));
	}
	return e->owned[e->nowned++] = s;
}

static void entries_free(struct entries *e)
{
	for (size_t i = 0; i < e->nowned; i++)
		free(e->owned[i]);
	free(e->owned);
	free(e->v);
}

/* 16 random hex digits: the boot's marker token (console.h). */
static int new_token(char token[17])
{
	unsigned char b[8];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return err_set(ERR_IO, "getrandom: %s", strerror(errno));
	for (int i = 0; i < 8; i++)
		snprintf(token + 2 * i, 3, "%02x", b[i]);
	return 0;
}

static int build_initramfs(const struct runner_opts *o,
			   const struct test_def *tests, size_t n,
			   const char *guest_dir, const char *token,
			   const char *out, const struct kselftest_file *kf_v,
			   size_t nkf)
{
	const struct karch *ga = o->arch ? o->arch : &karch_table[0];
	const char *busybox = o->busybox ? o->busybox : ga->busybox;
	struct entries e = {0};
	struct strbuf list = STRBUF_INIT;
	char *init = xstrfmt("%s/init", guest_dir);
	char *badptr_src = xstrfmt("%s/badptr.c", guest_dir);
	/* x86_64's keeps its name: one per arch in one work dir */
	char *badptr = !karch_is_host(ga)
			       ? xstrfmt("%s/badptr-%s", o->work_dir, ga->name)
			       : xstrfmt("%s/badptr", o->work_dir);
	int ret;

	if (access(busybox, R_OK) < 0) {
		ret = err_set(ERR_NOTFOUND, "%s: %s: %s", busybox,
			      strerror(errno), ga->busybox_how);
		goto out;
	}
	if (elf_is_dynamic(busybox)) {
		ret = err_set(ERR_INVALID,
			      "%s is dynamically linked and cannot run in "
			      "the guest: install the Debian package %s",
			      busybox, BUSYBOX_PKG);
		goto out;
	}
	if (access(init, R_OK) < 0) {
		ret = err_set(ERR_NOTFOUND, "guest init %s: %s", init,
			      strerror(errno));
		goto out;
	}
	if ((ret = runner_build_static_cc(ga->cc, ga->cc_pkg, badptr_src,
					  badptr)) < 0)
		goto out;

	static const char *const dirs[] = {"dev",	  "proc",	 "sys",
					   "etc/stableq", "lib/modules", "bin"};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		entry_add(&e, INITRAMFS_DIR, dirs[i], 0755);
	entry_add(&e, INITRAMFS_DIR, "tmp", 01777);
	/* the kernel opens it before /init runs: early output needs it */
	struct initramfs_entry *c =
		entry_add(&e, INITRAMFS_CHARDEV, "dev/console", 0600);
	c->major = 5;
	c->minor = 1;
	entry_add(&e, INITRAMFS_FILE, "init", 0755)->host_path = init;
	entry_add(&e, INITRAMFS_FILE, "bin/busybox", 0755)->host_path = busybox;
	entry_add(&e, INITRAMFS_SYMLINK, "bin/sh", 0)->target = "busybox";
	entry_add(&e, INITRAMFS_FILE, "bin/badptr", 0755)->host_path = badptr;

	for (size_t t = 0; t < n; t++) {
		const struct test_def *d = &tests[t];
		if (d->kind != TEST_GUEST)
			continue;
		strbuf_addf(&list, "%s\t%d\t%s\n", d->name, d->timeout,
			    d->command);
		for (size_t m = 0; m < d->nmodules; m++) {
			char *host = keep(&e, xstrfmt("%s/%s", o->build_dir,
						      d->modules[m]));
			char *in = keep(&e, xstrfmt("lib/modules/%s",
						    base_name(d->modules[m])));
			int dup = 0;
			for (size_t k = 0; k < e.n; k++)
				if (!strcmp(e.v[k].path, in))
					dup = 1;
			if (dup)
				continue;
			if (access(host, R_OK) < 0) {
				ret = err_set(ERR_NOTFOUND,
					      "test %s: module %s: %s (is it "
					      "=m in config/kernel/?)",
					      d->name, host, strerror(errno));
				goto out;
			}
			entry_add(&e, INITRAMFS_FILE, in, 0644)->host_path =
				host;
		}
	}
	for (size_t i = 0; i < nkf; i++) {
		const struct kselftest_file *kf = &kf_v[i];
		struct initramfs_entry *x =
			entry_add(&e, kf->kind, kf->path, kf->mode);
		x->host_path = kf->host_path;
		x->target = kf->target;
	}
	struct initramfs_entry *l =
		entry_add(&e, INITRAMFS_DATA, "etc/stableq/tests", 0644);
	l->data = list.buf;
	l->len = list.len;
	struct initramfs_entry *tk =
		entry_add(&e, INITRAMFS_DATA, "etc/stableq/token", 0600);
	tk->data = keep(&e, xstrfmt("%s\n", token));
	tk->len = strlen(token) + 1;
	ret = initramfs_write(out, e.v, e.n);
out:
	entries_free(&e);
	strbuf_release(&list);
	free(init);
	free(badptr_src);
	free(badptr);
	return ret;
}

static int boot_one(const struct runner_opts *o, struct runner_result *r)
{
	const char *guest_dir =
		o->guest_dir ? o->guest_dir : "qemu-runner/guest";
	struct test_def *tests = NULL;
	size_t ntests = 0, nkr = 0, nkf = 0;
	struct kselftest_result *kr = NULL;
	struct kselftest_file *kf = NULL;
	long ksft_secs = 0;
	char *kernel = NULL, *cache = NULL, token[17] = "";
	struct qemu_opts q = {0};
	struct qemu_result qr = {0};
	double t0 = now_monotonic();
	int ret;

	memset(r, 0, sizeof(*r));
	r->accel = "tcg";
	if (!o->build_dir || !o->tests_file || !o->work_dir)
		return err_set(ERR_INVALID, "runner: build_dir, tests_file "
					    "and work_dir are needed");
	if ((ret = testset_load(o->tests_file, &tests, &ntests)) < 0)
		goto out;
	testset_for_guest(tests, &ntests, o->guest_config);
	/* kselftest sections: the targets' own results, a guest test per
	 * test, and the files they need */
	nkr = kselftest_results(tests, ntests, o->kselftests, o->only,
				o->nonly, &kr);
	kselftest_expand(&tests, &ntests, o->kselftests);
	if (o->only)
		testset_select(tests, &ntests, o->only, o->nonly);
	for (size_t i = 0; i < ntests; i++)
		if (tests[i].kselftest)
			ksft_secs += tests[i].timeout;
	if (ksft_secs && (ret = kselftest_files(o->kselftests, &kf, &nkf)) < 0)
		goto out;
	if ((ret = mkdir_p(o->work_dir)) < 0)
		goto out;
	kernel = o->kernel ? xstrdup(o->kernel)
			   : xstrfmt("%s/%s", o->build_dir,
				     o->arch ? o->arch->image
					     : karch_table[0].image);
	if (access(kernel, R_OK) < 0) {
		ret = err_set(ERR_NOTFOUND, "kernel %s: %s", kernel,
			      strerror(errno));
		goto out;
	}
	r->log_path = o->log_path ? xstrdup(o->log_path)
				  : xstrfmt("%s/console.log", o->work_dir);
	r->initramfs = xstrfmt("%s/initramfs.cpio", o->work_dir);
	if ((ret = new_token(token)) < 0)
		goto out;
	memcpy(r->token, token, sizeof(r->token));
	ret = build_initramfs(o, tests, ntests, guest_dir, token,
			      r->initramfs, kf, nkf);
	if (ret < 0)
		goto out;

	q.arch = o->arch;
	q.kernel = kernel;
	q.initrd = r->initramfs;
	q.append = o->append;
	q.memory_mb = o->memory_mb;
	/* each guest test has its own deadline: the hard one covers them */
	q.timeout_s = (o->timeout_s > 0 ? o->timeout_s : 300) +
		      (ksft_secs > 4 * 3600 ? 4 * 3600 : (int)ksft_secs);
	q.console_log = r->log_path;
	q.mark_at = "@@stableq userspace";
	cache = o->accel_cache ? xstrdup(o->accel_cache)
			       : xstrfmt("%s/kvm-probe", o->work_dir);
	ret = qemu_choose_accel(o->accel ? o->accel : "auto", &q,
				o->probe_timeout_s, cache, &r->accel,
				&r->accel_why, &r->probe_seconds);
	if (ret < 0)
		goto out;
	q.accel = r->accel;
	ret = qemu_boot(&q, &qr);
	r->qemu_cmdline = qr.cmdline ? xstrdup(qr.cmdline) : NULL;
	if (ret < 0)
		goto out;
	r->boot_seconds = qr.seconds;
	r->userspace_seconds = qr.mark_seconds;
	r->boots = 1;

	ret = console_parse_file(r->log_path, tests, ntests, qr.timed_out,
				 token, &r->report);
	if (ret < 0)
		goto out;
	if (!qr.timed_out && qr.status != 0 && !r->report.userspace) {
		/* QEMU itself failed: not the kernel's verdict to give */
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, qr.qemu_output ? qr.qemu_output : "");
		strbuf_rtrim(&sb);
		ret = err_set(ERR_IO,
			      "%s exited with status %d before "
			      "userspace: %s",
			      qr.cmdline, qr.status,
			      sb.len ? sb.buf : "(no output)");
		strbuf_release(&sb);
		goto out;
	}
	for (size_t i = 0; i < nkr; i++)
		console_report_add(&r->report, kr[i].name,
				   kr[i].built > 0   ? TEST_PASS
				   : kr[i].built < 0 ? TEST_SKIP
						     : TEST_FAIL,
				   kr[i].detail);
	r->verdict = r->report.verdict;
	r->reason = xstrdup(r->report.reason ? r->report.reason : "");
	ret = 0;
out:
	r->seconds = now_monotonic() - t0;
	if (ret < 0 && !r->reason)
		r->reason = xstrdup(err_msg());
	qemu_result_release(&qr);
	kselftest_results_free(kr, nkr);
	kselftest_files_free(kf, nkf);
	testset_free(tests, ntests);
	free(kernel);
	free(cache);
	return ret;
}

/*
 * The names of the console tests of the set o boots: after a resumed
 * boot, a console test fails on what that boot printed too.
 */
static void console_tests(const struct runner_opts *o, char ***names,
			  size_t *n)
{
	struct test_def *tests = NULL;
	size_t nt = 0;

	*names = NULL;
	*n = 0;
	if (testset_load(o->tests_file, &tests, &nt) < 0) {
		err_clear();
		return;
	}
	testset_for_guest(tests, &nt, o->guest_config);
	for (size_t i = 0; i < nt; i++)
		if (tests[i].kind == TEST_CONSOLE) {
			*names = xrealloc(*names, (*n + 1) * sizeof(**names));
			(*names)[(*n)++] = xstrdup(tests[i].name);
		}
	testset_free(tests, nt);
}

/*
 * b's results into a's: a result a did not run (test_result.not_run) is
 * b's; one a lacks (a later test's TAP lines, a KUnit module's cases,
 * b's kernel-log) is added; a console test keeps the worse of the two.
 * Everything else (the boot, built-in KUnit, which b did not run) is a's.
 */
static void merge(struct console_report *a, struct console_report *b,
		  char *const *cons, size_t ncons, size_t *taken,
		  size_t *failed)
{
	for (size_t i = 0; i < b->nresults; i++) {
		struct test_result *y = &b->results[i], *x = NULL;
		int console = 0;
		for (size_t k = 0; k < a->nresults && !x; k++)
			if (!strcmp(a->results[k].name, y->name))
				x = &a->results[k];
		for (size_t k = 0; k < ncons && !console; k++)
			console = !strcmp(cons[k], y->name);
		int worse = x && test_status_rank(y->status) >
					 test_status_rank(x->status);
		int take = !x || x->not_run || (console && worse);
		/* what b ran: a test it did not reach is no result of it */
		*taken += take && !y->not_run;
		*failed += take && !y->not_run &&
			   (y->status == TEST_FAIL || y->status == TEST_HANG);
		if (!x) {
			size_t sz = (a->nresults + 1) * sizeof(*a->results);
			a->results = xrealloc(a->results, sz);
			a->results[a->nresults++] = *y;
		} else if (take) {
			free(x->detail);
			free(x->excerpt);
			x->status = y->status;
			x->detail = y->detail;
			x->excerpt = y->excerpt;
			x->not_run = y->not_run;
			free(y->name);
		} else {
			free(y->name);
			free(y->detail);
			free(y->excerpt);
		}
		memset(y, 0, sizeof(*y));
	}
	b->nresults = 0;
	a->done = b->done;
	a->killed |= b->killed;
	free(a->stopped_in);
	a->stopped_in = b->stopped_in;
	b->stopped_in = NULL;
	a->stopped_in_kunit = 0;
}

/* Appends the console log `from` to `to`, after a line saying why. */
static void append_log(const char *to, const char *from, const char *why)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f;

	if (strbuf_read_file(&sb, from, 0) < 0)
		err_clear();
	f = fopen(to, "ae");
	if (f) {
		fprintf(f, "\n==== stableq: %s ====\n", why);
		fwrite(sb.buf, 1, sb.len, f);
		fclose(f);
	}
	unlink(from);
	strbuf_release(&sb);
}

int runner_boot(const struct runner_opts *o, struct runner_result *r)
{
	int ret = boot_one(o, r), boots_max = RUNNER_BOOTS_MAX;
	char **cons = NULL;
	size_t ncons = 0;

	if (ret < 0)
		return ret;
	if (o->boots_max > 0)
		boots_max = o->boots_max;
	console_tests(o, &cons, &ncons);
	/*
	 * A guest that stopped by itself (a panic) during a guest test, or in
	 * built-in KUnit, ends that test or suite, not the set: the tests it
	 * did not reach run in another boot, with built-in KUnit off
	 * (kunit.filter_glob matching no suite; /init opens it again for the
	 * KUnit modules a test loads).
	 */
	while (r->boots < boots_max && !r->report.killed &&
	       (r->report.stopped_in || r->report.stopped_in_kunit)) {
		struct strvec only = STRVEC_INIT;
		for (size_t i = 0; i < r->report.nresults; i++)
			if (r->report.results[i].not_run)
				strvec_push(&only, r->report.results[i].name);
		if (!only.nr) {
			strvec_clear(&only);
			break;
		}
		struct runner_opts o2 = *o;
		struct runner_result r2;
		char *append = xstrfmt("%s%skunit.filter_glob=stableq-resume"
				       " stableq.resume",
				       o->append ? o->append : "",
				       o->append ? " " : "");
		char *log = xstrfmt("%s.resume", r->log_path);
		char *why = r->report.stopped_in
				    ? xstrfmt("boot %d: the guest stopped "
					      "during test %s; the %zu "
					      "test%s after it",
					      r->boots + 1,
					      r->report.stopped_in, only.nr,
					      only.nr == 1 ? "" : "s")
				    : xstrfmt("boot %d: the guest stopped in "
					      "built-in KUnit; the %zu guest "
					      "test%s, KUnit off",
					      r->boots + 1, only.nr,
					      only.nr == 1 ? "" : "s");
		o2.only = (const char *const *)only.v;
		o2.nonly = only.nr;
		o2.append = append;
		o2.log_path = log;
		o2.accel = r->accel;
		int failed_to_run = boot_one(&o2, &r2) < 0;
		size_t taken = 0, failed = 0;
		char *reason;
		append_log(r->log_path, log, why);
		if (failed_to_run) {
			/* the results so far stand; the reason says why the
			 * rest did not run */
			reason = xstrfmt("%s; %s: %s", r->reason, why,
					 err_msg());
			err_clear();
		} else {
			merge(&r->report, &r2.report, cons, ncons, &taken,
			      &failed);
			r->boots++;
			r->boot_seconds += r2.boot_seconds;
			r->userspace_seconds += r2.userspace_seconds;
			r->seconds += r2.seconds;
			if (r2.verdict == VERDICT_HANG)
				r->verdict = VERDICT_HANG;
			/* the later boot's own reason would name the KUnit
			 * test it ran nothing of: say what it added */
			reason = xstrfmt("%s; %s: %zu result%s, %zu failed%s",
					 r->reason, why, taken,
					 taken == 1 ? "" : "s", failed,
					 r2.verdict == VERDICT_HANG
						 ? " (killed at its deadline)"
						 : "");
			/* a coverage boot's gcov data is in the last boot's
			 * console */
			memcpy(r->token, r2.token, sizeof(r->token));
		}
		free(r->reason);
		r->reason = reason;
		runner_result_release(&r2);
		free(append);
		free(log);
		free(why);
		strvec_clear(&only);
		if (failed_to_run)
			break;
	}
	for (size_t i = 0; i < ncons; i++)
		free(cons[i]);
	free(cons);
	return ret;
}

/* ---- retries ---- */

static int in_vec(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->nr; i++)
		if (!strcmp(v->v[i], s))
			return 1;
	return 0;
}

static void push_once(struct strvec *v, const char *s)
{
	if (!in_vec(v, s))
		strvec_push(v, s);
}

/* A suite name that may travel on the kernel command line as it is. */
static int plain_suite(const char *s)
{
	return *s && s[strspn(s, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")] ==
			     '\0';
}

/*
 * kunit.filter_glob for the suites: one suite by name, several by the glob
 * of their common prefix; NULL (every suite, as built) when there is none
 * or a name is not plain.
 */
static char *suites_glob(const struct strvec *suites)
{
	size_t common;

	if (!suites->nr)
		return NULL;
	common = strlen(suites->v[0]);
	for (size_t i = 0; i < suites->nr; i++) {
		if (!plain_suite(suites->v[i]))
			return NULL;
		size_t k = 0;
		while (k < common && suites->v[i][k] == suites->v[0][k])
			k++;
		common = k;
	}
	if (suites->nr == 1)
		return xstrfmt("kunit.filter_glob=%s", suites->v[0]);
	if (!common)
		return NULL;
	return xstrfmt("kunit.filter_glob=%.*s*", (int)common, suites->v[0]);
}

int runner_retry_plan(const struct runner_opts *o, const char *const *failing,
		      size_t n, struct runner_retry *p)
{
	struct test_def *tests = NULL;
	size_t ntests = 0;
	char *kunit;
	int ret;

	memset(p, 0, sizeof(*p));
	strvec_init(&p->only);
	strvec_init(&p->suites);
	strvec_init(&p->ktap);
	strvec_init(&p->retried);
	strvec_init(&p->skipped);
	if ((ret = testset_load(o->tests_file, &tests, &ntests)) < 0)
		return ret;
	testset_for_guest(tests, &ntests, o->guest_config);
	kselftest_expand(&tests, &ntests, o->kselftests);
	for (size_t i = 0; i < n; i++) {
		const char *name = failing[i];
		const struct test_def *t = testset_find(tests, ntests, name);
		if (!strncmp(name, "kunit.", 6) && !t) {
			char *suite = xstrndup(name + 6, strcspn(name + 6, "."));
			if (*suite) {
				push_once(&p->suites, suite);
				push_once(&p->retried, name);
			} else {
				push_once(&p->skipped, name);
			}
			free(suite);
			continue;
		}
		if (t && t->kind == TEST_GUEST) {
			push_once(&p->only, name);
			push_once(&p->retried, name);
			continue;
		}
		if (t && t->kind == TEST_KTAP) {
			push_once(&p->ktap, name);
			push_once(&p->retried, name);
			continue;
		}
		/* a kselftest's own TAP line: its test runs again */
		for (size_t k = 0; !t && k < ntests; k++) {
			size_t len = strlen(tests[k].name);
			if (tests[k].kind == TEST_GUEST && tests[k].kselftest &&
			    !strncmp(name, tests[k].name, len) &&
			    name[len] == '.')
				t = &tests[k];
		}
		if (t && t->kind == TEST_GUEST) {
			push_once(&p->only, t->name);
			push_once(&p->retried, name);
		} else {
			push_once(&p->skipped, name);
		}
	}
	testset_free(tests, ntests);
	/*
	 * Built-in KUnit runs before /init: off unless a KUnit name is
	 * retried (as in a resumed boot, /init opens it again for the
	 * KUnit modules a test loads).
	 */
	if (p->suites.nr || p->ktap.nr)
		kunit = p->suites.nr ? suites_glob(&p->suites) : NULL;
	else
		kunit = xstrdup("kunit.filter_glob=stableq-resume stableq.resume");
	if (o->append && *o->append && kunit)
		p->append = xstrfmt("%s %s", o->append, kunit);
	else if (o->append && *o->append)
		p->append = xstrdup(o->append);
	else
		p->append = kunit ? xstrdup(kunit) : NULL;
	free(kunit);
	return 0;
}

int runner_retry_covers(const struct runner_retry *p, const char *name)
{
	if (in_vec(&p->retried, name) || in_vec(&p->ktap, name))
		return 1;
	for (size_t i = 0; i < p->only.nr; i++) {
		size_t len = strlen(p->only.v[i]);
		if (!strncmp(name, p->only.v[i], len) &&
		    (name[len] == '\0' || name[len] == '.'))
			return 1;
	}
	if (strncmp(name, "kunit.", 6))
		return 0;
	for (size_t i = 0; i < p->suites.nr; i++) {
		size_t len = strlen(p->suites.v[i]);
		if (!strncmp(name + 6, p->suites.v[i], len) &&
		    (name[6 + len] == '\0' || name[6 + len] == '.'))
			return 1;
	}
	return 0;
}

char *runner_retry_text(const struct runner_retry *p)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < p->only.nr; i++)
		strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", p->only.v[i]);
	for (size_t i = 0; i < p->ktap.nr; i++)
		strbuf_addf(&sb, "%s%s", sb.len ? ", " : "", p->ktap.v[i]);
	for (size_t i = 0; i < p->suites.nr; i++)
		strbuf_addf(&sb, "%skunit.%s", sb.len ? ", " : "",
			    p->suites.v[i]);
	if (p->append && strstr(p->append, "kunit.filter_glob=") &&
	    !strstr(p->append, "stableq.resume"))
		strbuf_addf(&sb, " (%s)", strstr(p->append,
						 "kunit.filter_glob="));
	return strbuf_detach(&sb, NULL);
}

void runner_retry_release(struct runner_retry *p)
{
	if (!p)
		return;
	strvec_clear(&p->only);
	strvec_clear(&p->suites);
	strvec_clear(&p->ktap);
	strvec_clear(&p->retried);
	strvec_clear(&p->skipped);
	free(p->append);
	memset(p, 0, sizeof(*p));
}
