/* fuzz-gcov.c: a coverage boot's parsers on arbitrary bytes: the console's gcov blocks, gcov's JSON, a diff's added lines. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gcov.h"

static const char diff[] = "--- a/lib/x.c\n+++ b/lib/x.c\n@@ -1,1 +1,3 @@\n"
			   " a\n+b\n+c\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gcov_gcda *g = NULL;
	struct gcov_file *f = NULL;
	size_t ng = 0, nf = 0;
	char *text = malloc(size + 1);

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	/* the guest's console: with the boot's token and without */
	if (gcov_console_gcda(text, size, "T0K3N", &g, &ng) == 0)
		gcov_gcda_free(g, ng);
	/* the bytes as a patch's diff, then as gcov's output for it */
	gcov_files_add(&f, &nf, 1, text);
	if (gcov_files_add(&f, &nf, 2, diff) == 0)
		gcov_merge_json(f, nf, text);
	gcov_files_free(f, nf);
	free(text);
	err_clear();
	return 0;
}
