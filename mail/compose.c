/* compose.c: a mail about a patch, composed into the outbox with its event. */
#include "address.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "log.h"
#include "mailhdr.h"
#include "mailtext.h"
#include "compose.h"
#include "outbox.h"
#include "strbuf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define SUBJECT_MAX_OCTETS 400
/* The failing test's log: its tail is what tells. */
#define LOG_MAX_OCTETS (32 * 1024)
#define REVERT_MAX_OCTETS (1024 * 1024)

/*
 * What a mail tells, in the words stable maintainers use: Patch "<subject>"
 * has been dropped from the 6.1-stable queue.
 */
static const struct kind {
	const char *name;
	const char *done; /* "Your patch was <done>." */
	const char *verb; /* Patch "x" <verb> the 6.1-stable <place> */
	const char *place;
} kinds[] = {
	{"flagged", "flagged as broken", "has been flagged as broken in the",
	 "queue"},
	{"dropped", "dropped from the stable queue",
	 "has been dropped from the", "queue"},
	{"reverted", "reverted from the stable branch",
	 "has been reverted from the", "tree"},
	{"held", "held back from the stable queue", "is held in the", "queue"},
	{"rejected", "rejected for the stable queue",
	 "has been rejected for the", "queue"},
	{"followups", "queued; upstream fixes of it are not",
	 "has upstream follow-up fixes missing from the", "queue"},
	{"proposed", "proposed for an automatic revert",
	 "is proposed for an automatic revert from the", "queue"},
};

/*
 * A queued mail not yet taken by a relay is amended by the next event
 * about the same patch, so that its author gets one mail per chain of
 * events (flagged, then dropped), not one per event.
 */
#define AMENDABLE "state = 'queued' AND hold IS NULL"

static const struct kind *kind_find(const char *name)
{
	for (size_t i = 0; name && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	return NULL;
}

static unsigned long long random64(void)
{
	unsigned long long r = 0;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		r = ((unsigned long long)ts.tv_nsec << 20) ^
		    (unsigned long long)ts.tv_sec ^
		    ((unsigned long long)getpid() << 40);
	}
	return r;
}

/* ---- body ------------------------------------------------------------ */

/*
 * Appends text to the wire form of the body: clean UTF-8, CRLF line ends,
 * lines longer than LINE_MAX_OCTETS broken at a character boundary.
 */
static void body_wire(struct strbuf *out, const char *text, size_t n)
{
	struct strbuf clean = STRBUF_INIT;
	size_t col = 0;

	text_clean(&clean, text, n, 0);
	for (size_t i = 0; i < clean.len;) {
		if (clean.buf[i] == '\n') {
			strbuf_addstr(out, "\r\n");
			col = 0;
			i++;
			continue;
		}
		size_t l =
			utf8_len((unsigned char *)clean.buf + i, clean.len - i);
		if (!l)
			l = 1;
		if (col + l > LINE_MAX_OCTETS) {
			strbuf_addstr(out, "\r\n");
			col = 0;
		}
		strbuf_add(out, clean.buf + i, l);
		col += l;
		i += l;
	}
	if (col)
		strbuf_addstr(out, "\r\n");
	strbuf_release(&clean);
}

/*
 * The failing test's log: its last LOG_MAX_LINES lines, at most
 * LOG_MAX_OCTETS (where a test's failure and its end show), with what was
 * left out said, the machine's text made harmless (text_clean_log()).
 */
static void body_log(struct strbuf *b, const char *log)
{
	size_t end = strlen(log), skip = 0, lines = 0, left = 0;

	while (end && log[end - 1] == '\n')
		end--;
	for (size_t i = end; i > 0; i--)
		if (log[i - 1] == '\n' && ++lines == LOG_MAX_LINES) {
			skip = i;
			break;
		}
	if (end - skip > LOG_MAX_OCTETS) {
		const char *nl;
		skip = end - LOG_MAX_OCTETS;
		nl = memchr(log + skip, '\n', end - skip);
		if (nl)
			skip = (size_t)(nl - log) + 1;
	}
	for (size_t i = 0; i < skip; i++)
		left += log[i] == '\n';
	if (skip)
		strbuf_addf(b,
			    "[... %zu earlier line%s (%zu bytes) of the log"
			    " left out ...]\n",
			    left, left == 1 ? "" : "s", skip);
	text_clean_log(b, log + skip, end - skip);
	strbuf_addch(b, '\n');
}

/* ---- composing --------------------------------------------------------- */

