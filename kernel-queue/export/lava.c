/* lava.c: a LAVA job definition for a candidate: qemu, its kernel and initramfs, its tests. */
#include "lava.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "sha256.h"
#include "strbuf.h"
#include "testcase.h"
#include "testset.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMAGE_MAX (512u << 20)
/* A test's name in a monitor's pattern: the console's name rule, dots. */
#define LAVA_NAME "[A-Za-z0-9_.+:=,-]+"

/* ---- YAML ---- */

/* A key YAML reads back as the same string: no number, bool or null. */
static int plain_key(const char *k)
{
	static const char *const special[] = { "y", "n", "yes", "no", "on",
					       "off", "true", "false", "null" };

	if (!isalpha((unsigned char)*k) && *k != '_')
		return 0;
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!strcasecmp(k, special[i]))
			return 0;
	for (const char *c = k; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-' &&
		    *c != '.')
			return 0;
	return 1;
}

static void scalar(struct strbuf *out, json_t *j)
{
	char *s = json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT);

	strbuf_addstr(out, s ? s : "null");
	free(s);
}

static void key(struct strbuf *out, const char *k)
{
	if (plain_key(k)) {
		strbuf_addstr(out, k);
	} else {
		json_t *s = json_string(k);
		scalar(out, s);
		json_decref(s);
	}
	strbuf_addch(out, ':');
}

static int is_block(json_t *j)
{
	return (json_is_object(j) && json_object_size(j)) ||
	       (json_is_array(j) && json_array_size(j));
}

static void indent(struct strbuf *out, int n)
{
	for (int i = 0; i < n; i++)
		strbuf_addch(out, ' ');
}

/* j at column col; the caller has written what comes before on the line */
static void emit(struct strbuf *out, json_t *j, int col, int inline_first)
{
	const char *k;
	json_t *v;
	size_t i;
	int first = 1;

	if (json_is_object(j) && json_object_size(j)) {
		json_object_foreach(j, k, v)
		{
			if (!(first && inline_first))
				indent(out, col);
			first = 0;
			key(out, k);
			if (is_block(v)) {
				strbuf_addch(out, '\n');
				emit(out, v, col + 2, 0);
			} else {
				strbuf_addch(out, ' ');
				scalar(out, v); /* empty {} and [] too */
				strbuf_addch(out, '\n');
			}
		}
	} else if (json_is_array(j) && json_array_size(j)) {
		json_array_foreach(j, i, v)
		{
			if (!(first && inline_first))
				indent(out, col);
			first = 0;
			strbuf_addstr(out, "- ");
			if (is_block(v) && json_is_object(v)) {
				emit(out, v, col + 2, 1);
			} else if (is_block(v)) {
				strbuf_addch(out, '\n');
				emit(out, v, col + 2, 0);
			} else {
				scalar(out, v);
				strbuf_addch(out, '\n');
			}
		}
	} else {
		scalar(out, j);
		strbuf_addch(out, '\n');
	}
}

static void lava_yaml(struct strbuf *out, json_t *j)
{
	emit(out, j, 0, 0);
}

/* ---- the job ---- */

/* Copies src to dir/name; its sha256 into hex. */
static int copy_image(const char *src, const char *dir, const char *name,
		      char hex[65])
{
	struct strbuf data = STRBUF_INIT;
	char *dst = xstrfmt("%s/%s", dir, name);
	int ret;

	if (strbuf_read_file(&data, src, IMAGE_MAX) < 0) {
		ret = err_set(ERR_NOTFOUND, "%s: %s", src,
			      *err_msg() ? err_msg() : "cannot read it");
		goto out;
	}
	sha256_hex(data.buf, data.len, hex);
	ret = write_file_atomic(dst, data.buf, data.len);
out:
	free(dst);
	strbuf_release(&data);
	return ret;
}

static json_t *minutes(int m)
{
	return json_pack("{s:i}", "minutes", m > 0 ? m : 1);
}

