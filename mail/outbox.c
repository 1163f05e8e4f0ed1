/* outbox.c: mail to patch authors: composed into the outbox, then delivered. */
#include "outbox.h"
#include "db.h"
#include "err.h"
#include "log.h"
#include "smtp.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* Headers are folded before this column where a space allows it. */
#define HDR_WIDTH 78
/* RFC 5322 2.1.1: a line holds at most 998 octets before its CRLF. */
#define LINE_MAX_OCTETS 998
/* Raw bytes per RFC 2047 B word: 12 + 4 * 45 / 3 = 72 <= 75 octets. */
#define EWORD_RAW 45
#define NAME_MAX_OCTETS 200
#define SUBJECT_MAX_OCTETS 400
#define MSGID_MAX_OCTETS 250
/* The failing test's log: its tail is what tells. */
#define LOG_MAX_OCTETS (32 * 1024)
#define REVERT_MAX_OCTETS (1024 * 1024)

static const struct kind {
	const char *name;
	const char *done; /* "Your patch was <done>." */
} kinds[] = {
	{"flagged", "flagged as broken"},
	{"dropped", "dropped from the stable queue"},
	{"reverted", "reverted from the stable branch"},
	{"held", "held back from the stable queue"},
	{"rejected", "rejected for the stable queue"},
};

static const struct kind *kind_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

/* ---- text: UTF-8 checked, controls handled ---------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned min, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, cp = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/*
 * Appends s as valid UTF-8 (bad bytes become U+FFFD). In header mode every
 * control character is a space and runs of spaces are one, so that no
 * outside text can end a header line; in body mode NUL is U+FFFD and CR
 * is dropped (line ends are added later), tabs and newlines stay.
 */
