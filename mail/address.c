/* address.c: mail addresses: the one RFC 5322 parser, checks, recipients. */
#include "address.h"
#include "err.h"
#include "mailtext.h"
#include "strbuf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int is_atext(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-/=?^_`{|}~", c));
}

const char *addr_problem(const char *a)
{
	const char *at, *p;
	size_t n;

	if (!a || !*a)
		return "missing";
	n = strlen(a);
	if (n > 254)
		return "longer than 254 octets";
	for (p = a; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c < 0x20 || c == 0x7f)
			return "control character";
		if (c == ' ' || c == '\t')
			return "white space";
		if (c >= 0x80)
			return "not ASCII";
	}
	at = strrchr(a, '@');
	if (!at)
		return "no @";
	if (at == a)
		return "empty local part";
	if ((size_t)(at - a) > 64)
		return "local part longer than 64 octets";
	for (p = a; p < at; p++)
		if (!is_atext(*p) &&
		    !(*p == '.' && p != a && p + 1 != at && p[1] != '.'))
			return "bad character in the local part";
	p = at + 1;
	if (!*p)
		return "empty domain";
	for (const char *label = p; *label;) {
		size_t len = strcspn(label, ".");
		if (!len || len > 63)
			return "bad domain";
		for (size_t i = 0; i < len; i++) {
			char c = label[i];
			int alnum = (c >= 'a' && c <= 'z') ||
				    (c >= 'A' && c <= 'Z') ||
				    (c >= '0' && c <= '9');
			if (!alnum && !(c == '-' && i && i + 1 < len))
				return "bad domain";
		}
		label += len;
		if (*label == '.' && !label[1])
			return "bad domain";
		if (*label)
			label++;
	}
	return NULL;
}

char *addr_shown(const char *a)
{
	struct strbuf sb = STRBUF_INIT;

	for (const unsigned char *p = (const unsigned char *)(a ? a : ""); *p;
	     p++)
		if (*p < 0x20 || *p >= 0x7f || *p == '\\')
			strbuf_addf(&sb, "\\x%02x", *p);
		else
			strbuf_addch(&sb, (char)*p);
	return strbuf_detach(&sb, NULL);
}

int address_eq(const char *a, const char *b)
{
	return a && b && !strcasecmp(a, b);
}

/* ---- recipients ------------------------------------------------------ */

void mailboxes_release(struct mailboxes *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].name);
		free(l->v[i].addr);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Appends a mailbox taking both strings (either may be NULL). */
static void mailboxes_push(struct mailboxes *l, char *name, char *addr)
{
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 8;
		l->v = xrealloc(l->v, l->alloc * sizeof(*l->v));
	}
	l->v[l->n].name = name;
	l->v[l->n].addr = addr;
	l->n++;
}

const struct mailbox *mailboxes_find(const struct mailboxes *l,
				     const char *addr)
{
	for (size_t i = 0; i < l->n; i++)
		if (address_eq(l->v[i].addr, addr))
			return &l->v[i];
	return NULL;
}

void mailboxes_add_unique(struct mailboxes *l, const char *name,
			  const char *addr)
{
	char *clean;

	if (mailboxes_find(l, addr))
		return;
	clean = clean_header_text(name, NAME_MAX_OCTETS);
	if (!*clean) {
		free(clean);
		clean = NULL;
	}
	mailboxes_push(l, clean, xstrdup(addr));
}

/* ---- lexer: RFC 5322 3.2 tokens ---------------------------------------- */

enum tok_kind {
	T_ATOM, /* a run of atext (and of other octets a name may hold) */
	T_QUOTED, /* "quoted string", quotes included in the span */
	T_COMMENT, /* (comment), parentheses included */
	T_DLIT, /* [domain literal], brackets included */
	T_SPECIAL, /* one of < > @ , ; : . */
};

struct tok {
	enum tok_kind kind;
	const char *s; /* the span in the input */
	size_t n;
	int space; /* white space or a comment came before it */
	const char *cmt; /* the first comment right after it, or NULL */
	size_t cmtn;
};

struct toks {
	struct tok *v;
	size_t n, alloc;
};

