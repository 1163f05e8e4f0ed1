/* buildcache.h: the artifacts of each built kernel state, kept by what determines them. */
#ifndef STABLEQ_BUILDCACHE_H
#define STABLEQ_BUILDCACHE_H

#include <stddef.h>

/*
 * A built state is its kernel image and the modules the tests load, laid
 * out under DIR/KEY/ as in the build directory (arch/x86/boot/bzImage,
 * lib/test_user_copy.ko, ...), so a runner boots with DIR/KEY as its build
 * directory. KEY is a sha256 over what determines the bytes: the source
 * tree's git id, the configuration's hash (kconfig_hash()) and the
 * compiler's identity (buildcache_compiler_id()).
 *
 * Crash safety: an entry is written into DIR/.tmp.PID.KEY, each file
 * fsynced, then renamed to DIR/KEY in one step, so a reader sees a whole
 * entry or none; temp directories of dead processes are removed by the next
 * store. Two processes storing one key: the second keeps the first's entry.
 *
 * Bounded: after a store, the least recently used entries (an entry's
 * mtime is touched by every hit) are removed until the whole cache holds at
 * most max_bytes; the entry just stored always stays.
 */

/* sha256 hex of the three parts; out gets 64 digits and a NUL. 0 or < 0. */
int buildcache_key(const char *tree_sha, const char *config_hash,
		   const char *compiler_id, char out[65]);

/*
 * `gcc --version` (first line) and `gcc -dumpmachine`: what the compiler
 * contributes to a build. Caller frees *out. 0 or negative (err_msg()).
 */
int buildcache_compiler_id(char **out);
/* The same of another compiler (aarch64-linux-gnu-gcc, clang). */
int buildcache_compiler_id_of(const char *cc, char **out);

/*
 * 1 and *entry (DIR/KEY, caller frees) when the entry exists and holds
 * every one of files (paths relative to a build directory); its mtime is
 * touched. 0 and *entry NULL when it does not. Never an error: a cache that
 * cannot be read is a miss.
 */
int buildcache_lookup(const char *dir, const char *key,
		      const char *const *files, size_t nfiles, char **entry);

/*
 * Copies build_dir/files[i] into the entry DIR/KEY (see above), then trims
 * the cache to max_bytes (0: no bound). *entry (caller frees) is the stored
 * entry. 0, or negative with err_msg() (a missing file, a full disk):
 * nothing is left half-written under KEY.
 */
int buildcache_store(const char *dir, const char *key, const char *build_dir,
		     const char *const *files, size_t nfiles,
		     unsigned long long max_bytes, char **entry);

/* The bytes under dir's entries (temp directories included). */
unsigned long long buildcache_size(const char *dir);

#endif
