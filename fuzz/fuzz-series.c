/* fuzz-series.c: the quilt series parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "series.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct series_entry *e = NULL;
	size_t n = 0;

	if (series_parse(&e, &n, (const char *)data, size, "queue") == 0)
		series_free(e, n);
	err_clear();
	return 0;
}
