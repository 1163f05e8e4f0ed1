/* t-outbox.c: outbox mail composed, backoff, transactions, failed sends. */
/*
 * Without arguments: the unit tests (TAP). With `enqueue DB CONF PATCH KIND
 * [--what T] [--why T] [--log FILE] [--revert FILE]` it is the helper of
 * tests/3-review/37-mail-smtp.t: one event + compose_notice() in one transaction, the
 * way the queue code does it; prints the mail id.
 */
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "compose.h"
#include "outbox.h"
#include "queue.h"
#include "smtp.h"
#include "strbuf.h"
#include "tap.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static char tmpdir[] = "/tmp/t-outbox.XXXXXX";

/* ---- helpers ---------------------------------------------------------- */

static long long add_patch(sqlite3 *db, const char *subject, const char *prefix,
			   const char *name, const char *email,
			   const char *msgid, const char *in_reply_to)
{
	static int n;
	char pid[32];

	snprintf(pid, sizeof(pid), "pid-%d", ++n);
	if (db_exec(db,
		    "INSERT INTO patches (queue_pos, subject, subject_prefix,"
		    " author_name, author_email, message_id, in_reply_to,"
		    " upstream, patch_id, message, diff) VALUES (?, ?, ?, ?, ?,"
		    " ?, ?, 'abcdef0123456789', ?, 'msg', 'diff')",
		    "dttttttt", n, subject, prefix, name, email, msgid,
		    in_reply_to, pid) < 0) {
		diag("add_patch: %s", err_msg());
		return -1;
	}
	return db_last_id(db);
}

static void add_sob(sqlite3 *db, long long patch, const char *addr,
		    const char *name)
{
	if (db_exec(db,
		    "INSERT INTO patch_tags (patch_id, kind, value, extra)"
		    " VALUES (?, 'signed_off_by', ?, ?)",
		    "itt", patch, addr, name) < 0)
		diag("add_sob: %s", err_msg());
}

/* One mail in its own transaction, as a caller does it. */
static long long enqueue(sqlite3 *db, const struct config *cfg,
			 const struct notice *n)
{
	long long id;

	if (db_begin(db) < 0)
		return ERR_IO;
	id = queue_notify(db, cfg, n);
	if (id < 0) {
		diag("compose_notice: %s", err_msg());
		db_rollback(db);
		return id;
	}
	if (db_commit(db) < 0)
		return ERR_IO;
	return id;
}

static char *mail_text(sqlite3 *db, long long id, const char *col)
{
	char *sql = xstrfmt("SELECT %s FROM mail WHERE id = ?", col), *out;

	if (db_query_text(db, &out, sql, "i", id) < 0)
		out = NULL;
	free(sql);
	return out;
}

static long long mail_int(sqlite3 *db, long long id, const char *col)
{
	char *sql = xstrfmt("SELECT %s FROM mail WHERE id = ?", col);
	long long v = -999;

	db_query_int(db, &v, sql, "i", id);
	free(sql);
	return v;
}

/* The header block, unfolded, with LF line ends. Caller frees. */
static char *unfolded_headers(const char *msg)
{
	const char *end = strstr(msg, "\r\n\r\n");
	struct strbuf sb = STRBUF_INIT;

	if (!end)
		return xstrdup("");
	for (const char *p = msg; p < end + 2; p++) {
		if (p[0] == '\r' && p[1] == '\n' &&
		    (p[2] == ' ' || p[2] == '\t')) {
			p += 2;
			strbuf_addch(&sb, ' ');
			continue;
		}
		if (p[0] == '\r' && p[1] == '\n') {
			strbuf_addch(&sb, '\n');
			p++;
			continue;
		}
		strbuf_addch(&sb, *p);
	}
	/* folding left "a \n b" as "a  b": one space is what unfolding means */
	return strbuf_detach(&sb, NULL);
}

