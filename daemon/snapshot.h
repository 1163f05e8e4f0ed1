/* snapshot.h: the config the daemon holds, as a private file its child steps read. */
#ifndef STABLEQ_SNAPSHOT_H
#define STABLEQ_SNAPSHOT_H

#include "config.h"

/*
 * The daemon's steps are child processes (`stableq -c FILE ...`). They
 * must run with the config the daemon holds, not with whatever the file
 * on disk says now: after a SIGHUP with a broken file (or none) the
 * daemon keeps its config, and so must its steps. So the daemon reads the
 * file's bytes once, checks them, and keeps them in var_dir/run/config.conf
 * (a directory only its user may read: the file may hold smtp_url's
 * password); the steps get that path. A file that does not load changes
 * nothing, and the snapshot stays as it was.
 */

/*
 * Reads path (NULL: defaults, an empty file), checks it as config_load()
 * does into *out (its path set to path), and on success makes it the
 * snapshot. Negative with err_msg() naming path (never the snapshot) when
 * the file cannot be read or does not load; *out is then freed.
 */
int snapshot_take(const char *path, const char *var_dir, struct config *out);

/* var_dir/run/config.conf (caller frees). */
char *snapshot_path(const char *var_dir);

#endif
