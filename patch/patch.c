/* patch.c: a patch from a mail, quilt file or `git show`: headers, message, diff (trailers: trailer.c). */
#include "patch.h"
#include "address.h"
#include "err.h"
#include "mime.h"
#include "patch-int.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	enum hdr h;
} mail_headers[] = {
	{"from", H_FROM},
	{"subject", H_SUBJECT},
	{"date", H_DATE},
	{"message-id", H_MSGID},
	{"in-reply-to", H_IRT},
	{"content-transfer-encoding", H_CTE},
	{"content-type", H_CTYPE},
	{"auto-submitted", H_AUTOSUB},
	{"precedence", H_PRECEDENCE},
	{"x-autoreply", H_XAUTOREPLY},
	/* `git show` and `git log --format=fuller` headers */
	{"author", H_FROM},
	{"authordate", H_DATE},
};

const char *patch_skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

void patch_trim(const char **s, size_t *n)
{
	while (*n && isspace((unsigned char)(*s)[0]))
		(*s)++, (*n)--;
	while (*n && isspace((unsigned char)(*s)[*n - 1]))
		(*n)--;
}

int patch_is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

char *patch_lower_dup(const char *s, size_t n)
{
	char *r = xstrndup(s, n);
	for (char *q = r; *q; q++)
		*q = (char)tolower((unsigned char)*q);
	return r;
}

/* s[0..n) as one line of text without control characters (mime.h). */
static char *clean_dup(const char *s, size_t n)
{
	struct strbuf sb = STRBUF_INIT;

	if (!mime_has_control(s, n))
		return xstrndup(s, n);
	mime_clean_line(&sb, s, n);
	strbuf_trim(&sb);
	return strbuf_detach(&sb, NULL);
}

void patch_add_tag(struct patch *p, const char *kind, const char *value,
		   size_t vlen, const char *extra, size_t elen)
{
	struct patch_tag *t;

	if (!(p->ntags & (p->ntags - 1)))
		p->tags = xrealloc(p->tags, (p->ntags ? p->ntags * 2 : 8) *
						    sizeof(*p->tags));
	t = &p->tags[p->ntags++];
	t->kind = xstrdup(kind);
	t->value = clean_dup(value, vlen);
	t->extra = extra ? clean_dup(extra, elen) : NULL;
}

size_t patch_tags_of(const struct patch *p, const char *kind,
		     const struct patch_tag **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->ntags; i++) {
		if (strcmp(p->tags[i].kind, kind))
			continue;
		if (n < max)
			out[n] = &p->tags[i];
		n++;
	}
	return n;
}

void patch_free(struct patch *p)
{
	if (!p)
		return;
	free(p->subject);
	free(p->subject_prefix);
	free(p->author_name);
	free(p->author_email);
	free(p->sender_email);
	free(p->date);
	free(p->message_id);
	free(p->in_reply_to);
	free(p->upstream);
	free(p->message);
	free(p->diff);
	free(p->filename);
	for (size_t i = 0; i < p->ntags; i++) {
		free(p->tags[i].kind);
		free(p->tags[i].value);
		free(p->tags[i].extra);
	}
	free(p->tags);
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		free(p->files[i].old_path);
	}
	free(p->files);
	free(p);
}

/* ---- addresses ---- */

/*
 * One person of a header or trailer, by the one address parser
 * (mail/address.h): 0 with *name and *addr (malloc'd, either NULL), or
 * negative when s is not one mailbox. flags: ADDRESS_TRAILING for a
 * trailer, where text after it ("# note") is ignored.
 */
int patch_person(const char *s, size_t n, unsigned flags, char **name,
		  char **addr)
{
	struct mailboxes l = {0};
	int ret = address_parse(&l, s, n, ADDRESS_ONE | flags, NULL);

	*name = *addr = NULL;
	if (ret == 0 && l.n) {
		*name = l.v[0].name;
		*addr = l.v[0].addr;
		l.v[0].name = l.v[0].addr = NULL;
	}
	mailboxes_release(&l);
	return ret;
}

/* ---- headers ---- */

static int is_header_line(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] > ' ' && s[i] < 127 && s[i] != ':')
		i++;
	return i > 0 && i < n && s[i] == ':';
}

