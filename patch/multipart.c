/* multipart.c: a MIME multipart mail made into one text: the message, then the attached patch. */
#include "err.h"
#include "mime.h"
#include "patch-int.h"
#include "strbuf.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

/*
 * Patches come attached as often as inline: `git format-patch --attach`,
 * mailers that put a .patch file in a text/x-patch or base64 part, signed
 * mail (multipart/signed around the rest). The parts are walked (nested
 * multiparts too, to MAX_DEPTH), each decoded from its transfer encoding
 * and charset; the first text/plain part that is not an attachment is the
 * message, and the diff is in it or in one attached part. Signatures and
 * other non-text parts are left out.
 */

#define MAX_DEPTH 4

struct part {
	struct strbuf ctype, cte, disp;
	size_t line; /* of its first header line */
};

struct flat {
	const char *name; /* the file, for errors */
	struct strbuf msg, diff;
	int have_msg, msg_has_diff, ndiff;
	size_t second_line;       /* of the second patch's part */
	struct strbuf diff_names; /* "a.patch, b.patch" */
};

/* The header value's type ("text/plain"), lowercased, into out. */
static void media_type(const struct strbuf *v, char *out, size_t size)
{
	size_t n = 0;
	const char *s = v->len ? v->buf : "text/plain";

	while (*s == ' ' || *s == '\t')
		s++;
	while (s[n] && s[n] != ';' && !isspace((unsigned char)s[n]) &&
	       n + 1 < size) {
		out[n] = (char)tolower((unsigned char)s[n]);
		n++;
	}
	out[n] = '\0';
}

/*
 * The value of parameter name in a header value ('type; a=b; c="d e"'),
 * unquoted, into out: 1 if present.
 */
static int param(const struct strbuf *v, const char *name, struct strbuf *out)
{
	const char *s, *end;
	size_t nl = strlen(name);
	int quoted = 0;

	strbuf_reset(out);
	if (!v->len)
		return 0;
	s = v->buf;
	end = v->buf + v->len;
	/* to the first ';' outside quotes */
	for (; s < end; s++) {
		if (*s == '"')
			quoted = !quoted;
		else if (*s == ';' && !quoted)
			break;
	}
	while (s < end) {
		const char *k;
		s++; /* the ';' */
		while (s < end && isspace((unsigned char)*s))
			s++;
		k = s;
		while (s < end && *s != '=' && *s != ';')
			s++;
		if (s >= end || *s == ';')
			continue;
		int match = (size_t)(s - k) == nl && !strncasecmp(k, name, nl);
		s++; /* the '=' */
		if (s < end && *s == '"') {
			for (s++; s < end && *s != '"'; s++) {
				if (*s == '\\' && s + 1 < end)
					s++;
				if (match)
					strbuf_addch(out, *s);
			}
			if (s < end)
				s++;
		} else {
			const char *b = s;
			while (s < end && *s != ';' && !isspace((unsigned char)*s))
				s++;
			if (match)
				strbuf_add(out, b, (size_t)(s - b));
		}
		if (match)
			return 1;
		while (s < end && *s != ';')
			s++;
	}
	return 0;
}

/* A part's headers (unfolded) up to the blank line; *pos to its body. */
static void part_headers(const char **pos, const char *end, size_t *line,
			 struct part *pt)
{
	const char *s = *pos;

	while (s < end) {
		const char *e = line_end(s, end), *colon;
		size_t n = line_len_nocr(s, (size_t)(e - s));
		struct strbuf *v = NULL;

		if (!n) {
			s = e < end ? e + 1 : end;
			(*line)++;
			break;
		}
		colon = memchr(s, ':', n);
		if (colon) {
			size_t k = (size_t)(colon - s);
			if (k == 12 && !strncasecmp(s, "content-type", k))
				v = &pt->ctype;
			else if (k == 25 &&
				 !strncasecmp(s, "content-transfer-encoding", k))
				v = &pt->cte;
			else if (k == 19 &&
				 !strncasecmp(s, "content-disposition", k))
				v = &pt->disp;
		}
		if (v) {
			strbuf_reset(v);
			strbuf_add(v, colon + 1, n - (size_t)(colon + 1 - s));
		}
		s = e < end ? e + 1 : end;
		(*line)++;
		/* continuation lines */
		while (s < end && (*s == ' ' || *s == '\t')) {
			e = line_end(s, end);
			if (v) {
				strbuf_addch(v, ' ');
				strbuf_add(v, s, line_len_nocr(s, (size_t)(e - s)));
			}
			s = e < end ? e + 1 : end;
			(*line)++;
		}
		if (v)
			strbuf_trim(v);
	}
	*pos = s;
}

