/* review.c: replies read as a person reads them (NAKs, regressions, drop requests, retractions, reports), and applied to patches. */
#include "review.h"
#include "ctx.h"
#include "db.h"
#include "err.h"
#include "event.h"
#include "mime.h"
#include "queue.h"
#include "review-int.h"
#include "revert.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUOTE_LINES 20
#define QUOTE_BYTES 2048
/* a version range named by #regzbot, kept as written up to this */
#define RANGE_MAX 64

/*
 * Drop requests, matched without case. object: what must follow the
 * phrase for it to be about the patch ("please drop this", "please drop
 * it", not "please drop the lock"); anchored: only at the start of a line
 * or a sentence ("Do not apply", not "we do not apply the quirk").
 */
static const struct {
	const char *text;
	int object, anchored;
} drop_phrases[] = {
	{ "please drop", 1, 0 },
	{ "pls drop", 1, 0 },
	{ "can you drop", 1, 0 },
	{ "could you drop", 1, 0 },
	{ "can you please drop", 1, 0 },
	{ "could you please drop", 1, 0 },
	{ "please don't apply", 0, 0 },
	{ "please do not apply", 0, 0 },
	{ "please don't queue", 0, 0 },
	{ "please do not queue", 0, 0 },
	{ "please don't take", 0, 0 },
	{ "please do not take", 0, 0 },
	{ "please don't backport", 0, 0 },
	{ "please do not backport", 0, 0 },
	{ "please revert", 0, 0 },
	{ "do not apply", 0, 1 },
	{ "don't apply", 0, 1 },
	{ "should not be backported", 0, 0 },
	{ "shouldn't be backported", 0, 0 },
	{ "must not be backported", 0, 0 },
};

/* What may follow "please drop" for it to ask for the patch's drop. */
static const char *const drop_objects[] = {
	"this", "it", "that", "these", "those", "them", "the patch",
	"the series", "the commit", "the backport", "patch", "from", NULL,
};

/* "<verb> my NAK": a retraction; "NAK <word>" too. */
static const char *const withdraw_verbs[] = {
	"withdraw", "withdrawing", "ignore", "disregard", "retract",
	"retracting", "revoke", "scratch", "take back", "taking back", NULL,
};
static const char *const withdraw_after[] = {
	"withdrawn", "retracted", "revoked", "is withdrawn", "is retracted",
	NULL,
};

static int is_word_char(int c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* s[0..n) starts with w, without case, w ending at a word's edge. */
static int starts_word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	return n >= k && !strncasecmp(s, w, k) &&
	       (n == k || !is_word_char(s[k]));
}