static int is_wsp(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

/*
 * The end of a delimited token opened at s[i] (quoted string, comment
 * nested to any depth, domain literal), quoted-pairs skipped; 0 when it
 * is not closed.
 */
static size_t delimited_end(const char *s, size_t n, size_t i, char open,
			    char close)
{
	size_t depth = 1;

	for (i++; i < n; i++) {
		if (s[i] == '\\')
			i++;
		else if (s[i] == close && !--depth)
			return i + 1;
		else if (s[i] == open && open != close)
			depth++;
	}
	return 0;
}

static const struct {
	char open, close;
	enum tok_kind kind;
	const char *what;
} delimited[] = {
	{'"', '"', T_QUOTED, "quoted string"},
	{'(', ')', T_COMMENT, "comment"},
	{'[', ']', T_DLIT, "domain literal"},
};

/*
 * Splits s into tokens. stop_at_note: stop (no error) at a '#' or a '['
 * that starts a Cc annotation, with *note set to its offset.
 */
static int lex(struct toks *t, const char *s, size_t n, size_t *note)
{
	int space = 0, angle = 0;
	size_t i = 0;
	const char *nul = memchr(s, '\0', n);

	/* the results are C strings: a NUL would cut one short unseen */
	if (nul)
		return err_set(ERR_INVALID, "NUL byte at octet %zu",
			       (size_t)(nul - s) + 1);

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t d, end = 0;

		if (is_wsp(c)) {
			space = 1;
			i++;
			continue;
		}
		for (d = 0; d < sizeof(delimited) / sizeof(delimited[0]); d++)
			if (c == delimited[d].open)
				break;
		if (note && !angle &&
		    (c == '#' ||
		     (c == '[' && !(t->n && t->v[t->n - 1].kind == T_SPECIAL &&
				    t->v[t->n - 1].s[0] == '@')))) {
			*note = i;
			return 0;
		}
		if (t->n == t->alloc) {
			t->alloc = t->alloc ? 2 * t->alloc : 16;
			t->v = xrealloc(t->v, t->alloc * sizeof(*t->v));
		}
		struct tok *k = &t->v[t->n];
		k->s = s + i;
		k->space = space;
		if (d < sizeof(delimited) / sizeof(delimited[0])) {
			end = delimited_end(s, n, i, delimited[d].open,
					    delimited[d].close);
			if (!end)
				return err_set(ERR_INVALID,
					       "unterminated %s at octet %zu",
					       delimited[d].what, i + 1);
			k->kind = delimited[d].kind;
		} else if (c == ')') {
			return err_set(ERR_INVALID,
				       "')' without '(' at octet %zu", i + 1);
		} else if (strchr("<>@,;:.", c)) {
			end = i + 1;
			k->kind = T_SPECIAL;
			angle += c == '<' ? 1 : c == '>' ? -1 : 0;
		} else {
			for (end = i; end < n; end++) {
				unsigned char e = (unsigned char)s[end];
				if (is_wsp(e) || strchr("()<>@,;:.\"[", e) ||
				    (note && !angle && e == '#'))
					break;
			}
			/* every token takes an octet at least */
			if (end == i)
				end = i + 1;
			k->kind = T_ATOM;
		}
		k->n = end - i;
		k->cmt = NULL;
		/* a comment separates like white space, and is no token;
		 * the token before it keeps it: "a@b (Name)" */
		space = k->kind == T_COMMENT;
		if (k->kind != T_COMMENT)
			t->n++;
		else if (t->n && !t->v[t->n - 1].cmt) {
			t->v[t->n - 1].cmt = k->s;
			t->v[t->n - 1].cmtn = k->n;
		}
		i = end;
	}
	if (note)
		*note = n;
	return 0;
}

size_t address_note(const char *s, size_t n)
{
	struct toks t = {0};
	size_t note = n;

	if (lex(&t, s, n, &note) < 0)
		note = n;
	free(t.v);
	err_clear();
	return note;
}

/* The text of a quoted string or comment: delimiters off, quoted-pairs
 * undone, folding (CR LF) dropped. */
static void add_unquoted(struct strbuf *sb, const char *s, size_t n)
{
	for (size_t i = 1; i + 1 < n; i++) {
		if (s[i] == '\\' && i + 2 < n)
			i++;
		else if (s[i] == '\r' || s[i] == '\n')
			continue;
		strbuf_addch(sb, s[i]);
	}
}

static int is_special(const struct tok *k, char c)
{
	return k->kind == T_SPECIAL && k->s[0] == c;
}

/* ---- parser: RFC 5322 3.4 ---------------------------------------------- */

