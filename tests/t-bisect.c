/* t-bisect.c: bisection's search over queue prefixes, steered by a known culprit. */
#include "bisect.h"
#include "tap.h"

/*
 * Runs the search over n patches whose first bad prefix is k (prefix p:
 * the branch plus the first p patches; it fails from k on). Returns the
 * answer; *tries counts the prefixes tried, *bad_try is set when one was
 * tried twice or outside 0..n-1.
 */
static long search(size_t n, long k, long *tries, int *bad_try, long *order)
{
	struct bisect_window w;
	unsigned char seen[256] = { 0 };
	long p;

	*tries = 0;
	bisect_window_init(&w, n);
	while ((p = bisect_window_next(&w)) >= 0) {
		if (p >= (long)n || seen[p]++)
			*bad_try = 1;
		if (order)
			order[*tries] = p;
		if (++*tries > 64)
			break;
		bisect_window_record(&w, p, p >= k);
	}
	return w.bad;
}

int main(void)
{
	long tries, order[64], worst = 0;
	int bad_try = 0, wrong = 0, over = 0;

	is_int(bisect_search_steps(1), 0, "one possible answer: no step");
	is_int(bisect_search_steps(2), 1, "two: one step");
	is_int(bisect_search_steps(9), 4, "nine: four steps");
	is_int(bisect_search_steps(16), 4, "sixteen: four steps");
	is_int(bisect_search_steps(17), 5, "seventeen: five");

	is_int(search(8, 5, &tries, &bad_try, order), 5, "8 patches, prefix 5 first bad: found");
	is_int(tries, 3, "... in 3 tries");
	ok(order[0] == 3 && order[1] == 5 && order[2] == 4, "... prefixes 3, 5, 4");

	is_int(search(1, 1, &tries, &bad_try, NULL), 1, "1 patch, it is bad");
	is_int(tries, 1, "... the branch alone is tried once (not assumed good)");
	is_int(search(1, 0, &tries, &bad_try, NULL), 0, "1 patch, the branch alone fails");

	for (size_t n = 1; n <= 200; n++) {
		for (long k = 0; k <= (long)n; k++) {
			long got = search(n, k, &tries, &bad_try, NULL);
			if (got != k) {
				wrong++;
				diag("n %zu, first bad %ld: found %ld", n, k, got);
			}
			if (tries > bisect_search_steps((long)n + 1)) {
				over++;
				diag("n %zu, first bad %ld: %ld tries", n, k, tries);
			}
			if (tries > worst)
				worst = tries;
		}
	}
	is_int(wrong, 0, "every culprit of queues of 1..200 patches is found");
	is_int(over, 0, "... each in at most ceil(log2(n + 1)) tries");
	ok(!bad_try, "... never trying a prefix twice, nor the known-bad whole queue");
	is_int(worst, 8, "200 patches: 8 tries at worst");
	return done_testing();
}