/* The value of header name (unfolded), or NULL. Caller frees. */
static char *header(const char *msg, const char *name)
{
	char *h = unfolded_headers(msg), *out = NULL;
	size_t n = strlen(name);

	for (char *line = h; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncasecmp(line, name, n) && line[n] == ':') {
			const char *v = line + n + 1;
			while (*v == ' ')
				v++;
			/* collapse the fold's extra space */
			struct strbuf sb = STRBUF_INIT;
			for (; *v; v++)
				if (!(*v == ' ' && sb.len &&
				      sb.buf[sb.len - 1] == ' '))
					strbuf_addch(&sb, *v);
			out = strbuf_detach(&sb, NULL);
			break;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(h);
	return out;
}

static int b64val(int c)
{
	const char *t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			"0123456789+/";
	const char *p = c ? strchr(t, c) : NULL;
	return p ? (int)(p - t) : -1;
}

/*
 * Decodes the RFC 2047 B words of UTF-8 in s (white space between two
 * words dropped, as RFC 2047 6.2 says). Caller frees.
 */
static char *decode2047(const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	int last_word = 0;
	size_t word_end = 0;

	while (*s) {
		if (!strncmp(s, "=?UTF-8?B?", 10)) {
			const char *e = strstr(s + 10, "?=");
			unsigned v = 0;
			int bits = 0;
			if (!e)
				break;
			if (last_word)
				strbuf_setlen(&sb, word_end);
			for (const char *p = s + 10; p < e; p++) {
				int d = b64val(*p);
				if (d < 0)
					continue;
				v = (v << 6) | (unsigned)d;
				bits += 6;
				if (bits >= 8) {
					bits -= 8;
					strbuf_addch(&sb, (char)((v >> bits) &
								 0xff));
				}
			}
			s = e + 2;
			last_word = 1;
			word_end = sb.len;
			continue;
		}
		if (*s != ' ')
			last_word = 0;
		strbuf_addch(&sb, *s++);
	}
	return strbuf_detach(&sb, NULL);
}

/* Every line ends in CRLF, holds at most max octets; headers are ASCII. */
static int wire_ok(const char *msg, size_t max, int ascii_headers)
{
	const char *hend = strstr(msg, "\r\n\r\n");
	size_t col = 0;

	for (const char *p = msg; *p; p++) {
		if (*p == '\n') {
			if (p == msg || p[-1] != '\r')
				return 0;
			col = 0;
			continue;
		}
		if (*p == '\r' && p[1] != '\n')
			return 0;
		if (*p != '\r' && ++col > max)
			return 0;
		if (ascii_headers && hend && p < hend &&
		    (unsigned char)*p >= 0x80)
			return 0;
	}
	return 1;
}

static int free_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	port = ntohs(a.sin_port);
	close(fd);
	return port;
}

