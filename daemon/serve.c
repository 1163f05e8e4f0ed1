/* serve.c: `stableq serve`: the daemon's loop, its scheduler and child steps. */
#include "serve.h"
#include "app.h"
#include "branch-status.h"
#include "cell.h"
#include "cli.h"
#include "db.h"
#include "event.h"
#include "err.h"
#include "file.h"
#include "http.h"
#include "intake.h"
#include "jobs.h"
#include "icecc.h"
#include "log.h"
#include "rc.h"
#include "repo.h"
#include "sandbox.h"
#include "snapshot.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int wake_pipe[2] = { -1, -1 };
static volatile sig_atomic_t got_term, got_hup;
static pthread_mutex_t status_lock = PTHREAD_MUTEX_INITIALIZER;
static struct serve_status status = { "idle", 0, 0, "" };
/* The config the steps run with: the daemon's, as a file (snapshot.h). */
static char *held_conf;

void serve_wake(void)
{
	int saved = errno;
	if (wake_pipe[1] >= 0) {
		ssize_t r = write(wake_pipe[1], "w", 1);
		(void)r;
	}
	errno = saved;
}

void serve_get_status(struct serve_status *out)
{
	pthread_mutex_lock(&status_lock);
	*out = status;
	pthread_mutex_unlock(&status_lock);
}

static void set_status(const char *step, int pid)
{
	pthread_mutex_lock(&status_lock);
	snprintf(status.step, sizeof(status.step), "%s", step);
	status.started = pid ? (long long)time(NULL) : 0;
	status.child_pid = pid;
	pthread_mutex_unlock(&status_lock);
}

static void on_signal(int sig)
{
	if (sig == SIGTERM || sig == SIGINT)
		got_term = 1;
	else if (sig == SIGHUP)
		got_hup = 1;
	serve_wake();
}

/* One step of work, run as `stableq <args>` in a child. */
struct step {
	const struct job *job;
	int branch;             /* index in cfg.branches */
	long long id;
	char name[64];
	struct strvec argv;
	struct spawn sp;
	char *log_path;
	int running;
};

static void step_release(struct step *s)
{
	strvec_clear(&s->argv);
	spawn_release(&s->sp);
	free(s->log_path);
	s->log_path = NULL;
	s->running = 0;
}

/*
 * A job that failed is not started again at once for the same row: the
 * same failure would spin the loop. It waits 30 s, doubling up to 30 min,
 * until it succeeds; the jobs after it in the table, and the same job
 * about another row or for another branch, go on meanwhile.
 */
#define MAX_JOBS 32
#define MAX_BRANCHES 16
static struct backoff {
	long long id; /* the row the failing step was about */
	double until;
	int delay;
} backoff[MAX_BRANCHES][MAX_JOBS];

static struct backoff *backoff_of(int branch, const struct job *j)
{
	size_t i = (size_t)(j - jobs);
	return i < MAX_JOBS && branch >= 0 && branch < MAX_BRANCHES
		       ? &backoff[branch][i]
		       : NULL;
}

static void step_done(const struct step *s)
{
	struct backoff *b = backoff_of(s->branch, s->job);

	if (!b)
		return;
	/* 3: a candidate ran and did not pass: a verdict, not a failure */
	if (s->sp.status == 0 || s->sp.status == 3) {
		b->delay = 0;
		b->until = 0;
		return;
	}
	if (b->id != s->id)
		b->delay = 0;
	b->id = s->id;
	b->delay = b->delay ? (b->delay < 1800 ? b->delay * 2 : b->delay) : 30;
	b->until = now_monotonic() + b->delay;
	log_warnx("step %s failed: not again for %d s (see %s)", s->name,
		  b->delay, s->log_path);
}

/* A step's time: each build of each cell of the branch's matrix (cell_jobs
 * 1 runs them one after another) with its boots. */
static int deadline_of(const struct config *c, const struct job *j)
{
	struct cell *cells = NULL;
	size_t n = 0;

	if (cell_matrix(c, &cells, &n) < 0 || n < 1) {
		err_clear();
		n = 1;
	}
	free(cells);
	return j->seconds + j->builds * (int)n *
				    (c->build_timeout + 4 * c->boot_timeout + 600);
}

