/* upstream.c: the upstream clone's commit-to-release index (sql/011): built once, then incrementally. */
#include "upstream.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "repo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Same-commit test of two SHAs, one of them abbreviated (check-fixes.c's). */
#define SHA_MATCH(col, b)                                                      \
	"substr(" col ", 1, 12) = substr(" b ", 1, 12) AND substr(" col       \
	", 1, min(12, length(" b "))) = substr(" b ", 1, min(12, length(" col \
	")))"

struct ix {
	sqlite3 *db;
	const char *path;
	const char *release; /* the tag being walked, or NULL (HEAD) */
	long added;
};

/*
 * The hex run after a line's lead (case-insensitive), e.g. "Fixes:" or
 * "This reverts commit": inserted as a ref of kind. Commit messages of a
 * clone the maintainer chose are not hostile mail, but still bounded.
 */
static int refs_after(struct ix *x, const char *sha, const char *msg,
		      const char *lead, const char *kind)
{
	size_t ln = strlen(lead);

	for (const char *s = msg; s && *s;) {
		const char *eol = strchr(s, '\n');
		const char *t = s;
		while (*t == ' ' || *t == '\t')
			t++;
		if (!strncasecmp(t, lead, ln)) {
			char hex[41];
			size_t n = 0;
			t += ln;
			while (*t == ' ' || *t == '\t')
				t++;
			while (n < 40 && isxdigit((unsigned char)t[n])) {
				hex[n] = (char)tolower((unsigned char)t[n]);
				n++;
			}
			hex[n] = '\0';
			if (n >= 8 && !isxdigit((unsigned char)t[n]) &&
			    db_exec(x->db,
				    "INSERT INTO upstream_refs (repo, sha, kind,"
				    " target) VALUES (?, ?, ?, ?)",
				    "tttt", x->path, sha, kind, hex) < 0)
				return ERR_IO;
		}
		s = eol ? eol + 1 : NULL;
	}
	return 0;
}

static int add_commit(void *ctx, const struct repo_walk_commit *c)
{
	struct ix *x = ctx;
	char *had = NULL;
	int ret = db_query_text(x->db, &had,
				"SELECT coalesce(release, '') FROM"
				" upstream_commits WHERE repo = ? AND sha = ?",
				"tt", x->path, c->sha);

	if (ret == 0) {
		/* seen untagged before: this tag is its first release */
		if (!*had && x->release)
			ret = db_exec(x->db,
				      "UPDATE upstream_commits SET release = ?"
				      " WHERE repo = ? AND sha = ?",
				      "ttt", x->release, x->path, c->sha);
		free(had);
		return ret < 0 ? ret : 0;
	}
	if (ret != ERR_NOTFOUND)
		return ret;
	err_clear();
	if ((ret = db_exec(x->db,
			   "INSERT INTO upstream_commits (repo, sha, subject,"
			   " release, backport_of) VALUES (?, ?, ?, ?, ?)",
			   "ttttt", x->path, c->sha,
			   c->summary ? c->summary : "", x->release,
			   c->backport_of)) < 0 ||
	    (ret = refs_after(x, c->sha, c->message, "Fixes:", "fixes")) < 0 ||
	    (ret = refs_after(x, c->sha, c->message, "This reverts commit",
			      "reverts")) < 0)
		return ret;
	x->added++;
	return 0;
}

int upstream_index_update(sqlite3 *db, struct repo *up, const char *path,
			  long *added)
{
	struct repo_tag *tags = NULL;
	struct ix x = { .db = db, .path = path };
	char head[REPO_HEX_SIZE];
	char *last = NULL;
	size_t n = 0;
	long long known = 0;
	int ret;

	if (added)
		*added = 0;
	if ((ret = repo_resolve(up, "HEAD", head)) < 0)
		return err_prefix(ret, "upstream_repo %s", path);
	if ((ret = repo_version_tags(up, &tags, &n)) < 0)
		return err_prefix(ret, "upstream_repo %s", path);
	if ((ret = db_begin(db)) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (db_query_int(db, &known,
				 "SELECT 1 FROM upstream_tags WHERE repo = ? AND"
				 " name = ?",
				 "tt", path, tags[i].name) == 0)
			continue;
		err_clear();
		/* what the previous version lacks; older ones are indexed */
		x.release = tags[i].name;
		if ((ret = repo_walk(up, tags[i].commit,
				     i ? tags[i - 1].commit : NULL, add_commit,
				     &x)) < 0 ||
		    (ret = db_exec(db,
				   "INSERT INTO upstream_tags (repo, name,"
				   " commit_sha, released_at) VALUES (?, ?, ?,"
				   " ?)",
				   "ttti", path, tags[i].name, tags[i].commit,
				   tags[i].time)) < 0)
			goto fail;
	}
	/* the commits no tag holds yet: HEAD past the newest version */
	if (db_query_text(db, &last,
			  "SELECT head FROM upstream_index_state WHERE repo = ?",
			  "t", path) < 0)
		err_clear();
	if (!last || strcmp(last, head)) {
		x.release = NULL;
		if ((ret = repo_walk(up, head, n ? tags[n - 1].commit : NULL,
				     add_commit, &x)) < 0)
			goto fail;
	}
	if ((ret = db_exec(db,
			   "INSERT INTO upstream_index_state (repo, head,"
			   " commits) VALUES (?1, ?2, ?3) ON CONFLICT(repo) DO"
			   " UPDATE SET head = ?2, commits = commits + ?3,"
			   " indexed_at = strftime('%Y-%m-%dT%H:%M:%SZ',"
			   " 'now')",
			   "tti", path, head, (long long)x.added)) < 0 ||
	    (ret = db_commit(db)) < 0)
		goto fail;
	if (x.added)
		log_info("upstream %s: indexed %ld new commits", path, x.added);
	if (added)
		*added = x.added;
	ret = 0;
	goto out;
fail:
	db_rollback(db);
out:
	free(last);
	free(tags);
	return ret;
}

