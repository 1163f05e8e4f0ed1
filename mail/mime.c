/* mime.c: RFC 2047 words, quoted-printable, base64, charsets to UTF-8. */
#include "mime.h"
#include "strbuf.h"

#include <errno.h>
#include <iconv.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

int utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned c = *p;
		size_t n;
		uint32_t cp, min;

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f, min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f, min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if ((size_t)(end - p) <= n)
			return 0;
		for (size_t i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		p += n + 1;
	}
	return 1;
}

/* Length of the control character at s (C0, DEL, or C1 in UTF-8), or 0. */
static size_t control_len(const char *s, size_t len)
{
	unsigned char c = (unsigned char)s[0];

	if (c < 0x20 || c == 0x7f)
		return 1;
	if (c == 0xc2 && len > 1 && (unsigned char)s[1] >= 0x80 &&
	    (unsigned char)s[1] <= 0x9f)
		return 2;
	return 0;
}

int mime_has_control(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (control_len(s + i, len - i))
			return 1;
	return 0;
}

static void clean(struct strbuf *out, const char *s, size_t len, int multi)
{
	strbuf_grow(out, len);
	for (size_t i = 0; i < len;) {
		size_t k = control_len(s + i, len - i);
		char c = s[i];

		if (!k) {
			strbuf_addch(out, c);
			i++;
			continue;
		}
		i += k;
		if (multi) {
			if (c == '\n' || c == '\t')
				strbuf_addch(out, c);
			continue;
		}
		if (k == 1 && (c == '\n' || c == '\r' || c == '\t' ||
			       c == '\v' || c == '\f')) {
			/* a fold: one space for the break and the blanks */
			while (out->len && out->buf[out->len - 1] == ' ')
				strbuf_setlen(out, out->len - 1);
			while (i < len && (s[i] == ' ' || s[i] == '\t' ||
					   s[i] == '\r' || s[i] == '\n' ||
					   s[i] == '\v' || s[i] == '\f'))
				i++;
			strbuf_addch(out, ' ');
		}
	}
}

void mime_clean_line(struct strbuf *out, const char *s, size_t len)
{
	clean(out, s, len, 0);
}

void mime_clean_text(struct strbuf *out, const char *s, size_t len)
{
	clean(out, s, len, 1);
}

int utf8_cut(const char *s, size_t len, size_t max)
{
	if (len <= max)
		return (int)len;
	while (max && ((unsigned char)s[max] & 0xc0) == 0x80)
		max--;
	return (int)max;
}

static void add_utf8(struct strbuf *out, uint32_t cp)
{
	char b[4];

	if (cp < 0x80) {
		strbuf_addch(out, (int)cp);
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		strbuf_add(out, b, 2);
	} else {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		strbuf_add(out, b, 3);
	}
}

/* windows-1252 0x80..0x9f; the five holes map to the C1 code points, as Windows
 * does. */
static const uint16_t cp1252_hi[32] = {
	0x20ac, 0x0081, 0x201a, 0x0192, 0x201e, 0x2026, 0x2020, 0x2021,
	0x02c6, 0x2030, 0x0160, 0x2039, 0x0152, 0x008d, 0x017d, 0x008f,
	0x0090, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014,
	0x02dc, 0x2122, 0x0161, 0x203a, 0x0153, 0x009d, 0x017e, 0x0178,
};

enum cs { CS_UTF8, CS_LATIN1, CS_CP1252, CS_LATIN9, CS_OTHER };

static enum cs charset_kind(const char *cs)
{
	static const struct {
		const char *name;
		enum cs kind;
	} tab[] = {
		{"utf-8", CS_UTF8},	     {"utf8", CS_UTF8},
		{"us-ascii", CS_UTF8},	     {"ascii", CS_UTF8},
		{"iso-8859-1", CS_LATIN1},   {"iso8859-1", CS_LATIN1},
		{"latin1", CS_LATIN1},	     {"l1", CS_LATIN1},
		{"windows-1252", CS_CP1252}, {"cp1252", CS_CP1252},
		{"iso-8859-15", CS_LATIN9},  {"latin-9", CS_LATIN9},
	};

