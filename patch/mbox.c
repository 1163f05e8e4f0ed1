/* mbox.c: splits an mbox (git format-patch, send-email) into patches. */
#include "err.h"
#include "patch-int.h"
#include "patch.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/*
 * git mailsplit's test: "From " then anything, ending in an asctime-like
 * date ("... 00:00:00 2001", maybe followed by a zone): a colon with digits
 * around it and a year after it. Body lines starting with "From " rarely
 * look like that.
 */
int mbox_is_from_line(const char *s, size_t n)
{
	const char *colon = NULL;

	n = line_len_nocr(s, n);
	if (n < 20 || memcmp(s, "From ", 5))
		return 0;
	for (size_t i = n - 1; i > 5; i--) {
		if (s[i] == ':') {
			colon = s + i;
			break;
		}
	}
	if (!colon || colon - s < 8 || s + n - colon < 4)
		return 0;
	if (!isdigit((unsigned char)colon[-2]) ||
	    !isdigit((unsigned char)colon[-1]) ||
	    !isdigit((unsigned char)colon[1]) ||
	    !isdigit((unsigned char)colon[2]))
		return 0;
	/* a year somewhere after the time */
	for (const char *q = colon + 3; q + 4 <= s + n; q++)
		if (q[-1] == ' ' && isdigit((unsigned char)q[0]) &&
		    isdigit((unsigned char)q[1]) &&
		    isdigit((unsigned char)q[2]) &&
		    isdigit((unsigned char)q[3]))
			return 1;
	return 0;
}

static int all_blank(const char *s, const char *end)
{
	for (; s < end; s++)
		if (!isspace((unsigned char)*s))
			return 0;
	return 1;
}

int mbox_parse(struct patch ***out, const char *buf, size_t len,
	       const char *name, size_t max_bytes)
{
	struct patch **v = NULL;
	size_t nv = 0, line = 1, start_line = 1;
	const char *s = buf, *end = buf + len, *start = buf;
	int ret = 0;

	*out = NULL;
	if (!name)
		name = "(input)";
	if (max_bytes && len > max_bytes)
		return err_set(ERR_TOOBIG,
			       "%s: %zu bytes, over the limit of %zu bytes",
			       name, len, max_bytes);
	/* message boundaries: each "From " separator line after the first line
	 */
	for (;;) {
		const char *e = s < end ? line_end(s, end) : end;
		int sep = s < end && s != start &&
			  mbox_is_from_line(s, (size_t)(e - s));

		if (s >= end || sep) {
			struct patch *p = NULL;
			/* blank lines before the first separator are no message */
			if (nv || !all_blank(start, s))
				ret = patch_parse_at(&p, start, (size_t)(s - start),
						     name, 0, start_line,
						     PATCH_SKIP_COVER |
							     PATCH_SKIP_REPLY);
			if (ret < 0)
				goto fail;
			if (p) {
				if (!(nv & (nv + 1)))
					v = xrealloc(v,
						     (nv + 1) * 2 * sizeof(*v));
				v[nv++] = p;
			}
			if (s >= end)
				break;
			start = s;
			start_line = line;
		}
		s = e < end ? e + 1 : end;
		line++;
	}
	if (!nv) {
		ret = err_set(ERR_INVALID,
			      "%s: no patch in the file (only "
			      "cover letters or replies)",
			      name);
		goto fail;
	}
	*out = v;
	return (int)nv;
fail:
	for (size_t i = 0; i < nv; i++)
		patch_free(v[i]);
	free(v);
	return ret;
}
