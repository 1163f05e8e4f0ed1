/* trailer.c: a patch's trailers (Fixes:, Cc: stable, Signed-off-by:, Link:, "commit X upstream") read into its tags. */
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

struct trailer;
typedef int (*trailer_fn)(struct mail *m, const struct trailer *t,
			  const char *v, size_t n, size_t line);

struct trailer {
	const char *key;
	const char *kind;
	trailer_fn fn;
};

static void strip_parens_quotes(const char **s, size_t *n)
{
	patch_trim(s, n);
	if (*n >= 2 && (*s)[0] == '(' && (*s)[*n - 1] == ')')
		(*s)++, *n -= 2;
	patch_trim(s, n);
	if (*n >= 2 && (*s)[0] == '"' && (*s)[*n - 1] == '"')
		(*s)++, *n -= 2;
}

/* Fixes: / Stable-dep-of: <sha> ("subject") */
static int tr_sha(struct mail *m, const struct trailer *t, const char *v,
		  size_t n, size_t line)
{
	const char *s = patch_skip_ws(v, v + n), *end = v + n, *tok;
	const char *x;
	size_t tn, xn;

	if (end - s > 7 && !strncasecmp(s, "commit ", 7))
		s = patch_skip_ws(s + 7, end);
	tok = s;
	while (s < end && !isspace((unsigned char)*s) && *s != '(')
		s++;
	tn = (size_t)(s - tok);
	if (tn < 8 || tn > 40 || !patch_is_hex(tok, tn))
		return err_set(ERR_INVALID,
			       "%s:%zu: %s: '%.*s' is not a hex SHA", m->name,
			       line, t->key, utf8_cut(tok, tn, 60), tok);
	x = s;
	xn = (size_t)(end - s);
	strip_parens_quotes(&x, &xn);
	char *sha = patch_lower_dup(tok, tn);
	patch_add_tag(m->p, t->kind, sha, tn, xn ? x : NULL, xn);
	free(sha);
	return 0;
}

static int looks_like_version(const char *s, size_t n)
{
	if (n && (s[0] == 'v' || s[0] == 'V'))
		s++, n--;
	return n && isdigit((unsigned char)s[0]);
}

static int has_tag(const struct patch *p, const char *kind, const char *value,
		   const char *extra, size_t elen)
{
	for (size_t i = 0; i < p->ntags; i++) {
		const struct patch_tag *t = &p->tags[i];
		if (!strcmp(t->kind, kind) && !strcmp(t->value, value) &&
		    (extra ? t->extra && strlen(t->extra) == elen &&
				     !memcmp(t->extra, extra, elen)
			   : !t->extra))
			return 1;
	}
	return 0;
}

/* The "# annotation" of a stable Cc: a version, or "6.1.x: sha: subject". */
static void stable_note(struct mail *m, const char *addr, const char *a,
			size_t an)
{
	const char *colon = an ? memchr(a, ':', an) : NULL;
	const char *ver = a;
	size_t vn = an;

	if (colon) {
		const char *r = colon + 1, *end = a + an, *tok;
		size_t tn;

		vn = (size_t)(colon - a);
		patch_trim(&ver, &vn);
		r = patch_skip_ws(r, end);
		tok = r;
		while (r < end && !isspace((unsigned char)*r) && *r != ':')
			r++;
		tn = (size_t)(r - tok);
		if (tn >= 7 && tn <= 40 && patch_is_hex(tok, tn)) {
			const char *x = r;
			size_t xn;
			char *sha = patch_lower_dup(tok, tn);
			if (x < end && *x == ':')
				x++;
			xn = (size_t)(end - x);
			strip_parens_quotes(&x, &xn);
			patch_add_tag(m->p, "prereq", sha, tn, xn ? x : NULL,
				      xn);
			free(sha);
		} else if (!looks_like_version(ver, vn)) {
			ver = a;
			vn = an;
		}
	}
	/* the same annotation twice says nothing new (checked among the
	 * first tags only, so that a hostile mail stays linear) */
	if (m->p->ntags > 256 ||
	    !has_tag(m->p, "stable", addr, vn ? ver : NULL, vn))
		patch_add_tag(m->p, "stable", addr, strlen(addr),
			      vn ? ver : NULL, vn);
}

/* One address of a Cc: line with the line's annotation a[0..an). */
static void cc_one(struct mail *m, const struct mailbox *mb, const char *a,
		   size_t an)
{
	const char *addr = mb->addr;

	if (address_eq(addr, "stable@vger.kernel.org") ||
	    address_eq(addr, "stable@kernel.org")) {
		stable_note(m, addr, a, an);
	} else if (addr && !strncasecmp(addr, "stable+noautosel@", 17)) {
		patch_add_tag(m->p, "noautosel", addr, strlen(addr),
			      an ? a : NULL, an);
	} else if (addr) {
		patch_add_tag(m->p, "cc", addr, strlen(addr), mb->name,
			      mb->name ? strlen(mb->name) : 0);
	} else if (mb->name) {
		patch_add_tag(m->p, "cc", mb->name, strlen(mb->name), NULL, 0);
	}
}

