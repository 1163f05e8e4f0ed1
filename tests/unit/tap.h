/* tap.h: a tiny TAP producer for C tests run by prove. */
#ifndef STABLEQ_TAP_H
#define STABLEQ_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed;

static inline int tap_ok(int cond, const char *file, int line, const char *fmt,
			 ...) __attribute__((format(printf, 4, 5)));
static inline int tap_ok(int cond, const char *file, int line, const char *fmt,
			 ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   Failed test at %s line %d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...)                                                              \
	do {                                                                   \
		printf("# ");                                                  \
		printf(__VA_ARGS__);                                           \
		printf("\n");                                                  \
	} while (0)
#define is_int(got, want, ...)                                                 \
	do {                                                                   \
		long long g_ = (long long)(got), w_ = (long long)(want);       \
		if (!ok(g_ == w_, __VA_ARGS__))                                \
			diag("  got: %lld, expected: %lld", g_, w_);          \
	} while (0)
#define is_str(got, want, ...)                                                 \
	do {                                                                   \
		const char *g_ = (got), *w_ = (want);                         \
		if (!ok(g_ && w_ && !strcmp(g_, w_), __VA_ARGS__))             \
			diag("  got: '%s', expected: '%s'", g_ ? g_ : "(null)", \
			     w_ ? w_ : "(null)");                              \
	} while (0)
#define like(got, needle, ...)                                                 \
	do {                                                                   \
		const char *g_ = (got), *n_ = (needle);                       \
		if (!ok(g_ && strstr(g_, n_), __VA_ARGS__))                    \
			diag("  '%s' does not contain '%s'",                  \
			     g_ ? g_ : "(null)", n_);                          \
	} while (0)

/* Prints the plan at the end; exit status says whether anything failed. */
static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
