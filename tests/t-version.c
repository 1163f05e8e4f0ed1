/* t-version.c: stable_version_covers() on stable Cc: annotations. */
#include "patch.h"
#include "tap.h"

static const struct {
	const char *annotation, *version;
	int want;
} cases[] = {
	{"6.1.x", "6.1.192", 1},
	{"6.1.x", "6.6.10", 0},
	{"6.1", "6.1.192", 1},
	{"v6.1", "6.1.192", 1},
	{"v6.1+", "6.6.1", 1},
	{"6.1.y", "6.1.3", 1},
	{"6.1.x", "v6.1.192", 1},
	{"5.10+", "6.1.192", 1},
	{"5.10+", "5.10.0", 1},
	{"5.10+", "5.4.260", 0},
	{"5.10.x+", "5.15.1", 1},
	{"6.1.50+", "6.1.49", 0},
	{"6.1.50+", "6.1.50", 1},
	{"4.19.x-5.15.x", "5.10.200", 1},
	{"4.19.x-5.15.x", "4.19.1", 1},
	{"4.19.x-5.15.x", "5.15.140", 1},
	{"4.19.x-5.15.x", "6.1.192", 0},
	{"4.19.x-5.15.x", "4.14.300", 0},
	{"4.19 - 5.15", "5.4.1", 1},
	{"5.4.x, 5.10.x", "5.10.3", 1},
	{"5.4.x, 5.10.x", "5.15.3", 0},
	{">= 5.15", "6.1.1", 1},
	{"5.15 and later", "6.1.1", 1},
	{"6.1 only", "6.1.1", 1},
	{"6.x", "6.6.1", 1},
	{"6.x", "5.15.1", 0},
	{"6.1.x", "6.1", 1},
	{"needs a backport", "6.1.192", -1},
	{"", "6.1.192", -1},
	{"6.1.x", "linux", -1},
	{"6.1.x", "6", -1},
	{"6.1.x-", "6.1.1", -1},
	{"5.10+ foo", "6.1.1", -1},
	{"99999999999999999999", "6.1.1", -1},
};

int main(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(stable_version_covers(cases[i].annotation,
					     cases[i].version),
		       cases[i].want, "'%s' covers %s: %d", cases[i].annotation,
		       cases[i].version, cases[i].want);
	is_int(stable_version_covers(NULL, "6.1.1"), -1, "NULL annotation");
	is_int(stable_version_covers("6.1.x", NULL), -1, "NULL version");
	return done_testing();
}
