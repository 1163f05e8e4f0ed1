/* changelog.c: Debian's changelog.Debian.gz parsed and indexed in the store, looked up by subject. */
#include "changelog.h"
#include "db.h"
#include "err.h"
#include "log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

/* A longer item is not a subject; the rest of it is not kept. */
#define SUBJECT_MAX 1024
/* changelog.Debian.gz of linux 6.1 is 2.5 MB unpacked; leave room. */
#define CHANGELOG_MAX (256u << 20)
/* The form of the indexed subjects; 2: reverts in one form (revert_form()). */
#define CHANGELOG_FORM "2"

static int starts(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(s, w, k);
}

void changelog_subject_key(struct strbuf *out, const char *subject)
{
	const char *s = subject;
	size_t start = out->len;
	int sp = 0;

	while (*s && isspace((unsigned char)*s))
		s++;
	for (; *s; s++) {
		if (isspace((unsigned char)*s)) {
			sp = 1;
			continue;
		}
		if (sp && out->len > start)
			strbuf_addch(out, ' ');
		sp = 0;
		strbuf_addch(out, *s);
	}
	/* ("subject") as a Fixes: tag may keep it: the quotes are not in it */
	size_t n = out->len - start;
	if (n >= 2 && out->buf[start] == '"' && out->buf[out->len - 1] == '"') {
		memmove(out->buf + start, out->buf + start + 1, n - 2);
		strbuf_setlen(out, out->len - 2);
	}
}

/* The notes Debian writes in parentheses after a subject. */
static const char *const notes[] = { "CVE-", "Closes:", "regression in ",
				     "XSA-" };

static int is_note(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++)
		if (starts(s, n, notes[i]))
			return 1;
	return 0;
}

/*
 * A revert in one form whatever is written around it: Debian's and the
 * stable-queue's
 *   scsi: Revert "scsi: x" (CVE-...)
 *   Revert "x" (regression in 6.1.167)
 *   Revert "x" on v6.6 and older
 * are all 'Revert "x"'. The reverted subject runs to the last quote: it
 * may quote itself (a revert of a revert, 'Revert "KVM: Mark "struct
 * page" dirty"'). A quoted word ('PCI: Revert "rescan" file renames') is
 * no subject and stays as written.
 */
static void revert_form(struct strbuf *sb)
{
	char *at = strstr(sb->buf, "Revert \""), *inner, *close;
	size_t lead;

	if (!at)
		return;
	lead = (size_t)(at - sb->buf);
	/* only a subsystem may stand before it: "scsi: ", "drm/amd: " */
	if (lead && (lead > 64 || lead < 3 || at[-1] != ' ' || at[-2] != ':' ||
		     memchr(sb->buf, '"', lead)))
		return;
	inner = at + 8;
	close = strrchr(inner, '"');
	if (!close || close - inner < 8 ||
	    !memchr(inner, ' ', (size_t)(close - inner)))
		return;
	strbuf_setlen(sb, (size_t)(close + 1 - sb->buf));
	if (lead) {
		memmove(sb->buf, at, sb->len - lead);
		strbuf_setlen(sb, sb->len - lead);
	}
}

/* Debian's additions to an upstream subject: "[arm*] " before it, notes
 * (CVE ids, bug closures, "regression in X") after it, a ':' heading a
 * group of items; and a revert in its one form (revert_form()). */
static void clean_subject(struct strbuf *sb)
{
	char *b = sb->buf;
	size_t n = sb->len;

	if (n && b[0] == '[') {
		char *close = memchr(b, ']', n < 40 ? n : 40);
		if (close && close[1] == ' ') {
			size_t k = (size_t)(close + 2 - b);
			memmove(b, b + k, n - k);
			n -= k;
		}
	}
	for (;;) {
		while (n && (b[n - 1] == ' ' || b[n - 1] == ':'))
			n--;
		if (!n || b[n - 1] != ')')
			break;
		char *open = NULL;
		for (size_t i = n; i-- > 0;)
			if (b[i] == '(') {
				open = b + i;
				break;
			}
		if (!open || open == b || open[-1] != ' ' ||
		    !is_note(open + 1, (size_t)(b + n - open - 1)))
			break;
		n = (size_t)(open - b);
	}
	strbuf_setlen(sb, n);
	revert_form(sb);
}

