/* embed.c: look-up of the files compiled into the binary. */
#include "embed.h"

#include <string.h>

const struct embedded_file *embed_find(const char *path, size_t *len)
{
	for (const struct embedded_file *f = embedded_files; f->path; f++) {
		if (!strcmp(f->path, path)) {
			if (len)
				*len = (size_t)(f->end - f->start);
			return f;
		}
	}
	return NULL;
}
