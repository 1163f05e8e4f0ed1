/* t-check.c: the stable-rules checks of patches against a real small git tree. */
#include "check.h"
#include "repo.h"
#include "db.h"
#include "file.h"
#include "spawn.h"
#include "tap.h"
#include "tqueue.h"

#include <unistd.h>

/* Runs a shell script in dir (git made the tree); its output into out. */
static int sh(const char *dir, const char *script, struct strbuf *out)
{
	const char *argv[] = { "sh", "-ec", script, NULL };
	const char *env[] = { "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.org",
			      "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.org",
			      "GIT_CONFIG_NOSYSTEM=1", "HOME=/nonexistent", NULL };
	struct spawn s = SPAWN_INIT;
	int ret;

	s.argv = argv;
	s.env = env;
	s.cwd = dir;
	s.capture = 1;
	ret = spawn_run(&s);
	if (ret == 0 && s.status)
		ret = -1;
	if (ret < 0)
		diag("%s: %s", script, s.out.buf);
	if (out)
		strbuf_addbuf(out, &s.out);
	spawn_release(&s);
	return ret;
}

static const char *verdict(struct branch_ctx *bc, long long id,
			   const char *check)
{
	static char *v;

	free(v);
	v = NULL;
	queue_verdict_latest(bc->db, id, check, &v);
	return v ? v : "none";
}

static const char *state(struct branch_ctx *bc, long long id)
{
	enum patch_state s;

	return queue_get_state(bc->db, id, &s) == 0 ? queue_state_name(s) : "?";
}

/* The state reason of patch id, "" when none (the next call frees it). */
static const char *reason(struct branch_ctx *bc, long long id)
{
	static char *why;

	free(why);
	why = NULL;
	db_query_text(bc->db, &why,
		      "SELECT state_reason FROM patches WHERE id = ?", "i", id);
	return why ? why : "";
}