/* A socket that listens but never accepts or speaks: a hung relay. */
static int silent_listener(int *port)
{
	struct sockaddr_in a = {.sin_family = AF_INET};
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(fd, 4) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static void set_str(char **slot, const char *v)
{
	free(*slot);
	*slot = xstrdup(v);
}

/* ---- tests ------------------------------------------------------------ */

static void test_compose(sqlite3 *db, struct config *cfg)
{
	long long p, id, ev;
	char *msg, *v, *d;
	struct notice n = {
		.kind = "dropped",
		.what = "Your patch was dropped from the 6.1 queue.",
		.why = "It breaks the net-loopback test:\nsee the log below.",
		.log_excerpt = "[    1.0] booting\n.\n..\n[    2.0] FAIL: "
			       "net-loopback\n",
		.revert_patch = "From abc Mon Sep 17 00:00:00 2001\n"
				"Subject: [PATCH] Revert \"net: fix the "
				"frobnicator\"\n\n---\n diff --git a/x b/x\n",
	};

	p = add_patch(db, "net: fix the frobnicator", "PATCH 6.1 2/3",
		      "J\xc3\xbcrgen Gro\xc3\x9f", "jgross@suse.test",
		      "20240101.abc@kernel.test", "cover.1@kernel.test");
	add_sob(db, p, "JGross@SUSE.test", "J\xc3\xbcrgen Gro\xc3\x9f");
	add_sob(db, p, "sasha@kernel.test", "Sasha Levin");
	add_sob(db, p, "greg@kroah.test", "Greg Kroah-Hartman");
	add_sob(db, p, "Sasha@Kernel.test", "Sasha Levin");
	add_sob(db, p, "broken address", "Nobody");
	set_str(&cfg->mail_cc, "stable-list@lists.test, Greg K-H "
			       "<GREG@kroah.test>, not an address, "
			       "\"Doe, John\" <jd@x.test>");

	db_begin(db);
	ev = event_add(db, "test", "patch", p, "dropped", "test");
	n.patch_id = p;
	n.event_id = ev;
	id = queue_notify(db, cfg, &n);
	db_commit(db);
	ok(id > 0, "compose_notice returns a mail id");
	msg = mail_text(db, id, "headers_and_body");
	ok(msg != NULL, "the message is stored");
	if (!msg)
		return;

	v = header(msg, "From");
	is_str(v, "stableq test <stableq@stableq.test>", "From: is mail_from");
	free(v);
	v = header(msg, "To");
	like(v, "=?UTF-8?B?", "To: the non-ASCII name is RFC 2047 encoded");
	d = v ? decode2047(v) : NULL;
	is_str(d, "J\xc3\xbcrgen Gro\xc3\x9f <jgross@suse.test>",
	       "To: the author, decoded");
	free(v);
	free(d);
	v = header(msg, "Cc");
	is_str(v,
	       "Sasha Levin <sasha@kernel.test>, Greg Kroah-Hartman "
	       "<greg@kroah.test>, <stable-list@lists.test>, \"Doe, John\" "
	       "<jd@x.test>",
	       "Cc: the sign-off chain deduplicated without the author, "
	       "then mail_cc");
	free(v);
	v = header(msg, "Subject");
	is_str(v,
	       "Patch \"net: fix the frobnicator\" has been dropped from the "
	       "6.1-stable queue",
	       "Subject: the patch's subject and what happened, as stable "
	       "maintainers say it");
	free(v);
	v = header(msg, "In-Reply-To");
	is_str(v, "<20240101.abc@kernel.test>", "In-Reply-To: the patch");
	free(v);
	v = header(msg, "References");
	is_str(v, "<cover.1@kernel.test> <20240101.abc@kernel.test>",
	       "References: the cover letter, then the patch");
	free(v);
	v = header(msg, "Message-ID");
	d = mail_text(db, id, "'<' || message_id || '>'");
	is_str(v, d, "Message-ID: as stored in mail.message_id");
	like(v, "<stableq.", "Message-ID: stableq.<time>.<random>@...");
	ok(v && strlen(v) > 20 && !strcmp(v + strlen(v) - 14, "@stableq.test>"),
	   "Message-ID: in the domain of mail_from");
	free(v);
	free(d);
	v = header(msg, "Date");
	ok(v && strlen(v) >= 29 && strstr(v, " +0000") && v[3] == ',',
	   "Date: RFC 5322 (%s)", v ? v : "none");
	free(v);
	v = header(msg, "MIME-Version");
	is_str(v, "1.0", "MIME-Version: 1.0");
	free(v);
	v = header(msg, "Content-Type");
	is_str(v, "text/plain; charset=UTF-8", "Content-Type");
	free(v);
	v = header(msg, "Content-Transfer-Encoding");
	is_str(v, "8bit", "Content-Transfer-Encoding");
	free(v);
	ok(wire_ok(msg, 78, 1), "CRLF everywhere, headers ASCII within 78");

	const char *body = strstr(msg, "\r\n\r\n");
	like(body, "Hello J\xc3\xbcrgen Gro\xc3\x9f,\r\n",
	     "body: greets the author");
	like(body, "Your patch was dropped from the 6.1 queue.\r\n",
	     "body: what happened");
	like(body, "It breaks the net-loopback test:\r\nsee the log below.",
	     "body: why");
	like(body, "\r\n.\r\n..\r\n[    2.0] FAIL: net-loopback\r\n",
	     "body: the log excerpt, lines kept (dots too)");
	like(body, "Subject: [PATCH] Revert \"net: fix the frobnicator\"",
	     "body: the revert inline");
	like(body, "\r\n-- \r\nstableq on ",
	     "body: a footer naming the instance");
	like(body, " for linux-6.1.y, the revert-first stable queue.\r\n",
	     "footer: the branch");
	like(body, "This mail is automatic: patch ", "footer: ids");

	v = mail_text(db, id, "rcpt_to");
	is_str(v,
	       "[\"jgross@suse.test\",\"sasha@kernel.test\","
	       "\"greg@kroah.test\",\"stable-list@lists.test\","
	       "\"jd@x.test\"]",
	       "envelope: author, chain and list, each once");
	free(v);
	v = mail_text(db, id, "mail_from");
	is_str(v, "stableq@stableq.test", "envelope sender: the bare address");
	free(v);
	v = mail_text(db, id, "state");
	is_str(v, "queued", "state queued");
	free(v);
	is_int(mail_int(db, id, "attempts"), 0, "no attempt yet");
	is_int(mail_int(db, id, "event_id"), ev, "tied to its event");
	ok(llabs(mail_int(db, id, "next_attempt_at") - (long long)time(NULL)) <
		   5,
	   "due now");
	free(msg);
	set_str(&cfg->mail_cc, "");
}

static void test_hostile_text(sqlite3 *db, struct config *cfg)
{
	struct strbuf subj = STRBUF_INIT, log = STRBUF_INIT;
	long long p, id;
	char *msg, *v, *d;

	/* a long non-ASCII subject with an attempt to add a header */
	for (int i = 0; i < 12; i++)
		strbuf_addstr(&subj, "caf\xc3\xa9 r\xc3\xa9seau ");
	strbuf_addstr(&subj, "\r\nBcc: evil@attacker.test");
	p = add_patch(db, subj.buf, NULL, "Evil\r\nBcc: x@attacker.test",
		      "evil@ok.test", "bad id with spaces@x", NULL);
	for (int i = 0; i < 3000; i++)
		strbuf_addch(&log, 'x');
	strbuf_addstr(&log, "\nbad byte \xff here, lone CR\r, end\n");
	struct notice n = {
		.patch_id = p, .kind = "flagged", .log_excerpt = log.buf};
	id = enqueue(db, cfg, &n);
	ok(id > 0, "hostile text: mail queued");
	msg = mail_text(db, id, "headers_and_body");
	if (!msg)
		msg = xstrdup("");
	ok(!strstr(msg, "\r\nBcc:") && !strstr(msg, "\nBcc:"),
	   "no header injected through subject or name");
	ok(wire_ok(msg, 998, 1),
	   "lines within 998 octets, CRLF, ASCII headers");
	v = header(msg, "Subject");
	d = v ? decode2047(v) : NULL;
	like(d, "Patch \"caf\xc3\xa9 r\xc3\xa9seau caf",
	     "long UTF-8 subject decodes back");
	like(d, "\" has been flagged as broken in the 6.1-stable queue",
	     "... to its end");
	like(d, "Bcc: evil@attacker.test",
	     "the control characters became a space");
	free(v);
	free(d);
	v = header(msg, "In-Reply-To");
	ok(!v, "a Message-Id with spaces is not quoted back");
	free(v);
	like(msg, "bad byte \xef\xbf\xbd here", "invalid UTF-8 became U+FFFD");
	like(msg, "lone CR, end\r\n", "a lone CR is dropped");
	{
		const char *from = strstr(msg, "Log of the failing test:");
		const char *to = from ? strstr(from, "bad byte") : NULL;
		size_t xs = 0;
		for (const char *q = from; q && q < to; q++)
			xs += *q == 'x';
		is_int(xs, 3000,
		       "the long log line is kept whole, only broken");
	}
	free(msg);
	strbuf_release(&subj);
	strbuf_release(&log);
}

static void test_invalid(sqlite3 *db, struct config *cfg)
{
	static const struct {
		const char *addr, *in_error;
	} cases[] = {
		{NULL, "author address '': missing"},
		{"", "author address '': missing"},
		{"no-at-sign.test", "'no-at-sign.test': no @"},
		{"has space@x.test", "'has space@x.test': white space"},
		{"ctl\x01@x.test", "'ctl\\x01@x.test': control character"},
		{"a@", "'a@': empty domain"},
		{"@b.test", "'@b.test': empty local part"},
		{"a@b..test", "'a@b..test': bad domain"},
		{"a<b>@c.test", "bad character in the local part"},
		{"a@b.test>, c@d.test", "white space"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long p = add_patch(db, "x: y", NULL, "Some One",
					cases[i].addr, NULL, NULL);
		add_sob(db, p, "ok@x.test", "Ok");
		struct notice n = {.patch_id = p, .kind = "rejected"};
		long long id = enqueue(db, cfg, &n), ev = -1;
		char *st = mail_text(db, id, "state");
		char *err = mail_text(db, id, "last_error");
		char *rc = mail_text(db, id, "rcpt_to");
		ok(id > 0, "malformed author %zu: compose_notice still succeeds",
		   i);
		is_str(st, "invalid", "malformed author %zu: state invalid", i);
		like(err, cases[i].in_error, "malformed author %zu: error says",
		     i);
		is_str(rc, "[]", "malformed author %zu: nobody to send to", i);
		db_query_int(db, &ev,
			     "SELECT count(*) FROM events WHERE subject_kind ="
			     " 'mail' AND subject_id = ? AND kind = 'invalid'",
			     "i", id);
		is_int(ev, 1, "malformed author %zu: reported as an event", i);
		free(st);
		free(err);
		free(rc);
	}

	/* a bad sender is the configuration's fault: stored, never sent */
	long long p = add_patch(db, "x: z", NULL, "A", "a@x.test", NULL, NULL);
	set_str(&cfg->mail_from, "stableq");
	struct notice n = {.patch_id = p, .kind = "held"};
	long long id = enqueue(db, cfg, &n);
	char *err = mail_text(db, id, "last_error");
	like(err, "mail_from address 'stableq': no @",
	     "bad mail_from: invalid");
	free(err);
	set_str(&cfg->mail_from, "stableq test <stableq@stableq.test>");
}

static void test_errors(sqlite3 *db, struct config *cfg)
{
	struct notice n = {.patch_id = 999999, .kind = "dropped"};
	long long r, before = -1, after = -1;

	db_query_int(db, &before, "SELECT count(*) FROM mail", NULL);
	db_begin(db);
	r = queue_notify(db, cfg, &n);
	db_rollback(db);
	is_int(r, ERR_NOTFOUND, "unknown patch: not found");
	like(err_msg(), "patch 999999", "the error names the patch");
	n.patch_id = 1;
	n.kind = "exploded";
	r = queue_notify(db, cfg, &n);
	is_int(r, ERR_INVALID, "unknown kind: invalid");
	db_query_int(db, &after, "SELECT count(*) FROM mail", NULL);
	is_int(after, before, "no mail from errors");
}

static void test_rollback(sqlite3 *db, struct config *cfg)
{
	long long before = -1, after = -1, evb = -1, eva = -1, id;
	long long p = add_patch(db, "x: rolled back", NULL, "A", "a@x.test",
				"rb@x.test", NULL);
	struct notice n = {.patch_id = p, .kind = "reverted"};

	db_query_int(db, &before, "SELECT count(*) FROM mail", NULL);
	db_query_int(db, &evb, "SELECT count(*) FROM events", NULL);
	db_begin(db);
	n.event_id = event_add(db, "test", "patch", p, "reverted", NULL);
	id = queue_notify(db, cfg, &n);
	ok(id > 0, "mail added inside the caller's transaction");
	db_rollback(db);
	db_query_int(db, &after, "SELECT count(*) FROM mail", NULL);
	db_query_int(db, &eva, "SELECT count(*) FROM events", NULL);
	is_int(after, before, "rollback of the caller's transaction: no mail");
	is_int(eva, evb, "... and no event");
	ok(sqlite3_get_autocommit(db),
	   "compose_notice neither began nor committed");
}

/* Mail per chain of events: an unsent mail about a patch is amended. */
static void test_chain(sqlite3 *db, struct config *cfg)
{
	long long p, q, a, b, c, d, ev1, ev2, count = -1;
	char *msg, *v, *id1, *id2;

	p = add_patch(db, "mm: fix the pages", "PATCH 6.1", "Ann",
		      "Ann@Example.test", "mm.1@kernel.test", NULL);
	/* flagged, then dropped, in one transaction, as a revert does it */
	db_begin(db);
	ev1 = event_add(db, "test", "patch", p, "flagged", NULL);
	struct notice n1 = {.patch_id = p,
			    .event_id = ev1,
			    .kind = "flagged",
			    .what = "Your patch was flagged broken.",
			    .why = "It breaks user-copy.",
			    .log_excerpt = "FAIL: user-copy\n"};
	a = queue_notify(db, cfg, &n1);
	id1 = mail_text(db, a, "message_id");
	ev2 = event_add(db, "test", "patch", p, "dropped", NULL);
	struct notice n2 = {.patch_id = p,
			    .event_id = ev2,
			    .kind = "dropped",
			    .what = "Your patch was dropped.",
			    .why = "Bisection 3 found it."};
	b = queue_notify(db, cfg, &n2);
	db_commit(db);
	is_int(b, a, "flagged then dropped: one mail, amended");
	db_query_int(db, &count, "SELECT count(*) FROM mail WHERE patch_id = ?",
		     "i", p);
	is_int(count, 1, "... one row in the outbox");
	msg = mail_text(db, a, "headers_and_body");
	if (!msg)
		msg = xstrdup("");
	v = header(msg, "Subject");
	is_str(v,
	       "Patch \"mm: fix the pages\" has been dropped from the "
	       "6.1-stable queue",
	       "... its subject tells the last event");
	free(v);
	v = header(msg, "X-Stableq-Kind");
	is_str(v, "dropped", "... X-Stableq-Kind the last");
	free(v);
	is_int(mail_int(db, a, "event_id"), ev2, "... tied to the last event");
	id2 = mail_text(db, a, "message_id");
	is_str(id2, id1, "... its Message-ID kept");
	v = header(msg, "To");
	is_str(v, "Ann <Ann@Example.test>", "... to the author as written");
	free(v);
	like(msg, "\r\n== 1 of 2: flagged ==\r\n\r\nYour patch was flagged",
	     "body: the first event");
	like(msg, "It breaks user-copy.\r\n\r\nLog of the failing test:\r\n"
		  "\r\nFAIL: user-copy\r\n",
	     "body: its reason and log");
	like(msg, "\r\n== 2 of 2: dropped ==\r\n\r\nYour patch was dropped.",
	     "body: then the second");
	like(msg, "has been dropped from the 6.1-stable queue.\r\n",
	     "body: says where the patch stands");
	like(msg, "This is a note to let you know that the patch titled\r\n"
		  "\r\n    mm: fix the pages\r\n",
	     "body: the patch titled, as stable maintainers write");
	like(msg, "event ", "footer: the events");
	free(msg);
	free(id1);
	free(id2);
	v = mail_text(db, a, "chain");
	like(v, "\"kind\":\"flagged\"", "chain: stored, first event");
	like(v, "\"kind\":\"dropped\"", "chain: second event");
	free(v);
	db_query_int(db, &count,
		     "SELECT count(*) FROM events WHERE subject_kind = 'mail'"
		     " AND subject_id = ? AND kind = 'amended'",
		     "i", a);
	is_int(count, 1, "the amendment is an event");

	/* another patch of the same author: a mail of its own */
	q = add_patch(db, "mm: and the folios", NULL, "Ann", "ann@example.test",
		      NULL, NULL);
	struct notice n3 = {.patch_id = q, .kind = "dropped"};
	c = enqueue(db, cfg, &n3);
	ok(c > 0 && c != a, "another patch: its own mail");

	/* a mail the relay may have taken is never amended */
	db_exec(db, "UPDATE mail SET state = 'sending' WHERE id = ?", "i", a);
	struct notice n4 = {.patch_id = p, .kind = "reverted"};
	d = enqueue(db, cfg, &n4);
	ok(d > 0 && d != a, "'sending': a new mail, not an amendment");
	db_exec(db, "UPDATE mail SET state = 'sent' WHERE id IN (?, ?)", "ii",
		a, d);
	struct notice n5 = {.patch_id = p, .kind = "held"};
	c = enqueue(db, cfg, &n5);
	ok(c > 0 && c != a && c != d, "'sent': a new mail");
	msg = mail_text(db, c, "headers_and_body");
	ok(msg && !strstr(msg, "== 1 of"), "... telling one event");
	v = msg ? header(msg, "Subject") : NULL;
	is_str(v,
	       "Patch \"mm: fix the pages\" is held in the 6.1-stable queue",
	       "... held: 'is held in'");
	free(v);
	free(msg);
}

/* Subjects: prefixes stripped, the branch named as maintainers do. */
static void test_subjects(sqlite3 *db, struct config *cfg)
{
	static const struct {
		const char *subject, *kind, *branch, *want;
	} cases[] = {
		{"Re: [PATCH 6.1 2/3] fs: fix", "dropped", "linux-6.1.y",
		 "Patch \"fs: fix\" has been dropped from the 6.1-stable queue"},
		{"[PATCH AUTOSEL 6.1 03/20] [RFC] RE: Fwd: x: y", "reverted",
		 "linux-6.1.y",
		 "Patch \"x: y\" has been reverted from the 6.1-stable tree"},
		{"x: y", "rejected", "linux-5.15.y",
		 "Patch \"x: y\" has been rejected for the 5.15-stable queue"},
		{"x: y", "flagged", "main",
		 "Patch \"x: y\" has been flagged as broken in the main queue"},
		{"[only brackets]", "held", "linux-6.1.y",
		 "Patch \"[only brackets]\" is held in the 6.1-stable queue"},
	};
	char *branch = cfg->branch;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		long long p = add_patch(db, cases[i].subject, NULL, "A",
					"a@x.test", NULL, NULL);
		struct notice n = {.patch_id = p, .kind = cases[i].kind};
		cfg->branch = (char *)cases[i].branch;
		long long id = enqueue(db, cfg, &n);
		char *msg = mail_text(db, id, "headers_and_body");
		char *v = msg ? header(msg, "Subject") : NULL;
		is_str(v, cases[i].want, "subject %zu", i);
		free(v);
		free(msg);
	}
	cfg->branch = branch;

	/* hostile: encoded words and line ends from the patch stay text */
	long long p = add_patch(db,
				"x\"\r\nBcc: evil@attacker.test\r\n\r\nbody "
				"=?UTF-8?Q?=0D=0ABcc:_e@attacker.test?=",
				NULL, "A", "a@x.test", NULL, NULL);
	struct notice n = {.patch_id = p, .kind = "dropped"};
	long long id = enqueue(db, cfg, &n);
	char *msg = mail_text(db, id, "headers_and_body");
	char *v = msg ? header(msg, "Subject") : NULL, *d;
	ok(msg && !strstr(msg, "\nBcc:"), "hostile subject: no header added");
	like(v, "=?UTF-8?B?", "hostile subject: '=?' makes it encoded");
	d = v ? decode2047(v) : NULL;
	is_str(d,
	       "Patch \"x\" Bcc: evil@attacker.test body "
	       "=?UTF-8?Q?=0D=0ABcc:_e@attacker.test?=\" has been dropped "
	       "from the 6.1-stable queue",
	       "... and decodes to the text, encoded words not decoded");
	ok(msg && wire_ok(msg, 78, 1), "... headers ASCII within 78");
	free(v);
	free(d);
	free(msg);
}

static void test_backoff(void)
{
	is_int(outbox_backoff(30, 1), 30, "backoff after attempt 1: base");
	is_int(outbox_backoff(30, 2), 60, "after attempt 2: doubled");
	is_int(outbox_backoff(30, 3), 120, "after attempt 3");
	is_int(outbox_backoff(30, 8), 3840, "after attempt 8: 30 * 2^7");
	is_int(outbox_backoff(30, 0), 30, "attempt 0 counts as 1");
	is_int(outbox_backoff(0, 5), 0, "base 0: no wait");
	is_int(outbox_backoff(30, 20), OUTBOX_BACKOFF_MAX, "capped");
	is_int(outbox_backoff(1, 1000), OUTBOX_BACKOFF_MAX, "no overflow");
	is_int(outbox_backoff(2147483647, 2), OUTBOX_BACKOFF_MAX,
	       "no overflow with a huge base");
}

static void test_delivery_failures(sqlite3 *db, struct config *cfg)
{
	long long p, a, b, t0;
	char *s;
	int port, ret;

	db_exec(db, "UPDATE mail SET state = 'sent' WHERE state = 'queued'",
		NULL);
	p = add_patch(db, "x: deliver me", NULL, "A", "a@x.test", NULL, NULL);
	struct notice n = {.patch_id = p, .kind = "dropped"};
	a = enqueue(db, cfg, &n);
	n.patch_id = add_patch(db, "x: and me", NULL, "A", "a@x.test", NULL,
			       NULL);
	b = enqueue(db, cfg, &n);

	/* no relay configured */
	set_str(&cfg->smtp_url, "");
	ret = outbox_deliver(db, cfg, 0);
	is_int(ret, 0, "no smtp_url: nothing sent");
	is_int(mail_int(db, a, "attempts"), 0, "no smtp_url: no attempt");

	/* inside a transaction: refused */
	set_str(&cfg->smtp_url, "smtp://127.0.0.1:1");
	db_begin(db);
	ret = outbox_deliver(db, cfg, 0);
	db_rollback(db);
	is_int(ret, ERR_CONFLICT, "delivery inside a transaction is refused");

	/* a relay nobody listens on */
	port = free_port();
	s = xstrfmt("smtp://127.0.0.1:%d", port);
	set_str(&cfg->smtp_url, s);
	free(s);
	cfg->mail_backoff = 30;
	cfg->mail_max_attempts = 2;
	t0 = (long long)time(NULL);
	ret = outbox_deliver(db, cfg, 0);
	is_int(ret, 0, "unreachable relay: nothing sent");
	s = mail_text(db, a, "state");
	is_str(s, "queued", "unreachable relay: the mail stays queued");
	free(s);
	is_int(mail_int(db, a, "attempts"), 1, "... with one attempt");
	s = mail_text(db, a, "last_error");
	like(s, "127.0.0.1", "... and the error recorded");
	like(s, "connect", "... saying it could not connect");
	free(s);
	ok(mail_int(db, a, "next_attempt_at") >= t0 + 30,
	   "... next attempt after the backoff");
	is_int(mail_int(db, b, "attempts"), 0,
	       "relay down ends the pass: the next mail is not tried");
	ret = outbox_deliver(db, cfg, 0);
	is_int(mail_int(db, a, "attempts"), 1,
	       "a mail in backoff is not tried again early");
	is_int(mail_int(db, b, "attempts"), 1, "the other due mail is");

	/* a crash left it 'sending': retried at once */
	db_exec(db, "UPDATE mail SET state = 'sending' WHERE id = ?", "i", a);
	outbox_deliver(db, cfg, 0);
	is_int(mail_int(db, a, "attempts"), 2,
	       "'sending' from a crash is retried");
	s = mail_text(db, a, "state");
	is_str(s, "failed", "after mail_max_attempts: failed");
	free(s);
	{
		long long ev = 0;
		db_query_int(db, &ev,
			     "SELECT count(*) FROM events WHERE subject_kind ="
			     " 'mail' AND subject_id = ? AND kind = 'failed'",
			     "i", a);
		is_int(ev, 1, "failure is an event");
	}

	/* another deliverer holds the lock: hands off */
	{
		char *lock = xstrfmt("%s/db-outbox.lock", tmpdir);
		int fd = open(lock, O_RDWR | O_CREAT, 0644);
		ok(fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0,
		   "test holds the outbox lock");
		db_exec(db, "UPDATE mail SET next_attempt_at = 0 WHERE id = ?",
			"i", b);
		ret = outbox_deliver(db, cfg, 0);
		is_int(ret, 0, "locked: returns at once");
		is_int(mail_int(db, b, "attempts"), 1, "locked: nothing tried");
		close(fd);
		free(lock);
		outbox_deliver(db, cfg, 0);
		is_int(mail_int(db, b, "attempts"), 2, "unlocked: tried again");
	}

	/* invalid mail is never tried */
	{
		long long inv = -1, att = -1;
		db_query_int(
			db, &inv,
			"SELECT count(*) FROM mail WHERE state = 'invalid'",
			NULL);
		db_query_int(db, &att,
			     "SELECT coalesce(sum(attempts), 0) FROM mail WHERE"
			     " state = 'invalid'",
			     NULL);
		ok(inv > 0 && att == 0, "invalid mail is never tried");
	}
	cfg->mail_max_attempts = 8;
}

static void test_smtp_timeout(void)
{
	int port, fd = silent_listener(&port), down = 0;
	struct smtp_opts o = {.connect_timeout_ms = 1000, .timeout_ms = 1500};
	const char *rcpt[] = {"a@x.test"};
	char *url = xstrfmt("smtp://127.0.0.1:%d", port);
	struct smtp *s = smtp_open(url, &o);
	struct timespec t0, t1;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = smtp_send(s, "f@x.test", rcpt, 1, "Subject: x\r\n\r\nx\r\n", 17,
			&down, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	is_int(ret, ERR_IO, "a relay that never answers: error");
	ok(secs >= 1.0 && secs < 10.0, "... after the timeout (%.1fs)", secs);
	ok(down, "... a failure of the relay, not of the message");
	like(err_msg(), "timed out", "... the error says it timed out");
	smtp_close(s);
	close(fd);
	free(url);

	char *r = smtp_url_redacted("smtp://user:secret@relay.test:587/x");
	is_str(r, "smtp://user@relay.test:587/x", "passwords are not shown");
	free(r);
	r = smtp_url_redacted("smtp://relay.test:25");
	is_str(r, "smtp://relay.test:25", "urls without one stay");
	free(r);
}

/* ---- the helper for tests/3-review/37-mail-smtp.t --------------------------------- */

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		fprintf(stderr, "%s\n", err_msg());
		exit(1);
	}
	return strbuf_detach(&sb, NULL);
}

