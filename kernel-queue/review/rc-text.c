/* rc-text.c: the rc's mails as the stable maintainers write them: the cover and each patch. */
#include "rc-int.h"
#include "mailhdr.h"
#include "mime.h"
#include "patch.h"
#include "strbuf.h"

#include <string.h>

static int rc_width(size_t n);

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

/* "Name <addr>" on one line, made safe. */
static void person(struct strbuf *b, const char *name, const char *addr)
{
	if (name && *name) {
		mime_clean_line(b, name, strlen(name));
		strbuf_addch(b, ' ');
	}
	strbuf_addch(b, '<');
	mime_clean_line(b, addr ? addr : "", addr ? strlen(addr) : 0);
	strbuf_addstr(b, ">\n");
}

static int rc_width(size_t n)
{
	int width = 1;

	for (size_t k = n; k >= 10; k /= 10)
		width++;
	return width < 2 ? 2 : width;
}

char *rc_subject(const char *key, size_t pos, size_t n, const char *text)
{
	return pos ? xstrfmt("[PATCH %s %0*zu/%zu] %s", key, rc_width(n), pos,
			     n, text)
		   : xstrfmt("[PATCH %s %0*zu/%zu] %s review", key,
			     rc_width(n), pos, n, text);
}

void rc_deadline_header(struct strbuf *b, time_t deadline)
{
	struct tm tm;
	char s[64];

	gmtime_r(&deadline, &tm);
	strftime(s, sizeof(s), "%Y-%m-%dT%H:%M+00:00", &tm);
	strbuf_addstr(b, s);
}

void rc_cover_body(struct strbuf *b, const struct rc_text *t)
{
	size_t n = json_array_size(t->patches);

	strbuf_addf(b,
		    "This is the start of the stable review cycle for the %s"
		    " release.\n",
		    t->base);
	if (n == 1)
		strbuf_addstr(b, "There is 1 patch in this series, it will be"
				 " posted as a response\nto this one.");
	else
		strbuf_addf(b,
			    "There are %zu patches in this series, all will be"
			    " posted as a response\nto this one.",
			    n);
	strbuf_addstr(b, "  If anyone has any issues with these being"
			 " applied, please\nlet me know.\n\nResponses should be"
			 " made by ");
	rfc5322_date(b, t->deadline);
	strbuf_addstr(b, ".\nAnything received after that time might be too"
			 " late.\n\n");
	if (t->patch_url)
		strbuf_addf(b, "The whole patch series can be found in one patch"
			       " at:\n\t%s\n%s",
			    t->patch_url, t->git_url ? "or " : "");
	if (t->git_url)
		strbuf_addf(b, "%s the git tree and tag at:\n\t%s %s\n",
			    t->patch_url ? "in" : "The whole series can be found"
					     " in",
			    t->git_url, t->tag);
	if (t->patch_url || t->git_url)
		strbuf_addstr(b, "and the diffstat can be found below.\n\n");
	else
		strbuf_addstr(b, "The patches are in this thread (b4 am takes"
				 " them from it)\nand the diffstat can be found"
				 " below.\n\n");
	strbuf_addstr(b, "thanks,\n\n");
	mime_clean_line(b, t->signer_name, strlen(t->signer_name));
	strbuf_addstr(b, "\n\n-------------\nPseudo-Shortlog of commits:\n\n");
	/* newest first, topped by the version bump */
	person(b, t->signer_name, t->signer_email);
	strbuf_addf(b, "    Linux %s\n\n", t->version);
	for (size_t i = n; i-- > 0;) {
		const json_t *p = json_array_get(t->patches, i);
		const char *subject = jstr(p, "subject");
		person(b, jstr(p, "author_name"), jstr(p, "author_email"));
		strbuf_addstr(b, "    ");
		mime_clean_line(b, subject, strlen(subject));
		strbuf_addstr(b, "\n\n");
	}
	strbuf_addstr(b, "-------------\n\nDiffstat:\n\n");
	strbuf_addstr(b, t->diffstat);
}

void rc_patch_body(struct strbuf *b, const char *key, const json_t *p,
		   const char *diffstat)
{
	const char *msg = jstr(p, "message");
	const char *body = strchr(msg, '\n');

	strbuf_addf(b, "%s-stable review patch.  If anyone has any objections,"
		       " please let me know.\n\n------------------\n\nFrom: ",
		    key);
	person(b, jstr(p, "author_name"), jstr(p, "author_email"));
	strbuf_addch(b, '\n');
	/* the message without its subject line and the blank after it */
	body = body ? body + 1 : "";
	while (*body == '\n')
		body++;
	if (*body)
		patch_safe_message(b, body);
	strbuf_addstr(b, "---\n");
	strbuf_addstr(b, diffstat);
	strbuf_addch(b, '\n');
	strbuf_addstr(b, jstr(p, "diff"));
}