struct parse {
	changelog_entry_fn *fn;
	void *arg;
	char series[16];
	long sublevel;      /* -1: no ChangeLog-X.Y.N seen in this update */
	struct strbuf item; /* the current "- subject", lines joined */
	int have_item;
	size_t item_indent;
	long n;
	struct strbuf key;
};

static int flush(struct parse *p)
{
	int r = 0;

	if (p->have_item && p->sublevel >= 0) {
		clean_subject(&p->item);
		strbuf_reset(&p->key);
		changelog_subject_key(&p->key, p->item.buf);
		if (p->key.len) {
			r = p->fn(p->arg, p->series, p->sublevel, p->key.buf);
			p->n++;
		}
	}
	p->have_item = 0;
	strbuf_reset(&p->item);
	return r;
}

static void item_add(struct parse *p, const char *s, size_t n)
{
	if (p->item.len >= SUBJECT_MAX)
		return;
	if (n > SUBJECT_MAX - p->item.len)
		n = SUBJECT_MAX - p->item.len;
	if (p->item.len)
		strbuf_addch(&p->item, ' ');
	strbuf_add(&p->item, s, n);
}

/* "https://.../ChangeLog-6.1.191": series "6.1", sublevel 191. */
static void release_url(struct parse *p, const char *t, size_t n)
{
	const char *c = memmem(t, n, "ChangeLog-", 10), *e = t + n, *s;
	long part[3] = { 0, 0, 0 };
	int k = 0;

	p->sublevel = -1;
	if (!c)
		return;
	for (s = c + 10; s < e && k < 3;) {
		if (!isdigit((unsigned char)*s))
			return;
		while (s < e && isdigit((unsigned char)*s) && part[k] < 100000)
			part[k] = part[k] * 10 + (*s++ - '0');
		k++;
		if (s < e && *s == '.' && k < 3)
			s++;
		else
			break;
	}
	if (k != 3)
		return;
	snprintf(p->series, sizeof(p->series), "%ld.%ld", part[0], part[1]);
	p->sublevel = part[2];
}

long changelog_parse(const char *text, size_t len, changelog_entry_fn *fn,
		     void *arg)
{
	struct parse p = { .fn = fn, .arg = arg, .sublevel = -1 };
	const char *s = text, *end = text + len;
	int in_update = 0, r = 0;

	strbuf_init(&p.item, 128);
	strbuf_init(&p.key, 128);
	while (s < end && !r) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		const char *t = s;
		size_t ind, tl;

		if (!e)
			e = end;
		while (t < e && *t == ' ')
			t++;
		ind = (size_t)(t - s);
		tl = (size_t)(e - t);
		while (tl && (t[tl - 1] == '\r' || t[tl - 1] == ' '))
			tl--;
		s = e < end ? e + 1 : end;

		if (ind == 2 && tl && *t == '*') {
			/* an item of the package's changelog entry */
			r = flush(&p);
			in_update = starts(t, tl, "* New upstream stable update");
			p.sublevel = -1;
		} else if (ind <= 2 || !tl) {
			/* "linux (6.1.192-1) ...", "[ Name ]", " -- Name", blank */
			r = flush(&p);
			in_update = 0;
		} else if (!in_update) {
			continue;
		} else if (starts(t, tl, "http") &&
			   memmem(t, tl, "ChangeLog-", 10)) {
			r = flush(&p);
			release_url(&p, t, tl);
		} else if (tl >= 2 && t[0] == '-' && t[1] == ' ') {
			r = flush(&p);
			p.have_item = 1;
			p.item_indent = ind;
			item_add(&p, t + 2, tl - 2);
		} else if (p.have_item && ind > p.item_indent) {
			item_add(&p, t, tl); /* a wrapped subject */
		} else {
			r = flush(&p);
		}
	}
	if (!r)
		r = flush(&p);
	strbuf_release(&p.item);
	strbuf_release(&p.key);
	return r ? r : p.n;
}