static int step_start(struct app *app, struct step *s, const struct job *j,
		      long long id)
{
	struct spawn init = SPAWN_INIT;
	char *logdir = xstrfmt("%s/log", app->bc.cfg.var_dir);
	char idtext[32] = "", branch[48] = "";

	step_release(s);
	s->job = j;
	s->id = id;
	s->branch = app->bc.cfg.selected;
	if (id)
		snprintf(idtext, sizeof(idtext), " %lld", id);
	/* with several branches the log says whose step it is */
	if (app->bc.cfg.nbranches > 1)
		snprintf(branch, sizeof(branch), " (%s)",
			 app->bc.cfg.branch_key);
	snprintf(s->name, sizeof(s->name), "%s%s%s", j->name, idtext, branch);
	strvec_push(&s->argv, app->bc.self);
	strvec_pushl(&s->argv, "-c", held_conf, "--db", app->bc.cfg.db,
		     "--branch", app->bc.cfg.branch_key, NULL);
	for (size_t i = 0; i < sizeof(j->argv) / sizeof(j->argv[0]) && j->argv[i];
	     i++) {
		const char *a = j->argv[i];
		if (!strcmp(a, "{id}"))
			strvec_pushf(&s->argv, "%lld", id);
		else
			strvec_push(&s->argv, !strcmp(a, "{queue_dir}")
						      ? app->bc.cfg.queue_dir
						      : a);
	}
	mkdir_p(logdir);
	s->log_path = xstrfmt("%s/daemon-steps.log", logdir);
	free(logdir);
	s->sp = init;
	s->sp.argv = s->argv.v;
	s->sp.log_path = s->log_path;
	s->sp.timeout_ms = deadline_of(&app->bc.cfg, j) * 1000;
	if (spawn_start(&s->sp) < 0) {
		log_warnx("step %s: %s", s->name, err_msg());
		step_release(s);
		return -1;
	}
	s->running = 1;
	char *cmd = spawn_cmdline(s->sp.argv);
	log_info("step %s: started (pid %ld): %s", s->name, (long)s->sp.pid, cmd);
	free(cmd);
	set_status(s->name, s->sp.pid);
	return 0;
}

/* What the step found, in the log: one line, from the job's module. */
static void step_summary(struct app *app, const struct step *s)
{
	char *line =
		s->job->summary ? s->job->summary(app->bc.db, s->id) : NULL;

	err_clear();
	if (line)
		log_info("%s", line);
	free(line);
}

/*
 * The first due job of one branch's table that is not backing off, started
 * (1), or 0 when that branch has nothing to do.
 */
static int schedule_branch(struct app *app, struct step *s, int b,
			   unsigned char ran_once[][MAX_JOBS], int idle)
{
	if (branch_ctx_select(&app->bc, app->bc.cfg.branches[b].key) < 0) {
		log_warnx("branch %s: %s", app->bc.cfg.branches[b].key,
			  err_msg());
		return 0;
	}
	for (const struct job *j = jobs; j->name; j++) {
		struct backoff *bo = backoff_of(b, j);
		size_t i = (size_t)(j - jobs);
		long long id = 0;

		if (i >= MAX_JOBS || (j->once && ran_once[b][i]) ||
		    j->idle != idle)
			continue;
		if (j->due(&app->bc, &id) != 1)
			continue;
		/* a failure about one row holds back that row, not the others */
		if (bo && now_monotonic() < bo->until && bo->id == id)
			continue;
		if (j->once)
			ran_once[b][i] = 1;
		return step_start(app, s, j, id) == 0;
	}
	return 0;
}

/*
 * Branches take turns, one step each: the branch after the one that ran
 * last is asked first, so a long series of steps on one branch (a
 * bisection's) lets the other's next step in after each of its own. The
 * steps run one at a time: they share the build lock, ccache and the CPUs.
 */
