/* spawn.c: child processes with deadlines, captured output and reaped status. */
#include "spawn.h"
#include "err.h"
#include "strvec.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The process groups of the children this process is running, so that a
 * stop can end them all from a signal handler (spawn_kill_all()). Slots
 * are plain pids written by the one thread that spawns.
 */
static volatile pid_t live[32];

static void live_add(pid_t pid)
{
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (!live[i]) {
			live[i] = pid;
			return;
		}
}

static void live_remove(pid_t pid)
{
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++)
		if (live[i] == pid)
			live[i] = 0;
}

void spawn_kill_all(int grace_ms)
{
	const size_t n = sizeof(live) / sizeof(live[0]);
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	int left = 1;

	/* SIGTERM first: make deletes the target it was writing */
	for (size_t i = 0; i < n; i++)
		if (live[i] > 0)
			kill(-live[i], SIGTERM);
	for (int waited = 0; left && waited < grace_ms; waited += 20) {
		nanosleep(&tick, NULL);
		left = 0;
		for (size_t i = 0; i < n; i++)
			if (live[i] > 0 && kill(-live[i], 0) == 0)
				left = 1;
	}
	for (size_t i = 0; i < n; i++)
		if (live[i] > 0)
			kill(-live[i], SIGKILL);
}

char *spawn_cmdline(const char *const *argv)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; argv && argv[i]; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		strbuf_addstr(&sb, argv[i]);
	}
	return strbuf_detach(&sb, NULL);
}

/*
 * argv is s->argv, or the sandbox's command around it. The sandboxed
 * child gets a session of its own instead of a group.
 */
static void child_exec(const struct spawn *s, const char *const *argv,
		       int outfd, int errpipe)
{
	int in, sandboxed = sandbox_on(s->sandbox);

	if (!sandboxed)
		setpgid(0, 0);
	/* SIGTERM when this process dies, even by SIGKILL; if it already
	 * has, the child ends now */
	if (s->die_with_parent &&
	    (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0 || getppid() != s->parent))
		_exit(127);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	in = open(s->stdin_path ? s->stdin_path : "/dev/null", O_RDONLY);
	if (in < 0)
		goto fail;
	dup2(in, 0);
	if (outfd >= 0) {
		dup2(outfd, 1);
		dup2(outfd, 2);
	}
	if (s->cwd && chdir(s->cwd) < 0)
		goto fail;
	for (size_t i = 0; s->env && s->env[i]; i++) {
		const char *eq = strchr(s->env[i], '=');
		if (!eq)
			continue;
		char *k = strndup(s->env[i], (size_t)(eq - s->env[i]));
		if (k) {
			setenv(k, eq + 1, 1);
			free(k);
		}
	}
	if (sandboxed && (errno = sandbox_enter(s->sandbox)))
		goto fail;
	execvp(argv[0], (char *const *)argv);
fail:;
	int e = errno;
	ssize_t r = write(errpipe, &e, sizeof(e));
	(void)r;
	_exit(127);
}

