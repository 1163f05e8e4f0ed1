/* t-spawn.c: child processes: exit codes, captured output, deadlines, logs. */
#include "err.h"
#include "file.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

static int run(const char *const *argv, struct spawn *s)
{
	s->argv = argv;
	s->capture = 1;
	return spawn_run(s);
}

/* pid has ended (gone, or a zombie nobody reaped yet). */
static int ended(pid_t pid)
{
	char path[64], st[512] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if (!(f = fopen(path, "r")))
		return 1;
	if (!fgets(st, sizeof(st), f))
		st[0] = '\0';
	fclose(f);
	const char *p = strrchr(st, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * die_with_parent: a child whose parent is SIGKILLed (a step killed at
 * its deadline) gets SIGTERM; without it the child lives on.
 */
static void parent_killed(int die)
{
	int fds[2];
	pid_t mid, child = 0;

	if (pipe(fds) < 0)
		return;
	if ((mid = fork()) == 0) {
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sleep", "30", NULL };
		s.argv = argv;
		s.die_with_parent = die;
		if (spawn_start(&s) == 0 &&
		    write(fds[1], &s.pid, sizeof(s.pid)) == sizeof(s.pid))
			pause();
		_exit(1);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], &child, sizeof(child));
	ok(got == sizeof(child) && child > 0,
	   "die_with_parent %d: a child started (pid %ld)", die, (long)child);
	close(fds[0]);
	kill(mid, SIGKILL);
	waitpid(mid, NULL, 0);
	int gone = 0;
	for (int i = 0; i < 50 && !(gone = ended(child)); i++)
		usleep(100 * 1000);
	if (die) {
		ok(gone, "  its parent SIGKILLed: the child ends too");
	} else {
		ok(!gone, "  without it, the child outlives its parent");
		kill(child, SIGKILL);
	}
}

int main(void)
{
	char dir[] = "/tmp/t-spawn.XXXXXX", *log = NULL;
	struct strbuf sb = STRBUF_INIT;

	if (!mkdtemp(dir))
		return 1;
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
		ok(run(argv, &s) == 0, "spawn_run of sh");
		is_int(s.status, 3, "the exit code");
		ok(!s.signaled && !s.timed_out, "not signaled, not timed out");
		like(s.out.buf, "out\n", "stdout captured");
		like(s.out.buf, "err\n", "stderr captured with it");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "pwd; echo \"$T_X\"", NULL };
		const char *env[] = { "T_X=from-env", NULL };
		s.cwd = dir;
		s.env = env;
		ok(run(argv, &s) == 0 && s.status == 0, "cwd and env");
		like(s.out.buf, dir, "... runs in cwd");
		like(s.out.buf, "from-env", "... with the extra environment");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "sleep 30 & sleep 30; echo never", NULL };
		double t0 = now_monotonic();
		s.timeout_ms = 300;
		ok(run(argv, &s) == 0, "a child past its deadline");
		ok(s.timed_out, "... is timed out");
		ok(s.signaled == SIGKILL, "... killed by SIGKILL");
		is_int(s.status, 128 + SIGKILL, "... status 128 + 9");
		ok(now_monotonic() - t0 < 10, "... well before its sleep ends");
		ok(!strstr(s.out.buf, "never"), "... and did not go on");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "stableq-no-such-program", NULL };
		ok(run(argv, &s) < 0, "a program that is not there fails");
		like(err_msg(), "stableq-no-such-program", "... naming it");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done", NULL };
		s.capture_max = 100;
		ok(run(argv, &s) == 0 && s.status == 0, "a chatty child");
		ok(s.out.len <= 100, "capture_max bounds what is kept (%zu)", s.out.len);
		like(s.out.buf, "line1999", "... which is the tail");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "echo logged", NULL };
		log = xstrfmt("%s/log", dir);
		s.argv = argv;
		s.log_path = log;
		ok(spawn_run(&s) == 0 && s.status == 0, "log_path");
		ok(strbuf_read_file(&sb, log, 0) == 0, "... the log is there");
		is_str(sb.buf, "logged\n", "... holding the output");
		spawn_release(&s);
	}
	{
		struct spawn s = SPAWN_INIT;
		const char *argv[] = { "sh", "-c", "sleep 5", NULL };
		pid_t pid;
		s.argv = argv;
		ok(spawn_start(&s) == 0 && s.pid > 0, "spawn_start");
		pid = s.pid;
		is_int(spawn_poll(&s, 0), 0, "spawn_poll: still running");
		spawn_kill(&s, 1000);
		ok(s.pid == -1 || spawn_poll(&s, 1) == 1, "spawn_kill ends it");
		ok(kill(pid, 0) < 0, "... and it is reaped");
		spawn_release(&s);
	}
	{
		const char *argv[] = { "make", "-j2", "O=a b", NULL };
		char *c = spawn_cmdline(argv);
		like(c, "make -j2", "spawn_cmdline");
		free(c);
	}
	free(log);
	strbuf_release(&sb);
	rm_rf(dir);
	parent_killed(1);
	parent_killed(0);
	return done_testing();
}
