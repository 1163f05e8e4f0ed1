/* t-guestconf.c: the guest configurations' table, the KUnit deny list, their hash, and the broad config step on the real tree. */
/* check: serial (reads var/linux while the kernel tests switch it) */
#include "config.h"
#include "err.h"
#include "file.h"
#include "guestconf.h"
#include "kbuild.h"
#include "sandbox.h"
#include "kconfig.h"
#include "strbuf.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/t-guestconf.XXXXXX";

/* KUnit suites on in the arm64 broad guest's .config (at least) */
#define ARM64_61 44
#define ARM64_612 80

static char *put(const char *name, const char *text)
{
	char *p = xstrfmt("%s/%s", dir, name);

	if (write_file_atomic(p, text, strlen(text)) < 0)
		diag("%s", err_msg());
	return p;
}

static void test_table(void)
{
	struct config c;
	const struct guestconf *q = guestconf_find("quick");
	const struct guestconf *b = guestconf_find("broad");

	ok(q && b, "quick and broad are rows");
	ok(!guestconf_find("full"), "no row 'full'");
	like(err_msg(), "quick|broad", "the error lists the names");
	err_clear();
	is_str(q->base, "tinyconfig", "quick goes on tinyconfig");
	is_str(b->base, "defconfig kvm_guest.config",
	       "broad on defconfig with the KVM guest options");
	ok(b->kunit_tree && !q->kunit_tree, "broad adds the tree's KUnit");
	ok(b->boot_timeout_s >= 900 && b->memory_mb >= 512,
	   "broad boots with a longer deadline and more memory");
	/* the config parser's choices are the table's names */
	char *cfg = put("stableq.conf",
			"[branch a]\ntree_dir = x\nbuild_dir = y\n"
			"queue_dir = z\ncoverage_build_dir = w\n"
			"guest_config = broad\n"
			"[branch b]\nbranch = linux-b.y\ntree_dir = x2\n"
			"build_dir = y2\nqueue_dir = z2\ncoverage_build_dir = w2\n");
	is_int(config_load(&c, cfg), 0, "a config with a broad branch loads");
	is_str(c.guest_config, "broad", "branch a: broad");
	is_str(guestconf_fragments(b, &c), "config/kernel/6.1/broad",
	       "broad's fragments: broad_config_dir");
	is_str(guestconf_fragments(q, &c), "config/kernel/6.1/quick",
	       "quick's: kernel_config_dir");
	is_int(config_select_branch(&c, "b"), 0, "branch b");
	is_str(c.guest_config, "quick", "inherits quick from the top");
	config_free(&c);
	free(cfg);
	cfg = put("bad.conf", "[branch a]\nguest_config = full\n");
	is_int(config_load(&c, cfg), ERR_INVALID, "an unknown guest_config");
	like(err_msg(), "guest_config must be one of quick|broad, not 'full'",
	     "is refused in a section too, naming the choices");
	like(err_msg(), "bad.conf:2", "and the line");
	config_free(&c);
	free(cfg);
}