/* ---- the index in the store ---- */

static int read_changelog(const char *path, struct strbuf *sb)
{
	gzFile gz = gzopen(path, "rb"); /* reads plain files too */
	char buf[65536];
	int n;

	if (!gz)
		return err_set(ERR_IO, "%s: %s", path, strerror(errno));
	while ((n = gzread(gz, buf, sizeof(buf))) > 0) {
		if (sb->len + (size_t)n > CHANGELOG_MAX) {
			gzclose(gz);
			return err_set(ERR_TOOBIG, "%s: over %u MiB unpacked", path,
				       CHANGELOG_MAX >> 20);
		}
		strbuf_add(sb, buf, (size_t)n);
	}
	if (n < 0) {
		int zerr;
		const char *m = gzerror(gz, &zerr);
		err_set(ERR_IO, "%s: %s", path, m);
		gzclose(gz);
		return ERR_IO;
	}
	gzclose(gz);
	return 0;
}

struct ins {
	sqlite3 *db;
	long long source;
};

static int insert_entry(void *arg, const char *series, long sublevel,
			const char *subject)
{
	struct ins *in = arg;
	sqlite3_stmt *st = db_stmt(in->db,
				   "INSERT INTO changelog_entries (source_id,"
				   " series, sublevel, subject) VALUES (?, ?, ?, ?)",
				   "itit", in->source, series, (long long)sublevel,
				   subject);
	int rc = st ? sqlite3_step(st) : SQLITE_ERROR;

	db_stmt_done(st);
	if (rc != SQLITE_DONE)
		return err_set(ERR_IO, "changelog index: %s",
			       sqlite3_errmsg(in->db));
	return 0;
}

int changelog_index(sqlite3 *db, const char *path, long *entries,
		    int *rebuilt)
{
	struct stat sb;
	char stamp[64];
	char *old = NULL;
	struct strbuf text = STRBUF_INIT;
	struct ins in = { .db = db };
	long long n = 0;
	long got;
	int ret;

	if (entries)
		*entries = 0;
	if (rebuilt)
		*rebuilt = 0;
	if (stat(path, &sb) < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO, "%s: %s",
			       path, strerror(errno));
	/* the form of the entries is in the stamp: a new form indexes again */
	snprintf(stamp, sizeof(stamp), CHANGELOG_FORM ":%lld:%lld.%09ld",
		 (long long)sb.st_size,
		 (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec);
	if (db_query_text(db, &old,
			  "SELECT stamp FROM changelog_sources WHERE path = ?",
			  "t", path) == 0 &&
	    old && !strcmp(old, stamp)) {
		free(old);
		db_query_int(db, &n,
			     "SELECT entries FROM changelog_sources WHERE path = ?",
			     "t", path);
		if (entries)
			*entries = (long)n;
		return 0;
	}
	free(old);
	if ((ret = read_changelog(path, &text)) < 0)
		goto out;
	if ((ret = db_begin(db)) < 0)
		goto out;
	if ((ret = db_exec(db, "DELETE FROM changelog_sources WHERE path = ?",
			   "t", path)) < 0 ||
	    (ret = db_exec(db,
			   "INSERT INTO changelog_sources (path, stamp, entries)"
			   " VALUES (?, ?, 0)",
			   "tt", path, stamp)) < 0)
		goto fail;
	in.source = db_last_id(db);
	got = changelog_parse(text.buf, text.len, insert_entry, &in);
	if (got < 0) {
		ret = (int)got;
		goto fail;
	}
	if (!got) {
		ret = err_set(ERR_INVALID,
			      "%s: no \"New upstream stable update\" lists a"
			      " release: not a Debian kernel changelog",
			      path);
		goto fail;
	}
	ret = db_exec(db, "UPDATE changelog_sources SET entries = ? WHERE id = ?",
		      "ii", (long long)got, in.source);
	if ((ret = db_end(db, ret)) < 0)
		goto out;
	log_info("changelog %s: indexed %ld upstream stable backports", path,
		 got);
	if (entries)
		*entries = got;
	if (rebuilt)
		*rebuilt = 1;
	ret = 0;
	goto out;
fail:
	db_rollback(db);
out:
	strbuf_release(&text);
	return ret;
}

/*
 * The releases of series between min_sublevel and max_sublevel listing
 * key: the first and the last (-1 when none).
 */
static int listed(sqlite3 *db, const char *path, const char *series,
		  long min_sublevel, long max_sublevel, const char *key,
		  long *first, long *last)
{
	sqlite3_stmt *st = db_stmt(db,
				   "SELECT min(e.sublevel), max(e.sublevel) FROM"
				   " changelog_entries e JOIN changelog_sources s"
				   " ON s.id = e.source_id WHERE e.subject = ?"
				   " COLLATE NOCASE AND e.series = ? AND"
				   " e.sublevel BETWEEN ? AND ? AND s.path = ?",
				   "ttiit", key, series, (long long)min_sublevel,
				   (long long)max_sublevel, path);
	int rc;

	*first = *last = -1;
	if (!st)
		return ERR_IO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
		*first = (long)sqlite3_column_int64(st, 0);
		*last = (long)sqlite3_column_int64(st, 1);
	}
	db_stmt_done(st);
	if (rc != SQLITE_ROW)
		return err_set(ERR_IO, "changelog lookup: %s",
			       sqlite3_errmsg(db));
	return 0;
}

