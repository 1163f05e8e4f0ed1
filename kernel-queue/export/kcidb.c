/* kcidb.c: finished candidates as KCIDB v4 checkouts, builds and tests. */
#include "kcidb.h"
#include "branch.h"
#include "candidate.h"
#include "cell.h"
#include "db.h"
#include "err.h"
#include "gcov.h"
#include "karch.h"
#include "queue.h"
#include "repo.h"
#include "sha256.h"
#include "strbuf.h"
#include "testcase.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define EXCERPT_MAX 16000 /* the schema's maxLength is 16384 */

/* stableq's test results and their KCIDB statuses. */
static const struct status_map {
	const char *result;
	const char *status;
} statuses[] = {
	{ "pass", "PASS" },
	{ "fail", "FAIL" },
	{ "skip", "SKIP" },
	{ "flaky", "FAIL" },
};

int kcidb_parse_since(const char *text, char **out)
{
	/* digits where d, the literal elsewhere; T may be a space */
	static const char form[] = "dddd-dd-ddTdd:dd:dd";
	char norm[sizeof(form)] = "0000-00-00T00:00:00";
	size_t n = text ? strlen(text) : 0, i;

	*out = NULL;
	if (n && text[n - 1] == 'Z')
		n--;
	if (n != 10 && n != 16 && n != 19)
		goto bad;
	for (i = 0; i < n; i++) {
		char c = text[i];
		if (form[i] == 'd' ? !isdigit((unsigned char)c)
				   : !(c == form[i] || (form[i] == 'T' && c == ' ')))
			goto bad;
		norm[i] = form[i] == 'T' ? 'T' : c;
	}
	if (memcmp(norm + 5, "01", 2) < 0 || memcmp(norm + 5, "12", 2) > 0 ||
	    memcmp(norm + 8, "01", 2) < 0 || memcmp(norm + 8, "31", 2) > 0 ||
	    memcmp(norm + 11, "23", 2) > 0 || memcmp(norm + 14, "59", 2) > 0 ||
	    memcmp(norm + 17, "59", 2) > 0)
		goto bad;
	*out = xstrfmt("%sZ", norm);
	return 0;
bad:
	return err_set(ERR_INVALID,
		       "--since '%s' is not a time: use YYYY-MM-DD or "
		       "YYYY-MM-DDTHH:MM:SSZ (UTC)",
		       text ? text : "");
}

char *kcidb_base_url(const struct config *cfg)
{
	const char *u = cfg->public_url;
	size_t n = u ? strlen(u) : 0;

	while (n && u[n - 1] == '/')
		n--;
	if (n)
		return xstrndup(u, n);
	return xstrfmt("http://%s", cfg->listen);
}

/* "linux-6.1.y" -> "stableq-6.1"; another name -> "stableq-<name>". */
static char *tree_name(const char *branch)
{
	size_t n = strlen(branch);

	if (!strncmp(branch, "linux-", 6) && n > 8 &&
	    !strcmp(branch + n - 2, ".y"))
		return xstrfmt("stableq-%.*s", (int)(n - 8), branch + 6);
	return xstrfmt("stableq-%s", branch);
}

/* A test path keeps [.a-zA-Z0-9_-]; anything else becomes '_'. */
static char *test_path(const char *name)
{
	char *p = xstrdup(name ? name : "");

	/* KCIDB paths are dot-separated: a name's "kselftest:TARGET:TEST"
	 * (':' is kept by the console's name rule) is kselftest.TARGET.TEST,
	 * like KUnit's kunit.SUITE.CASE */
	for (char *c = p; *c; c++)
		if (*c == ':')
			*c = '.';
		else if (!isalnum((unsigned char)*c) && *c != '.' &&
			 *c != '_' && *c != '-')
			*c = '_';
	return p;
}

