/* guestconf.h: the guest kernel configurations a branch may boot (quick, broad), in one table. */
#ifndef STABLEQ_GUESTCONF_H
#define STABLEQ_GUESTCONF_H

#include <stddef.h>

struct config;
struct strbuf;

/*
 * A branch's `guest_config` names one row of this table: what its kernel
 * configuration is made from, and what a boot of it needs.
 *
 *   quick  `make tinyconfig`, then kernel_config_dir's fragments: the
 *          small guest (a cold build in minutes; 6 KUnit suites), what the
 *          tests boot and `make run` builds by default
 *   broad  `make defconfig kvm_guest.config` (x86_64 defconfig with the
 *          virtio/KVM-guest options; an arm64 cell's is arm64's
 *          defconfig, its fragments broad_config_dir/arm64: cell.h),
 *          then broad_config_dir's fragments
 *          (filesystems, networking, netfilter, BPF, crypto, block, the
 *          guest tests' modules), then every KUnit suite of the candidate's
 *          own tree (kunitconf_scan()) less the kunit_deny list: the
 *          kernel that holds what a stable release touches
 *
 * Then `make olddefconfig`, and every symbol of the fragments must survive
 * it (kconfig_verify()); the KUnit fragment is not held to that: a suite
 * whose subsystem does not build for x86_64 falls away there.
 */
struct guestconf {
	const char *name;
	const char *base;      /* the make targets the fragments go on */
	int kunit_tree;        /* add the tree's KUnit fragment */
	size_t fragments;      /* offsetof(struct config, ...): the dir */
	int boot_timeout_s;    /* a boot's deadline is at least this */
	int memory_mb;         /* and its memory */
};

/* The row named name; NULL with err_msg() listing the names. */
const struct guestconf *guestconf_find(const char *name);
/* The fragment directory of g in c (borrowed from c). */
const char *guestconf_fragments(const struct guestconf *g,
				const struct config *c);

/*
 * Reads a deny list (config/kunit-deny.conf): one Kconfig symbol (without
 * CONFIG_) a line, then why; '#' comments, blank lines. *syms is a
 * NULL-terminated array (free with guestconf_deny_free()). ERR_INVALID
 * naming file:line for a line whose first word is not a symbol or that
 * gives no reason; ERR_NOTFOUND for a missing file.
 */
int guestconf_deny_load(const char *path, char ***syms);
void guestconf_deny_free(char **syms);

/*
 * The KUnit fragment of the tree at src_dir less the deny list at
 * deny_path (NULL: none): kunitconf_scan(). *suites and *denied (may be
 * NULL) get the counts. 0 or negative with err_msg().
 */
int guestconf_kunit(const char *src_dir, const char *deny_path,
		    struct strbuf *out, size_t *suites, size_t *denied);

/*
 * The configuration's identity: kconfig_hash() of the fragments, and for a
 * row other than quick its name, base, the deny list's contents and, with
 * src_dir, the tree's defconfig files of arch (its row's defconfig in
 * lib/karch.h, and kvm_guest.config; NULL or "x86_64": x86_64's, hashed
 * as before the matrix; another: and the arch's name) and its KUnit
 * fragment. src_dir NULL
 * hashes what does not come from the tree (the build cache's key holds
 * the tree). 0 or negative.
 */
int guestconf_hash(const struct guestconf *g, const char *arch,
		   const char *src_dir, const char *config_dir,
		   const char *deny_path, char out[65]);

#endif
