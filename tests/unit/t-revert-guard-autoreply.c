/* t-revert-guard-autoreply.c: an automatic reply (RFC 3834) is known by its headers, a person's reply is not. */
#include "patch.h"
#include "err.h"
#include "strbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* The auto_reply of a reply carrying extra header lines; -1 if unparsed. */
static int auto_of(const char *headers)
{
	struct patch *p = NULL;
	char *m = xstrfmt("From: Dev <dev@example.org>\n"
			  "Subject: Re: An automatic revert of your patch\n"
			  "Message-Id: <r@example.org>\n"
			  "In-Reply-To: <proposal@localhost>\n"
			  "%s"
			  "\n"
			  "I am out of the office until Monday.\n",
			  headers);
	int ret = patch_parse_at(&p, m, strlen(m), "reply", 1 << 20, 1,
				 PATCH_ANY_MESSAGE);
	int a = ret < 0 || !p ? -1 : p->auto_reply;

	if (ret < 0)
		diag("%s", err_msg());
	patch_free(p);
	free(m);
	return a;
}

int main(void)
{
	static const struct {
		const char *headers;
		int want;
		const char *what;
	} cases[] = {
		{ "", 0, "no such header: a person's reply" },
		{ "Auto-Submitted: auto-replied\n", 1, "Auto-Submitted: auto-replied" },
		{ "Auto-Submitted: auto-replied (vacation)\n", 1,
		  "Auto-Submitted with a comment" },
		{ "Auto-Submitted: auto-generated\n", 1,
		  "Auto-Submitted: auto-generated" },
		{ "AUTO-SUBMITTED:\n  auto-notified; owner-email=x@example.org\n",
		  1, "folded, upper case, with a parameter" },
		{ "Auto-Submitted: no\n", 0, "Auto-Submitted: no is a person" },
		{ "Auto-Submitted: No (sent by hand)\n", 0,
		  "Auto-Submitted: No (comment) too" },
		{ "Precedence: bulk\n", 1, "Precedence: bulk" },
		{ "Precedence: junk\n", 1, "Precedence: junk" },
		{ "Precedence: List \n", 1, "Precedence: List (any case, blanks)" },
		{ "Precedence:\n\tbulk\n", 1, "Precedence: bulk, folded" },
		{ "Precedence: first-class\n", 0, "Precedence: first-class is not" },
		{ "X-Autoreply: yes\n", 1, "X-Autoreply: yes" },
		{ "X-Autoreply: no\n", 0, "X-Autoreply: no" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(auto_of(cases[i].headers), cases[i].want, "%s",
		       cases[i].what);

	/* a quilt description is no mail because of such a line */
	{
		struct patch *p = NULL;
		const char *q = "Precedence: bulk\n\nx: fix it\n\n"
				"--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n";
		int ret = patch_parse(&p, q, strlen(q), "quilt", 1 << 20);
		ok(ret == 0 && p && !p->author_email && !p->auto_reply,
		   "a quilt patch whose text starts \"Precedence: bulk\" is not"
		   " read as a mail");
		patch_free(p);
	}
	return done_testing();
}
