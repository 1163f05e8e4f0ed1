/* patch-int.h: internals of patch.c, patch-diff.c and mbox.c (no API). */
#ifndef STABLEQ_PATCH_INT_H
#define STABLEQ_PATCH_INT_H

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

#endif
