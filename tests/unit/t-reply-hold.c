/* t-reply-hold.c: queue_hold() and review_apply() on a real store: who holds a patch, replies applied once, retractions, released patches. */
#include "review.h"
#include "tap.h"
#include "tqueue.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct patch *reply(const char *from, const char *id, const char *body)
{
	char *mail = xstrfmt("From: %s\nSubject: Re: [PATCH] lib\n"
			     "Message-Id: <%s>\nIn-Reply-To: <p@t>\n\n%s",
			     from, id, body);
	struct patch *p = NULL;

	if (patch_parse_at(&p, mail, strlen(mail), id, 0, 1,
			   PATCH_ANY_MESSAGE) < 0) {
		printf("Bail out! %s: %s\n", id, err_msg());
		exit(1);
	}
	free(mail);
	return p;
}

/* review_read() then review_apply() of one reply to patch id */
static int apply(struct branch_ctx *bc, long long id, const char *from,
		 const char *mid, const char *body, int *held, int *trailers)
{
	struct patch *p = reply(from, mid, body);
	struct review r;
	int ret;

	review_read(&r, p);
	ret = review_apply(bc, id, p, &r, held, trailers);
	review_release(&r);
	patch_free(p);
	return ret;
}

static char *reason_of(struct branch_ctx *bc, long long id)
{
	char *s = NULL;

	db_query_text(bc->db, &s, "SELECT state_reason FROM patches WHERE id = ?",
		      "i", id);
	return s;
}

