/* smtp.h: handing one message to an SMTP relay with libcurl. */
#ifndef STABLEQ_SMTP_H
#define STABLEQ_SMTP_H

#include <stddef.h>

/* Defaults of struct smtp_opts: the connect, and the whole of one mail. */
#define SMTP_CONNECT_TIMEOUT_MS 10000
#define SMTP_TIMEOUT_MS 120000
/* Any one answer of the relay, the one to QUIT included. */
#define SMTP_RESPONSE_TIMEOUT_S 30

struct smtp_opts {
	long connect_timeout_ms; /* 0: SMTP_CONNECT_TIMEOUT_MS */
	long timeout_ms; /* one message, connect included; 0: SMTP_TIMEOUT_MS */
};

/*
 * One connection to a relay, reused for every message of a delivery pass.
 * The url is smtp://host[:port][/helo-name] or smtps://...; user:password@
 * in it authenticates. Only smtp and smtps are allowed (no redirection to
 * file:// or anything else).
 */
struct smtp;

/* NULL only if libcurl cannot start; the url is copied. */
struct smtp *smtp_open(const char *url, const struct smtp_opts *opts);

/*
 * Sends one message: MAIL FROM:<from>, RCPT TO:<rcpt[i]> for each of the
 * nrcpt addresses, DATA with data (already CRLF-terminated lines; libcurl
 * dot-stuffs them). Returns when the relay has answered the final '.',
 * before QUIT, so that the caller can record the acceptance at once.
 *
 * Returns 0 when the relay took the message, or ERR_IO with err_msg()
 * holding the relay's answer or libcurl's reason. *relay_down (if not NULL)
 * is set when the failure is the relay's as a whole (cannot resolve,
 * connect, log in, or it timed out), not this message's: trying the
 * next message now is pointless. *code gets the last SMTP reply code (0
 * if none).
 */
int smtp_send(struct smtp *s, const char *from, const char *const *rcpt,
	      size_t nrcpt, const char *data, size_t len, int *relay_down,
	      long *code);

/*
 * Says QUIT (if connected; waits SMTP_RESPONSE_TIMEOUT_S at most for the
 * answer) and frees s. NULL-safe.
 */
void smtp_close(struct smtp *s);

/*
 * The url without its password ("smtp://user@host:25"), for logs and
 * errors. Caller frees.
 */
char *smtp_url_redacted(const char *url);

#endif