/* The regex of a literal string. */
static void regex_literal(struct strbuf *sb, const char *s)
{
	for (; *s; s++) {
		if (strchr("\\.^$|?*+()[]{}", *s))
			strbuf_addch(sb, '\\');
		strbuf_addch(sb, *s);
	}
}

/* LAVA's result of each exit status N of "@@stableq end NAME N": 0 passes. */
static json_t *status_fixup(int kselftest)
{
	json_t *fix = json_object();

	json_object_set_new(fix, "0", json_string("pass"));
	for (char d = '1'; d <= '9'; d++) {
		char k[2] = {d, 0};
		json_object_set_new(fix, k, json_string("fail"));
	}
	if (kselftest) {
		/* KSFT_SKIP is 4 alone; 40..49 are failures (the pattern
		 * takes two digits for them) */
		json_object_set_new(fix, "4", json_string("skip"));
		for (char d = '0'; d <= '9'; d++) {
			char k[3] = {'4', d, 0};
			json_object_set_new(fix, k, json_string("fail"));
		}
	}
	return fix;
}

/*
 * The test action: monitors over the console, in the order it prints
 * (LAVA runs them one after the other, each from its start to its end):
 * KUnit's KTAP at boot, the guest tests of the set, then the kselftests
 * (the runner appends them: kselftest_expand()). The guest tests' monitor
 * ends where the first kselftest begins (or the tests end) without taking
 * the line, so that the kselftests' monitor starts there: with none in
 * the boot, it starts and ends at "@@stableq done".
 */
static json_t *test_action(const struct test_def *t, size_t n, int timeout_min)
{
	json_t *monitors = json_array(), *fix;
	int ktap = 0, guest = 0, kselftest = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		ktap |= t[i].kind == TEST_KTAP;
		guest |= t[i].kind == TEST_GUEST;
		kselftest |= t[i].kind == TEST_KSELFTEST;
	}
	/* KUnit prints while the kernel boots, before userspace */
	if (ktap) {
		fix = json_pack("{s:s,s:s}", "ok", "pass", "not ok", "fail");
		json_array_append_new(
			monitors,
			json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", "kunit",
				  "start", "KTAP version", "end",
				  "@@stableq userspace", "pattern",
				  "(?P<result>not ok|ok) [0-9]+ "
				  "(?P<test_case_id>[A-Za-z0-9_.-]+)",
				  "fixupdict", fix));
	}
	/* /init's markers: "@@stableq end NAME STATUS [TOKEN]", 0 passes */
	if (guest)
		json_array_append_new(
			monitors,
			json_pack("{s:s,s:s,s:s,s:s,s:o}", "name",
				  "stableq-guest", "start", "@@stableq kernel",
				  "end",
				  kselftest ? "(?=@@stableq begin kselftest\\.|"
					      "@@stableq done)"
					    : "@@stableq done",
				  "pattern",
				  "@@stableq end (?P<test_case_id>" LAVA_NAME
				  ") (?P<result>0|[1-9])[0-9]*",
				  "fixupdict", status_fixup(0)));
	/* the kselftests: exit status 4 (KSFT_SKIP) skips */
	if (kselftest)
		json_array_append_new(
			monitors,
			json_pack("{s:s,s:s,s:s,s:s,s:o}", "name", "kselftest",
				  "start",
				  "@@stableq begin kselftest\\.|"
				  "(?=@@stableq done)",
				  "end", "@@stableq done", "pattern",
				  "@@stableq end "
				  "(?P<test_case_id>kselftest\\." LAVA_NAME
				  ") (?P<result>4[0-9]|0|4|[1-9])"
				  "(?=[0-9]*\\s)",
				  "fixupdict", status_fixup(1)));
	/* boot and console tests: what the whole console shows */
	if (!guest && !kselftest) {
		fix = json_object();
		strbuf_addstr(&sb, "(?P<result>(?P<test_case_id>userspace");
		json_object_set_new(fix, "userspace", json_string("pass"));
		for (size_t i = 0; i < n; i++)
			for (size_t f = 0; f < t[i].nfail_on; f++) {
				strbuf_addch(&sb, '|');
				regex_literal(&sb, t[i].fail_on[f]);
				json_object_set_new(fix, t[i].fail_on[f],
						    json_string("fail"));
			}
		strbuf_addstr(&sb, "))");
		json_array_append_new(monitors,
				      json_pack("{s:s,s:s,s:s,s:s,s:o}", "name",
						"stableq-console", "start",
						"Linux version", "end",
						"@@stableq done", "pattern",
						sb.buf, "fixupdict", fix));
	}
	strbuf_release(&sb);
	if (!json_array_size(monitors)) {
		json_decref(monitors);
		return NULL;
	}
	return json_pack("{s:{s:o,s:o}}", "test", "timeout",
			 minutes(timeout_min), "monitors", monitors);
}

