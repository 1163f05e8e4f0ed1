/* http-gzip.c: Accept-Encoding and gzipped answers (zlib). */
#include "http.h"
#include "http-int.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/*
 * A client that accepts gzip (browsers, curl --compressed, Python's
 * requests) gets text answers of GZIP_MIN bytes or more gzipped, with
 * Vary: Accept-Encoding on both forms. A cached answer keeps both forms,
 * so it is compressed once; the dashboard's files are compressed once per
 * server at the best level.
 */

/* The next element of a comma-separated header: [*p, *end) trimmed. */
int http_next_element(const char **p, const char **start, const char **end)
{
	const char *s = *p, *e;

	while (*s == ',' || *s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return 0;
	e = strchr(s, ',');
	if (!e)
		e = s + strlen(s);
	*p = e;
	*start = s;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*end = e;
	return 1;
}

/*
 * The weight of one Accept-Encoding element "coding[;q=W]" (RFC 9110
 * 12.5.3) in thousandths; a weight that does not parse counts as 0.
 */
static int element_weight(const char *s, const char *end, size_t *name_len)
{
	const char *semi = memchr(s, ';', (size_t)(end - s));
	const char *q, *n;
	int w = 0, digits = 0;

	*name_len = (size_t)((semi ? semi : end) - s);
	while (*name_len && (s[*name_len - 1] == ' ' || s[*name_len - 1] == '\t'))
		(*name_len)--;
	if (!semi)
		return 1000;
	for (q = semi + 1; q < end && (*q == ' ' || *q == '\t'); q++)
		;
	if (end - q < 3 || (q[0] != 'q' && q[0] != 'Q') || q[1] != '=')
		return 0;
	n = q + 2;
	if (*n == '1') {
		n++;
		if (n < end && *n == '.')
			for (n++; n < end && *n == '0' && digits < 3; n++)
				digits++;
		return n == end ? 1000 : 0;
	}
	if (*n != '0')
		return 0;
	n++;
	if (n < end && *n == '.')
		for (n++; n < end && *n >= '0' && *n <= '9' && digits < 3;
		     n++, digits++)
			w += (*n - '0') * (digits == 0 ? 100 : digits == 1 ? 10 : 1);
	return n == end ? w : 0;
}

int http_accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding, *s, *e;
	int gzip = -1, star = -1;

	if (!p)
		return 0;
	while (http_next_element(&p, &s, &e)) {
		size_t n;
		int w = element_weight(s, e, &n);
		if ((n == 4 && !strncasecmp(s, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(s, "x-gzip", 6)))
			gzip = w;
		else if (n == 1 && *s == '*')
			star = w;
	}
	/* A coding named outright rules; else "*" covers it. */
	return gzip >= 0 ? gzip > 0 : star > 0;
}

/* Text answers are worth compressing; patches, JSON, the dashboard. */
int http_compressible(const struct api_response *res)
{
	const char *t = res->content_type ? res->content_type
					  : "application/json";

	return res->fd < 0 && res->body.len >= GZIP_MIN &&
	       (!strncmp(t, "text/", 5) ||
		!strncmp(t, "application/json", 16) ||
		!strncmp(t, "image/svg+xml", 13));
}

/* buf gzipped as a response, or NULL when that saves nothing. */
struct MHD_Response *http_gzip_response(const char *buf, size_t len,
					  int level)
{
	z_stream z = { 0 };
	size_t cap = len - len / 8; /* must save an eighth at least */
	unsigned char *out;
	struct MHD_Response *r;
	int rc;

	if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	out = xmalloc(cap);
	z.next_in = (unsigned char *)buf;
	z.avail_in = (uInt)len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	r = MHD_create_response_from_buffer(cap - z.avail_out, out,
					    MHD_RESPMEM_MUST_FREE);
	if (!r)
		free(out);
	else
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING,
					"gzip");
	return r;
}