	if (!cs || !*cs)
		return CS_UTF8;
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcasecmp(cs, tab[i].name))
			return tab[i].kind;
	return CS_OTHER;
}

static uint32_t latin9(unsigned char c)
{
	switch (c) {
	case 0xa4:
		return 0x20ac;
	case 0xa6:
		return 0x0160;
	case 0xa8:
		return 0x0161;
	case 0xb4:
		return 0x017d;
	case 0xb8:
		return 0x017e;
	case 0xbc:
		return 0x0152;
	case 0xbd:
		return 0x0153;
	case 0xbe:
		return 0x0178;
	default:
		return c;
	}
}

static int iconv_to_utf8(struct strbuf *out, const char *cs, const char *s,
			 size_t len)
{
	iconv_t cd = iconv_open("UTF-8", cs);
	size_t old = out->len;
	char *in = (char *)s;
	size_t inleft = len;

	if (cd == (iconv_t)-1)
		return -1;
	while (inleft) {
		strbuf_grow(out, inleft * 4 + 16);
		char *o = out->buf + out->len;
		size_t oleft = out->alloc - out->len - 1;
		size_t r = iconv(cd, &in, &inleft, &o, &oleft);
		out->len = (size_t)(o - out->buf);
		if (r == (size_t)-1 && errno != E2BIG) {
			iconv_close(cd);
			strbuf_setlen(out, old);
			return -1;
		}
	}
	iconv_close(cd);
	out->buf[out->len] = '\0';
	if (!utf8_valid(out->buf + old, out->len - old)) {
		strbuf_setlen(out, old);
		return -1;
	}
	return 0;
}

int mime_to_utf8(struct strbuf *out, const char *charset, const char *s,
		 size_t len)
{
	enum cs kind = charset_kind(charset);

	if (kind == CS_UTF8) {
		if (!utf8_valid(s, len))
			return -1;
		strbuf_add(out, s, len);
		return 0;
	}
	if (kind == CS_OTHER)
		return iconv_to_utf8(out, charset, s, len);
	strbuf_grow(out, len + len / 2);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		uint32_t cp = c;

		if (c < 0x80) {
			strbuf_addch(out, c);
			continue;
		}
		if (kind == CS_CP1252 && c < 0xa0)
			cp = cp1252_hi[c - 0x80];
		else if (kind == CS_LATIN9)
			cp = latin9(c);
		add_utf8(out, cp);
	}
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void qp_decode(struct strbuf *out, const char *s, size_t len)
{
	size_t i = 0, run = 0;

	strbuf_grow(out, len);
	while (i < len) {
		const char *eq = memchr(s + i, '=', len - i);
		if (!eq) {
			strbuf_add(out, s + i, len - i);
			return;
		}
		run = (size_t)(eq - (s + i));
		strbuf_add(out, s + i, run);
		i += run + 1;
		if (i < len && s[i] == '\n') {
			i++;
		} else if (i + 1 < len && s[i] == '\r' && s[i + 1] == '\n') {
			i += 2;
		} else if (i + 1 < len && hexval(s[i]) >= 0 &&
			   hexval(s[i + 1]) >= 0) {
			strbuf_addch(out, hexval(s[i]) * 16 + hexval(s[i + 1]));
			i += 2;
		} else {
			strbuf_addch(out, '=');
		}
	}
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

void base64_decode(struct strbuf *out, const char *s, size_t len)
{
	uint32_t acc = 0;
	int bits = 0;

	strbuf_grow(out, len / 4 * 3 + 3);
	for (size_t i = 0; i < len; i++) {
		int v = b64val((unsigned char)s[i]);
		if (s[i] == '=')
			break;
		if (v < 0)
			continue;
		acc = (acc << 6) | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			strbuf_addch(out, (int)((acc >> bits) & 0xff));
		}
	}
}

#define ENCODED_WORD_MAX 1024

/*
 * Parses one encoded word at s ("=?cs?e?text?="), filling its parts; returns
 * its length or 0 if s does not start with a well-formed word.
 */