int main(void)
{
	char dir[] = "/tmp/t-check.XXXXXX", *conf, *version = NULL, *s1;
	struct strbuf out = STRBUF_INIT;
	struct check_summary sum = { 0 };
	struct branch_ctx bc;
	long long present, missing, cc61, cc66, conflict, already, absent;

	if (!mkdtemp(dir))
		return 1;
	/* the stable tree: v6.1.10, then a commit of its own */
	ok(sh(dir, "git init -q -b master linux && cd linux &&"
		   " for i in $(seq 1 30); do echo \"line $i\"; done > lib.c &&"
		   " printf 'VERSION = 6\\nPATCHLEVEL = 1\\nSUBLEVEL = 10\\n' > Makefile &&"
		   " git add -A && git commit -qm 'Linux 6.1.10' && git tag v6.1.10 &&"
		   " sed -i 's/^line 5$/line five/' lib.c && git commit -qam 'lib: spell five' &&"
		   " git branch -q linux-6.1.y && git rev-parse HEAD", &out) == 0,
	   "a stable tree made with git");
	strbuf_trim(&out);
	s1 = strbuf_detach(&out, NULL);

	conf = xstrfmt("tree_dir = %s/linux\nbranch = linux-6.1.y\n"
		       "debian_changelog =\nqueue_dir = %s/q\n", dir, dir);
	tq_open(&bc, dir, conf);
	free(conf);

	is_str(version =
		       repo_dir_branch_version(bc.cfg.tree_dir, "linux-6.1.y"),
	       "6.1.10",
	       "repo_dir_branch_version: 6.1.10 from the v6.1.10 tag");
	free(version);
	ok(!repo_dir_branch_version(bc.cfg.tree_dir, "linux-9.9.y"),
	   "... NULL for no such branch");

	{
		char *fixes = xstrfmt("Fixes: %.12s (\"lib: spell five\")\n", s1);
		present = tq_add(&bc, "present", "[PATCH 6.1] lib: fix line 7",
				 fixes, "lib.c", 7);
		free(fixes);
	}
	missing = tq_add(&bc, "missing", "[PATCH 6.1] lib: fix line 9", "",
			 "lib.c", 9);
	cc61 = tq_add(&bc, "cc61", "[PATCH 6.1] lib: fix line 11",
		      "Cc: <stable@vger.kernel.org> # 6.1.x\n", "lib.c", 11);
	cc66 = tq_add(&bc, "cc66", "[PATCH 6.1] lib: fix line 13",
		      "Cc: <stable@vger.kernel.org> # 6.6.x\n", "lib.c", 13);
	/* line 5 is "line five" on the branch: the context does not match */
	conflict = tq_add(&bc, "conflict", "[PATCH 6.1] lib: fix line 5",
			  "Cc: <stable@vger.kernel.org> # 6.1.x\n", "lib.c", 5);
	/* what the branch did already */
	already =
		tq_add_diff(&bc, "already", "[PATCH 6.1] lib: spell five again",
			    "Cc: <stable@vger.kernel.org> # 6.1.x\n",
			    "--- a/lib.c\n+++ b/lib.c\n@@ -4,3 +4,3 @@\n line "
			    "4\n-line 5\n+line five\n line 6\n");
	/* no target known, and every file it changes is missing from the tree */
	absent = tq_add(&bc, "absent", "[PATCH 6.1] gone: fix line 3",
			"Fixes: 0123456789ab (\"something nobody knows\")\n",
			"gone.c", 3);

	ok(check_run(&bc, NULL, 0, &sum) == 0, "check_run of every patch");
	is_int(sum.checked, 7, "... checked 7");

	is_str(verdict(&bc, present, "fixes"), "present",
	       "Fixes: a commit on the branch: present");
	is_str(verdict(&bc, present, "applies"), "clean",
	       "... it applies: clean");
	is_str(verdict(&bc, present, "fixup"), "ok",
	       "... not a fix-up of a broken patch: ok");
	is_str(state(&bc, present), "queued", "... queued");
	is_str(verdict(&bc, missing, "fixes"), "missing",
	       "no Fixes:, no Cc: stable: missing");
	is_str(state(&bc, missing), "checked", "... waits for a human");
	is_str(verdict(&bc, cc61, "fixes"), "present",
	       "Cc: stable # 6.1.x: present for 6.1.10");
	is_str(state(&bc, cc61), "queued", "... queued");
	is_str(verdict(&bc, cc66, "fixes"), "absent",
	       "Cc: stable # 6.6.x: absent for 6.1.10");
	is_str(state(&bc, cc66), "rejected", "... rejected");
	is_str(verdict(&bc, conflict, "applies"), "conflict",
	       "a changed context: conflict");
	is_str(state(&bc, conflict), "checked", "... waits for a human");
	is_str(verdict(&bc, already, "applies"), "already-applied",
	       "a change the branch has: already-applied");
	is_str(state(&bc, already), "released", "... released, not rejected");
	is_str(verdict(&bc, absent, "fixes"), "absent",
	       "unknown target, every file missing from the tree: absent");
	is_str(state(&bc, absent), "rejected", "... rejected");
	json_decref(sum.json);

	/* the same again changes nothing: no patch is checked twice */
	memset(&sum, 0, sizeof(sum));
	ok(check_run(&bc, NULL, 0, &sum) == 0, "check_run again");
	{
		long long n = 0;
		db_query_int(bc.db, &n,
			     "SELECT COUNT(*) FROM verdicts WHERE patch_id = ?",
			     "i", present);
		ok(n >= 3, "... the verdicts stay (%lld for the first patch)", n);
	}
	json_decref(sum.json);

	/* links are not files: held for a human, never queued (issue 33) */
	{
		long long ids[4];
		ids[0] = tq_add_diff(
			&bc, "link-out", "[PATCH 6.1] scripts: add a helper",
			"Cc: <stable@vger.kernel.org> # 6.1.x\n",
			"diff --git a/scripts/helper b/scripts/helper\n"
			"new file mode 120000\nindex 0000000..1234567\n"
			"--- /dev/null\n+++ b/scripts/helper\n@@ -0,0 +1 @@\n"
			"+../../etc/shadow\n\\ No newline at end of file\n");
		ids[1] = tq_add_diff(
			&bc, "link-in", "[PATCH 6.1] include: name lib.c",
			"Cc: <stable@vger.kernel.org> # 6.1.x\n",
			"diff --git a/include/lib b/include/lib\n"
			"new file mode 120000\nindex 0000000..1234567\n"
			"--- /dev/null\n+++ b/include/lib\n@@ -0,0 +1 @@\n"
			"+../lib.c\n\\ No newline at end of file\n");
		ids[2] = tq_add_diff(
			&bc, "gitlink", "[PATCH 6.1] sub: add the submodule",
			"Cc: <stable@vger.kernel.org> # 6.1.x\n",
			"diff --git a/sub b/sub\nnew file mode 160000\n"
			"index 0000000..0123456\n--- /dev/null\n+++ b/sub\n"
			"@@ -0,0 +1 @@\n+Subproject commit"
			" 0123456789abcdef0123456789abcdef01234567\n");
		ids[3] = tq_add_diff(
			&bc, "newfile", "[PATCH 6.1] lib: add a file",
			"Cc: <stable@vger.kernel.org> # 6.1.x\n",
			"diff --git a/new.c b/new.c\nnew file mode 100644\n"
			"index 0000000..1234567\n--- /dev/null\n+++ b/new.c\n"
			"@@ -0,0 +1 @@\n+int new_file_of_the_fix;\n");
		memset(&sum, 0, sizeof(sum));
		ok(check_run(&bc, ids, 4, &sum) == 0, "check_run of 4 patches"
		   " that add a symlink, a gitlink, a file");
		json_decref(sum.json);
		for (int i = 0; i < 3; i++) {
			is_str(verdict(&bc, ids[i], "flags"), "held",
			       "a link: flags held");
			is_str(state(&bc, ids[i]), "held",
			       "... the patch held, not queued");
		}
		like(reason(&bc, ids[0]),
		     "scripts/helper is a symlink pointing outside the tree"
		     " (../../etc/shadow)",
		     "... a symlink to outside the tree, named");
		like(reason(&bc, ids[1]), "include/lib is a symlink, not a file",
		     "... a symlink inside the tree too");
		like(reason(&bc, ids[2]), "sub is a gitlink (a submodule commit)",
		     "... a gitlink");
		is_str(verdict(&bc, ids[3], "flags"), "feature-like",
		       "a new file: feature-like, as before");
		is_str(state(&bc, ids[3]), "queued", "... and queued");
	}

	/* no tree: ERR_NOTFOUND, and nothing changes */
	{
		struct strbuf p = STRBUF_INIT;
		strbuf_addf(&p, "%s/linux", dir);
		ok(sh(dir, "mv linux linux.away", NULL) == 0, "the tree is moved away");
		memset(&sum, 0, sizeof(sum));
		is_int(check_run(&bc, &present, 1, &sum), ERR_NOTFOUND,
		       "check_run without the tree: ERR_NOTFOUND");
		like(err_msg(), "linux", "... naming it");
		json_decref(sum.json);
		strbuf_release(&p);
	}
	free(s1);
	tq_close(&bc);
	rm_rf(dir);
	return done_testing();
}
