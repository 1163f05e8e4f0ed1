/* fuzz-address.c: the RFC 5322 address parser (intake and mail) on arbitrary
 * bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "address.h"
#include "err.h"

static const unsigned modes[] = {0, ADDRESS_ONE,
				 ADDRESS_ONE | ADDRESS_TRAILING};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;

	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct mailboxes l = {0};
		size_t used = 0;
		if (address_parse(&l, s, size, modes[m], &used) == 0) {
			if (used > size)
				abort();
			for (size_t i = 0; i < l.n; i++) {
				/* every mailbox is something, an address
				 * has its @, and no name is empty */
				if (!l.v[i].name && !l.v[i].addr)
					abort();
				if (l.v[i].addr && !strchr(l.v[i].addr, '@'))
					abort();
				if (l.v[i].name && !*l.v[i].name)
					abort();
				addr_problem(l.v[i].addr);
			}
			if ((modes[m] & ADDRESS_ONE) && l.n > 1)
				abort();
		} else if (l.n) {
			abort(); /* an error adds nothing */
		}
		mailboxes_release(&l);
	}
	if (address_note(s, size) > size)
		abort();
	err_clear();
	return 0;
}
