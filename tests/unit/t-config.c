/* t-config.c: config_load() of branch sections, their inheritance and refusals. */
#include "config.h"
#include "err.h"
#include "file.h"
#include "strbuf.h"
#include "tap.h"

#include <ftw.h>
#include <stdio.h>
#include <unistd.h>

static char tmp[] = "/tmp/t-config.XXXXXX";

/* Loads text as a config file; the config is left loaded (free it). */
static int load(struct config *c, const char *text)
{
	char *path = xstrfmt("%s/stableq.conf", tmp);
	int ret;

	if (write_file_atomic(path, text, strlen(text)) < 0)
		diag("write %s: %s", path, err_msg());
	ret = config_load(c, path);
	free(path);
	return ret;
}

static void test_single(void)
{
	struct config c;

	ok(load(&c, "tree_dir = var/t\nbranch = linux-6.1.y\n") == 0,
	   "a file without sections loads");
	is_int(c.nbranches, 1, "it is one branch");
	is_str(c.branches[0].key, "6.1", "its key comes from linux-6.1.y");
	is_str(c.branch_key, "6.1", "and it is selected");
	is_str(c.branches[0].tree_dir, "var/t", "with the top-level tree_dir");
	is_str(c.tree_dir, "var/t", "which stays the top-level value");
	is_str(config_branch(&c, NULL)->key, "6.1", "NULL names the first");
	config_free(&c);

	ok(load(&c, "branch = stable-t10\n") == 0, "another git branch name");
	is_str(c.branch_key, "stable-t10", "is its own key");
	config_free(&c);

	ok(config_load(&c, NULL) == 0, "defaults alone");
	is_str(c.branch_key, "6.1", "are branch 6.1");
	is_str(c.queue_dir, "var/queue-6.1", "with var/queue-6.1");
	config_free(&c);
}

static const char two[] =
	"db = var/x.db\n"
	"debian_changelog = /nonexistent/changelog.gz\n"
	"tests_file = config/tests.conf\n"
	"[branch 6.1]\n"
	"tree_dir = var/linux\n"
	"build_dir = var/build\n"
	"queue_dir = var/queue-6.1\n"
	"coverage_build_dir = var/build-cover\n"
	"  [ branch   6.12 ]  \n"
	"linux_source = /usr/src/linux-source-6.12.tar.xz\n"
	"branch = linux-6.12.y\n"
	"tree_dir = var/linux-6.12\n"
	"build_dir = var/build-6.12\n"
	"queue_dir = var/queue-6.12\n"
	"coverage_build_dir = var/build-cover-6.12\n"
	"tests_file = config/tests-6.12.conf\n";

static void test_two(void)
{
	struct config c;

	if (!ok(load(&c, two) == 0, "two branch sections load"))
		diag("%s", err_msg());
	is_int(c.nbranches, 2, "two branches");
	is_str(c.branches[0].key, "6.1", "the first is 6.1");
	is_str(c.branches[1].key, "6.12", "the second 6.12");
	is_str(c.branches[0].branch, "linux-6.1.y",
	       "6.1 inherits the default git branch");
	is_str(c.branches[1].branch, "linux-6.12.y", "6.12 has its own");
	is_str(c.branches[0].tests_file, "config/tests.conf",
	       "a key a section leaves out is inherited");
	is_str(c.branches[1].tests_file, "config/tests-6.12.conf",
	       "one it gives is its own");
	is_str(c.branches[1].debian_changelog, "/nonexistent/changelog.gz",
	       "top-level keys are inherited by every section");
	is_str(c.branch_key, "6.1", "the first is selected after loading");
	is_str(c.tree_dir, "var/linux", "the fields hold its values");
	ok(config_select_branch(&c, "6.12") == 0, "selecting 6.12");
	is_str(c.branch_key, "6.12", "selects it");
	is_str(c.tree_dir, "var/linux-6.12", "tree_dir is 6.12's");
	is_str(c.linux_source, "/usr/src/linux-source-6.12.tar.xz",
	       "linux_source is 6.12's");
	is_str(c.db, "var/x.db", "shared keys stay");
	ok(config_select_branch(&c, "5.15") < 0, "an unknown key is refused");
	is_str(err_msg(), "unknown branch '5.15' (configured: 6.1, 6.12)",
	       "naming the configured keys");
	is_str(c.branch_key, "6.12", "and changes nothing");
	is_str(c.tree_dir, "var/linux-6.12", "nothing at all");
	ok(!config_branch(&c, "6.1x"), "config_branch of an unknown key");
	config_free(&c);
}

