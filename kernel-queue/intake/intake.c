/* intake.c: parse everything first, then store it in one transaction. */
#include "intake.h"
#include "branch.h"
#include "ctx.h"
#include "check.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "origin.h"
#include "queue.h"
#include "series.h"
#include "source.h"
#include "strbuf.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>


static int intake_import_buffer_to(sqlite3 *db, long long branch, unsigned flags,
			    const char *buf, size_t len, const char *name,
			    size_t max_bytes, const char *actor,
			    struct intake_result *res);

static int intake_import_paths(sqlite3 *db, long long branch, unsigned flags,
			const char *const *paths, size_t n, size_t max_bytes,
			const char *actor, struct intake_result *res);

struct parsed {
	struct patch **v;
	size_t n, alloc;
	const char **kinds; /* per patch: source kind */
	const char **paths; /* per patch: source path (borrowed) */
	size_t own; /* stableq's own files skipped */
};

static void parsed_push(struct parsed *ps, struct patch *p, const char *kind,
			const char *path)
{
	if (ps->n == ps->alloc) {
		ps->alloc = ps->alloc ? ps->alloc * 2 : 16;
		ps->v = xrealloc(ps->v, ps->alloc * sizeof(*ps->v));
		ps->kinds = xrealloc(ps->kinds, ps->alloc * sizeof(*ps->kinds));
		ps->paths = xrealloc(ps->paths, ps->alloc * sizeof(*ps->paths));
	}
	ps->v[ps->n] = p;
	ps->kinds[ps->n] = kind;
	ps->paths[ps->n] = path;
	ps->n++;
}

static void parsed_free(struct parsed *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		patch_free(ps->v[i]);
	free(ps->v);
	free(ps->kinds);
	free(ps->paths);
}

/* Says what was cut of a new patch's text, in res->notes. */
static void note_cuts(struct intake_result *res, const char *path,
		      const struct patch *p)
{
	struct strbuf sb = STRBUF_INIT;

	if (!p->subject_cut && !p->name_cut)
		return;
	strbuf_addstr(&sb, res->notes ? res->notes : "");
	if (p->subject_cut)
		strbuf_addf(&sb, "%s: subject cut to %d bytes (was %zu)\n",
			    path, PATCH_TEXT_MAX, p->subject_cut);
	if (p->name_cut)
		strbuf_addf(&sb, "%s: author name cut to %d bytes (was %zu)\n",
			    path, PATCH_TEXT_MAX, p->name_cut);
	free(res->notes);
	res->notes = strbuf_detach(&sb, NULL);
}

int intake_check(const struct branch_ctx *bc, const struct intake_result *res,
		 void (*each)(const char *key, int ret,
			      const struct check_summary *sum, void *ctx),
		 void *ctx)
{
	long long *ids = xcalloc(res->nids + 1, sizeof(*ids));
	int status = 0, ret;

	for (int b = 0; b < bc->cfg.nbranches && status >= 0; b++) {
		const char *key = bc->cfg.branches[b].key;
		struct check_summary sum = { 0 };
		struct branch_ctx on_key;
		size_t n = 0;

		if (branch_ctx_for(bc, key, &on_key) < 0)
			continue; /* not in the store: nothing went there */
		for (size_t i = 0; i < res->nids; i++) {
			char *on = NULL;
			if (queue_patch_branch(bc->db, res->ids[i], &on) == 0 &&
			    !strcmp(on, key))
				ids[n++] = res->ids[i];
			free(on);
		}
		if (!n)
			continue;
		if (each)
			each(key, 0, NULL, ctx);
		ret = check_run(&on_key, ids, n, &sum);
		if (each)
			each(key, ret, &sum, ctx);
		json_decref(sum.json);
		if (ret < 0 && ret != ERR_NOTFOUND)
			status = ret;
	}
	free(ids);
	return status;
}

/*
 * The intake flags of every door: with one branch 0; with several,
 * [PATCH X.Y] routes a patch (ROUTE) unless the caller named a branch
 * (--branch, ?branch=), and a prefix naming another or an unknown branch
 * is refused (STRICT).
 */
