/* t-address.c: the one RFC 5322 address parser (mail/address.c), table-driven.
 */
#include "address.h"
#include "err.h"
#include "strbuf.h"
#include "tap.h"

#include <string.h>

/*
 * Each case: the input, the flags, and what comes out: the mailboxes as
 * "name|addr" lines joined by "\n" ("-" for a missing part), or the start
 * of the error.
 */
static const struct {
	const char *in;
	unsigned flags;
	const char *want; /* NULL: an error */
	const char *error;
} cases[] = {
	/* the display name never becomes the address (issue 11, item 7) */
	{"\"Evil, <attacker@evil.example>\" <eve2@example.com>", ADDRESS_ONE,
	 "Evil, <attacker@evil.example>|eve2@example.com", NULL},
	{"\"Evil, <attacker@evil.example>\" <eve2@example.com>", 0,
	 "Evil, <attacker@evil.example>|eve2@example.com", NULL},
	{"Evil (<attacker@evil.example>) <eve2@example.com>", ADDRESS_ONE,
	 "Evil|eve2@example.com", NULL},
	{"\"x\\\"<attacker@evil.example>\\\"\" <eve@example.com>", ADDRESS_ONE,
	 "x\"<attacker@evil.example>\"|eve@example.com", NULL},
	{"eve@example.com (Eve <attacker@evil.example>)", ADDRESS_ONE,
	 "Eve <attacker@evil.example>|eve@example.com", NULL},
	{"Evil <attacker@evil.example> <eve2@example.com>", ADDRESS_ONE, NULL,
	 "a second <address>"},
	{"Evil <attacker@evil.example> <eve2@example.com>",
	 ADDRESS_ONE | ADDRESS_TRAILING, NULL, "a second <address>"},
	{"Evil, <attacker@evil.example> <eve2@example.com>", 0, NULL,
	 "a second <address>"},
	/* one person's name keeps its plain comment, as git keeps it
	 * (issue 21); a list drops comments (RFC 5322) */
	{"Russell King (Oracle) <rmk+kernel@armlinux.org.uk>", ADDRESS_ONE,
	 "Russell King (Oracle)|rmk+kernel@armlinux.org.uk", NULL},
	{"Russell King (Oracle) <rmk+kernel@armlinux.org.uk>",
	 ADDRESS_ONE | ADDRESS_TRAILING,
	 "Russell King (Oracle)|rmk+kernel@armlinux.org.uk", NULL},
	{"Russell King (Oracle) <rmk+kernel@armlinux.org.uk>", 0,
	 "Russell King|rmk+kernel@armlinux.org.uk", NULL},
	/* the ordinary forms, case kept */
	{"Joerg Roedel <Joerg.Roedel@AMD.com>", ADDRESS_ONE,
	 "Joerg Roedel|Joerg.Roedel@AMD.com", NULL},
	{"jane@example.org", ADDRESS_ONE, "-|jane@example.org", NULL},
	{"<jane@example.org>", ADDRESS_ONE, "-|jane@example.org", NULL},
	{"Jane Doe", ADDRESS_ONE, "Jane Doe|-", NULL},
	{"  J. Random   Hacker  <jr@h.org>  ", ADDRESS_ONE,
	 "J. Random Hacker|jr@h.org", NULL},
	{"\"Doe, John\" <jd@x.org>", ADDRESS_ONE, "Doe, John|jd@x.org", NULL},
	{"Doe, John <jd@x.org>", ADDRESS_ONE, "Doe, John|jd@x.org", NULL},
	{"J\xc3\xbcrgen Gro\xc3\x9f <jgross@suse.com>", ADDRESS_ONE,
	 "J\xc3\xbcrgen Gro\xc3\x9f|jgross@suse.com", NULL},
	{"=?UTF-8?B?SsO2cmc=?= <joro@8bytes.org>", ADDRESS_ONE,
	 "=?UTF-8?B?SsO2cmc=?=|joro@8bytes.org", NULL},
	{"Name\r\n (folded\r\n comment) <a@b.org>", ADDRESS_ONE, "Name|a@b.org",
	 NULL},
	{"a@b.org (Nested (comment) name)", ADDRESS_ONE,
	 "Nested (comment) name|a@b.org", NULL},
	{"<@relay.org,@other.org:a@b.org>", ADDRESS_ONE, "-|a@b.org", NULL},
	{"\"quoted local\"@b.org", ADDRESS_ONE, "-|\"quoted local\"@b.org",
	 NULL},
	{"a@[192.0.2.1]", ADDRESS_ONE, "-|a@[192.0.2.1]", NULL},
	{"Name <a@b.org> # 5.15.x", ADDRESS_ONE | ADDRESS_TRAILING,
	 "Name|a@b.org", NULL},
	/* lists and groups */
	{"a@b.org, Name <c@d.org>,, \"Last, First\" <e@f.org>", 0,
	 "-|a@b.org\nName|c@d.org\nLast, First|e@f.org", NULL},
	{"Team: a@b.org, Name <c@d.org>;, e@f.org", 0,
	 "-|a@b.org\nName|c@d.org\n-|e@f.org", NULL},
	{"undisclosed-recipients:;", 0, "", NULL},
	{"Last, First <e@f.org>", 0, "Last|-\nFirst|e@f.org", NULL},
	{"", 0, "", NULL},
	/* errors */
	{"\"unterminated <a@b.org>", ADDRESS_ONE, NULL,
	 "unterminated quoted string"},
	{"Name (unterminated <a@b.org>", ADDRESS_ONE, NULL,
	 "unterminated comment"},
	{"Name <a@b.org", ADDRESS_ONE, NULL, "'<' without '>'"},
	{"Name a@b.org>", ADDRESS_ONE, NULL, "'>' without '<'"},
	{"Name <>", ADDRESS_ONE, NULL, "no address in <>"},
	{"Name <a@b@c.org>", ADDRESS_ONE, NULL, "a second @"},
	{"Name <a..b@c.org>", ADDRESS_ONE, NULL, "bad local part"},
	{"Name <a@c..org>", ADDRESS_ONE, NULL, "bad domain"},
	{"Name <@c.org>", ADDRESS_ONE, NULL, "no address in <>"},
	{"Name <a@>", ADDRESS_ONE, NULL, "empty domain"},
	{"Name <a@b.org> trailing", ADDRESS_ONE, NULL, "text after <address>"},
	{"a@b.org, c@d.org", ADDRESS_ONE, NULL, "a second @"},
	{"Name ) <a@b.org>", ADDRESS_ONE, NULL, "')' without '('"},
	{"Team: a@b.org", 0, NULL, "group without ';'"},
	{"\"Name\\\x01\" <a@b.org>", ADDRESS_ONE, "Name\x01|a@b.org", NULL},
};

