/* rc.c: `stableq rc`: a frozen set of the queue, tagged in the tree and mailed to the list. */
#include "rc-int.h"
#include "address.h"
#include "candidate.h"
#include "compose.h"
#include "config.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "file.h"
#include "log.h"
#include "mailhdr.h"
#include "outbox.h"
#include "queue.h"
#include "release.h"
#include "repo.h"
#include "sha256.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

int rc_lock(struct branch_ctx *bc)
{
	char *path;
	int fd, ret;

	if ((ret = mkdir_p(bc->cfg.var_dir)) < 0)
		return ret;
	path = xstrfmt("%s/rc-%s.lock", bc->cfg.var_dir, bc->cfg.branch_key);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(path);
		return ret;
	}
	free(path);
	return fd;
}

void rc_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* drops the flock */
}

long long rc_open_id(sqlite3 *db, long long branch)
{
	return db_int(db, 1,
		      "SELECT id FROM rcs WHERE branch_id = ? AND state = 'open'"
		      " ORDER BY id DESC LIMIT 1",
		      "i", branch);
}

/* ---- the config ------------------------------------------------------------ */

/* Is host (without port or brackets) this machine? */
static int host_loopback(const char *h, size_t n)
{
	static const char *const names[] = { "localhost", "::1", "0.0.0.0",
					     "ip6-localhost", "ip6-loopback" };

	if (n >= 4 && !strncmp(h, "127.", 4))
		return 1;
	if (n >= 10 && !strncasecmp(h + n - 10, ".localhost", 10))
		return 1;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strlen(names[i]) == n && !strncasecmp(h, names[i], n))
			return 1;
	return 0;
}

/* A URL only this machine can fetch: a loopback host, a path, file://. */
static int url_local(const char *url)
{
	const char *p = strstr(url, "://"), *h, *end;

	if (!p) {
		/* scp-like user@host:path, else a path */
		const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
		if (!colon || (slash && slash < colon))
			return 1;
		h = strchr(url, '@');
		h = h && h < colon ? h + 1 : url;
		return host_loopback(h, (size_t)(colon - h));
	}
	if (!strncasecmp(url, "file://", 7))
		return 1;
	h = p + 3;
	end = h + strcspn(h, "/?#");
	for (const char *at = h; at < end; at++)
		if (*at == '@')
			h = at + 1;
	if (*h == '[') {
		const char *rb = memchr(h, ']', (size_t)(end - h));
		return rb ? host_loopback(h + 1, (size_t)(rb - h - 1)) : 1;
	}
	return host_loopback(h, strcspn(h, ":/?#"));
}

/* Does the list name an address on another machine? */
static int list_elsewhere(const char *list)
{
	struct mailboxes l = { 0 };
	int elsewhere = 0;

	if (address_parse(&l, list, strlen(list), 0, NULL) < 0) {
		err_clear();
		return 1; /* unreadable: take the safe side */
	}
	for (size_t i = 0; i < l.n; i++) {
		const char *at = l.v[i].addr ? strrchr(l.v[i].addr, '@') : NULL;
		if (at && !host_loopback(at + 1, strlen(at + 1)))
			elsewhere = 1;
	}
	mailboxes_release(&l);
	return elsewhere;
}

int rc_config_check(const struct config *cfg)
{
	const struct {
		const char *key, *val;
	} urls[] = {
		{ "rc_git_url", cfg->rc_git_url },
		{ "public_url", cfg->public_url },
	};

	if (!cfg->rc_list || !*cfg->rc_list || !list_elsewhere(cfg->rc_list))
		return 0;
	for (size_t i = 0; i < sizeof(urls) / sizeof(*urls); i++)
		if (urls[i].val && *urls[i].val && url_local(urls[i].val))
			return err_set(ERR_INVALID,
				       "%s = %s is a loopback (or local) URL, and"
				       " the rc's cover goes to rc_list = %s:"
				       " testers there could not fetch it; set"
				       " %s to a URL they reach (or empty)",
				       urls[i].key, urls[i].val, cfg->rc_list,
				       urls[i].key);
	return 0;
}

/* ---- the version ------------------------------------------------------------- */

/* "6.1.10" -> "6.1.11"; NULL when it is not X.Y.Z */
static char *next_version(const char *v)
{
	int a, b, c;

	if (!v || sscanf(v, "%d.%d.%d", &a, &b, &c) != 3)
		return NULL;
	return xstrfmt("%d.%d.%d", a, b, c + 1);
}