static unsigned flags_for(int nbranches, int branch_named)
{
	if (nbranches < 2)
		return 0;
	return branch_named ? INTAKE_STRICT : INTAKE_ROUTE | INTAKE_STRICT;
}

static atomic_int running;

int intake_running(void)
{
	return atomic_load(&running);
}

static int submit(struct branch_ctx *bc, long long branch,
		  const struct intake_source *src,
		  const struct intake_report *rep, struct intake_result *res)
{
	unsigned flags = flags_for(bc->cfg.nbranches, branch != 0);
	size_t max = (size_t)bc->cfg.max_patch_bytes;
	int ret;

	memset(res, 0, sizeof(*res));
	if (!branch && (branch = queue_default_branch(bc->db)) < 0)
		return (int)branch;
	ret = src->paths
		      ? intake_import_paths(bc->db, branch, flags, src->paths,
					    src->npaths, max, bc->actor, res)
		      : intake_import_buffer_to(bc->db, branch, flags, src->buf,
						src->len, src->name, max,
						bc->actor, res);
	if (ret < 0)
		return ret;
	if (rep && rep->imported)
		rep->imported(res, rep->ctx);
	if (res->added)
		res->checks = intake_check(bc, res, rep ? rep->checked : NULL,
					   rep ? rep->ctx : NULL);
	return 0;
}

int intake_submit(struct branch_ctx *bc, long long branch,
		  const struct intake_source *src,
		  const struct intake_report *rep, struct intake_result *res)
{
	int ret;

	atomic_fetch_add(&running, 1);
	ret = submit(bc, branch, src, rep, res);
	atomic_fetch_sub(&running, 1);
	return ret;
}

void intake_result_release(struct intake_result *r)
{
	if (!r)
		return;
	free(r->ids);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

static int parse_series(struct parsed *ps, const char *dir, size_t max)
{
	struct series_entry *e = NULL;
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	int ret = series_load(&e, &n, dir);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		struct patch *p = NULL;
		strbuf_reset(&sb);
		if ((ret = strbuf_read_file(&sb, e[i].path, max)) < 0) {
			ret = errno == EFBIG ? ERR_TOOBIG : ERR_IO;
			break;
		}
		if (series_is_own(sb.buf, sb.len)) {
			ps->own++;
			continue;
		}
		if ((ret = patch_parse(&p, sb.buf, sb.len, e[i].path, max)) < 0)
			break;
		free(p->filename);
		p->filename = xstrdup(e[i].name);
		parsed_push(ps, p, "series", dir);
	}
	strbuf_release(&sb);
	series_free(e, n);
	return ret < 0 ? ret : 0;
}

static int parse_buffer(struct parsed *ps, const char *buf, size_t len,
			const char *name, size_t max, const char *kind)
{
	struct patch **v = NULL;
	int n = mbox_parse(&v, buf, len, name, max);

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		parsed_push(ps, v[i],
			    n > 1 && strcmp(kind, "api") ? "mbox" : kind, name);
	free(v);
	return 0;
}

static int parse_path(struct parsed *ps, const char *path, size_t max)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int ret;

	if (stat(path, &st) < 0)
		return err_set(ERR_NOTFOUND, "%s: %s", path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return parse_series(ps, path, max);
	if (!S_ISREG(st.st_mode))
		return err_set(ERR_INVALID, "%s: not a file or a directory",
			       path);
	if (max && (size_t)st.st_size > max)
		return err_set(ERR_TOOBIG,
			       "%s: %lld bytes is over the limit of %zu bytes"
			       " (max_patch_bytes)",
			       path, (long long)st.st_size, max);
	if ((ret = strbuf_read_file(&sb, path, max)) < 0)
		return ret;
	ret = parse_buffer(ps, sb.buf, sb.len, path, max, "patch");
	strbuf_release(&sb);
	return ret;
}

/*
 * The stable version a subject prefix names: "PATCH 6.12 2/3" and
 * "PATCH 6.1.y" name "6.12" and "6.1" (in ver, NUL-terminated); 0 when it
 * names none.
 */
