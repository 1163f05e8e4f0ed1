/* t-buildcache.c: keys, store and lookup, crash leftovers, the LRU bound, progress rows. */
#include "buildcache.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "progress.h"
#include "strbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static char *at(const char *name)
{
	return xstrfmt("%s/%s", dir, name);
}

/* A file of n bytes of c under the temp dir, parents made. */
static void put(const char *name, size_t n, char c)
{
	char *p = at(name), *data = xmalloc(n + 1);

	memset(data, c, n);
	for (char *s = p + strlen(dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	if (write_file_atomic(p, data, n) < 0)
		diag("%s", err_msg());
	free(data);
	free(p);
}

static int exists(const char *name)
{
	char *p = at(name);
	int r = access(p, F_OK) == 0;

	free(p);
	return r;
}

static void keys(void)
{
	char a[65], b[65], c[65], d[65];

	buildcache_key("tree1", "cfg", "gcc 12", a);
	buildcache_key("tree1", "cfg", "gcc 12", b);
	is_str(a, b, "the same tree, config and compiler give the same key");
	is_int(strlen(a), 64, "... 64 hex digits");
	buildcache_key("tree2", "cfg", "gcc 12", c);
	ok(strcmp(a, c), "another tree, another key");
	buildcache_key("tree1", "cfg", "gcc 13", d);
	ok(strcmp(a, d), "another compiler, another key");
	buildcache_key("tree1c", "fg", "gcc 12", d);
	ok(strcmp(a, d), "parts are length-framed: 'tree1'+'cfg' differs from 'tree1c'+'fg'");

	char *cc = NULL;
	int ret = buildcache_compiler_id(&cc);
	const char *first = ret == 0 ? cc : err_msg();
	ok(ret == 0 && strstr(cc, "gcc") && strchr(cc, '\n'),
	   "the compiler's identity names gcc: %.*s", (int)strcspn(first, "\n"),
	   first);
	free(cc);
}

static void store_and_lookup(void)
{
	const char *files[] = {"arch/x86/boot/bzImage", "lib/test_user_copy.ko"};
	const char *more[] = {"arch/x86/boot/bzImage", "lib/test_user_copy.ko",
			      "lib/test_module.ko"};
	char *cache = at("cache"), *build = at("build"), *entry = NULL;
	char key[65];
	struct strbuf sb = STRBUF_INIT;

	put("build/arch/x86/boot/bzImage", 1000, 'k');
	put("build/lib/test_user_copy.ko", 100, 'm');
	buildcache_key("t", "c", "g", key);

	ok(buildcache_lookup(cache, key, files, 2, &entry) == 0 && !entry,
	   "an empty cache misses");
	ok(buildcache_store(cache, key, build, files, 2, 0, &entry) == 0 && entry,
	   "a built state is stored");
	char *img = xstrfmt("%s/arch/x86/boot/bzImage", entry);
	ok(strbuf_read_file(&sb, img, 0) == 0 && sb.len == 1000 && sb.buf[0] == 'k',
	   "... its image under the build directory's path");
	free(img);
	free(entry);
	entry = NULL;
	ok(buildcache_lookup(cache, key, files, 2, &entry) == 1 && entry,
	   "the same state hits");
	free(entry);
	entry = NULL;
	ok(buildcache_lookup(cache, key, more, 3, &entry) == 0,
	   "a hit needs every file the tests load: a new module misses");
	ok(buildcache_lookup(cache, "../../etc", files, 2, &entry) == 0,
	   "a key that is not 64 hex digits never reaches the file system");

	/* another process got there first: the first entry stays */
	put("build2/arch/x86/boot/bzImage", 1000, 'x');
	put("build2/lib/test_user_copy.ko", 100, 'x');
	char *build2 = at("build2");
	ok(buildcache_store(cache, key, build2, files, 2, 0, &entry) == 0,
	   "storing a state already there succeeds");
	img = xstrfmt("%s/arch/x86/boot/bzImage", entry);
	strbuf_reset(&sb);
	ok(strbuf_read_file(&sb, img, 0) == 0 && sb.buf[0] == 'k',
	   "... and keeps the entry that was there");
	free(img);
	free(entry);
	entry = NULL;

	/* a missing artifact: nothing is left under the key */
	char key2[65];
	buildcache_key("t2", "c", "g", key2);
	ok(buildcache_store(cache, key2, build, more, 3, 0, &entry) < 0 &&
	   strstr(err_msg(), "test_module.ko"),
	   "a missing module fails the store, naming it (%s)", err_msg());
	char *k2 = xstrfmt("cache/%s", key2);
	ok(!exists(k2), "... and leaves no entry under its key");
	free(k2);

	/* a writer that died mid-store: its temp dir goes with the next store */
	put("cache/.tmp.999999999.abc/arch/x86/boot/bzImage", 10, 'z');
	char key3[65];
	buildcache_key("t3", "c", "g", key3);
	ok(buildcache_store(cache, key3, build, files, 2, 0, &entry) == 0,
	   "a store after a crash");
	free(entry);
	entry = NULL;
	ok(!exists("cache/.tmp.999999999.abc"),
	   "... removes the dead writer's half-written temp dir");

	/* the bound: least recently used out, never the new one */
	char k[4][65];
	for (int i = 0; i < 4; i++) {
		char t[8];
		snprintf(t, sizeof(t), "lru%d", i);
		buildcache_key(t, "c", "g", k[i]);
	}
	char *lru = at("lru");
	for (int i = 0; i < 3; i++) {
		buildcache_store(lru, k[i], build, files, 2, 0, &entry);
		free(entry);
		entry = NULL;
		/* distinct mtimes, oldest first */
		char *p = xstrfmt("%s/%s", lru, k[i]);
		struct timespec ts[2] = {{1000 + i, 0}, {1000 + i, 0}};
		utimensat(AT_FDCWD, p, ts, 0);
		free(p);
	}
	/* a hit makes k[0] the newest: k[1] is now the least recently used */
	buildcache_lookup(lru, k[0], files, 2, &entry);
	free(entry);
	entry = NULL;
	is_int(buildcache_size(lru), 3 * 1100, "three states: 3,300 bytes");
	ok(buildcache_store(lru, k[3], build, files, 2, 2500, &entry) == 0,
	   "a fourth state stored into a 2,500-byte cache");
	free(entry);
	entry = NULL;
	ok(buildcache_size(lru) <= 2500, "the cache keeps to its bound (%llu bytes)",
	   buildcache_size(lru));
	ok(buildcache_lookup(lru, k[3], files, 2, &entry) == 1, "the new state stays");
	free(entry);
	entry = NULL;
	ok(buildcache_lookup(lru, k[0], files, 2, &entry) == 1,
	   "the state used last stays");
	free(entry);
	entry = NULL;
	ok(buildcache_lookup(lru, k[1], files, 2, &entry) == 0 &&
	   buildcache_lookup(lru, k[2], files, 2, &entry) == 0,
	   "the least recently used ones went");
	free(lru);
	free(build2);
	free(cache);
	free(build);
	strbuf_release(&sb);
}

static void progress_rows(void)
{
	char *path = at("p.db");
	sqlite3 *db = NULL;
	char *label = NULL;
	long long done = 0, total = 0;

	if (db_open(&db, path) < 0) {
		ok(0, "a store for progress rows: %s", err_msg());
		free(path);
		return;
	}
	progress_set(db, "build", 7, "candidate 7: building", 10, 400, "objects");
	db_query_text(db, &label, "SELECT label FROM progress WHERE kind = 'build'"
				  " AND subject_id = 7", NULL);
	is_str(label, "candidate 7: building", "progress_set writes a row");
	free(label);
	progress_set(db, "build", 7, "candidate 7: building", 20, 400, "objects");
	db_query_int(db, &done, "SELECT done FROM progress WHERE subject_id = 7", NULL);
	is_int(done, 10, "... at most once a second");
	progress_set(db, "build", 7, "candidate 7: building", 400, 400, "objects");
	db_query_int(db, &done, "SELECT done FROM progress WHERE subject_id = 7", NULL);
	db_query_int(db, &total, "SELECT total FROM progress WHERE subject_id = 7", NULL);
	ok(done == 400 && total == 400, "... but always the last report");
	progress_clear(db, "build", 7);
	db_query_int(db, &done, "SELECT COUNT(*) FROM progress", NULL);
	is_int(done, 0, "progress_clear deletes the row");
	char *t = progress_text(3, 7, "steps");
	is_str(t, "3/7 steps (42%)", "progress_text with a total");
	free(t);
	t = progress_text(12, 0, "objects");
	is_str(t, "12 objects", "... and without one");
	free(t);
	/* a terminal gets one line rewritten in place */
	int fds[2];
	if (pipe(fds) == 0) {
		struct strbuf out = STRBUF_INIT;
		progress_terminal(fds[1]);
		progress_set(NULL, "tree", 0, "tree: importing", 5, 10, "files");
		progress_set(NULL, "tree", 0, "tree: importing", 10, 10, "files");
		progress_clear(NULL, "tree", 0);
		progress_terminal(-1);
		close(fds[1]);
		strbuf_read_fd(&out, fds[0], 4096);
		close(fds[0]);
		is_str(out.buf,
		       "\rtree: importing: 5/10 files (50%)\033[K"
		       "\rtree: importing: 10/10 files (100%)\033[K\r\033[K",
		       "on a terminal: one line, rewritten, cleared at the end");
		strbuf_release(&out);
	}
	db_close(db);
	free(path);
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/t-buildcache.XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	keys();
	store_and_lookup();
	progress_rows();
	rm_rf(dir);
	return done_testing();
}
