/* tconsole.h: looking up a console report's results in the tests (t-console.c, t-kselftest.c). */
#ifndef STABLEQ_TCONSOLE_H
#define STABLEQ_TCONSOLE_H

#include "console.h"

#include <string.h>

static inline const struct test_result *find(const struct console_report *r,
					     const char *name)
{
	for (size_t i = 0; i < r->nresults; i++)
		if (!strcmp(r->results[i].name, name))
			return &r->results[i];
	return NULL;
}

static inline const char *status_of(const struct console_report *r,
				    const char *name)
{
	const struct test_result *t = find(r, name);

	return t ? test_status_name(t->status) : "(absent)";
}

static inline const char *detail_of(const struct console_report *r,
				    const char *name)
{
	const struct test_result *t = find(r, name);

	return t && t->detail ? t->detail : "(none)";
}

#endif