static int each(sqlite3_stmt *st, upstream_commit_fn *fn, void *ctx)
{
	int n = 0, rc;

	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		n++;
		if (fn && fn(ctx, db_col_text(st, 0), db_col_text(st, 1),
			     db_col_text(st, 2)))
			break;
	}
	db_stmt_done(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE
		       ? n
		       : err_set(ERR_IO, "upstream index: a lookup failed");
}

#define REFS_OF(kind)                                                          \
	"SELECT DISTINCT c.sha, c.subject, c.release FROM upstream_refs r"      \
	" JOIN upstream_commits c ON c.repo = r.repo AND c.sha = r.sha"        \
	" LEFT JOIN upstream_tags t ON t.repo = c.repo AND t.name = c.release" \
	" WHERE r.repo = ?1 AND r.kind = '" kind "' AND " SHA_MATCH(           \
		"r.target", "?2") " ORDER BY t.released_at IS NULL,"           \
				  " t.released_at, c.sha"

int upstream_fixes_of(sqlite3 *db, const char *path, const char *sha,
		      upstream_commit_fn *fn, void *ctx)
{
	if (!sha || strlen(sha) < 8)
		return 0;
	return each(db_stmt(db, REFS_OF("fixes"), "tt", path, sha), fn, ctx);
}

int upstream_reverts_of(sqlite3 *db, const char *path, const char *sha,
			upstream_commit_fn *fn, void *ctx)
{
	if (!sha || strlen(sha) < 8)
		return 0;
	return each(db_stmt(db, REFS_OF("reverts"), "tt", path, sha), fn, ctx);
}

int upstream_release_of(sqlite3 *db, const char *path, const char *sha,
			char **tag, long long *released_at)
{
	sqlite3_stmt *st;
	int ret = ERR_NOTFOUND;

	*tag = NULL;
	*released_at = 0;
	if (!sha || strlen(sha) < 8)
		return err_set(ERR_NOTFOUND, "no upstream commit");
	st = db_stmt(db,
		     "SELECT c.release, t.released_at FROM upstream_commits c"
		     " LEFT JOIN upstream_tags t ON t.repo = c.repo AND"
		     " t.name = c.release WHERE c.repo = ?1 AND "
		     SHA_MATCH("c.sha", "?2") " LIMIT 1",
		     "tt", path, sha);
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		if (db_col_text(st, 0)) {
			*tag = xstrdup(db_col_text(st, 0));
			*released_at = sqlite3_column_int64(st, 1);
			ret = 1;
		} else {
			ret = 0;
		}
	}
	db_stmt_done(st);
	if (ret == ERR_NOTFOUND)
		err_set(ERR_NOTFOUND, "upstream commit %.12s is not in the index",
			sha);
	return ret;
}

/* "v6.1.5": 6, 1, 5; "v6.4" and "v6.4-rc2": 6, 4, -1. 0 when not a version. */
static int tag_version(const char *tag, long v[3])
{
	char *e;

	v[0] = v[1] = 0;
	v[2] = -1;
	if (!tag || *tag != 'v')
		return 0;
	v[0] = strtol(tag + 1, &e, 10);
	if (*e != '.')
		return 0;
	v[1] = strtol(e + 1, &e, 10);
	if (*e == '.')
		v[2] = strtol(e + 1, &e, 10);
	return 1;
}

int upstream_release_in(const char *tag, const char *version)
{
	long t[3], b[3];
	char *vt = version ? xstrfmt("v%s", version) : NULL;
	int ok = tag_version(tag, t) && tag_version(vt, b);

	free(vt);
	if (!ok)
		return 0;
	if (t[0] != b[0] || t[1] != b[1])
		return t[0] < b[0] || (t[0] == b[0] && t[1] < b[1]);
	/* the series' own mainline release (or its -rc), or a stable one up
	 * to the tree's */
	return t[2] < 0 || (b[2] >= 0 && t[2] <= b[2]);
}

int upstream_backport_in(sqlite3 *db, const char *path, const char *sha,
			 const char *version, char **tag)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	*tag = NULL;
	if (!sha || strlen(sha) < 8)
		return 0;
	st = db_stmt(db,
		     "SELECT release FROM upstream_commits WHERE repo = ?1 AND"
		     " release IS NOT NULL AND " SHA_MATCH("backport_of", "?2"),
		     "tt", path, sha);
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *rel = db_col_text(st, 0);
		long v[3];
		/* a backport of the branch's series, up to its version */
		if (tag_version(rel, v) && v[2] >= 0 &&
		    upstream_release_in(rel, version)) {
			*tag = xstrdup(rel);
			ret = 1;
			break;
		}
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		ret = err_set(ERR_IO, "upstream index: %s", sqlite3_errmsg(db));
	db_stmt_done(st);
	return ret;
}
