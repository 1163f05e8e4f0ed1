/* t-initramfs.c: the newc writer, read back by the system's cpio. */
#include "err.h"
#include "file.h"
#include "initramfs.h"
#include "spawn.h"
#include "strbuf.h"
#include "tap.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* Runs argv with stdin from in (or /dev/null), in cwd; output into out. */
static int run(const char *const *argv, const char *in, const char *cwd,
	       struct strbuf *out)
{
	struct spawn s = SPAWN_INIT;
	int status;

	s.argv = argv;
	s.stdin_path = in;
	s.cwd = cwd;
	s.capture = 1;
	s.timeout_ms = 30000;
	if (spawn_run(&s) < 0) {
		diag("%s", err_msg());
		spawn_release(&s);
		return -1;
	}
	status = s.status;
	if (out) {
		strbuf_reset(out);
		strbuf_addbuf(out, &s.out);
	}
	spawn_release(&s);
	return status;
}

static char *path_in(const char *name)
{
	return xstrfmt("%s/%s", dir, name);
}

static void write_host(const char *path, const void *data, size_t len)
{
	int ok_ = write_file_atomic(path, data, len) == 0;

	ok(ok_, "host file %s written", path);
}

static void test_archive(void)
{
	char *host = path_in("host-file");
	char *big = path_in("big-file");
	char *out = path_in("a.cpio");
	char *out2 = path_in("b.cpio");
	char *x = path_in("x");
	struct strbuf sb = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	size_t bigsz = 300001;
	char *bigdata = xmalloc(bigsz);
	static const char tests[] = "user-copy\t60\tinsmod /lib/modules/"
				    "test_user_copy.ko\n";

	for (size_t i = 0; i < bigsz; i++)
		bigdata[i] = (char)(i * 7 + i / 251);
	write_host(host, "#!/bin/busybox sh\necho hi\n", 26);
	chmod(host, 0750);
	write_host(big, bigdata, bigsz);
	const struct initramfs_entry e[] = {
		{INITRAMFS_DIR, "/dev", 0},
		{INITRAMFS_CHARDEV, "/dev/console", 0600, .major = 5,
		 .minor = 1},
		{INITRAMFS_DIR, "tmp", 01777},
		{INITRAMFS_FILE, "/init", 0, .host_path = host},
		{INITRAMFS_FILE, "/bin/big", 0644, .host_path = big},
		{INITRAMFS_SYMLINK, "/bin/sh", 0, .target = "busybox"},
		/* parents made on the way: etc, etc/stableq */
		{INITRAMFS_DATA, "/etc/stableq/tests", 0644, .data = tests,
		 .len = sizeof(tests) - 1},
		/* every padding case: names and data of lengths 0..4 mod 4 */
		{INITRAMFS_DATA, "p/a", 0, .data = "", .len = 0},
		{INITRAMFS_DATA, "p/bb", 0, .data = "1", .len = 1},
		{INITRAMFS_DATA, "p/ccc", 0, .data = "12", .len = 2},
		{INITRAMFS_DATA, "p/dddd", 0, .data = "123", .len = 3},
		{INITRAMFS_DATA, "p/eeeee", 0, .data = "1234", .len = 4},
		/* listing a directory made implicitly is fine */
		{INITRAMFS_DIR, "/etc", 0},
	};
	int ret = initramfs_write(out, e, sizeof(e) / sizeof(e[0]));
	is_int(ret, 0, "archive written: %s", ret ? err_msg() : "");

	const char *list[] = {"cpio", "-t", "--quiet", NULL};
	is_int(run(list, out, NULL, &sb), 0, "cpio -t reads it");
	is_str(sb.buf,
	       "dev\ndev/console\ntmp\ninit\nbin\nbin/big\nbin/sh\netc\n"
	       "etc/stableq\netc/stableq/tests\np\np/a\np/bb\np/ccc\np/dddd\n"
	       "p/eeeee\n",
	       "every entry, parents before children, in order");

	const char *listv[] = {"cpio", "-tv", "--quiet", NULL};
	is_int(run(listv, out, NULL, &sb), 0, "cpio -tv reads it");
	like(sb.buf, "crw-------   1 root     root       5,   1 ",
	     "dev/console is c 5 1, 0600, root");
	like(sb.buf, "drwxrwxrwt", "tmp is 01777");
	like(sb.buf, "-rwxr-x---   1 root     root           26 ",
	     "init keeps its host mode and size");
	like(sb.buf, "lrwxrwxrwx   1 root     root            7 ",
	     "bin/sh is a symlink");
	like(sb.buf, "bin/sh -> busybox", "to busybox");
	like(sb.buf, "Jan  1  1970", "mtime 0");

	/* extract everything but the device node (that needs mknod rights) */
	ok(mkdir(x, 0755) == 0, "extraction dir");
	const char *ext[] = {
		"cpio", "-id",	 "--quiet", "--no-absolute-filenames",
		"init", "bin/*", "etc/*",   "p/*",
		NULL};
	is_int(run(ext, out, x, &sb), 0, "cpio -i extracts it: %s", sb.buf);
	struct strbuf got = STRBUF_INIT;
	char *p = xstrfmt("%s/bin/big", x);
	ok(strbuf_read_file(&got, p, 0) == 0 && got.len == bigsz &&
		   !memcmp(got.buf, bigdata, bigsz),
	   "a 300001-byte host file comes back byte for byte");
	free(p);
	strbuf_reset(&got);
	p = xstrfmt("%s/etc/stableq/tests", x);
	ok(strbuf_read_file(&got, p, 0) == 0 && !strcmp(got.buf, tests),
	   "inline data comes back");
	free(p);
	const char *names[] = {"p/a", "p/bb", "p/ccc", "p/dddd", "p/eeeee"};
	const char *want[] = {"", "1", "12", "123", "1234"};
	for (int i = 0; i < 5; i++) {
		strbuf_reset(&got);
		p = xstrfmt("%s/%s", x, names[i]);
		ok(strbuf_read_file(&got, p, 0) == 0 &&
			   !strcmp(got.buf, want[i]),
		   "%s holds '%s' (padding)", names[i], want[i]);
		free(p);
	}
	char link[64] = {0};
	p = xstrfmt("%s/bin/sh", x);
	ok(readlink(p, link, sizeof(link) - 1) == 7 && !strcmp(link, "busybox"),
	   "the symlink comes back");
	free(p);
	strbuf_release(&got);

	/* the same inputs give the same bytes */
	is_int(initramfs_write(out2, e, sizeof(e) / sizeof(e[0])), 0,
	       "written again");
	ok(strbuf_read_file(&a, out, 0) == 0 &&
		   strbuf_read_file(&b, out2, 0) == 0 && a.len == b.len &&
		   !memcmp(a.buf, b.buf, a.len),
	   "byte for byte the same archive");
	is_int(a.len % 4, 0, "the archive is 4-byte aligned");
	ok(a.len > 6 && !memcmp(a.buf, "070701", 6), "newc magic");
	ok(memmem(a.buf, a.len, "TRAILER!!!", 11) != NULL, "trailer");

	strbuf_release(&sb);
	strbuf_release(&a);
	strbuf_release(&b);
	free(bigdata);
	free(host);
	free(big);
	free(out);
	free(out2);
	free(x);
}