/* The spaces and tabs at the start of s[0..n) skipped. */
static const char *skip_blank(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* "not ", "n't ", "never " just before pos (after start): negated. */
static int negated_before(const char *start, const char *pos)
{
	static const char *const neg[] = { "not ", "n't ", "never ", "no ",
					   NULL };

	for (int i = 0; neg[i]; i++) {
		size_t k = strlen(neg[i]);
		if ((size_t)(pos - start) >= k &&
		    !strncasecmp(pos - k, neg[i], k))
			return 1;
	}
	return 0;
}

/*
 * NAK or NACK at the start of t[0..n) (NAKed, Nacked, NACKing ...; "NAK?"
 * asks, it does not say), or a Nacked-by: trailer.
 */
static int nak_line(const char *t, size_t n)
{
	size_t k;

	if (n >= 10 && !strncasecmp(t, "nacked-by:", 10))
		return 1;
	if (n >= 4 && !strncasecmp(t, "nack", 4))
		k = 4;
	else if (n >= 3 && !strncasecmp(t, "nak", 3))
		k = 3;
	else
		return 0;
	/* a suffix: any case after NACK, only after an upper-case NAK
	 * ("Naked" is a word of its own) */
	if (k == 4 || !memcmp(t, "NAK", 3)) {
		static const char *const suffix[] = { "ed", "'ed", "ing",
						      "'ing", "'d", NULL };
		for (int i = 0; suffix[i]; i++)
			if (starts_word(t + k, n - k, suffix[i])) {
				k += strlen(suffix[i]);
				break;
			}
	}
	if (k < n && is_word_char(t[k]))
		return 0;
	return !(k < n && t[k] == '?');
}

/* "ignore my NAK", "I withdraw my earlier NACK", "NAK withdrawn" */
static int withdraw_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;
		if ((i && is_word_char(s[i - 1])) ||
		    !(starts_word(s + i, n - i, "nak") ||
		      starts_word(s + i, n - i, "nack")))
			continue;
		k = tolower((unsigned char)s[i + 2]) == 'c' ? 4 : 3;
		/* NAK withdrawn */
		const char *after = skip_blank(s + i + k, s + n);
		for (int a = 0; withdraw_after[a]; a++)
			if (starts_word(after, (size_t)(s + n - after),
					withdraw_after[a]))
				return 1;
		/* <verb> my [earlier|previous|last] NAK */
		const char *p = s + i;
		static const char *const adj[] = { "earlier ", "previous ",
						   "last ", "", NULL };
		for (int j = 0; adj[j]; j++) {
			size_t al = strlen(adj[j]) + 3;
			if ((size_t)(p - s) < al ||
			    strncasecmp(p - al, "my ", 3) ||
			    strncasecmp(p - al + 3, adj[j], al - 3))
				continue;
			const char *verb_end = p - al;
			while (verb_end > s && verb_end[-1] == ' ')
				verb_end--;
			for (int v = 0; withdraw_verbs[v]; v++) {
				size_t vl = strlen(withdraw_verbs[v]);
				const char *vs = verb_end - vl;
				if ((size_t)(verb_end - s) < vl ||
				    strncasecmp(vs, withdraw_verbs[v], vl) ||
				    (vs > s && is_word_char(vs[-1])))
					continue;
				return !negated_before(s, vs);
			}
		}
	}
	return 0;
}

/* A drop phrase at s + i is at a line's or a sentence's start. */
static int sentence_start(const char *s, size_t i)
{
	while (i && s[i - 1] == ' ')
		i--;
	return !i || strchr(".!?:;,", s[i - 1]);
}

static int drop_line(const char *s, size_t n)
{
	for (size_t d = 0; d < sizeof(drop_phrases) / sizeof(drop_phrases[0]);
	     d++) {
		size_t k = strlen(drop_phrases[d].text);
		for (size_t i = 0; i + k <= n; i++) {
			if (strncasecmp(s + i, drop_phrases[d].text, k) ||
			    (i && is_word_char(s[i - 1])) ||
			    (i + k < n && is_word_char(s[i + k])))
				continue;
			if (drop_phrases[d].anchored && !sentence_start(s, i))
				continue;
			if (negated_before(s, s + i))
				continue;
			if (drop_phrases[d].object) {
				const char *o = skip_blank(s + i + k, s + n);
				size_t on = (size_t)(s + n - o);
				int found = !on || !is_word_char(*o) ||
					    isdigit((unsigned char)*o);
				for (int j = 0; !found && drop_objects[j]; j++)
					found = starts_word(o, on, drop_objects[j]);
				if (!found)
					continue;
			}
			return 1;
		}
	}
	return 0;
}

/*
 * "#regzbot introduced: <sha>", "#regzbot ^introduced <sha>", or a version
 * range ("v6.1.192..v6.1.193", kept as written): 1 with *out set.
 */