static char *shown(const struct mailboxes *l)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < l->n; i++)
		strbuf_addf(&sb, "%s%s|%s", i ? "\n" : "",
			    l->v[i].name ? l->v[i].name : "-",
			    l->v[i].addr ? l->v[i].addr : "-");
	return strbuf_detach(&sb, NULL);
}

static void test_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mailboxes l = {0};
		int ret = address_parse(&l, cases[i].in, strlen(cases[i].in),
					cases[i].flags, NULL);
		char *got = shown(&l), *in = addr_shown(cases[i].in);
		if (cases[i].want) {
			is_int(ret, 0, "parses: %s", in);
			if (ret)
				diag("  %s", err_msg());
			is_str(got, cases[i].want, "... gives the mailboxes");
		} else {
			is_int(ret, ERR_INVALID, "refused: %s", in);
			like(err_msg(), cases[i].error, "... saying why");
			is_int(l.n, 0, "... and adds nothing");
		}
		free(got);
		free(in);
		mailboxes_release(&l);
	}
}

static void test_used_and_appending(void)
{
	struct mailboxes l = {0};
	const char *s = "Name <a@b.org> # 6.1";
	size_t used = 0;

	address_parse(&l, "first@x.org", 11, ADDRESS_ONE, NULL);
	is_int(address_parse(&l, s, strlen(s), ADDRESS_ONE | ADDRESS_TRAILING,
			     &used),
	       0, "trailing text: parses");
	is_int(used, 15, "... *used is where the mailbox ended");
	is_int(l.n, 2, "mailboxes are appended");
	is_int(address_parse(&l, "\"x", 2, 0, NULL), ERR_INVALID,
	       "an error ...");
	is_int(l.n, 2, "... leaves the list as it was");
	mailboxes_release(&l);
}

static void test_nul(void)
{
	struct mailboxes l = {0};
	static const char s[] = "Na\0me <a@b.org>";

	is_int(address_parse(&l, s, sizeof(s) - 1, ADDRESS_ONE, NULL),
	       ERR_INVALID, "a NUL byte is refused (found by fuzzing) ...");
	like(err_msg(), "NUL byte at octet 3", "... saying where");
	mailboxes_release(&l);
}

static void test_note(void)
{
	static const struct {
		const char *in;
		const char *rest; /* from the note on, or "" for none */
	} notes[] = {
		{"stable@vger.kernel.org # 5.15.x", "# 5.15.x"},
		{"<stable@vger.kernel.org> [4.19+]", "[4.19+]"},
		{"stable@vger.kernel.org\t#v6.1+", "#v6.1+"},
		{"\"a # b\" <x@y.org>", ""},
		{"Name (see #3) <x@y.org> # 6.1", "# 6.1"},
		{"x@[192.0.2.1]", ""},
		{"x@y.org", ""},
		/* found by libFuzzer: a '#' inside <> looped for ever */
		{"Name <a#b@c.org> # 6.1", "# 6.1"},
	};

	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++) {
		size_t n = strlen(notes[i].in);
		size_t at = address_note(notes[i].in, n);
		is_str(notes[i].in + at, notes[i].rest, "note of: %s",
		       notes[i].in);
	}
}

static void test_compare_and_recipients(void)
{
	struct mailboxes r = {0};

	ok(address_eq("Greg@Kroah.com", "greg@kroah.com"),
	   "addresses compare without case");
	ok(!address_eq("greg@kroah.com", "gregk@kroah.com"), "... not more");
	ok(!address_eq(NULL, "a@b"), "... NULL is nobody");
	mailboxes_add_unique(&r, "Greg", "Greg@Kroah.com");
	mailboxes_add_unique(&r, "Other", "greg@kroah.com");
	mailboxes_add_unique(&r, "Evil\r\nBcc: x@y", "evil@x.org");
	is_int(r.n, 2, "a recipient once, whatever the case");
	is_str(r.v[0].addr, "Greg@Kroah.com", "... as first written");
	is_str(r.v[1].name, "Evil Bcc: x@y", "names are cleaned for a header");
	ok(mailboxes_find(&r, "EVIL@X.ORG") == &r.v[1], "find without case");
	mailboxes_release(&r);
}

int main(void)
{
	test_table();
	test_used_and_appending();
	test_nul();
	test_note();
	test_compare_and_recipients();
	return done_testing();
}