static int hdr_index(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(mail_headers) / sizeof(mail_headers[0]);
	     i++)
		if (strlen(mail_headers[i].name) == n &&
		    !strncasecmp(mail_headers[i].name, s, n))
			return (int)mail_headers[i].h;
	return -1;
}

/*
 * Do mail headers start at s? The lines up to the first blank one must be
 * header lines (or their continuations), and one of them a header intake
 * knows: "net: fix foo" opening a quilt description is no mail.
 */
static int is_mail_start(const char *s, const char *end)
{
	int first = 1;

	while (s < end) {
		const char *e = line_end(s, end);
		size_t n = line_len_nocr(s, (size_t)(e - s));

		if (!n)
			break;
		if (!first && (s[0] == ' ' || s[0] == '\t')) {
			s = e < end ? e + 1 : end;
			continue;
		}
		if (!is_header_line(s, n))
			break;
		int h = hdr_index(s, (size_t)((const char *)memchr(s, ':', n) -
					      s));
		if (h >= 0 && h < H_AUTOSUB)
			return 1;
		first = 0;
		s = e < end ? e + 1 : end;
	}
	return 0;
}

static int has_8bit(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] >= 0x80)
			return 1;
	return 0;
}

/*
 * Reads header lines from *pos (folded lines unfolded, each known value into
 * m->hdr) up to a blank line, which is consumed. Raw 8-bit bytes must be
 * UTF-8. With in_body, only From:/Subject:/Date: count (git am's in-body
 * headers) and the function stops at any other line.
 */
static int read_headers(struct mail *m, const char **pos, const char *end,
			size_t *line, int in_body)
{
	const char *s = *pos;

	while (s < end) {
		const char *e = line_end(s, end), *colon;
		size_t n = line_len_nocr(s, (size_t)(e - s));
		size_t hline = *line;
		int h;

		if (!n) {
			s = e < end ? e + 1 : end;
			(*line)++;
			break;
		}
		if (!is_header_line(s, n))
			break;
		colon = memchr(s, ':', n);
		const char *hname = s;
		int hnlen = (int)(colon - s);
		h = hdr_index(s, (size_t)hnlen);
		if (in_body && h != H_FROM && h != H_SUBJECT && h != H_DATE)
			break;
		/* the value with its continuation lines */
		const char *vstart = colon + 1, *vend = e;
		s = e < end ? e + 1 : end;
		(*line)++;
		while (s < end && (*s == ' ' || *s == '\t')) {
			e = line_end(s, end);
			vend = e;
			s = e < end ? e + 1 : end;
			(*line)++;
		}
		if (has_8bit(vstart, (size_t)(vend - vstart)) &&
		    !utf8_valid(vstart, (size_t)(vend - vstart)))
			return err_set(ERR_INVALID,
				       "%s:%zu: header %.*s is not valid UTF-8 "
				       "(raw 8-bit bytes)",
				       m->name, hline, hnlen, hname);
		if (h < 0)
			continue;
		/* unfold: each line break and the white space after it -> one
		 * space */
		struct strbuf *v = &m->hdr[h];
		strbuf_reset(v);
		for (const char *q = patch_skip_ws(vstart, vend); q < vend;) {
			if (*q == '\r' || *q == '\n') {
				while (q < vend && isspace((unsigned char)*q))
					q++;
				strbuf_addch(v, ' ');
				continue;
			}
			strbuf_addch(v, *q++);
		}
		strbuf_rtrim(v);
		m->has[h] = 1;
		m->hdr_line[h] = hline;
	}
	*pos = s;
	return 0;
}

/* ---- subject ---- */

/* n/m of "[PATCH 6.1 2/3]": a "digits/digits" word. */
static void parse_part(struct patch *p, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		long a = 0, b = 0;
		size_t j = i;

		if (!isdigit((unsigned char)s[i]) ||
		    (i &&
		     (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.')))
			continue;
		while (j < n && isdigit((unsigned char)s[j]) && a < 100000)
			a = a * 10 + (s[j++] - '0');
		if (j >= n || s[j] != '/' || j + 1 >= n ||
		    !isdigit((unsigned char)s[j + 1]))
			continue;
		j++;
		while (j < n && isdigit((unsigned char)s[j]) && b < 100000)
			b = b * 10 + (s[j++] - '0');
		if (j < n && (isalnum((unsigned char)s[j]) || s[j] == '.'))
			continue;
		p->series_part = (int)a;
		p->series_total = (int)b;
		return;
	}
}

static int contains_ci(const char *s, size_t n, const char *needle)
{
	size_t k = strlen(needle);

	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, needle, k))
			return 1;
	return 0;
}

