/* replay.c: runs a fuzz target over its corpus without libFuzzer (TAP). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "strbuf.h"

#ifndef CORPUS_DIR
#error "build with -DCORPUS_DIR='\"fuzz/corpus/NAME\"'"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n_tests, n_failed;

static void replay(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	uint8_t *copy;

	if (strbuf_read_file(&sb, path, 0) < 0) {
		printf("not ok %d - %s: cannot read\n", ++n_tests, path);
		n_failed++;
		return;
	}
	/* an exact-size copy, so that ASan sees any read past the end */
	copy = xmalloc(sb.len ? sb.len : 1);
	memcpy(copy, sb.buf, sb.len);
	LLVMFuzzerTestOneInput(copy, sb.len);
	free(copy);
	strbuf_release(&sb);
	printf("ok %d - no crash: %s\n", ++n_tests, path);
	fflush(stdout);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	char **names = NULL;
	size_t n = 0;
	DIR *d;
	struct dirent *de;

	if (argc > 1) {
		for (int i = 1; i < argc; i++)
			replay(argv[i]);
		printf("1..%d\n", n_tests);
		return n_failed != 0;
	}
	if (!(d = opendir(CORPUS_DIR))) {
		printf("not ok 1 - cannot open %s\n1..1\n", CORPUS_DIR);
		return 1;
	}
	while ((de = readdir(d))) {
		struct stat st;
		char *path;
		if (de->d_name[0] == '.')
			continue;
		path = xstrfmt("%s/%s", CORPUS_DIR, de->d_name);
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			free(path);
			continue;
		}
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = path;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp);
	for (size_t i = 0; i < n; i++) {
		replay(names[i]);
		free(names[i]);
	}
	free(names);
	if (!n) {
		printf("not ok 1 - %s is empty\n", CORPUS_DIR);
		n_tests = 1;
		n_failed = 1;
	}
	printf("1..%d\n", n_tests);
	return n_failed != 0;
}