static int schedule(struct app *app, struct step *s,
		    unsigned char ran_once[][MAX_JOBS], int *last)
{
	int n = app->bc.cfg.nbranches < MAX_BRANCHES ? app->bc.cfg.nbranches
						     : MAX_BRANCHES;
	int started = 0;

	/* the idle jobs (a tip's baseline) when no branch has other work */
	for (int idle = 0; idle <= 1 && !started; idle++)
		for (int k = 1; k <= n && !started; k++) {
			int b = (*last + k) % n;
			if ((started = schedule_branch(app, s, b, ran_once,
						       idle)))
				*last = b;
		}
	/* between steps the daemon (and its API) stands on the first branch */
	if (branch_ctx_select(&app->bc, NULL) < 0)
		log_warnx("%s", err_msg());
	return started;
}

/*
 * A stop while a step runs: its whole process tree ends within a few
 * seconds (the child kills its own children's groups on SIGTERM), and the
 * job records what was cut short so the next start runs it again.
 */
static void step_interrupt(struct app *app, struct step *s)
{
	log_info("step %s: stopping it", s->name);
	spawn_kill(&s->sp, 3000);
	spawn_poll(&s->sp, 1);
	if (s->job->interrupted && s->job->interrupted(&app->bc, s->id) < 0)
		log_warnx("step %s: recording the interruption: %s", s->name,
			  err_msg());
	if (event_add(app->bc.db, "daemon", "daemon", 0, "interrupted",
		      "step %s stopped after %.1f s; resumed at the next start",
		      s->name, s->sp.seconds) < 0)
		log_warnx("step %s: %s", s->name, err_msg());
	log_info("step %s: interrupted after %.1f s", s->name, s->sp.seconds);
}

/* Says in /health whether the file on disk is the config held. */
static void set_config_error(const char *why)
{
	pthread_mutex_lock(&status_lock);
	snprintf(status.config_error, sizeof(status.config_error), "%s",
		 why ? why : "");
	pthread_mutex_unlock(&status_lock);
}

static int reload(struct app *app, struct http_server **http)
{
	struct config fresh;

	/* the steps go on with the snapshot held until the file loads */
	if (snapshot_take(app->bc.cfg.path, app->bc.cfg.var_dir, &fresh) < 0) {
		log_warnx("SIGHUP: the config file is broken, keeping the"
			  " config held (the steps run with it too): %s",
			  err_msg());
		set_config_error(err_msg());
		return -1;
	}
	set_config_error(NULL);
	http_stop(*http);
	*http = NULL;
	free(fresh.db);
	fresh.db = xstrdup(app->bc.cfg.db); /* the store does not move */
	config_free(&app->bc.cfg);
	app->bc.cfg = fresh;
	if (http_start(app, http) < 0) {
		log_warnx("SIGHUP: http: %s", err_msg());
		return -1;
	}
	log_info("SIGHUP: configuration reloaded from %s",
		 app->bc.cfg.path ? app->bc.cfg.path : "defaults");
	return 0;
}

/*
 * `serve -n`: the file parsed (main.c did that: two branches sharing a
 * tree, build or queue directory were refused there); each branch without
 * its tree has its source tarball; a configured farm answers.
 */
static int check_config(struct app *app)
{
	for (int b = 0; b < app->bc.cfg.nbranches; b++) {
		const struct branch_conf *bc = &app->bc.cfg.branches[b];
		char *head = xstrfmt("%s/.git", bc->tree_dir);
		int have_tree = access(head, F_OK) == 0;

		free(head);
		if (!have_tree && repo_source_check(bc->linux_source) < 0) {
			fprintf(stderr, "stableq: branch %s: %s\n", bc->key,
				err_msg());
			return 1;
		}
		printf("branch %s: %s, tree %s%s, queue %s\n", bc->key,
		       bc->branch, bc->tree_dir,
		       have_tree ? "" : " (made from the tarball at start)",
		       bc->queue_dir);
	}
	if (icecc_enabled(app->bc.cfg.icecc)) {
		struct icecc_farm farm;
		char *addr = icecc_scheduler(app->bc.cfg.icecc);
		int ret = icecc_farm_query(addr, 3000, &farm);

		if (ret < 0) {
			fprintf(stderr, "stableq: %s\n", err_msg());
			free(addr);
			return 1;
		}
		printf("icecc: the scheduler %s answers: %d compile servers, "
		       "%d job slots\n",
		       addr, farm.hosts, farm.slots);
		free(addr);
	}
	/* the rc's cover never names a URL its list cannot reach */
	if (rc_config_check(&app->bc.cfg) < 0) {
		fprintf(stderr, "stableq: %s\n", err_msg());
		return 1;
	}
	/* how builds run (sandbox.h): a missing build user is said now */
	{
		struct sandbox sb;
		if (sandbox_from_config(&sb, &app->bc.cfg) < 0) {
			fprintf(stderr, "stableq: %s\n", err_msg());
			sandbox_release(&sb);
			return 1;
		}
		printf("builds: %s%s\n",
		       sb.on ? "in bubblewrap as " : "as stableq's own user",
		       sb.on ? sb.user : " (sandbox = none)");
		sandbox_release(&sb);
	}
	printf("configuration OK%s%s\n", app->bc.cfg.path ? ": " : "",
	       app->bc.cfg.path ? app->bc.cfg.path : " (defaults)");
	return 0;
}

