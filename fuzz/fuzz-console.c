/* fuzz-console.c: the console parser (a guest's serial output, TAP and KTAP) on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "console.h"
#include "err.h"
#include "testset.h"

/* The shipped test set's shape: one test of each kind, and two kselftests
 * as kselftest_expand() makes them (their TAP lines are results too). */
static const char tests_conf[] =
	"[test boot]\nkind = boot\n"
	"[test dmesg-clean]\nkind = console\nfail_on = Oops|BUG:|WARNING:\n"
	"[test kunit]\nkind = ktap\n"
	"[test user-copy]\nkind = guest\ncommand = insmod /lib/modules/x.ko\n"
	"[test kselftest.timers.posix_timers]\nkind = guest\ncommand = x\n"
	"[test kselftest.size.get_size]\nkind = guest\ncommand = y\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct test_def *tests;
	static size_t n;
	struct console_report rep;

	if (!tests && testset_parse(tests_conf, sizeof(tests_conf) - 1, "fuzz",
				    &tests, &n) < 0)
		abort();
	for (size_t i = 0; i < n; i++)
		tests[i].kselftest = !strncmp(tests[i].name, "kselftest.", 10);
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
