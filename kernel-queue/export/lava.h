/* lava.h: a candidate as a LAVA job definition (qemu device type), for labs that run LAVA. */
#ifndef STABLEQ_LAVA_H
#define STABLEQ_LAVA_H

#include "config.h"

#include <jansson.h>
#include <sqlite3.h>

/*
 * The job boots what stableq booted: the candidate's bzImage from the build
 * directory and the initramfs of its boot (VAR_DIR/guest/initramfs.cpio:
 * /init, busybox, the test programs and modules), both copied to out_dir
 * with their sha256, on LAVA's `qemu` device type (deploy to tmpfs, boot
 * method qemu, the kernel parameters stableq's runner uses).
 *
 * The test set becomes one test action of LAVA monitors, which read the
 * console as stableq's parser does (qemu-runner/guest/README.md):
 *   guest tests   one monitor each: "@@stableq begin NAME" to
 *                 "@@stableq end NAME STATUS"; status 0 passes, any
 *                 other fails
 *   ktap tests    KUnit's "ok N case" / "not ok N case" lines at boot
 *   console tests a fail per fail_on substring seen before
 *                 "@@stableq done"
 *   boot tests    a pass once "@@stableq userspace" shows
 *
 * The build directory holds one kernel, the last one built: a candidate
 * whose build is not the last is refused (ERR_CONFLICT, saying to run the
 * candidate again), as is one that was never built (ERR_CONFLICT) or an
 * unknown one (ERR_NOTFOUND).
 */
struct lava_opts {
	long long candidate;
	const char *out_dir;  /* NULL: VAR_DIR/lava/candidate-N (made) */
	const char *url_base; /* where out_dir is served; NULL: file://out_dir */
};

/*
 * Writes out_dir/bzImage, out_dir/initramfs.cpio and out_dir/job.yaml and
 * returns the job's YAML text in *yaml (caller frees). 0 or negative with
 * err_msg().
 */
int lava_job(sqlite3 *db, const struct config *cfg, const struct lava_opts *o,
	     char **yaml);

/*
 * A JSON tree as YAML (block style; strings double-quoted with JSON's
 * escapes, which YAML reads the same). Appended to out.
 */
struct strbuf;
void lava_yaml(struct strbuf *out, json_t *j);

#endif