/*
 * Sets p->subject from a decoded Subject: value; with strip, "Re:" and the
 * leading "[...]" groups go (the one naming PATCH becomes subject_prefix).
 */
static void set_subject(struct patch *p, const char *s, size_t n, int strip)
{
	struct strbuf cl = STRBUF_INIT;
	const char *end;
	int prefix_is_patch = 0;

	/* one line, no control characters: decoded CR/LF/ESC go here */
	mime_clean_line(&cl, s, n);
	s = cl.buf ? cl.buf : "";
	n = cl.len;
	patch_trim(&s, &n);
	end = s + n;
	while (strip) {
		s = patch_skip_ws(s, end);
		if (end - s >= 3 && !strncasecmp(s, "re:", 3)) {
			s += 3;
			p->reply = 1;
		} else if (end - s >= 4 && !strncasecmp(s, "fwd:", 4)) {
			s += 4;
		} else if (s < end && *s == '[') {
			const char *rb = memchr(s, ']', (size_t)(end - s));
			const char *c = s + 1;
			size_t cn;
			int is_patch;

			if (!rb)
				break;
			cn = (size_t)(rb - c);
			patch_trim(&c, &cn);
			is_patch = contains_ci(c, cn, "patch") ||
				   contains_ci(c, cn, "rfc");
			if (!p->subject_prefix ||
			    (is_patch && !prefix_is_patch)) {
				free(p->subject_prefix);
				p->subject_prefix = xstrndup(c, cn);
				prefix_is_patch = is_patch;
				p->series_part = p->series_total = 0;
				parse_part(p, c, cn);
			}
			s = rb + 1;
		} else {
			break;
		}
	}
	s = patch_skip_ws(s, end);
	free(p->subject);
	p->subject = xstrndup(s, (size_t)(end - s));
	strbuf_release(&cl);
}


/* ---- message and body ---- */

static int is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isspace((unsigned char)s[i]))
			return 0;
	return 1;
}

static int is_separator(const char *s, size_t n)
{
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	return n == 3 && !memcmp(s, "---", 3);
}

/* The line after the one ending at e, and its length without '\r'. */
static const char *peek_next(const char *e, const char *end, size_t *nn)
{
	const char *nx = e < end ? e + 1 : NULL;

	if (!nx || nx >= end)
		return NULL;
	*nn = line_len_nocr(nx, (size_t)(line_end(nx, end) - nx));
	return nx;
}

/*
 * Where the message ends: at a "---" line (the diffstat follows), or at the
 * first line of the diff. *diff_from is where to look for the diff.
 */
static const char *message_end(const char *s, const char *end, size_t line,
			       const char **diff_from, size_t *diff_line)
{
	while (s < end) {
		const char *e = line_end(s, end), *nx;
		size_t n = line_len_nocr(s, (size_t)(e - s)), nn = 0;

		if (n >= 3 && s[0] == '-' && is_separator(s, n)) {
			*diff_from = e < end ? e + 1 : end;
			*diff_line = line + 1;
			return s;
		}
		if (n >= 4 && (s[0] == 'd' || s[0] == 'I' || s[0] == '-')) {
			nx = s[0] == '-' ? peek_next(e, end, &nn) : NULL;
			if (diff_is_start(s, n, nx, nn) ||
			    has_prefix(s, n, "Index: ") ||
			    has_prefix(s, n, "diff -")) {
				*diff_from = s;
				*diff_line = line;
				return s;
			}
		}
		s = e < end ? e + 1 : end;
		line++;
	}
	*diff_from = end;
	*diff_line = line;
	return end;
}

/*
 * Builds p->message from the message text s[0..end) (valid UTF-8), reading
 * trailers on the way. With subject_from_text the first paragraph is the
 * subject (quilt and `git show` text), else p->subject is.
 */
