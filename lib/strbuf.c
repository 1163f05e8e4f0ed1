/* strbuf.c: growable byte buffers and small allocation helpers. */
#include "strbuf.h"
#include "err.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char strbuf_slopbuf[1];

static void die_oom(size_t n)
{
	fprintf(stderr, "stableq: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die_oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die_oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		die_oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *xstrfmt(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return strbuf_detach(&sb, NULL);
}

void strbuf_init(struct strbuf *sb, size_t hint)
{
	sb->alloc = sb->len = 0;
	sb->buf = strbuf_slopbuf;
	if (hint)
		strbuf_grow(sb, hint);
}

void strbuf_release(struct strbuf *sb)
{
	if (!sb)
		return;
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb, 0);
}

char *strbuf_detach(struct strbuf *sb, size_t *len)
{
	char *res;

	strbuf_grow(sb, 0);
	res = sb->buf;
	if (len)
		*len = sb->len;
	strbuf_init(sb, 0);
	return res;
}

void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want;

	if (sb->len + extra + 1 < sb->len)
		die_oom(SIZE_MAX);
	want = sb->len + extra + 1;
	if (sb->alloc && want <= sb->alloc)
		return;
	if (!sb->alloc) {
		size_t n = want < 64 ? 64 : want;
		sb->buf = xmalloc(n);
		sb->buf[0] = '\0';
		sb->alloc = n;
		return;
	}
	size_t n = sb->alloc;
	while (n < want)
		n = n < 1024 ? n * 2 : n + n / 2;
	sb->buf = xrealloc(sb->buf, n);
	sb->alloc = n;
}

void strbuf_setlen(struct strbuf *sb, size_t len)
{
	if (!sb->alloc && len == 0)
		return;
	strbuf_grow(sb, len > sb->len ? len - sb->len : 0);
	sb->len = len;
	sb->buf[len] = '\0';
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	if (len)
		memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	strbuf_add(sb, &ch, 1);
}

void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other)
{
	strbuf_add(sb, other->buf, other->len);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	strbuf_grow(sb, 64);
	va_copy(cp, ap);
	n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= sb->alloc - sb->len) {
		strbuf_grow(sb, (size_t)n);
		n = vsnprintf(sb->buf + sb->len, sb->alloc - sb->len, fmt, ap);
	}
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_rtrim(struct strbuf *sb)
{
	while (sb->len && isspace((unsigned char)sb->buf[sb->len - 1]))
		sb->len--;
	if (sb->alloc)
		sb->buf[sb->len] = '\0';
}

void strbuf_trim(struct strbuf *sb)
{
	size_t i = 0;

	strbuf_rtrim(sb);
	while (i < sb->len && isspace((unsigned char)sb->buf[i]))
		i++;
	if (i) {
		memmove(sb->buf, sb->buf + i, sb->len - i);
		strbuf_setlen(sb, sb->len - i);
	}
}

int strbuf_read_fd(struct strbuf *sb, int fd, size_t max)
{
	size_t start = sb->len;

	for (;;) {
		strbuf_grow(sb, 8192);
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			sb->buf[sb->len] = '\0';
			return -1;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		if (max && sb->len - start > max) {
			sb->buf[sb->len] = '\0';
			errno = EFBIG;
			return -1;
		}
	}
	sb->buf[sb->len] = '\0';
	return 0;
}

int strbuf_read_file(struct strbuf *sb, const char *path, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t old = sb->len;
	int ret;

	if (fd < 0)
		return err_set(-1, "%s: cannot open: %s", path, strerror(errno));
	ret = strbuf_read_fd(sb, fd, max);
	if (ret < 0) {
		int e = errno;
		close(fd);
		strbuf_setlen(sb, old);
		if (e == EFBIG)
			return err_set(-1, "%s: larger than the limit of %zu bytes",
				       path, max);
		return err_set(-1, "%s: cannot read: %s", path, strerror(e));
	}
	close(fd);
	return 0;
}
