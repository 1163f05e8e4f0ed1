/* spawn.h: the one way stableq runs child processes (make, qemu, git, itself). */
#ifndef STABLEQ_SPAWN_H
#define STABLEQ_SPAWN_H

#include "sandbox.h"
#include "strbuf.h"

#include <sys/types.h>

/*
 * Fill the inputs, then spawn_run() (blocking) or spawn_start() +
 * spawn_poll() (for an event loop). Every child runs in a process group of
 * its own, so a deadline kills make's or qemu's whole tree. Nothing goes
 * through a shell: argv[0] is looked up in PATH.
 *
 * Inputs are borrowed for the lifetime of the child. `out` is owned by the
 * struct: call spawn_release() when done.
 */
struct spawn {
	const char *const *argv;
	const char *const *env;  /* extra "KEY=value" entries, NULL-terminated */
	const char *cwd;
	const char *log_path;    /* stdout+stderr appended to this file */
	int capture;             /* spawn_run(): stdout+stderr into out (if no log_path) */
	size_t capture_max;      /* keep at most this many bytes (0: 1 MiB); the tail is kept */
	const char *stdin_path;  /* default /dev/null */
	int timeout_ms;          /* 0: no deadline; at the deadline SIGKILL to the group */
	/*
	 * NULL (or off): the child runs as stableq does. Else in bubblewrap,
	 * as the build user, writing only binds (sandbox.h): for any child
	 * that runs code from a patch.
	 */
	const struct sandbox *sandbox;
	const struct sandbox_bind *binds; /* {NULL}-terminated; may be NULL */
	/*
	 * The child gets SIGTERM when this process ends, however it ends
	 * (a SIGKILL at a step's deadline too): for a stableq child that
	 * must not outlive the one that waits for it.
	 */
	int die_with_parent;
	pid_t parent; /* set by spawn_start() */

	pid_t pid;
	int out_fd;
	struct strbuf out;
	int status;    /* exit code; 128 + signal number if killed */
	int signaled;  /* the signal that ended it, or 0 */
	int timed_out; /* the deadline killed it */
	double seconds;
	double started;
};

#define SPAWN_INIT { .out = STRBUF_INIT, .pid = -1, .out_fd = -1 }

/* Starts the child. 0, or negative with err_msg() naming the program. */
int spawn_start(struct spawn *s);
/*
 * Reaps the child if it has ended (block: wait for it). Enforces the
 * deadline. Returns 1 once the child is reaped (status filled), 0 while it
 * runs, negative on error.
 */
int spawn_poll(struct spawn *s, int block);
/* spawn_start() + spawn_poll(block). 0 when the child ran (look at status). */
int spawn_run(struct spawn *s);
/*
 * Ends the process group of every child this process still runs: SIGTERM,
 * up to grace_ms for them to go (make removes the file it was writing),
 * then SIGKILL (async-signal-safe). A command stopped by a signal ends
 * make's and QEMU's trees with it instead of leaving them to run on.
 */
void spawn_kill_all(int grace_ms);
/* Kills the child's process group (SIGTERM, then SIGKILL after grace_ms). */
void spawn_kill(struct spawn *s, int grace_ms);
void spawn_release(struct spawn *s);
/* "make -j2 O=..." for logs; caller frees. */
char *spawn_cmdline(const char *const *argv);
/* Seconds since an arbitrary start, monotonic. */
double now_monotonic(void);

#endif