/* The version the next release will have, and its rc number. */
static int rc_version(struct branch_ctx *bc, char **base, char **out)
{
	char *tree = repo_dir_branch_version(bc->cfg.tree_dir, bc->cfg.branch);
	char *next = next_version(tree), *released = NULL;
	long long n = 0;

	free(tree);
	if (!next)
		return err_set(
			ERR_NOTFOUND,
			"branch %s: no X.Y.Z version for %s in %s (stableq"
			" tree init)",
			bc->cfg.branch_key, bc->cfg.branch, bc->cfg.tree_dir);
	/* released already (without a version bump): the one after it */
	db_query_text(
		bc->db, &released,
		"SELECT substr(version, 1, instr(version, '-rc') - 1) FROM"
		" rcs WHERE branch_id = ? AND state = 'released' ORDER BY"
		" id DESC LIMIT 1",
		"i", bc->branch_id);
	while (released && !strcmp(released, next)) {
		char *n2 = next_version(next);
		free(next);
		next = n2;
	}
	free(released);
	err_clear();
	char *like = xstrfmt("%s-rc%%", next);
	db_query_int(bc->db, &n,
		     "SELECT count(*) FROM rcs WHERE branch_id = ? AND version"
		     " LIKE ?",
		     "it", bc->branch_id, like);
	free(like);
	*out = xstrfmt("%s-rc%lld", next, n + 1);
	*base = next;
	return 0;
}

/* ---- the frozen set -------------------------------------------------------------- */

struct rc_set {
	size_t n;
	long long *ids;
	json_t **p;         /* queue_patch_json(full) */
	json_t **notice;    /* queue_notice_patch(): author, sign-offs */
	char (*hash)[SHA256_HEX_SIZE];
	char (*commit)[REPO_HEX_SIZE];
	char set_hash[SHA256_HEX_SIZE];
};

static void set_release(struct rc_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		json_decref(s->p ? s->p[i] : NULL);
		json_decref(s->notice ? s->notice[i] : NULL);
	}
	free(s->ids);
	free(s->p);
	free(s->notice);
	free(s->hash);
	free(s->commit);
	memset(s, 0, sizeof(*s));
}

/* The queued patches of the branch, each with the hash of its diff. */
static int set_load(struct branch_ctx *bc, struct rc_set *s)
{
	struct strbuf all = STRBUF_INIT;
	int ret;

	memset(s, 0, sizeof(*s));
	if ((ret = queue_ids(bc->db, bc->branch_id, PS_QUEUED, &s->ids,
			     &s->n)) < 0)
		return ret;
	s->p = xcalloc(s->n + 1, sizeof(*s->p));
	s->notice = xcalloc(s->n + 1, sizeof(*s->notice));
	s->hash = xcalloc(s->n + 1, sizeof(*s->hash));
	s->commit = xcalloc(s->n + 1, sizeof(*s->commit));
	for (size_t i = 0; i < s->n; i++) {
		const char *diff;
		if (!(s->p[i] = queue_patch_json(bc->db, s->ids[i], 1)) ||
		    !(s->notice[i] = queue_notice_patch(bc->db, s->ids[i]))) {
			ret = err_last() ? err_last() : ERR_IO;
			goto out;
		}
		diff = json_string_value(json_object_get(s->p[i], "diff"));
		sha256_hex(diff ? diff : "", diff ? strlen(diff) : 0, s->hash[i]);
		strbuf_addf(&all, "%lld %s\n", s->ids[i], s->hash[i]);
	}
	sha256_hex(all.buf ? all.buf : "", all.len, s->set_hash);
	ret = 0;
out:
	strbuf_release(&all);
	return ret;
}

