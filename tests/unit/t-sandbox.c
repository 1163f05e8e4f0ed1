/* t-sandbox.c: bwrap children through spawn: user, read-only host, binds, no network, limits, signals; ownership and refusals. */
#include "config.h"
#include "err.h"
#include "file.h"
#include "sandbox.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static const char *sh_cwd; /* NULL: dir */

/* Runs sh -c script in sb, writable: the binds; output in out. */
static int sh(const struct sandbox *sb, const struct sandbox_bind *binds,
	      const char *script, struct strbuf *out, int *status)
{
	const char *argv[] = { "sh", "-c", script, NULL };
	struct spawn s = SPAWN_INIT;
	int ret;

	s.argv = argv;
	s.cwd = sh_cwd ? sh_cwd : dir;
	s.capture = 1;
	s.timeout_ms = 60000;
	s.sandbox = sb;
	s.binds = binds;
	ret = spawn_run(&s);
	*status = s.status;
	strbuf_reset(out);
	strbuf_addbuf(out, &s.out);
	spawn_release(&s);
	return ret;
}

static void test_refusal(void)
{
	struct sandbox sb;
	int ret = sandbox_init(&sb, "none", NULL, 0);

	if (geteuid() == 0) {
		is_int(ret, ERR_INVALID, "sandbox = none as root is refused");
		like(err_msg(), "refusing to run code from a patch as root",
		     "... saying what it refuses");
		like(err_msg(), "sandbox = bwrap", "... and naming the fix");
		is_int(sandbox_check(NULL, "make x"), ERR_INVALID,
		       "no sandbox at all, as root: refused too");
		like(err_msg(), "make x: refusing", "... naming the step");
	} else {
		is_int(ret, 0, "sandbox = none as a user: allowed");
		is_int(sandbox_check(NULL, "make x"), 0,
		       "no sandbox as a user: allowed");
	}
	sandbox_release(&sb);
	is_int(sandbox_init(&sb, "chroot", NULL, 0), ERR_INVALID,
	       "an unknown kind is an error");
	sandbox_release(&sb);
	if (geteuid() == 0) {
		is_int(sandbox_init(&sb, "bwrap", "no-such-user-here", 0),
		       ERR_NOTFOUND, "a missing build user");
		like(err_msg(), "make deps", "... says how to make it");
		sandbox_release(&sb);
		is_int(sandbox_init(&sb, "bwrap", "root", 0), ERR_INVALID,
		       "build_user root is refused");
		sandbox_release(&sb);
	}
	struct config c;
	config_load(&c, NULL);
	is_str(c.sandbox, "bwrap", "the default is the sandbox");
	is_str(c.build_user, "stableq-build", "... as stableq-build");
	config_free(&c);
}