static int no_leftovers(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		if (strstr(de->d_name, "bad.cpio"))
			n++;
	if (d)
		closedir(d);
	return n == 0;
}

static void bad(const struct initramfs_entry *e, size_t n, int code,
		const char *want, const char *what)
{
	char *out = path_in("bad.cpio");

	is_int(initramfs_write(out, e, n), code, "%s: rejected", what);
	like(err_msg(), want, "%s: message", what);
	ok(no_leftovers(), "%s: no archive or temp file left", what);
	free(out);
}

static void test_errors(void)
{
	const struct initramfs_entry dotdot[] = {
		{INITRAMFS_DATA, "etc/../x", 0, .data = "", .len = 0},
	};
	const struct initramfs_entry empty[] = {
		{INITRAMFS_DIR, "", 0},
	};
	const struct initramfs_entry root[] = {
		{INITRAMFS_DIR, "/", 0},
	};
	const struct initramfs_entry dslash[] = {
		{INITRAMFS_DIR, "a//b", 0},
	};
	const struct initramfs_entry trailing[] = {
		{INITRAMFS_DIR, "a/b/", 0},
	};
	const struct initramfs_entry twice[] = {
		{INITRAMFS_DATA, "a", 0, .data = "", .len = 0},
		{INITRAMFS_DATA, "/a", 0, .data = "", .len = 0},
	};
	const struct initramfs_entry late_dir[] = {
		{INITRAMFS_DATA, "etc/x", 0, .data = "", .len = 0},
		{INITRAMFS_DIR, "etc", 0700},
	};
	const struct initramfs_entry missing[] = {
		{INITRAMFS_FILE, "bin/busybox", 0755,
		 .host_path = "/nonexistent/busybox"},
	};
	const struct initramfs_entry notreg[] = {
		{INITRAMFS_FILE, "bin/x", 0755, .host_path = "/tmp"},
	};
	const struct initramfs_entry mode[] = {
		{INITRAMFS_DATA, "x", 0100644, .data = "", .len = 0},
	};
	const struct initramfs_entry nolink[] = {
		{INITRAMFS_SYMLINK, "bin/sh", 0},
	};
	const struct initramfs_entry nohost[] = {
		{INITRAMFS_FILE, "bin/sh", 0},
	};
	const struct initramfs_entry kind[] = {
		{(enum initramfs_kind)42, "x", 0},
	};
	const struct initramfs_entry nodata[] = {
		{INITRAMFS_DATA, "x", 0, .data = NULL, .len = 3},
	};

	bad(dotdot, 1, ERR_INVALID, "'..' component", "'..'");
	bad(empty, 1, ERR_INVALID, "empty path", "empty path");
	bad(root, 1, ERR_INVALID, "names the root", "the root");
	bad(dslash, 1, ERR_INVALID, "empty, '.' or '..' component", "'//'");
	bad(trailing, 1, ERR_INVALID, "trailing '/'", "trailing slash");
	bad(twice, 2, ERR_INVALID, "initramfs a: listed twice", "duplicate");
	bad(late_dir, 2, ERR_INVALID, "initramfs etc: listed twice",
	    "a directory with a mode after its children");
	bad(missing, 1, ERR_NOTFOUND, "/nonexistent/busybox",
	    "missing host file");
	bad(notreg, 1, ERR_INVALID, "not a regular file",
	    "a directory as "
	    "file");
	bad(mode, 1, ERR_INVALID, "more than permission bits", "type bits");
	bad(nolink, 1, ERR_INVALID, "symlink without target", "no target");
	bad(nohost, 1, ERR_INVALID, "file without host path", "no host path");
	bad(kind, 1, ERR_INVALID, "unknown entry kind 42", "bad kind");
	bad(nodata, 1, ERR_INVALID, "data entry without data", "no data");

	is_int(initramfs_write("/nonexistent/dir/x.cpio", nolink, 0), ERR_IO,
	       "unwritable output");
	like(err_msg(), "/nonexistent/dir/x.cpio", "names the output");
}

static void test_empty(void)
{
	char *out = path_in("empty.cpio");
	struct strbuf sb = STRBUF_INIT;
	const char *list[] = {"cpio", "-t", "--quiet", NULL};

	is_int(initramfs_write(out, NULL, 0), 0, "an empty archive");
	is_int(run(list, out, NULL, &sb), 0, "cpio -t reads it");
	is_str(sb.buf, "", "no entries");
	strbuf_release(&sb);
	free(out);
}

int main(void)
{
	strcpy(dir, "/tmp/t-initramfs-XXXXXX");
	if (!mkdtemp(dir)) {
		ok(0, "temp dir");
		return done_testing();
	}
	test_archive();
	test_errors();
	test_empty();
	const char *rm[] = {"rm", "-rf", dir, NULL};
	run(rm, NULL, NULL, NULL);
	return done_testing();
}
