/* release.c: patches onto the branch as commits (trailers, sign-off, version bump), resumable after a crash. */
#include "release.h"
#include "address.h"
#include "candidate.h"
#include "crash.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "mime.h"
#include "queue.h"
#include "repo.h"
#include "strbuf.h"

#include <ctype.h>
#include <strings.h>

int release_who(const struct branch_ctx *bc, const char *who, char **name,
		char **email)
{
	struct mailboxes l = { 0 };
	const char *s = who && *who ? who : bc->cfg.mail_from;

	*name = *email = NULL;
	if (!s || address_parse(&l, s, strlen(s), ADDRESS_ONE, NULL) < 0 ||
	    !l.n || !l.v[0].addr) {
		mailboxes_release(&l);
		return err_set(ERR_INVALID,
			       "'%s' is not \"Name <address>\" (release_signoff,"
			       " mail_from)",
			       s ? s : "");
	}
	*email = xstrdup(l.v[0].addr);
	*name = xstrdup(l.v[0].name && *l.v[0].name ? l.v[0].name
						    : l.v[0].addr);
	mailboxes_release(&l);
	return 0;
}

/* ---- the message: b4 am -t -s ------------------------------------------ */

/* The trailers a reply may give a patch, and how a commit spells them. */
static const struct {
	const char *kind, *name;
} reply_trailers[] = {
	{ "reviewed_by", "Reviewed-by" },
	{ "acked_by", "Acked-by" },
	{ "tested_by", "Tested-by" },
};

/* "Key: value" with a key of letters, digits and dashes. */
static int is_trailer(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '-'))
		k++;
	return k && k + 1 < n && s[k] == ':' && s[k + 1] == ' ';
}

/* Does the trailer block hold line (without case)? */
static int block_has(const struct strbuf *block, const char *line)
{
	size_t n = strlen(line);

	for (const char *s = block->buf; s && *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && !strncasecmp(s, line, n))
			return 1;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

/* Removes line (without case) from the block; 1 when it was there. */
static int block_drop(struct strbuf *block, const char *line)
{
	size_t n = strlen(line);

	for (size_t at = 0; at < block->len;) {
		const char *s = block->buf + at, *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) + 1 : strlen(s);
		if ((len == n + 1 || len == n) && !strncasecmp(s, line, n)) {
			memmove(block->buf + at, block->buf + at + len,
				block->len - at - len);
			strbuf_setlen(block, block->len - len);
			return 1;
		}
		at += len;
	}
	return 0;
}

void release_message(struct strbuf *out, const json_t *p, const char *signoff)
{
	const char *msg = json_string_value(json_object_get(p, "message"));
	struct strbuf body = STRBUF_INIT, block = STRBUF_INIT;
	char *sob = signoff && *signoff ? xstrfmt("Signed-off-by: %s", signoff)
					: NULL;
	const json_t *t;
	size_t i, last;

	strbuf_addstr(&body, msg ? msg : "");
	strbuf_rtrim(&body);
	/* the trailer block: the last paragraph, when it starts with one */
	last = 0;
	for (size_t k = 0; k + 1 < body.len; k++)
		if (body.buf[k] == '\n' && body.buf[k + 1] == '\n')
			last = k + 2;
	if (last && is_trailer(body.buf + last, body.len - last)) {
		strbuf_add(&block, body.buf + last, body.len - last);
		strbuf_addch(&block, '\n');
		strbuf_setlen(&body, last);
	} else {
		strbuf_addstr(&body, "\n\n");
	}
	/* our own sign-off always goes to the bottom (b4) */
	if (sob)
		block_drop(&block, sob);
	json_array_foreach(json_object_get(p, "tags"), i, t) {
		const char *kind = json_string_value(json_object_get(t, "kind"));
		const char *addr = json_string_value(json_object_get(t, "value"));
		const char *name = json_string_value(json_object_get(t, "extra"));
		for (size_t k = 0; kind && addr &&
				   k < sizeof(reply_trailers) / sizeof(*reply_trailers);
		     k++) {
			struct strbuf line = STRBUF_INIT;
			char *raw;
			if (strcmp(kind, reply_trailers[k].kind))
				continue;
			raw = name && *name ? xstrfmt("%s: %s <%s>",
						      reply_trailers[k].name,
						      name, addr)
					    : xstrfmt("%s: %s",
						      reply_trailers[k].name,
						      addr);
			/* one line, whatever the reply held */
			mime_clean_line(&line, raw, strlen(raw));
			if (!block_has(&block, line.buf))
				strbuf_addf(&block, "%s\n", line.buf);
			strbuf_release(&line);
			free(raw);
		}
	}
	if (sob)
		strbuf_addf(&block, "%s\n", sob);
	if (!block.len) {
		/* no trailers at all: the message as it was */
		strbuf_rtrim(&body);
		strbuf_addch(&body, '\n');
	}
	strbuf_addbuf(out, &body);
	strbuf_addbuf(out, &block);
	strbuf_release(&body);
	strbuf_release(&block);
	free(sob);
}

