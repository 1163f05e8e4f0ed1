/* sha256.c: sha256 in hex, through OpenSSL's EVP interface. */
#include "sha256.h"

#include <openssl/evp.h>
#include <stdlib.h>

void sha256_hex(const void *data, size_t len, char hex[SHA256_HEX_SIZE])
{
	static const char digits[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	/* EVP_Digest cannot fail for sha256 short of memory exhaustion. */
	if (!EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32)
		abort();
	for (unsigned i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}
