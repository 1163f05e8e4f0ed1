/* file.c: whole files and directories: atomic writes, mkdir -p, rm -rf. */
#include "file.h"
#include "err.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int write_file_atomic(const char *path, const void *data, size_t len)
{
	char *tmp = xstrfmt("%s.tmp.%ld", path, (long)getpid());
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	const char *p = data;
	int ret = -1;

	if (fd < 0) {
		err_set(-1, "%s: cannot create: %s", tmp, strerror(errno));
		goto out;
	}
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err_set(-1, "%s: cannot write: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) < 0 || close(fd) < 0) {
		err_set(-1, "%s: cannot write: %s", tmp, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, path) < 0) {
		err_set(-1, "%s: cannot rename into place: %s", path,
			strerror(errno));
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	free(tmp);
	return ret;
}

int mkdir_p(const char *dir)
{
	char *p = xstrdup(dir), *s;
	int ret = 0;

	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			ret = err_set(ERR_IO, "%s: cannot create: %s", p,
				      strerror(errno));
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		ret = err_set(ERR_IO, "%s: cannot create: %s", p,
			      strerror(errno));
out:
	free(p);
	return ret;
}

static int rm_cb(const char *path, const struct stat *st, int flag,
		 struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) < 0 ? -1 : 0;
	return unlink(path) < 0 ? -1 : 0;
}

int rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0
				       : err_set(ERR_IO, "%s: %s", path,
						 strerror(errno));
	if (nftw(path, rm_cb, 32, FTW_DEPTH | FTW_PHYS) < 0)
		return err_set(ERR_IO, "%s: cannot remove: %s", path,
			       strerror(errno));
	return 0;
}

int file_in_path(const char *prog)
{
	const char *p = getenv("PATH");
	char *dup = xstrdup(p ? p : "/usr/bin:/bin");
	int found = 0;

	for (char *save = NULL, *d = strtok_r(dup, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		char *c = xstrfmt("%s/%s", d, prog);
		found = access(c, X_OK) == 0;
		free(c);
	}
	free(dup);
	return found;
}

int file_open_beneath(const char *dir, const char *rel, int flags)
{
	char *dup = xstrdup(rel), *save = NULL, *next;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), ret;

	if (fd < 0) {
		ret = err_set(ERR_NOTFOUND, "%s: %s", dir, strerror(errno));
		goto out;
	}
	if (*rel == '/') {
		ret = err_set(ERR_INVALID, "%s: not below %s", rel, dir);
		goto out;
	}
	for (char *c = strtok_r(dup, "/", &save); c; c = next) {
		int sub;
		next = strtok_r(NULL, "/", &save);
		if (!strcmp(c, "..") || !strcmp(c, ".")) {
			ret = err_set(ERR_INVALID, "%s: not below %s", rel,
				      dir);
			goto out;
		}
		sub = next ? openat(fd, c,
				    O_PATH | O_DIRECTORY | O_NOFOLLOW |
					    O_CLOEXEC)
			   : openat(fd, c, flags | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0) {
			int e = errno;
			ret = err_set(e == ENOENT ? ERR_NOTFOUND : ERR_INVALID,
				      "%s/%s: %s%s", dir, rel, strerror(e),
				      e == ELOOP || e == ENOTDIR
					      ? " (a symlink where a file or"
						" directory should be)"
					      : "");
			goto out;
		}
		close(fd);
		fd = sub;
	}
	free(dup);
	return fd;
out:
	if (fd >= 0)
		close(fd);
	free(dup);
	return ret;
}
