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
/* 1 when dir is a directory with nothing in it: a queue not begun yet. */
int series_dir_empty(const char *dir);
void series_free(struct series_entry *e, size_t n);

/*
 * stableq's own files in a queue directory: the revert patches it writes
 * there are `git format-patch` mails of commits it authored as
 * SERIES_OWN_AUTHOR ("From <sha> Mon Sep 17 00:00:00 2001", then
 * "From: stableq <stableq@localhost>"). Such a file records a revert
 * already on the branch; importing it as a new patch would only reject
 * it again and mail stableq itself. 1 if buf[0..len) is one, else 0.
 */
#define SERIES_OWN_NAME "stableq"
#define SERIES_OWN_EMAIL "stableq@localhost"
int series_is_own(const char *buf, size_t len);

/*
 * Leaves a patch out of dir/series: its line becomes a comment with note
 * after it ("# 0002-x.patch  # dropped by stableq: ..."), so that quilt
 * and a new import skip it and the record stays. The file is rewritten
 * atomically. Returns 1 if a line was commented out, 0 if name is not an
 * entry (already left out), negative with err_msg() on error.
 */
int series_leave_out(const char *dir, const char *name, const char *note);

/*
 * Copies a queue directory: its series file and every patch file it names
 * (nothing else), into `to`, which must not exist; it appears whole or not
 * at all (built beside it, then renamed).
 */
int series_copy(const char *from, const char *to);

/*
 * Names a patch file in dir/series (a new last line), unless an entry
 * already names it: idempotent, so a resumed revert adds no second line.
 * A missing series file is created. Returns 1 if a line was added, 0 if it
 * was there, negative with err_msg() on error. Only series.c reads or
 * writes series files.
 */
int series_append(const char *dir, const char *name);

#endif