/* patch-6.1.193-rc1.gz: the rc's whole diff, gzip'd, written atomically. */
static int write_patch_file(const char *path, const struct strbuf *diff)
{
	z_stream z = { 0 };
	struct strbuf gz = STRBUF_INIT;
	int ret;

	if (deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return err_set(ERR_IO, "gzip: %s", z.msg ? z.msg : "init");
	strbuf_grow(&gz, deflateBound(&z, diff->len) + 64);
	z.next_in = (unsigned char *)diff->buf;
	z.avail_in = (unsigned)diff->len;
	z.next_out = (unsigned char *)gz.buf;
	z.avail_out = (unsigned)(gz.alloc - 1);
	ret = deflate(&z, Z_FINISH);
	if (ret != Z_STREAM_END) {
		deflateEnd(&z);
		strbuf_release(&gz);
		return err_set(ERR_IO, "gzip: %s", z.msg ? z.msg : "deflate");
	}
	strbuf_setlen(&gz, z.total_out);
	deflateEnd(&z);
	ret = write_file_atomic(path, gz.buf, gz.len);
	strbuf_release(&gz);
	return ret;
}

/* What the tree holds for the rc: its commits, tag, diffstats, patch file. */
struct rc_tree {
	char base[REPO_HEX_SIZE], tip[REPO_HEX_SIZE];
	char **commits;
	struct strbuf diffstat;  /* the cover's */
	struct strbuf *stats;    /* each patch's */
	char *patch_file;
	char *signer_name, *signer_email;
};

static void tree_release(struct rc_tree *t, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (t->commits)
			free(t->commits[i]);
		if (t->stats)
			strbuf_release(&t->stats[i]);
	}
	free(t->commits);
	free(t->stats);
	strbuf_release(&t->diffstat);
	free(t->patch_file);
	free(t->signer_name);
	free(t->signer_email);
	memset(t, 0, sizeof(*t));
}

/* The rc in the tree: commits on the tip, the bump, the patch file. */
static int tree_make(struct branch_ctx *bc, struct repo *r,
		     const struct rc_set *s, const char *version,
		     struct rc_tree *t)
{
	char last[REPO_HEX_SIZE], *dir = NULL;
	const char *extra = strstr(version, "-rc");
	char *num = xstrndup(version, (size_t)(extra - version));
	struct strbuf diff = STRBUF_INIT;
	int ret;

	strbuf_init(&t->diffstat, 0);
	t->stats = xcalloc(s->n + 1, sizeof(*t->stats));
	for (size_t i = 0; i < s->n; i++)
		strbuf_init(&t->stats[i], 0);
	if ((ret = release_who(bc, bc->cfg.release_signoff, &t->signer_name,
			       &t->signer_email)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, t->base)) < 0 ||
	    (ret = release_commits(bc, r, t->base, s->ids, s->n, NULL,
				   &t->commits, last)) < 0 ||
	    (ret = release_bump(bc, r, last, num, extra,
				bc->cfg.release_signoff, t->tip)) < 0 ||
	    (ret = repo_diffstat(r, t->base, t->tip, 80, 0, &t->diffstat)) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++)
		if ((ret = repo_diffstat(r, i ? t->commits[i - 1] : t->base,
					 t->commits[i], 72, 1,
					 &t->stats[i])) < 0)
			goto out;
	dir = xstrfmt("%s/stable-review", bc->cfg.var_dir);
	t->patch_file = xstrfmt("%s/patch-%s.gz", dir, version);
	if ((ret = repo_diff_text(r, t->base, t->tip, &diff)) < 0 ||
	    (ret = mkdir_p(dir)) < 0 ||
	    (ret = write_patch_file(t->patch_file, &diff)) < 0)
		goto out;
out:
	free(num);
	free(dir);
	strbuf_release(&diff);
	return ret < 0 ? ret : 0;
}

/* Cancels the mail of rc not yet sent: it is superseded. */
static int cancel_mail(struct branch_ctx *bc, long long rc, const char *by)
{
	json_t *ids = db_rows_json(bc->db,
				   "SELECT cover_message_id AS m FROM rcs WHERE"
				   " id = ?1 UNION ALL SELECT report_message_id"
				   " FROM rcs WHERE id = ?1 AND report_message_id"
				   " IS NOT NULL UNION ALL SELECT message_id FROM"
				   " rc_patches WHERE rc_id = ?1",
				   "i", rc);
	char *why = xstrfmt("rc %lld superseded by %s", rc, by);
	const json_t *o;
	size_t i;
	int ret = ids ? 0 : ERR_IO, n = 0;

	json_array_foreach(ids, i, o) {
		const char *m = json_string_value(json_object_get(o, "m"));
		if (ret < 0 || !m)
			continue;
		ret = outbox_cancel(bc->db, m, why, bc->actor);
		n += ret > 0;
	}
	if (n)
		log_info("rc %lld: %d unsent mails cancelled (superseded by %s)",
			 rc, n, by);
	free(why);
	json_decref(ids);
	return ret < 0 ? ret : n;
}

