/* err.h: one error slot per thread holding the human message (libgit2 style). */
#ifndef STABLEQ_ERR_H
#define STABLEQ_ERR_H

/*
 * Functions return 0 (or a positive count) on success and a negative code on
 * failure; the failing function stores one human message here and the callers
 * pass the code up untouched. The message names what was wrong
 * ("series:3: ../x.patch: path leaves the queue directory").
 */
enum {
	ERR_GENERIC = -1,
	ERR_NOTFOUND = -2,  /* unknown id, missing file */
	ERR_INVALID = -3,   /* bad input: parse errors, bad arguments */
	ERR_CONFLICT = -4,  /* state does not allow it, patch does not apply */
	ERR_EXISTS = -5,    /* already there */
	ERR_IO = -6,        /* file, database, network */
	ERR_TOOBIG = -7,    /* over a configured limit */
	ERR_AUTH = -8,      /* missing or wrong credentials */
};

/* Sets the message and returns code, for `return err_set(ERR_INVALID, ...)`. */
__attribute__((format(printf, 2, 3)))
int err_set(int code, const char *fmt, ...);
/* Prefixes the current message with "prefix: " and returns code. */
__attribute__((format(printf, 2, 3)))
int err_prefix(int code, const char *fmt, ...);
/* The last message of this thread ("" if none). Borrowed, valid until the next err_set(). */
const char *err_msg(void);
void err_clear(void);
/* The code of the last err_set()/err_prefix() of this thread (0 if none). */
int err_last(void);

#endif
