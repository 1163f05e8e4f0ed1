/* lava.c: a LAVA job definition for a candidate: qemu, its kernel and initramfs, its tests. */
#include "lava.h"
#include "candidate.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "sha256.h"
#include "strbuf.h"
#include "testset.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define IMAGE_MAX (512u << 20)

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

void lava_yaml(struct strbuf *out, json_t *j)
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

/* The test action: monitors over the console, in the order it prints. */
static json_t *test_action(const struct test_def *t, size_t n, int timeout_min,
			   json_t *meta)
{
	json_t *monitors = json_array(), *fix;
	int ktap = 0, guest = 0;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < n; i++) {
		char *k = xstrfmt("stableq.test.%s", t[i].name);
		char *v = xstrfmt("%s: %s", test_kind_name(t[i].kind),
				  t[i].description ? t[i].description : "");
		json_object_set_new(meta, k, json_string(v));
		free(k);
		free(v);
		ktap |= t[i].kind == TEST_KTAP;
		guest |= t[i].kind == TEST_GUEST;
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
	/* /init's markers: "@@stableq end NAME STATUS", 0 passes */
	if (guest) {
		fix = json_object();
		json_object_set_new(fix, "0", json_string("pass"));
		for (char d = '1'; d <= '9'; d++) {
			char k[2] = { d, 0 };
			json_object_set_new(fix, k, json_string("fail"));
		}
		json_array_append_new(
			monitors,
			json_pack("{s:s,s:s,s:s,s:s,s:o}", "name",
				  "stableq-guest", "start", "@@stableq kernel",
				  "end", "@@stableq done", "pattern",
				  "@@stableq end (?P<test_case_id>[A-Za-z0-9_.-]+) "
				  "(?P<result>0|[1-9])[0-9]*",
				  "fixupdict", fix));
	}
	/* boot and console tests: what the whole console shows */
	if (!guest) {
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
		json_array_append_new(
			monitors,
			json_pack("{s:s,s:s,s:s,s:s,s:o}", "name",
				  "stableq-console", "start", "Linux version",
				  "end", "@@stableq done", "pattern", sb.buf,
				  "fixupdict", fix));
	}
	strbuf_release(&sb);
	if (!json_array_size(monitors)) {
		json_decref(monitors);
		return NULL;
	}
	return json_pack("{s:{s:o,s:o}}", "test", "timeout",
			 minutes(timeout_min), "monitors", monitors);
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
	long long build = 0, last = 0;
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

	for (size_t i = 0; i < ntests; i++)
		if (tests[i].kind == TEST_GUEST)
			test_min += (tests[i].timeout + 59) / 60;
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
	test = test_action(tests, ntests, boot_min + test_min, meta);
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
