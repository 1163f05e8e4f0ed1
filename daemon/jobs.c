/* jobs.c: the daemon's job table. Adding a job is one row. */
#include "jobs.h"
#include "bisect.h"
#include "candidate.h"
#include "check.h"
#include "intake.h"
#include "mailin.h"
#include "outbox.h"
#include "rc.h"
#include "repo.h"
#include "revert.h"
#include "verify.h"

/*
 * The check step (the patches left 'imported') waits while a POST
 * /patches of this process checks the patches it just imported: they are
 * 'imported' until its checks store their verdicts, and the step would
 * check them (and the whole queue) again, as the daemon.
 */
static int check_step_due(struct branch_ctx *bc, long long *id)
{
	*id = 0;
	return intake_running() ? 0 : check_due(bc, id);
}

const struct job jobs[] = {
	/* name            due()                  argv                                          s     builds once interrupted, summary */
	{ "tree init",     repo_init_due,         { "tree", "init" },                           3600, 0, 0, NULL },
	{ "import",        intake_queue_due,      { "import", "{queue_dir}" },                  600,  0, 1, NULL },
	{ "mail intake",   mailin_due,            { "intake" },                                 600,  0, 0, NULL },
	{ "check",         check_step_due,        { "check" },                                  3600, 0, 0, NULL },
	{ "revert resume", revert_resume_due,     { "revert", "--resume" },                     3600, 0, 0, NULL },
	{ "confirm",       revert_confirm_due,    { "revert", "--confirm", "{id}" },            0,    1, 0, NULL, NULL },
	{ "candidate",     candidate_pending_due, { "candidate", "--run", "{id}" },             0,    1, 0, candidate_interrupted, candidate_summary },
	/* one step of a bisection at a time: another branch's step may come between */
	{ "bisect",        bisect_due,            { "bisect", "{id}", "--steps", "1" },         0,    2, 0, bisect_interrupted, bisect_summary_of },
	{ "revert",        revert_due,            { "revert", "{id}", "--auto" },               0,    1, 0, NULL },
	{ "revert propose", revert_propose_due,   { "revert", "{id}", "--propose" },            60,   0, 0, NULL },
	{ "revert grace",  revert_grace_due,      { "revert", "{id}", "--auto" },               0,    1, 0, NULL },
	{ "revert plan",   revert_plan_due,       { "revert", "{id}", "--plan", "--reason",
						    "found broken; waiting for a maintainer"
						    " (auto_revert = plan)" },                  60,   0, 0, NULL },
	{ "verify",        verify_due,            { "verify", "{id}" },                         0,    1, 0, NULL,
	  verify_summary },
	{ "queue changed", candidate_queue_due,   { "candidate" },                              0,    1, 0, NULL,
	  candidate_newest_summary },
	/* stableq's own report on its rc, once the rc's candidate is done */
	{ "rc report",     rc_report_due,         { "rc", "report", "{id}" },                   300,  0, 0, NULL },
	{ "mail",          outbox_due,            { "mail", "send" },                           300,  0, 0, NULL },
	/* last: a new tip's baseline, while there is nothing else to do */
	{ "baseline",      candidate_baseline_due, { "candidate", "--run", "{id}" },            0,    1, 0, candidate_interrupted, candidate_summary, 1 },
	{ NULL },
};
