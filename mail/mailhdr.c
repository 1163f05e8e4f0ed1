/* mailhdr.c: writing header fields: folding, RFC 2047 encoded words. */
#include "mailhdr.h"
#include "mailtext.h"

#include <stdlib.h>
#include <string.h>

/* Headers are folded before this column where a space allows it. */
#define HDR_WIDTH 78
/* Raw bytes per RFC 2047 B word: 12 + 4 * 45 / 3 = 72 <= 75 octets. */
#define EWORD_RAW 45
#define MSGID_MAX_OCTETS 250

void hdr_start(struct hdr *h, struct strbuf *sb, const char *name)
{
	h->sb = sb;
	h->ntok = 0;
	strbuf_addf(sb, "%s:", name);
	h->col = strlen(name) + 1;
}

/* One unbreakable token, after a space that folds when the line is full. */
void hdr_tok(struct hdr *h, const char *tok, size_t len)
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

void hdr_end(struct hdr *h)
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
		size_t take = 0, room = EWORD_RAW;
		/* the first word cannot fold: it fits after the field name */
		if (!h->ntok && h->col + 1 + 12 + 4 * 3 < HDR_WIDTH)
			room = (HDR_WIDTH - h->col - 1 - 12) / 4 * 3;
		if (room > EWORD_RAW)
			room = EWORD_RAW;
		while (take < n) {
			size_t l = utf8_len(p + take, n - take);
			if (!l)
				l = 1;
			if (take + l > room && take)
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

void hdr_mailboxes(struct strbuf *sb, const char *field,
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

void hdr_simple(struct strbuf *sb, const char *field, const char *text)
{
	struct hdr h;

	hdr_start(&h, sb, field);
	hdr_text(&h, text);
	hdr_end(&h);
}

/* A stored Message-Id (without <>) fit to be quoted back, or 0. */
int msgid_ok(const char *id)
{
	if (!id || !*id || strlen(id) > MSGID_MAX_OCTETS)
		return 0;
	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		if (*p <= 0x20 || *p >= 0x7f || *p == '<' || *p == '>')
			return 0;
	return 1;
}

void rfc5322_date(struct strbuf *sb, time_t t)
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