static int build_message(struct mail *m, const char *s, const char *end,
			 size_t line, int subject_from_text)
{
	struct strbuf *msg = &m->msg;
	size_t body_start, keep;
	int ret;

	strbuf_reset(msg);
	if (subject_from_text) {
		struct strbuf subj = STRBUF_INIT;
		while (s < end) {
			const char *e = line_end(s, end);
			size_t n = (size_t)(e - s);
			const char *t = s;
			if (is_blank(s, n)) {
				if (subj.len)
					break;
			} else {
				patch_trim(&t, &n);
				if (subj.len)
					strbuf_addch(&subj, ' ');
				strbuf_add(&subj, t, n);
			}
			s = e < end ? e + 1 : end;
			line++;
		}
		set_subject(m->p, subj.buf, subj.len, 0);
		strbuf_release(&subj);
	}
	strbuf_addstr(msg, m->p->subject);
	strbuf_addch(msg, '\n');
	body_start = keep = msg->len;
	strbuf_addch(msg, '\n');
	/* leading blank lines */
	while (s < end) {
		const char *e = line_end(s, end);
		if (!is_blank(s, (size_t)(e - s)))
			break;
		s = e < end ? e + 1 : end;
		line++;
	}
	for (; s < end; line++) {
		const char *e = line_end(s, end);
		size_t n = line_len_nocr(s, (size_t)(e - s));

		if ((ret = trailer_scan(m, s, n, line)) < 0)
			return ret;
		strbuf_add(msg, s, n);
		strbuf_addch(msg, '\n');
		if (!is_blank(s, n))
			keep = msg->len;
		s = e < end ? e + 1 : end;
	}
	strbuf_setlen(msg, keep == body_start ? body_start : keep);
	if (msg->len == 1) /* no subject, no body: a bare diff */
		strbuf_reset(msg);
	free(m->p->message);
	struct strbuf clean = STRBUF_INIT;
	mime_clean_text(&clean, msg->buf, msg->len);
	m->p->message = strbuf_detach(&clean, NULL);
	return 0;
}

/* The charset= parameter of a Content-Type value, into cs (or ""). */
static void content_charset(const struct strbuf *ct, char *cs, size_t size)
{
	const char *q = ct->len ? strcasestr(ct->buf, "charset=") : NULL;
	size_t n = 0;

	cs[0] = '\0';
	if (!q)
		return;
	q += 8;
	if (*q == '"')
		q++;
	while (q[n] && q[n] != '"' && q[n] != ';' &&
	       !isspace((unsigned char)q[n]))
		n++;
	if (n < size) {
		memcpy(cs, q, n);
		cs[n] = '\0';
	}
}

/*
 * The message text s[0..end) and the diff after it (from diff_from): builds
 * the message (converted to UTF-8 when it is not) and parses the diff.
 */
static int message_and_diff(struct mail *m, const char *s, const char *msg_end,
			    size_t line, const char *diff_from, const char *end,
			    size_t diff_line, unsigned flags, size_t first_line,
			    int subject_from_text)
{
	struct strbuf conv = STRBUF_INIT;
	int ret;

	if (!m->p->subject)
		m->p->subject = xstrdup("");
	if (!utf8_valid(s, (size_t)(msg_end - s))) {
		char cs[64];
		content_charset(&m->hdr[H_CTYPE], cs, sizeof(cs));
		if (!cs[0] || !strcasecmp(cs, "utf-8") ||
		    mime_to_utf8(&conv, cs, s, (size_t)(msg_end - s)) < 0) {
			strbuf_reset(&conv);
			mime_to_utf8(&conv, "iso-8859-1", s,
				     (size_t)(msg_end - s));
		}
		s = conv.buf;
		msg_end = conv.buf + conv.len;
	}
	ret = build_message(m, s, msg_end, line, subject_from_text);
	strbuf_release(&conv);
	if (ret < 0)
		return ret;

	/* the diff: skip the diffstat and notes after "---" */
	s = diff_from;
	while (s < end) {
		const char *e = line_end(s, end), *nx = NULL;
		size_t n = line_len_nocr(s, (size_t)(e - s)), nn = 0;
		if (n >= 4 && s[0] == '-')
			nx = peek_next(e, end, &nn);
		if (n >= 4 && diff_is_start(s, n, nx, nn))
			return diff_parse(m->p, s, (size_t)(end - s), m->name,
					  diff_line);
		s = e < end ? e + 1 : end;
		diff_line++;
	}
	if ((flags & PATCH_SKIP_COVER) && m->p->series_part == 0 &&
	    m->p->series_total > 0)
		return 1;
	if ((flags & PATCH_SKIP_REPLY) && m->p->reply)
		return 1;
	if (flags & PATCH_ANY_MESSAGE)
		return 0;
	return err_set(ERR_INVALID, "%s:%zu: no diff in the message '%.*s'",
		       m->name, first_line,
		       utf8_cut(m->p->subject, strlen(m->p->subject), 60),
		       m->p->subject);
}

