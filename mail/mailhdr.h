/* mailhdr.h: writing header fields: folding, RFC 2047 encoded words. */
#ifndef STABLEQ_MAILHDR_H
#define STABLEQ_MAILHDR_H

#include "address.h"
#include "strbuf.h"

#include <stddef.h>
#include <time.h>

/* RFC 5322 2.1.1: a line holds at most 998 octets before its CRLF. */
#define LINE_MAX_OCTETS 998

/* One header field being written into sb, folded before column 78. */
struct hdr {
	struct strbuf *sb;
	size_t col;
	int ntok;
};

void hdr_start(struct hdr *h, struct strbuf *sb, const char *name);
/* One unbreakable token, after a space that folds when the line is full. */
void hdr_tok(struct hdr *h, const char *tok, size_t len);
void hdr_end(struct hdr *h);
/* A whole field of n mailboxes ("Name <addr>, <addr>"); none: no field. */
void hdr_mailboxes(struct strbuf *sb, const char *field,
		   const struct mailbox *v, size_t n);
/* A whole field of unstructured text. */
void hdr_simple(struct strbuf *sb, const char *field, const char *text);
/* A stored Message-Id (without <>) fit to be quoted back, or 0. */
int msgid_ok(const char *id);
/* t as an RFC 5322 date in UTC ("Mon, 1 Jan 2024 00:00:00 +0000"). */
void rfc5322_date(struct strbuf *sb, time_t t);

#endif
