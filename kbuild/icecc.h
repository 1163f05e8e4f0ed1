/* icecc.h: an icecream build farm: where its scheduler is, and how big the farm is. */
#ifndef STABLEQ_ICECC_H
#define STABLEQ_ICECC_H

/*
 * The config key `icecc` is "" (off: builds stay local), "on" (compile
 * through the local iceccd, whatever scheduler it found) or the scheduler's
 * address "HOST[:PORT]", as `iceccd -s` takes it (PORT defaults to 8765).
 *
 * The farm's size comes from the scheduler's text interface, which listens
 * on the scheduler port + 1 (8766): `listcs` lists every compile server
 * with its running and maximum jobs ("jobs=0/4"). stableq only reads it.
 */
#define ICECC_SCHEDULER_PORT 8765

/* 1 when value turns icecc on ("on" or an address), 0 when off ("" or NULL). */
int icecc_enabled(const char *value);

/*
 * The scheduler to ask for value: the address itself, or for "on" the
 * environment's ICECC_SCHEDULER (icecc's own variable), else 127.0.0.1.
 * Caller frees.
 */
char *icecc_scheduler(const char *value);

struct icecc_farm {
	int hosts;        /* compile servers logged in to the scheduler */
	int slots;        /* their maximum jobs, added up */
	long long jobs;   /* compile jobs the scheduler handed out since it
			   * started ("(N total)" in its greeting) */
};

/*
 * Asks the scheduler at addr ("HOST[:PORT]") over its text interface,
 * within timeout_ms. 0 with *farm filled, or ERR_IO naming the address
 * when it does not answer, ERR_INVALID for a malformed address.
 */
int icecc_farm_query(const char *addr, int timeout_ms, struct icecc_farm *farm);

/*
 * make -j for a farm build: the farm's slots, never fewer than the local
 * cores (local_cores). When the scheduler does not answer, the local cores
 * and *why says so (caller frees; NULL when the farm answered).
 */
int icecc_make_jobs(const char *value, int local_cores, char **why);

#endif