/* Does text hold a diff (a line that starts one)? */
static int has_diff(const char *s, const char *end)
{
	while (s < end) {
		const char *e = line_end(s, end), *nx = NULL;
		size_t n = line_len_nocr(s, (size_t)(e - s)), nn = 0;
		if (e < end && e + 1 < end) {
			nx = e + 1;
			nn = line_len_nocr(nx, (size_t)(line_end(nx, end) - nx));
		}
		if (n >= 4 && diff_is_start(s, n, nx, nn))
			return 1;
		s = e < end ? e + 1 : end;
	}
	return 0;
}

/* Does text have a "---" line (the end of a commit message)? */
static int has_separator(const char *s, const char *end)
{
	while (s < end) {
		const char *e = line_end(s, end);
		size_t n = (size_t)(e - s);
		while (n && isspace((unsigned char)s[n - 1]))
			n--;
		if (n == 3 && !memcmp(s, "---", 3))
			return 1;
		s = e < end ? e + 1 : end;
	}
	return 0;
}

/* Is line s[0..n) the delimiter "--boundary" (*close: "--boundary--")? */
static int is_delimiter(const char *s, size_t n, const struct strbuf *b,
			int *close)
{
	if (n < b->len + 2 || s[0] != '-' || s[1] != '-' ||
	    memcmp(s + 2, b->buf, b->len))
		return 0;
	s += b->len + 2;
	n -= b->len + 2;
	*close = n >= 2 && s[0] == '-' && s[1] == '-';
	if (*close)
		s += 2, n -= 2;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	return n == 0;
}

static int ends_with(const struct strbuf *s, const char *suffix)
{
	size_t k = strlen(suffix);
	return s->len >= k && !strcasecmp(s->buf + s->len - k, suffix);
}

/* One leaf part: decoded, in UTF-8 if text, then kept as message or diff. */
static int leaf(struct flat *f, struct part *pt, const char *type,
		const char *s, const char *end)
{
	struct strbuf raw = STRBUF_INIT, fname = STRBUF_INIT, cs = STRBUF_INIT;
	struct strbuf *text = &raw;
	struct strbuf conv = STRBUF_INIT;
	const char *cte = pt->cte.buf ? pt->cte.buf : "";
	int attach = pt->disp.len && !strncasecmp(pt->disp.buf, "attachment", 10);
	int textual, ret = 0;

	if (!param(&pt->disp, "filename", &fname))
		param(&pt->ctype, "name", &fname);
	textual = !strncmp(type, "text/", 5) || !strcmp(type, "application/x-patch") ||
		  !strcmp(type, "application/x-diff") ||
		  (!strcmp(type, "application/octet-stream") &&
		   (ends_with(&fname, ".patch") || ends_with(&fname, ".diff")));
	if (!textual)
		goto out; /* a signature, an image, ... */
	if (!strcasecmp(cte, "base64"))
		base64_decode(&raw, s, (size_t)(end - s));
	else if (!strcasecmp(cte, "quoted-printable"))
		qp_decode(&raw, s, (size_t)(end - s));
	else
		strbuf_add(&raw, s, (size_t)(end - s));
	if (raw.len && memchr(raw.buf, '\0', raw.len)) {
		ret = err_set(ERR_INVALID, "%s:%zu: NUL byte in the %s part%s%s",
			      f->name, pt->line, type, fname.len ? " " : "",
			      fname.len ? fname.buf : "");
		goto out;
	}
	if (!utf8_valid(raw.buf ? raw.buf : "", raw.len)) {
		param(&pt->ctype, "charset", &cs);
		if (!cs.len || !strcasecmp(cs.buf, "utf-8") ||
		    mime_to_utf8(&conv, cs.buf, raw.buf, raw.len) < 0) {
			strbuf_reset(&conv);
			mime_to_utf8(&conv, "iso-8859-1", raw.buf, raw.len);
		}
		text = &conv;
	}
	/* the line break before the delimiter went with it: put one back */
	if (text->len && text->buf[text->len - 1] != '\n')
		strbuf_addch(text, '\n');
	if (!f->have_msg && !strcmp(type, "text/plain") && !attach) {
		f->have_msg = 1;
		strbuf_add(&f->msg, text->buf ? text->buf : "", text->len);
		f->msg_has_diff = f->msg.len &&
				  has_diff(f->msg.buf, f->msg.buf + f->msg.len);
	} else if (text->len && has_diff(text->buf, text->buf + text->len)) {
		if (!f->ndiff++)
			strbuf_add(&f->diff, text->buf, text->len);
		else if (f->ndiff == 2)
			f->second_line = pt->line;
		if (f->diff_names.len)
			strbuf_addstr(&f->diff_names, ", ");
		strbuf_addstr(&f->diff_names, fname.len ? fname.buf : type);
	}
out:
	strbuf_release(&raw);
	strbuf_release(&conv);
	strbuf_release(&fname);
	strbuf_release(&cs);
	return ret;
}

