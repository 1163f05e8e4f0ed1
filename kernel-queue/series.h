/* series.h: a quilt stable-queue directory: the `series` file and the patch files it names. */
#ifndef STABLEQ_SERIES_H
#define STABLEQ_SERIES_H

#include <stddef.h>

struct series_entry {
	char *name;   /* as written in series ("0001-x.patch", "sub/y.patch") */
	char *path;   /* dir + "/" + name */
	int line;     /* line number in series */
};

/*
 * Parses the text of a series file: blank lines and comments ("# ...")
 * skipped, "name [-p1]" entries (quilt options after the name are ignored,
 * except a -pN other than -p1 which is an error). Rejects a name that is
 * absolute or contains a ".." component (ERR_INVALID, "series:LINE: ...").
 * Does not touch the file system.
 */
int series_parse(struct series_entry **out, size_t *n, const char *buf,
		 size_t len, const char *dir);
/*
 * Reads dir/series and checks that each named file exists and is a regular
 * file inside dir (no symlink escaping it). An empty directory or an empty
 * series is an error naming the directory.
 */
int series_load(struct series_entry **out, size_t *n, const char *dir);
void series_free(struct series_entry *e, size_t n);

#endif