static void refused(const char *text, const char *want, const char *what)
{
	struct config c;
	int ret = load(&c, text);

	ok(ret < 0, "refused: %s", what);
	like(err_msg(), want, "  with '%s'", want);
	config_free(&c);
}

static void test_refusals(void)
{
	refused("[branch 6.1]\ntree_dir = var/a\nbuild_dir = var/b\n"
		"queue_dir = var/q\ncoverage_build_dir = var/c\n"
		"[branch 6.12]\nbranch = linux-6.12.y\ntree_dir = ./var//a/\n"
		"build_dir = var/b2\nqueue_dir = var/q2\n"
		"coverage_build_dir = var/c2\n",
		"branches 6.1 and 6.12 have the same tree_dir (var/a)",
		"one tree for two branches (spelled differently)");
	refused("[branch 6.1]\ntree_dir = var/a\nbuild_dir = var/b\n"
		"queue_dir = var/q\ncoverage_build_dir = var/c\n"
		"[branch 6.12]\nbranch = linux-6.12.y\ntree_dir = var/a2\n"
		"build_dir = var/b\nqueue_dir = var/q2\n"
		"coverage_build_dir = var/c2\n",
		"branches 6.1 and 6.12 have the same build_dir (var/b)",
		"one build directory for two branches");
	refused("[branch 6.1]\ntree_dir = var/a\nbuild_dir = var/b\n"
		"queue_dir = var/q\ncoverage_build_dir = var/c\n"
		"[branch 6.12]\nbranch = linux-6.12.y\ntree_dir = var/a2\n"
		"build_dir = var/b2\nqueue_dir = var/q\n"
		"coverage_build_dir = var/c2\n",
		"branches 6.1 and 6.12 have the same queue_dir (var/q)",
		"one queue directory for two branches");
	refused("[branch 6.1]\ntree_dir = var/a\n[branch 6.12]\n"
		"branch = linux-6.12.y\ntree_dir = var/a2\n",
		"have the same build_dir (var/build)",
		"an inherited build_dir is shared too");
	refused("[branch 6.1]\ntree_dir = var/a\nbuild_dir = var/b\n"
		"queue_dir = var/q\ncoverage_build_dir = var/c\n"
		"[branch 6.12]\ntree_dir = var/a2\nbuild_dir = var/b2\n"
		"queue_dir = var/q2\ncoverage_build_dir = var/c2\n",
		"have the same branch (linux-6.1.y)",
		"one git branch name for two branches");
	refused("[branch 6.1]\n[branch 6.1]\n",
		"stableq.conf:2: branch 6.1 is configured twice",
		"a key twice");
	refused("[branch 6.1]\nlisten = 1.2.3.4:80\n",
		"stableq.conf:2: 'listen' is not a per-branch key",
		"a shared key in a section");
	refused("[branch 6.1]\nnope = 1\n", "stableq.conf:2: unknown key 'nope'",
		"an unknown key in a section");
	refused("[branch a/b]\n", "a branch key is 1 to 32 letters",
		"a key with a slash");
	refused("[branch]\n", "expected a section '[branch KEY]'", "no key");
	refused("[tree 6.1]\n", "stableq.conf:1: expected a section '[branch KEY]'",
		"another kind of section");
	refused("[branch 6.1\n", "expected a section '[branch KEY]'",
		"an unclosed section");
}

static int rm_one(const char *p, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	return remove(p);
}

int main(void)
{
	if (!mkdtemp(tmp)) {
		printf("Bail out! mkdtemp failed\n");
		return 1;
	}
	test_single();
	test_two();
	test_refusals();
	nftw(tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