static void test_deny(void)
{
	char **syms = NULL;
	char *p = put("deny.conf", "# comment\n\nA_TEST   why a\n"
				   "\tB_KUNIT_TEST\tslow under TCG # not a comment\n");

	is_int(guestconf_deny_load(p, &syms), 0, "a deny list loads");
	ok(syms && syms[0] && syms[1] && !syms[2], "two symbols");
	is_str(syms[0], "A_TEST", "the first");
	is_str(syms[1], "B_KUNIT_TEST", "the second, after a tab");
	guestconf_deny_free(syms);
	free(p);

	const char *bad[][2] = {
		{ "A_TEST\n", "a symbol without a reason" },
		{ "CONFIG_A_TEST why\n", "CONFIG_ written out" },
		{ "a_test why\n", "lower case" },
		{ "A-TEST why\n", "a symbol with a dash" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *text = xstrfmt("# ok\n%s", bad[i][0]);
		p = put("bad-deny.conf", text);
		is_int(guestconf_deny_load(p, &syms), ERR_INVALID, "refused: %s",
		       bad[i][1]);
		like(err_msg(), "bad-deny.conf:2: expected SYMBOL",
		     "names file and line");
		ok(syms == NULL, "and gives nothing");
		free(text);
		free(p);
	}
	is_int(guestconf_deny_load("/nonexistent/deny.conf", &syms),
	       ERR_NOTFOUND, "a missing list");
	like(err_msg(), "/nonexistent/deny.conf", "is named");
	err_clear();
	is_int(guestconf_deny_load("config/kunit-deny.conf", &syms), 0,
	       "the shipped list loads");
	size_t n = 0;
	while (syms && syms[n])
		n++;
	ok(n >= 5, "and holds %zu suites", n);
	guestconf_deny_free(syms);
}

static void test_hash(void)
{
	char q1[65], q2[65], b1[65], b2[65], b3[65];
	const struct guestconf *q = guestconf_find("quick");
	const struct guestconf *b = guestconf_find("broad");
	char *deny = put("deny.conf", "A_TEST why\n");

	is_int(guestconf_hash(q, NULL, NULL, "config/kernel/6.1/quick", deny, q1), 0, "quick");
	is_int(kconfig_hash(NULL, "config/kernel/6.1/quick", q2), 0, "kconfig_hash");
	is_str(q1, q2, "quick hashes as before (its builds stay cached)");
	is_int(guestconf_hash(b, NULL, NULL, "config/kernel/6.1/broad", deny, b1), 0,
	       "broad");
	ok(strcmp(b1, q1) != 0, "broad differs");
	is_int(guestconf_hash(b, NULL, NULL, "config/kernel/6.1/quick", deny, b2), 0,
	       "broad on quick's fragments");
	ok(strcmp(b2, q1) != 0, "still differs from quick: the base");
	free(put("deny.conf", "A_TEST why\nB_TEST why\n"));
	is_int(guestconf_hash(b, NULL, NULL, "config/kernel/6.1/broad", deny, b3), 0,
	       "after the deny list changed");
	ok(strcmp(b3, b1) != 0, "the hash changed with it");
	char a1[65], a2[65];
	is_int(guestconf_hash(b, "x86_64", NULL, "config/kernel/6.1/broad",
			      deny, a1), 0, "broad, x86_64 named");
	is_str(a1, b3, "hashes as with no arch (x86_64's builds stay cached)");
	is_int(guestconf_hash(b, "arm64", NULL, "config/kernel/6.1/broad",
			      deny, a2), 0, "broad for arm64");
	ok(strcmp(a2, b3) != 0, "the arch is part of the identity");
	is_int(guestconf_hash(b, "mips", NULL, "config/kernel/6.1/broad",
			      deny, a2), ERR_INVALID, "an arch without a row");
	like(err_msg(), "arch 'mips'", "... is named");
	err_clear();
	is_int(guestconf_hash(q, "arm64", NULL, "config/kernel/6.1/quick",
			      deny, a2), 0, "quick for arm64");
	is_str(a2, q1, "quick hashes its fragments alone, as it did");
	free(deny);
}

/* The broad base's defconfig is the arch's own (karch.h's defconfig): a
 * change to one arch's defconfig changes that arch's identity alone. */
static void test_hash_defconfig(void)
{
	const struct guestconf *b = guestconf_find("broad");
	char *tree = xstrfmt("%s/tree", dir);
	const char *files[] = {"arch/x86/configs/x86_64_defconfig",
			       "arch/arm64/configs/defconfig"};
	const char *arches[] = {"x86_64", "arm64"};
	char h[2][2][65];

	const char *dirs[] = {"tree/lib", "tree/kernel/configs",
			      "tree/arch/x86/configs",
			      "tree/arch/arm64/configs"};
	for (size_t i = 0; i < 4; i++) {
		char *d = xstrfmt("%s/%s", dir, dirs[i]);
		if (mkdir_p(d) < 0)
			diag("%s", err_msg());
		free(d);
	}
	free(put("tree/lib/Kconfig",
		 "config A_TEST\n"
		 "\ttristate \"a test\" if !KUNIT_ALL_TESTS\n"
		 "\tdepends on KUNIT\n\tdefault KUNIT_ALL_TESTS\n"));
	free(put("tree/kernel/configs/kvm_guest.config", "CONFIG_VIRTIO=y\n"));
	for (size_t i = 0; i < 2; i++) {
		char *p = xstrfmt("tree/%s", files[i]);
		free(put(p, "CONFIG_A=y\n"));
		free(p);
	}
	for (size_t i = 0; i < 2; i++)
		if (!ok(guestconf_hash(b, arches[i], tree,
				       "config/kernel/6.1/broad", NULL,
				       h[0][i]) == 0,
			"broad for %s on a tree", arches[i]))
			diag("%s", err_msg());
	for (size_t i = 0; i < 2; i++) {
		/* arch i's defconfig changes */
		char *p = xstrfmt("tree/%s", files[i]);
		free(put(p, "CONFIG_B=y\n"));
		for (size_t k = 0; k < 2; k++)
			guestconf_hash(b, arches[k], tree,
				       "config/kernel/6.1/broad", NULL,
				       h[1][k]);
		ok(strcmp(h[1][i], h[0][i]) != 0, "%s's identity holds %s",
		   arches[i], files[i]);
		is_str(h[1][!i], h[0][!i], "... %s's does not", arches[!i]);
		free(put(p, "CONFIG_A=y\n"));
		free(p);
	}
	free(tree);
}

/* KUnit symbols set in a .config */
static int kunit_on(const char *dot, const char *sym)
{
	struct strbuf sb = STRBUF_INIT;
	char *want = xstrfmt("\nCONFIG_%s=y\n", sym);
	int on = strbuf_read_file(&sb, dot, 16u << 20) == 0 &&
		 strstr(sb.buf, want) != NULL;

	strbuf_release(&sb);
	free(want);
	return on;
}

/* The broad config step on a real tree: no build. */
static struct sandbox box; /* make runs in it (sandbox.h) */

static void test_config_step(const char *tree, const char *arch,
			     const char *frags, size_t min_suites)
{
	struct kbuild_result r;
	char *build = xstrfmt("%s/build-%s-%s", dir, tree + 4, arch);
	struct kbuild_opts o = {
		.arch = arch,
		.src_dir = tree,
		.build_dir = build,
		.config_dir = frags,
		.guest = guestconf_find("broad"),
		.kunit_deny = "config/kunit-deny.conf",
		.config_only = 1,
		.timeout_s = 900,
		.sandbox = &box,
	};
	struct strbuf k = STRBUF_INIT;
	size_t suites = 0, denied = 0, on = 0;

	int rc = kbuild_run(&o, &r);
	if (rc < 0)
		diag("%s", err_msg());
	is_int(rc, 0, "%s %s: the broad config step runs", tree, arch);
	ok(r.ok, "%s %s: and every fragment symbol survived olddefconfig%s%s",
	   tree, arch, r.error ? ": " : "", r.error ? r.error : "");
	is_int(guestconf_kunit(tree, "config/kunit-deny.conf", &k, &suites,
			       &denied),
	       0, "%s: its KUnit fragment", tree);
	char *dot = xstrfmt("%s/.config", build);
	for (char *p = k.buf; (p = strstr(p, "CONFIG_")); p++) {
		size_t l = strcspn(p + 7, "=");
		char *sym = xstrndup(p + 7, l);
		if (p[7 + l] == '=' && strcmp(sym, "KUNIT"))
			on += kunit_on(dot, sym);
		free(sym);
	}
	ok(on >= min_suites,
	   "%s %s: %zu of %zu KUnit suites are on after olddefconfig (>= %zu)",
	   tree, arch, on, suites, min_suites);
	ok(!kunit_on(dot, "KUNIT_FAULT_TEST") && !kunit_on(dot, "TIME_KUNIT_TEST"),
	   "%s: the denied suites are off", tree);
	ok(!kunit_on(dot, "KUNIT_ALL_TESTS"), "%s: KUNIT_ALL_TESTS is off",
	   tree);
	ok(kunit_on(dot, "EXT4_FS") && kunit_on(dot, "BTRFS_FS") &&
		   kunit_on(dot, "NF_TABLES") && kunit_on(dot, "BPF_SYSCALL") &&
		   kunit_on(dot, "VIRTIO_PCI"),
	   "%s: ext4, btrfs, nf_tables, BPF and virtio are built in", tree);
	if (!strcmp(arch, "arm64"))
		ok(kunit_on(dot, "SERIAL_AMBA_PL011_CONSOLE") &&
			   kunit_on(dot, "VIRTIO_PCI") &&
			   kunit_on(dot, "PCI_HOST_GENERIC") &&
			   !kunit_on(dot, "ARCH_QCOM"),
		   "%s: arm64's has the virt board's PL011 console and PCI "
		   "host, and no SoC platform", tree);
	char *ku = xstrfmt("%s/.stableq-kunit.config", build);
	ok(access(ku, R_OK) == 0, "%s: the KUnit fragment is kept in the build"
				  " directory", tree);
	free(ku);
	free(dot);
	strbuf_release(&k);
	kbuild_result_release(&r);
	free(build);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	chmod(dir, 0755); /* the build user reaches it */
	if (!ok(sandbox_init(&box, "bwrap", "stableq-build", 0) == 0,
		"the sandbox the config steps run in"))
		diag("%s", err_msg());
	test_table();
	test_deny();
	test_hash();
	test_hash_defconfig();
	/* the real trees, when `stableq tree init` made them */
	if (access("var/linux/Makefile", R_OK) == 0) {
		test_config_step("var/linux", "x86_64",
				 "config/kernel/6.1/broad", 40);
		test_config_step("var/linux", "arm64",
				 "config/kernel/6.1/broad/arm64", ARM64_61);
	}
	if (access("var/linux-6.12/Makefile", R_OK) == 0) {
		test_config_step("var/linux-6.12", "x86_64",
				 "config/kernel/6.12/broad", 75);
		test_config_step("var/linux-6.12", "arm64",
				 "config/kernel/6.12/broad/arm64", ARM64_612);
	}
	char *cmd = xstrfmt("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("cannot remove %s", dir);
	free(cmd);
	return done_testing();
}
