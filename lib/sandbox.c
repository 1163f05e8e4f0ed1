/* sandbox.c: bubblewrap and an unprivileged user for code from a patch. */
#include "sandbox.h"
#include "config.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"
#include "strvec.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define OWN_DEPTH_MAX 64 /* deeper than any kernel build directory */

void sandbox_release(struct sandbox *sb)
{
	if (!sb)
		return;
	free(sb->user);
	free(sb->hide_dir);
	for (size_t i = 0; i < 4; i++)
		free(sb->hide_files[i]);
	memset(sb, 0, sizeof(*sb));
}

static int refusal(const char *what)
{
	return err_set(ERR_INVALID,
		       "%s: refusing to run code from a patch as root outside"
		       " the sandbox: set `sandbox = bwrap` in the config"
		       " (docs/sandbox.md), or run stableq as an unprivileged"
		       " user",
		       what);
}

int sandbox_init(struct sandbox *sb, const char *kind, const char *user,
		 int memory_mb)
{
	struct passwd *pw;

	memset(sb, 0, sizeof(*sb));
	sb->uid = geteuid();
	sb->gid = getegid();
	sb->memory_mb = memory_mb > 0 ? memory_mb : 0;
	if (kind && !strcmp(kind, "none")) {
		if (geteuid() == 0)
			return refusal("sandbox = none");
		return 0;
	}
	if (kind && strcmp(kind, "bwrap"))
		return err_set(ERR_INVALID,
			       "sandbox = %s: expected bwrap or none", kind);
	if (!file_in_path("bwrap"))
		return err_set(ERR_NOTFOUND,
			       "bwrap not found: install the Debian package"
			       " bubblewrap (`make deps`)");
	sb->on = 1;
	if (geteuid() != 0) {
		pw = getpwuid(geteuid());
		sb->user = xstrdup(pw ? pw->pw_name : "(this user)");
		return 0;
	}
	if (!user || !*user)
		user = "stableq-build";
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		sb->on = 0;
		return err_set(ERR_NOTFOUND,
			       "build_user %s: no such user: `make deps` makes"
			       " it (useradd --system --no-create-home --shell"
			       " /usr/sbin/nologin %s)",
			       user, user);
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		sb->on = 0;
		return err_set(ERR_INVALID,
			       "build_user %s is root (uid %ld, gid %ld): a"
			       " build needs a user of its own",
			       user, (long)pw->pw_uid, (long)pw->pw_gid);
	}
	sb->drop = 1;
	sb->uid = pw->pw_uid;
	sb->gid = pw->pw_gid;
	sb->user = xstrdup(user);
	return 0;
}

/* 1 when path is dir or below it (both absolute). */
static int below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) &&
	       (path[n] == '/' || path[n] == '\0' || (n == 1 && *dir == '/'));
}

int sandbox_from_config(struct sandbox *sb, const struct config *c)
{
	const char *files[] = { c->db, NULL, NULL, c->path };
	char *wal = xstrfmt("%s-wal", c->db), *shm = xstrfmt("%s-shm", c->db);
	size_t n = 0;
	int ret = sandbox_init(sb, c->sandbox, c->build_user,
			       c->build_memory_mb);

	files[1] = wal;
	files[2] = shm;
	if (ret == 0 && sb->on) {
		sb->hide_dir = c->var_dir ? realpath(c->var_dir, NULL) : NULL;
		/* a var_dir of / or above the checkout hides too much */
		if (sb->hide_dir && !strcmp(sb->hide_dir, "/")) {
			free(sb->hide_dir);
			sb->hide_dir = NULL;
		}
		for (size_t i = 0; i < 4; i++) {
			char *f = files[i] ? realpath(files[i], NULL) : NULL;
			if (f && (!strncmp(f, "/dev/", 5) ||
				  (sb->hide_dir && below(f, sb->hide_dir)))) {
				free(f);
				f = NULL;
			}
			if (f)
				sb->hide_files[n++] = f;
		}
	}
	free(wal);
	free(shm);
	return ret;
}

int sandbox_config_check(const struct config *c)
{
	struct sandbox sb;
	int ret = sandbox_from_config(&sb, c);

	sandbox_release(&sb);
	return ret;
}

int sandbox_on(const struct sandbox *sb)
{
	return sb && sb->on;
}

int sandbox_check(const struct sandbox *sb, const char *what)
{
	if (sandbox_on(sb) || geteuid() != 0)
		return 0;
	return refusal(what);
}

