/* kconfig.h: a kernel configuration from fragments (config/kernel/NAME.config on tinyconfig). */
#ifndef STABLEQ_KCONFIG_H
#define STABLEQ_KCONFIG_H

#include <stddef.h>

/*
 * The configuration's identity, without building: sha256 over the tinyconfig
 * base (kernel/configs/tiny*.config and arch/x86/configs/tiny.config of
 * src_dir, those present) and each fragment's name and contents, in name
 * order. out receives 64 hex digits and a NUL. 0 or negative (err_msg()).
 */
int kconfig_hash(const char *src_dir, const char *config_dir, char out[65]);

/*
 * Checks build_dir/.config (or any .config at dot_config) against the
 * fragments: 0 when every "CONFIG_X=v" and "# CONFIG_X is not set" holds,
 * else ERR_INVALID naming the first fragment line that does not, and saying
 * whether no Kconfig file of src_dir defines the symbol (unknown) or its
 * dependencies keep it from the value (unsatisfiable). src_dir may be NULL
 * (no unknown/unsatisfiable distinction then).
 */
int kconfig_verify(const char *config_dir, const char *dot_config,
			 const char *src_dir);

/* The NAME.config fragments of dir, sorted by name (paths; free with kconfig_fragments_free()). 0 or negative. */
int kconfig_fragments(const char *dir, char ***out, size_t *n);
void kconfig_fragments_free(char **v, size_t n);

#endif
