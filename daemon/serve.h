/* serve.h: the daemon: one loop for signals, timers, child steps and the HTTP server. */
#ifndef STABLEQ_SERVE_H
#define STABLEQ_SERVE_H

/*
 * Wakes the daemon's loop (async-signal-safe; callable from HTTP threads)
 * so that new work (an import, a flag, a candidate request) is looked at
 * now rather than at the next poll_interval.
 */
void serve_wake(void);

/* What the daemon is doing now, for /health and the dashboard. */
struct serve_status {
	char step[64];       /* "idle", "candidate 12", "bisect 3" ... */
	long long started;   /* unix time the step began, 0 if idle */
	int child_pid;
	char config_error[256]; /* "" while the file on disk is the config held;
				 * else why it is not (the daemon keeps its own) */
};
void serve_get_status(struct serve_status *out);

#endif