static int prefix_version(const char *prefix, char *ver, size_t size)
{
	const char *p = prefix;

	while (p && *p) {
		size_t n = strcspn(p, " \t");
		size_t d1 = strspn(p, "0123456789"), d2;
		if (d1 && d1 < n && p[d1] == '.' &&
		    (d2 = strspn(p + d1 + 1, "0123456789")) > 0) {
			size_t len = d1 + 1 + d2;
			if ((len == n || (len + 2 == n && p[len] == '.' &&
					  (p[len + 1] == 'y' || p[len + 1] == 'x'))) &&
			    len < size) {
				memcpy(ver, p, len);
				ver[len] = '\0';
				return 1;
			}
		}
		p += n;
		p += strspn(p, " \t");
	}
	return 0;
}

/* A version token: "6.1", "6.1.y", "5.15.x" (n digits, not "2/3", not "v2"). */
static int version_token(const char *t, size_t n, char *ver, size_t size)
{
	size_t d1 = strspn(t, "0123456789"), d2, len;

	if (!d1 || d1 >= n || t[d1] != '.' ||
	    !(d2 = strspn(t + d1 + 1, "0123456789")))
		return 0;
	len = d1 + 1 + d2;
	if (len > n || (len != n && !(len + 2 == n && t[len] == '.' &&
				     (t[len + 1] == 'y' || t[len + 1] == 'x'))))
		return 0;
	if (len >= size)
		return 0;
	memcpy(ver, t, len);
	ver[len] = '\0';
	return 1;
}

int intake_prefix_versions(const char *prefix,
			   char (*ver)[INTAKE_VERSION_SIZE], int max)
{
	const char *p = prefix;
	int n = 0;

	while (p && *p && n < max) {
		size_t w = strcspn(p, " \t/,");
		char one[INTAKE_VERSION_SIZE];
		if (w && version_token(p, w, one, sizeof(one))) {
			int seen = 0;
			for (int i = 0; i < n && !seen; i++)
				seen = !strcmp(ver[i], one);
			if (!seen)
				memcpy(ver[n++], one, sizeof(one));
		}
		p += w;
		p += strspn(p, " \t/,");
	}
	return n;
}

/*
 * Which branch's queue a patch goes to: branch, or with INTAKE_ROUTE the
 * configured branch its [PATCH X.Y] prefix names. With INTAKE_STRICT a
 * prefix that names a branch not configured, or (without INTAKE_ROUTE)
 * another branch than the one asked for, is refused.
 */
static int branch_of(sqlite3 *db, long long branch, unsigned flags,
		     const struct patch *p, const char *path, long long *out)
{
	char ver[32], *keys = NULL, *want = NULL;
	long long id = 0;
	int ret;

	*out = branch;
	if (!(flags & (INTAKE_ROUTE | INTAKE_STRICT)) || !p->subject_prefix ||
	    !prefix_version(p->subject_prefix, ver, sizeof(ver)))
		return 0;
	if (branch_lookup(db, ver, 1, &id) < 0) {
		branch_keys_text(db, 1, &keys);
		ret = err_set(ERR_INVALID,
			      "%s: \"[%s] %s\" is for branch %s, which is not"
			      " configured (configured: %s)",
			      path, p->subject_prefix, p->subject, ver,
			      keys ? keys : "none");
		free(keys);
		return ret;
	}
	if (flags & INTAKE_ROUTE) {
		*out = id;
		return 0;
	}
	if (id == branch)
		return 0;
	branch_key(db, branch, &want);
	ret = err_set(ERR_INVALID,
		      "%s: \"[%s] %s\" is for branch %s, not %s",
		      path, p->subject_prefix, p->subject, ver,
		      want ? want : "?");
	free(want);
	return ret;
}

static int store(sqlite3 *db, long long branch, unsigned flags,
		 struct parsed *ps, const char *actor,
		 struct intake_result *res)
{
	long long source_id = 0;
	const char *last_path = NULL;
	int ret;

