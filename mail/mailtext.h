/* mailtext.h: outside text made fit for mail: valid UTF-8, controls handled. */
#ifndef STABLEQ_MAILTEXT_H
#define STABLEQ_MAILTEXT_H

#include "strbuf.h"

#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
size_t utf8_len(const unsigned char *s, size_t n);

/*
 * Appends s as valid UTF-8 (bad bytes become U+FFFD). In header mode every
 * control character is a space and runs of spaces are one, so that no
 * outside text can end a header line; in body mode NUL is U+FFFD and CR
 * is dropped (line ends are added later), tabs and newlines stay.
 */
void text_clean(struct strbuf *out, const char *str, size_t n, int header);

/*
 * Appends s as text quoted from a machine (a guest's console, a compiler):
 * text_clean()'s body mode, and every other control character as U+FFFD
 * too (C0 but tab and newline, DEL, C1, the line and paragraph separators,
 * the bidirectional embeddings, overrides and isolates), so that what a
 * test printed cannot move a reader's cursor, recolour the terminal, or
 * reorder the text they see.
 */
void text_clean_log(struct strbuf *out, const char *str, size_t n);

/* Cuts sb to at most max octets, at a character boundary. */
void utf8_truncate(struct strbuf *sb, size_t max);

/*
 * s (NULL: "") as header text: text_clean() in header mode, cut to max
 * octets, trimmed. Caller frees.
 */
char *clean_header_text(const char *s, size_t max);

#endif