static int helper_enqueue(int argc, char **argv)
{
	struct config cfg;
	sqlite3 *db;
	struct notice n = {0};
	char *log = NULL, *rev = NULL;
	long long id;
	int ret = 1;

	if (argc < 6) {
		fprintf(stderr,
			"usage: t-outbox.t enqueue DB CONF PATCH KIND "
			"[--what T] [--why T] [--log F] [--revert F]\n");
		return 2;
	}
	if (db_open(&db, argv[2]) < 0) {
		fprintf(stderr, "%s\n", err_msg());
		return 1;
	}
	if (config_load(&cfg, argv[3]) < 0) {
		fprintf(stderr, "%s\n", err_msg());
		config_free(&cfg);
		db_close(db);
		return 1;
	}
	n.patch_id = atoll(argv[4]);
	n.kind = argv[5];
	for (int i = 6; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--what"))
			n.what = argv[i + 1];
		else if (!strcmp(argv[i], "--why"))
			n.why = argv[i + 1];
		else if (!strcmp(argv[i], "--log"))
			n.log_excerpt = log = slurp(argv[i + 1]);
		else if (!strcmp(argv[i], "--revert"))
			n.revert_patch = rev = slurp(argv[i + 1]);
	}
	if (db_begin(db) < 0)
		goto fail;
	n.event_id =
		event_add(db, "test", "patch", n.patch_id, n.kind, "mail test");
	if (n.event_id < 0 || (id = queue_notify(db, &cfg, &n)) < 0 ||
	    db_commit(db) < 0)
		goto fail;
	printf("%lld\n", id);
	ret = 0;
out:
	free(log);
	free(rev);
	db_close(db);
	config_free(&cfg);
	return ret;
fail:
	fprintf(stderr, "enqueue: %s\n", err_msg());
	db_rollback(db);
	goto out;
}