static long long count(struct branch_ctx *bc, const char *sql, long long id)
{
	long long n = -1;

	db_query_int(bc->db, &n, sql, "i", id);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/t-reply-hold.XXXXXX", *why;
	const char *nina = "Nina Nak <nina@example.org>";
	struct branch_ctx bc;
	enum patch_state s;
	long long a, b, c, d;
	int held, tr;

	if (!mkdtemp(dir))
		return 1;
	tq_open(&bc, dir, "");
	a = tq_add(&bc, "a", "[PATCH] lib: fix a", "", "lib.c", 3);
	b = tq_add(&bc, "b", "[PATCH] lib: fix b", "", "lib.c", 13);
	c = tq_add(&bc, "c", "[PATCH] lib: fix c", "", "lib.c", 23);
	d = tq_add(&bc, "d", "[PATCH] lib: fix d", "", "lib.c", 33);
	for (long long i = a; i <= d; i++)
		queue_set_state(bc.db, i, PS_QUEUED, NULL, "test");

	/* a NAK holds, as a reply */
	is_int(apply(&bc, a, nina, "n1@t", "NAK: breaks suspend.\n\nTested-by:"
					   " Nina Nak <nina@example.org>\n",
		     &held, &tr),
	       0, "review_apply: a NAK");
	ok(held && !tr, "... held, and no Tested-by from a NAK");
	is_int(queue_held_by(bc.db, a), QUEUE_HOLD_REPLY, "... a reply's hold");
	why = reason_of(&bc, a);
	like(why, "NAK in a reply from Nina Nak <nina@example.org> (Message-Id"
		  " <n1@t>)",
	     "... the reason names the reply");
	free(why);
	is_int(count(&bc, "SELECT count(*) FROM patch_tags WHERE patch_id = ? AND"
			  " kind = 'tested_by'", a),
	       0, "... no tested_by tag");
	is_int(queue_hold(bc.db, a, QUEUE_HOLD_CHECK, "a check's reason", "test"),
	       0, "queue_hold: the checks cannot take a reply's hold over");
	is_int(queue_held_by(bc.db, a), QUEUE_HOLD_REPLY, "... it stays a reply's");

	/* the same reply again: nothing */
	is_int(apply(&bc, a, nina, "n1@t", "NAK: breaks suspend.\n", &held, &tr),
	       0, "the same reply applied again");
	ok(!held, "... holds nothing new");
	is_int(count(&bc, "SELECT count(*) FROM reviews WHERE patch_id = ?", a),
	       1, "... one reviews row");

	/* a retraction by someone else, then by the NAK's author */
	apply(&bc, a, "Rita <rita@example.org>", "w0@t", "Please ignore my NAK.\n",
	      &held, &tr);
	why = reason_of(&bc, a);
	ok(why && !strstr(why, "withdrawn"), "a retraction by another address: not"
					     " shown");
	free(why);
	apply(&bc, a, nina, "w1@t", "NAK withdrawn.\n", &held, &tr);
	why = reason_of(&bc, a);
	like(why, "NAK withdrawn by Nina Nak <nina@example.org> (Message-Id"
		  " <w1@t>)",
	     "the NAK's author withdraws it: shown beside the hold");
	ok(why && strstr(why, "NAK in a reply") < strstr(why, "NAK withdrawn"),
	   "... after the NAK");
	free(why);
	ok(queue_get_state(bc.db, a, &s) == 0 && s == PS_HELD,
	   "... the hold stays");
	is_int(count(&bc, "SELECT count(*) FROM reviews WHERE patch_id = ? AND"
			  " effect = 'withdrawn'", a),
	       1, "... recorded as withdrawn");

	/* a check's hold becomes a reply's */
	ok(queue_hold(bc.db, b, QUEUE_HOLD_CHECK, "superseded-by-revert", "test") >
		   0,
	   "queue_hold: the checks hold b");
	is_int(queue_held_by(bc.db, b), QUEUE_HOLD_CHECK, "... a check's hold");
	apply(&bc, b, "Dora <dora@example.org>", "d1@t", "Please drop this patch.\n",
	      &held, &tr);
	ok(held, "a drop request on a check-held patch: held");
	is_int(queue_held_by(bc.db, b), QUEUE_HOLD_REPLY, "... now a reply's hold");
	why = reason_of(&bc, b);
	like(why, "superseded-by-revert\ndrop requested in a reply from Dora",
	     "... the check's reason kept, the reply's after it");
	free(why);

	/* any other move ends the hold */
	ok(queue_set_state(bc.db, b, PS_QUEUED, "overridden", "test") > 0,
	   "b queued");
	is_int(queue_held_by(bc.db, b), 0, "... held by nobody");
	is_int(count(&bc, "SELECT count(*) FROM patches WHERE id = ? AND hold IS"
			  " NULL", b),
	       1, "... patches.hold cleared");

	/* a released patch: flagged broken */
	queue_set_state(bc.db, c, PS_RELEASED, NULL, "test");
	is_int(apply(&bc, c, "Reg <reg@example.org>", "r1@t",
		     "It hangs at boot.\n\n#regzbot introduced: 0123456789ab\n",
		     &held, &tr),
	       0, "a regzbot report on a released patch");
	ok(queue_get_state(bc.db, c, &s) == 0 && s == PS_BROKEN,
	   "... flagged broken");
	is_int(count(&bc, "SELECT count(*) FROM flags WHERE patch_id = ?", c), 1,
	       "... one flag");
	is_int(count(&bc, "SELECT count(*) FROM flags WHERE patch_id = ? AND"
			  " reason LIKE '%> It hangs at boot.%'",
		     c),
	       1, "... quoting the mail");

	/* neither negative nor a retraction: trailers only */
	apply(&bc, d, "Rita <rita@example.org>", "rv@t",
	      "No NAK from me, this is fine.\n\nReviewed-by: Rita"
	      " <rita@example.org>\n",
	      &held, &tr);
	ok(!held && tr == 1, "\"No NAK from me\" with a Reviewed-by: one trailer,"
			     " no hold");
	ok(queue_get_state(bc.db, d, &s) == 0 && s == PS_QUEUED, "... d queued");

	is_int(queue_hold(bc.db, d, 7, "x", "test"), ERR_INVALID,
	       "queue_hold: an unknown kind is refused");
	is_int(queue_held_by(bc.db, 999999), ERR_NOTFOUND,
	       "queue_held_by: an unknown patch");
	err_clear();

	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
