/* address.h: mail addresses: the one RFC 5322 parser (intake and mail), checks.
 */
#ifndef STABLEQ_ADDRESS_H
#define STABLEQ_ADDRESS_H

#include <stddef.h>

/* A display name is cut to this many octets in mail stableq writes. */
#define NAME_MAX_OCTETS 200

/* An atext character of RFC 5322 (what a dot-atom is made of). */
int is_atext(int c);

struct mailbox {
	char *name; /* display name, or NULL */
	char *addr; /* local@domain as written (case kept), or NULL */
};

/* A list of mailboxes; the struct owns every string in it. */
struct mailboxes {
	struct mailbox *v;
	size_t n, alloc;
};

void mailboxes_release(struct mailboxes *l);

/* Flags of address_parse(). */
enum {
	/*
	 * Exactly one mailbox (From:, a Signed-off-by: trailer): commas,
	 * colons and semicolons before the <addr> belong to the name (no
	 * groups), and a second mailbox is an error.
	 */
	ADDRESS_ONE = 1,
	/*
	 * With ADDRESS_ONE: text after the mailbox ("Name <a@b> # note") is
	 * not an error (a second <address> still is); *used says where the
	 * mailbox ended.
	 */
	ADDRESS_TRAILING = 2,
};

/*
 * Parses s[0..n) as an RFC 5322 address-list (mailbox-list, or one mailbox
 * with ADDRESS_ONE) and appends its mailboxes to out: "Name <addr>",
 * "addr", quoted strings and quoted-pairs ("Last, First" <a@b>), comments
 * (nested, dropped; "addr (Name)" takes the comment as the name), groups
 * ("Team: a@b, c@d;" gives its members), obsolete routes (<@relay:a@b>)
 * and folding white space. Only an <addr> or a bare addr-spec outside
 * every quoted string and comment is an address: text inside a display
 * name never becomes one. An entry with no @ at all ("Jane Doe", the
 * name-only trailers) is a mailbox with a name and no address.
 *
 * The name is the display name as text: quotes and quoted-pairs undone,
 * comments dropped, words joined by one space; RFC 2047 encoded words are
 * left for the caller to decode. Nothing is lower-cased.
 *
 * Returns 0, or ERR_INVALID with err_msg() saying what is wrong (an
 * unterminated quoted string, comment or <, a second address, a bad
 * local part or domain); out is then unchanged. *used (may be NULL) gets
 * the octets read.
 */
int address_parse(struct mailboxes *out, const char *s, size_t n,
		  unsigned flags, size_t *used);

/*
 * Where the annotation of a Cc: trailer starts ("a@b # 5.15+",
 * "a@b [5.15+]"): the first '#' outside quoted strings, comments and <>,
 * or a '[' that does not follow an @. n when there is none.
 */
size_t address_note(const char *s, size_t n);

/* Addresses are compared without case (stored as written). */
int address_eq(const char *a, const char *b);

/*
 * A plain addr-spec (dot-atom@domain) in ASCII, as a relay takes it. NULL
 * when fine, else why not. Quoted local parts, address literals and UTF-8
 * addresses are refused: no patch author needs them.
 */
const char *addr_problem(const char *a);

/* An address for messages: controls shown as \xNN. Caller frees. */
char *addr_shown(const char *a);

/* The mailbox of l whose address is addr (without case), or NULL. */
const struct mailbox *mailboxes_find(const struct mailboxes *l,
				     const char *addr);
/*
 * Adds (name, addr) unless addr is already there: a recipient once. The
 * name is cleaned for a header (mailtext.h) and cut to NAME_MAX_OCTETS.
 */
void mailboxes_add_unique(struct mailboxes *l, const char *name,
			  const char *addr);

#endif