static void test_run(const struct sandbox *sb)
{
	struct strbuf out = STRBUF_INIT;
	char *rw = xstrfmt("%s/rw", dir), *ro = xstrfmt("%s/ro", dir);
	char *cc = xstrfmt("%s/cc", dir);
	struct sandbox_bind binds[] = { { dir, NULL, 1 },
					{ rw, NULL, 0 },
					{ cc, SANDBOX_CCACHE, 0 },
					{ NULL, NULL, 0 } };
	int status = -1;
	char *script;

	mkdir(rw, 0755);
	mkdir(ro, 0777); /* anyone may write here, outside the sandbox */
	chmod(ro, 0777);
	mkdir(cc, 0755);
	is_int(sandbox_own(sb, rw, 0), 0, "the writable directory is given "
					  "to the build user");
	is_int(sandbox_own(sb, cc, 1), 0, "... and the ccache's directories");

	is_int(sh(sb, binds, "id -u", &out, &status), 0, "id runs inside");
	long uid = atol(out.buf);
	ok(uid != 0, "... not as root (uid %ld)", uid);
	is_int(uid, (long)sb->uid, "... as the build user");

	script = xstrfmt("echo x > %s/marker 2>&1; echo rc=$?", ro);
	sh(sb, binds, script, &out, &status);
	like(out.buf, "Read-only file system",
	     "a world-writable directory outside the binds: read-only");
	free(script);
	script = xstrfmt("%s/marker", ro);
	ok(access(script, F_OK) != 0, "... nothing was written there");
	free(script);

	script = xstrfmt("echo inside > %s/made && id -u > " SANDBOX_CCACHE
			 "/who && echo ok",
			 rw);
	is_int(sh(sb, binds, script, &out, &status), 0, "writing the binds");
	like(out.buf, "ok", "... works");
	free(script);
	script = xstrfmt("%s/made", rw);
	struct stat st;
	ok(stat(script, &st) == 0 && st.st_uid == sb->uid,
	   "... the file is there, the build user's");
	free(script);
	script = xstrfmt("%s/who", cc);
	ok(access(script, F_OK) == 0, "the ccache is bound at " SANDBOX_CCACHE);
	free(script);

	sh(sb, binds, "tail -n +3 /proc/net/dev | cut -d: -f1", &out,
	   &status);
	like(out.buf, "lo", "a network namespace of its own: lo");
	ok(!strchr(strstr(out.buf, "lo") ? strstr(out.buf, "lo") + 2
					  : out.buf, ':') &&
		   strlen(out.buf) < 16,
	   "... and no other interface (%s)", out.buf);

	sh(sb, binds, "grep -E '^(NoNewPrivs|CapEff)' /proc/self/status",
	   &out, &status);
	like(out.buf, "NoNewPrivs:\t1", "no new privileges");
	like(out.buf, "CapEff:\t0000000000000000", "no capabilities");

	sh(sb, binds, "echo data > /tmp/t && cat /tmp/t && ls /tmp", &out,
	   &status);
	like(out.buf, "data", "a /tmp of its own, writable");

	sh(sb, binds, "unshare -U true 2>&1; echo rc=$?", &out, &status);
	ok(!strstr(out.buf, "rc=0"), "no user namespaces inside (%s)",
	   out.buf);

	sh(sb, binds, "ulimit -v", &out, &status);
	if (sb->memory_mb)
		is_int(atol(out.buf), sb->memory_mb * 1024,
		       "the memory limit (ulimit -v, KiB)");

	/* SIGTERM reaches the command, which cleans up; bwrap passes its
	 * status on */
	{
		char *trap = xstrfmt("trap 'echo cleaned > %s/term; exit 7'"
				     " TERM; echo up; while :; do sleep"
				     " 0.1; done",
				     rw);
		const char *argv[] = { "sh", "-c", trap, NULL };
		struct spawn s = SPAWN_INIT;
		s.argv = argv;
		s.sandbox = sb;
		s.binds = binds;
		s.capture = 1;
		ok(spawn_start(&s) == 0, "a long command starts");
		for (int i = 0; i < 100 && !strstr(s.out.buf, "up"); i++) {
			spawn_poll(&s, 0);
			usleep(50000);
		}
		spawn_kill(&s, 5000);
		if (s.pid > 0)
			spawn_poll(&s, 1);
		char *t = xstrfmt("%s/term", rw);
		struct strbuf sb2 = STRBUF_INIT;
		strbuf_read_file(&sb2, t, 64);
		like(sb2.buf, "cleaned", "SIGTERM reached the command inside"
					 " (make would delete its targets)");
		strbuf_release(&sb2);
		free(t);
		spawn_release(&s);
		free(trap);
	}
	{
		const char *argv[] = { "sleep", "30", NULL };
		struct spawn s = SPAWN_INIT;
		s.argv = argv;
		s.sandbox = sb;
		s.timeout_ms = 500;
		double t0 = now_monotonic();
		is_int(spawn_run(&s), 0, "the deadline");
		ok(s.timed_out && now_monotonic() - t0 < 10,
		   "... kills the sandbox in time (%.1f s)",
		   now_monotonic() - t0);
		spawn_release(&s);
	}
	strbuf_release(&out);
	free(rw);
	free(ro);
	free(cc);
}

/* sandbox_own(): the walk never follows a symlink out of the directory. */
static void test_own(const struct sandbox *sb)
{
	char *b = xstrfmt("%s/own", dir), *sub = xstrfmt("%s/own/a/b", dir);
	char *f = xstrfmt("%s/own/a/b/f", dir), *l = xstrfmt("%s/own/a/l", dir);
	char *victim = xstrfmt("%s/victim", dir);
	struct stat st;

	mkdir_p(sub);
	write_file_atomic(f, "x", 1);
	write_file_atomic(victim, "v", 1);
	chown(victim, 0, 0);
	symlink(victim, l);
	is_int(sandbox_own(sb, b, 0), 0, "a directory made as root is given");
	ok(stat(f, &st) == 0 && st.st_uid == sb->uid,
	   "... with what is below it");
	ok(stat(victim, &st) == 0 && st.st_uid == 0,
	   "... but not what a symlink in it points to");
	ok(lstat(b, &st) == 0 && st.st_uid == sb->uid, "... itself last");
	char *later = xstrfmt("%s/own/later", dir);
	write_file_atomic(later, "x", 1);
	is_int(sandbox_own(sb, b, 0), 0, "again");
	ok(stat(later, &st) == 0 && st.st_uid == 0,
	   "... a directory that is the build user's is not walked again");
	free(later);

	struct sandbox other = *sb;
	other.user = "u";
	char *deep = xstrfmt("%s/closed/inner", dir);
	char *closed = xstrfmt("%s/closed", dir);
	mkdir_p(deep);
	chmod(closed, 0700);
	is_int(sandbox_reach(&other, deep), ERR_INVALID,
	       "a directory under a 0700 root one is out of reach");
	like(err_msg(), "mode 0700", "... naming the mode");
	like(err_msg(), "closed", "... and the directory");
	is_int(sandbox_reach(&other, b), 0, "a reachable one is fine");
	free(deep);
	free(closed);
	free(b);
	free(sub);
	free(f);
	free(l);
	free(victim);
}