	memset(res, 0, sizeof(*res));
	res->own = ps->own;
	if (!ps->n && ps->own)
		return 0; /* only stableq's own reverts: nothing to store */
	if (!ps->n)
		return err_set(ERR_INVALID, "no patches in the input");
	res->ids = xcalloc(ps->n, sizeof(*res->ids));
	if ((ret = db_begin(db)) < 0)
		return ret;
	for (size_t i = 0; i < ps->n; i++) {
		long long id = 0, to;
		if ((ret = branch_of(db, branch, flags, ps->v[i], ps->paths[i],
				     &to)) < 0)
			goto fail;
		if (ps->paths[i] != last_path) {
			ret = source_add(db, ps->kinds[i], ps->paths[i],
					 actor, &source_id);
			if (ret < 0)
				goto fail;
			last_path = ps->paths[i];
		}
		ret = queue_add(db, to, ps->v[i], source_id, actor, &id);
		if (ret < 0) {
			err_prefix(ret, "%s", ps->paths[i]);
			goto fail;
		}
		if (ret) {
			res->added++;
			note_cuts(res, ps->paths[i], ps->v[i]);
		} else {
			res->duplicates++;
		}
		res->ids[res->nids++] = id;
	}
	if (res->added && (ret = queue_link_dependencies(db)) < 0)
		goto fail;
	if (res->added &&
	    (ret = (int)event_add(db, actor, "queue", 0, "imported",
				  "%zu new, %zu already known from %s",
				  res->added, res->duplicates,
				  ps->paths[0])) < 0)
		goto fail;
	ret = 0;
fail:
	if ((ret = db_end(db, ret)) < 0)
		intake_result_release(res);
	return ret;
}

int intake_store_locked(sqlite3 *db, long long branch, long long *source_id,
			const char *name, const struct patch *p,
			unsigned queue_flags, const char *actor, long long *id)
{
	int ret;

	if (!*source_id &&
	    (ret = source_add(db, "api", name, actor, source_id)) < 0)
		return ret;
	ret = queue_add_flags(db, branch, p, *source_id, actor, queue_flags,
			      id);
	/* list mail: marked so in this transaction, never stored unmarked
	 * (origin.h: it is built only once a maintainer queues it) */
	if (ret > 0 &&
	    (ret = origin_set_list(db, *id,
				   p->sender_email ? p->sender_email
						   : p->author_email)) == 0)
		ret = 1;
	return ret;
}

int intake_import_paths(sqlite3 *db, long long branch, unsigned flags,
			const char *const *paths, size_t n, size_t max_bytes,
			const char *actor, struct intake_result *res)
{
	struct parsed ps = { 0 };
	int ret = 0;

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < n && ret >= 0; i++)
		ret = parse_path(&ps, paths[i], max_bytes);
	if (ret >= 0)
		ret = store(db, branch, flags, &ps, actor, res);
	parsed_free(&ps);
	return ret;
}

static int intake_import_buffer_to(sqlite3 *db, long long branch, unsigned flags,
			    const char *buf, size_t len, const char *name,
			    size_t max_bytes, const char *actor,
			    struct intake_result *res)
{
	struct parsed ps = { 0 };
	int ret;

	memset(res, 0, sizeof(*res));
	if (max_bytes && len > max_bytes)
		return err_set(ERR_TOOBIG,
			       "%s: %zu bytes is over the limit of %zu bytes",
			       name, len, max_bytes);
	ret = parse_buffer(&ps, buf, len, name, max_bytes, "api");
	if (ret >= 0)
		ret = store(db, branch, flags, &ps, actor, res);
	parsed_free(&ps);
	return ret;
}

int intake_queue_due(struct branch_ctx *bc, long long *id)
{
	*id = 0;
	/* an empty queue_dir is a queue not begun: nothing to import yet */
	return bc->cfg.queue_dir && *bc->cfg.queue_dir &&
	       !series_dir_empty(bc->cfg.queue_dir);
}

int intake_seed_queue(struct branch_ctx *bc)
{
	const struct config *c = &bc->cfg;
	struct stat st;
	int ret;

	if (!*c->queue_dir || !*c->queue_seed || stat(c->queue_dir, &st) == 0)
		return 0;
	if ((ret = series_copy(c->queue_seed, c->queue_dir)) < 0)
		return err_prefix(ret, "seeding %s from %s", c->queue_dir,
				  c->queue_seed);
	log_info("queue_dir %s did not exist: seeded it from %s; the running"
		 " queue (reverts, dropped patches) is kept there",
		 c->queue_dir, c->queue_seed);
	return 1;
}