/* The walk of sandbox_own(): below the directory fd dfd (owned by us). */
static int own_below(int dfd, const char *path, uid_t uid, gid_t gid,
		     int dirs_only, int depth)
{
	DIR *d;
	struct dirent *de;
	int ret = 0;

	if (depth > OWN_DEPTH_MAX)
		return err_set(ERR_INVALID, "%s: deeper than %d directories",
			       path, OWN_DEPTH_MAX);
	if (!(d = fdopendir(dfd))) {
		close(dfd);
		return err_set(ERR_IO, "%s: %s", path, strerror(errno));
	}
	while (ret == 0 && (errno = 0, de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st;
		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (dirs_only && de->d_type != DT_DIR &&
		    de->d_type != DT_UNKNOWN)
			continue;
		if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* gone meanwhile */
			ret = err_set(ERR_IO, "%s/%s: %s", path, n,
				      strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd(d), n,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						 O_CLOEXEC);
			char *p;
			if (sub < 0) {
				if (errno == ENOENT)
					continue;
				ret = err_set(ERR_IO, "%s/%s: %s", path, n,
					      strerror(errno));
				break;
			}
			p = xstrfmt("%s/%s", path, n);
			ret = own_below(sub, p, uid, gid, dirs_only, depth + 1);
			free(p);
			if (ret < 0)
				break;
		} else if (dirs_only) {
			continue;
		}
		if ((st.st_uid != uid || st.st_gid != gid) &&
		    fchownat(dirfd(d), n, uid, gid, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno != ENOENT)
			ret = err_set(ERR_IO, "%s/%s: chown to the build user:"
					      " %s",
				      path, n, strerror(errno));
	}
	if (ret == 0 && errno)
		ret = err_set(ERR_IO, "%s: %s", path, strerror(errno));
	closedir(d);
	return ret;
}

int sandbox_own(const struct sandbox *sb, const char *dir, int dirs_only)
{
	struct stat st;
	int fd, ret;

	if (!sandbox_on(sb) || !sb->drop)
		return 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = err_set(ERR_IO, "%s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return ret;
	}
	if (!dirs_only && st.st_uid == sb->uid && st.st_gid == sb->gid) {
		close(fd);
		return 0;
	}
	int top = dup(fd);
	if (top < 0) {
		close(fd);
		return err_set(ERR_IO, "%s: %s", dir, strerror(errno));
	}
	/* own_below() closes fd; the top goes last */
	ret = own_below(fd, dir, sb->uid, sb->gid, dirs_only, 0);
	if (ret == 0 && (st.st_uid != sb->uid || st.st_gid != sb->gid) &&
	    fchown(top, sb->uid, sb->gid) < 0)
		ret = err_set(ERR_IO, "%s: chown to the build user %s: %s", dir,
			      sb->user, strerror(errno));
	close(top);
	return ret;
}

/* 1 when uid:gid may search (x) a directory with this stat. */
static int searchable(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_uid == uid)
		return (st->st_mode & S_IXUSR) != 0;
	if (st->st_gid == gid)
		return (st->st_mode & S_IXGRP) != 0;
	return (st->st_mode & S_IXOTH) != 0;
}

int sandbox_reach(const struct sandbox *sb, const char *path)
{
	char *p, *slash;
	struct stat st;
	int ret = 0;

	if (!sandbox_on(sb) || !sb->drop)
		return 0;
	if (!(p = realpath(path, NULL)))
		return err_set(ERR_NOTFOUND, "%s: %s", path, strerror(errno));
	/* every directory from / down to path's parent, and path */
	for (slash = p;; slash = strchr(slash + 1, '/')) {
		char keep = slash ? *slash : '\0';
		if (slash)
			*slash = '\0';
		const char *dir = *p ? p : "/";
		if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
		    !searchable(&st, sb->uid, sb->gid)) {
			ret = err_set(ERR_INVALID,
				      "%s: the build user %s cannot reach it:"
				      " %s is mode %04o, owner uid %ld (make"
				      " it searchable, or put the directory"
				      " elsewhere; docs/sandbox.md)",
				      path, sb->user, dir,
				      (unsigned)(st.st_mode & 07777),
				      (long)st.st_uid);
		}
		if (slash)
			*slash = keep;
		if (ret < 0 || !slash)
			break;
	}
	free(p);
	return ret;
}