/* A text field of the notice's patch, NULL when there is none. */
static const char *row_str(const json_t *p, const char *col)
{
	return json_string_value(json_object_get(p, col));
}

/* Adds a Cc unless its address is unfit to send to (logged, left out). */
static void cc_add(struct mailboxes *cc, const char *name, const char *addr,
		   const char *source, long long patch)
{
	const char *why = addr_problem(addr);

	if (why) {
		char *shown = addr_shown(addr ? addr : name);
		log_warnx("patch %lld: mail: leaving out %s '%s': %s", patch,
			  source, shown, addr ? why : "no address");
		free(shown);
		return;
	}
	mailboxes_add_unique(cc, name, addr);
}

/* The Signed-off-by chain in trailer order, valid addresses only. */
static void add_signoffs(const json_t *p, long long patch, struct mailboxes *r)
{
	size_t i;
	const json_t *s;

	json_array_foreach(json_object_get(p, "signoffs"), i, s)
		cc_add(r, row_str(s, "name"), row_str(s, "email"),
		       "Signed-off-by", patch);
}

/*
 * One mail goes to mail_max_recipients people at most: the author (To)
 * first, then the Cc list in order (the Signed-off-by chain, then
 * mail_cc). A patch with 300 Signed-off-by lines is not a relay: the
 * Cc list is cut, and the mail is held until a maintainer has looked.
 * Returns the hold's reason (owned), or NULL within the limit.
 */
static char *cap_recipients(const struct config *cfg, const struct mailboxes *to,
			    struct mailboxes *cc)
{
	size_t max = cfg->mail_max_recipients > 0
			     ? (size_t)cfg->mail_max_recipients
			     : 0, wanted = to->n + cc->n, keep;

	if (!max || wanted <= max)
		return NULL;
	keep = max > to->n ? max - to->n : 0;
	for (size_t i = keep; i < cc->n; i++) {
		free(cc->v[i].name);
		free(cc->v[i].addr);
	}
	cc->n = keep;
	return xstrfmt("recipients: the patch names %zu people (author,"
		       " Signed-off-by chain, mail_cc), over"
		       " mail_max_recipients = %zu: Cc cut to the first %zu;"
		       " a maintainer releases it",
		       wanted, max, keep);
}

/* mail_cc, each entry checked; a list that does not parse is left out. */
static void add_mail_cc(struct mailboxes *cc, const char *list, long long patch)
{
	struct mailboxes l = {0};

	if (!list || !*list)
		return;
	if (address_parse(&l, list, strlen(list), 0, NULL) < 0) {
		log_warnx("patch %lld: mail: leaving out mail_cc: %s", patch,
			  err_msg());
		return;
	}
	for (size_t i = 0; i < l.n; i++)
		cc_add(cc, l.v[i].name, l.v[i].addr, "mail_cc", patch);
	mailboxes_release(&l);
}

/*
 * mail_from as one mailbox: *name and *addr malloc'd (*addr is the text
 * itself when it holds no address, so that the error can name it);
 * NULL, or why it is no address to send from.
 */
static char *parse_from(const char *from, char **name, char **addr)
{
	struct mailboxes l = {0};
	const char *why;
	char *shown, *invalid = NULL;

	*name = *addr = NULL;
	if (from &&
	    address_parse(&l, from, strlen(from), ADDRESS_ONE, NULL) < 0) {
		shown = addr_shown(from);
		invalid = xstrfmt("mail_from '%s': %s", shown, err_msg());
		free(shown);
		*addr = xstrdup(from);
		return invalid;
	}
	if (l.n) {
		*name = l.v[0].name;
		*addr = l.v[0].addr;
		l.v[0].name = l.v[0].addr = NULL;
	}
	mailboxes_release(&l);
	if (!*addr) {
		struct strbuf sb = STRBUF_INIT;
		strbuf_addstr(&sb, from ? from : "");
		strbuf_trim(&sb);
		*addr = strbuf_detach(&sb, NULL);
	}
	if ((why = addr_problem(*addr))) {
		shown = addr_shown(*addr);
		invalid = xstrfmt("mail_from address '%s': %s", shown, why);
		free(shown);
	}
	return invalid;
}

/* Reply and list prefixes a subject may still carry, as git am drops them. */
static const char *const reply_prefixes[] = {"re:", "fwd:", "fw:", "aw:"};

