/* t-ctx.c: branch contexts: another branch's is a copy, the caller's stays. */
#include "check.h"
#include "ctx.h"
#include "intake.h"
#include "queue.h"
#include "tap.h"
#include "tqueue.h"

#include <string.h>

struct heard {
	char keys[64];
	int rets[4];
	int n;
};

static void each(const char *key, int ret, const struct check_summary *sum,
		 void *ctx)
{
	struct heard *h = ctx;

	if (!sum || h->n >= 4)
		return;
	strncat(h->keys, key, sizeof(h->keys) - strlen(h->keys) - 2);
	strcat(h->keys, " ");
	h->rets[h->n++] = ret;
}

int main(void)
{
	char dir[] = "/tmp/t-ctx.XXXXXX", *conf;
	struct branch_ctx bc, other, own;
	struct intake_result res = { 0 };
	struct heard h = { "", { 0 }, 0 };
	long long id61 = 0, id612 = 0, p;
	const char *tree61;

	if (!mkdtemp(dir))
		return 1;
	conf = xstrfmt("[branch 6.1]\ntree_dir = %s/linux\n"
		       "queue_dir = %s/q-6.1\nbuild_dir = %s/b-6.1\n"
		       "coverage_build_dir = %s/c-6.1\n"
		       "[branch 6.12]\nbranch = linux-6.12.y\n"
		       "tree_dir = %s/linux-6.12\nqueue_dir = %s/q-6.12\n"
		       "build_dir = %s/b-6.12\n"
		       "coverage_build_dir = %s/c-6.12\n",
		       dir, dir, dir, dir, dir, dir, dir, dir);
	tq_open(&bc, dir, conf);
	free(conf);
	tree61 = bc.cfg.tree_dir;

	ok(branch_ctx_branch_id(&bc, "6.1", &id61) == 0 &&
		   branch_ctx_branch_id(&bc, "6.12", &id612) == 0 &&
		   id61 != id612,
	   "both branches are in the store");
	is_str(bc.cfg.branch_key, "6.1", "the first branch is selected");
	ok(bc.branch_id == id61, "... with its row's id");

	ok(branch_ctx_for(&bc, "6.12", &other) == 0, "branch_ctx_for 6.12");
	is_str(other.cfg.branch_key, "6.12", "... the copy has 6.12 selected");
	ok(other.branch_id == id612, "... its id");
	like(other.cfg.tree_dir, "/linux-6.12", "... its tree");
	ok(other.db == bc.db && other.actor == bc.actor,
	   "... the same store and actor");
	is_str(bc.cfg.branch_key, "6.1", "the original still has 6.1");
	ok(bc.branch_id == id61 && bc.cfg.tree_dir == tree61,
	   "... its id and tree");

	ok(branch_ctx_for(&bc, "9.9", &other) < 0, "an unknown key: negative");
	like(err_msg(), "unknown branch '9.9'", "... saying so");
	ok(bc.branch_id == id61 && !strcmp(bc.cfg.branch_key, "6.1"),
	   "... the original unchanged");

	/* checks of a patch on 6.12 run on 6.12's context, not bc's */
	ok(branch_ctx_for(&bc, "6.12", &other) == 0, "6.12 again");
	p = tq_add(&other, "p", "[PATCH 6.12] lib: p", "", "lib.c", 2);
	res.ids = &p;
	res.nids = 1;
	ok(intake_check(&bc, &res, each, &h) == 0,
	   "intake_check of a 6.12 patch");
	is_str(h.keys, "6.12 ", "... checked on 6.12 only");
	is_int(h.rets[0], ERR_NOTFOUND, "... whose tree is not there");
	ok(bc.branch_id == id61 && !strcmp(bc.cfg.branch_key, "6.1") &&
		   bc.cfg.tree_dir == tree61,
	   "... and the caller's context still has 6.1");

	/* following a patch rewrites the context its owner passes */
	own = bc;
	own.branch_given = 1;
	ok(queue_follow_patch(&own, p) < 0,
	   "--branch 6.1: a 6.12 patch is refused");
	like(err_msg(), "in branch 6.12's queue, not 6.1's", "... saying why");
	ok(own.branch_id == id61, "... the context keeps 6.1");
	own.branch_given = 0;
	ok(queue_follow_patch(&own, p) == 0 && own.branch_id == id612 &&
		   !strcmp(own.cfg.branch_key, "6.12"),
	   "no --branch: the context follows the patch to 6.12");
	ok(bc.branch_id == id61 && !strcmp(bc.cfg.branch_key, "6.1"),
	   "... a copy it was, so bc still has 6.1");

	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