struct parse {
	const struct tok *v;
	size_t n;
	unsigned flags;
	const char *in; /* the input, for offsets in errors */
};

/* The words of v[a..b) as a display name; NULL when empty. */
/*
 * A comment that is part of a person's name as git keeps it ("Russell King
 * (Oracle)"): one line, nothing that could read as an address or a quote.
 */
static int comment_plain(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("<>@\"\\\r\n", s[i]) || !s[i])
			return 0;
	return 1;
}

static char *phrase(const struct parse *p, size_t a, size_t b)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = a; i < b; i++) {
		const struct tok *k = &p->v[i];
		if (k->space && sb.len)
			strbuf_addch(&sb, ' ');
		if (k->kind == T_QUOTED)
			add_unquoted(&sb, k->s, k->n);
		else
			strbuf_add(&sb, k->s, k->n);
		/* one person's display name keeps its comment, as git does */
		if ((p->flags & ADDRESS_ONE) && k->cmt &&
		    comment_plain(k->cmt, k->cmtn)) {
			strbuf_addstr(&sb, " (");
			add_unquoted(&sb, k->cmt, k->cmtn);
			strbuf_addch(&sb, ')');
		}
	}
	strbuf_trim(&sb);
	if (!sb.len) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb, NULL);
}

static int bad(const struct parse *p, size_t i, const char *what)
{
	size_t at = i < p->n ? (size_t)(p->v[i].s - p->in) + 1 : 0;

	if (at)
		return err_set(ERR_INVALID, "%s at octet %zu", what, at);
	return err_set(ERR_INVALID, "%s at the end", what);
}

/*
 * v[a..b) as an addr-spec: local-part "@" domain, each dot-separated words
 * (a quoted string in the local part, a domain literal as the domain).
 * *addr gets "local@domain" as written.
 */
static int addr_spec(const struct parse *p, size_t a, size_t b, char **addr)
{
	struct strbuf sb = STRBUF_INIT;
	size_t at = b;
	int ret = 0;

	for (size_t i = a; i < b; i++)
		if (is_special(&p->v[i], '@')) {
			if (at != b) {
				ret = bad(p, i, "a second @");
				goto out;
			}
			at = i;
		}
	if (at == b) {
		ret = bad(p, a, "no @ in the address");
		goto out;
	}
	/* word *("." word) on each side; the domain may be one literal */
	for (int side = 0; side < 2; side++) {
		size_t from = side ? at + 1 : a, to = side ? b : at;
		if (from == to) {
			ret = bad(p, side ? at : a,
				  side ? "empty domain" : "empty local part");
			goto out;
		}
		if (side && to - from == 1 && p->v[from].kind == T_DLIT) {
			strbuf_add(&sb, p->v[from].s, p->v[from].n);
			continue;
		}
		for (size_t i = from; i < to; i++) {
			const struct tok *k = &p->v[i];
			int want_word = (i - from) % 2 == 0;
			int word = k->kind == T_ATOM ||
				   (!side && k->kind == T_QUOTED);
			if (want_word ? !word
				      : !is_special(k, '.') || i + 1 == to) {
				ret = bad(p, i,
					  side ? "bad domain"
					       : "bad local part");
				goto out;
			}
			strbuf_add(&sb, k->s, k->n);
		}
		if (!side)
			strbuf_addch(&sb, '@');
	}
	*addr = strbuf_detach(&sb, NULL);
out:
	strbuf_release(&sb);
	return ret;
}

/* Where the current entry ends: the next delimiter at top level. */
static size_t entry_end(const struct parse *p, size_t i, int in_group)
{
	int angle = 0;

	for (; i < p->n; i++) {
		const struct tok *k = &p->v[i];
		if (is_special(k, '<'))
			angle++;
		else if (is_special(k, '>') && angle)
			angle--;
		else if (!angle && !(p->flags & ADDRESS_ONE) &&
			 (is_special(k, ',') ||
			  (in_group && is_special(k, ';'))))
			break;
	}
	return i;
}

/* One mailbox in v[*i..end): name-addr or addr-spec (or a bare name). */
static int mailbox(const struct parse *p, size_t *i, size_t end,
		   struct mailboxes *out, size_t *stop)
{
	size_t a = *i, lt = end, gt = end;
	char *addr = NULL, *name = NULL;
	int ret;

