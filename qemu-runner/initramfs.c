/* initramfs.c: a cpio "newc" writer for the initramfs (no external cpio). */
#include "initramfs.h"
#include "err.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_LEN 4096

struct writer {
	FILE *f;
	const char *out_path;
	unsigned long ino;
	uint64_t off;
	char **seen; /* archive paths written so far (owned) */
	size_t nseen, aseen;
};

static int seen_has(const struct writer *w, const char *path)
{
	for (size_t i = 0; i < w->nseen; i++)
		if (!strcmp(w->seen[i], path))
			return 1;
	return 0;
}

static void seen_add(struct writer *w, const char *path)
{
	if (w->nseen == w->aseen) {
		w->aseen = w->aseen ? 2 * w->aseen : 32;
		w->seen = xrealloc(w->seen, w->aseen * sizeof(*w->seen));
	}
	w->seen[w->nseen++] = xstrdup(path);
}

static int out_write(struct writer *w, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, w->f) != n)
		return err_set(ERR_IO, "%s: cannot write: %s", w->out_path,
			       strerror(errno));
	w->off += n;
	return 0;
}

static int out_pad(struct writer *w)
{
	static const char zeros[4];
	size_t pad = (size_t)((4 - (w->off & 3)) & 3);

	return out_write(w, zeros, pad);
}

/* One header + name (+ padding); the caller writes the data and its padding. */
static int out_header(struct writer *w, const char *name, unsigned mode,
		      uint64_t size, unsigned rmajor, unsigned rminor)
{
	/* newc: magic, then 13 fields of 8 hex digits; check is 0 for newc. */
	const uint32_t f[13] = {
		(uint32_t)w->ino++,
		mode,
		0,
		0,
		(mode & S_IFMT) == S_IFDIR ? 2 : 1,
		0,
		(uint32_t)size,
		0,
		0,
		rmajor,
		rminor,
		(uint32_t)(strlen(name) + 1),
		0,
	};
	size_t namesize = strlen(name) + 1;
	char hdr[6 + 13 * 8 + 1];
	int ret;

	memcpy(hdr, "070701", 6);
	for (size_t i = 0; i < 13; i++)
		snprintf(hdr + 6 + 8 * i, 9, "%08" PRIX32, f[i]);
	if ((ret = out_write(w, hdr, 110)) < 0 ||
	    (ret = out_write(w, name, namesize)) < 0)
		return ret;
	return out_pad(w);
}

/* "/a//b" -> error; "/bin/busybox" -> "bin/busybox". */
static int clean_path(const char *in, struct strbuf *out, size_t idx)
{
	const char *p = in;

	strbuf_reset(out);
	if (!in || !*in)
		return err_set(ERR_INVALID, "initramfs entry %zu: empty path",
			       idx);
	while (*p == '/')
		p++;
	if (!*p)
		return err_set(ERR_INVALID,
			       "initramfs entry %zu: '%s' names the root", idx,
			       in);
	if (strlen(p) >= NAME_MAX_LEN)
		return err_set(ERR_INVALID,
			       "initramfs entry %zu: path longer than %d bytes",
			       idx, NAME_MAX_LEN - 1);
	for (const char *c = p; *c;) {
		const char *slash = strchr(c, '/');
		size_t len = slash ? (size_t)(slash - c) : strlen(c);
		if (len == 0 || (len == 1 && c[0] == '.') ||
		    (len == 2 && c[0] == '.' && c[1] == '.'))
			return err_set(ERR_INVALID,
				       "initramfs entry %zu: '%s': empty, '.' "
				       "or '..' component",
				       idx, in);
		c += len + (slash ? 1 : 0);
		if (slash && !*c)
			return err_set(
				ERR_INVALID,
				"initramfs entry %zu: '%s': trailing '/'", idx,
				in);
	}
	strbuf_addstr(out, p);
	return 0;
}

