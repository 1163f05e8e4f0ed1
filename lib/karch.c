/* karch.c: the architectures' table (karch.h says what a row is and how to add one). */
#include "karch.h"
#include "err.h"

#include <stddef.h>
#include <string.h>

#define ARM64_ROOT KARCH_ARM64_ROOT
#define ARM64_CROSS "aarch64-linux-gnu-"

/* A row build coverage only compiles for: ARCH=A, arch/A/, CROSS-gcc from
 * the Debian package PKG. */
#define COMPILE_ONLY(a, cross_, pkg)                                           \
	{                                                                      \
		.name = a, .srcarch = a, .make_arch = a, .cross = cross_,      \
		.cross_pkg = pkg, .cov_config = a " allmodconfig"              \
	}

/* Sized by the header's KARCH_N: a row more or less does not compile. */
const struct karch karch_table[] = {
	{
		.name = "x86_64",
		.srcarch = "x86",
		.make_arch = "x86_64",
		.cross = "",
		.cross_pkg = "build-essential",
		.cov_config = "x86_64 allmodconfig",
		.image = "arch/x86/boot/bzImage",
		.target = "bzImage",
		.qemu = "qemu-system-x86_64",
		.qemu_pkg = "qemu-system-x86",
		.tcg_cpu = "max",
		.console = "ttyS0",
		.busybox = "/bin/busybox",
		.busybox_how = "install the Debian package busybox-static "
			       "(`make deps`)",
		.cc = "gcc",
		.cc_pkg = "build-essential",
		.kcidb = "x86_64",
		.defconfig = "arch/x86/configs/x86_64_defconfig",
		.ksft_target = "x86",
		.ksft_uapi = { "arch/x86/include/uapi",
			       "arch/x86/entry/syscalls" },
		.ksft_sysroot = "",
		/* Debian's glibc: the loader's system search path */
		.ksft_libs = { "/lib/x86_64-linux-gnu",
			       "/usr/lib/x86_64-linux-gnu", "/lib64",
			       "/usr/lib64", "/lib", "/usr/lib" },
	},
	{
		.name = "arm64",
		.srcarch = "arm64",
		.make_arch = "arm64",
		.cross = ARM64_CROSS,
		.cross_pkg = "gcc-aarch64-linux-gnu",
		.cov_config = "arm64 allmodconfig",
		.image = "arch/arm64/boot/Image",
		.target = "Image",
		.qemu = "qemu-system-aarch64",
		.qemu_pkg = "qemu-system-arm",
		.machine = "virt",
		.tcg_only = 1,
		.tcg_cpu = "max,pauth-impdef=on",
		.console = "ttyAMA0",
		.busybox = ARM64_ROOT "/bin/busybox",
		.busybox_how = "run `make deps` (it unpacks Debian's "
			       "busybox-static:arm64 into " ARM64_ROOT ")",
		.cc = ARM64_CROSS "gcc",
		.cc_pkg = "gcc-aarch64-linux-gnu libc6-dev-arm64-cross",
		.kcidb = "arm64",
		.defconfig = "arch/arm64/configs/defconfig",
		.ksft_target = "arm64",
		.ksft_uapi = { "arch/arm64/include/uapi", "tools/arch/arm64" },
		/* the cross libc (libc6-arm64-cross) and what `make deps`
		 * unpacks: their /lib is the guest's /lib */
		.ksft_sysroot = "/usr/aarch64-linux-gnu",
		.ksft_roots = { "/usr/aarch64-linux-gnu", ARM64_ROOT },
		.ksft_libs = { "/usr/aarch64-linux-gnu/lib",
			       ARM64_ROOT "/lib/aarch64-linux-gnu",
			       ARM64_ROOT "/usr/lib/aarch64-linux-gnu" },
		.ksft_include = ARM64_ROOT "/usr/include",
		.ksft_machine = "arm64",
		.ksft_bash = ARM64_ROOT "/bin/bash",
	},
	COMPILE_ONLY("arm", "arm-linux-gnueabihf-", "gcc-arm-linux-gnueabihf"),
	COMPILE_ONLY("powerpc", "powerpc64le-linux-gnu-",
		     "gcc-powerpc64le-linux-gnu"),
	COMPILE_ONLY("riscv", "riscv64-linux-gnu-", "gcc-riscv64-linux-gnu"),
	COMPILE_ONLY("s390", "s390x-linux-gnu-", "gcc-s390x-linux-gnu"),
	COMPILE_ONLY("mips", "mips-linux-gnu-", "gcc-mips-linux-gnu"),
};

const char *karch_boot_names(void)
{
	return "x86_64 arm64";
}

const struct karch *karch_boot_find(const char *name)
{
	if (!name || !*name)
		return &karch_table[0];
	for (size_t i = 0; i < KARCH_N && karch_table[i].image; i++)
		if (!strcmp(karch_table[i].name, name))
			return &karch_table[i];
	err_set(ERR_INVALID, "arch '%s' is not one of: %s", name,
		karch_boot_names());
	return NULL;
}