	for (size_t j = a; j < end; j++)
		if (is_special(&p->v[j], '<')) {
			lt = j;
			break;
		}
	*stop = end;
	if (lt == end) {
		int has_at = 0;
		for (size_t j = a; j < end; j++) {
			if (is_special(&p->v[j], '>'))
				return bad(p, j, "'>' without '<'");
			has_at |= is_special(&p->v[j], '@');
		}
		if (!has_at) {
			name = phrase(p, a, end);
			if (name)
				mailboxes_push(out, name, NULL);
			*i = end;
			return 0;
		}
		if ((ret = addr_spec(p, a, end, &addr)) < 0)
			return ret;
		/* the comment after a bare addr-spec is its name */
		if (p->v[end - 1].cmt) {
			struct strbuf sb = STRBUF_INIT;
			add_unquoted(&sb, p->v[end - 1].cmt,
				     p->v[end - 1].cmtn);
			strbuf_trim(&sb);
			if (sb.len)
				name = strbuf_detach(&sb, NULL);
			strbuf_release(&sb);
		}
		mailboxes_push(out, name, addr);
		*i = end;
		return 0;
	}
	for (size_t j = lt + 1; j < end; j++) {
		if (is_special(&p->v[j], '<'))
			return bad(p, j, "'<' inside <>");
		if (is_special(&p->v[j], '>')) {
			gt = j;
			break;
		}
	}
	if (gt == end)
		return bad(p, lt, "'<' without '>'");
	{
		size_t from = lt + 1;
		/* obs-route: <@relay1,@relay2:local@domain> */
		if (from < gt && is_special(&p->v[from], '@')) {
			while (from < gt && !is_special(&p->v[from], ':'))
				from++;
			from++;
		}
		if (from >= gt)
			return bad(p, lt, "no address in <>");
		if ((ret = addr_spec(p, from, gt, &addr)) < 0)
			return ret;
	}
	for (size_t j = gt + 1; j < end; j++)
		if (is_special(&p->v[j], '<')) {
			free(addr);
			return bad(p, j, "a second <address>");
		}
	if (gt + 1 < end) {
		if (p->flags & ADDRESS_TRAILING) {
			*stop = gt + 1;
		} else {
			free(addr);
			return bad(p, gt + 1, "text after <address>");
		}
	}
	mailboxes_push(out, phrase(p, a, lt), addr);
	*i = end;
	return 0;
}

int address_parse(struct mailboxes *out, const char *s, size_t n,
		  unsigned flags, size_t *used)
{
	struct toks t = {0};
	struct mailboxes got = {0};
	struct parse p;
	size_t i = 0, stop = 0;
	int ret;

	if (used)
		*used = 0;
	if ((ret = lex(&t, s, n, NULL)) < 0)
		goto out;
	p = (struct parse){t.v, t.n, flags, s};
	if (flags & ADDRESS_ONE) {
		if (t.n && (ret = mailbox(&p, &i, t.n, &got, &stop)) < 0)
			goto out;
		if (used)
			*used = stop < t.n ? (size_t)(t.v[stop].s - s) : n;
		goto done;
	}
	while (i < t.n) {
		size_t end;
		if (is_special(&t.v[i], ',')) {
			i++;
			continue;
		}
		end = entry_end(&p, i, 0);
		/* a group: display-name ":" [mailbox-list] ";" */
		size_t colon = end;
		for (size_t j = i; j < end; j++) {
			if (is_special(&t.v[j], '<') ||
			    is_special(&t.v[j], '@'))
				break;
			if (is_special(&t.v[j], ':')) {
				colon = j;
				break;
			}
		}
		if (colon < end) {
			i = colon + 1;
			while (i < t.n && !is_special(&t.v[i], ';')) {
				if (is_special(&t.v[i], ',')) {
					i++;
					continue;
				}
				end = entry_end(&p, i, 1);
				if ((ret = mailbox(&p, &i, end, &got, &stop)) <
				    0)
					goto out;
			}
			if (i == t.n) {
				ret = bad(&p, i, "group without ';'");
				goto out;
			}
			i++;
			continue;
		}
		if ((ret = mailbox(&p, &i, end, &got, &stop)) < 0)
			goto out;
	}
	if (used)
		*used = n;
done:
	for (size_t j = 0; j < got.n; j++)
		mailboxes_push(out, got.v[j].name, got.v[j].addr);
	free(got.v);
	got.v = NULL;
	got.n = 0;
out:
	mailboxes_release(&got);
	free(t.v);
	return ret;
}
