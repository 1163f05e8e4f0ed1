/* t-sha256.c: sha256_hex() against the FIPS 180-2 vectors. */
#include "sha256.h"
#include "tap.h"

int main(void)
{
	char hex[SHA256_HEX_SIZE];

	sha256_hex("", 0, hex);
	is_str(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	       "the empty string");
	sha256_hex("abc", 3, hex);
	is_str(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc");
	sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	is_str(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	       "the two-block vector");
	sha256_hex("a\0b", 3, hex);
	ok(strcmp(hex, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"),
	   "a NUL byte is hashed, not an end");
	return done_testing();
}
