/* embed.h: files of sql/ and web/ compiled into the binary (see embed.sh). */
#ifndef STABLEQ_EMBED_H
#define STABLEQ_EMBED_H

#include <stddef.h>

struct embedded_file {
	const char *path;  /* as in the source tree: "sql/001-init.sql" */
	const char *start; /* NUL-terminated after end */
	const char *end;
};

/* Terminated by an entry whose path is NULL. */
extern const struct embedded_file embedded_files[];

/* The file at path, or NULL; *len gets its size. */
const struct embedded_file *embed_find(const char *path, size_t *len);

#endif
