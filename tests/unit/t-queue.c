/* t-queue.c: a patch's life: every transition queue_set_state() allows and refuses. */
#include "check-int.h"
#include "db.h"
#include "file.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

/*
 * The life of DESIGN.md, written out again here (not read from queue.c):
 * want[from] lists the states a patch may move to from there.
 */
static const char *const want[PS_COUNT] = {
	[PS_IMPORTED] = "checked queued held rejected broken dropped released",
	[PS_CHECKED] = "checked queued held rejected broken dropped released",
	[PS_QUEUED] = "checked held rejected broken dropped released",
	[PS_HELD] = "checked queued broken dropped rejected",
	[PS_REJECTED] = "checked queued held dropped released",
	[PS_BROKEN] = "dropped reverted",
	[PS_DROPPED] = "",
	[PS_RELEASED] = "broken reverted",
	[PS_REVERTED] = "",
};

static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *s = list; (s = strstr(s, name)); s += n)
		if ((s == list || s[-1] == ' ') && (!s[n] || s[n] == ' '))
			return 1;
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/t-queue.XXXXXX", *reason = NULL;
	struct branch_ctx bc;
	long long id, ev, n;
	enum patch_state s;
	int bad = 0;

	if (!mkdtemp(dir))
		return 1;
	tq_open(&bc, dir, "");

	for (int i = 0; i < PS_COUNT; i++)
		is_int(queue_state_parse(queue_state_name(i)), i, "state %s parses back",
		       queue_state_name(i));
	is_int(queue_state_parse("limbo"), -1, "an unknown state name: -1");
	is_int(queue_state_parse(NULL), -1, "NULL: -1");
	is_str(queue_state_name(PS_COUNT), "?", "an out of range state: ?");

	id = tq_add(&bc, "p1", "[PATCH] lib: fix", "", "lib.c", 3);
	ok(id > 0, "a patch");
	ok(queue_get_state(bc.db, id, &s) == 0 && s == PS_IMPORTED,
	   "it starts imported");

	/* every (from, to): force from, ask for to */
	for (int from = 0; from < PS_COUNT; from++) {
		for (int to = 0; to < PS_COUNT; to++) {
			int allowed = listed(want[from], queue_state_name(to));
			db_exec(bc.db,
				"UPDATE patches SET state = ? WHERE id = ?",
				"ti", queue_state_name(from), id);
			db_query_int(bc.db, &n, "SELECT COUNT(*) FROM events",
				     NULL);
			ev = queue_set_state(bc.db, id, to, "why", "tester");
			queue_get_state(bc.db, id, &s);
			if (allowed && (ev <= 0 || (int)s != to)) {
				bad++;
				diag("%s -> %s refused: %s", queue_state_name(from),
				     queue_state_name(to), err_msg());
			}
			if (!allowed && (ev != ERR_CONFLICT || (int)s != from)) {
				bad++;
				diag("%s -> %s allowed", queue_state_name(from),
				     queue_state_name(to));
			}
		}
	}
	is_int(bad, 0, "each of the %d transitions is allowed or refused as"
		       " the life says", PS_COUNT * PS_COUNT);

	db_exec(bc.db, "UPDATE patches SET state = 'queued' WHERE id = ?", "i",
		id);
	ev = queue_set_state(bc.db, id, PS_BROKEN, "boots no more", "tester");
	ok(ev > 0, "queued -> broken returns an event id");
	db_query_text(bc.db, &reason,
		      "SELECT state_reason FROM patches WHERE id = ?", "i", id);
	is_str(reason, "boots no more", "... the reason is stored");
	free(reason);
	reason = NULL;
	db_query_text(bc.db, &reason, "SELECT detail FROM events WHERE id = ?",
		      "i", ev);
	is_str(reason, "queued -> broken: boots no more", "... the event says from, to and why");
	free(reason);
	reason = NULL;
	db_query_text(bc.db, &reason, "SELECT actor FROM events WHERE id = ?",
		      "i", ev);
	is_str(reason, "tester", "... and who");
	free(reason);
	is_int(queue_set_state(bc.db, id, PS_QUEUED, NULL, "tester"),
	       ERR_CONFLICT, "broken -> queued: ERR_CONFLICT");
	like(err_msg(), "cannot go from broken to queued", "... naming both states");
	is_int(queue_set_state(bc.db, 9999, PS_QUEUED, NULL, "tester"),
	       ERR_NOTFOUND, "an unknown patch: ERR_NOTFOUND");
	like(err_msg(), "patch 9999: no such patch", "... saying so");

	/* a database error is never reported as a missing patch */
	ok(db_exec(bc.db, "ALTER TABLE patches RENAME TO patches_away", NULL) >=
		   0,
	   "the patches table is away (renamed)");
	{
		struct check_row r;
		json_t *j = queue_patch_json(bc.db, id, 0);
		ok(!j && err_last() == ERR_IO,
		   "queue_patch_json: a database error is ERR_IO, not ERR_NOTFOUND");
		ok(!strstr(err_msg(), "no such patch"), "... not 'no such patch': %s",
		   err_msg());
		is_int(check_row_load(bc.db, id, &r), ERR_IO,
		       "check_row_load: ERR_IO, not ERR_NOTFOUND");
		ok(!strstr(err_msg(), "no such patch"), "... not 'no such patch': %s",
		   err_msg());
		check_row_release(&r);
		json_decref(j);
	}

	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
