/* kunitconf.c: the KUnit test symbols of a tree's Kconfig files, those KUNIT_ALL_TESTS misses included. */
#include "kunitconf.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KCONFIG_MAX (4u << 20)

struct entry {
	char sym[128];
	int typed;       /* bool or tristate */
	int on_kunit;    /* "depends on" names KUNIT */
	int all_default; /* "default KUNIT_ALL_TESTS" */
};

struct scan {
	struct strbuf *out;
	const char *const *deny;
	size_t all, extra, denied;
	/* the "if" blocks around the entry: bit i set when block i names KUNIT */
	unsigned long long ifs;
	int depth;
};

/* 1 if word appears in s as a whole symbol (KUNIT, not KUNIT_ALL_TESTS). */
static int has_symbol(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = s; (p = strstr(p, word)) != NULL; p += n) {
		int before = p == s || !(isalnum((unsigned char)p[-1]) ||
					 p[-1] == '_');
		int after = !(isalnum((unsigned char)p[n]) || p[n] == '_');
		if (before && after)
			return 1;
	}
	return 0;
}

static int denied(const struct scan *sc, const char *sym)
{
	for (size_t i = 0; sc->deny && sc->deny[i]; i++)
		if (!strcmp(sc->deny[i], sym))
			return 1;
	return 0;
}

/* inside an "if" whose condition names KUNIT */
static int in_kunit_if(const struct scan *sc)
{
	int n = sc->depth < 64 ? sc->depth : 64;

	return n > 0 && (sc->ifs & ((n == 64 ? 0 : 1ull << n) - 1)) != 0;
}

static void end_entry(struct scan *sc, struct entry *e)
{
	if (e->sym[0] && e->typed && e->on_kunit &&
	    strcmp(e->sym, "KUNIT") && strcmp(e->sym, "KUNIT_ALL_TESTS")) {
		if (denied(sc, e->sym)) {
			sc->denied++;
			strbuf_addf(sc->out, "# CONFIG_%s is not set\n",
				    e->sym);
		} else {
			if (e->all_default)
				sc->all++;
			else
				sc->extra++;
			strbuf_addf(sc->out, "CONFIG_%s=y\n", e->sym);
		}
	}
	memset(e, 0, sizeof(*e));
}

static void scan_text(struct scan *sc, const char *text)
{
	struct entry e = {0};

	sc->depth = 0; /* an "if" ends in the file it starts in */

	for (const char *line = text; *line;) {
		size_t len = strcspn(line, "\n");
		char buf[512];
		const char *s;

		snprintf(buf, sizeof(buf), "%.*s", (int)(len < 511 ? len : 511),
			 line);
		line += len + (line[len] == '\n');
		s = buf + strspn(buf, " \t");
		if (!strncmp(s, "config ", 7) || !strncmp(s, "menuconfig ", 11)) {
			end_entry(sc, &e);
			s += s[0] == 'c' ? 7 : 11;
			s += strspn(s, " \t");
			snprintf(e.sym, sizeof(e.sym), "%.*s",
				 (int)strcspn(s, " \t#"), s);
			e.on_kunit = in_kunit_if(sc);
			continue;
		}
		if (!strncmp(s, "if ", 3) || !strncmp(s, "if\t", 3)) {
			end_entry(sc, &e);
			if (sc->depth < 64 && has_symbol(s + 3, "KUNIT"))
				sc->ifs |= 1ull << sc->depth;
			else if (sc->depth < 64)
				sc->ifs &= ~(1ull << sc->depth);
			sc->depth++;
			continue;
		}
		if (!strncmp(s, "endif", 5)) {
			end_entry(sc, &e);
			if (sc->depth > 0)
				sc->depth--;
			continue;
		}
		if (!strncmp(s, "choice", 6) || !strncmp(s, "endchoice", 9) ||
		    !strncmp(s, "menu", 4) || !strncmp(s, "endmenu", 7) ||
		    		    !strncmp(s, "source", 6) || !strncmp(s, "comment", 7)) {
			end_entry(sc, &e);
			continue;
		}
		if (!e.sym[0])
			continue;
		if (!strncmp(s, "bool", 4) || !strncmp(s, "tristate", 8) ||
		    !strncmp(s, "def_bool", 8) || !strncmp(s, "def_tristate", 12))
			e.typed = 1;
		else if (!strncmp(s, "depends on", 10) &&
			 has_symbol(s + 10, "KUNIT"))
			e.on_kunit = 1;
		else if (!strncmp(s, "default", 7) &&
			 has_symbol(s + 7, "KUNIT_ALL_TESTS"))
			e.all_default = 1;
	}
	end_entry(sc, &e);
}

static int walk(struct scan *sc, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int ret = 0;

	if (!d)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "%s: %s", dir, strerror(errno));
	/* readdir's order is the filesystem's: sort for a stable fragment */
	char **names = NULL;
	size_t n = 0;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		names = xrealloc(names, (n + 1) * sizeof(*names));
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(names[k - 1], names[k]) > 0;
		     k--) {
			char *t = names[k];
			names[k] = names[k - 1];
			names[k - 1] = t;
		}
	for (size_t i = 0; i < n && ret >= 0; i++) {
		char *p = xstrfmt("%s/%s", dir, names[i]);
		struct stat st;
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			ret = walk(sc, p);
		} else if (S_ISREG(st.st_mode) &&
			   !strncmp(names[i], "Kconfig", 7)) {
			struct strbuf sb = STRBUF_INIT;
			if (strbuf_read_file(&sb, p, KCONFIG_MAX) >= 0)
				scan_text(sc, sb.buf);
			strbuf_release(&sb);
		}
		free(p);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

int kunitconf_scan(const char *src_dir, const char *const *deny,
		   struct strbuf *fragment, size_t *all_tests, size_t *extra,
		   size_t *ndenied)
{
	struct scan sc = {.out = fragment, .deny = deny};
	static const char *const dirs[] = {"arch/x86", "block", "crypto",
					   "drivers", "fs", "init", "ipc",
					   "kernel", "lib", "mm", "net",
					   "security", "sound", "virt"};
	int ret = 0;

	/*
	 * Not KUNIT_ALL_TESTS: most suites hide their prompt behind
	 * "if !KUNIT_ALL_TESTS", and then a "# ... is not set" of the deny
	 * list would lose to their default. Every suite is named instead.
	 */
	strbuf_addstr(fragment,
		      "CONFIG_KUNIT=y\n# CONFIG_KUNIT_ALL_TESTS is not set\n");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && ret >= 0; i++) {
		char *p = xstrfmt("%s/%s", src_dir, dirs[i]);
		struct stat st;
		if (stat(p, &st) == 0)
			ret = walk(&sc, p);
		free(p);
	}
	if (ret >= 0 && !sc.all && !sc.extra)
		ret = err_set(ERR_NOTFOUND,
			      "%s: no KUnit test in its Kconfig files", src_dir);
	if (all_tests)
		*all_tests = sc.all;
	if (extra)
		*extra = sc.extra;
	if (ndenied)
		*ndenied = sc.denied;
	return ret < 0 ? ret : 0;
}
