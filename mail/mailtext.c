/* mailtext.c: outside text made fit for mail: valid UTF-8, controls handled. */
#include "mailtext.h"

#include <string.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_len(const unsigned char *s, size_t n)
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
void text_clean(struct strbuf *out, const char *str, size_t n, int header)
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

/* 1 for a character a quoted log must not carry (see text_clean_log()). */
static int log_control(const unsigned char *s, size_t l)
{
	if (l == 1)
		return (s[0] < 0x20 && s[0] != '\t' && s[0] != '\n') ||
		       s[0] == 0x7f;
	if (l == 2) /* C1: U+0080..U+009F */
		return s[0] == 0xc2 && s[1] < 0xa0;
	/* U+2028, U+2029 and U+202A..U+202E; U+2066..U+2069 */
	return l == 3 && s[0] == 0xe2 &&
	       ((s[1] == 0x80 && s[2] >= 0xa8 && s[2] <= 0xae) ||
		(s[1] == 0x81 && s[2] >= 0xa6 && s[2] <= 0xa9));
}

void text_clean_log(struct strbuf *out, const char *str, size_t n)
{
	struct strbuf body = STRBUF_INIT;
	const unsigned char *s;

	text_clean(&body, str, n, 0);
	s = (const unsigned char *)body.buf;
	for (size_t i = 0; i < body.len;) {
		/* valid UTF-8 now: every sequence has its length */
		size_t l = utf8_len(s + i, body.len - i);
		if (!l)
			l = 1;
		if (log_control(s + i, l))
			strbuf_addstr(out, "\xef\xbf\xbd");
		else
			strbuf_add(out, s + i, l);
		i += l;
	}
	strbuf_release(&body);
}

/* Cuts sb to at most max octets, at a character boundary. */
void utf8_truncate(struct strbuf *sb, size_t max)
{
	size_t n = max;

	if (sb->len <= max)
		return;
	while (n && ((unsigned char)sb->buf[n] & 0xc0) == 0x80)
		n--;
	strbuf_setlen(sb, n);
}

char *clean_header_text(const char *s, size_t max)
{
	struct strbuf sb = STRBUF_INIT;

	if (s)
		text_clean(&sb, s, strlen(s), 1);
	utf8_truncate(&sb, max);
	strbuf_rtrim(&sb);
	return strbuf_detach(&sb, NULL);
}