/* The patch's subject without "Re:" or "[PATCH 6.1 2/3]" in front. */
static void subject_strip(struct strbuf *sb)
{
	size_t i = 0, k;

	for (;;) {
		while (i < sb->len && sb->buf[i] == ' ')
			i++;
		for (k = 0;
		     k < sizeof(reply_prefixes) / sizeof(*reply_prefixes);
		     k++) {
			size_t l = strlen(reply_prefixes[k]);
			if (sb->len - i >= l &&
			    !strncasecmp(sb->buf + i, reply_prefixes[k], l))
				break;
		}
		if (k < sizeof(reply_prefixes) / sizeof(*reply_prefixes)) {
			i += strlen(reply_prefixes[k]);
			continue;
		}
		const char *rb = i < sb->len && sb->buf[i] == '['
					 ? memchr(sb->buf + i, ']', sb->len - i)
					 : NULL;
		/* a subject that is nothing but brackets keeps them */
		if (!rb || (size_t)(rb - sb->buf) + 1 >= sb->len)
			break;
		i = (size_t)(rb - sb->buf) + 1;
	}
	memmove(sb->buf, sb->buf + i, sb->len - i);
	strbuf_setlen(sb, sb->len - i);
}

/* "linux-6.1.y" as stable maintainers say it: "6.1-stable". Caller frees. */
static char *stable_name(const char *branch)
{
	size_t n = branch ? strlen(branch) : 0;

	if (n > 8 && !strncmp(branch, "linux-", 6) &&
	    !strcmp(branch + n - 2, ".y"))
		return xstrfmt("%.*s-stable", (int)(n - 8), branch + 6);
	return xstrdup(n ? branch : "stable");
}

/* A notice as one entry of mail.chain, its text made valid UTF-8. */
static json_t *notice_json(const struct notice *n)
{
	static const char *const keys[] = {"what", "why", "log", "revert",
					   "test"};
	const char *vals[] = {n->what, n->why, n->log_excerpt, n->revert_patch,
			      n->test};
	json_t *o = json_pack("{s:s, s:I}", "kind", n->kind, "event_id",
			      (json_int_t)n->event_id);

	for (size_t i = 0; i < sizeof(keys) / sizeof(*keys); i++) {
		struct strbuf sb = STRBUF_INIT;
		if (!vals[i] || !*vals[i])
			continue;
		/* the test's name is one line of the body */
		text_clean(&sb, vals[i], strlen(vals[i]),
			   !strcmp(keys[i], "test"));
		json_object_set_new(o, keys[i], json_stringn(sb.buf, sb.len));
		strbuf_release(&sb);
	}
	return o;
}

static const char *item_str(const json_t *it, const char *key)
{
	return json_string_value(json_object_get(it, key));
}

/* One event of the chain: what happened, why, the log, the revert. */
static void body_event(struct strbuf *b, const json_t *it)
{
	const struct kind *k = kind_find(item_str(it, "kind"));
	const char *what = item_str(it, "what"), *why = item_str(it, "why");
	const char *log = item_str(it, "log"), *rev = item_str(it, "revert");
	const char *test = item_str(it, "test");

	if (what)
		strbuf_addf(b, "%s\n", what);
	else
		strbuf_addf(b, "Your patch was %s.\n", k ? k->done : "");
	if (why) {
		strbuf_addstr(b, "\nWhy:\n\n");
		strbuf_addstr(b, why);
		if (b->buf[b->len - 1] != '\n')
			strbuf_addch(b, '\n');
	}
	if (log) {
		if (test && *test)
			strbuf_addf(b, "\nLog of the failing test, %s:\n\n",
				    test);
		else
			strbuf_addstr(b, "\nLog of the failing test:\n\n");
		body_log(b, log);
	}
	if (rev) {
		size_t len = strlen(rev);
		if (len > REVERT_MAX_OCTETS) {
			strbuf_addf(b,
				    "\nThe revert (%zu bytes) is too large to "
				    "quote here; it goes out with the next "
				    "release.\n",
				    len);
		} else {
			strbuf_addstr(b,
				      "\nThe revert, which goes out with the "
				      "next release:\n\n");
			strbuf_add(b, rev, len);
			if (rev[len - 1] != '\n')
				strbuf_addch(b, '\n');
		}
	}
}