static int regzbot(const char *t, size_t n, char **out)
{
	const char *p = t, *end = t + n, *tok;
	size_t k;

	if (!starts_word(p, n, "#regzbot"))
		return 0;
	p = skip_blank(p + 8, end);
	if (p < end && *p == '^')
		p++;
	if (!starts_word(p, (size_t)(end - p), "introduced"))
		return 0;
	p += 10;
	if (p < end && *p == ':')
		p++;
	tok = p = skip_blank(p, end);
	while (p < end && !isspace((unsigned char)*p))
		p++;
	k = (size_t)(p - tok);
	/* a sentence's full stop or comma after the sha */
	while (k && strchr(".,;", tok[k - 1]))
		k--;
	if (k >= 7 && k <= 40 && strspn(tok, "0123456789abcdefABCDEF") >= k) {
		free(*out);
		*out = xstrndup(tok, k);
		for (char *c = *out; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		return 1;
	}
	for (size_t i = 0; i + 1 < k; i++) {
		if (tok[i] != '.' || tok[i + 1] != '.')
			continue;
		/* a range of versions or commits: its characters only */
		if (k > RANGE_MAX ||
		    strspn(tok, "0123456789abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ.-_^~") < k)
			return 0;
		free(*out);
		*out = xstrndup(tok, k);
		return 1;
	}
	return 0;
}

/* The signature line ("-- ", or "--" whose space a mailer ate). */
static int signature(const char *s, size_t n)
{
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
		n--;
	return n == 2 && s[0] == '-' && s[1] == '-' ;
}

void review_read(struct review *r, const struct patch *reply)
{
	const char *s = reply->message ? reply->message : "";
	const char *end = s + strlen(s);
	struct strbuf q = STRBUF_INIT;
	struct report_reader rr;
	int lines = 0;

	memset(r, 0, sizeof(*r));
	report_reader_init(&rr, &r->report);
	/* the message starts with the subject line: skip it */
	s = memchr(s, '\n', (size_t)(end - s));
	s = s ? s + 1 : end;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t n = e ? (size_t)(e - s) : (size_t)(end - s);
		const char *t = skip_blank(s, s + n);
		size_t tn = (size_t)(s + n - t);

		if (signature(s, n))
			break;
		s = e ? e + 1 : end;
		/* a quote, however indented, is what someone else said */
		if (tn && *t == '>')
			continue;
		if (withdraw_line(t, tn))
			r->says |= REVIEW_WITHDRAW;
		else if (nak_line(t, tn))
			r->says |= REVIEW_NAK;
		if (regzbot(t, tn, &r->regression))
			r->says |= REVIEW_REGRESSION;
		if (drop_line(t, tn))
			r->says |= REVIEW_DROP;
		report_reader_line(&rr, &r->report, e ? e - n : end - n, n);
		/* the reply's own words, not what it quotes */
		if (tn && lines < QUOTE_LINES && q.len < QUOTE_BYTES) {
			int cut = utf8_cut(t, tn, QUOTE_BYTES - q.len);
			strbuf_addstr(&q, "> ");
			mime_clean_line(&q, t, (size_t)cut);
			strbuf_addch(&q, '\n');
			lines++;
		}
	}
	if (report_reader_finish(&rr, &r->report))
		r->says |= REVIEW_REPORT;
	r->quote = strbuf_detach(&q, NULL);
}

void review_release(struct review *r)
{
	if (!r)
		return;
	free(r->regression);
	free(r->quote);
	free(r->report.summary);
	memset(r, 0, sizeof(*r));
}

static const char *const trailer_kinds[] = { "reviewed_by", "acked_by",
					     "tested_by", NULL };

/* What a review does (review_apply()): the reviews row's effect. */
enum effect { EF_RECORDED, EF_HELD, EF_FLAGGED, EF_NOTED, EF_WITHDRAWN };
static const char *const effect_names[] = {
	[EF_RECORDED] = "recorded", [EF_HELD] = "held",
	[EF_FLAGGED] = "flagged",   [EF_NOTED] = "noted",
	[EF_WITHDRAWN] = "withdrawn",
};

int review_is_negative(const struct review *r)
{
	return (r->says & (REVIEW_NAK | REVIEW_DROP | REVIEW_REGRESSION)) != 0;
}

