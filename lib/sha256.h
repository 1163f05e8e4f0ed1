/* sha256.h: the sha256 of a buffer as 64 lower-case hex digits (tokens, KCIDB ids, LAVA images). */
#ifndef STABLEQ_SHA256_H
#define STABLEQ_SHA256_H

#include <stddef.h>

#define SHA256_HEX_SIZE 65

/* hex gets 64 digits and a NUL. Aborts only if OpenSSL cannot allocate. */
void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_SIZE]);

#endif
