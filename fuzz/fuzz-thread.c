/* fuzz-thread.c: the thread assembler on messages parsed from arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "patch.h"
#include "thread.h"

/*
 * The input is messages separated by lines "\n%%\n"; each is parsed as the
 * intake parses mail (PATCH_ANY_MESSAGE), then the parsed ones are
 * assembled into series. Every index handed back must point at a message
 * of the set, parts in n order.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;
	struct patch **v = NULL;
	struct thread_series *ts = NULL;
	size_t n = 0, ns;

	while (s <= end && n < 256) {
		const char *sep = memmem(s, (size_t)(end - s), "\n%%\n", 4);
		const char *e = sep ? sep : end;
		struct patch *p = NULL;
		if (patch_parse_at(&p, s, (size_t)(e - s), "fuzz", 1 << 20, 1,
				   PATCH_ANY_MESSAGE) == 0 && p) {
			v = realloc(v, (n + 1) * sizeof(*v));
			v[n++] = p;
		}
		err_clear();
		if (!sep)
			break;
		s = sep + 4;
	}
	ns = thread_assemble(&ts, v, n);
	for (size_t i = 0; i < ns; i++) {
		if (ts[i].cover != THREAD_NONE && ts[i].cover >= n)
			abort();
		for (size_t k = 0; k < ts[i].nparts; k++) {
			if (ts[i].parts[k] >= n)
				abort();
			if (k && v[ts[i].parts[k]]->series_part <
					 v[ts[i].parts[k - 1]]->series_part)
				abort();
		}
	}
	thread_series_free(ts, ns);
	for (size_t i = 0; i < n; i++)
		patch_free(v[i]);
	free(v);
	return 0;
}