/* `git show` text: an indented message is unindented into out. */
static const char *unindent(const char *s, const char *end, struct strbuf *out)
{
	while (s < end) {
		const char *e = line_end(s, end);
		size_t n = line_len_nocr(s, (size_t)(e - s));
		if (n >= 4 && !memcmp(s, "    ", 4))
			strbuf_add(out, s + 4, n - 4);
		else if (!is_blank(s, n))
			break;
		strbuf_addch(out, '\n');
		s = e < end ? e + 1 : end;
	}
	return s;
}

static int is_commit_line(const char *s, size_t n)
{
	return n >= 47 && !memcmp(s, "commit ", 7) && patch_is_hex(s + 7, 40) &&
	       (n == 47 || s[47] == ' ');
}

/*
 * An automatic reply (RFC 3834: Auto-Submitted other than "no"; the older
 * Precedence: bulk, junk or list; X-Autoreply): an out-of-office answer,
 * not a person's.
 */
static int auto_reply(const struct mail *m)
{
	const char *v[H_MAX] = { 0 };
	size_t k = 0;

	/* a folded value starts with the blank its line break became */
	for (int h = H_AUTOSUB; h <= H_XAUTOREPLY; h++)
		if (m->has[h])
			v[h] = patch_skip_ws(m->hdr[h].buf,
					     m->hdr[h].buf + m->hdr[h].len);
	while (v[H_AUTOSUB] && v[H_AUTOSUB][k] &&
	       !strchr("; \t(", v[H_AUTOSUB][k]))
		k++;
	if (k && !(k == 2 && !strncasecmp(v[H_AUTOSUB], "no", 2)))
		return 1;
	if (v[H_PRECEDENCE] && (!strcasecmp(v[H_PRECEDENCE], "bulk") ||
				!strcasecmp(v[H_PRECEDENCE], "junk") ||
				!strcasecmp(v[H_PRECEDENCE], "list")))
		return 1;
	return v[H_XAUTOREPLY] && strcasecmp(v[H_XAUTOREPLY], "no");
}

/* Author, dates and ids from the headers, once the message is known. */
static int finish_headers(struct mail *m)
{
	struct patch *p = m->p;
	struct strbuf *v;

	if (m->has[H_FROM]) {
		char *name, *addr;
		struct strbuf dec = STRBUF_INIT;
		v = &m->hdr[H_FROM];
		if (patch_person(v->buf, v->len, 0, &name, &addr) < 0)
			return err_prefix(ERR_INVALID, "%s:%zu: header From",
					  m->name, m->hdr_line[H_FROM]);
		if (name && rfc2047_decode(&dec, name, strlen(name)) < 0) {
			free(name);
			free(addr);
			strbuf_release(&dec);
			return err_set(ERR_INVALID,
				       "%s:%zu: header From is not valid UTF-8 "
				       "(encoded word)",
				       m->name, m->hdr_line[H_FROM]);
		}
		strbuf_trim(&dec);
		if (dec.len)
			p->author_name = clean_dup(dec.buf, dec.len);
		if (addr && *addr)
			p->author_email = clean_dup(addr, strlen(addr));
		if (addr && *addr && !p->sender_email)
			p->sender_email = clean_dup(addr, strlen(addr));
		free(addr);
		free(name);
		strbuf_release(&dec);
	}
	if (m->has[H_DATE] && m->hdr[H_DATE].len)
		p->date = clean_dup(m->hdr[H_DATE].buf, m->hdr[H_DATE].len);
	p->auto_reply = auto_reply(m);
	for (int h = H_MSGID; h <= H_IRT; h++) {
		const char *s, *lt, *gt;
		size_t n;
		if (!m->has[h])
			continue;
		s = m->hdr[h].buf;
		n = m->hdr[h].len;
		lt = memchr(s, '<', n);
		gt = lt ? memchr(lt, '>', (size_t)(s + n - lt)) : NULL;
		if (lt && gt) {
			s = lt + 1;
			n = (size_t)(gt - s);
		}
		patch_trim(&s, &n);
		if (!n)
			continue;
		if (h == H_MSGID)
			p->message_id = clean_dup(s, n);
		else
			p->in_reply_to = clean_dup(s, n);
	}
	if (p->upstream)
		patch_add_tag(p, "upstream", p->upstream, strlen(p->upstream),
			      NULL, 0);
	return 0;
}