/* ---- the test set in the metadata ---- */

/* The tip's result of a test as the metadata says it, or NULL. */
static const char *tip_text(const json_t *tip, const char *name)
{
	const char *r = json_string_value(json_object_get(tip, name));

	if (r && !strcmp(r, "fail"))
		return "fail, expected: a known failure (it fails on the"
		       " branch tip)";
	return r;
}

static void meta_set(json_t *meta, const char *prefix, const char *name,
		     const char *value)
{
	char *k = xstrfmt("%s.%s", prefix, name);

	json_object_set_new(meta, k, json_string(value));
	free(k);
}

/* One test of the set: what it is, and how it stands on the tip. */
static void meta_test(json_t *meta, const json_t *tip, const char *name,
		      const char *what)
{
	const char *t = tip_text(tip, name);

	meta_set(meta, "stableq.test", name, what);
	if (t)
		meta_set(meta, "stableq.tip", name, t);
}

/*
 * Every test of the set in the metadata (a kselftest section as each of
 * its targets, kselftest.TARGET), with its result on the branch tip when
 * the candidate was compared with a run of it; then the cases below them
 * (kunit.SUITE.CASE, kselftest.TARGET.TEST...) that do not pass there,
 * known failures marked expected; passes are counted.
 */
static void meta_tests(json_t *meta, const struct test_def *t, size_t n,
		       const json_t *tip, long long tip_id)
{
	long long pass = 0, fail = 0, flaky = 0, skip = 0;
	const char *name;
	json_t *v;

	for (size_t i = 0; i < n; i++) {
		const char *d = t[i].description ? t[i].description : "";
		if (t[i].kind != TEST_KSELFTEST) {
			char *what =
				xstrfmt("%s: %s", test_kind_name(t[i].kind), d);
			meta_test(meta, tip, t[i].name, what);
			free(what);
			continue;
		}
		for (size_t k = 0; k < t[i].ntargets; k++) {
			char *tn = xstrfmt("kselftest.%s", t[i].targets[k]);
			char *what = xstrfmt(
				"kselftest: tools/testing/selftests/%s, each"
				" test %s.TEST, %d s each ([test %s]%s%s)",
				t[i].targets[k], tn, t[i].timeout, t[i].name,
				*d ? ": " : "", d);
			meta_test(meta, tip, tn, what);
			free(tn);
			free(what);
		}
	}
	json_object_foreach((json_t *)tip, name, v)
	{
		const char *r = json_string_value(v);
		char *k;
		if (!r)
			continue;
		pass += !strcmp(r, "pass");
		fail += !strcmp(r, "fail");
		flaky += !strcmp(r, "flaky");
		skip += !strcmp(r, "skip");
		if (strcmp(r, "fail") && strcmp(r, "flaky"))
			continue;
		k = xstrfmt("stableq.tip.%s", name);
		if (!json_object_get(meta, k))
			meta_set(meta, "stableq.tip", name,
				 tip_text(tip, name));
		free(k);
	}
	if (tip_id > 0) {
		char *s = xstrfmt("candidate %lld: %lld pass, %lld fail"
				  " (expected), %lld flaky, %lld skip",
				  tip_id, pass, fail, flaky, skip);
		json_object_set_new(meta, "stableq.tip", json_string(s));
		free(s);
	} else {
		json_object_set_new(meta, "stableq.tip",
				    json_string("unknown: the candidate was"
						" not compared with a run of"
						" the branch tip"));
	}
}

