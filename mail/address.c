/* address.c: mail addresses: checked, split, collected as recipients. */
#include "address.h"
#include "log.h"
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

/*
 * A plain addr-spec (dot-atom@domain) in ASCII, as a relay takes it. NULL
 * when fine, else why not. Quoted local parts, address literals and UTF-8
 * addresses are refused: no patch author needs them.
 */
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

/* An address as text for messages: control characters shown as \xNN. */
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

void rcpts_release(struct rcpts *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].name);
		free(r->v[i].addr);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

int rcpts_has(const struct rcpts *r, const char *addr)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strcasecmp(r->v[i].addr, addr))
			return 1;
	return 0;
}

/* Adds (name, addr) unless addr is already there. Both copied. */
void rcpts_add(struct rcpts *r, const char *name, const char *addr)
{
	if (rcpts_has(r, addr))
		return;
	if (r->n == r->alloc) {
		r->alloc = r->alloc ? 2 * r->alloc : 8;
		r->v = xrealloc(r->v, r->alloc * sizeof(*r->v));
	}
	char *clean = clean_header_text(name, NAME_MAX_OCTETS);
	r->v[r->n].name = *clean ? clean : NULL;
	if (!*clean)
		free(clean);
	r->v[r->n].addr = xstrdup(addr);
	r->n++;
}

/*
 * Splits "Name <addr>" or "addr" (surrounding quotes of the name dropped).
 * Both results malloc'd; *name NULL when there is none.
 */
void mailbox_split(const char *s, size_t len, char **name, char **addr)
{
	struct strbuf sb = STRBUF_INIT;
	char *lt, *gt;

	strbuf_add(&sb, s, len);
	strbuf_trim(&sb);
	*name = NULL;
	gt = sb.len && sb.buf[sb.len - 1] == '>' ? sb.buf + sb.len - 1 : NULL;
	lt = gt ? strrchr(sb.buf, '<') : NULL;
	if (lt) {
		*addr = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		struct strbuf nb = STRBUF_INIT;
		strbuf_add(&nb, sb.buf, (size_t)(lt - sb.buf));
		strbuf_trim(&nb);
		if (nb.len >= 2 && nb.buf[0] == '"' &&
		    nb.buf[nb.len - 1] == '"') {
			memmove(nb.buf, nb.buf + 1, nb.len - 2);
			strbuf_setlen(&nb, nb.len - 2);
		}
		*name = nb.len ? strbuf_detach(&nb, NULL) : NULL;
		strbuf_release(&nb);
	} else {
		*addr = xstrdup(sb.buf);
	}
	strbuf_release(&sb);
}

/* Adds each entry of a comma-separated list; bad ones are logged, left out. */
void rcpts_add_list(struct rcpts *r, const char *list, long long patch)
{
	const char *p = list;

	while (p && *p) {
		const char *start = p;
		int quoted = 0, angle = 0;
		for (; *p; p++) {
			if (*p == '"')
				quoted = !quoted;
			else if (!quoted && *p == '<')
				angle = 1;
			else if (!quoted && *p == '>')
				angle = 0;
			else if (!quoted && !angle && *p == ',')
				break;
		}
		char *name, *addr;
		mailbox_split(start, (size_t)(p - start), &name, &addr);
		if (*addr || name) {
			const char *why = addr_problem(addr);
			if (why) {
				char *shown = addr_shown(addr);
				log_warnx("patch %lld: mail_cc: leaving out "
					  "'%s': %s",
					  patch, shown, why);
				free(shown);
			} else
				rcpts_add(r, name, addr);
		}
		free(name);
		free(addr);
		if (*p == ',')
			p++;
	}
}