/* "Name <addr> (Message-Id <id>)", each part made one safe line */
static void add_who(struct strbuf *sb, const struct patch *reply)
{
	const char *name = reply->author_name, *mail = reply->author_email,
		   *mid = reply->message_id;

	if (name && *name) {
		mime_clean_line(sb, name, strlen(name));
		strbuf_addch(sb, ' ');
	}
	strbuf_addch(sb, '<');
	mime_clean_line(sb, mail ? mail : "?", mail ? strlen(mail) : 1);
	strbuf_addstr(sb, "> (Message-Id <");
	mime_clean_line(sb, mid ? mid : "?", mid ? strlen(mid) : 1);
	strbuf_addstr(sb, ">)");
}

/*
 * What a negative reply says, for the reason of the hold or the flag:
 * "NAK in a reply from Name <addr> (Message-Id <id>)[, #regzbot
 * introduced: sha]"
 */
static void add_what(struct strbuf *sb, const struct review *r,
		     const struct patch *reply)
{
	strbuf_addstr(sb, r->says & REVIEW_NAK	       ? "NAK"
			  : r->says & REVIEW_REGRESSION ? "regression reported"
							: "drop requested");
	strbuf_addstr(sb, " in a reply from ");
	add_who(sb, reply);
	if (r->regression) {
		strbuf_addstr(sb, ", #regzbot introduced: ");
		mime_clean_line(sb, r->regression, strlen(r->regression));
	}
}

/* 1 when patch_id has a row for this reply already (applied once). */
static int review_seen(sqlite3 *db, long long patch_id, const char *mid)
{
	long long n = 0;

	return db_query_int(db, &n,
			    "SELECT count(*) FROM reviews WHERE patch_id = ?"
			    " AND message_id = ?",
			    "it", patch_id, mid ? mid : "") == 0 &&
	       n > 0;
}

/* 1 when addr NAKed patch_id in an earlier reply not taken back since. */
static int nak_standing(sqlite3 *db, long long patch_id, const char *addr)
{
	long long naks = 0;

	if (!addr || !*addr)
		return 0;
	return db_query_int(db, &naks,
			    "SELECT count(*) FROM reviews WHERE patch_id = ?"
			    " AND author_email = ? COLLATE NOCASE AND (says &"
			    " 1) AND id > coalesce((SELECT max(id) FROM"
			    " reviews WHERE patch_id = ?1 AND author_email ="
			    " ?2 COLLATE NOCASE AND effect = 'withdrawn'), 0)",
			    "it", patch_id, addr) == 0 &&
	       naks > 0;
}

/* A released patch reported broken: flagged on its own branch, untrusted. */
static int flag_released(struct branch_ctx *bc, long long patch_id,
			 const struct patch *reply, const struct review *r)
{
	struct branch_ctx on;
	struct strbuf why = STRBUF_INIT;
	char *key = NULL;
	long long ev;
	int ret;

	if ((ret = queue_patch_branch(bc->db, patch_id, &key)) < 0)
		return ret;
	ret = branch_ctx_for(bc, key, &on);
	free(key);
	if (ret < 0)
		return ret;
	add_what(&why, r, reply);
	strbuf_addf(&why,
		    " against released patch %lld; a mail from the list"
		    " (untrusted): it reverts nothing by itself, the"
		    " maintainer decides (stableq revert %lld):\n%s",
		    patch_id, patch_id, r->quote ? r->quote : "");
	ev = flag_patch_locked(&on, patch_id, why.buf, NULL, FLAG_UNTRUSTED);
	strbuf_release(&why);
	return ev < 0 ? (int)ev : 0;
}

