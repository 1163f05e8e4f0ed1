/* t-coverage.c: coverage planning: which touched file goes to which builder. */
#include "coverage.h"
#include "coverage-int.h"
#include "kbuild.h"
#include "tap.h"

static const struct {
	const char *path, *kind, *status, *object, *why;
	int config_step;
} cases[] = {
	{ "drivers/net/foo.c", "c", NULL, "drivers/net/foo.o", NULL, 0 },
	{ "arch/x86/kernel/entry.S", "asm", NULL, "arch/x86/kernel/entry.o", NULL, 0 },
	{ "arch/x86/kernel/vmlinux.lds.S", "other", "no-code", NULL, "a .S file", 0 },
	{ "include/linux/foo.h", "header", NULL, NULL, NULL, 0 },
	{ "drivers/net/Kconfig", "kconfig", NULL, NULL, NULL, 1 },
	{ "drivers/net/Kconfig.debug", "kconfig", NULL, NULL, NULL, 1 },
	{ "drivers/net/Makefile", "makefile", NULL, NULL, NULL, 1 },
	{ "fs/Kbuild", "makefile", NULL, NULL, NULL, 1 },
	{ "Documentation/admin-guide/foo.rst", "other", "no-code", NULL, "documentation", 0 },
	{ "Documentation/Makefile", "makefile", "no-code", NULL, "documentation", 0 },
	{ "tools/perf/builtin.c", "c", "no-code", NULL, "tools/ is built by its own makefiles", 0 },
	{ "scripts/mod/modpost.c", "c", "no-code", NULL, "host script", 0 },
	{ "samples/bpf/x.c", "c", "no-code", NULL, "samples", 0 },
	{ "MAINTAINERS", "other", "no-code", NULL, "maintainers file", 0 },
	{ "usr/gen_init_cpio.c", "c", "no-code", NULL, "initramfs", 0 },
	{ "net/core/foo.txt", "other", "no-code", NULL, "a .txt file", 0 },
	{ "COPYING", "other", "no-code", NULL, "a COPYING file", 0 },
	{ "arch/um/kernel/x.c", "c", "not-built", NULL, "arch/um: stableq knows no Debian cross compiler", 0 },
	{ "arch/sparc/kernel/x.c", "c", "not-built", NULL, "arch/sparc", 0 },
	{ "arch/x86/boot/dts/x.dtsi", "dts", "not-built", NULL, "a .dtsi is built through the .dts", 0 },
	{ "arch/x86/boot/dts/ce4100.dts", "dts", NULL, "ce4100.dtb", NULL, 0 },
	{ "arch/x86/platform/ce4100/falconfalls.dts", "dts", "not-built", NULL, ".dtsi is built", 0 },
};

int main(void)
{
	struct coverage_route r;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = coverage_route(cases[i].path, &r);
		is_str(r.kind, cases[i].kind, "%s: kind %s", cases[i].path, cases[i].kind);
		if (cases[i].status) {
			ok(ret < 0, "... goes to no builder");
			is_str(r.status, cases[i].status, "... %s", cases[i].status);
			like(r.why, cases[i].why, "... because: %s", cases[i].why);
		} else {
			ok(ret == 0 && !r.status && !r.why, "... goes to a builder");
			if (cases[i].object)
				is_str(r.object, cases[i].object, "... as %s", cases[i].object);
			else
				ok(!r.object, "... through no object of its own");
			is_int(r.config_step, cases[i].config_step, "... config step: %d",
			       cases[i].config_step);
			is_str(r.arch, "x86_64 allmodconfig", "... under x86_64 allmodconfig");
		}
		coverage_route_release(&r);
	}

	/* another arch: its cross compiler, or not-built naming the package */
	if (kbuild_have_tool("aarch64-linux-gnu-gcc")) {
		ok(coverage_route("arch/arm64/kernel/x.c", &r) == 0, "arch/arm64: built");
		is_str(r.arch, "arm64 allmodconfig", "... under arm64 allmodconfig");
		is_str(r.object, "arch/arm64/kernel/x.o", "... as its object");
	} else {
		ok(coverage_route("arch/arm64/kernel/x.c", &r) < 0, "arch/arm64 without its compiler");
		is_str(r.status, "not-built", "... not-built");
		like(r.why, "the Debian package gcc-aarch64-linux-gnu is not installed",
		     "... naming the package");
	}
	coverage_route_release(&r);
	coverage_route_release(NULL);
	/* a file's coverage verdict is an enum; its names are the store's */
	for (int i = CS_NONE + 1; i < CS_COUNT; i++)
		is_int(cov_status_parse(cov_status_names[i]), i,
		       "status %s parses back", cov_status_names[i]);
	is_int(cov_status_parse("booted "), CS_NONE, "a name that is not a status: CS_NONE");
	is_int(cov_status_parse(NULL), CS_NONE, "NULL: CS_NONE");
	return done_testing();
}