/* Text cut to the schema's excerpt size at a UTF-8 boundary. */
static json_t *excerpt(const char *s)
{
	size_t n = strlen(s);

	if (n > EXCERPT_MAX) {
		n = EXCERPT_MAX;
		while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	return json_stringn(s, n);
}

/* Sets key to a string copy of s unless s is NULL or empty. */
static void set_text(json_t *o, const char *key, const char *s)
{
	json_t *v;

	if (s && *s && (v = json_string(s)))
		json_object_set_new(o, key, v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "tinyconfig+a.config+b.config": how every build is configured. */
static char *config_name(const char *dir)
{
	struct strbuf sb = STRBUF_INIT;
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	strbuf_addstr(&sb, "tinyconfig");
	while (d && (de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 7 || de->d_name[0] == '.' ||
		    strcmp(de->d_name + l - 7, ".config"))
			continue;
		if (n == cap)
			names = xrealloc(names, (cap = cap ? 2 * cap : 8) *
							sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(&sb, "+%s", names[i]);
		free(names[i]);
	}
	free(names);
	return strbuf_detach(&sb, NULL);
}

struct ctx {
	sqlite3 *db;
	const struct config *cfg;
	const char *base;  /* "" for no links */
	struct repo *repo; /* NULL when the tree is not there */
	char *tree;
	char *config;
	json_t *checkouts, *builds, *tests;
};

/* The patches of a candidate: hash, files, contacts. */
static void add_patchset(struct ctx *c, json_t *co, const char *ids_text)
{
	json_t *ids = json_loads(ids_text ? ids_text : "[]", 0, NULL);
	json_t *files = json_array(), *contacts = json_array(), *v;
	struct strbuf hashes = STRBUF_INIT;
	size_t i;

	json_array_foreach(ids, i, v)
	{
		long long pid = json_integer_value(v);
		json_t *pt = queue_patch_content_json(c->db, pid);
		char hex[65];

		if (pt) {
			const char *diff = queue_field(pt, "diff");
			const char *mail = queue_field(pt, "author_email");
			sha256_hex(diff ? diff : "", diff ? strlen(diff) : 0,
				   hex);
			strbuf_addf(&hashes, "%s\n", hex);
			if (*c->base) {
				char *name = xstrfmt("%04zu-patch-%lld.patch",
						     i + 1, pid);
				char *url = xstrfmt(
					"%s/api/v1/patches/%lld/diff", c->base,
					pid);
				json_array_append_new(
					files, json_pack("{s:s,s:s}", "name",
							 name, "url", url));
				free(name);
				free(url);
			}
			if (mail && *mail && strchr(mail, '@')) {
				int seen = 0;
				json_t *m;
				size_t k;
				json_array_foreach(contacts, k, m)
				seen |= !strcmp(json_string_value(m), mail);
				json_t *s = json_string(mail);
				if (!seen && s)
					json_array_append_new(contacts, s);
				else
					json_decref(s);
			}
		}
		json_decref(pt);
	}
	if (hashes.len) {
		char hex[65];
		sha256_hex(hashes.buf, hashes.len, hex);
		json_object_set_new(co, "patchset_hash", json_string(hex));
	} else {
		json_object_set_new(co, "patchset_hash", json_string(""));
	}
	if (json_array_size(files))
		json_object_set_new(co, "patchset_files", files);
	else
		json_decref(files);
	if (json_array_size(contacts))
		json_object_set_new(co, "contacts", contacts);
	else
		json_decref(contacts);
	json_decref(ids);
	strbuf_release(&hashes);
}

static int is_sha1(const char *s)
{
	size_t n = 0;

	while (s && isxdigit((unsigned char)s[n]) && !isupper((unsigned char)s[n]))
		n++;
	return s && n == 40 && !s[n];
}

/*
 * A coverage boot's line counts (gcov.h): KCIDB has no field for them, so
 * the checkout's misc carries them, per patch.
 */
static void add_executed_lines(struct ctx *c, json_t *misc, long long cid)
{
	json_t *boot = gcov_candidate_json(c->db, cid);
	json_t *ids = candidate_patch_list(c->db, cid), *v;
	json_t *per = json_array();
	size_t i;

	if (!json_is_object(boot)) {
		json_decref(boot);
		json_decref(ids);
		json_decref(per);
		err_clear();
		return;
	}
	set_text(misc, "coverage_boot",
		 json_string_value(json_object_get(boot, "summary")));
	json_array_foreach(ids, i, v)
	{
		json_t *l = gcov_patch_json(c->db, cid, json_integer_value(v));
		if (json_is_object(l))
			json_array_append_new(
				per,
				json_pack("{s:O, s:O, s:O, s:O, s:O}",
					  "patch_id", v, "changed",
					  json_object_get(l, "changed"),
					  "executable",
					  json_object_get(l, "executable"),
					  "executed",
					  json_object_get(l, "executed"), "text",
					  json_object_get(l, "text")));
		json_decref(l);
	}
	json_object_set_new(misc, "executed_lines", per);
	json_decref(boot);
	json_decref(ids);
}

static void add_checkout(struct ctx *c, sqlite3_stmt *st, const char *id)
{
	long long cid = sqlite3_column_int64(st, 0);
	const char *verdict = db_col_text(st, 2);
	const char *detail = db_col_text(st, 3);
	const char *commit = db_col_text(st, 5);
	const char *started = db_col_text(st, 6);
	const char *purpose = db_col_text(st, 1);
	json_t *co = json_object(), *misc = json_object();
	char base[REPO_HEX_SIZE] = "";
	long long npatches = 0;

	json_object_set_new(co, "id", json_string(id));
	json_object_set_new(co, "origin", json_string(KCIDB_ORIGIN));
	json_object_set_new(co, "tree_name", json_string(c->tree));
	set_text(co, "git_repository_branch", c->cfg->branch);
	/* the patches went onto the commit's parent (the branch tip) */
	if (is_sha1(commit)) {
		char *spec = xstrfmt("%s^", commit);
		if (c->repo && repo_resolve(c->repo, spec, base) == 0 &&
		    is_sha1(base)) {
			json_object_set_new(co, "git_commit_hash",
					    json_string(base));
			add_patchset(c, co, db_col_text(st, 4));
		} else {
			/* the commit holds the patches already */
			json_object_set_new(co, "git_commit_hash",
					    json_string(commit));
			json_object_set_new(co, "patchset_hash",
					    json_string(""));
		}
		free(spec);
		set_text(misc, "candidate_commit", commit);
	} else {
		add_patchset(c, co, db_col_text(st, 4));
	}
	{
		json_t *ids = json_loads(db_col_text(st, 4) ? db_col_text(st, 4)
							    : "[]",
					 0, NULL);
		npatches = (long long)json_array_size(ids);
		json_object_set_new(misc, "patch_ids",
				    ids ? ids : json_array());
	}
	{
		char *cm = xstrfmt("stableq candidate %lld (%s): %s + %lld "
				   "patch%s",
				   cid, purpose ? purpose : "queue",
				   c->cfg->branch, npatches,
				   npatches == 1 ? "" : "es");
		set_text(co, "comment", cm);
		free(cm);
	}
	if (started) {
		/* the store's times are UTC: "YYYY-MM-DDTHH:MM:SSZ" */
		set_text(co, "start_time", started);
	}
	int applied = candidate_verdict_parse(verdict) != CV_APPLY_FAILED;

	json_object_set_new(co, "valid", json_boolean(applied));
	if (!applied && detail)
		json_object_set_new(co, "log_excerpt", excerpt(detail));
	add_executed_lines(c, misc, cid);
	json_object_set_new(misc, "candidate_id", json_integer(cid));
	set_text(misc, "purpose", purpose);
	set_text(misc, "verdict", verdict);
	set_text(misc, "detail", detail);
	json_object_set_new(co, "misc", misc);
	json_array_append_new(c->checkouts, co);
}

static void add_build(struct ctx *c, long long cid, const char *checkout_id,
		      long long bid, char **out_id, int *ok)
{
	sqlite3_stmt *st = candidate_build_row(c->db, bid);
	json_t *b, *misc;

	*out_id = NULL;
	*ok = 0;
	if (!st || sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return;
	}
	*out_id = xstrfmt("%s:build-%lld-candidate-%lld", KCIDB_ORIGIN, bid,
			  cid);
	*ok = !strcmp(db_col_text(st, 0) ? db_col_text(st, 0) : "", "ok");
	b = json_object();
	misc = json_object();
	json_object_set_new(b, "id", json_string(*out_id));
	json_object_set_new(b, "checkout_id", json_string(checkout_id));
	json_object_set_new(b, "origin", json_string(KCIDB_ORIGIN));
	{
		/* the candidate's cell of the matrix (cell.h) */
		struct cell cl = { "x86_64", "gcc" };
		const struct karch *ka;
		struct strbuf cmd = STRBUF_INIT;
		if (cell_of_row(c->db, cid, &cl) < 0)
			err_clear();
		ka = karch_boot_find(cl.arch);
		json_object_set_new(b, "architecture",
				    json_string(ka ? ka->kcidb : cl.arch));
		json_object_set_new(b, "compiler", json_string(cl.compiler));
		/* make's command line as kbuild.c gives it for the cell */
		strbuf_addstr(&cmd, "make O=BUILD_DIR");
		if (ka && !karch_is_host(ka))
			strbuf_addf(&cmd, " ARCH=%s", ka->make_arch);
		if (!strcmp(cl.compiler, "clang"))
			strbuf_addstr(&cmd, " LLVM=1 CC=\"ccache clang\"");
		else if (ka && *ka->cross)
			strbuf_addf(&cmd,
				    " CROSS_COMPILE=%s CC=\"ccache %sgcc\"",
				    ka->cross, ka->cross);
		else
			strbuf_addstr(&cmd, " CC=\"ccache gcc\"");
		strbuf_addf(&cmd, " %s modules", ka ? ka->target : "bzImage");
		json_object_set_new(b, "command", json_string(cmd.buf));
		strbuf_release(&cmd);
	}
	json_object_set_new(b, "config_name", json_string(c->config));
	set_text(b, "start_time", db_col_text(st, 3));
	if (sqlite3_column_type(st, 1) != SQLITE_NULL)
		json_object_set_new(b, "duration",
				    json_real(sqlite3_column_double(st, 1)));
	if (*c->base) {
		char *u = xstrfmt("%s/api/v1/builds/%lld/log", c->base, bid);
		json_object_set_new(b, "log_url", json_string(u));
		free(u);
	}
	if (db_col_text(st, 2) && *db_col_text(st, 2))
		json_object_set_new(b, "log_excerpt",
				    excerpt(db_col_text(st, 2)));
	json_object_set_new(b, "valid", json_boolean(*ok));
	json_object_set_new(misc, "build_id", json_integer(bid));
	set_text(misc, "config_hash", db_col_text(st, 4));
	set_text(misc, "kernel_config_dir", c->cfg->kernel_config_dir);
	json_object_set_new(b, "misc", misc);
	json_array_append_new(c->builds, b);
	sqlite3_finalize(st);
}

static const char *kcidb_status(const char *result)
{
	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		if (result && !strcmp(statuses[i].result, result))
			return statuses[i].status;
	return "ERROR";
}

static json_t *new_test(const char *id, const char *build_id,
			const char *path, const char *status)
{
	json_t *t = json_object();

	json_object_set_new(t, "id", json_string(id));
	json_object_set_new(t, "build_id", json_string(build_id));
	json_object_set_new(t, "origin", json_string(KCIDB_ORIGIN));
	json_object_set_new(t, "path", json_string(path));
	json_object_set_new(t, "status", json_string(status));
	json_object_set_new(
		t, "environment",
		json_pack("{s:s}", "comment",
			  "QEMU x86_64 guest (stableq's initramfs test set)"));
	return t;
}

static void add_tests(struct ctx *c, long long cid, const char *build_id,
		      const char *verdict, const char *detail)
{
	sqlite3_stmt *st = testcase_results_rows(c->db, cid);
	int n = 0;

	while (st && sqlite3_step(st) == SQLITE_ROW) {
		const char *result = db_col_text(st, 3);
		char *id = xstrfmt("%s:test-%lld", KCIDB_ORIGIN,
				   (long long)sqlite3_column_int64(st, 0));
		char *path = test_path(db_col_text(st, 2));
		json_t *t = new_test(id, build_id, path, kcidb_status(result));
		json_t *misc = json_object();

		set_text(t, "comment", db_col_text(st, 4));
		if (db_col_text(st, 5) && *db_col_text(st, 5))
			json_object_set_new(t, "log_excerpt",
					    excerpt(db_col_text(st, 5)));
		json_object_set_new(misc, "candidate_id", json_integer(cid));
		json_object_set_new(misc, "run",
				    json_integer(sqlite3_column_int64(st, 1)));
		set_text(misc, "stableq_result", result);
		set_text(misc, "name", db_col_text(st, 2));
		/* against the tip: regression, known, flaky, pass, skip */
		set_text(misc, "standing", db_col_text(st, 6));
		json_object_set_new(t, "misc", misc);
		json_array_append_new(c->tests, t);
		free(id);
		free(path);
		n++;
	}
	sqlite3_finalize(st);
	if (n)
		return;
	/* built but no results: the guest hung, or the step never ran */
	{
		int hung = candidate_verdict_parse(verdict) == CV_HANG;
		char *id = xstrfmt("%s:candidate-%lld-boot", KCIDB_ORIGIN, cid);
		json_t *t = new_test(id, build_id, "boot", hung ? "FAIL" : "MISS");
		set_text(t, "comment",
			 detail ? detail
				: hung ? "the guest hung"
				       : "the boot step did not run");
		json_object_set_new(t, "misc", json_pack("{s:I}", "candidate_id",
							 (json_int_t)cid));
		json_array_append_new(c->tests, t);
		free(id);
	}
}

json_t *kcidb_export(sqlite3 *db, const struct config *cfg, const char *since,
		     const char *base_url)
{
	struct ctx c = { .db = db, .cfg = cfg };
	sqlite3_stmt *st;
	long long branch = 0;
	int ret;
	json_t *out = NULL;

	ret = cfg->nbranches > 1
		      ? branch_lookup(db, cfg->branch_key, 0, &branch)
		      : 0;
	if (ret == ERR_NOTFOUND)
		branch = -1; /* no such branch: the rows of no branch */
	else if (ret < 0)
		return NULL;
	st = candidate_done_rows(db, since, branch);
	if (!st)
		return NULL;
	c.base = base_url ? base_url : "";
	c.tree = tree_name(cfg->branch);
	c.config = config_name(cfg->kernel_config_dir);
	c.checkouts = json_array();
	c.builds = json_array();
	c.tests = json_array();
	if (repo_open(&c.repo, cfg->tree_dir) < 0) {
		c.repo = NULL;
		err_clear();
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		long long cid = sqlite3_column_int64(st, 0);
		char *co_id = xstrfmt("%s:candidate-%lld", KCIDB_ORIGIN, cid);
		char *build_id = NULL;
		int ok = 0;

		add_checkout(&c, st, co_id);
		if (sqlite3_column_type(st, 7) != SQLITE_NULL)
			add_build(&c, cid, co_id, sqlite3_column_int64(st, 7),
				  &build_id, &ok);
		if (build_id && ok)
			add_tests(&c, cid, build_id, db_col_text(st, 2),
				  db_col_text(st, 3));
		free(build_id);
		free(co_id);
	}
	sqlite3_finalize(st);
	out = json_pack("{s:{s:i,s:i},s:o,s:o,s:o}", "version", "major", 4,
			"minor", 5, "checkouts", c.checkouts, "builds",
			c.builds, "tests", c.tests);
	repo_free(c.repo);
	free(c.tree);
	free(c.config);
	return out;
}