/* ---- commits -------------------------------------------------------------- */

int release_commits(struct branch_ctx *bc, struct repo *r, const char *parent,
		    const long long *ids, size_t n, char *const *messages,
		    char ***commits, char tip[REPO_HEX_SIZE])
{
	char tree[REPO_HEX_SIZE];
	int ret;

	*commits = xcalloc(n + 1, sizeof(**commits));
	memcpy(tip, parent, REPO_HEX_SIZE);
	if ((ret = repo_tree_of(r, parent, tree)) < 0)
		return ret;
	for (size_t i = 0; i < n; i++) {
		json_t *pt = queue_patch_content_json(bc->db, ids[i]);
		struct repo_apply_result res = { 0 };
		char next[REPO_HEX_SIZE], c[REPO_HEX_SIZE];

		if (!pt)
			return err_last() ? err_last() : ERR_IO;
		ret = repo_apply(r, tree, queue_field(pt, "diff"), next, &res);
		if (ret >= 0 && res.status != REPO_APPLY_CLEAN)
			ret = err_set(ERR_CONFLICT, "patch %lld does not apply: %s",
				      ids[i], res.detail ? res.detail : "?");
		repo_apply_result_release(&res);
		if (ret >= 0)
			ret = repo_commit(r, tip, next,
					  queue_field(pt, "author_name"),
					  queue_field(pt, "author_email"),
					  queue_field(pt, "date"),
					  messages && messages[i]
						  ? messages[i]
						  : queue_field(pt, "message"),
					  c);
		json_decref(pt);
		if (ret < 0)
			return ret;
		(*commits)[i] = xstrdup(c);
		memcpy(tip, c, REPO_HEX_SIZE);
		memcpy(tree, next, sizeof(tree));
	}
	return 0;
}

/* The Makefile with SUBLEVEL and EXTRAVERSION of the version bump. */
static int makefile_bump(const char *in, const char *sublevel,
			 const char *extra, struct strbuf *out)
{
	int have_sub = 0, have_extra = 0;

	for (const char *s = in; *s;) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		size_t k = strcspn(s, " \t=");
		const char *eq = memchr(s, '=', n);
		int sub = eq && k == 8 && !strncmp(s, "SUBLEVEL", 8);
		int ext = eq && k == 12 && !strncmp(s, "EXTRAVERSION", 12);
		if (sub && !have_sub) {
			strbuf_addf(out, "SUBLEVEL = %s\n", sublevel);
			if (*extra && !strstr(in, "\nEXTRAVERSION"))
				strbuf_addf(out, "EXTRAVERSION = %s\n", extra);
			have_sub = 1;
		} else if (ext && !have_extra) {
			strbuf_addf(out, "EXTRAVERSION =%s%s\n", *extra ? " " : "",
				    extra);
			have_extra = 1;
		} else {
			strbuf_add(out, s, n);
			if (e)
				strbuf_addch(out, '\n');
		}
		s = e ? e + 1 : s + n;
	}
	if (!have_sub)
		return err_set(ERR_INVALID, "the tree's Makefile has no SUBLEVEL"
					    " line to bump");
	return 0;
}

int release_bump(struct branch_ctx *bc, struct repo *r, const char *parent,
		 const char *version, const char *extra, const char *who,
		 char out[REPO_HEX_SIZE])
{
	struct strbuf mk = STRBUF_INIT, bumped = STRBUF_INIT;
	char tree[REPO_HEX_SIZE], next[REPO_HEX_SIZE];
	const char *sub = strrchr(version, '.');
	char *name = NULL, *email = NULL, *msg = NULL;
	int ret;

	if (!sub || !sub[1])
		return err_set(ERR_INVALID, "'%s' is not X.Y.Z", version);
	if ((ret = release_who(bc, who, &name, &email)) < 0 ||
	    (ret = repo_tree_of(r, parent, tree)) < 0)
		goto out;
	if ((ret = repo_file_overlay(r, tree, NULL, "Makefile", &mk)) <= 0) {
		if (!ret)
			ret = err_set(ERR_NOTFOUND, "the tree has no Makefile");
		goto out;
	}
	if ((ret = makefile_bump(mk.buf, sub + 1, extra, &bumped)) < 0 ||
	    (ret = repo_tree_put_file(r, tree, "Makefile", bumped.buf,
				      bumped.len, next)) < 0)
		goto out;
	msg = xstrfmt("Linux %s%s\n", version, extra);
	ret = repo_commit(r, parent, next, name, email, NULL, msg, out);
out:
	strbuf_release(&mk);
	strbuf_release(&bumped);
	free(name);
	free(email);
	free(msg);
	return ret < 0 ? ret : 0;
}

