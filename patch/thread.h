/* thread.h: mail threads assembled into patch series, as `b4 am` does. */
#ifndef STABLEQ_THREAD_H
#define STABLEQ_THREAD_H

#include "patch.h"

#include <stddef.h>

/*
 * One series found among a set of messages: its cover letter ("[PATCH
 * 0/m]" without a diff, or none), its patches ordered by n of n/m (a
 * single patch is a series of one), its reroll version (vN of the prefix,
 * 1 when none) and whether a newer version of the same series (the same
 * cover or first-patch subject from the same author, sent in its thread:
 * a message of the newer answers one of the older) is in the set, in
 * which case only the newest is to be used. Indices point into the array
 * given to thread_assemble().
 */
#define THREAD_NONE ((size_t)-1)
struct thread_series {
	size_t cover;      /* THREAD_NONE when there is none */
	size_t *parts;     /* owned: indices of the patches, in n order */
	size_t nparts;
	int version;
	int total;         /* m of n/m (0 for a lone patch) */
	int superseded;
};

/*
 * The series of msgs[0..n) (parsed with PATCH_ANY_MESSAGE: messages with a
 * diff are patches; the others are covers or replies and left out unless
 * they are a series' cover). A patch belongs to the series of its thread
 * root: In-Reply-To followed inside the set (a chain that loops or runs
 * longer than the set ends where it is; a forged In-Reply-To naming a
 * message of another author's series is not followed, nor one naming
 * another version's). Parts answering the same message outside the set
 * (a cover not read yet) from the same author, version and m are one
 * series. Within a series a part seen twice keeps its first message. Series come in the order of
 * their first message. Returns the number of series (*out owned by the
 * caller: thread_series_free()).
 */
size_t thread_assemble(struct thread_series **out, struct patch *const *msgs,
		       size_t n);
void thread_series_free(struct thread_series *v, size_t n);

/* The reroll version of a subject prefix ("PATCH v3 6.1 2/5": 3), 1 if none. */
int thread_version(const char *subject_prefix);

#endif
