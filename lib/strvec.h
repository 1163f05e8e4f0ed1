/* strvec.h: a growable NULL-terminated array of strings, for argv and env (after git's strvec). */
#ifndef STABLEQ_STRVEC_H
#define STABLEQ_STRVEC_H

#include <stddef.h>

/*
 * v is always NULL-terminated (v[nr] == NULL), so it can be handed to
 * spawn as argv or env as it is. The strings are copies owned by the
 * strvec: strvec_clear() frees them and leaves it empty and reusable.
 * Allocation failure aborts, as with strbuf. A zeroed struct may be
 * pushed to as well (v is NULL until the first push).
 */
struct strvec {
	const char **v;
	size_t nr;
	size_t alloc;
};

extern const char *strvec_empty_array[];
#define STRVEC_INIT { strvec_empty_array, 0, 0 }

void strvec_init(struct strvec *sv);

/* Appends a copy of s; returns the copy. */
const char *strvec_push(struct strvec *sv, const char *s);
__attribute__((format(printf, 2, 3)))
const char *strvec_pushf(struct strvec *sv, const char *fmt, ...);
/* Appends each argument up to a NULL. */
__attribute__((sentinel))
void strvec_pushl(struct strvec *sv, ...);
/* Appends each string of a NULL-terminated array (NULL: none). */
void strvec_pushv(struct strvec *sv, const char *const *v);
/* Drops the last string (none: nothing). */
void strvec_pop(struct strvec *sv);
void strvec_clear(struct strvec *sv);

#endif