int release_record(struct branch_ctx *bc, const long long *ids, size_t n,
		   char *const *commits)
{
	int ret = 0;

	for (size_t i = 0; i < n && ret >= 0; i++) {
		long long ev = queue_set_state(bc->db, ids[i], PS_RELEASED,
					       commits[i], bc->actor);
		ret = ev < 0 ? (int)ev
			     : queue_set_released_commit(bc->db, ids[i],
							 commits[i]);
	}
	return ret < 0 ? ret : queue_link_dependencies(bc->db);
}

static void free_commits(char **commits, size_t n)
{
	for (size_t i = 0; commits && i < n; i++)
		free(commits[i]);
	free(commits);
}

int release_queue(struct branch_ctx *bc, int force, size_t *n)
{
	long long *ids = NULL, ok = 0;
	size_t nids = 0;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE], parent[REPO_HEX_SIZE];
	char **commits = NULL, **msgs = NULL;
	char *queued;
	int ret;

	*n = 0;
	if ((ret = release_resume(bc)) < 0)
		return ret;
	if ((ret = queue_ids(bc->db, bc->branch_id, PS_QUEUED, &ids, &nids)) <
	    0)
		return ret;
	if (!nids) {
		free(ids);
		return 0;
	}
	queued = force ? NULL : queue_queued_ids(bc->db, bc->branch_id);
	if (!force && (!queued || candidate_with_patches(bc->db, bc->branch_id,
							 queued, 1, &ok) < 0)) {
		free(queued);
		free(ids);
		return err_set(ERR_CONFLICT,
			       "the %zu queued patches have not passed a"
			       " candidate together: run `stableq candidate`"
			       " first",
			       nids);
	}
	free(queued);
	msgs = xcalloc(nids, sizeof(*msgs));
	for (size_t i = 0; i < nids; i++) {
		json_t *p = queue_patch_json(bc->db, ids[i], 1);
		struct strbuf sb = STRBUF_INIT;
		if (!p) {
			ret = err_last() ? err_last() : ERR_IO;
			goto out;
		}
		release_message(&sb, p, bc->cfg.release_signoff);
		msgs[i] = strbuf_detach(&sb, NULL);
		json_decref(p);
	}
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0 ||
	    (ret = release_commits(bc, r, tip, ids, nids, msgs, &commits,
				   parent)) < 0)
		goto out;
	/* The store first: a crash before the branch moves is completed by
	 * release_resume(), which moves the branch to the recorded commits. */
	if ((ret = db_begin(bc->db)) < 0)
		goto out;
	ret = release_record(bc, ids, nids, commits);
	if (ret >= 0)
		ret = (int)event_add(
			bc->db, bc->actor, "branch", 0, "released",
			"%zu patches onto %s (%s-stable): %.12s..%.12s", nids,
			bc->cfg.branch, bc->cfg.branch_key, tip, parent);
	if ((ret = db_end(bc->db, ret)) < 0)
		goto out;
	crash_point("release-before-branch");
	if ((ret = repo_set_branch(r, bc->cfg.branch, parent, tip)) < 0)
		goto out;
	*n = nids;
	log_info("released %zu patches onto %s (%.12s)", nids, bc->cfg.branch,
		 parent);
out:
	free_commits(commits, nids);
	free_commits(msgs, nids);
	free(ids);
	repo_free(r);
	return ret < 0 ? ret : 0;
}

/* Moves the branch to releases the store recorded before a crash. */
int release_resume(struct branch_ctx *bc)
{
	char *newest = NULL;
	struct repo *r = NULL;
	char tip[REPO_HEX_SIZE];
	int ret;

	if (queue_newest_released(bc->db, bc->branch_id, &newest) < 0 ||
	    !newest)
		return 0;
	if ((ret = repo_open(&r, bc->cfg.tree_dir)) < 0 ||
	    (ret = repo_branch_tip(r, bc->cfg.branch, tip)) < 0)
		goto out;
	/* released in the store but the branch never moved: move it now */
	if (repo_commit_in_history(r, tip, newest) == 0 &&
	    repo_commit_in_history(r, newest, tip) > 0) {
		log_info("release: completing an interrupted release (%.12s)",
			 newest);
		ret = repo_set_branch(r, bc->cfg.branch, newest, tip);
	}
out:
	free(newest);
	repo_free(r);
	return ret < 0 ? ret : 0;
}
