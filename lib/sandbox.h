/* sandbox.h: code from a patch (make, scripts, the kselftest build) runs in bubblewrap as an unprivileged user. */
#ifndef STABLEQ_SANDBOX_H
#define STABLEQ_SANDBOX_H

#include <sys/types.h>

/*
 * A patch is hostile until a maintainer says otherwise, and building it
 * runs its Makefiles and scripts. So every child that runs code from a
 * tree (spawn.h's `sandbox` field) is started as
 *
 *   stableq (root?) --fork--> setrlimit(RLIMIT_AS, RLIMIT_CORE),
 *                             setsid(), setgroups/setgid/setuid(build_user)
 *                   --exec--> bwrap --unshare-all --unshare-user
 *                             --disable-userns --die-with-parent
 *                             --ro-bind / / --dev /dev --proc /proc
 *                             --tmpfs /tmp --ro-bind TREE TREE
 *                             --bind DIR DIR ... --chdir CWD
 *                             -- env --default-signal=TERM COMMAND...
 *
 * Inside, the host is read-only at its own paths (the tree is read where
 * it is), there is no network (a namespace with loopback only), no new
 * privileges, no capabilities, no user namespaces, a /tmp of its own,
 * and only the directories the caller names are writable: the build
 * directory (bound at its own path, so paths in the build stay the same;
 * the tree and the fragments are bound read-only the same way, so that
 * they are there even when they live under /tmp)
 * and the ccache directory (bound at SANDBOX_CCACHE). Every bound
 * directory must be reachable by the build user (bwrap resolves it as
 * that user): as root the default ccache is /var/cache/stableq/ccache,
 * not one under root's home (kbuild_default_ccache_dir()). spawn's deadline is
 * the time limit; RLIMIT_AS of each process the memory limit. A new
 * session (setsid) keeps the child off stableq's terminal. stableq's own
 * state is hidden: var_dir is an empty tmpfs inside (the tree and build
 * directories under it are bound back), the store and the config file
 * read as empty.
 *
 * When stableq runs as root the child first becomes build_user
 * (stableq-build, made by `make deps`), so the build is not root even
 * outside its namespaces; run as another user, stableq builds as itself.
 * The directories it writes must then be that user's: sandbox_own().
 *
 * Stopping: outer bwrap and its pid-1 reaper ignore SIGTERM (set before
 * exec), `env --default-signal=TERM` gives it back to make, so a SIGTERM
 * to the child's process group lets make delete its half-written targets
 * and exit, and bwrap then exits with make's status; SIGKILL (the
 * deadline, or after spawn_kill()'s grace) ends bwrap, and with it, by
 * --die-with-parent and the pid namespace, everything inside.
 */

/* Where the ccache directory appears inside the sandbox. */
#define SANDBOX_CCACHE "/tmp/ccache"

struct config;

/* Owned: sandbox_release() frees it. */
struct sandbox {
	int on;          /* 0: `sandbox = none` (refused as root) */
	int drop;        /* stableq is root: the child becomes uid:gid */
	uid_t uid;       /* who builds: build_user, or stableq's own user */
	gid_t gid;
	char *user;      /* its name, for messages */
	long memory_mb;  /* RLIMIT_AS of every process inside; 0: none */
	/*
	 * stableq's own state, which a build has no business reading (when
	 * it runs as stableq's user, it could): var_dir under a tmpfs, the
	 * store and the config file under /dev/null. Absolute, or NULL.
	 */
	char *hide_dir;
	char *hide_files[4];
};

/*
 * A directory the sandboxed child may write (ro: only read), bound at at
 * (NULL: at its own path). Read-only binds matter for what is under /tmp,
 * which the sandbox replaces; elsewhere the host is visible read-only.
 */
struct sandbox_bind {
	const char *dir;
	const char *at;
	int ro;
};

/*
 * From the config's sandbox, build_user and build_memory_mb. 0, or
 * negative with err_msg(): ERR_INVALID for `sandbox = none` as root (the
 * refusal, naming the fix) or build_user root, ERR_NOTFOUND for a missing
 * bwrap (Debian package bubblewrap) or build user (`make deps` makes it).
 * sb is always initialized; release it.
 */
int sandbox_from_config(struct sandbox *sb, const struct config *c);
/* sandbox_from_config() and release: 0 when builds may run as configured. */
int sandbox_config_check(const struct config *c);
/* The same from the values themselves (kind "bwrap" or "none"). */
int sandbox_init(struct sandbox *sb, const char *kind, const char *user,
		 int memory_mb);
void sandbox_release(struct sandbox *sb);

/*
 * 0 when code from a patch may run as sb says; the refusal (ERR_INVALID,
 * naming the `sandbox` key) when sb is NULL or off and stableq is root.
 * what names the step ("make tinyconfig") for the message.
 */
int sandbox_check(const struct sandbox *sb, const char *what);

/* 1 when children of sb run in bwrap. */
int sandbox_on(const struct sandbox *sb);

/*
 * Makes dir writable by the build user when the child drops to it (else
 * nothing to do): dir itself, and, when dir was not the build user's yet
 * (made by stableq as root, or by an older stableq), everything below it,
 * dir last, so that a walk cut short is done again. dirs_only: every
 * directory below, walked each time (a ccache another root process shares
 * gains directories). Never follows a symlink (openat O_NOFOLLOW, fchownat
 * AT_SYMLINK_NOFOLLOW): the build user wrote what is below. 0 or negative.
 */
int sandbox_own(const struct sandbox *sb, const char *dir, int dirs_only);

/*
 * 0 when the build user can reach path (search permission on every
 * directory above it); else ERR_INVALID naming the directory that stops
 * it and the user. Nothing to check when the child does not drop.
 */
int sandbox_reach(const struct sandbox *sb, const char *path);

/*
 * For spawn.c. sandbox_argv() builds, in the parent, the bwrap command
 * that runs argv in cwd (NULL: the current directory) with binds; a bind
 * or cwd the build user cannot reach is an error (sandbox_reach()).
 * sandbox_enter() runs in the child between fork and exec: limits,
 * session, user, SIGTERM ignored; 0 or the errno of what failed.
 */
struct strvec;
int sandbox_argv(const struct sandbox *sb, const char *const *argv,
		 const char *cwd, const struct sandbox_bind *binds,
		 struct strvec *out);
int sandbox_enter(const struct sandbox *sb);

#endif
