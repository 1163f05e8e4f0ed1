/* fuzz-patch.c: the mail/mbox/patch parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "patch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch **v = NULL;
	int n = mbox_parse(&v, (const char *)data, size, "fuzz", 1 << 20);

	for (int i = 0; i < n; i++) {
		struct patch *p = v[i];
		const struct patch_tag *t[8];
		size_t k = patch_tags_of(p, "stable", t, 8);
		for (size_t j = 0; j < k && j < 8; j++)
			if (t[j]->extra)
				stable_version_covers(t[j]->extra, "6.1.192");
		patch_free(p);
	}
	if (n > 0)
		free(v);
	err_clear();
	return 0;
}