/* spawn_start() of argv (s->argv, or wrapped in the sandbox). */
static int start(struct spawn *s, const char *const *argv)
{
	int errpipe[2] = { -1, -1 }, outpipe[2] = { -1, -1 };
	int outfd = -1, e = 0;
	int sandboxed = sandbox_on(s->sandbox);
	ssize_t n;

	if (pipe2(errpipe, O_CLOEXEC) < 0)
		return err_set(ERR_IO, "spawn %s: pipe: %s", s->argv[0],
			       strerror(errno));
	if (s->log_path) {
		outfd = open(s->log_path,
			     O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (outfd < 0) {
			e = errno;
			close(errpipe[0]);
			close(errpipe[1]);
			return err_set(ERR_IO, "spawn %s: log %s: %s",
				       s->argv[0], s->log_path, strerror(e));
		}
	} else if (s->capture) {
		if (pipe2(outpipe, O_CLOEXEC) < 0) {
			close(errpipe[0]);
			close(errpipe[1]);
			return err_set(ERR_IO, "spawn %s: pipe: %s", s->argv[0],
				       strerror(errno));
		}
		outfd = outpipe[1];
	}
	s->started = now_monotonic();
	s->timed_out = 0;
	s->signaled = 0;
	s->status = -1;
	s->parent = getpid();
	s->pid = fork();
	if (s->pid < 0) {
		e = errno;
		close(errpipe[0]);
		close(errpipe[1]);
		if (outfd >= 0)
			close(outfd);
		if (outpipe[0] >= 0)
			close(outpipe[0]);
		return err_set(ERR_IO, "spawn %s: fork: %s", s->argv[0],
			       strerror(e));
	}
	if (s->pid == 0)
		child_exec(s, argv, outfd, errpipe[1]);
	/*
	 * Both sides set the group, so a kill right after start hits it. A
	 * sandboxed child makes a session (and group) of its own, which a
	 * group set here first would forbid; its group exists once the
	 * exec below is seen.
	 */
	if (!sandboxed)
		setpgid(s->pid, s->pid);
	live_add(s->pid);
	close(errpipe[1]);
	if (outfd >= 0)
		close(outfd);
	s->out_fd = outpipe[0];
	do
		n = read(errpipe[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(errpipe[0]);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(s->pid, NULL, 0);
		live_remove(s->pid);
		s->pid = -1;
		if (s->out_fd >= 0) {
			close(s->out_fd);
			s->out_fd = -1;
		}
		if (e == ENOENT && sandboxed)
			return err_set(ERR_NOTFOUND,
				       "bwrap: command not found: install the"
				       " Debian package bubblewrap");
		if (e == ENOENT)
			return err_set(ERR_NOTFOUND, "%s: command not found",
				       s->argv[0]);
		if (sandboxed)
			return err_set(ERR_IO,
				       "%s: cannot start the sandbox as %s: %s",
				       s->argv[0], s->sandbox->user,
				       strerror(e));
		return err_set(ERR_IO, "%s: cannot run: %s", s->argv[0],
			       strerror(e));
	}
	if (s->out_fd >= 0)
		fcntl(s->out_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

int spawn_start(struct spawn *s)
{
	struct strvec wrapped = STRVEC_INIT;
	int ret;

	if (!s->argv || !s->argv[0])
		return err_set(ERR_INVALID, "spawn: empty command");
	if (!sandbox_on(s->sandbox))
		return start(s, s->argv);
	/* built here: the child only sets itself up and execs */
	if ((ret = sandbox_argv(s->sandbox, s->argv, s->cwd, s->binds,
				&wrapped)) == 0)
		ret = start(s, wrapped.v);
	strvec_clear(&wrapped);
	return ret;
}


/* Keeps the last max bytes of out (the end of a log says what failed). */
static void keep_tail(struct spawn *s, size_t max)
{
	if (s->out.len <= max)
		return;
	memmove(s->out.buf, s->out.buf + s->out.len - max, max);
	strbuf_setlen(&s->out, max);
}

static void drain(struct spawn *s)
{
	size_t max = s->capture_max ? s->capture_max : (1u << 20);
	char buf[65536];

	for (;;) {
		ssize_t n = read(s->out_fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0 || errno != EAGAIN) {
				close(s->out_fd);
				s->out_fd = -1;
			}
			return;
		}
		strbuf_add(&s->out, buf, (size_t)n);
		/* trimmed now and then while it runs, to max once it ended */
		if (s->out.len > 2 * max)
			keep_tail(s, max);
	}
}

void spawn_kill(struct spawn *s, int grace_ms)
{
	if (s->pid <= 0)
		return;
	kill(-s->pid, SIGTERM);
	kill(s->pid, SIGTERM);
	for (int waited = 0; waited < grace_ms; waited += 10) {
		if (waitpid(s->pid, NULL, WNOHANG) == s->pid) {
			kill(-s->pid, SIGKILL);
			live_remove(s->pid);
			s->seconds = now_monotonic() - s->started;
			s->pid = -1;
			return;
		}
		usleep(10000);
	}
	kill(-s->pid, SIGKILL);
	kill(s->pid, SIGKILL);
}

int spawn_poll(struct spawn *s, int block)
{
	int wst;

	if (s->pid <= 0)
		return err_set(ERR_INVALID, "spawn: no child to wait for");
	for (;;) {
		if (s->out_fd >= 0)
			drain(s);
		pid_t r = waitpid(s->pid, &wst, WNOHANG);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(ERR_IO, "waitpid %ld: %s", (long)s->pid,
				       strerror(errno));
		if (r == s->pid)
			break;
		if (s->timeout_ms > 0 && !s->timed_out &&
		    now_monotonic() - s->started > s->timeout_ms / 1000.0) {
			s->timed_out = 1;
			kill(-s->pid, SIGKILL);
			kill(s->pid, SIGKILL);
			continue;
		}
		if (!block)
			return 0;
		if (s->out_fd >= 0) {
			struct pollfd p = { .fd = s->out_fd, .events = POLLIN };
			poll(&p, 1, 50);
		} else {
			usleep(20000);
		}
	}
	/* The group may have stragglers (make's children): end them too. */
	kill(-s->pid, SIGKILL);
	if (s->out_fd >= 0) {
		drain(s);
		if (s->out_fd >= 0) {
			close(s->out_fd);
			s->out_fd = -1;
		}
	}
	keep_tail(s, s->capture_max ? s->capture_max : (1u << 20));
	s->seconds = now_monotonic() - s->started;
	if (WIFEXITED(wst)) {
		s->status = WEXITSTATUS(wst);
	} else if (WIFSIGNALED(wst)) {
		s->signaled = WTERMSIG(wst);
		s->status = 128 + s->signaled;
	}
	live_remove(s->pid);
	s->pid = -1;
	return 1;
}

int spawn_run(struct spawn *s)
{
	int ret = spawn_start(s);

	if (ret < 0)
		return ret;
	ret = spawn_poll(s, 1);
	return ret < 0 ? ret : 0;
}

void spawn_release(struct spawn *s)
{
	if (!s)
		return;
	if (s->pid > 0) {
		spawn_kill(s, 0);
		waitpid(s->pid, NULL, 0);
		live_remove(s->pid);
		s->pid = -1;
	}
	if (s->out_fd >= 0) {
		close(s->out_fd);
		s->out_fd = -1;
	}
	strbuf_release(&s->out);
}
