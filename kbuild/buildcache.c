/* buildcache.c: a bounded, crash-safe cache of built kernel states (image + test modules). */
#include "buildcache.h"
#include "err.h"
#include "file.h"
#include "spawn.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY_SCHEME "stableq-buildcache 1\n"
#define TMP_PREFIX ".tmp."
#define COPY_CHUNK (1u << 16)

int buildcache_key(const char *tree_sha, const char *config_hash,
		   const char *compiler_id, char out[65])
{
	const char *parts[] = {tree_sha, config_hash, compiler_id};
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	int ret = 0;

	out[0] = '\0';
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = err_set(ERR_IO, "sha256: cannot initialize");
		goto out;
	}
	EVP_DigestUpdate(ctx, KEY_SCHEME, strlen(KEY_SCHEME));
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char head[32];
		size_t l = parts[i] ? strlen(parts[i]) : 0;
		int hl = snprintf(head, sizeof(head), "%zu\n", l);
		EVP_DigestUpdate(ctx, head, (size_t)hl);
		if (l)
			EVP_DigestUpdate(ctx, parts[i], l);
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen)) {
		ret = err_set(ERR_IO, "sha256: cannot finish");
		goto out;
	}
	for (unsigned i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
out:
	EVP_MD_CTX_free(ctx);
	return ret;
}

/* The first line a command prints, appended to sb. */
static int first_line(struct strbuf *sb, const char *const *argv)
{
	struct spawn s = SPAWN_INIT;
	int ret;

	s.argv = argv;
	s.capture = 1;
	s.timeout_ms = 30000;
	if ((ret = spawn_run(&s)) == 0 && s.status != 0)
		ret = err_set(ERR_IO, "%s exited with status %d", argv[0],
			      s.status);
	if (ret == 0) {
		size_t l = strcspn(s.out.buf, "\n");
		strbuf_add(sb, s.out.buf, l);
		strbuf_addch(sb, '\n');
	}
	spawn_release(&s);
	return ret;
}

int buildcache_compiler_id(char **out)
{
	return buildcache_compiler_id_of("gcc", out);
}

int buildcache_compiler_id_of(const char *cc, char **out)
{
	const char *const version[] = {cc, "--version", NULL};
	const char *const machine[] = {cc, "-dumpmachine", NULL};
	struct strbuf sb = STRBUF_INIT;
	int ret;

	*out = NULL;
	if ((ret = first_line(&sb, version)) < 0 ||
	    (ret = first_line(&sb, machine)) < 0) {
		strbuf_release(&sb);
		return err_prefix(ret, "the compiler's identity");
	}
	*out = strbuf_detach(&sb, NULL);
	return 0;
}

static int is_key(const char *name)
{
	size_t n = strspn(name, "0123456789abcdef");
	return n == 64 && !name[n];
}

int buildcache_lookup(const char *dir, const char *key,
		      const char *const *files, size_t nfiles, char **entry)
{
	char *e = xstrfmt("%s/%s", dir, key);
	struct stat st;

	*entry = NULL;
	if (!is_key(key) || stat(e, &st) < 0 || !S_ISDIR(st.st_mode))
		goto miss;
	for (size_t i = 0; i < nfiles; i++) {
		char *p = xstrfmt("%s/%s", e, files[i]);
		int there = stat(p, &st) == 0 && S_ISREG(st.st_mode);
		free(p);
		if (!there)
			goto miss;
	}
	/* least recently used goes first: a hit makes it the newest */
	utimensat(AT_FDCWD, e, NULL, 0);
	*entry = e;
	return 1;
miss:
	free(e);
	return 0;
}

/*
 * Copies build/rel to dst (new), fsynced. The build wrote build/: a
 * symlink on the way is refused, not followed (file_open_beneath()).
 */
static int copy_file(const char *build, const char *rel, const char *dst)
{
	int in = file_open_beneath(build, rel, O_RDONLY), out = -1, ret = 0;
	char *buf = xmalloc(COPY_CHUNK);
	struct stat st;
	ssize_t n;

	if (in < 0) {
		ret = in;
		goto done;
	}
	if (fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = err_set(ERR_INVALID, "%s/%s: not a regular file", build,
			      rel);
		goto done;
	}
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		ret = err_set(ERR_IO, "%s: %s", dst, strerror(errno));
		goto done;
	}
	while ((n = read(in, buf, COPY_CHUNK)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = err_set(ERR_IO, "%s/%s: %s", build, rel,
				      strerror(errno));
			goto done;
		}
		for (ssize_t w, off = 0; off < n; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR) {
				w = 0;
				continue;
			}
			if (w < 0) {
				ret = err_set(ERR_IO, "%s: %s", dst,
					      strerror(errno));
				goto done;
			}
		}
	}
	if (fsync(out) < 0)
		ret = err_set(ERR_IO, "%s: %s", dst, strerror(errno));