/* Decodes the Subject: header into p->subject (RFC 2047, prefixes stripped). */
static int mail_subject(struct mail *m)
{
	struct strbuf dec = STRBUF_INIT;
	struct strbuf *v = &m->hdr[H_SUBJECT];

	if (rfc2047_decode(&dec, v->buf, v->len) < 0) {
		strbuf_release(&dec);
		return err_set(ERR_INVALID,
			       "%s:%zu: header Subject is not valid UTF-8 "
			       "(encoded word)",
			       m->name, m->hdr_line[H_SUBJECT]);
	}
	set_subject(m->p, dec.buf, dec.len, 1);
	strbuf_release(&dec);
	return 0;
}

/* A mail: headers, then a body in its transfer encoding. */
static int parse_mail(struct mail *m, const char *s, const char *end,
		      size_t line, unsigned flags, size_t first_line)
{
	struct strbuf body = STRBUF_INIT;
	const char *cte, *msg_end, *diff_from;
	size_t diff_line;
	int ret;

	if ((ret = read_headers(m, &s, end, &line, 0)) < 0)
		goto out;
	cte = m->has[H_CTE] ? m->hdr[H_CTE].buf : "";
	if (m->has[H_CTYPE] &&
	    !strncasecmp(m->hdr[H_CTYPE].buf, "multipart/", 10)) {
		/* an attached patch: the message and the diff, decoded */
		if ((ret = multipart_flatten(m->hdr[H_CTYPE].buf,
					     m->hdr_line[H_CTYPE], s, end,
					     m->name, line, &body)) < 0)
			goto out;
		s = body.buf ? body.buf : "";
		end = s + body.len;
	} else if (!strcasecmp(cte, "quoted-printable") ||
		   !strcasecmp(cte, "base64")) {
		if (tolower((unsigned char)cte[0]) == 'q')
			qp_decode(&body, s, (size_t)(end - s));
		else
			base64_decode(&body, s, (size_t)(end - s));
		if (memchr(body.buf, '\0', body.len)) {
			ret = err_set(ERR_INVALID,
				      "%s:%zu: NUL byte in the %s body",
				      m->name, line, cte);
			goto out;
		}
		s = body.buf;
		end = body.buf + body.len;
	}
	/* in-body From:/Subject:/Date: (git am) after any blank lines */
	const char *b = s;
	size_t bline = line;
	while (b < end) {
		const char *e = line_end(b, end);
		if (!is_blank(b, (size_t)(e - b)))
			break;
		b = e < end ? e + 1 : end;
		bline++;
	}
	/* who sent the mail, whatever author its in-body From: names */
	if (m->has[H_FROM] && !m->p->sender_email) {
		char *name = NULL, *addr = NULL;
		if (patch_person(m->hdr[H_FROM].buf, m->hdr[H_FROM].len, 0,
				 &name, &addr) == 0 &&
		    addr && *addr)
			m->p->sender_email = clean_dup(addr, strlen(addr));
		else
			err_clear();
		free(name);
		free(addr);
	}
	if (b < end && (has_prefix(b, (size_t)(end - b), "From:") ||
			has_prefix(b, (size_t)(end - b), "Subject:") ||
			has_prefix(b, (size_t)(end - b), "Date:"))) {
		s = b;
		line = bline;
		if ((ret = read_headers(m, &s, end, &line, 1)) < 0)
			goto out;
	}
	if (m->has[H_SUBJECT] && (ret = mail_subject(m)) < 0)
		goto out;
	msg_end = message_end(s, end, line, &diff_from, &diff_line);
	ret = message_and_diff(m, s, msg_end, line, diff_from, end, diff_line,
			       flags, first_line, 0);
out:
	strbuf_release(&body);
	return ret;
}

