/* t-strbuf.c: growable buffers and the file helpers beside them. */
#include "err.h"
#include "file.h"
#include "strbuf.h"
#include "tap.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	struct strbuf sb = STRBUF_INIT;
	char dir[] = "/tmp/t-strbuf.XXXXXX", *p, *s;
	size_t len;

	ok(sb.buf && sb.len == 0 && sb.buf[0] == '\0',
	   "STRBUF_INIT is an empty string");
	strbuf_addstr(&sb, "abc");
	strbuf_addch(&sb, '-');
	strbuf_addf(&sb, "%d/%s", 42, "x");
	is_str(sb.buf, "abc-42/x", "addstr, addch, addf append");
	is_int(sb.len, 8, "... and len follows");
	strbuf_add(&sb, "\0z", 2);
	is_int(sb.len, 10, "add keeps a NUL byte inside");
	ok(sb.buf[8] == '\0' && sb.buf[9] == 'z' && sb.buf[10] == '\0',
	   "... and the buffer stays NUL-terminated after it");
	strbuf_reset(&sb);
	ok(sb.len == 0 && !sb.buf[0], "reset empties it");
	for (int i = 0; i < 10000; i++)
		strbuf_addch(&sb, 'a' + i % 26);
	ok(sb.len == 10000 && sb.alloc > 10000 && sb.buf[9999] == 'a' + 9999 % 26 &&
	   !sb.buf[10000], "it grows past 10000 bytes");
	strbuf_setlen(&sb, 3);
	is_str(sb.buf, "abc", "setlen cuts");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, " \t pad me \n\n");
	strbuf_rtrim(&sb);
	is_str(sb.buf, " \t pad me", "rtrim strips the end only");
	strbuf_trim(&sb);
	is_str(sb.buf, "pad me", "trim strips both ends");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "  \n ");
	strbuf_trim(&sb);
	ok(sb.len == 0 && !sb.buf[0], "trim of white space alone is empty");
	{
		struct strbuf o = STRBUF_INIT;
		strbuf_addstr(&o, "tail");
		strbuf_addbuf(&sb, &o);
		is_str(sb.buf, "tail", "addbuf");
		strbuf_release(&o);
	}
	s = strbuf_detach(&sb, &len);
	ok(s && len == 4 && !strcmp(s, "tail"), "detach hands the buffer over");
	ok(sb.len == 0 && sb.buf && !sb.buf[0], "... and leaves sb empty");
	free(s);
	s = strbuf_detach(&sb, &len);
	ok(s && len == 0 && !*s, "detach of an empty strbuf is a fresh \"\"");
	free(s);
	strbuf_release(&sb);
	strbuf_release(&sb);
	ok(1, "release twice is harmless");

	s = xstrfmt("%s=%05d", "n", 7);
	is_str(s, "n=00007", "xstrfmt");
	free(s);
	s = xstrndup("abcdef", 3);
	is_str(s, "abc", "xstrndup");
	free(s);

	/* files */
	if (!mkdtemp(dir))
		return 1;
	p = xstrfmt("%s/a/b/c", dir);
	ok(mkdir_p(p) == 0, "mkdir_p makes parents");
	ok(mkdir_p(p) == 0, "... and is fine when the directory exists");
	{
		struct stat st;
		ok(stat(p, &st) == 0 && S_ISDIR(st.st_mode), "... it is a directory");
	}
	free(p);
	p = xstrfmt("%s/a/b/f", dir);
	ok(write_file_atomic(p, "hello\0world", 11) == 0, "write_file_atomic");
	ok(strbuf_read_file(&sb, p, 0) == 0 && sb.len == 11 &&
	   !memcmp(sb.buf, "hello\0world", 11), "read_file reads it back, NUL and all");
	strbuf_reset(&sb);
	ok(write_file_atomic(p, "new", 3) == 0 && strbuf_read_file(&sb, p, 0) == 0,
	   "write_file_atomic replaces");
	is_str(sb.buf, "new", "... with the new content only");
	strbuf_reset(&sb);
	ok(strbuf_read_file(&sb, p, 2) < 0, "read_file over max fails");
	like(err_msg(), p, "... naming the file");
	strbuf_reset(&sb);
	{
		int fd = open(p, O_RDONLY);
		ok(fd >= 0 && strbuf_read_fd(&sb, fd, 0) == 0 && sb.len == 3,
		   "read_fd");
		if (fd >= 0)
			close(fd);
	}
	strbuf_reset(&sb);
	free(p);
	p = xstrfmt("%s/missing", dir);
	ok(strbuf_read_file(&sb, p, 0) < 0, "read_file of a missing file fails");
	like(err_msg(), "missing", "... naming it");
	free(p);
	p = xstrfmt("%s/nodir/f", dir);
	ok(write_file_atomic(p, "x", 1) < 0, "write_file_atomic into no directory fails");
	free(p);
	p = xstrfmt("%s/link", dir);
	{
		char *target = xstrfmt("%s/a", dir);
		ok(symlink(target, p) == 0, "a symlink to a");
		free(target);
	}
	ok(rm_rf(p) == 0, "rm_rf of the symlink");
	free(p);
	p = xstrfmt("%s/a/b/f", dir);
	ok(access(p, F_OK) == 0, "... did not follow it");
	free(p);
	ok(rm_rf(dir) == 0 && access(dir, F_OK) < 0, "rm_rf removes the tree");
	ok(rm_rf(dir) == 0, "rm_rf of nothing is fine");
	strbuf_release(&sb);
	return done_testing();
}