/* What a negative reply does to the patch in state s. */
static int apply_negative(struct branch_ctx *bc, long long patch_id,
			  enum patch_state s, const struct patch *reply,
			  const struct review *r, enum effect *effect)
{
	struct strbuf why = STRBUF_INIT;
	int by = 0, ret = 0;
	long long ev;

	switch (s) {
	case PS_RELEASED:
		*effect = EF_FLAGGED;
		return flag_released(bc, patch_id, reply, r);
	case PS_HELD:
		if ((by = queue_held_by(bc->db, patch_id)) < 0)
			return by;
		/* fall through */
	case PS_IMPORTED:
	case PS_CHECKED:
	case PS_QUEUED:
		break;
	default: /* broken, dropped, reverted, rejected: out already */
		*effect = EF_RECORDED;
		return 0;
	}
	add_what(&why, r, reply);
	strbuf_addf(&why,
		    "; held until a maintainer decides (stableq override %lld"
		    " --reason TEXT queues it):\n%s",
		    patch_id, r->quote ? r->quote : "");
	ev = queue_hold(bc->db, patch_id, QUEUE_HOLD_REPLY, why.buf, bc->actor);
	strbuf_release(&why);
	if (ev < 0)
		return (int)ev;
	*effect = by == QUEUE_HOLD_REPLY ? EF_NOTED : EF_HELD;
	return ret;
}

/* A NAK taken back by its author: shown beside the hold, which stays. */
static int apply_withdraw(struct branch_ctx *bc, long long patch_id,
			  const struct patch *reply, enum effect *effect)
{
	struct strbuf note = STRBUF_INIT;
	long long ev;
	int by;

	*effect = EF_RECORDED;
	if (!nak_standing(bc->db, patch_id, reply->author_email))
		return 0; /* nothing of theirs to take back */
	*effect = EF_WITHDRAWN;
	strbuf_addstr(&note, "NAK withdrawn by ");
	add_who(&note, reply);
	if ((by = queue_held_by(bc->db, patch_id)) < 0)
		return by;
	if (by == QUEUE_HOLD_REPLY) {
		strbuf_addf(&note,
			    "; the hold stays until a maintainer decides"
			    " (stableq override %lld --reason TEXT)",
			    patch_id);
		ev = queue_hold(bc->db, patch_id, QUEUE_HOLD_REPLY, note.buf,
				bc->actor);
	} else {
		ev = event_add(bc->db, bc->actor, "patch", patch_id, "review",
			       "%s", note.buf);
	}
	strbuf_release(&note);
	return ev < 0 ? (int)ev : 0;
}

int review_apply(struct branch_ctx *bc, long long patch_id,
		 const struct patch *reply, const struct review *r,
		 int *held, int *trailers)
{
	sqlite3 *db = bc->db;
	enum effect effect = EF_RECORDED;
	enum patch_state s;
	int ret;

	*held = 0;
	*trailers = 0;
	/* a reply that says no gives no Tested-by, whatever it carries */
	for (size_t i = 0; !review_is_negative(r) && i < reply->ntags; i++) {
		const struct patch_tag *t = &reply->tags[i];
		for (int k = 0; trailer_kinds[k]; k++) {
			if (strcmp(t->kind, trailer_kinds[k]))
				continue;
			if ((ret = queue_add_trailer(db, patch_id, t->kind,
						     t->value, t->extra)) < 0)
				return ret;
			*trailers += ret;
		}
	}
	if (!(r->says & (REVIEW_NAK | REVIEW_DROP | REVIEW_REGRESSION |
			 REVIEW_WITHDRAW)) ||
	    review_seen(db, patch_id, reply->message_id))
		return 0;
	if ((ret = queue_get_state(db, patch_id, &s)) < 0)
		return ret;
	if (review_is_negative(r))
		ret = apply_negative(bc, patch_id, s, reply, r, &effect);
	else
		ret = apply_withdraw(bc, patch_id, reply, &effect);
	if (ret < 0)
		return ret;
	*held = effect == EF_HELD || effect == EF_FLAGGED;
	ret = db_exec(db,
		      "INSERT INTO reviews (patch_id, message_id, author_email,"
		      " says, regression, effect) VALUES (?, ?, ?, ?, ?, ?)",
		      "ittitt", patch_id,
		      reply->message_id ? reply->message_id : "",
		      reply->author_email, (long long)r->says, r->regression,
		      effect_names[effect]);
	return ret < 0 ? ret : 0;
}