/* Writes the directories leading to path that are not in the archive yet. */
static int out_parents(struct writer *w, const char *path)
{
	char *dup = xstrdup(path);
	int ret = 0;

	for (char *s = strchr(dup, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (!seen_has(w, dup)) {
			ret = out_header(w, dup, S_IFDIR | 0755, 0, 0, 0);
			if (ret < 0)
				break;
			seen_add(w, dup);
		}
		*s = '/';
	}
	free(dup);
	return ret;
}

static int copy_host_file(struct writer *w, const struct initramfs_entry *e,
			  const char *name)
{
	struct stat st;
	char buf[65536];
	uint64_t left;
	int fd, ret;

	fd = open(e->host_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "initramfs %s: %s: %s", name, e->host_path,
			       strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = err_set(ERR_INVALID,
			      "initramfs %s: %s: not a regular file", name,
			      e->host_path);
		goto out;
	}
	if ((uint64_t)st.st_size > 0xffffffffu) {
		ret = err_set(ERR_TOOBIG, "initramfs %s: %s: 4 GiB or larger",
			      name, e->host_path);
		goto out;
	}
	ret = out_header(w, name,
			 S_IFREG | ((e->mode ? e->mode : st.st_mode) & 07777),
			 (uint64_t)st.st_size, 0, 0);
	if (ret < 0)
		goto out;
	for (left = (uint64_t)st.st_size; left;) {
		ssize_t n =
			read(fd, buf,
			     left < sizeof(buf) ? (size_t)left : sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = err_set(ERR_IO, "initramfs %s: %s: %s", name,
				      e->host_path, strerror(errno));
			goto out;
		}
		if (n == 0) {
			ret = err_set(ERR_IO,
				      "initramfs %s: %s: shrank while copied",
				      name, e->host_path);
			goto out;
		}
		if ((ret = out_write(w, buf, (size_t)n)) < 0)
			goto out;
		left -= (uint64_t)n;
	}
	if (read(fd, buf, 1) != 0) {
		ret = err_set(ERR_IO, "initramfs %s: %s: grew while copied",
			      name, e->host_path);
		goto out;
	}
	ret = out_pad(w);
out:
	close(fd);
	return ret;
}

static int out_entry(struct writer *w, const struct initramfs_entry *e,
		     const char *name)
{
	int ret;

	switch (e->kind) {
	case INITRAMFS_DIR:
		return out_header(w, name, S_IFDIR | (e->mode ? e->mode : 0755),
				  0, 0, 0);
	case INITRAMFS_FILE:
		if (!e->host_path)
			return err_set(ERR_INVALID,
				       "initramfs %s: file without host path",
				       name);
		return copy_host_file(w, e, name);
	case INITRAMFS_DATA:
		if (!e->data && e->len)
			return err_set(ERR_INVALID,
				       "initramfs %s: data entry without data",
				       name);
		if ((uint64_t)e->len > 0xffffffffu)
			return err_set(ERR_TOOBIG,
				       "initramfs %s: 4 GiB or larger", name);
		ret = out_header(w, name, S_IFREG | (e->mode ? e->mode : 0644),
				 e->len, 0, 0);
		if (ret < 0 || (ret = out_write(w, e->data, e->len)) < 0)
			return ret;
		return out_pad(w);
	case INITRAMFS_SYMLINK:
		if (!e->target || !*e->target)
			return err_set(ERR_INVALID,
				       "initramfs %s: symlink without target",
				       name);
		ret = out_header(w, name, S_IFLNK | (e->mode ? e->mode : 0777),
				 strlen(e->target), 0, 0);
		if (ret < 0 ||
		    (ret = out_write(w, e->target, strlen(e->target))) < 0)
			return ret;
		return out_pad(w);
	case INITRAMFS_CHARDEV:
		return out_header(w, name, S_IFCHR | (e->mode ? e->mode : 0600),
				  0, e->major, e->minor);
	}
	return err_set(ERR_INVALID, "initramfs %s: unknown entry kind %d", name,
		       (int)e->kind);
}

int initramfs_write(const char *out_path, const struct initramfs_entry *entries,
		    size_t n)
{
	struct writer w = {.out_path = out_path, .ino = 1};
	struct strbuf name = STRBUF_INIT;
	char *tmp = xstrfmt("%s.tmp.%ld", out_path, (long)getpid());
	int fd, ret = 0;

	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = err_set(ERR_IO, "%s: cannot create: %s", tmp,
			      strerror(errno));
		goto out;
	}
	w.f = fdopen(fd, "w");
	if (!w.f) {
		close(fd);
		ret = err_set(ERR_IO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct initramfs_entry *e = &entries[i];
		if ((ret = clean_path(e->path, &name, i)) < 0)
			goto out;
		if (e->mode & ~07777u) {
			ret = err_set(ERR_INVALID,
				      "initramfs %s: mode %o has more than "
				      "permission bits",
				      name.buf, e->mode);
			goto out;
		}
		if (seen_has(&w, name.buf)) {
			/* a directory implied earlier may be listed later */
			if (e->kind == INITRAMFS_DIR && !e->mode)
				continue;
			ret = err_set(ERR_INVALID,
				      "initramfs %s: listed twice (or listed "
				      "after an entry below it)",
				      name.buf);
			goto out;
		}
		if ((ret = out_parents(&w, name.buf)) < 0 ||
		    (ret = out_entry(&w, e, name.buf)) < 0)
			goto out;
		seen_add(&w, name.buf);
	}
	if ((ret = out_header(&w, "TRAILER!!!", 0, 0, 0, 0)) < 0)
		goto out;
	if (fflush(w.f) != 0 || fsync(fileno(w.f)) < 0) {
		ret = err_set(ERR_IO, "%s: cannot write: %s", tmp,
			      strerror(errno));
		goto out;
	}
	if (fclose(w.f) != 0) {
		w.f = NULL;
		ret = err_set(ERR_IO, "%s: cannot write: %s", tmp,
			      strerror(errno));
		goto out;
	}
	w.f = NULL;
	if (rename(tmp, out_path) < 0)
		ret = err_set(ERR_IO, "%s: cannot rename into place: %s",
			      out_path, strerror(errno));
out:
	if (w.f)
		fclose(w.f);
	if (ret < 0)
		unlink(tmp);
	for (size_t i = 0; i < w.nseen; i++)
		free(w.seen[i]);
	free(w.seen);
	strbuf_release(&name);
	free(tmp);
	return ret;
}