/* Minutes the guest's tests may take: each guest test's timeout, and each
 * kselftest's (counted from the candidate's cases, at least one a target). */
static int guest_minutes(const struct test_def *t, size_t n,
			 const json_t *cases)
{
	long long secs = 0;

	for (size_t i = 0; i < n; i++) {
		if (t[i].kind == TEST_GUEST)
			secs += t[i].timeout;
		for (size_t k = 0;
		     t[i].kind == TEST_KSELFTEST && k < t[i].ntargets; k++) {
			char *prefix =
				xstrfmt("kselftest.%s.", t[i].targets[k]);
			size_t len = strlen(prefix);
			long long count = 0;
			const char *name;
			json_t *v;
			json_object_foreach((json_t *)cases, name, v)
			{
				count += !strncmp(name, prefix, len) &&
					 !strchr(name + len, '.');
			}
			secs += (long long)t[i].timeout * (count ? count : 1);
			free(prefix);
		}
	}
	return (int)((secs + 59) / 60);
}

static json_t *image(const char *url_base, const char *name, const char *hex,
		     const char *arg)
{
	char *url = xstrfmt("%s/%s", url_base, name);
	json_t *j = json_pack("{s:s,s:s,s:s}", "url", url, "sha256sum", hex,
			      "image_arg", arg);

	free(url);
	return j;
}

