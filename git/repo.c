/* repo.c: open, resolve, commit, move branches, revert, format-patch. */
#include "repo-int.h"
#include "ctx.h"
#include "err.h"
#include "patch.h"
#include "strbuf.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>
#include <time.h>

static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_init_once(void)
{
	git_libgit2_init();
	/* The tree is ours: no fsync of every loose object (git's default). */
	git_libgit2_opts(GIT_OPT_ENABLE_FSYNC_GITDIR, 0);
	/*
	 * libgit2 caches no blobs by default: the checks read a patch's files
	 * three times (apply, reverse, where its lines stand), each a loose
	 * object's open and inflate. The files patches change most are the
	 * big ones (kernel/sched/core.c: 330 KB); the cache's overall bound
	 * (256 MiB) stays.
	 */
	git_libgit2_opts(GIT_OPT_SET_CACHE_OBJECT_LIMIT, GIT_OBJECT_BLOB,
			 (size_t)4 * 1024 * 1024);
	/*
	 * Nor is every object read hashed again to verify it (SHA-1 with
	 * collision detection: a third of what checking a patch of big files
	 * cost, bench/checks.sh). git does not either; `git fsck` does.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
}

void repo_lib_init(void)
{
	pthread_once(&lib_once, lib_init_once);
}

int repo_git_err(int gitcode, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	int code;

	switch (gitcode) {
	case GIT_ENOTFOUND:
		code = ERR_NOTFOUND;
		break;
	case GIT_EAMBIGUOUS:
	case GIT_EINVALIDSPEC:
	case GIT_EINVALID:
		code = ERR_INVALID;
		break;
	case GIT_EEXISTS:
		code = ERR_EXISTS;
		break;
	case GIT_EMODIFIED:
	case GIT_ELOCKED:
	case GIT_ECONFLICT:
	case GIT_EAPPLYFAIL:
	case GIT_EMERGECONFLICT:
		code = ERR_CONFLICT;
		break;
	default:
		/* callers may pass an ERR_* code of their choice */
		code = gitcode <= ERR_GENERIC && gitcode >= ERR_AUTH
			       ? gitcode
			       : ERR_GENERIC;
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (e && e->message && *e->message)
		strbuf_addf(&sb, ": %s", e->message);
	err_set(code, "%s", sb.buf);
	strbuf_release(&sb);
	return code;
}