static void compose_body(struct strbuf *b, const char *branch,
			 long long patch_id, const json_t *chain,
			 const json_t *p, const char *author,
			 const char *subject, const char *status)
{
	char host[256] = "localhost";
	size_t n = json_array_size(chain);

	if (gethostname(host, sizeof(host) - 1) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';

	if (author && *author)
		strbuf_addf(b, "Hello %s,\n\n", author);
	else
		strbuf_addstr(b, "Hello,\n\n");
	strbuf_addf(b,
		    "This is a note to let you know that the patch titled\n\n"
		    "    %s\n\n%s.\n\n",
		    subject, status);
	const char *msgid = row_str(p, "message_id");
	const char *upstream = row_str(p, "upstream");
	if (msgid_ok(msgid))
		strbuf_addf(b, "  Message-ID: <%s>\n", msgid);
	if (upstream && *upstream)
		strbuf_addf(b, "  upstream commit %s\n", upstream);
	strbuf_addf(b, "  stableq patch %lld, branch %s\n", patch_id, branch);
	for (size_t i = 0; i < n; i++) {
		const json_t *it = json_array_get(chain, i);
		if (n > 1)
			strbuf_addf(b, "\n== %zu of %zu: %s ==\n", i + 1, n,
				    item_str(it, "kind"));
		strbuf_addch(b, '\n');
		body_event(b, it);
	}
	/* the instance: host and branch (paths stay private) */
	strbuf_addf(b,
		    "\n-- \nstableq on %s for %s, the revert-first stable "
		    "queue.\nThis mail is automatic: patch %lld",
		    host, branch, patch_id);
	for (size_t i = 0; i < n; i++) {
		json_int_t ev = json_integer_value(
			json_object_get(json_array_get(chain, i), "event_id"));
		if (ev > 0)
			strbuf_addf(b, ", event %lld", (long long)ev);
	}
	strbuf_addf(b, ", %s\n",
		    item_str(json_array_get(chain, n - 1), "kind"));
}

/*
 * The chain this mail reports: an amendable mail's (whose id and
 * Message-ID come back in *amend and *msgid) plus n, or n alone.
 */
static json_t *chain_of(sqlite3 *db, const struct notice *n, long long *amend,
			char **msgid)
{
	json_t *row = db_row_json(db,
				  "SELECT id, message_id, chain FROM mail"
				  " WHERE patch_id = ? AND " AMENDABLE
				  " AND chain IS NOT NULL ORDER BY id DESC"
				  " LIMIT 1",
				  "i", n->patch_id);
	json_t *chain = NULL;

	*amend = 0;
	*msgid = NULL;
	if (row)
		chain = json_loads(row_str(row, "chain"), 0, NULL);
	if (json_is_array(chain)) {
		*amend = json_integer_value(json_object_get(row, "id"));
		*msgid = xstrdup(row_str(row, "message_id"));
	} else {
		json_decref(chain);
		chain = json_array();
	}
	json_decref(row);
	err_clear();
	json_array_append_new(chain, notice_json(n));
	return chain;
}

/* A notice's mail while compose_notice() makes it, phase by phase. */
struct draft {
	const struct notice *n;
	const struct kind *k;
	const json_t *p;       /* the patch's row (borrowed from n) */
	const char *branch;    /* the patch's own, else the configured one */
	time_t now;
	struct mailboxes to, cc, all;
	char *from_name, *from_addr;
	const char *domain;    /* of mail_from, for Message-IDs */
	char *invalid;         /* why it may not be sent, or NULL */
	char *hold;            /* why the recipients' guard holds it, or NULL */
	json_t *chain;         /* the events it reports */
	long long amend;       /* the unsent mail it replaces, or 0 */
	char *msgid;
	struct strbuf psubj;   /* the patch's subject, cleaned */
	char *stable, *status, *subject;
	struct strbuf msg;     /* headers, then the body on the wire */
};

/* Who gets it: the author (To), the Signed-off-by chain and mail_cc (Cc). */
static void draft_recipients(struct draft *d, const struct config *cfg)
{
	const char *author_name = row_str(d->p, "author_name");
	const char *author_email = row_str(d->p, "author_email");
	const char *why;

	d->invalid = parse_from(cfg->mail_from, &d->from_name, &d->from_addr);
	d->domain = d->invalid ? "localhost" : strrchr(d->from_addr, '@') + 1;
	why = addr_problem(author_email);
	if (why && !d->invalid) {
		char *a = addr_shown(author_email);
		d->invalid = xstrfmt("author address '%s': %s", a, why);
		free(a);
	}
	if (!why) {
		mailboxes_add_unique(&d->to, author_name, author_email);
		/* the author may recur in the chain, in another case too */
		mailboxes_add_unique(&d->all, NULL, author_email);
	}
	add_signoffs(d->p, d->n->patch_id, &d->cc);
	add_mail_cc(&d->cc, cfg->mail_cc, d->n->patch_id);
	{
		struct mailboxes kept = {0};
		for (size_t i = 0; i < d->cc.n; i++)
			if (!mailboxes_find(&d->all, d->cc.v[i].addr)) {
				mailboxes_add_unique(&d->all, NULL,
						     d->cc.v[i].addr);
				mailboxes_add_unique(&kept, d->cc.v[i].name,
						     d->cc.v[i].addr);
			}
		mailboxes_release(&d->cc);
		d->cc = kept;
	}
	d->hold = cap_recipients(cfg, &d->to, &d->cc);
}

/* Subject: Patch "x" has been dropped from the 6.1-stable queue */
static void draft_subject(struct draft *d)
{
	const char *s = row_str(d->p, "subject");

	text_clean(&d->psubj, s ? s : "", s ? strlen(s) : 0, 1);
	subject_strip(&d->psubj);
	utf8_truncate(&d->psubj, SUBJECT_MAX_OCTETS);
	strbuf_rtrim(&d->psubj);
	d->stable = stable_name(d->branch);
	d->status = xstrfmt("%s %s %s", d->k->verb, d->stable, d->k->place);
	d->subject = xstrfmt("Patch \"%s\" %s", d->psubj.buf, d->status);
}

/* The header: From, To, Cc, Subject, threading to the patch, stableq's own. */
static void draft_headers(struct draft *d)
{
	struct strbuf *msg = &d->msg;
	const char *pmsgid = row_str(d->p, "message_id");
	const char *pirt = row_str(d->p, "in_reply_to");

	if (!addr_problem(d->from_addr)) {
		char *fname = clean_header_text(d->from_name, NAME_MAX_OCTETS);
		struct mailbox f = {*fname ? fname : NULL, d->from_addr};
		hdr_mailboxes(msg, "From", &f, 1);
		free(fname);
	}
	hdr_mailboxes(msg, "To", d->to.v, d->to.n);
	hdr_mailboxes(msg, "Cc", d->cc.v, d->cc.n);
	hdr_simple(msg, "Subject", d->subject);
	strbuf_addstr(msg, "Date: ");
	rfc5322_date(msg, d->now);
	strbuf_addstr(msg, "\r\n");
	strbuf_addf(msg, "Message-ID: <%s>\r\n", d->msgid);
	if (msgid_ok(pmsgid)) {
		struct hdr h;
		char *ref;
		strbuf_addf(msg, "In-Reply-To: <%s>\r\n", pmsgid);
		hdr_start(&h, msg, "References");
		if (msgid_ok(pirt) && strcmp(pirt, pmsgid)) {
			ref = xstrfmt("<%s>", pirt);
			hdr_tok(&h, ref, strlen(ref));
			free(ref);
		}
		ref = xstrfmt("<%s>", pmsgid);
		hdr_tok(&h, ref, strlen(ref));
		free(ref);
		hdr_end(&h);
	}
	strbuf_addstr(msg, "MIME-Version: 1.0\r\n"
			   "Content-Type: text/plain; charset=UTF-8\r\n"
			   "Content-Transfer-Encoding: 8bit\r\n"
			   "Auto-Submitted: auto-generated\r\n");
	strbuf_addf(msg, "X-Stableq-Patch: %lld\r\nX-Stableq-Kind: %s\r\n",
		    d->n->patch_id, d->k->name);
	if (d->n->event_id > 0)
		strbuf_addf(msg, "X-Stableq-Event: %lld\r\n", d->n->event_id);
	strbuf_addstr(msg, "\r\n");
}

/* The body, after the header, on the wire. */
static void draft_body(struct draft *d)
{
	struct strbuf body = STRBUF_INIT;
	char *aname = clean_header_text(row_str(d->p, "author_name"),
					NAME_MAX_OCTETS);

	compose_body(&body, d->branch, d->n->patch_id, d->chain, d->p, aname,
		     d->psubj.buf, d->status);
	free(aname);
	body_wire(&d->msg, body.buf, body.len);
	strbuf_release(&body);
}

/*
 * Into the outbox: a new row, or the unsent mail of the same chain
 * rewritten; with the events of an amended, held or invalid mail. The
 * mail's id, or negative.
 */
static long long draft_store(sqlite3 *db, struct draft *d)
{
	const struct notice *n = d->n;
	json_t *arr = json_array();
	char *rcpt_json, *chain_json;
	long long id = 0, ev = 0;
	int ret;

	for (size_t i = 0; !d->invalid && i < d->to.n; i++)
		json_array_append_new(arr, json_string(d->to.v[i].addr));
	for (size_t i = 0; !d->invalid && i < d->cc.n; i++)
		json_array_append_new(arr, json_string(d->cc.v[i].addr));
	rcpt_json = json_dumps(arr, JSON_COMPACT);
	chain_json = json_dumps(d->chain, JSON_COMPACT);
	json_decref(arr);

	if (d->amend)
		ret = db_exec(
			db,
			"UPDATE mail SET event_id = COALESCE(NULLIF(?, 0),"
			" event_id), kind = ?, mail_from = ?, rcpt_to = ?,"
			" headers_and_body = ?, chain = ?, state = ?,"
			" last_error = ?, hold = COALESCE(?, hold) WHERE id = ?",
			"itttttttti", n->event_id, d->k->name, d->from_addr,
			rcpt_json, d->msg.buf, chain_json,
			d->invalid ? "invalid" : "queued", d->invalid, d->hold,
			d->amend);
	else
		ret = db_exec(db,
			      "INSERT INTO mail (patch_id, event_id, kind,"
			      " message_id, mail_from, rcpt_to,"
			      " headers_and_body, state, next_attempt_at,"
			      " last_error, chain, hold) VALUES (?, NULLIF(?, 0),"
			      " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			      "iittttttittt", n->patch_id, n->event_id,
			      d->k->name, d->msgid, d->from_addr, rcpt_json,
			      d->msg.buf, d->invalid ? "invalid" : "queued",
			      (long long)d->now, d->invalid, chain_json,
			      d->hold);
	free(rcpt_json);
	free(chain_json);
	if (ret < 0)
		return err_prefix(ret, "patch %lld: mail", n->patch_id);
	id = d->amend ? d->amend : db_last_id(db);
	if (d->amend)
		ev = event_add(db, "outbox", "mail", id, "amended",
			       "patch %lld: now %zu events, the last %s",
			       n->patch_id, json_array_size(d->chain),
			       d->k->name);
	if (ev >= 0 && d->hold && !d->invalid) {
		ev = event_add(db, "outbox", "mail", id, "held",
			       "patch %lld: %s", n->patch_id, d->hold);
		log_warnx("patch %lld: mail %lld held: %s", n->patch_id, id,
			  d->hold);
	}
	if (ev >= 0 && d->invalid) {
		log_warnx("patch %lld: mail %lld not sent: %s", n->patch_id, id,
			  d->invalid);
		ev = event_add(db, "outbox", "mail", id, "invalid",
			       "patch %lld: %s", n->patch_id, d->invalid);
	}
	return ev < 0 ? ev : id;
}

static void draft_release(struct draft *d)
{
	json_decref(d->chain);
	mailboxes_release(&d->to);
	mailboxes_release(&d->cc);
	mailboxes_release(&d->all);
	strbuf_release(&d->msg);
	strbuf_release(&d->psubj);
	free(d->from_name);
	free(d->from_addr);
	free(d->msgid);
	free(d->subject);
	free(d->status);
	free(d->stable);
	free(d->invalid);
	free(d->hold);
}

long long compose_notice(sqlite3 *db, const struct config *cfg,
		     const struct notice *n)
{
	struct draft d = {.n = n, .p = n ? n->patch : NULL, .now = time(NULL),
			  .msg = STRBUF_INIT, .psubj = STRBUF_INIT};
	long long id;

	d.k = kind_find(n ? n->kind : NULL);
	if (!d.k)
		return err_set(ERR_INVALID, "mail: unknown kind '%s'",
			       n && n->kind ? n->kind : "(null)");
	if (!json_is_object(d.p))
		return err_set(ERR_INVALID,
			       "mail: patch %lld: the notice does not carry"
			       " the patch",
			       n->patch_id);
	/* the patch's own branch names the queue; a patch of a store
	 * without branch rows is the configured branch's */
	d.branch = row_str(d.p, "branch");
	if (!d.branch || !*d.branch)
		d.branch = cfg->branch ? cfg->branch : "";

	draft_recipients(&d, cfg);
	/* the mail not yet sent about this patch, if any, grows by n */
	d.chain = chain_of(db, n, &d.amend, &d.msgid);
	draft_subject(&d);
	if (!d.msgid)
		d.msgid = xstrfmt("stableq.%lld.%016llx@%s", (long long)d.now,
				  random64(), d.domain);
	draft_headers(&d);
	draft_body(&d);
	id = draft_store(db, &d);
	draft_release(&d);
	return id;
}

/*
 * The Cc of a list mail: the patch's author and Signed-off-by chain, then
 * m->cc, each address once and none of To's, cut to mail_max_recipients.
 */
static void list_cc(const struct config *cfg, const struct list_mail *m,
		    const struct mailboxes *to, struct mailboxes *cc)
{
	struct mailboxes all = {0};
	size_t max = cfg->mail_max_recipients > 0
			     ? (size_t)cfg->mail_max_recipients
			     : 0;

	if (m->patch) {
		const char *a = row_str(m->patch, "author_email");
		if (a)
			cc_add(&all, row_str(m->patch, "author_name"), a,
			       "author", m->patch_id);
		add_signoffs(m->patch, m->patch_id, &all);
	}
	add_mail_cc(&all, m->cc, m->patch_id);
	for (size_t i = 0; i < all.n; i++)
		if (!mailboxes_find(to, all.v[i].addr))
			mailboxes_add_unique(cc, all.v[i].name, all.v[i].addr);
	mailboxes_release(&all);
	if (max && to->n + cc->n > max) {
		size_t keep = max > to->n ? max - to->n : 0;
		log_info("mail (%s, patch %lld): Cc cut from %zu to %zu"
			 " (mail_max_recipients = %zu)",
			 m->kind, m->patch_id, cc->n, keep, max);
		for (size_t i = keep; i < cc->n; i++) {
			free(cc->v[i].name);
			free(cc->v[i].addr);
		}
		cc->n = keep;
	}
}

long long compose_list(sqlite3 *db, const struct config *cfg,
			  const struct list_mail *m, char **message_id)
{
	struct mailboxes to = {0}, cc = {0};
	struct strbuf msg = STRBUF_INIT;
	char *from_name = NULL, *from_addr = NULL, *msgid = NULL;
	char *invalid = NULL, *rcpt_json = NULL;
	const char *domain;
	json_t *arr = NULL;
	time_t now = time(NULL);
	long long id = 0;
	int ret;

	if (message_id)
		*message_id = NULL;
	invalid = parse_from(cfg->mail_from, &from_name, &from_addr);
	domain = invalid ? "localhost" : strrchr(from_addr, '@') + 1;
	if (!invalid && (!m->to || address_parse(&to, m->to, strlen(m->to), 0,
						 NULL) < 0 || !to.n))
		invalid = xstrfmt("list address '%s': %s", m->to ? m->to : "",
				  to.n ? err_msg() : "no address");
	list_cc(cfg, m, &to, &cc);
	msgid = xstrfmt("stableq.%s.%lld.%016llx@%s", m->kind, (long long)now,
			random64(), domain);
	if (!invalid) {
		char *fname = clean_header_text(from_name, NAME_MAX_OCTETS);
		struct mailbox f = {*fname ? fname : NULL, from_addr};
		hdr_mailboxes(&msg, "From", &f, 1);
		free(fname);
	}
	hdr_mailboxes(&msg, "To", to.v, to.n);
	hdr_mailboxes(&msg, "Cc", cc.v, cc.n);
	{
		char *subject = clean_header_text(m->subject, 2 * LINE_MAX_OCTETS);
		hdr_simple(&msg, "Subject", subject);
		free(subject);
	}
	strbuf_addstr(&msg, "Date: ");
	rfc5322_date(&msg, now);
	strbuf_addstr(&msg, "\r\n");
	strbuf_addf(&msg, "Message-ID: <%s>\r\n", msgid);
	if (msgid_ok(m->in_reply_to))
		strbuf_addf(&msg, "In-Reply-To: <%s>\r\nReferences: <%s>\r\n",
			    m->in_reply_to, m->in_reply_to);
	for (size_t i = 0; m->headers && m->headers[i]; i++) {
		char *h = clean_header_text(m->headers[i], LINE_MAX_OCTETS);
		strbuf_addf(&msg, "%s\r\n", h);
		free(h);
	}
	strbuf_addstr(&msg, "MIME-Version: 1.0\r\n"
			    "Content-Type: text/plain; charset=UTF-8\r\n"
			    "Content-Transfer-Encoding: 8bit\r\n");
	strbuf_addf(&msg, "X-Stableq-Kind: %s\r\n\r\n", m->kind);
	body_wire(&msg, m->body, strlen(m->body));

	arr = json_array();
	for (size_t i = 0; !invalid && i < to.n; i++)
		json_array_append_new(arr, json_string(to.v[i].addr));
	for (size_t i = 0; !invalid && i < cc.n; i++)
		json_array_append_new(arr, json_string(cc.v[i].addr));
	rcpt_json = json_dumps(arr, JSON_COMPACT);
	ret = db_exec(db,
		      "INSERT INTO mail (patch_id, kind, message_id, mail_from,"
		      " rcpt_to, headers_and_body, state, next_attempt_at,"
		      " last_error) VALUES (NULLIF(?, 0), ?, ?, ?, ?, ?, ?, ?, ?)",
		      "ittttttit", m->patch_id, m->kind, msgid,
		      from_addr ? from_addr : "", rcpt_json, msg.buf,
		      invalid ? "invalid" : "queued", (long long)now, invalid);
	if (ret < 0)
		goto out;
	id = db_last_id(db);
	if (invalid)
		log_warnx("mail %lld (%s) not sent: %s", id, m->kind, invalid);
	if (message_id) {
		*message_id = msgid;
		msgid = NULL;
	}
out:
	mailboxes_release(&to);
	mailboxes_release(&cc);
	strbuf_release(&msg);
	free(from_name);
	free(from_addr);
	free(msgid);
	free(invalid);
	free(rcpt_json);
	json_decref(arr);
	return ret < 0 ? ret : id;
}

char *compose_message_id(sqlite3 *db, long long mail_id)
{
	char *id = NULL;

	db_query_text(db, &id, "SELECT message_id FROM mail WHERE id = ?", "i",
		      mail_id);
	return id;
}

/* Outside text into a regzbot mail: no "#regzbot" command of its own. */
static void add_inert(struct strbuf *out, const char *text)
{
	for (const char *s = text ? text : ""; *s; s++) {
		strbuf_addch(out, *s);
		if (*s == '#' && !strncasecmp(s + 1, "regzbot", 7))
			strbuf_addch(out, ' ');
	}
}

static int is_commit_id(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdefABCDEF", s[i]))
			return 0;
	return n >= 7 && n <= 40;
}

long long compose_regzbot(sqlite3 *db, const struct config *cfg,
			  const struct regzbot_report *r, char **message_id)
{
	struct strbuf subject = STRBUF_INIT, body = STRBUF_INIT;
	long long id;

	if (message_id)
		*message_id = NULL;
	if (!is_commit_id(r->introduced))
		return err_set(ERR_INVALID,
			       "patch %lld: '%.60s' is not a commit id for"
			       " regzbot",
			       r->patch_id, r->introduced ? r->introduced : "");
	strbuf_addf(&subject, "[REGRESSION] %s-stable: ", r->branch);
	add_inert(&subject, r->subject);
	strbuf_addf(&body,
		    "stableq, testing the %s-stable queue, found a regression"
		    " and confirmed\nits culprit both ways:\n\n  ",
		    r->branch);
	add_inert(&body, r->subject);
	strbuf_addf(&body, "\n  upstream commit %s", r->introduced);
	if (r->stable_commit && is_commit_id(r->stable_commit))
		strbuf_addf(&body, "\n  %s-stable commit %s", r->branch,
			    r->stable_commit);
	strbuf_addstr(&body, "\n\n");
	add_inert(&body, r->why);
	strbuf_addstr(&body, "\n\nIts author has been told; the revert follows"
			     " the stable queue's revert\nrules.\n\n");
	/* a paragraph of its own, as regzbot reads commands */
	if (r->in_reply_to) {
		strbuf_addf(&body, "#regzbot ^introduced: %s\n", r->introduced);
	} else {
		strbuf_addf(&body, "#regzbot introduced: %s\n", r->introduced);
		strbuf_addf(&body, "#regzbot title: %s-stable: ", r->branch);
		add_inert(&body, r->subject);
		strbuf_addch(&body, '\n');
	}
	id = compose_list(db, cfg,
			  &(struct list_mail){ .kind = "regzbot",
					       .patch_id = r->patch_id,
					       .to = r->to,
					       .subject = subject.buf,
					       .in_reply_to = r->in_reply_to,
					       .body = body.buf },
			  message_id);
	strbuf_release(&subject);
	strbuf_release(&body);
	return id;
}