/* Cc: addr[, addr...] [# note | [note]] */
static int tr_cc(struct mail *m, const struct trailer *t, const char *v,
		 size_t n, size_t line)
{
	size_t ln = address_note(v, n), an = 0;
	const char *a = NULL;
	struct mailboxes l = {0};

	if (ln < n) {
		a = v + ln + 1;
		an = n - ln - 1;
		if (v[ln] == '[') {
			const char *rb = memchr(a, ']', an);
			if (!rb)
				a = NULL, an = 0, ln = n;
			else
				an = (size_t)(rb - a);
		}
	}
	if (a)
		patch_trim(&a, &an);
	if (address_parse(&l, v, ln, 0, NULL) < 0) {
		/* not addresses: kept as the text it is */
		const char *s = v;
		size_t sn = ln;
		patch_trim(&s, &sn);
		if (sn)
			patch_add_tag(m->p, "cc", s, sn, NULL, 0);
		return 0;
	}
	for (size_t i = 0; i < l.n; i++)
		cc_one(m, &l.v[i], a, an);
	mailboxes_release(&l);
	return 0;
}

/* Signed-off-by: Name <addr> and friends. */
static int tr_person(struct mail *m, const struct trailer *t, const char *v,
		     size_t n, size_t line)
{
	struct strbuf clean = STRBUF_INIT;
	char *name, *addr;

	/* control characters out first: the parser refuses them */
	if (mime_has_control(v, n)) {
		mime_clean_line(&clean, v, n);
		v = clean.buf;
		n = clean.len;
	}
	if (patch_person(v, n, ADDRESS_TRAILING, &name, &addr) < 0) {
		/* not one mailbox: kept as the text it is */
		patch_trim(&v, &n);
		if (n)
			patch_add_tag(m->p, t->kind, v, n, NULL, 0);
		strbuf_release(&clean);
		return 0;
	}
	strbuf_release(&clean);
	if (addr)
		patch_add_tag(m->p, t->kind, addr, strlen(addr), name,
			      name ? strlen(name) : 0);
	else if (name)
		patch_add_tag(m->p, t->kind, name, strlen(name), NULL, 0);
	free(name);
	free(addr);
	return 0;
}

static int tr_link(struct mail *m, const struct trailer *t, const char *v,
		   size_t n, size_t line)
{
	const char *s = patch_skip_ws(v, v + n), *e = s;

	while (e < v + n && !isspace((unsigned char)*e))
		e++;
	if (e - s >= 2 && *s == '<' && e[-1] == '>')
		s++, e--;
	if (e > s)
		patch_add_tag(m->p, t->kind, s, (size_t)(e - s), NULL, 0);
	return 0;
}

static const struct trailer trailers[] = {
	{"Fixes", "fixes", tr_sha},
	{"Stable-dep-of", "stable_dep_of", tr_sha},
	{"Cc", "cc", tr_cc},
	{"Signed-off-by", "signed_off_by", tr_person},
	{"Reported-by", "reported_by", tr_person},
	{"Reviewed-by", "reviewed_by", tr_person},
	{"Acked-by", "acked_by", tr_person},
	{"Tested-by", "tested_by", tr_person},
	{"Link", "link", tr_link},
};

static void set_upstream(struct mail *m, const char *sha, size_t n)
{
	if (m->upstream_in_body)
		return;
	m->upstream_in_body = 1;
	free(m->p->upstream);
	m->p->upstream = patch_lower_dup(sha, n);
}

/* "commit <sha> upstream." and "[ Upstream commit <sha> ]" */
static int upstream_line(struct mail *m, const char *s, size_t n)
{
	const char *end = s + n, *tok, *q;
	size_t tn;

	if (n > 7 && !strncasecmp(s, "commit ", 7)) {
		tok = patch_skip_ws(s + 7, end);
		for (q = tok; q < end && isxdigit((unsigned char)*q); q++)
			;
		tn = (size_t)(q - tok);
		q = patch_skip_ws(q, end);
		if (tn < 12 || tn > 40 || end - q < 8 ||
		    strncasecmp(q, "upstream", 8))
			return 0;
		q = patch_skip_ws(q + 8, end);
		if (q < end && *q == '.')
			q = patch_skip_ws(q + 1, end);
		if (q != end)
			return 0;
		set_upstream(m, tok, tn);
		return 1;
	}
	if (n > 1 && s[0] == '[') {
		q = patch_skip_ws(s + 1, end);
		if (end - q < 16 || strncasecmp(q, "upstream commit", 15) ||
		    !isspace((unsigned char)q[15]))
			return 0;
		tok = patch_skip_ws(q + 15, end);
		for (q = tok; q < end && isxdigit((unsigned char)*q); q++)
			;
		tn = (size_t)(q - tok);
		q = patch_skip_ws(q, end);
		if (tn < 12 || tn > 40 || q >= end || *q != ']')
			return 0;
		set_upstream(m, tok, tn);
		return 1;
	}
	return 0;
}

int trailer_scan(struct mail *m, const char *s, size_t n, size_t line)
{
	const char *colon;

	if (n && (s[0] == 'c' || s[0] == 'C' || s[0] == '[') &&
	    upstream_line(m, s, n))
		return 0;
	colon = n < 64 ? memchr(s, ':', n) : memchr(s, ':', 64);
	if (!colon)
		return 0;
	for (size_t i = 0; i < sizeof(trailers) / sizeof(trailers[0]); i++) {
		const struct trailer *t = &trailers[i];
		size_t k = strlen(t->key);
		if ((size_t)(colon - s) == k && !strncasecmp(s, t->key, k))
			return t->fn(m, t, colon + 1,
				     (size_t)(s + n - colon - 1), line);
	}
	return 0;
}