/* `git show` text: "commit <sha>", Author:/Date: lines, message, diff. */
static int parse_gitshow(struct mail *m, const char *s, const char *end,
			 size_t line, unsigned flags, size_t first_line)
{
	struct strbuf un = STRBUF_INIT;
	const char *e = line_end(s, end), *msg_end, *diff_from, *b;
	size_t diff_line;
	int ret;

	m->p->upstream = patch_lower_dup(s + 7, 40);
	s = e < end ? e + 1 : end;
	line++;
	if ((ret = read_headers(m, &s, end, &line, 0)) < 0)
		goto out;
	for (b = s; b < end;) {
		e = line_end(b, end);
		if (!is_blank(b, (size_t)(e - b)))
			break;
		b = e < end ? e + 1 : end;
	}
	if (end - b >= 4 && !memcmp(b, "    ", 4)) {
		diff_from = unindent(s, end, &un);
		diff_line = line;
		for (size_t i = 0; i < un.len; i++)
			diff_line += un.buf[i] == '\n';
		ret = message_and_diff(m, un.buf, un.buf + un.len, line,
				       diff_from, end, diff_line, flags,
				       first_line, 1);
	} else {
		msg_end = message_end(s, end, line, &diff_from, &diff_line);
		ret = message_and_diff(m, s, msg_end, line, diff_from, end,
				       diff_line, flags, first_line, 1);
	}
out:
	strbuf_release(&un);
	return ret;
}

static int parse_plain(struct mail *m, const char *s, const char *end,
		       size_t line, unsigned flags, size_t first_line)
{
	const char *diff_from, *msg_end;
	size_t diff_line;

	msg_end = message_end(s, end, line, &diff_from, &diff_line);
	return message_and_diff(m, s, msg_end, line, diff_from, end, diff_line,
				flags, first_line, 1);
}

/* ">From " -> "From " (mboxrd) and CRLF -> LF, into out when needed. */
static int needs_cleanup(const char *buf, size_t len, int mbox)
{
	const char *nl = memchr(buf, '\n', len);

	if (nl && nl > buf && nl[-1] == '\r')
		return 1;
	if (!mbox)
		return 0;
	for (const char *q = buf;
	     (q = memchr(q, '\n', (size_t)(buf + len - q)));) {
		q++;
		if (q < buf + len && *q == '>') {
			const char *r = q;
			while (r < buf + len && *r == '>')
				r++;
			if (has_prefix(r, (size_t)(buf + len - r), "From "))
				return 1;
		}
	}
	return 0;
}

static void cleanup(struct strbuf *out, const char *buf, size_t len, int mbox)
{
	const char *s = buf, *end = buf + len;
	int crlf = needs_cleanup(buf, len, 0);

	strbuf_grow(out, len);
	while (s < end) {
		const char *e = line_end(s, end);
		size_t n = (size_t)(e - s);
		if (crlf)
			n = line_len_nocr(s, n);
		if (mbox && s != buf && n > 5 && s[0] == '>') {
			const char *r = s;
			while (r < s + n && *r == '>')
				r++;
			if (has_prefix(r, (size_t)(s + n - r), "From "))
				s++, n--;
		}
		strbuf_add(out, s, n);
		if (e < end)
			strbuf_addch(out, '\n');
		s = e < end ? e + 1 : end;
	}
}

/*
 * Cuts *text to PATCH_TEXT_MAX bytes with the mark, at a UTF-8 character's
 * edge; returns its length before, or 0 when it was short enough.
 */
static size_t cut_text(char **text)
{
	size_t len = *text ? strlen(*text) : 0, keep;
	char *s = *text;

	if (len <= PATCH_TEXT_MAX)
		return 0;
	keep = PATCH_TEXT_MAX - (sizeof(PATCH_CUT_MARK) - 1);
	while (keep && ((unsigned char)s[keep] & 0xc0) == 0x80)
		keep--;
	memcpy(s + keep, PATCH_CUT_MARK, sizeof(PATCH_CUT_MARK));
	return len;
}

/* The limits on stored text: subject (and the message's first line), name. */
static void cut_long_text(struct patch *p)
{
	if ((p->subject_cut = cut_text(&p->subject)) && p->message) {
		/* the message's subject line goes the same way */
		char *nl = strchr(p->message, '\n'), *first;
		size_t n = nl ? (size_t)(nl - p->message) : strlen(p->message);
		if (n > PATCH_TEXT_MAX) {
			struct strbuf sb = STRBUF_INIT;
			first = xstrndup(p->message, n);
			cut_text(&first);
			strbuf_addstr(&sb, first);
			strbuf_addstr(&sb, p->message + n);
			free(first);
			free(p->message);
			p->message = strbuf_detach(&sb, NULL);
		}
	}
	p->name_cut = cut_text(&p->author_name);
}

