/* serve.c: `stableq serve`: the daemon's loop, its scheduler and child steps. */
#include "serve.h"
#include "app.h"
#include "candidate.h"
#include "cli.h"
#include "db.h"
#include "err.h"
#include "http.h"
#include "log.h"
#include "revert.h"
#include "spawn.h"
#include "strbuf.h"

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
static struct serve_status status = { "idle", 0, 0 };

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
	char name[64];
	char *argv[16];
	int argc;
	struct spawn sp;
	char *log_path;
	int running;
};

static void step_release(struct step *s)
{
	for (int i = 0; i < s->argc; i++)
		free(s->argv[i]);
	s->argc = 0;
	spawn_release(&s->sp);
	free(s->log_path);
	s->log_path = NULL;
	s->running = 0;
}

/*
 * A step that failed is not started again at once: the same failure would
 * spin the loop. It waits 30 s, doubling up to 30 min, until it succeeds.
 */
static struct {
	char name[64];
	double until;
	int delay;
} backoff;

static int backing_off(const char *name)
{
	return !strcmp(backoff.name, name) && now_monotonic() < backoff.until;
}

static void step_done(const struct step *s)
{
	/* 3: a candidate ran and did not pass: a verdict, not a failure */
	if (s->sp.status == 0 || s->sp.status == 3) {
		if (!strcmp(backoff.name, s->name))
			backoff.name[0] = '\0';
		return;
	}
	if (strcmp(backoff.name, s->name)) {
		snprintf(backoff.name, sizeof(backoff.name), "%s", s->name);
		backoff.delay = 30;
	} else if (backoff.delay < 1800) {
		backoff.delay *= 2;
	}
	backoff.until = now_monotonic() + backoff.delay;
	log_warnx("step %s failed: not again for %d s (see %s)", s->name,
		  backoff.delay, s->log_path);
}

static int step_start(struct app *app, struct step *s, int timeout_s,
		      const char *name, ...)
{
	va_list ap;
	const char *a;
	struct spawn init = SPAWN_INIT;
	char *logdir = xstrfmt("%s/log", app->cfg.var_dir);

	if (backing_off(name)) {
		free(logdir);
		return 0;
	}
	step_release(s);
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->argv[s->argc++] = xstrdup(app->self);
	if (app->cfg.path) {
		s->argv[s->argc++] = xstrdup("-c");
		s->argv[s->argc++] = xstrdup(app->cfg.path);
	}
	s->argv[s->argc++] = xstrdup("--db");
	s->argv[s->argc++] = xstrdup(app->cfg.db);
	va_start(ap, name);
	while ((a = va_arg(ap, const char *)) && s->argc < 15)
		s->argv[s->argc++] = xstrdup(a);
	va_end(ap);
	s->argv[s->argc] = NULL;
	mkdir_p(logdir);
	s->log_path = xstrfmt("%s/daemon-steps.log", logdir);
	free(logdir);
	s->sp = init;
	s->sp.argv = (const char *const *)s->argv;
	s->sp.log_path = s->log_path;
	s->sp.timeout_ms = timeout_s * 1000;
	if (spawn_start(&s->sp) < 0) {
		log_warnx("step %s: %s", name, err_msg());
		step_release(s);
		return -1;
	}
	s->running = 1;
	char *cmd = spawn_cmdline(s->sp.argv);
	log_info("step %s: started (pid %ld): %s", name, (long)s->sp.pid, cmd);
	free(cmd);
	set_status(name, s->sp.pid);
	return 0;
}

static int count(sqlite3 *db, const char *sql)
{
	long long n = 0;
	if (db_query_int(db, &n, sql, NULL) < 0)
		return 0;
	return (int)n;
}

/*
 * Picks the next step from the store alone, so a restart resumes where the
 * last process stopped. Order: the tree, the shipped queue, checks, pending
 * candidates, bisection of a failing candidate, reverts, a candidate for a
 * changed queue, mail.
 */