/* ctype_line: where the Content-Type is; line: where the body starts. */
static int walk(struct flat *f, const struct strbuf *ctype, size_t ctype_line,
		const char *s, const char *end, size_t line, int depth)
{
	struct strbuf b = STRBUF_INIT;
	const char *part = NULL;
	size_t part_line = 0;
	int ret = 0, found = 0, close = 0;

	if (depth > MAX_DEPTH)
		return err_set(ERR_INVALID,
			       "%s:%zu: multipart parts nested over %d deep",
			       f->name, ctype_line, MAX_DEPTH);
	if (!param(ctype, "boundary", &b) || !b.len) {
		ret = err_set(ERR_INVALID,
			      "%s:%zu: Content-Type '%.60s' has no boundary",
			      f->name, ctype_line, ctype->buf);
		goto out;
	}
	for (int last = 0; !last && !close;) {
		const char *e = s < end ? line_end(s, end) : end;
		size_t n = line_len_nocr(s, (size_t)(e - s));
		int c = 0;

		last = s >= end; /* a part left open at the end counts too */
		if (last || is_delimiter(s, n, &b, &c)) {
			if (part) {
				/* the line break before a delimiter is its own */
				const char *pe = s;
				struct part pt = { STRBUF_INIT, STRBUF_INIT,
						   STRBUF_INIT, part_line };
				char type[80];
				if (pe > part && pe[-1] == '\n')
					pe--;
				if (pe > part && pe[-1] == '\r')
					pe--;
				const char *body = part;
				size_t bl = part_line;
				part_headers(&body, pe, &bl, &pt);
				media_type(&pt.ctype, type, sizeof(type));
				if (!strncmp(type, "multipart/", 10))
					ret = walk(f, &pt.ctype, pt.line, body,
						   pe, bl, depth + 1);
				else
					ret = leaf(f, &pt, type, body,
						   body < pe ? pe : body);
				strbuf_release(&pt.ctype);
				strbuf_release(&pt.cte);
				strbuf_release(&pt.disp);
				if (ret < 0)
					goto out;
			}
			if (last)
				break;
			found = 1;
			close = c;
			part = e < end ? e + 1 : end;
			part_line = line + 1;
		}
		s = e < end ? e + 1 : end;
		line++;
	}
	if (!found)
		ret = err_set(ERR_INVALID,
			      "%s:%zu: multipart body without a part (no"
			      " \"--%.60s\" line)",
			      f->name, line, b.buf);
out:
	strbuf_release(&b);
	return ret;
}

int multipart_flatten(const char *ctype, size_t ctype_line, const char *s,
		      const char *end, const char *name, size_t line,
		      struct strbuf *out)
{
	struct flat f = { name, STRBUF_INIT, STRBUF_INIT, 0, 0, 0, 0,
			  STRBUF_INIT };
	struct strbuf ct = STRBUF_INIT;
	int ret;

	strbuf_addstr(&ct, ctype);
	ret = walk(&f, &ct, ctype_line, s, end, line, 1);
	if (ret < 0)
		goto out;
	strbuf_reset(out);
	strbuf_add(out, f.msg.buf ? f.msg.buf : "", f.msg.len);
	if (f.msg_has_diff || !f.ndiff)
		goto out; /* the message carries the patch, or nothing does */
	if (f.ndiff > 1) {
		ret = err_set(ERR_INVALID,
			      "%s:%zu: %d patches attached to one mail (%.120s):"
			      " send one patch per mail",
			      name, f.second_line, f.ndiff, f.diff_names.buf);
		goto out;
	}
	if (out->len && out->buf[out->len - 1] != '\n')
		strbuf_addch(out, '\n');
	if (!has_separator(out->buf ? out->buf : "",
			   out->buf ? out->buf + out->len : ""))
		strbuf_addstr(out, "---\n");
	strbuf_add(out, f.diff.buf, f.diff.len);
out:
	strbuf_release(&f.msg);
	strbuf_release(&f.diff);
	strbuf_release(&f.diff_names);
	strbuf_release(&ct);
	return ret;
}