int patch_parse_at(struct patch **out, const char *buf, size_t len,
		   const char *name, size_t max_bytes, size_t first_line,
		   unsigned flags)
{
	struct mail m = {0};
	struct strbuf clean = STRBUF_INIT;
	const char *s, *end, *nul, *e;
	size_t line = first_line ? first_line : 1, n;
	int ret, mbox;

	*out = NULL;
	if (!name)
		name = "(input)";
	first_line = line;
	if (max_bytes && len > max_bytes)
		return err_set(ERR_TOOBIG,
			       "%s: %zu bytes, over the limit of %zu bytes",
			       name, len, max_bytes);
	if ((nul = memchr(buf, '\0', len))) {
		size_t l = first_line;
		for (const char *q = buf;
		     (q = memchr(q, '\n', (size_t)(nul - q))); q++)
			l++;
		return err_set(ERR_INVALID, "%s:%zu: NUL byte in the input",
			       name, l);
	}
	m.name = name;
	m.p = xcalloc(1, sizeof(*m.p));
	for (int i = 0; i < H_MAX; i++)
		strbuf_init(&m.hdr[i], 0);
	strbuf_init(&m.msg, 0);

	s = buf;
	end = buf + len;
	e = line_end(s, end);
	n = line_len_nocr(s, (size_t)(e - s));
	mbox = has_prefix(s, n, "From ");
	if (needs_cleanup(buf, len, mbox)) {
		cleanup(&clean, buf, len, mbox);
		s = clean.buf;
		end = clean.buf + clean.len;
		e = line_end(s, end);
		n = (size_t)(e - s);
	}
	if (mbox) {
		s = e < end ? e + 1 : end;
		line++;
		e = line_end(s, end);
		n = (size_t)(e - s);
	}
	if (is_commit_line(s, n))
		ret = parse_gitshow(&m, s, end, line, flags, first_line);
	else if (is_mail_start(s, end))
		ret = parse_mail(&m, s, end, line, flags, first_line);
	else
		ret = parse_plain(&m, s, end, line, flags, first_line);
	if (ret == 0)
		ret = finish_headers(&m);
	if (ret == 0)
		cut_long_text(m.p);
	if (ret < 0 || ret == 1) {
		patch_free(m.p);
		m.p = NULL;
		ret = ret < 0 ? ret : 0;
	}
	*out = m.p;
	for (int i = 0; i < H_MAX; i++)
		strbuf_release(&m.hdr[i]);
	strbuf_release(&m.msg);
	strbuf_release(&clean);
	return ret;
}

int patch_parse(struct patch **out, const char *buf, size_t len,
		const char *name, size_t max_bytes)
{
	return patch_parse_at(out, buf, len, name, max_bytes, 1, 0);
}

void patch_safe_message(struct strbuf *out, const char *msg)
{
	static const char *const ends_message[] = {
		"---", "diff ", "Index: ", "+++ ", "@@ ", "From ", ">From ",
	};
	struct strbuf body = STRBUF_INIT;
	const char *nl = strchr(msg, '\n');
	size_t sl = nl ? (size_t)(nl - msg) : strlen(msg), start = out->len;

	mime_clean_line(out, msg, sl);
	/* the subject line's own trailing blanks, not what out held before */
	while (out->len > start && isspace((unsigned char)out->buf[out->len - 1]))
		strbuf_setlen(out, out->len - 1);
	strbuf_addch(out, '\n');
	if (!nl)
		return;
	mime_clean_text(&body, nl + 1, strlen(nl + 1));
	for (const char *s = body.buf, *end = body.buf + body.len; s < end;) {
		const char *e = line_end(s, end);
		size_t n = (size_t)(e - s);

		for (size_t i = 0;
		     i < sizeof(ends_message) / sizeof(ends_message[0]); i++)
			if (has_prefix(s, n, ends_message[i])) {
				strbuf_addch(out, ' ');
				break;
			}
		strbuf_add(out, s, n);
		strbuf_addch(out, '\n');
		s = e < end ? e + 1 : end;
	}
	strbuf_release(&body);
}
