/* strbuf.h: growable, always NUL-terminated byte buffers (after git's strbuf). */
#ifndef STABLEQ_STRBUF_H
#define STABLEQ_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

/*
 * A strbuf owns buf; len excludes the terminating NUL, which is always there
 * (buf is never NULL once initialized with STRBUF_INIT or strbuf_init()).
 * Data may hold NUL bytes: use len, not strlen(). Allocation failure aborts:
 * a daemon that cannot allocate a few bytes cannot do anything useful.
 */
struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
/* Frees the buffer and leaves sb empty and reusable. */
void strbuf_release(struct strbuf *sb);
/* Hands the buffer to the caller (free() it); sb is left empty. */
char *strbuf_detach(struct strbuf *sb, size_t *len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_setlen(struct strbuf *sb, size_t len);
static inline void strbuf_reset(struct strbuf *sb) { strbuf_setlen(sb, 0); }

void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addbuf(struct strbuf *sb, const struct strbuf *other);
__attribute__((format(printf, 2, 3)))
void strbuf_addf(struct strbuf *sb, const char *fmt, ...);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);

/* Strips ASCII white space at both ends / at the end. */
void strbuf_trim(struct strbuf *sb);
void strbuf_rtrim(struct strbuf *sb);

/*
 * Reads the whole file at path into sb (appending). Fails with -1 and an
 * err_set() message naming the file if it cannot be read or is larger than
 * max bytes (0: no limit).
 */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t max);
/* Reads all of fd until EOF (appending); -1 on a read error (errno set). */
int strbuf_read_fd(struct strbuf *sb, int fd, size_t max);

/* Allocating helpers that abort on failure. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__attribute__((format(printf, 1, 2)))
char *xstrfmt(const char *fmt, ...);

#endif