/* The rc's ids as a candidate names them: "[1,2,4]". */
static char *ids_text(const long long *ids, size_t n)
{
	json_t *a = json_array();
	char *s;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

/* The rows and the mail of the new rc (inside the transaction). */
static int rc_store(struct branch_ctx *bc, const struct rc_set *s,
		    const struct rc_tree *t, const char *base,
		    const char *version, long long *id)
{
	time_t deadline = time(NULL) + bc->cfg.rc_window;
	char *tag = xstrfmt("v%s", version), *cover_id = NULL;
	char *patch_url = NULL, *subject = NULL;
	long long open = rc_open_id(bc->db, bc->branch_id);
	struct strbuf body = STRBUF_INIT, dl = STRBUF_INIT, hv = STRBUF_INIT;
	json_t *shown = json_array();
	int ret;
	long long m;

	if (open < 0) {
		ret = (int)open;
		goto out;
	}
	if (open) {
		if ((ret = db_exec(bc->db,
				   "UPDATE rcs SET state = 'superseded' WHERE"
				   " id = ?",
				   "i", open)) < 0 ||
		    (ret = cancel_mail(bc, open, version)) < 0)
			goto out;
	}
	if ((ret = db_exec(bc->db,
			   "INSERT INTO rcs (branch_id, version, deadline,"
			   " cover_message_id, actor, set_hash, base_commit,"
			   " rc_commit, tag, patch_file) VALUES (?, ?, ?, ?, ?,"
			   " ?, ?, ?, ?, ?)",
			   "ititttttt" "t", bc->branch_id, version,
			   (long long)deadline, "" /* the cover's, below */,
			   bc->actor, s->set_hash, t->base, t->tip, tag,
			   t->patch_file)) < 0)
		goto out;
	*id = db_last_id(bc->db);
	if (*bc->cfg.public_url)
		patch_url = xstrfmt("%s/api/v1/rc/%lld/patch",
				    bc->cfg.public_url, *id);
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(
			shown,
			json_pack("{s:O?, s:O?, s:O?}", "subject",
				  json_object_get(s->p[i], "subject"),
				  "author_name",
				  json_object_get(s->p[i], "author_name"),
				  "author_email",
				  json_object_get(s->p[i], "author_email")));
	rc_cover_body(&body,
		      &(struct rc_text){ .key = bc->cfg.branch_key,
					 .base = base,
					 .version = version,
					 .deadline = deadline,
					 .patches = shown,
					 .patch_url = patch_url,
					 .git_url = *bc->cfg.rc_git_url
							    ? bc->cfg.rc_git_url
							    : NULL,
					 .tag = tag,
					 .signer_name = t->signer_name,
					 .signer_email = t->signer_email,
					 .diffstat = t->diffstat.buf });
	strbuf_addstr(&dl, "X-KernelTest-Deadline: ");
	rc_deadline_header(&dl, deadline);
	strbuf_addf(&hv, "X-KernelTest-Version: %s", version);
	{
		char *hpatch = patch_url ? xstrfmt("X-KernelTest-Patch: %s",
						   patch_url)
					 : NULL;
		char *htree = *bc->cfg.rc_git_url
				      ? xstrfmt("X-KernelTest-Tree: %s",
						bc->cfg.rc_git_url)
				      : NULL;
		char *hbranch = htree ? xstrfmt("X-KernelTest-Branch: %s", tag)
				      : NULL;
		const char *cover_headers[8] = { "X-stable: review",
						 "X-Patchwork-Hint: ignore" };
		size_t k = 2;
		if (hpatch)
			cover_headers[k++] = hpatch;
		if (htree) {
			cover_headers[k++] = htree;
			cover_headers[k++] = hbranch;
		}
		cover_headers[k++] = hv.buf;
		cover_headers[k++] = dl.buf;
		subject = rc_subject(bc->cfg.branch_key, 0, s->n, version);
		m = compose_list(bc->db, &bc->cfg,
				 &(struct list_mail){ .kind = "rc",
						      .to = bc->cfg.rc_list,
						      .cc = bc->cfg.rc_cc,
						      .subject = subject,
						      .headers = cover_headers,
						      .body = body.buf },
				 &cover_id);
		free(hpatch);
		free(htree);
		free(hbranch);
	}
	if (m < 0) {
		ret = (int)m;
		goto out;
	}
	if ((ret = db_exec(bc->db,
			   "UPDATE rcs SET cover_message_id = ? WHERE id = ?",
			   "ti", cover_id, *id)) < 0)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		static const char *const patch_headers[] = {
			"X-stable: review", "X-Patchwork-Hint: ignore", NULL
		};
		char *mid = NULL;
		free(subject);
		subject = rc_subject(bc->cfg.branch_key, i + 1, s->n,
				     json_string_value(json_object_get(
					     s->p[i], "subject")));
		strbuf_reset(&body);
		rc_patch_body(&body, bc->cfg.branch_key, s->p[i],
			      t->stats[i].buf);
		m = compose_list(bc->db, &bc->cfg,
				 &(struct list_mail){ .kind = "rc",
						      .patch_id = s->ids[i],
						      .to = bc->cfg.rc_list,
						      .patch = s->notice[i],
						      .subject = subject,
						      .in_reply_to = cover_id,
						      .headers = patch_headers,
						      .body = body.buf },
				 &mid);
		if (m < 0) {
			ret = (int)m;
			goto out;
		}
		ret = db_exec(bc->db,
			      "INSERT INTO rc_patches (rc_id, patch_id, pos,"
			      " message_id, diff_hash, rc_commit) VALUES (?, ?,"
			      " ?, ?, ?, ?)",
			      "iiittt", *id, s->ids[i], (long long)(i + 1), mid,
			      s->hash[i], t->commits[i]);
		free(mid);
		if (ret < 0)
			goto out;
	}
	ret = (int)event_add(bc->db, bc->actor, "rc", *id, "mailed",
			     "%s: %zu patches to %s, deadline %lld, tag %s",
			     version, s->n, bc->cfg.rc_list,
			     (long long)deadline, tag);
	if (ret >= 0 && open)
		ret = (int)event_add(bc->db, bc->actor, "rc", open,
				     "superseded", "by rc %lld (%s)", *id,
				     version);
out:
	json_decref(shown);
	strbuf_release(&body);
	strbuf_release(&dl);
	strbuf_release(&hv);
	free(tag);
	free(cover_id);
	free(patch_url);
	free(subject);
	return ret < 0 ? ret : 0;
}