static void text_clean(struct strbuf *out, const char *str, size_t n,
		       int header)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < n) {
		size_t l = utf8_len(s + i, n - i);
		if (!l) {
			strbuf_addstr(out, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (l == 1) {
			unsigned char c = s[i];
			if (header && (c < 0x20 || c == 0x7f))
				c = ' ';
			if (header && c == ' ' &&
			    (!out->len || out->buf[out->len - 1] == ' ')) {
				i++;
				continue;
			}
			if (!header && c == '\r') {
				i++;
				continue;
			}
			if (!header && c == '\0')
				strbuf_addstr(out, "\xef\xbf\xbd");
			else
				strbuf_addch(out, (char)c);
		} else {
			strbuf_add(out, s + i, l);
		}
		i += l;
	}
	if (header)
		strbuf_trim(out);
}

/* Cuts sb to at most max octets, at a character boundary. */
static void utf8_truncate(struct strbuf *sb, size_t max)
{
	size_t n = max;

	if (sb->len <= max)
		return;
	while (n && ((unsigned char)sb->buf[n] & 0xc0) == 0x80)
		n--;
	strbuf_setlen(sb, n);
}

static char *clean_header_text(const char *s, size_t max)
{
	struct strbuf sb = STRBUF_INIT;

	if (s)
		text_clean(&sb, s, strlen(s), 1);
	utf8_truncate(&sb, max);
	strbuf_rtrim(&sb);
	return strbuf_detach(&sb, NULL);
}

/* ---- addresses ------------------------------------------------------- */

static int is_atext(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-/=?^_`{|}~", c));
}

/*
 * A plain addr-spec (dot-atom@domain) in ASCII, as a relay takes it. NULL
 * when fine, else why not. Quoted local parts, address literals and UTF-8
 * addresses are refused: no patch author needs them.
 */
static const char *addr_problem(const char *a)
{
	const char *at, *p;
	size_t n;

	if (!a || !*a)
		return "missing";
	n = strlen(a);
	if (n > 254)
		return "longer than 254 octets";
	for (p = a; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f)
			return "control character";
		if (c == ' ' || c == '\t')
			return "white space";
		if (c >= 0x80)
			return "not ASCII";
	}
	at = strrchr(a, '@');
	if (!at)
		return "no @";
	if (at == a)
		return "empty local part";
	if ((size_t)(at - a) > 64)
		return "local part longer than 64 octets";
	for (p = a; p < at; p++)
		if (!is_atext(*p) &&
		    !(*p == '.' && p != a && p + 1 != at && p[1] != '.'))
			return "bad character in the local part";
	p = at + 1;
	if (!*p)
		return "empty domain";
	for (const char *label = p; *label;) {
		size_t len = strcspn(label, ".");
		if (!len || len > 63)
			return "bad domain";
		for (size_t i = 0; i < len; i++) {
			char c = label[i];
			int alnum = (c >= 'a' && c <= 'z') ||
				    (c >= 'A' && c <= 'Z') ||
				    (c >= '0' && c <= '9');
			if (!alnum && !(c == '-' && i && i + 1 < len))
				return "bad domain";
		}
		label += len;
		if (*label == '.' && !label[1])
			return "bad domain";
		if (*label)
			label++;
	}
	return NULL;
}

/* An address as text for messages: control characters shown as \xNN. */
static char *addr_shown(const char *a)
{
	struct strbuf sb = STRBUF_INIT;

	for (const unsigned char *p = (const unsigned char *)(a ? a : ""); *p;
	     p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			strbuf_addf(&sb, "\\x%02x", *p);
		else
			strbuf_addch(&sb, (char)*p);
	return strbuf_detach(&sb, NULL);
}

struct mailbox {
	char *name; /* cleaned display name or NULL */
	char *addr;
};

struct rcpts {
	struct mailbox *v;
	size_t n, alloc;
};

static void rcpts_release(struct rcpts *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].addr);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

static int rcpts_has(const struct rcpts *r, const char *addr)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcasecmp(r->v[i].addr, addr))
			return 1;
	return 0;
}

/* Adds (name, addr) unless addr is already there. Both copied. */
static void rcpts_add(struct rcpts *r, const char *name, const char *addr)
{
	if (rcpts_has(r, addr))
		return;
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 8;
		r->v = xrealloc(r->v, r->alloc * sizeof(*r->v));
	}
	char *clean = clean_header_text(name, NAME_MAX_OCTETS);
	r->v[r->n].name = *clean ? clean : NULL;
	if (!*clean)
		free(clean);
	r->v[r->n].addr = xstrdup(addr);
	r->n++;
}

/*
 * Splits "Name <addr>" or "addr" (surrounding quotes of the name dropped).
 * Both results malloc'd; *name NULL when there is none.
 */
static void mailbox_split(const char *s, size_t len, char **name, char **addr)
{
	struct strbuf sb = STRBUF_INIT;
	char *lt, *gt;

	strbuf_add(&sb, s, len);
	strbuf_trim(&sb);
	*name = NULL;
	gt = sb.len && sb.buf[sb.len - 1] == '>' ? sb.buf + sb.len - 1 : NULL;
	lt = gt ? strrchr(sb.buf, '<') : NULL;
	if (lt) {
		*addr = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		struct strbuf nb = STRBUF_INIT;
		strbuf_add(&nb, sb.buf, (size_t)(lt - sb.buf));
		strbuf_trim(&nb);
		if (nb.len >= 2 && nb.buf[0] == '"' &&
		    nb.buf[nb.len - 1] == '"') {
			memmove(nb.buf, nb.buf + 1, nb.len - 2);
			strbuf_setlen(&nb, nb.len - 2);
		}
		*name = nb.len ? strbuf_detach(&nb, NULL) : NULL;
		strbuf_release(&nb);
	} else {
		*addr = xstrdup(sb.buf);
	}
	strbuf_release(&sb);
}

/* Adds each entry of a comma-separated list; bad ones are logged, left out. */
static void rcpts_add_list(struct rcpts *r, const char *list, long long patch)
{
	const char *p = list;

	while (p && *p) {
		const char *start = p;
		int quoted = 0, angle = 0;
		for (; *p; p++) {
			if (*p == '"')
				quoted = !quoted;
			else if (!quoted && *p == '<')
				angle = 1;
			else if (!quoted && *p == '>')
				angle = 0;
			else if (!quoted && !angle && *p == ',')
				break;
		}
		char *name, *addr;
		mailbox_split(start, (size_t)(p - start), &name, &addr);
		if (*addr || name) {
			const char *why = addr_problem(addr);
			if (why) {
				char *shown = addr_shown(addr);
				log_warnx("patch %lld: mail_cc: leaving out "
					  "'%s': %s",
					  patch, shown, why);
				free(shown);
			} else
				rcpts_add(r, name, addr);
		}
		free(name);
		free(addr);
		if (*p == ',')
			p++;
	}
}

/* ---- headers --------------------------------------------------------- */

struct hdr {
	struct strbuf *sb;
	size_t col;
	int ntok;
};

static void hdr_start(struct hdr *h, struct strbuf *sb, const char *name)
{
	h->sb = sb;
	h->ntok = 0;
	strbuf_addf(sb, "%s:", name);
	h->col = strlen(name) + 1;
}

/* One unbreakable token, after a space that folds when the line is full. */
static void hdr_tok(struct hdr *h, const char *tok, size_t len)
{
	if (h->ntok && h->col + 1 + len > HDR_WIDTH) {
		strbuf_addstr(h->sb, "\r\n ");
		h->col = 1;
	} else {
		strbuf_addch(h->sb, ' ');
		h->col++;
	}
	strbuf_add(h->sb, tok, len);
	h->col += len;
	h->ntok++;
}

static void hdr_end(struct hdr *h)
{
	strbuf_addstr(h->sb, "\r\n");
}

static int needs_encoding(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p >= 0x80)
			return 1;
	return strstr(s, "=?") != NULL;
}

/*
 * s (clean UTF-8) as RFC 2047 B words of whole characters; adjacent words
 * decode as one text, so spaces inside s are carried in the encoding.
 */
static void hdr_encoded(struct hdr *h, const char *s)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				  "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	struct strbuf w = STRBUF_INIT;

	while (n) {
		size_t take = 0;
		while (take < n) {
			size_t l = utf8_len(p + take, n - take);
			if (!l)
				l = 1;
			if (take + l > EWORD_RAW)
				break;
			take += l;
		}
		strbuf_reset(&w);
		strbuf_addstr(&w, "=?UTF-8?B?");
		for (size_t i = 0; i < take; i += 3) {
			unsigned v = (unsigned)p[i] << 16;
			if (i + 1 < take)
				v |= (unsigned)p[i + 1] << 8;
			if (i + 2 < take)
				v |= p[i + 2];
			strbuf_addch(&w, b64[(v >> 18) & 63]);
			strbuf_addch(&w, b64[(v >> 12) & 63]);
			strbuf_addch(&w,
				     i + 1 < take ? b64[(v >> 6) & 63] : '=');
			strbuf_addch(&w, i + 2 < take ? b64[v & 63] : '=');
		}
		strbuf_addstr(&w, "?=");
		hdr_tok(h, w.buf, w.len);
		p += take;
		n -= take;
	}
	strbuf_release(&w);
}

/* Unstructured text (Subject): words folded at spaces, or encoded words. */
static void hdr_text(struct hdr *h, const char *s)
{
	const char *p = s;
	int encode = needs_encoding(s);

	/* a word too long for a line is carried in encoded words too */
	for (const char *q = s; *q && !encode;) {
		size_t len = strcspn(q, " ");
		if (len > LINE_MAX_OCTETS - 100)
			encode = 1;
		q += len;
		q += *q == ' ';
	}
	if (encode) {
		hdr_encoded(h, s);
		return;
	}
	while (*p) {
		size_t len = strcspn(p, " ");
		if (len)
			hdr_tok(h, p, len);
		p += len;
		while (*p == ' ')
			p++;
	}
}

/* A display name: atoms as they are, else a quoted string, else encoded. */
static void hdr_phrase(struct hdr *h, const char *name)
{
	int plain = 1;
	struct strbuf q = STRBUF_INIT;

	if (needs_encoding(name)) {
		hdr_encoded(h, name);
		return;
	}
	for (const char *p = name; *p; p++)
		if (!is_atext(*p) && *p != ' ')
			plain = 0;
	if (plain) {
		hdr_text(h, name);
		return;
	}
	strbuf_addch(&q, '"');
	for (const char *p = name; *p; p++) {
		if (*p == '"' || *p == '\\')
			strbuf_addch(&q, '\\');
		strbuf_addch(&q, *p);
	}
	strbuf_addch(&q, '"');
	hdr_tok(h, q.buf, q.len);
	strbuf_release(&q);
}

static void hdr_mailboxes(struct strbuf *sb, const char *field,
			  const struct mailbox *v, size_t n)
{
	struct hdr h;

	if (!n)
		return;
	hdr_start(&h, sb, field);
	for (size_t i = 0; i < n; i++) {
		char *a = xstrfmt("<%s>%s", v[i].addr, i + 1 < n ? "," : "");
		if (v[i].name)
			hdr_phrase(&h, v[i].name);
		hdr_tok(&h, a, strlen(a));
		free(a);
	}
	hdr_end(&h);
}

static void hdr_simple(struct strbuf *sb, const char *field, const char *text)
{
	struct hdr h;

	hdr_start(&h, sb, field);
	hdr_text(&h, text);
	hdr_end(&h);
}

/* A stored Message-Id (without <>) fit to be quoted back, or 0. */
static int msgid_ok(const char *id)
{
	if (!id || !*id || strlen(id) > MSGID_MAX_OCTETS)
		return 0;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '<' || *p == '>')
			return 0;
	return 1;
}

static void rfc5322_date(struct strbuf *sb, time_t t)
{
	static const char *const days[] = {"Sun", "Mon", "Tue", "Wed",
					   "Thu", "Fri", "Sat"};
	static const char *const months[] = {"Jan", "Feb", "Mar", "Apr",
					     "May", "Jun", "Jul", "Aug",
					     "Sep", "Oct", "Nov", "Dec"};
	struct tm tm;

	gmtime_r(&t, &tm);
	strbuf_addf(sb, "%s, %d %s %04d %02d:%02d:%02d +0000", days[tm.tm_wday],
		    tm.tm_mday, months[tm.tm_mon], tm.tm_year + 1900,
		    tm.tm_hour, tm.tm_min, tm.tm_sec);
}

static unsigned long long random64(void)
{
	unsigned long long r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r = ((unsigned long long)ts.tv_nsec << 20) ^
		    (unsigned long long)ts.tv_sec ^
		    ((unsigned long long)getpid() << 40);
	}
	return r;
}

/* ---- body ------------------------------------------------------------ */

/*
 * Appends text to the wire form of the body: clean UTF-8, CRLF line ends,
 * lines longer than LINE_MAX_OCTETS broken at a character boundary.
 */
static void body_wire(struct strbuf *out, const char *text, size_t n)
{
	struct strbuf clean = STRBUF_INIT;
	size_t col = 0;

	text_clean(&clean, text, n, 0);
	for (size_t i = 0; i < clean.len;) {
		if (clean.buf[i] == '\n') {
			strbuf_addstr(out, "\r\n");
			col = 0;
			i++;
			continue;
		}
		size_t l =
			utf8_len((unsigned char *)clean.buf + i, clean.len - i);
		if (!l)
			l = 1;
		if (col + l > LINE_MAX_OCTETS) {
			strbuf_addstr(out, "\r\n");
			col = 0;
		}
		strbuf_add(out, clean.buf + i, l);
		col += l;
		i += l;
	}
	if (col)
		strbuf_addstr(out, "\r\n");
	strbuf_release(&clean);
}

static void body_log(struct strbuf *b, const char *log)
{
	size_t n = strlen(log), skip = 0;

	if (n > LOG_MAX_OCTETS) {
		skip = n - LOG_MAX_OCTETS;
		const char *nl = memchr(log + skip, '\n', n - skip);
		if (nl && (size_t)(nl - log) < n - 1)
			skip = (size_t)(nl - log) + 1;
		strbuf_addf(b, "[... %zu bytes of the log left out ...]\n",
			    skip);
	}
	strbuf_add(b, log + skip, n - skip);
	if (n && log[n - 1] != '\n')
		strbuf_addch(b, '\n');
}

/* ---- composing --------------------------------------------------------- */

struct patch_row {
	char *subject, *prefix, *author_name, *author_email, *message_id;
	char *in_reply_to, *upstream;
};

static void patch_row_release(struct patch_row *p)
{
	free(p->subject);
	free(p->prefix);
	free(p->author_name);
	free(p->author_email);
	free(p->message_id);
	free(p->in_reply_to);
	free(p->upstream);
}

static char *col_dup(sqlite3_stmt *st, int col)
{
	const char *t = db_col_text(st, col);
	return t ? xstrdup(t) : NULL;
}

static int patch_load(sqlite3 *db, long long id, struct patch_row *p)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	memset(p, 0, sizeof(*p));
	st = db_prepare(db,
			"SELECT subject, subject_prefix, author_name,"
			" author_email, message_id, in_reply_to, upstream"
			" FROM patches WHERE id = ?",
			"i", id);
	if (!st)
		return ERR_IO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		p->subject = col_dup(st, 0);
		p->prefix = col_dup(st, 1);
		p->author_name = col_dup(st, 2);
		p->author_email = col_dup(st, 3);
		p->message_id = col_dup(st, 4);
		p->in_reply_to = col_dup(st, 5);
		p->upstream = col_dup(st, 6);
	} else if (rc == SQLITE_DONE) {
		ret = err_set(ERR_NOTFOUND, "patch %lld: no such patch", id);
	} else {
		ret = err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return ret;
}

/* The Signed-off-by chain in trailer order, valid addresses only. */
static int add_signoffs(sqlite3 *db, long long patch, struct rcpts *r)
{
	sqlite3_stmt *st;
	int rc;

	st = db_prepare(db,
			"SELECT value, extra FROM patch_tags WHERE patch_id = ?"
			" AND kind = 'signed_off_by' ORDER BY id",
			"i", patch);
	if (!st)
		return ERR_IO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *addr = db_col_text(st, 0);
		const char *why = addr_problem(addr);
		if (why) {
			char *shown = addr_shown(addr);
			log_warnx("patch %lld: mail: leaving out Signed-off-by "
				  "'%s': %s",
				  patch, shown, why);
			free(shown);
		} else
			rcpts_add(r, db_col_text(st, 1), addr);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	return 0;
}

static void compose_body(struct strbuf *b, const struct config *cfg,
			 const struct notice *n, const struct kind *k,
			 const struct patch_row *p, const char *author,
			 const char *shown_subject)
{
	char host[256] = "localhost";

	if (gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';

	if (author && *author)
		strbuf_addf(b, "Hello %s,\n\n", author);
	else
		strbuf_addstr(b, "Hello,\n\n");
	if (n->what && *n->what)
		strbuf_addf(b, "%s\n", n->what);
	else
		strbuf_addf(b, "Your patch was %s.\n", k->done);
	strbuf_addf(b, "\n  %s\n", shown_subject);
	if (msgid_ok(p->message_id))
		strbuf_addf(b, "  Message-ID: <%s>\n", p->message_id);
	if (p->upstream && *p->upstream)
		strbuf_addf(b, "  upstream commit %s\n", p->upstream);
	strbuf_addf(b, "  stableq patch %lld, branch %s\n", n->patch_id,
		    cfg->branch ? cfg->branch : "");
	if (n->why && *n->why) {
		strbuf_addstr(b, "\nWhy:\n\n");
		strbuf_addstr(b, n->why);
		if (b->buf[b->len - 1] != '\n')
			strbuf_addch(b, '\n');
	}
	if (n->log_excerpt && *n->log_excerpt) {
		strbuf_addstr(b, "\nLog of the failing test:\n\n");
		body_log(b, n->log_excerpt);
	}
	if (n->revert_patch && *n->revert_patch) {
		size_t len = strlen(n->revert_patch);
		if (len > REVERT_MAX_OCTETS) {
			strbuf_addf(b,
				    "\nThe revert (%zu bytes) is too large to "
				    "quote here; it goes out with the next "
				    "release.\n",
				    len);
		} else {
			strbuf_addstr(b,
				      "\nThe revert, which goes out with the "
				      "next release:\n\n");
			strbuf_add(b, n->revert_patch, len);
			if (n->revert_patch[len - 1] != '\n')
				strbuf_addch(b, '\n');
		}
	}
	/* the instance: host and branch (paths stay private) */
	strbuf_addf(b,
		    "\n-- \nstableq on %s for %s, the revert-first stable "
		    "queue.\nThis mail is automatic: patch %lld",
		    host, cfg->branch ? cfg->branch : "", n->patch_id);
	if (n->event_id > 0)
		strbuf_addf(b, ", event %lld", n->event_id);
	strbuf_addf(b, ", %s\n", k->name);
}

long long outbox_add(sqlite3 *db, const struct config *cfg,
		     const struct notice *n)
{
	struct patch_row p;
	struct rcpts to = {0}, cc = {0}, all = {0};
	struct strbuf msg = STRBUF_INIT, body = STRBUF_INIT;
	char *from_name = NULL, *from_addr = NULL, *msgid = NULL;
	char *shown = NULL, *subject = NULL, *invalid = NULL, *rcpt_json = NULL;
	const struct kind *k = kind_find(n ? n->kind : NULL);
	const char *why, *domain;
	json_t *arr = NULL;
	time_t now = time(NULL);
	long long id = 0;
	int ret;

	if (!k)
		return err_set(ERR_INVALID, "mail: unknown kind '%s'",
			       n && n->kind ? n->kind : "(null)");
	if ((ret = patch_load(db, n->patch_id, &p)) < 0)
		return ret;

	mailbox_split(cfg->mail_from ? cfg->mail_from : "",
		      cfg->mail_from ? strlen(cfg->mail_from) : 0, &from_name,
		      &from_addr);
	if ((why = addr_problem(from_addr))) {
		char *a = addr_shown(from_addr);
		invalid = xstrfmt("mail_from address '%s': %s", a, why);
		free(a);
	}
	domain = invalid ? "localhost" : strrchr(from_addr, '@') + 1;

	why = addr_problem(p.author_email);
	if (why && !invalid) {
		char *a = addr_shown(p.author_email);
		invalid = xstrfmt("author address '%s': %s", a, why);
		free(a);
	}
	if (!why) {
		rcpts_add(&to, p.author_name, p.author_email);
		/* the author may recur in the chain, in another case too */
		rcpts_add(&all, NULL, p.author_email);
	}
	if ((ret = add_signoffs(db, n->patch_id, &cc)) < 0)
		goto out;
	rcpts_add_list(&cc, cfg->mail_cc, n->patch_id);
	{
		struct rcpts kept = {0};
		for (size_t i = 0; i < cc.n; i++)
			if (!rcpts_has(&all, cc.v[i].addr)) {
				rcpts_add(&all, NULL, cc.v[i].addr);
				rcpts_add(&kept, cc.v[i].name, cc.v[i].addr);
			}
		rcpts_release(&cc);
		cc = kept;
	}

	/* Subject: [stableq] dropped: Re: [PATCH 6.1 2/3] the subject */
	{
		char *ps = clean_header_text(p.subject, SUBJECT_MAX_OCTETS);
		char *pp = clean_header_text(p.prefix, 100);
		shown = xstrfmt("[%s] %s", *pp ? pp : "PATCH", ps);
		subject = xstrfmt("[stableq] %s: Re: %s", k->name, shown);
		free(ps);
		free(pp);
	}
	msgid = xstrfmt("stableq.%lld.%016llx@%s", (long long)now, random64(),
			domain);

	if (!addr_problem(from_addr)) {
		char *fname = clean_header_text(from_name, NAME_MAX_OCTETS);
		struct mailbox f = {*fname ? fname : NULL, from_addr};
		hdr_mailboxes(&msg, "From", &f, 1);
		free(fname);
	}
	hdr_mailboxes(&msg, "To", to.v, to.n);
	hdr_mailboxes(&msg, "Cc", cc.v, cc.n);
	hdr_simple(&msg, "Subject", subject);
	strbuf_addstr(&msg, "Date: ");
	rfc5322_date(&msg, now);
	strbuf_addstr(&msg, "\r\n");
	strbuf_addf(&msg, "Message-ID: <%s>\r\n", msgid);
	if (msgid_ok(p.message_id)) {
		struct hdr h;
		char *ref;
		strbuf_addf(&msg, "In-Reply-To: <%s>\r\n", p.message_id);
		hdr_start(&h, &msg, "References");
		if (msgid_ok(p.in_reply_to) &&
		    strcmp(p.in_reply_to, p.message_id)) {
			ref = xstrfmt("<%s>", p.in_reply_to);
			hdr_tok(&h, ref, strlen(ref));
			free(ref);
		}
		ref = xstrfmt("<%s>", p.message_id);
		hdr_tok(&h, ref, strlen(ref));
		free(ref);
		hdr_end(&h);
	}
	strbuf_addstr(&msg, "MIME-Version: 1.0\r\n"
			    "Content-Type: text/plain; charset=UTF-8\r\n"
			    "Content-Transfer-Encoding: 8bit\r\n"
			    "Auto-Submitted: auto-generated\r\n");
	strbuf_addf(&msg, "X-Stableq-Patch: %lld\r\nX-Stableq-Kind: %s\r\n",
		    n->patch_id, k->name);
	if (n->event_id > 0)
		strbuf_addf(&msg, "X-Stableq-Event: %lld\r\n", n->event_id);
	strbuf_addstr(&msg, "\r\n");

	{
		char *aname = clean_header_text(p.author_name, NAME_MAX_OCTETS);
		compose_body(&body, cfg, n, k, &p, aname, shown);
		free(aname);
	}
	body_wire(&msg, body.buf, body.len);

	arr = json_array();
	for (size_t i = 0; !invalid && i < to.n; i++)
		json_array_append_new(arr, json_string(to.v[i].addr));
	for (size_t i = 0; !invalid && i < cc.n; i++)
		json_array_append_new(arr, json_string(cc.v[i].addr));
	rcpt_json = json_dumps(arr, JSON_COMPACT);

	if (n->event_id > 0)
		ret = db_exec(
			db,
			"INSERT INTO mail (patch_id, event_id, kind,"
			" message_id, mail_from, rcpt_to,"
			" headers_and_body, state, next_attempt_at,"
			" last_error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			"iittttttit", n->patch_id, n->event_id, k->name, msgid,
			from_addr, rcpt_json, msg.buf,
			invalid ? "invalid" : "queued", (long long)now,
			invalid);
	else
		ret = db_exec(db,
			      "INSERT INTO mail (patch_id, event_id, kind,"
			      " message_id, mail_from, rcpt_to,"
			      " headers_and_body, state, next_attempt_at,"
			      " last_error) VALUES (?, NULL, ?, ?, ?, ?, ?, ?,"
			      " ?, ?)",
			      "ittttttit", n->patch_id, k->name, msgid,
			      from_addr, rcpt_json, msg.buf,
			      invalid ? "invalid" : "queued", (long long)now,
			      invalid);
	if (ret < 0) {
		err_prefix(ret, "patch %lld: mail", n->patch_id);
		goto out;
	}
	id = db_last_id(db);
	if (invalid) {
		log_warnx("patch %lld: mail %lld not sent: %s", n->patch_id, id,
			  invalid);
		long long ev =
			event_add(db, "outbox", "mail", id, "invalid",
				  "patch %lld: %s", n->patch_id, invalid);
		if (ev < 0) {
			ret = (int)ev;
			goto out;
		}
	}
	ret = 0;
out:
	patch_row_release(&p);
	rcpts_release(&to);
	rcpts_release(&cc);
	rcpts_release(&all);
	strbuf_release(&msg);
	strbuf_release(&body);
	free(from_name);
	free(from_addr);
	free(msgid);
	free(shown);
	free(subject);
	free(invalid);
	free(rcpt_json);
	json_decref(arr);
	return ret < 0 ? ret : id;
}

/* ---- delivery -------------------------------------------------------- */

long long outbox_backoff(int base, int attempts)
{
	long long d;
	int shift;

	if (base <= 0)
		return 0;
	shift = attempts < 1 ? 0 : attempts - 1;
	if (shift > 30)
		shift = 30;
	d = (long long)base << shift;
	return d > OUTBOX_BACKOFF_MAX ? OUTBOX_BACKOFF_MAX : d;
}

/*
 * One deliverer per database: a 'sending' row seen while holding the lock
 * was left by a process that died, so it is retried at once. The lock is
 * a separate file: an flock() on the database itself could not coexist
 * with SQLite's own POSIX locks. Returns the fd, -1 for no lock needed
 * (in-memory database), ERR_CONFLICT when another process holds it.
 */
static int outbox_lock(sqlite3 *db)
{
	const char *path = sqlite3_db_filename(db, "main");
	char *lock;
	int fd;

	if (!path || !*path)
		return -1;
	lock = xstrfmt("%s-outbox.lock", path);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		int ret = err_set(ERR_IO, "%s: %s", lock, strerror(errno));
		free(lock);
		return ret;
	}
	free(lock);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int busy = errno == EWOULDBLOCK;
		int ret = err_set(busy ? ERR_CONFLICT : ERR_IO, "outbox: %s",
				  busy ? "another process is delivering mail"
				       : strerror(errno));
		close(fd);
		return ret;
	}
	return fd;
}

struct due {
	long long id, patch_id;
	int attempts;
	char *from, *rcpt_json, *data;
};

static void due_release(struct due *d)
{
	free(d->from);
	free(d->rcpt_json);
	free(d->data);
	memset(d, 0, sizeof(*d));
}

/* The next due mail after id `after`: 1 found, 0 none, negative error. */
static int next_due(sqlite3 *db, long long after, time_t now, struct due *d)
{
	sqlite3_stmt *st;
	int rc, ret = 0;

	st = db_prepare(db,
			"SELECT id, patch_id, attempts, mail_from, rcpt_to,"
			" headers_and_body FROM mail WHERE id > ? AND"
			" ((state = 'queued' AND hold IS NULL AND next_attempt_at <= ?) OR"
			" state = 'sending') ORDER BY id LIMIT 1",
			"ii", after, (long long)now);
	if (!st)
		return ERR_IO;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		d->id = sqlite3_column_int64(st, 0);
		d->patch_id = sqlite3_column_int64(st, 1);
		d->attempts = sqlite3_column_int(st, 2);
		d->from = col_dup(st, 3);
		d->rcpt_json = col_dup(st, 4);
		d->data = col_dup(st, 5);
		ret = 1;
	} else if (rc != SQLITE_DONE) {
		ret = err_set(ERR_IO, "db: %s", sqlite3_errmsg(db));
	}
	sqlite3_finalize(st);
	return ret;
}

/* Runs one UPDATE (+ event) in a transaction of its own, retried when busy. */
static int record(sqlite3 *db, const struct due *d, const char *state,
		  long long next, const char *error, int tries)
{
	int ret = 0;

	for (int i = 0; i < tries; i++) {
		if ((ret = db_begin(db)) < 0)
			continue;
		if (!strcmp(state, "sent"))
			ret = db_exec(
				db,
				"UPDATE mail SET state = 'sent', last_error"
				" = NULL, sent_at = strftime("
				"'%Y-%m-%dT%H:%M:%SZ','now') WHERE id = ?",
				"i", d->id);
		else
			ret = db_exec(
				db,
				"UPDATE mail SET state = ?, next_attempt_at"
				" = ?, last_error = ? WHERE id = ?",
				"titi", state, next, error, d->id);
		if (ret >= 0 && strcmp(state, "queued"))
			ret = (int)event_add(db, "outbox", "mail", d->id, state,
					     "patch %lld, attempt %d%s%s",
					     d->patch_id, d->attempts,
					     error ? ": " : "",
					     error ? error : "");
		if (ret >= 0 && (ret = db_commit(db)) >= 0)
			return 0;
		db_rollback(db);
	}
	return ret;
}

static void report(outbox_report_fn *fn, void *arg, const struct due *d,
		   const char *state, long long next, const char *rcpt,
		   const char *error)
{
	struct outbox_report r = {d->id, d->patch_id, state, d->attempts,
				  next,	 rcpt,	      error};

	if (fn) {
		fn(&r, arg);
		return;
	}
	if (error)
		log_info("mail %lld: %s (patch %lld, attempt %d): %s", d->id,
			 state, d->patch_id, d->attempts, error);
	else
		log_info("mail %lld: sent to %s (patch %lld, attempt %d)",
			 d->id, rcpt, d->patch_id, d->attempts);
}

int outbox_deliver_report(sqlite3 *db, const struct config *cfg, int max,
			  outbox_report_fn *fn, void *arg)
{
	struct smtp *smtp = NULL;
	struct due d = {0};
	long long after = 0;
	int lock, sent = 0, tried = 0, ret = 0;
	int max_attempts =
		cfg->mail_max_attempts > 0 ? cfg->mail_max_attempts : 1;

	if (!sqlite3_get_autocommit(db))
		return err_set(ERR_CONFLICT, "outbox: delivery runs its own "
					     "transactions, not inside one");
	if (!cfg->smtp_url || !*cfg->smtp_url) {
		long long n = 0;
		if (db_query_int(db, &n,
				 "SELECT count(*) FROM mail WHERE state IN"
				 " ('queued','sending')",
				 NULL) < 0)
			return ERR_IO;
		if (n)
			log_info("mail: smtp_url is not set: %lld mail(s) stay "
				 "queued",
				 n);
		return 0;
	}
	lock = outbox_lock(db);
	if (lock == ERR_CONFLICT) {
		log_info("mail: %s; not delivering now", err_msg());
		return 0;
	}
	if (lock < -1)
		return lock;

	while (max <= 0 || tried < max) {
		time_t now = time(NULL);
		json_t *rj = NULL;
		const char **rcpt = NULL;
		size_t nrcpt = 0;
		int down = 0, r;

		due_release(&d);
		if ((r = next_due(db, after, now, &d)) <= 0) {
			ret = r;
			break;
		}
		after = d.id;
		tried++;
		/* Committed before the relay hears of it: a crash from here on
		 * leaves 'sending', which the next pass sends again. */
		if ((ret = db_begin(db)) < 0)
			break;
		r = db_exec(db,
			    "UPDATE mail SET state = 'sending', attempts ="
			    " attempts + 1 WHERE id = ? AND state IN"
			    " ('queued','sending')",
			    "i", d.id);
		if (r < 0 || (ret = db_commit(db)) < 0) {
			ret = r < 0 ? r : ret;
			db_rollback(db);
			break;
		}
		if (r == 0)
			continue;
		d.attempts++;

		rj = json_loads(d.rcpt_json ? d.rcpt_json : "", 0, NULL);
		nrcpt = json_is_array(rj) ? json_array_size(rj) : 0;
		rcpt = xcalloc(nrcpt + 1, sizeof(*rcpt));
		for (size_t i = 0; i < nrcpt; i++)
			rcpt[i] = json_string_value(json_array_get(rj, i));
		for (size_t i = 0; i < nrcpt; i++)
			if (!rcpt[i])
				nrcpt = 0;
		if (!nrcpt || !d.data || !d.from) {
			r = err_set(ERR_INVALID, "stored mail has no recipients"
						 " or no text");
			down = 0;
		} else {
			if (!smtp && !(smtp = smtp_open(cfg->smtp_url, NULL))) {
				r = ERR_IO;
				down = 1;
			} else {
				r = smtp_send(smtp, d.from, rcpt, nrcpt, d.data,
					      strlen(d.data), &down, NULL);
			}
		}
		if (r == 0) {
			/* The relay has it: record that before anything else
			 * (QUIT included), to keep the duplicate window small.
			 */
			if ((ret = record(db, &d, "sent", 0, NULL, 5)) < 0)
				log_warnx("mail %lld: sent, but not recorded "
					  "(it will be sent again): %s",
					  d.id, err_msg());
			else
				sent++;
			report(fn, arg, &d, "sent", 0, rcpt[0], NULL);
		} else {
			char *e = xstrdup(err_msg());
			int final =
				d.attempts >= max_attempts || r == ERR_INVALID;
			long long next =
				final ? 0
				      : (long long)time(NULL) +
						outbox_backoff(
							cfg->mail_backoff,
							d.attempts);
			ret = record(db, &d, final ? "failed" : "queued", next,
				     e, 5);
			report(fn, arg, &d, final ? "failed" : "queued", next,
			       nrcpt ? rcpt[0] : NULL, e);
			free(e);
		}
		free(rcpt);
		json_decref(rj);
		if (ret < 0 || down)
			break;
	}
	due_release(&d);
	smtp_close(smtp);
	if (lock >= 0)
		close(lock);
	return ret < 0 ? ret : sent;
}

int outbox_deliver(sqlite3 *db, const struct config *cfg, int max)
{
	return outbox_deliver_report(db, cfg, max, NULL, NULL);
}
