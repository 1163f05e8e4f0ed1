/* review.c: replies read for NAKs, regressions, drop requests and review trailers. */
#include "review.h"
#include "ctx.h"
#include "err.h"
#include "mime.h"
#include "queue.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define QUOTE_LINES 20
#define QUOTE_BYTES 2048

/* drop requests, matched without case inside a line */
static const char *const drop_phrases[] = {
	"please drop", "drop this", "please don't apply", "please do not apply",
	"do not apply", "don't apply this", "please revert", "should not be backported",
	NULL,
};

static int has_word(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp(s + i, w, k))
			continue;
		if ((i == 0 || !isalnum((unsigned char)s[i - 1])) &&
		    (i + k == n || !isalnum((unsigned char)s[i + k])))
			return 1;
	}
	return 0;
}

static int has_ci(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);

	for (size_t i = 0; i + k <= n; i++)
		if (!strncasecmp(s + i, w, k))
			return 1;
	return 0;
}

/* "#regzbot introduced: <sha>" (or "introduced <sha>"): the sha, or 0 */
static int regzbot(const char *s, size_t n, char **sha)
{
	const char *p = s, *end = s + n;
	size_t k;

	while (p < end && isspace((unsigned char)*p))
		p++;
	if ((size_t)(end - p) < 19 || strncasecmp(p, "#regzbot introduced", 19))
		return 0;
	p += 19;
	while (p < end && (*p == ':' || isspace((unsigned char)*p)))
		p++;
	k = 0;
	while (p + k < end && isxdigit((unsigned char)p[k]))
		k++;
	if (k < 8 || k > 40)
		return 0;
	free(*sha);
	*sha = xstrndup(p, k);
	for (char *c = *sha; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return 1;
}

void review_read(struct review *r, const struct patch *reply)
{
	const char *s = reply->message ? reply->message : "";
	const char *end = s + strlen(s);
	struct strbuf q = STRBUF_INIT;
	int lines = 0;

	memset(r, 0, sizeof(*r));
	/* the message starts with the subject line: skip it */
	s = memchr(s, '\n', (size_t)(end - s));
	s = s ? s + 1 : end;
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		size_t n = e ? (size_t)(e - s) : (size_t)(end - s);
		unsigned says = 0;

		if (n == 3 && !memcmp(s, "-- ", 3))
			break; /* the signature */
		if (n && s[0] != '>') {
			if (has_ci(s, n < 12 ? n : 12, "nacked-by:") ||
			    has_word(s, n, "NAK") || has_word(s, n, "NACK"))
				says |= REVIEW_NAK;
			if (regzbot(s, n, &r->regression))
				says |= REVIEW_REGRESSION;
			for (int i = 0; drop_phrases[i]; i++)
				if (has_ci(s, n, drop_phrases[i]))
					says |= REVIEW_DROP;
		}
		/* the reply's own words, not what it quotes */
		if (n && s[0] != '>' && lines < QUOTE_LINES &&
		    q.len < QUOTE_BYTES) {
			size_t room = QUOTE_BYTES - q.len;
			int cut = utf8_cut(s, n, room);
			strbuf_addstr(&q, "> ");
			mime_clean_line(&q, s, (size_t)cut);
			strbuf_addch(&q, '\n');
			lines++;
		}
		r->says |= says;
		s = e ? e + 1 : end;
	}
	r->quote = strbuf_detach(&q, NULL);
}

void review_release(struct review *r)
{
	if (!r)
		return;
	free(r->regression);
	free(r->quote);
	memset(r, 0, sizeof(*r));
}

static const char *const trailer_kinds[] = { "reviewed_by", "acked_by",
					     "tested_by", NULL };

int review_apply(struct branch_ctx *bc, long long patch_id,
		 const struct patch *reply, const struct review *r,
		 int *held, int *trailers)
{
	sqlite3 *db = bc->db;
	const char *actor = bc->actor;
	enum patch_state s;
	struct strbuf why = STRBUF_INIT;
	int ret;

	*held = 0;
	*trailers = 0;
	for (size_t i = 0; i < reply->ntags; i++) {
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
	if (!r->says)
		return 0;
	if ((ret = queue_get_state(db, patch_id, &s)) < 0)
		return ret;
	if (s != PS_IMPORTED && s != PS_CHECKED && s != PS_QUEUED)
		return 0;
	strbuf_addf(&why, "%s in a reply from ",
		    r->says & REVIEW_NAK	  ? "NAK"
		    : r->says & REVIEW_REGRESSION ? "regression reported"
						  : "drop requested");
	if (reply->author_name)
		strbuf_addf(&why, "%s ", reply->author_name);
	strbuf_addf(&why, "<%s> (Message-Id <%s>); the maintainer decides"
		    " (override or revert):\n%s",
		    reply->author_email ? reply->author_email : "?",
		    reply->message_id ? reply->message_id : "?",
		    r->quote ? r->quote : "");
	long long ev = queue_set_state(db, patch_id, PS_HELD, why.buf, actor);
	strbuf_release(&why);
	if (ev < 0)
		return (int)ev;
	*held = 1;
	return 0;
}
