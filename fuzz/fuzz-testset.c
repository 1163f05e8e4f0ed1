/* fuzz-testset.c: the regression test set parser (config/tests.conf) on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "testset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct test_def *t = NULL;
	size_t n = 0;

	if (testset_parse((const char *)data, size, "tests.conf", &t, &n) == 0)
		testset_free(t, n);
	err_clear();
	return 0;
}