int lava_job(sqlite3 *db, const struct config *cfg, const struct lava_opts *o,
	     char **yaml)
{
	char *verdict = NULL, *commit = NULL, *result = NULL;
	char *out_dir = NULL, *abs = NULL, *url_base = NULL, *path = NULL;
	char *kernel = NULL, *initrd = NULL, *name = NULL;
	char khex[65] = "", ihex[65] = "";
	long long build = 0, last = 0, tip_id = 0;
	json_t *cases = NULL;
	struct test_def *tests = NULL;
	size_t ntests = 0;
	struct strbuf sb = STRBUF_INIT;
	json_t *job = NULL, *meta, *actions, *test;
	int ret, boot_min, test_min = 0;

	*yaml = NULL;
	if ((build = candidate_build_id(db, o->candidate)) < 0) {
		ret = err_set(ERR_NOTFOUND, "candidate %lld: no such candidate",
			      o->candidate);
		goto out;
	}
	verdict = candidate_verdict(db, o->candidate);
	commit = candidate_commit(db, o->candidate);
	if (build)
		result = candidate_build_result(db, build);
	if (!build || !result || strcmp(result, "ok")) {
		ret = err_set(ERR_CONFLICT,
			      "candidate %lld has no kernel to boot (%s)",
			      o->candidate,
			      verdict ? verdict : "not built yet");
		goto out;
	}
	last = candidate_last_build(db);
	if (last != build) {
		ret = err_set(ERR_CONFLICT,
			      "candidate %lld: its kernel (build %lld) is no "
			      "longer in %s (build %lld came after): run the "
			      "candidate again (`stableq candidate`)",
			      o->candidate, build, cfg->build_dir, last);
		goto out;
	}
	if ((ret = testset_load(cfg->tests_file, &tests, &ntests)) < 0)
		goto out;
	testset_for_guest(tests, &ntests, cfg->guest_config);
	out_dir = o->out_dir && *o->out_dir
			  ? xstrdup(o->out_dir)
			  : xstrfmt("%s/lava/candidate-%lld", cfg->var_dir,
				    o->candidate);
	if ((ret = mkdir_p(out_dir)) < 0)
		goto out;
	abs = realpath(out_dir, NULL);
	if (!abs) {
		ret = err_set(ERR_IO, "%s: %s", out_dir, strerror(errno));
		goto out;
	}
	kernel = xstrfmt("%s/arch/x86/boot/bzImage", cfg->build_dir);
	initrd = xstrfmt("%s/guest/initramfs.cpio", cfg->var_dir);
	if ((ret = copy_image(kernel, abs, "bzImage", khex)) < 0 ||
	    (ret = copy_image(initrd, abs, "initramfs.cpio", ihex)) < 0)
		goto out;
	url_base = o->url_base && *o->url_base
			   ? xstrndup(o->url_base,
				      strlen(o->url_base) -
					      (o->url_base[strlen(o->url_base) - 1] ==
					       '/'))
			   : xstrfmt("file://%s", abs);

	tip_id = candidate_tip(db, o->candidate);
	cases = testcase_tip_results(db, o->candidate);
	if (!cases) {
		cases = json_object();
		err_clear();
	}
	test_min = guest_minutes(tests, ntests, cases);
	boot_min = (cfg->boot_timeout + 59) / 60;
	{
		json_t *arr = candidate_patch_list(db, o->candidate);
		name = xstrfmt("stableq candidate %lld: %s + %zu patches "
			       "(%.12s)",
			       o->candidate, cfg->branch, json_array_size(arr),
			       commit ? commit : "?");
		json_decref(arr);
	}
	meta = json_pack("{s:s,s:I,s:s,s:s}", "stableq.branch", cfg->branch,
			 "stableq.candidate", (json_int_t)o->candidate,
			 "stableq.commit", commit ? commit : "",
			 "stableq.verdict", verdict ? verdict : "");
	actions = json_array();
	json_array_append_new(
		actions,
		json_pack("{s:{s:s,s:o,s:{s:o,s:o}}}", "deploy", "to",
			  "tmpfs", "timeout", minutes(5), "images",
			  "kernel",
			  image(url_base, "bzImage", khex, "-kernel {kernel}"),
			  "ramdisk",
			  image(url_base, "initramfs.cpio", ihex,
				"-initrd {ramdisk}")));
	json_array_append_new(
		actions,
		json_pack("{s:{s:s,s:s,s:o,s:{s:s}}}", "boot", "method", "qemu",
			  "media", "tmpfs", "timeout", minutes(boot_min),
			  "parameters", "shutdown-message", "@@stableq done"));
	meta_tests(meta, tests, ntests, tip_id > 0 ? cases : NULL, tip_id);
	test = test_action(tests, ntests, boot_min + test_min);
	if (test)
		json_array_append_new(actions, test);
	job = json_pack(
		"{s:s,s:s,s:s,s:s,s:{s:o,s:o,s:o},s:{s:s,s:i,s:s},s:o,s:o}",
		"job_name", name, "device_type", "qemu", "visibility", "public",
		"priority", "medium", "timeouts", "job",
		minutes(5 + 2 * boot_min + test_min), "action",
		minutes(boot_min + test_min), "connection", minutes(2),
		"context", "arch", "amd64", "memory",
		cfg->qemu_memory > 0 ? cfg->qemu_memory : 256,
		"extra_kernel_args", "panic=-1 oops=panic loglevel=7",
		"metadata", meta, "actions", actions);
	if (!job) {
		ret = err_set(ERR_IO, "lava: cannot make the job");
		goto out;
	}
	strbuf_addf(&sb, "# LAVA job for stableq candidate %lld (qemu; "
			 "images in %s)\n",
		    o->candidate, abs);
	lava_yaml(&sb, job);
	path = xstrfmt("%s/job.yaml", abs);
	if ((ret = write_file_atomic(path, sb.buf, sb.len)) < 0)
		goto out;
	*yaml = strbuf_detach(&sb, NULL);
	ret = 0;
out:
	json_decref(job);
	json_decref(cases);
	testset_free(tests, ntests);
	strbuf_release(&sb);
	free(verdict);
	free(commit);
	free(result);
	free(out_dir);
	free(abs);
	free(url_base);
	free(path);
	free(kernel);
	free(initrd);
	free(name);
	return ret;
}
