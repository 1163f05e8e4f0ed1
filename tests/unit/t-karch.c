/* t-karch.c: the architectures' table: its rows whole (kselftest and defconfig
 * fields too), the booting ones first, the lists that name them, the lookup. */
#include "err.h"
#include "karch.h"
#include "strbuf.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* Fields a row that boots must have, by name, for the messages. */
#define BOOT_FIELDS(X)                                                         \
	X(image)                                                               \
	X(target) X(qemu) X(qemu_pkg) X(tcg_cpu) X(console) X(busybox)         \
		X(busybox_how) X(cc) X(cc_pkg) X(kcidb) X(defconfig)           \
			X(ksft_target) X(ksft_uapi[0]) X(ksft_uapi[1])         \
				X(ksft_sysroot) X(ksft_libs[0])
/* ... and one that boots another arch's programs: where they come from */
#define CROSS_FIELDS(X)                                                        \
	X(ksft_roots[0]) X(ksft_bash) X(ksft_include) X(ksft_machine)

/* The kselftest fields of a row that boots, whole (kselftest.c). */
static void ksft_fields(const struct karch *a)
{
	char *uapi = xstrfmt("arch/%s/include/uapi", a->srcarch);
	char *defc = xstrfmt("arch/%s/configs/", a->srcarch);
	size_t nlibs = 0;

	is_str(a->ksft_uapi[0], uapi, "%s: its uapi headers are its own",
	       a->name);
	ok(!strncmp(a->defconfig, defc, strlen(defc)),
	   "%s: its defconfig is under %s", a->name, defc);
	while (nlibs < sizeof(a->ksft_libs) / sizeof(a->ksft_libs[0]) &&
	       a->ksft_libs[nlibs])
		nlibs++;
	ok(nlibs < sizeof(a->ksft_libs) / sizeof(a->ksft_libs[0]),
	   "%s: its loader's dirs end with NULL", a->name);
	if (karch_is_host(a)) {
		is_str(a->ksft_sysroot, "", "%s: the host's loader", a->name);
		ok(!a->ksft_roots[0] && !a->ksft_bash && !a->ksft_include &&
			   !a->ksft_machine,
		   "%s: the host's /, bash, libraries and uname", a->name);
	} else {
#define SET(f)                                                                 \
	ok(a->f != NULL, "%s: another arch's guest, so has " #f, a->name);
		CROSS_FIELDS(SET)
#undef SET
		ok(*a->ksft_sysroot &&
			   !strncmp(a->ksft_libs[0], a->ksft_sysroot,
				    strlen(a->ksft_sysroot)),
		   "%s: its loader's libraries are first under its sysroot",
		   a->name);
	}
	for (size_t k = 0; &karch_table[k] != a; k++)
		ok(strcmp(a->ksft_target, karch_table[k].ksft_target) != 0,
		   "%s: its selftests target is not %s's", a->name,
		   karch_table[k].name);
	free(uapi);
	free(defc);
}

static void rows(void)
{
	struct strbuf order = STRBUF_INIT, bars = STRBUF_INIT,
		      spaces = STRBUF_INIT;
	size_t nboot = 0, dups = 0, late = 0;

	is_str(karch_table[0].name, "x86_64", "x86_64 is the first row");
	ok(karch_is_host(&karch_table[0]) && !karch_is_host(&karch_table[1]),
	   "... the machine's own, and only it");
	is_str(karch_table[0].cross, "", "... built with the machine's gcc");
	for (size_t i = 0; i < KARCH_N; i++) {
		const struct karch *a = &karch_table[i];
		char *cov = xstrfmt("%s allmodconfig", a->name);
		char *img = a->image ? xstrfmt("arch/%s/boot/%s", a->srcarch,
					       a->target ? a->target : "?")
				     : NULL;

		ok(a->name && a->srcarch && a->make_arch && a->cross &&
			   a->cross_pkg && a->cov_config,
		   "%s: every build field set", a->name ? a->name : "?");
		ok(i == 0 || *a->cross, "%s: a cross compiler prefix", a->name);
		is_str(a->cov_config, cov, "%s: build coverage's label", a->name);
		for (size_t k = 0; k < i; k++)
			if (!strcmp(a->name, karch_table[k].name) ||
			    !strcmp(a->srcarch, karch_table[k].srcarch))
				dups++;
		strbuf_addf(&order, "%s%s", i ? " " : "", a->name);
		if (a->image) {
			late += nboot != i;
			nboot++;
			strbuf_addf(&bars, "%s%s", bars.len ? "|" : "", a->name);
			strbuf_addf(&spaces, "%s%s", spaces.len ? " " : "",
				    a->name);
#define SET(f) ok(a->f != NULL, "%s: boots, so has " #f, a->name);
			BOOT_FIELDS(SET)
#undef SET
			is_str(a->image, img, "%s: its image is its target's",
			       a->name);
			ksft_fields(a);
		} else {
#define UNSET(f) ok(a->f == NULL, "%s: compiles only, no " #f, a->name);
			BOOT_FIELDS(UNSET)
			CROSS_FIELDS(UNSET)
#undef UNSET
			ok(!a->machine && !a->tcg_only,
			   "%s: ... no machine, no TCG flag", a->name);
		}
		free(cov);
		free(img);
	}
	is_int(dups, 0, "names and arch/ directories are unique");
	is_int(late, 0, "the rows that boot come first");
	ok(nboot >= 2, "x86_64 and arm64 boot");
	/* build coverage's order, as it was: its logs and rows follow it */
	is_str(order.buf, "x86_64 arm64 arm powerpc riscv s390 mips",
	       "build coverage's order of architectures");
	is_str(KARCH_BOOT_CHOICES, bars.buf,
	       "KARCH_BOOT_CHOICES names the rows that boot");
	is_str(karch_boot_names(), spaces.buf,
	       "karch_boot_names() names the rows that boot");
	strbuf_release(&order);
	strbuf_release(&bars);
	strbuf_release(&spaces);
}

static void find(void)
{
	ok(karch_boot_find(NULL) == &karch_table[0] &&
		   karch_boot_find("") == &karch_table[0],
	   "no name is x86_64");
	ok(karch_boot_find("arm64") == &karch_table[1], "arm64 is found");
	err_clear();
	ok(!karch_boot_find("mips"), "a row that only compiles does not boot");
	is_str(err_msg(), "arch 'mips' is not one of: x86_64 arm64",
	       "... naming the ones that do");
	ok(!karch_boot_find("x86"), "an arch/ directory is not a name");
	ok(!karch_boot_find("sparc"), "an arch not in the table is refused");
	err_clear();
}

int main(void)
{
	rows();
	find();
	return done_testing();
}
