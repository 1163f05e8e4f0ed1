/* fuzz-console.c: the console parser (a guest's serial output, TAP and KTAP) on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "console.h"
#include "err.h"
#include "testset.h"

/* The shipped test set's shape: one test of each kind. */
static const char tests_conf[] =
	"[test boot]\nkind = boot\n"
	"[test dmesg-clean]\nkind = console\nfail_on = Oops|BUG:|WARNING:\n"
	"[test kunit]\nkind = ktap\n"
	"[test user-copy]\nkind = guest\ncommand = insmod /lib/modules/x.ko\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct test_def *tests;
	static size_t n;
	struct console_report rep;

	if (!tests && testset_parse(tests_conf, sizeof(tests_conf) - 1, "fuzz",
				    &tests, &n) < 0)
		abort();
	/* plain markers, and markers that must end with the boot's token */
	for (int killed = 0; killed < 4; killed++) {
		if (console_parse_marked((const char *)data, size, tests, n,
					 killed & 1, killed & 2 ? "T0K3N" : NULL,
					 &rep) == 0)
			console_report_release(&rep);
	}
	err_clear();
	return 0;
}