/* path made absolute, symlinks kept (caller frees). */
static char *absolute(const char *path)
{
	char *cwd;
	char *abs;

	if (*path == '/')
		return xstrdup(path);
	cwd = getcwd(NULL, 0);
	abs = xstrfmt("%s/%s", cwd ? cwd : "", path);
	free(cwd);
	return abs;
}

/* 1 when hiding var_dir would take cwd away (no bind brings it back). */
static int hides_cwd(const struct sandbox *sb, const char *cwd,
		     const struct sandbox_bind *binds)
{
	if (!sb->hide_dir || !cwd || !below(cwd, sb->hide_dir))
		return 0;
	for (size_t i = 0; binds && binds[i].dir; i++) {
		char *d = realpath(binds[i].dir, NULL);
		int in = d && !binds[i].at && below(cwd, d);
		free(d);
		if (in)
			return 0;
	}
	return 1;
}

int sandbox_argv(const struct sandbox *sb, const char *const *argv,
		 const char *cwd, const struct sandbox_bind *binds,
		 struct strvec *out)
{
	char *abs = cwd ? realpath(cwd, NULL) : getcwd(NULL, 0);
	int ret = 0;

	strvec_pushl(out, "bwrap", "--unshare-all", "--unshare-user",
		     "--disable-userns", "--die-with-parent", "--ro-bind", "/",
		     "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		     "--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp",
		     NULL);
	if (hides_cwd(sb, abs, binds))
		; /* make would not find its directory: var_dir stays */
	else if (sb->hide_dir)
		strvec_pushl(out, "--tmpfs", sb->hide_dir, NULL);
	for (size_t i = 0; i < 4 && sb->hide_files[i]; i++)
		strvec_pushl(out, "--ro-bind", "/dev/null", sb->hide_files[i],
			     NULL);
	/* read-only ones first: a writable one may lie below one */
	for (int pass = 0; pass < 2 && ret == 0; pass++)
		for (size_t i = 0; binds && binds[i].dir && ret == 0; i++) {
			if ((binds[i].ro ? 0 : 1) != pass)
				continue;
			/* bwrap resolves it as the build user */
			char *dir = realpath(binds[i].dir, NULL);
			char *as = absolute(binds[i].dir);
			const char *op = binds[i].ro ? "--ro-bind" : "--bind";
			if (!dir)
				ret = err_set(ERR_NOTFOUND, "sandbox: %s: %s",
					      binds[i].dir, strerror(errno));
			else if ((ret = sandbox_reach(sb, dir)) == 0)
				strvec_pushl(out, op, dir,
					     binds[i].at ? binds[i].at : dir,
					     NULL);
			/* also where its name leads through a symlink that
			 * the hidden var_dir took away (var/linux) */
			if (ret == 0 && !binds[i].at && strcmp(as, dir) &&
			    sb->hide_dir && below(as, sb->hide_dir))
				strvec_pushl(out, op, dir, as, NULL);
			free(as);
			free(dir);
		}
	/* the same directory inside (bwrap starts in / otherwise) */
	if (ret == 0 && abs)
		ret = sandbox_reach(sb, abs);
	if (ret == 0 && (abs || cwd))
		strvec_pushl(out, "--chdir", abs ? abs : cwd, NULL);
	free(abs);
	/* outer bwrap ignores SIGTERM (sandbox_enter()); make does not */
	strvec_pushl(out, "--", "env", "--default-signal=TERM", NULL);
	strvec_pushv(out, argv);
	return ret;
}

int sandbox_enter(const struct sandbox *sb)
{
	struct rlimit core = { 0, 0 };
	/* no controlling terminal: nothing inside can push keys to it */
	if (setsid() < 0)
		return errno;
	setrlimit(RLIMIT_CORE, &core);
	if (sb->memory_mb > 0) {
		rlim_t b = (rlim_t)sb->memory_mb << 20;
		struct rlimit as = { b, b };
		if (setrlimit(RLIMIT_AS, &as) < 0)
			return errno;
	}
	if (sb->drop) {
		gid_t g = sb->gid;
		if (setgroups(1, &g) < 0 || setgid(sb->gid) < 0 ||
		    setuid(sb->uid) < 0)
			return errno;
		/* a setuid that did not take is no sandbox */
		if (getuid() == 0 || geteuid() == 0 || getgid() == 0)
			return EPERM;
	}
	signal(SIGTERM, SIG_IGN);
	return 0;
}