/*
 * Debian moves an architecture out of the subject into a bracket the
 * index drops: "x86/bhi: x" is listed as "[x86] bhi: x", "arm64: x" as
 * "[arm64] x", "s390: x" as "[s390x] x". The subject as it would be
 * listed, appended to out: 1, or 0 when it names no architecture.
 */
static const char *const arches[] = {
	"x86",	   "arm64", "arm",   "s390",   "powerpc", "riscv",
	"mips",	   "loongarch", "LoongArch", "parisc", "sparc", "alpha",
	"m68k",	   "sh",    "xtensa", "openrisc", "csky",  "hexagon",
	"um",	   "ia64",  "microblaze", "nios2", "arc",
};

int changelog_subject_unarched(struct strbuf *out, const char *key)
{
	for (size_t i = 0; i < sizeof(arches) / sizeof(arches[0]); i++) {
		size_t n = strlen(arches[i]);
		if (strncmp(key, arches[i], n))
			continue;
		if (key[n] == '/' && key[n + 1] && key[n + 1] != ' ') {
			strbuf_addstr(out, key + n + 1);
			return 1;
		}
		if (key[n] == ':' && key[n + 1] == ' ' && key[n + 2]) {
			strbuf_addstr(out, key + n + 2);
			return 1;
		}
	}
	return 0;
}

/* listed() of the key, else of the key as Debian rewrites an arch in it. */
static int listed_any(sqlite3 *db, const char *path, const char *series,
		      long min_sublevel, long max_sublevel, const char *key,
		      long *first, long *last)
{
	struct strbuf alt = STRBUF_INIT;
	int ret = listed(db, path, series, min_sublevel, max_sublevel, key,
			 first, last);

	if (ret == 0 && *first < 0 && changelog_subject_unarched(&alt, key))
		ret = listed(db, path, series, min_sublevel, max_sublevel,
			     alt.buf, first, last);
	strbuf_release(&alt);
	return ret;
}

int changelog_lookup(sqlite3 *db, const char *path, const char *series,
		     long max_sublevel, const char *subject,
		     struct changelog_hit *hit)
{
	struct strbuf key = STRBUF_INIT, rkey = STRBUF_INIT,
		      alt = STRBUF_INIT, rr = STRBUF_INIT;
	long at = -1, last = -1, rev = -1, rlast, back = -1;
	int ret;

