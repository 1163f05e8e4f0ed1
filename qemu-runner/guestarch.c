/* guestarch.c: the architectures a guest boots on, and what each needs. */
#include "guestarch.h"
#include "err.h"

#include <stddef.h>
#include <string.h>

/* Where `make deps` unpacks Debian's busybox-static:arm64 (it conflicts
 * with the amd64 package, so it is not installed, only unpacked). */
#define ARM64_ROOT "/usr/local/lib/stableq/arm64"

static const struct guestarch table[] = {
	{ "x86_64", "arch/x86/boot/bzImage", "qemu-system-x86_64",
	  "qemu-system-x86", NULL, 0, "max", "ttyS0", "/bin/busybox",
	  "install the Debian package busybox-static (`make deps`)", "gcc",
	  "build-essential", "x86_64" },
	{ "arm64", "arch/arm64/boot/Image", "qemu-system-aarch64",
	  "qemu-system-arm", "virt", 1, "max,pauth-impdef=on", "ttyAMA0",
	  ARM64_ROOT "/bin/busybox",
	  "run `make deps` (it unpacks Debian's busybox-static:arm64 into "
	  ARM64_ROOT ")",
	  "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
	  "arm64" },
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

const char *guestarch_names(void)
{
	return "x86_64 arm64";
}

const struct guestarch *guestarch_find(const char *name)
{
	if (!name || !*name)
		return &table[0];
	for (size_t i = 0; i < NTABLE; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	err_set(ERR_INVALID, "arch '%s' is not one of: %s", name,
		guestarch_names());
	return NULL;
}
