/* patch-int.h: internals of patch.c, patch-diff.c and mbox.c (no API). */
#ifndef STABLEQ_PATCH_INT_H
#define STABLEQ_PATCH_INT_H

#include "strbuf.h"

#include <stddef.h>
#include <string.h>

struct patch;

/* End of the line starting at p (the '\n' or end). */
static inline const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	return nl ? nl : end;
}

/* Length of line s[0..n) without a trailing '\r'. */
static inline size_t line_len_nocr(const char *s, size_t n)
{
	return n && s[n - 1] == '\r' ? n - 1 : n;
}

static inline int has_prefix(const char *s, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && !memcmp(s, pre, k);
}

/*
 * Does the line s[0..n) (next line nx[0..nn), or nx NULL) start a diff:
 * "diff --git ", or "--- X" directly followed by "+++ Y".
 */
int diff_is_start(const char *s, size_t n, const char *nx, size_t nn);

/*
 * Parses the diff in buf[0..len) (buf is at its first line, which is line
 * first_line of name), filling p->diff, files, flags and patch_id.
 */
int diff_parse(struct patch *p, const char *buf, size_t len, const char *name,
	       size_t first_line);

/* Appends one file / tag to p (strings copied). */
void patch_add_file(struct patch *p, const char *path, size_t n, char change);
void patch_add_tag(struct patch *p, const char *kind, const char *value,
		   size_t vlen, const char *extra, size_t elen);

struct strbuf;
/*
 * A multipart mail body s[0..end) (ctype: its Content-Type value, on line
 * ctype_line of name; line: where the body starts) made into one text in
 * UTF-8: the message part, then the attached diff (with a "---" line
 * between them if the message has none). 0, or negative with err_msg()
 * naming name:line and what was wrong (no boundary, no part, two patches
 * attached, ...).
 */
int multipart_flatten(const char *ctype, size_t ctype_line, const char *s,
		      const char *end, const char *name, size_t line,
		      struct strbuf *out);

/* Is s[0..n) an mbox separator ("From <x> <asctime date>")? */
int mbox_is_from_line(const char *s, size_t n);

/* The mail being read into a patch (patch.c; trailer.c reads trailers into it). */
/* The header values intake reads; index into struct mail.hdr. */
enum hdr { H_FROM, H_SUBJECT, H_DATE, H_MSGID, H_IRT, H_CTE, H_CTYPE,
	   /* say only how a mail was sent: they do not make text a mail */
	   H_AUTOSUB, H_PRECEDENCE, H_XAUTOREPLY, H_MAX };


enum mode { M_MAIL, M_GITSHOW, M_PLAIN };

struct mail {
	const char *name;
	struct patch *p;
	enum mode mode;
	struct strbuf hdr[H_MAX];
	size_t hdr_line[H_MAX];
	int has[H_MAX];
	struct strbuf msg; /* the message being built */
	int upstream_in_body; /* a "commit X upstream." line was seen */
};

/* Shared by patch.c and trailer.c. */
const char *patch_skip_ws(const char *s, const char *end);
void patch_trim(const char **s, size_t *n);
int patch_is_hex(const char *s, size_t n);
char *patch_lower_dup(const char *s, size_t n);
int patch_person(const char *s, size_t n, unsigned flags, char **name,
		 char **addr);

/*
 * One line s[0..n) of the message at line `line`: a known trailer becomes
 * tags of m->p (trailer.c). 0, or negative naming the line.
 */
int trailer_scan(struct mail *m, const char *s, size_t n, size_t line);

#endif
