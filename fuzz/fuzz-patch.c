/* fuzz-patch.c: the mail/mbox/patch parser on arbitrary bytes. */
#include <stdint.h>
#include <stdlib.h>

#include "err.h"
#include "mime.h"
#include "patch.h"
#include "strbuf.h"

#include <string.h>

/* Header text comes out of intake as one line without control characters. */
static void check_clean(const char *s)
{
	if (s && mime_has_control(s, strlen(s)))
		abort();
}

/* A message made safe has no line that ends it or starts a diff. */
static void check_safe(const char *msg)
{
	struct strbuf sb = STRBUF_INIT;

	patch_safe_message(&sb, msg);
	for (const char *l = sb.buf; l && *l;) {
		if (!strncmp(l, "---", 3) || !strncmp(l, "diff ", 5) ||
		    !strncmp(l, "From ", 5) || !strncmp(l, "+++ ", 4))
			abort();
		l = strchr(l, '\n');
		l = l ? l + 1 : NULL;
	}
	strbuf_release(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct patch **v = NULL;
	int n = mbox_parse(&v, (const char *)data, size, "fuzz", 1 << 20);

	for (int i = 0; i < n; i++) {
		struct patch *p = v[i];
		const struct patch_tag *t[8];
		size_t k = patch_tags_of(p, "stable", t, 8);
		check_clean(p->subject);
		check_clean(p->author_name);
		check_clean(p->author_email);
		check_clean(p->date);
		check_clean(p->message_id);
		for (size_t j = 0; j < p->ntags; j++) {
			check_clean(p->tags[j].value);
			check_clean(p->tags[j].extra);
		}
		check_safe(p->message);
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