int repo_open(struct repo **out, const char *dir)
{
	struct repo *r;
	git_repository *git = NULL;
	int ret;

	*out = NULL;
	repo_lib_init();
	if ((ret = git_repository_open_ext(
		     &git, dir, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) < 0) {
		if (ret == GIT_ENOTFOUND)
			return err_set(ERR_NOTFOUND,
				       "%s: no git repository there (stableq "
				       "tree init makes it)",
				       dir);
		return repo_git_err(ret, "%s", dir);
	}
	r = xcalloc(1, sizeof(*r));
	r->git = git;
	r->workdir = xstrdup(git_repository_workdir(git)
				     ? git_repository_workdir(git)
				     : git_repository_path(git));
	/* libgit2 ends it with '/'; we do not */
	if (strlen(r->workdir) > 1 && r->workdir[strlen(r->workdir) - 1] == '/')
		r->workdir[strlen(r->workdir) - 1] = '\0';
	r->committer_name = xstrdup("stableq");
	r->committer_email = xstrdup("stableq@localhost");
	*out = r;
	return 0;
}

void repo_free(struct repo *r)
{
	if (!r)
		return;
	git_repository_free(r->git);
	git_odb_free(r->disk);
	free(r->workdir);
	free(r->committer_name);
	free(r->committer_email);
	free(r->ups);
	repo_reverts_clear(r);
	free(r->revs);
	free(r);
}

const char *repo_workdir(const struct repo *r)
{
	return r->workdir;
}

int repo_lookup(struct repo *r, git_object **out, const char *spec,
		git_object_t type)
{
	git_object *obj = NULL, *peeled = NULL;
	int ret;

	*out = NULL;
	if (!spec || !*spec)
		return err_set(ERR_INVALID, "empty revision");
	if ((ret = git_revparse_single(&obj, r->git, spec)) < 0) {
		if (ret == GIT_EAMBIGUOUS)
			return repo_git_err(ret, "%s: ambiguous", spec);
		if (ret == GIT_ENOTFOUND || ret == GIT_EINVALIDSPEC)
			return err_set(ERR_NOTFOUND, "%s: unknown revision",
				       spec);
		return repo_git_err(ret, "%s", spec);
	}
	if (type == GIT_OBJECT_ANY) {
		if (git_object_type(obj) != GIT_OBJECT_TAG) {
			*out = obj;
			return 0;
		}
		ret = git_tag_peel(&peeled, (git_tag *)obj);
	} else {
		ret = git_object_peel(&peeled, obj, type);
	}
	git_object_free(obj);
	if (ret < 0)
		return err_set(ERR_INVALID, "%s: not a %s", spec,
			       git_object_type2string(type));
	*out = peeled;
	return 0;
}

/* The id of what spec names, peeled to type, as hex. */
static int resolve_hex(struct repo *r, const char *spec, git_object_t type,
		      char out_hex[REPO_HEX_SIZE])
{
	git_object *obj;
	int ret = repo_lookup(r, &obj, spec, type);

	if (ret < 0)
		return ret;
	git_oid_tostr(out_hex, REPO_HEX_SIZE, git_object_id(obj));
	git_object_free(obj);
	return 0;
}

int repo_resolve(struct repo *r, const char *spec, char out_hex[REPO_HEX_SIZE])
{
	return resolve_hex(r, spec, GIT_OBJECT_ANY, out_hex);
}

int repo_tree_of(struct repo *r, const char *spec, char out_hex[REPO_HEX_SIZE])
{
	return resolve_hex(r, spec, GIT_OBJECT_TREE, out_hex);
}

int repo_commit_message(struct repo *r, const char *spec, char **message)
{
	git_object *obj;
	int ret = repo_lookup(r, &obj, spec, GIT_OBJECT_COMMIT);

	*message = NULL;
	if (ret < 0)
		return ret;
	*message = xstrdup(git_commit_message((git_commit *)obj));
	git_object_free(obj);
	return 0;
}

int repo_describe(struct repo *r, const char *spec, char **out)
{
	git_object *obj = NULL;
	git_describe_result *res = NULL;
	git_describe_options o;
	git_describe_format_options fo;
	git_buf buf = {0};
	int ret;

	*out = NULL;
	git_describe_options_init(&o, GIT_DESCRIBE_OPTIONS_VERSION);
	git_describe_format_options_init(&fo,
					 GIT_DESCRIBE_FORMAT_OPTIONS_VERSION);
	if ((ret = repo_lookup(r, &obj, spec, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	o.describe_strategy = GIT_DESCRIBE_TAGS;
	fo.abbreviated_size = 12;
	if ((ret = git_describe_commit(&res, obj, &o)) < 0) {
		ret = ret == GIT_ENOTFOUND
			      ? err_set(ERR_NOTFOUND, "%s: no tag reachable",
					spec)
			      : repo_git_err(ret, "describe %s", spec);
		goto out;
	}
	if ((ret = git_describe_format(&buf, res, &fo)) < 0) {
		ret = repo_git_err(ret, "describe %s", spec);
		goto out;
	}
	*out = xstrdup(buf.ptr);
out:
	git_buf_dispose(&buf);
	git_describe_result_free(res);
	git_object_free(obj);
	return ret;
}

/* Dates ---------------------------------------------------------------- */

static int month_of(const char *s, size_t n)
{
	static const char *const m[] = {"jan", "feb", "mar", "apr",
					"may", "jun", "jul", "aug",
					"sep", "oct", "nov", "dec"};
	if (n < 3)
		return -1;
	for (int i = 0; i < 12; i++)
		if (!strncasecmp(s, m[i], 3))
			return i;
	return -1;
}

static int all_digits(const char *s, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

/*
 * Reads the date formats found in mails and git output into seconds since
 * the epoch and a zone offset in minutes. Tokens are recognized by shape,
 * so the order does not matter: a month name, a 4-digit year, a day, a
 * HH:MM[:SS] time, a +hhmm zone (or GMT/UT/UTC/Z), an ISO YYYY-MM-DD[THH:MM].
 */
static int parse_date(const char *s, git_time_t *when, int *offset)
{
	struct tm tm;
	int year = -1, mon = -1, day = -1, hh = -1, mi = -1, ss = 0, zone = 0;
	const char *p = s;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '@') {
		char *end;
		long long t = strtoll(p + 1, &end, 10);
		if (end == p + 1)
			return -1;
		*when = (git_time_t)t;
		*offset = 0;
		p = end;
		while (*p == ' ')
			p++;
		if ((*p == '+' || *p == '-') && all_digits(p + 1, 4)) {
			int v = atoi(p + 1);
			*offset =
				(*p == '-' ? -1 : 1) * (v / 100 * 60 + v % 100);
		}
		return 0;
	}
	while (*p) {
		const char *t;
		size_t n;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		t = p;
		while (*p && *p != ' ' && *p != '\t' && *p != ',')
			p++;
		n = (size_t)(p - t);
		if (!n)
			break;
		if (n >= 10 && all_digits(t, 4) && t[4] == '-' &&
		    all_digits(t + 5, 2) && t[7] == '-' &&
		    all_digits(t + 8, 2)) {
			year = atoi(t);
			mon = atoi(t + 5) - 1;
			day = atoi(t + 8);
			if (n > 10 && (t[10] == 'T' || t[10] == 't')) {
				t += 11; /* the time follows: read it below */
				n -= 11;
			} else {
				continue;
			}
		}
		if (n >= 5 && isdigit((unsigned char)t[0]) &&
		    memchr(t, ':', n)) {
			const char *q = t;
			hh = (int)strtol(q, (char **)&q, 10);
			if (*q == ':')
				mi = (int)strtol(q + 1, (char **)&q, 10);
			if (*q == ':')
				ss = (int)strtol(q + 1, (char **)&q, 10);
			/* ISO zone glued to the time: 12:00:00+02:00 or Z */
			if (q < t + n && (*q == '+' || *q == '-')) {
				int sign = *q == '-' ? -1 : 1;
				int zh = atoi(q + 1), zm = 0;
				const char *c = strchr(q, ':');
				if (c && c < t + n)
					zm = atoi(c + 1);
				else if (zh >= 100) {
					zm = zh % 100;
					zh /= 100;
				}
				zone = sign * (zh * 60 + zm);
			}
			continue;
		}
		if ((t[0] == '+' || t[0] == '-') && n >= 5 &&
		    isdigit((unsigned char)t[1])) {
			int sign = t[0] == '-' ? -1 : 1;
			int zh, zm;
			if (n == 6 && t[3] == ':') {
				zh = atoi(t + 1);
				zm = atoi(t + 4);
			} else {
				int v = atoi(t + 1);
				zh = v / 100;
				zm = v % 100;
			}
			zone = sign * (zh * 60 + zm);
			continue;
		}
		if (!isdigit((unsigned char)t[0]) && month_of(t, n) >= 0) {
			if (mon < 0)
				mon = month_of(t, n);
			continue;
		}
		if (all_digits(t, n) && n == 4) {
			year = atoi(t);
			continue;
		}
		if (all_digits(t, n) && n <= 2) {
			day = atoi(t);
			continue;
		}
		/* day names, "(CEST)", GMT/UTC: nothing to take */
	}
	if (year < 1970 || mon < 0 || day < 1 || day > 31 || hh < 0 ||
	    hh > 23 || mi < 0 || mi > 59 || ss < 0 || ss > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = mon;
	tm.tm_mday = day;
	tm.tm_hour = hh;
	tm.tm_min = mi;
	tm.tm_sec = ss;
	*when = (git_time_t)timegm(&tm) - (git_time_t)zone * 60;
	*offset = zone;
	return 0;
}

/* Commits and branches ------------------------------------------------- */

static int lookup_hex(struct repo *r, git_object **out, const char *hex,
		      git_object_t type, const char *what)
{
	int ret = repo_lookup(r, out, hex, type);
	if (ret < 0)
		return err_prefix(ret, "%s", what);
	return 0;
}

int repo_commit(struct repo *r, const char *parent_hex, const char *tree_hex,
		const char *author_name, const char *author_email,
		const char *author_date, const char *message,
		char out_hex[REPO_HEX_SIZE])
{
	git_object *parent = NULL, *tree = NULL;
	git_signature *author = NULL, *committer = NULL;
	git_oid id;
	int ret;

	if (!author_name || !*author_name || !author_email || !message)
		return err_set(ERR_INVALID,
			       "commit: author name, email and message are "
			       "required");
	if ((ret = lookup_hex(r, &tree, tree_hex, GIT_OBJECT_TREE, "tree")) < 0)
		goto out;
	if (parent_hex && (ret = lookup_hex(r, &parent, parent_hex,
					    GIT_OBJECT_COMMIT, "parent")) < 0)
		goto out;
	if (author_date) {
		git_time_t when;
		int off;
		if (parse_date(author_date, &when, &off) < 0) {
			ret = err_set(ERR_INVALID,
				      "'%s': not a date I can read",
				      author_date);
			goto out;
		}
		ret = git_signature_new(&author, author_name, author_email,
					when, off);
	} else {
		ret = git_signature_now(&author, author_name, author_email);
	}
	if (ret < 0) {
		ret = repo_git_err(ERR_INVALID, "author '%s <%s>'", author_name,
				   author_email);
		goto out;
	}
	if ((ret = git_signature_now(&committer, r->committer_name,
				     r->committer_email)) < 0) {
		ret = repo_git_err(ERR_INVALID, "committer");
		goto out;
	}
	{
		const git_commit *parents[1] = {(git_commit *)parent};
		if ((ret = git_commit_create(&id, r->git, NULL, author,
					     committer, NULL, message,
					     (git_tree *)tree, parent ? 1 : 0,
					     parents)) < 0) {
			ret = repo_git_err(ret, "commit");
			goto out;
		}
	}
	git_oid_tostr(out_hex, REPO_HEX_SIZE, &id);
	ret = 0;
out:
	git_object_free(parent);
	git_object_free(tree);
	git_signature_free(author);
	git_signature_free(committer);
	return ret;
}

static char *branch_ref(const char *branch)
{
	if (!strncmp(branch, "refs/", 5))
		return xstrdup(branch);
	return xstrfmt("refs/heads/%s", branch);
}

int repo_branch_tip(struct repo *r, const char *branch,
		    char out_hex[REPO_HEX_SIZE])
{
	char *name = branch_ref(branch);
	git_oid id;
	int ret = git_reference_name_to_id(&id, r->git, name);

	if (ret < 0) {
		ret = ret == GIT_ENOTFOUND || ret == GIT_EINVALIDSPEC
			      ? err_set(ERR_NOTFOUND, "branch %s: not found",
					branch)
			      : repo_git_err(ret, "branch %s", branch);
	} else {
		git_oid_tostr(out_hex, REPO_HEX_SIZE, &id);
	}
	free(name);
	return ret;
}

int repo_set_branch(struct repo *r, const char *branch, const char *commit_hex,
		    const char *expected_old_hex)
{
	char *name = branch_ref(branch);
	git_object *commit = NULL;
	git_reference *ref = NULL;
	git_oid old;
	char *log = NULL;
	int ret;

	if (git_reference_is_valid_name(name) != 1) {
		ret = err_set(ERR_INVALID, "%s: not a valid branch name",
			      branch);
		goto out;
	}
	if ((ret = lookup_hex(r, &commit, commit_hex, GIT_OBJECT_COMMIT,
			      "commit")) < 0)
		goto out;
	log = xstrfmt("stableq: %s", commit_hex);
	if (!expected_old_hex) {
		ret = git_reference_create(&ref, r->git, name,
					   git_object_id(commit), 1, log);
	} else if (!*expected_old_hex) {
		ret = git_reference_create(&ref, r->git, name,
					   git_object_id(commit), 0, log);
		if (ret == GIT_EEXISTS) {
			ret = err_set(ERR_CONFLICT, "branch %s: already exists",
				      branch);
			goto out;
		}
	} else {
		if (git_oid_fromstr(&old, expected_old_hex) < 0) {
			ret = err_set(ERR_INVALID,
				      "%s: expected a full 40-digit SHA",
				      expected_old_hex);
			goto out;
		}
		ret = git_reference_create_matching(&ref, r->git, name,
						    git_object_id(commit), 1,
						    &old, log);
		if (ret == GIT_EMODIFIED || ret == GIT_ENOTFOUND) {
			char now[REPO_HEX_SIZE] = "(none)";
			git_oid cur;
			if (git_reference_name_to_id(&cur, r->git, name) == 0)
				git_oid_tostr(now, sizeof(now), &cur);
			ret = err_set(ERR_CONFLICT,
				      "branch %s moved: it is at %.12s, not "
				      "%.12s",
				      branch, now, expected_old_hex);
			goto out;
		}
	}
	if (ret < 0)
		ret = repo_git_err(ret, "branch %s", branch);
out:
	git_reference_free(ref);
	git_object_free(commit);
	free(log);
	free(name);
	return ret < 0 ? ret : 0;
}

/* Reverts -------------------------------------------------------------- */

int repo_revert(struct repo *r, const char *branch, const char *commit_hex,
		const char *message, const char *author_name,
		const char *author_email, char out_hex[REPO_HEX_SIZE])
{
	git_object *target = NULL, *tip = NULL;
	git_index *idx = NULL;
	git_index_conflict_iterator *it = NULL;
	git_merge_options mo;
	char tip_hex[REPO_HEX_SIZE], tree_hex[REPO_HEX_SIZE];
	char new_hex[REPO_HEX_SIZE];
	char *msg = NULL;
	struct strbuf safe = STRBUF_INIT;
	git_oid tree;
	int ret;

	git_merge_options_init(&mo, GIT_MERGE_OPTIONS_VERSION);
	if ((ret = repo_branch_tip(r, branch, tip_hex)) < 0)
		return ret;
	if ((ret = lookup_hex(r, &target, commit_hex, GIT_OBJECT_COMMIT,
			      "revert")) < 0)
		goto out;
	if ((ret = lookup_hex(r, &tip, tip_hex, GIT_OBJECT_COMMIT, branch)) < 0)
		goto out;
	if (git_commit_parentcount((git_commit *)target) != 1) {
		ret = err_set(ERR_INVALID,
			      "revert %.12s: a root or merge commit cannot be "
			      "reverted",
			      commit_hex);
		goto out;
	}
	if ((ret = git_revert_commit(&idx, r->git, (git_commit *)target,
				     (git_commit *)tip, 0, &mo)) < 0) {
		ret = repo_git_err(ret, "revert %.12s", commit_hex);
		goto out;
	}
	if (git_index_has_conflicts(idx)) {
		const git_index_entry *a, *o, *t;
		struct strbuf files = STRBUF_INIT;
		int n = 0;

		if (git_index_conflict_iterator_new(&it, idx) == 0)
			while (git_index_conflict_next(&a, &o, &t, it) == 0) {
				const char *p = o   ? o->path
						: t ? t->path
						    : a->path;
				strbuf_addf(&files, "%s%s", n++ ? ", " : "", p);
			}
		ret = err_set(ERR_CONFLICT,
			      "revert of %.12s on %s conflicts in %s; nothing "
			      "changed",
			      commit_hex, branch, files.buf);
		strbuf_release(&files);
		goto out;
	}
	if ((ret = git_index_write_tree_to(&tree, idx, r->git)) < 0) {
		ret = repo_git_err(ret, "revert %.12s: writing the tree",
				   commit_hex);
		goto out;
	}
	git_oid_tostr(tree_hex, sizeof(tree_hex), &tree);
	if (!message) {
		msg = xstrfmt("Revert \"%s\"\n\nThis reverts commit %s.\n",
			      git_commit_summary((git_commit *)target),
			      git_oid_tostr_s(git_object_id(target)));
		message = msg;
	}
	/* it goes out as a patch and a mail: no text in it can end the
	 * message or pass for a diff */
	patch_safe_message(&safe, message);
	if ((ret = repo_commit(r, tip_hex, tree_hex, author_name, author_email,
			       NULL, safe.buf, new_hex)) < 0)
		goto out;
	if ((ret = repo_set_branch(r, branch, new_hex, tip_hex)) < 0)
		goto out;
	if (out_hex)
		memcpy(out_hex, new_hex, REPO_HEX_SIZE);
out:
	git_index_conflict_iterator_free(it);
	git_index_free(idx);
	git_object_free(target);
	git_object_free(tip);
	free(msg);
	strbuf_release(&safe);
	return ret < 0 ? ret : 0;
}

int repo_format_patch(struct repo *r, const char *spec,
		      const char *subject_prefix, char **out)
{
	git_object *commit = NULL;
	git_email_create_options eo;
	git_buf buf = {0};
	static const char libsig[] = "--\nlibgit2 " LIBGIT2_VERSION "\n\n";
	size_t len, sl = sizeof(libsig) - 1;
	int ret;

	*out = NULL;
	/* as GIT_EMAIL_CREATE_OPTIONS_INIT, which -Wextra finds incomplete */
	memset(&eo, 0, sizeof(eo));
	eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
	git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION);
	eo.diff_opts.flags = GIT_DIFF_SHOW_BINARY;
	git_diff_find_options_init(&eo.diff_find_opts,
				   GIT_DIFF_FIND_OPTIONS_VERSION);
	if ((ret = repo_lookup(r, &commit, spec, GIT_OBJECT_COMMIT)) < 0)
		return ret;
	if (git_commit_parentcount((git_commit *)commit) > 1) {
		ret = err_set(ERR_INVALID, "%s: a merge has no single patch",
			      spec);
		goto out;
	}
	eo.subject_prefix = subject_prefix ? subject_prefix : "PATCH";
	if ((ret = git_email_create_from_commit(&buf, (git_commit *)commit,
						&eo)) < 0) {
		ret = repo_git_err(ret, "format-patch %s", spec);
		goto out;
	}
	/* Sign it as stableq, with the mail signature separator "-- ". */
	len = buf.size;
	if (len >= sl && !memcmp(buf.ptr + len - sl, libsig, sl)) {
		*out = xstrfmt("%.*s-- \nstableq\n\n", (int)(len - sl),
			       buf.ptr);
	} else {
		*out = xstrndup(buf.ptr, len);
	}
out:
	git_buf_dispose(&buf);
	git_object_free(commit);
	return ret < 0 ? ret : 0;
}

int repo_init_due(struct branch_ctx *bc, long long *id)
{
	char *head = xstrfmt("%s/.git", bc->cfg.tree_dir);
	struct stat st;
	int missing = stat(head, &st) < 0;

	free(head);
	*id = 0;
	return missing;
}