/*
 * stableq as the first tester: a candidate of exactly the rc's patches,
 * unless one was made already (the daemon runs it; rc_report_due() waits
 * for it).
 */
static int want_candidate(struct branch_ctx *bc, const struct rc_set *s)
{
	char *ids = ids_text(s->ids, s->n);
	long long have = 0;
	int ret = 0;

	if (*bc->cfg.tester_identity &&
	    candidate_with_patches(bc->db, bc->branch_id, ids, 0, &have) ==
		    ERR_NOTFOUND) {
		err_clear();
		long long c = candidate_create_on(bc->db, bc->branch_id, s->ids,
						  s->n, 0, "queue", 0,
						  bc->actor);
		ret = c < 0 ? (int)c : 0;
	}
	err_clear();
	free(ids);
	return ret;
}

/* An unchanged queue: the open rc, its tag made again if a crash lost it. */
static int rc_same(struct branch_ctx *bc, const struct rc_set *s, long long *id)
{
	json_t *row = db_row_json(bc->db,
				  "SELECT id, set_hash, tag, rc_commit FROM rcs"
				  " WHERE branch_id = ? AND state = 'open'"
				  " ORDER BY id DESC LIMIT 1",
				  "i", bc->branch_id);
	const char *hash = json_string_value(json_object_get(row, "set_hash"));
	const char *tag = json_string_value(json_object_get(row, "tag"));
	const char *tip = json_string_value(json_object_get(row, "rc_commit"));
	struct repo *r = NULL;
	char have[REPO_HEX_SIZE];
	int same = hash && !strcmp(hash, s->set_hash);

	err_clear();
	if (same) {
		char *ref = xstrfmt("refs/tags/%s", tag ? tag : "");
		*id = (long long)json_integer_value(json_object_get(row, "id"));
		if (tag && tip && repo_open(&r, bc->cfg.tree_dir) == 0 &&
		    repo_resolve(r, ref, have) == ERR_NOTFOUND) {
			char *msg = xstrfmt("Linux %s\n", tag + 1);
			if (repo_tag_create(r, tag, tip, "stableq",
					    "stableq@localhost", msg, 1) == 0)
				log_info("rc %lld: tag %s made again", *id, tag);
			free(msg);
		}
		err_clear();
		free(ref);
		repo_free(r);
	}
	json_decref(row);
	return same;
}

