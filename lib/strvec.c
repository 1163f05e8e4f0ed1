/* strvec.c: growable NULL-terminated string arrays. */
#include "strvec.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdlib.h>

const char *strvec_empty_array[] = { NULL };

void strvec_init(struct strvec *sv)
{
	sv->v = strvec_empty_array;
	sv->nr = sv->alloc = 0;
}

static const char *push_owned(struct strvec *sv, char *s)
{
	if (sv->nr + 2 > sv->alloc) {
		size_t n = sv->alloc ? 2 * sv->alloc : 8;
		const char **v = sv->alloc ? sv->v : NULL;
		sv->v = xrealloc(v, n * sizeof(*sv->v));
		sv->alloc = n;
	}
	sv->v[sv->nr++] = s;
	sv->v[sv->nr] = NULL;
	return s;
}

const char *strvec_push(struct strvec *sv, const char *s)
{
	return push_owned(sv, xstrdup(s));
}

const char *strvec_pushf(struct strvec *sv, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	return push_owned(sv, strbuf_detach(&sb, NULL));
}

void strvec_pushl(struct strvec *sv, ...)
{
	va_list ap;
	const char *s;

	va_start(ap, sv);
	while ((s = va_arg(ap, const char *)))
		strvec_push(sv, s);
	va_end(ap);
}

void strvec_pushv(struct strvec *sv, const char *const *v)
{
	for (; v && *v; v++)
		strvec_push(sv, *v);
}

void strvec_pop(struct strvec *sv)
{
	if (!sv->nr)
		return;
	free((char *)sv->v[--sv->nr]);
	sv->v[sv->nr] = NULL;
}

void strvec_clear(struct strvec *sv)
{
	if (!sv)
		return;
	if (sv->alloc) {
		for (size_t i = 0; i < sv->nr; i++)
			free((char *)sv->v[i]);
		free(sv->v);
	}
	strvec_init(sv);
}