done:
	if (out >= 0 && close(out) < 0 && !ret)
		ret = err_set(ERR_IO, "%s: %s", dst, strerror(errno));
	if (in >= 0)
		close(in);
	free(buf);
	return ret;
}

static void fsync_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static unsigned long long tree_bytes;

static int add_size(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (type == FTW_F)
		tree_bytes += (unsigned long long)st->st_size;
	return 0;
}

static unsigned long long du(const char *path)
{
	tree_bytes = 0;
	nftw(path, add_size, 16, FTW_PHYS);
	return tree_bytes;
}

struct entry {
	char *name;
	struct timespec used;
	unsigned long long bytes;
};

static int older_first(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	if (x->used.tv_nsec != y->used.tv_nsec)
		return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A temp directory whose writer is gone: ".tmp.PID.KEY" with PID dead. */
static int abandoned(const char *name)
{
	long pid;
	char *end;

	if (strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)))
		return 0;
	pid = strtol(name + strlen(TMP_PREFIX), &end, 10);
	if (*end != '.' || pid <= 0)
		return 1;
	return pid != (long)getpid() && kill((pid_t)pid, 0) < 0 &&
	       errno == ESRCH;
}

/* Removes abandoned temp dirs and the oldest entries beyond max_bytes. */
static void trim(const char *dir, const char *keep, unsigned long long max)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct entry *v = NULL;
	size_t n = 0, cap = 0;
	unsigned long long total = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *p = xstrfmt("%s/%s", dir, de->d_name);
		struct stat st;
		if (abandoned(de->d_name)) {
			rm_rf(p);
		} else if (is_key(de->d_name) && stat(p, &st) == 0) {
			if (n == cap) {
				cap = cap ? 2 * cap : 16;
				v = xrealloc(v, cap * sizeof(*v));
			}
			v[n].name = xstrdup(de->d_name);
			v[n].used = st.st_mtim;
			v[n].bytes = du(p);
			total += v[n].bytes;
			n++;
		}
		free(p);
	}
	closedir(d);
	qsort(v, n, sizeof(*v), older_first);
	for (size_t i = 0; i < n; i++) {
		if (max && total > max && strcmp(v[i].name, keep)) {
			char *p = xstrfmt("%s/%s", dir, v[i].name);
			if (rm_rf(p) == 0)
				total -= v[i].bytes;
			free(p);
		}
		free(v[i].name);
	}
	free(v);
	err_clear();
}

unsigned long long buildcache_size(const char *dir)
{
	return du(dir);
}

int buildcache_store(const char *dir, const char *key, const char *build_dir,
		     const char *const *files, size_t nfiles,
		     unsigned long long max_bytes, char **entry)
{
	char *tmp = NULL, *final = NULL;
	int ret;

	*entry = NULL;
	if (!is_key(key))
		return err_set(ERR_INVALID, "build cache: bad key '%s'", key);
	if ((ret = mkdir_p(dir)) < 0)
		return ret;
	final = xstrfmt("%s/%s", dir, key);
	tmp = xstrfmt("%s/" TMP_PREFIX "%ld.%s", dir, (long)getpid(), key);
	if ((ret = rm_rf(tmp)) < 0 || (ret = mkdir_p(tmp)) < 0)
		goto out;
	for (size_t i = 0; i < nfiles; i++) {
		char *dst = xstrfmt("%s/%s", tmp, files[i]);
		char *slash = strrchr(dst, '/');
		*slash = '\0';
		ret = mkdir_p(dst);
		*slash = '/';
		if (ret == 0)
			ret = copy_file(build_dir, files[i], dst);
		free(dst);
		if (ret < 0)
			goto out;
	}
	fsync_dir(tmp);
	if (rename(tmp, final) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			ret = err_set(ERR_IO, "%s: cannot rename into place: %s",
				      final, strerror(errno));
			goto out;
		}
		/* another process stored the same state first: keep it */
		rm_rf(tmp);
		utimensat(AT_FDCWD, final, NULL, 0);
	}
	fsync_dir(dir);
	trim(dir, key, max_bytes);
	*entry = final;
	final = NULL;
	ret = 0;
out:
	if (ret < 0)
		rm_rf(tmp);
	free(tmp);
	free(final);
	return ret;
}