int rc_prepare(struct branch_ctx *bc, long long *id)
{
	struct rc_set s = { 0 };
	struct rc_tree t = { 0 };
	struct repo *r = NULL;
	char *version = NULL, *base = NULL, *tag = NULL;
	int fd = -1, ret;

	*id = 0;
	if (!*bc->cfg.rc_list)
		return err_set(ERR_INVALID, "rc_list is not configured: where"
					    " would the review series go?");
	if ((ret = rc_config_check(&bc->cfg)) < 0)
		return ret;
	if ((fd = rc_lock(bc)) < 0)
		return fd;
	if ((ret = set_load(bc, &s)) < 0)
		goto out;
	if (!s.n) {
		ret = err_set(ERR_CONFLICT, "branch %s: no queued patches to"
					    " review",
			      bc->cfg.branch_key);
		goto out;
	}
	/* the queue is the open rc's already: that rc, no new mail */
	if (rc_same(bc, &s, id)) {
		ret = 1;
		goto out;
	}
	if ((ret = rc_version(bc, &base, &version)) < 0 ||
	    (ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = tree_make(bc, r, &s, version, &t)) < 0)
		goto out;
	tag = xstrfmt("v%s", version);
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ret = rc_store(bc, &s, &t, base, version, id);
	if (ret >= 0)
		ret = want_candidate(bc, &s);
	if (ret >= 0) {
		/* before the commit: a failed one leaves a tag the retry of
		 * the same -rcN replaces */
		char *msg = xstrfmt("Linux %s\n", version);
		ret = repo_tag_create(r, tag, t.tip, t.signer_name,
				      t.signer_email, msg, 1);
		free(msg);
	}
	if ((ret = db_end(bc->db, ret)) < 0) {
		*id = 0;
		goto out;
	}
	log_info("rc %lld: %s: %zu patches to %s, tag %s", *id, version, s.n,
		 bc->cfg.rc_list, tag);
	ret = 0;
out:
	tree_release(&t, s.n);
	set_release(&s);
	repo_free(r);
	free(version);
	free(base);
	free(tag);
	rc_unlock(fd);
	return ret;
}

/* ---- lookups ------------------------------------------------------------------ */

int rc_by_message_id(sqlite3 *db, const char *message_id, long long *rc,
		     long long *patch)
{
	*rc = *patch = 0;
	if (!message_id)
		return 0;
	if (db_query_int(db, rc, "SELECT id FROM rcs WHERE cover_message_id = ?",
			 "t", message_id) == 0)
		return 1;
	err_clear();
	sqlite3_stmt *st = db_prepare(db,
				      "SELECT rc_id, patch_id FROM rc_patches"
				      " WHERE message_id = ?",
				      "t", message_id);
	int found = 0;

	if (st && sqlite3_step(st) == SQLITE_ROW) {
		*rc = sqlite3_column_int64(st, 0);
		*patch = sqlite3_column_int64(st, 1);
		found = 1;
	}
	sqlite3_finalize(st);
	return found;
}

int rc_add_tested(sqlite3 *db, long long rc, const char *tester,
		  const char *name, const char *message_id)
{
	int ret = db_exec(db,
			  "INSERT OR IGNORE INTO rc_tested (rc_id, tester, name,"
			  " message_id) VALUES (?, lower(?), ?, ?)",
			  "itt" "t", rc, tester, name, message_id);
	return ret < 0 ? ret : ret > 0;
}

int rc_patch_file(sqlite3 *db, long long id, char **path, char **version)
{
	json_t *row = db_row_json(db,
				  "SELECT patch_file, version FROM rcs WHERE id"
				  " = ?",
				  "i", id);
	const char *p = json_string_value(json_object_get(row, "patch_file"));

	*path = *version = NULL;
	if (!row || !p) {
		json_decref(row);
		return err_set(ERR_NOTFOUND, "rc %lld has no patch file", id);
	}
	*path = xstrdup(p);
	*version = xstrdup(json_string_value(json_object_get(row, "version")));
	json_decref(row);
	return 0;
}

