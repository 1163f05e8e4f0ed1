/* address.h: mail addresses: checked, split, collected as recipients. */
#ifndef STABLEQ_ADDRESS_H
#define STABLEQ_ADDRESS_H

#include <stddef.h>

/* A display name is cut to this many octets. */
#define NAME_MAX_OCTETS 200

/* An atext character of RFC 5322 (what a dot-atom is made of). */
int is_atext(int c);

/*
 * A plain addr-spec (dot-atom@domain) in ASCII, as a relay takes it. NULL
 * when fine, else why not. Quoted local parts, address literals and UTF-8
 * addresses are refused: no patch author needs them.
 */
const char *addr_problem(const char *a);

/* An address for messages: controls shown as \xNN. Caller frees. */
char *addr_shown(const char *a);

struct mailbox {
	char *name; /* cleaned display name or NULL */
	char *addr;
};

/* Recipients, each address once (compared without case). */
struct rcpts {
	struct mailbox *v;
	size_t n, alloc;
};

void rcpts_release(struct rcpts *r);
int rcpts_has(const struct rcpts *r, const char *addr);
/* Adds (name, addr) unless addr is already there. Both copied. */
void rcpts_add(struct rcpts *r, const char *name, const char *addr);

/*
 * Splits "Name <addr>" or "addr" (surrounding quotes of the name dropped).
 * Both results malloc'd; *name NULL when there is none.
 */
void mailbox_split(const char *s, size_t len, char **name, char **addr);

/* Adds each entry of a comma-separated list; bad ones are logged, left out. */
void rcpts_add_list(struct rcpts *r, const char *list, long long patch);

#endif