static int schedule(struct app *app, struct step *s, int *imported_once)
{
	struct config *c = &app->cfg;
	int tmo_build = c->build_timeout + 4 * c->boot_timeout + 600;
	char idbuf[32];
	long long id = 0;
	struct stat st;
	char *head = xstrfmt("%s/.git", c->tree_dir);
	int have_tree = stat(head, &st) == 0;

	free(head);
	if (!have_tree)
		return step_start(app, s, 3600, "tree init", "tree", "init",
				  NULL);
	if (!*imported_once && *c->queue_dir) {
		*imported_once = 1;
		return step_start(app, s, 600, "import", "import", c->queue_dir,
				  NULL);
	}
	if (count(app->db, "SELECT COUNT(*) FROM patches WHERE state ="
			   " 'imported'"))
		return step_start(app, s, 3600, "check", "check", NULL);
	if (count(app->db, "SELECT COUNT(*) FROM reverts WHERE state ="
			   " 'applying'"))
		return step_start(app, s, 3600, "revert resume", "revert",
				  "--resume", NULL);
	if ((id = candidate_next_pending(app->db)) > 0) {
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		return step_start(app, s, tmo_build, "candidate", "candidate",
				  "--run", idbuf, NULL);
	}
	/* a failing queue candidate that nobody bisected yet */
	if (db_query_int(app->db, &id,
			 "SELECT c.id FROM candidates c WHERE c.purpose IN"
			 " ('queue','confirm') AND c.verdict IN"
			 " ('fail','build-failed','hang') AND c.id = (SELECT"
			 " MAX(id) FROM candidates WHERE purpose IN"
			 " ('queue','confirm')) AND NOT EXISTS (SELECT 1 FROM"
			 " bisections b WHERE b.candidate_id = c.id)",
			 NULL) == 0) {
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		return step_start(app, s, tmo_build * 8, "bisect", "bisect",
				  idbuf, NULL);
	}
	/* a patch found broken that is still in the queue: revert first */
	if (!strcmp(c->auto_revert, "yes") &&
	    db_query_int(app->db, &id,
			 "SELECT p.id FROM patches p WHERE p.state = 'broken'"
			 " AND NOT EXISTS (SELECT 1 FROM reverts r WHERE"
			 " r.patch_id = p.id AND r.state != 'failed')"
			 " ORDER BY p.id LIMIT 1",
			 NULL) == 0) {
		snprintf(idbuf, sizeof(idbuf), "%lld", id);
		return step_start(app, s, tmo_build, "revert", "revert", idbuf,
				  "--reason", "found broken; revert first", NULL);
	}
	/* auto_revert = plan: store the plan and wait for a maintainer */
	if (strcmp(c->auto_revert, "yes") &&
	    db_query_int(app->db, &id,
			 "SELECT p.id FROM patches p WHERE p.state = 'broken'"
			 " AND NOT EXISTS (SELECT 1 FROM reverts r WHERE"
			 " r.patch_id = p.id) ORDER BY p.id LIMIT 1",
			 NULL) == 0) {
		if (revert_store_plan(app, id, "found broken; waiting for a"
					       " maintainer (auto_revert = plan)") < 0)
			log_warnx("patch %lld: plan: %s", id, err_msg());
		else
			log_info("patch %lld: revert plan stored, waiting for a"
				 " maintainer",
				 id);
	}
	/* the queue changed since its last candidate */
	if (count(app->db, "SELECT COUNT(*) FROM patches WHERE state ="
			   " 'queued'") &&
	    !count(app->db,
		   "SELECT COUNT(*) FROM candidates WHERE purpose IN"
		   " ('queue','confirm') AND patch_ids = (SELECT"
		   " json_group_array(id) FROM (SELECT id FROM patches WHERE"
		   " state = 'queued' ORDER BY queue_pos))")) {
		id = candidate_create(app->db, NULL, 0, 0, "queue", 0,
				      "daemon");
		if (id > 0) {
			snprintf(idbuf, sizeof(idbuf), "%lld", id);
			return step_start(app, s, tmo_build, "candidate",
					  "candidate", "--run", idbuf, NULL);
		}
		log_warnx("candidate: %s", err_msg());
	}
	if (*c->smtp_url &&
	    count(app->db, "SELECT COUNT(*) FROM mail WHERE state IN"
			   " ('queued','sending') AND next_attempt_at <="
			   " CAST(strftime('%s','now') AS INTEGER)"))
		return step_start(app, s, 300, "mail", "mail", "send", NULL);
	return 0;
}

static int reload(struct app *app, struct http_server **http)
{
	struct config fresh;

	if (config_load(&fresh, app->cfg.path) < 0) {
		log_warnx("SIGHUP: keeping the old config: %s", err_msg());
		config_free(&fresh);
		return -1;
	}
	http_stop(*http);
	*http = NULL;
	free(fresh.db);
	fresh.db = xstrdup(app->cfg.db); /* the store does not move */
	config_free(&app->cfg);
	app->cfg = fresh;
	if (http_start(app, http) < 0) {
		log_warnx("SIGHUP: http: %s", err_msg());
		return -1;
	}
	log_info("SIGHUP: configuration reloaded from %s",
		 app->cfg.path ? app->cfg.path : "defaults");
	return 0;
}

int cmd_serve(struct app *app, int argc, char **argv)
{
	int foreground = 0, check_only = 0, imported_once = 0;
	struct http_server *http = NULL;
	struct step step = { .sp = SPAWN_INIT };
	struct sigaction sa;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-d"))
			foreground = 1;
		else if (!strcmp(argv[i], "-n"))
			check_only = 1;
		else if (!strcmp(argv[i], "-v"))
			app->verbose++;
		else {
			fprintf(stderr, "usage: stableq serve [-d] [-n] [-v] [-c FILE]\n");
			return 2;
		}
	}
	if (check_only) {
		printf("configuration OK%s%s\n", app->cfg.path ? ": " : "",
		       app->cfg.path ? app->cfg.path : " (defaults)");
		return 0;
	}
	if (!foreground && daemon(1, 0) < 0) {
		perror("stableq serve: daemon");
		return 1;
	}
	log_init(app->verbose, !foreground);
	app->actor = "daemon";
	setenv("STABLEQ_ACTOR", "daemon", 1); /* its steps act as the daemon */
	if (app_open_db(app) < 0) {
		log_warnx("%s", err_msg());
		return 1;
	}
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
	log_info("listening on http://%s/ (database %s)", app->cfg.listen,
		 app->cfg.db);
	while (!got_term || step.running) {
		struct pollfd p = { .fd = wake_pipe[0], .events = POLLIN };
		char buf[64];

		poll(&p, 1, step.running ? 1000 : app->cfg.poll_interval * 1000);
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
				engine_log_summary(app->db, step.name, step.argv[step.argc - 1]);
				step_release(&step);
				set_status("idle", 0);
			} else {
				continue;
			}
		}
		if (got_term)
			break;
		schedule(app, &step, &imported_once);
	}
	log_info("stopping");
	http_stop(http);
	step_release(&step);
	return 0;
}