json_t *rc_json(sqlite3 *db, long long branch, long long id)
{
	sqlite3_stmt *st;
	json_t *o = NULL, *a;
	int open = 0;

	if (!id && db_query_int(db, &id,
				"SELECT id FROM rcs WHERE branch_id = ? ORDER BY"
				" id DESC LIMIT 1",
				"i", branch) < 0) {
		err_set(ERR_NOTFOUND, "no rc yet: stableq rc sends one");
		return NULL;
	}
	o = db_row_json(db,
			"SELECT id, version, deadline, state, cover_message_id,"
			" created_at, tag, patch_file, base_commit, rc_commit,"
			" release_commit, released_at, report_message_id,"
			" branch_id,"
			" (deadline > strftime('%s','now') AND state = 'open')"
			" AS window_open FROM rcs WHERE id = ?",
			"i", id);
	if (!o) {
		err_set(ERR_NOTFOUND, "no rc %lld", id);
		return NULL;
	}
	json_object_set_new(o, "window_open",
			    json_boolean(json_integer_value(
				    json_object_get(o, "window_open"))));
	open = !strcmp(json_string_value(json_object_get(o, "state")), "open");
	branch = json_integer_value(json_object_get(o, "branch_id"));
	a = json_array();
	st = db_prepare(db,
			"SELECT pos, patch_id, diff_hash FROM rc_patches WHERE"
			" rc_id = ? ORDER BY pos",
			"i", id);
	while (st && sqlite3_step(st) == SQLITE_ROW) {
		long long pid = sqlite3_column_int64(st, 1);
		const char *was = db_col_text(st, 2);
		json_t *pc = queue_patch_content_json(db, pid);
		enum patch_state ps;
		char now[SHA256_HEX_SIZE];
		const char *diff = queue_field(pc, "diff");
		if (!pc || queue_get_state(db, pid, &ps) < 0) {
			err_clear(); /* a patch no longer stored */
			json_decref(pc);
			continue;
		}
		sha256_hex(diff ? diff : "", diff ? strlen(diff) : 0, now);
		json_array_append_new(
			a, json_pack("{sIsIs:O?sssb}", "pos",
				     (json_int_t)sqlite3_column_int64(st, 0),
				     "id", (json_int_t)pid, "subject",
				     json_object_get(pc, "subject"), "state",
				     queue_state_name(ps), "stale",
				     was && strcmp(was, now)));
		json_decref(pc);
	}
	sqlite3_finalize(st);
	json_object_set_new(o, "patches", a);
	json_object_set_new(o, "tested",
			    db_rows_json(db,
					 "SELECT tester, name, message_id FROM"
					 " rc_tested WHERE rc_id = ? ORDER BY"
					 " rowid",
					 "i", id));
	json_object_set_new(
		o, "reports",
		db_rows_json(db,
			     "SELECT id, kind, tester, name, message_id, tested,"
			     " blocks, build_total, build_pass, build_fail,"
			     " qemu_total, qemu_pass, qemu_fail, summary, quote,"
			     " created_at, (blocks AND id > coalesce((SELECT"
			     " override_upto FROM rcs WHERE id = ?1), 0)) AS"
			     " holds FROM rc_reports WHERE rc_id = ?1 ORDER BY"
			     " id",
			     "i", id));
	json_object_set_new(
		o, "override",
		db_row_json(db,
			    "SELECT override_reason AS reason, override_actor AS"
			    " actor FROM rcs WHERE id = ? AND override_reason"
			    " IS NOT NULL",
			    "i", id));
	if (!json_object_get(o, "override"))
		json_object_set_new(o, "override", json_null());
	err_clear();
	if (open) {
		/* the queued patches not in it: they wait for the next rc */
		long long waiting = 0;
		char *queued = queue_queued_ids(db, branch);
		if (queued)
			waiting = db_int(db, 1,
					 "SELECT count(*) FROM json_each(?)"
					 " WHERE value NOT IN (SELECT patch_id"
					 " FROM rc_patches WHERE rc_id = ?)",
					 "ti", queued, id);
		free(queued);
		json_object_set_new(o, "waiting", json_integer(waiting));
	}
	json_object_del(o, "branch_id");
	return o;
}