	hit->first = hit->last = hit->reverted = -1;
	changelog_subject_key(&key, subject ? subject : "");
	revert_form(&key);
	if (!key.len) {
		ret = 0;
		goto out;
	}
	if ((ret = listed_any(db, path, series, 0, max_sublevel, key.buf, &at,
			      &last)) < 0 ||
	    at < 0)
		goto out;
	hit->first = at;
	hit->last = last;
	strbuf_addf(&rkey, "Revert \"%s\"", key.buf);
	if ((ret = listed(db, path, series, at, max_sublevel, rkey.buf, &rev,
			  &rlast)) < 0)
		goto out;
	if (rev < 0 && changelog_subject_unarched(&alt, key.buf)) {
		strbuf_reset(&rkey);
		strbuf_addf(&rkey, "Revert \"%s\"", alt.buf);
		if ((ret = listed(db, path, series, at, max_sublevel, rkey.buf,
				  &rev, &rlast)) < 0)
			goto out;
	}
	if (rev >= 0) {
		/* the revert reverted ('Revert "Revert "x""'): it came back */
		strbuf_addf(&rr, "Revert \"%s\"", rkey.buf);
		if ((ret = listed(db, path, series, rev, max_sublevel, rr.buf,
				  &back, &rlast)) < 0)
			goto out;
		if (back >= 0 && rlast > last)
			hit->last = last = rlast;
	}
	/* listed again after its revert: it came back */
	if (rev >= 0 && last <= rev) {
		hit->reverted = rev;
		ret = 0;
		goto out;
	}
	ret = 1;
out:
	strbuf_release(&key);
	strbuf_release(&rkey);
	strbuf_release(&alt);
	strbuf_release(&rr);
	return ret;
}

int changelog_find(sqlite3 *db, const char *path, const char *series,
		   long max_sublevel, const char *subject, long *sublevel,
		   long *reverted)
{
	struct changelog_hit hit;
	int ret = changelog_lookup(db, path, series, max_sublevel, subject,
				   &hit);

	*sublevel = ret < 0 ? -1 : hit.first;
	if (reverted)
		*reverted = ret < 0 ? -1 : hit.reverted;
	return ret;
}

/* "5.10" before "6.1"? */
static int series_before(const char *a, const char *b)
{
	long am = 0, an = 0, bm = 0, bn = 0;

	if (sscanf(a, "%ld.%ld", &am, &an) != 2 ||
	    sscanf(b, "%ld.%ld", &bm, &bn) != 2)
		return 0;
	return am < bm || (am == bm && an < bn);
}

int changelog_find_older(sqlite3 *db, const char *path, const char *series,
			 const char *subject, char older[16], long *sublevel)
{
	struct strbuf key = STRBUF_INIT, alt = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int ret = 0, rc = SQLITE_DONE;

	older[0] = '\0';
	*sublevel = -1;
	changelog_subject_key(&key, subject ? subject : "");
	changelog_subject_unarched(&alt, key.buf);
	if (key.len)
		st = db_stmt(db,
			     "SELECT e.series, min(e.sublevel) FROM"
			     " changelog_entries e JOIN changelog_sources s ON"
			     " s.id = e.source_id WHERE (e.subject = ?1 COLLATE"
			     " NOCASE OR e.subject = ?2 COLLATE NOCASE) AND"
			     " e.series != ?3 AND s.path = ?4 GROUP BY"
			     " e.series",
			     "tttt", key.buf, alt.len ? alt.buf : key.buf,
			     series, path);
	while (st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *s = db_col_text(st, 0);
		if (!s || strlen(s) >= 16 || !series_before(s, series) ||
		    (*older && !series_before(s, older)))
			continue;
		snprintf(older, 16, "%s", s);
		*sublevel = (long)sqlite3_column_int64(st, 1);
		ret = 1;
	}
	if (key.len && (!st || rc != SQLITE_DONE))
		ret = err_set(ERR_IO, "changelog lookup: %s",
			      sqlite3_errmsg(db));
	db_stmt_done(st);
	strbuf_release(&key);
	strbuf_release(&alt);
	return ret;
}