int cmd_serve(struct app *app, const struct cli_opts *o, int argc, char **argv)
{
	int foreground = 0, check_only = 0, last = -1;
	unsigned char ran_once[MAX_BRANCHES][MAX_JOBS] = { { 0 } };
	struct http_server *http = NULL;
	struct step step = { .sp = SPAWN_INIT };
	struct sigaction sa;

	if (argc > 1) {
		fprintf(stderr, "usage: stableq serve [-d] [-n] [-v] [-c FILE]\n");
		return 2;
	}
	foreground = o->v['d'] != NULL;
	check_only = o->v['n'] != NULL;
	if (o->v['v'])
		app->verbose++;
	if (check_only)
		return check_config(app);
	if (!foreground && daemon(1, 0) < 0) {
		perror("stableq serve: daemon");
		return 1;
	}
	log_init(app->verbose, !foreground);
	app->bc.actor = "daemon";
	setenv("STABLEQ_ACTOR", "daemon", 1); /* its steps act as the daemon */
	{
		struct config held;
		if (snapshot_take(app->bc.cfg.path, app->bc.cfg.var_dir,
				  &held) < 0) {
			log_warnx("%s", err_msg());
			return 1;
		}
		config_free(&held); /* main.c's copy is the same file */
		free(held_conf);
		held_conf = snapshot_path(app->bc.cfg.var_dir);
	}
	if (branch_ctx_open_db(&app->bc) < 0) {
		log_warnx("%s", err_msg());
		return 1;
	}
	for (int b = 0; b < app->bc.cfg.nbranches; b++)
		if (branch_ctx_select(&app->bc, app->bc.cfg.branches[b].key) <
			    0 ||
		    intake_seed_queue(&app->bc) < 0)
			log_warnx("branch %s: %s", app->bc.cfg.branches[b].key,
				  err_msg());
	branch_ctx_select(&app->bc, NULL);
	/* the store learns the version each tree holds, as `branches` does */
	if (branch_status_refresh(&app->bc) < 0)
		log_warnx("%s", err_msg());
	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
		fatal("pipe: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (http_start(app, &http) < 0) {
		log_warnx("http: %s", err_msg());
		return 1;
	}
	log_info("listening on http://%s/ (database %s)", app->bc.cfg.listen,
		 app->bc.cfg.db);
	while (!got_term) {
		struct pollfd p = { .fd = wake_pipe[0], .events = POLLIN };
		char buf[64];

		poll(&p, 1,
		     step.running ? 1000 : app->bc.cfg.poll_interval * 1000);
		while (read(wake_pipe[0], buf, sizeof(buf)) > 0)
			;
		if (got_hup) {
			got_hup = 0;
			reload(app, &http);
		}
		if (step.running) {
			if (spawn_poll(&step.sp, 0) == 1) {
				log_info("step %s: %s %d after %.1f s", step.name,
					 step.sp.timed_out ? "killed at its deadline, status"
							   : "exited with status",
					 step.sp.status, step.sp.seconds);
				step_done(&step);
				step_summary(app, &step);
				step_release(&step);
				set_status("idle", 0);
			} else {
				continue;
			}
		}
		if (got_term)
			break;
		schedule(app, &step, ran_once, &last);
	}
	if (step.running)
		step_interrupt(app, &step);
	log_info("stopping");
	http_stop(http);
	step_release(&step);
	free(held_conf);
	held_conf = NULL;
	return 0;
}