/* stableq's own state is not the build's to read. */
static void test_hide(void)
{
	char tmpl[] = "var/t-sandbox-hide-XXXXXX";
	struct strbuf out = STRBUF_INIT;
	struct config c;
	struct sandbox sb;
	int status;

	mkdir("var", 0755);
	if (!ok(mkdtemp(tmpl) != NULL, "a state directory under var/"))
		return;
	char *top = realpath(tmpl, NULL);
	chmod(top, 0755);
	char *var = xstrfmt("%s/var", top), *db = xstrfmt("%s/var/s.db", top);
	char *conf = xstrfmt("%s/stableq.conf", top);
	char *tree = xstrfmt("%s/var/linux", top), *real = xstrfmt("%s/real", top);
	char *build = xstrfmt("%s/var/build", top);
	char *other = xstrfmt("%s/other.db", top);
	mkdir_p(var);
	mkdir_p(real);
	mkdir_p(build);
	write_file_atomic(db, "secret store", 12);
	write_file_atomic(other, "the other store", 15);
	char *src = xstrfmt("%s/Makefile", real);
	write_file_atomic(src, "all:\n", 5);
	free(src);
	symlink(real, tree); /* var/linux -> the tree, as in a worktree */
	char *text = xstrfmt("var_dir = %s\ndb = %s\nsmtp_url = smtp://u:"
			     "secret@h\n", var, other);
	write_file_atomic(conf, text, strlen(text));
	free(text);
	is_int(config_load(&c, conf), 0, "a config with its state");
	is_int(sandbox_from_config(&sb, &c), 0, "its sandbox");
	struct sandbox_bind binds[] = { { "var/linux", NULL, 1 },
					{ build, NULL, 0 },
					{ NULL, NULL, 0 } };
	/* relative paths as stableq gives them: from top */
	char *old = getcwd(NULL, 0);
	if (chdir(top) < 0)
		diag("chdir %s", top);
	sh_cwd = top;
	sandbox_own(&sb, build, 0);
	char *script = xstrfmt("echo in var: $(ls %s); cat %s %s %s 2>&1 |"
			       " sed 's/^/cat: /'; cat var/linux/Makefile;"
			       " echo made > %s/x && echo wrote",
			       var, db, other, conf, build);
	sh(&sb, binds, script, &out, &status);
	sh_cwd = NULL;
	if (chdir(old) < 0)
		diag("chdir %s", old);
	free(old);
	like(out.buf, "all:", "the tree under var/ is there, by its name");
	like(out.buf, "in var: build linux\n",
	     "var_dir is empty inside but for the binds");
	ok(!strstr(out.buf, "secret"), "the store and the config cannot be"
				       " read");
	ok(!strstr(out.buf, "the other store"), "... a store outside var_dir"
						" too");
	like(out.buf, "wrote", "... and the build directory, writable");
	free(script);
	sandbox_release(&sb);
	config_free(&c);
	rm_rf(top);
	free(top);
	free(var);
	free(db);
	free(conf);
	free(tree);
	free(real);
	free(build);
	free(other);
	strbuf_release(&out);
}

int main(void)
{
	struct sandbox sb;

	strcpy(dir, "/tmp/t-sandbox-XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "temp dir");
		return done_testing();
	}
	chmod(dir, 0755);
	test_refusal();
	err_clear();
	if (!ok(sandbox_init(&sb, "bwrap", "stableq-build", 512) == 0,
		"the sandbox: %s", err_msg()))
		return done_testing();
	test_run(&sb);
	if (sb.drop)
		test_own(&sb);
	test_hide();
	sandbox_release(&sb);
	rm_rf(dir);
	return done_testing();
}
