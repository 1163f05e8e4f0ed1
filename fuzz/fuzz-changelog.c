/* fuzz-changelog.c: the Debian changelog parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "changelog.h"

static int count(void *arg, const char *series, long sublevel,
		 const char *subject)
{
	size_t *n = arg;
	/* what the index stores: bounded, one line */
	if (strlen(subject) > 2048 || strchr(subject, '\n') || sublevel < 0 ||
	    strlen(series) > 15)
		abort();
	/* the lookup's rewrite of an arch prefix only ever shortens it */
	struct strbuf alt = STRBUF_INIT;
	if (changelog_subject_unarched(&alt, subject) &&
	    (alt.len >= strlen(subject) ||
	     strcmp(alt.buf, subject + strlen(subject) - alt.len)))
		abort();
	strbuf_release(&alt);
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;

	changelog_parse((const char *)data, size, count, &n);
	return 0;
}