int main(int argc, char **argv)
{
	struct config cfg;
	sqlite3 *db = NULL;
	char *path;

	if (argc > 1 && !strcmp(argv[1], "enqueue"))
		return helper_enqueue(argc, argv);

	log_init(0, 0);
	if (!mkdtemp(tmpdir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	path = xstrfmt("%s/db", tmpdir);
	ok(db_open(&db, path) == 0, "a real SQLite store in %s", tmpdir);
	free(path);
	if (!db) {
		diag("%s", err_msg());
		return done_testing();
	}
	config_load(&cfg, NULL);
	set_str(&cfg.mail_from, "stableq test <stableq@stableq.test>");

	test_compose(db, &cfg);
	test_hostile_text(db, &cfg);
	test_invalid(db, &cfg);
	test_errors(db, &cfg);
	test_rollback(db, &cfg);
	test_chain(db, &cfg);
	test_subjects(db, &cfg);
	test_backoff();
	test_delivery_failures(db, &cfg);
	test_smtp_timeout();

	db_close(db);
	config_free(&cfg);
	/* the store, its WAL and the lock file */
	{
		static const char *const files[] = {"db", "db-wal", "db-shm",
						    "db-outbox.lock"};
		for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
			char *f = xstrfmt("%s/%s", tmpdir, files[i]);
			unlink(f);
			free(f);
		}
		rmdir(tmpdir);
	}
	return done_testing();
}
