/* t-strvec.c: growable NULL-terminated string arrays. */
#include "strvec.h"
#include "tap.h"

int main(void)
{
	struct strvec sv = STRVEC_INIT;
	char word[] = "mutable";

	ok(sv.v && !sv.v[0] && sv.nr == 0, "STRVEC_INIT is an empty array");
	strvec_push(&sv, word);
	word[0] = 'X';
	is_str(sv.v[0], "mutable", "push copies the string");
	strvec_pushf(&sv, "-j%d", 2);
	strvec_pushl(&sv, "O=build", "ARCH=x86", NULL);
	is_int(sv.nr, 4, "pushf and pushl append");
	is_str(sv.v[1], "-j2", "... formatted");
	is_str(sv.v[3], "ARCH=x86", "... in order");
	ok(!sv.v[4], "... and NULL-terminated");
	for (int i = 0; i < 100; i++)
		strvec_pushf(&sv, "t%d", i);
	ok(sv.nr == 104 && !strcmp(sv.v[103], "t99") && !sv.v[104], "it grows");
	strvec_pop(&sv);
	ok(sv.nr == 103 && !sv.v[103], "pop drops the last");
	{
		const char *more[] = { "a", "b", NULL };
		strvec_pushv(&sv, more);
		strvec_pushv(&sv, NULL);
		ok(sv.nr == 105 && !strcmp(sv.v[104], "b"), "pushv appends an array");
	}
	strvec_clear(&sv);
	ok(sv.nr == 0 && sv.v && !sv.v[0], "clear empties it");
	strvec_pop(&sv);
	ok(sv.nr == 0, "pop of an empty strvec does nothing");
	strvec_push(&sv, "again");
	is_str(sv.v[0], "again", "usable after clear");
	strvec_clear(&sv);
	strvec_clear(NULL);
	return done_testing();
}