static size_t encoded_word(const char *s, size_t len, const char **cs,
			   size_t *cslen, char *enc, const char **text,
			   size_t *textlen)
{
	size_t i = 2, j;

	if (len < 8 || s[0] != '=' || s[1] != '?')
		return 0;
	*cs = s + 2;
	while (i < len && i < 80 && s[i] != '?' && s[i] != ' ' && s[i] != '\t')
		i++;
	if (i + 2 >= len || s[i] != '?' || i == 2 || s[i + 2] != '?')
		return 0;
	*cslen = i - 2;
	*enc = s[i + 1];
	if (*enc != 'q' && *enc != 'Q' && *enc != 'b' && *enc != 'B')
		return 0;
	*text = s + i + 3;
	for (j = i + 3; j + 1 < len; j++) {
		if (s[j] == '?' && s[j + 1] == '=')
			break;
		/* RFC 2047 allows 75; be lenient, but stay linear */
		if (j > ENCODED_WORD_MAX)
			return 0;
		if (s[j] == ' ' || s[j] == '\t' || s[j] == '\n')
			return 0;
	}
	if (j + 1 >= len)
		return 0;
	*textlen = j - (i + 3);
	return j + 2;
}

int rfc2047_decode(struct strbuf *out, const char *s, size_t len)
{
	struct strbuf raw = STRBUF_INIT;
	char cs[64];
	size_t i = 0, ws_start = 0;
	int prev_word = 0, ret = 0;

	while (i < len) {
		const char *csp, *text;
		size_t cslen, textlen, wl;
		char enc;

		if (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' ||
		    s[i] == '\r') {
			ws_start = i;
			while (i < len && (s[i] == ' ' || s[i] == '\t' ||
					   s[i] == '\n' || s[i] == '\r'))
				i++;
			wl = i < len ? encoded_word(s + i, len - i, &csp,
						    &cslen, &enc, &text,
						    &textlen)
				     : 0;
			/* white space between two encoded words is dropped */
			if (!(prev_word && wl))
				strbuf_add(out, s + ws_start, i - ws_start);
			continue;
		}
		wl = encoded_word(s + i, len - i, &csp, &cslen, &enc, &text,
				  &textlen);
		if (!wl) {
			size_t j = i;
			while (j < len && s[j] != ' ' && s[j] != '\t' &&
			       s[j] != '\n' && s[j] != '\r' &&
			       !(j > i && s[j] == '=' && j + 1 < len &&
				 s[j + 1] == '?'))
				j++;
			if (j == i)
				j++;
			strbuf_add(out, s + i, j - i);
			i = j;
			prev_word = 0;
			continue;
		}
		/* "utf-8*en" (RFC 2231 language) */
		size_t n = cslen;
		const char *star = memchr(csp, '*', cslen);
		if (star)
			n = (size_t)(star - csp);
		if (n >= sizeof(cs))
			n = sizeof(cs) - 1;
		memcpy(cs, csp, n);
		cs[n] = '\0';
		strbuf_reset(&raw);
		if (enc == 'q' || enc == 'Q') {
			for (size_t k = 0; k < textlen; k++) {
				if (text[k] == '_')
					strbuf_addch(&raw, ' ');
				else if (text[k] == '=' && k + 2 < textlen &&
					 hexval(text[k + 1]) >= 0 &&
					 hexval(text[k + 2]) >= 0) {
					strbuf_addch(
						&raw,
						hexval(text[k + 1]) * 16 +
							hexval(text[k + 2]));
					k += 2;
				} else {
					strbuf_addch(&raw, text[k]);
				}
			}
		} else {
			base64_decode(&raw, text, textlen);
		}
		if (memchr(raw.buf, '\0', raw.len)) {
			ret = -1;
			break;
		}
		if (mime_to_utf8(out, cs, raw.buf, raw.len) < 0) {
			if (charset_kind(cs) != CS_OTHER) {
				ret = -1;
				break;
			}
			strbuf_add(out, s + i, wl);
		}
		i += wl;
		prev_word = 1;
	}
	strbuf_release(&raw);
	return ret;
}
