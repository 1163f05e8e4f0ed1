/* mime.h: RFC 2047 words, quoted-printable, base64, charsets to UTF-8. */
#ifndef STABLEQ_MIME_H
#define STABLEQ_MIME_H

#include <stddef.h>

struct strbuf;

/* 1 if s[0..len) is well-formed UTF-8 (no overlongs, no surrogates). */
int utf8_valid(const char *s, size_t len);

/*
 * How many bytes of s[0..len) to print so that at most max bytes are shown
 * and no UTF-8 sequence is cut (for "%.*s" in messages).
 */
int utf8_cut(const char *s, size_t len, size_t max);

/*
 * Appends s[0..len) converted from charset (a MIME name, case-insensitive;
 * NULL or "" means UTF-8) to UTF-8. Returns 0, or -1 if the text is not valid
 * in that charset or the charset is unknown (out is then left as it was).
 */
int mime_to_utf8(struct strbuf *out, const char *charset, const char *s,
		 size_t len);

/*
 * Appends the header value s[0..len) with its RFC 2047 encoded words
 * ("=?UTF-8?q?J=C3=B6rg?=", "=?iso-8859-1?B?...?=") decoded to UTF-8.
 * White space between two adjacent encoded words is dropped; a word in an
 * unknown charset is kept as written. Returns 0, or -1 if a word decodes to
 * bytes that are not valid in its charset.
 */
int rfc2047_decode(struct strbuf *out, const char *s, size_t len);

/*
 * Text from outside made safe to store, print and write back in mail or
 * patch form. mime_clean_line() appends s[0..len) as one line: each run of
 * line breaks, tabs and other white-space control characters (with the
 * spaces around it) becomes one space, so folding and encoded CR/LF are
 * undone; every other control character (C0, DEL, C1: ESC, CSI, BEL...) is
 * dropped. mime_clean_text() keeps line breaks and tabs (a message body)
 * and drops the other control characters, CR included.
 */
void mime_clean_line(struct strbuf *out, const char *s, size_t len);
void mime_clean_text(struct strbuf *out, const char *s, size_t len);
/* Is there a control character mime_clean_line() would change? */
int mime_has_control(const char *s, size_t len);

/* Appends the quoted-printable text s[0..len) decoded ("=\n" soft breaks). */
void qp_decode(struct strbuf *out, const char *s, size_t len);
/* Appends the base64 text s[0..len) decoded; other characters are skipped. */
void base64_decode(struct strbuf *out, const char *s, size_t len);

#endif
