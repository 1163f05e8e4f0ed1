/* testset.c: the parser of config/tests.conf, a table of keys per test kind. */
#include "testset.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NAME 64
#define MAX_LINE 8192

static const char *const kind_names[] = {
	[TEST_BOOT] = "boot",
	[TEST_CONSOLE] = "console",
	[TEST_GUEST] = "guest",
	[TEST_KTAP] = "ktap",
	[TEST_KSELFTEST] = "kselftest",
};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))

const char *test_kind_name(enum test_kind kind)
{
	if ((size_t)kind < NKINDS)
		return kind_names[kind];
	return "unknown";
}

struct parser {
	const char *origin;
	int line;
	struct test_def *tests;
	size_t n, alloc;
	unsigned seen; /* keys given in the current section, by bit */
	int modules_line, targets_line; /* where the section gave them */
};

static int perr(const struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int perr(const struct parser *p, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	err_set(ERR_INVALID, "%s:%d: %s", p->origin, p->line, sb.buf);
	strbuf_release(&sb);
	return ERR_INVALID;
}

/* Splits v on any of seps into owned words; empty words are dropped. */
static size_t split(const char *v, const char *seps, char ***out)
{
	size_t n = 0;

	*out = NULL;
	while (*v) {
		size_t len = strcspn(v, seps);
		if (len) {
			*out = xrealloc(*out, (n + 1) * sizeof(**out));
			(*out)[n++] = xstrndup(v, len);
		}
		v += len;
		if (*v)
			v++;
	}
	return n;
}

static void free_words(char **w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(w[i]);
	free(w);
}

static int set_kind(struct parser *p, struct test_def *t, const char *v)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (!strcmp(v, kind_names[i])) {
			t->kind = (enum test_kind)i;
			return 0;
		}
	return perr(p,
		    "test %s: unknown kind '%s' (boot, console, guest, ktap, "
		    "kselftest)",
		    t->name, v);
}

static int set_command(struct parser *p, struct test_def *t, const char *v)
{
	if (strchr(v, '\t'))
		return perr(p,
			    "test %s: command holds a tab (the guest's test "
			    "list is tab-separated)",
			    t->name);
	t->command = xstrdup(v);
	return 0;
}

static int set_timeout(struct parser *p, struct test_def *t, const char *v)
{
	char *end;
	long s;

	errno = 0;
	s = strtol(v, &end, 10);
	if (errno || end == v || *end || !isdigit((unsigned char)*v) || s < 1 ||
	    s > TESTSET_MAX_TIMEOUT)
		return perr(p,
			    "test %s: timeout must be a number of seconds from "
			    "1 to %d, not '%s'",
			    t->name, TESTSET_MAX_TIMEOUT, v);
	t->timeout = (int)s;
	return 0;
}

static int set_fail_on(struct parser *p, struct test_def *t, const char *v)
{
	t->nfail_on = split(v, "|", &t->fail_on);
	if (!t->nfail_on)
		return perr(p, "test %s: fail_on lists no substring", t->name);
	return 0;
}

static int bad_module_path(const char *m)
{
	size_t len = strlen(m);

	if (m[0] == '/' || len < 4 || strcmp(m + len - 3, ".ko"))
		return 1;
	for (const char *c = m; *c;) {
		size_t l = strcspn(c, "/");
		if (l == 0 || (l == 2 && !strncmp(c, "..", 2)) ||
		    (l == 1 && c[0] == '.'))
			return 1;
		c += l + (c[l] ? 1 : 0);
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Same guest name, other path: flat /lib/modules/<base> would mix them. */
static int same_base(const char *a, const char *b)
{
	return !strcmp(base_name(a), base_name(b)) && strcmp(a, b);
}

static int same_word(const char *a, const char *b)
{
	return !strcmp(a, b);
}

static int set_modules(struct parser *p, struct test_def *t, const char *v)
{
	p->modules_line = p->line;
	t->nmodules = split(v, " \t", &t->modules);
	for (size_t i = 0; i < t->nmodules; i++)
		if (bad_module_path(t->modules[i]))
			return perr(p,
				    "test %s: module '%s' must be a .ko path "
				    "inside the build directory",
				    t->name, t->modules[i]);
	return 0;
}

/* A target is a directory of tools/testing/selftests: a plain name. */
static int valid_target(const char *t)
{
	size_t len = strlen(t);

	if (!len || len > 40)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!islower((unsigned char)t[i]) && !isdigit((unsigned char)t[i]) &&
		    t[i] != '_' && t[i] != '-')
			return 0;
	return 1;
}

static int set_targets(struct parser *p, struct test_def *t, const char *v)
{
	p->targets_line = p->line;
	t->ntargets = split(v, " \t", &t->targets);
	for (size_t i = 0; i < t->ntargets; i++) {
		if (!valid_target(t->targets[i]))
			return perr(p,
				    "test %s: bad kselftest target '%s' (a "
				    "directory of tools/testing/selftests: "
				    "1-40 of a-z 0-9 _ -)",
				    t->name, t->targets[i]);
	}
	return 0;
}

/* Two sections that can run on one guest: neither is tied to a guest, or
 * both to the same one. */
static int same_guest(const struct test_def *a, const struct test_def *b)
{
	return !a->guest_config || !b->guest_config ||
	       !strcmp(a->guest_config, b->guest_config);
}

/*
 * The first entry of o's list (o's entries before t's i-th when o is t)
 * that same() matches with w, or NULL.
 */
static const char *in_list(const struct test_def *o, char *const *list,
			   size_t n, const struct test_def *t, size_t i,
			   const char *w,
			   int (*same)(const char *, const char *))
{
	for (size_t k = 0; k < n && !(o == t && k >= i); k++)
		if (same(list[k], w))
			return list[k];
	return NULL;
}

/*
 * What one guest runs holds a kselftest target once (its tests are named
 * by it, kselftest.TARGET.TEST) and no two modules of one name in its flat
 * /lib/modules/. The quick and the broad guest's sections may share
 * either, since never both run. Checked when the section ends: its
 * guest_config may come after its targets and modules.
 */
static int once_per_guest(struct parser *p, const struct test_def *t)
{
	for (size_t j = 0; j < p->n; j++) {
		const struct test_def *o = &p->tests[j];
		const char *w;
		if (!same_guest(o, t))
			continue;
		for (size_t i = 0; i < t->ntargets; i++) {
			if (!in_list(o, o->targets, o->ntargets, t, i,
				     t->targets[i], same_word))
				continue;
			p->line = p->targets_line;
			return perr(p,
				    "test %s: kselftest target '%s' given "
				    "twice%s%s%s",
				    t->name, t->targets[i],
				    o == t ? "" : " (also in test ",
				    o == t ? "" : o->name, o == t ? "" : ")");
		}
		for (size_t i = 0; i < t->nmodules; i++) {
			w = in_list(o, o->modules, o->nmodules, t, i,
				    t->modules[i], same_base);
			if (!w)
				continue;
			p->line = p->modules_line;
			return perr(p,
				    "test %s: module '%s' has the same name in "
				    "the guest as '%s'%s%s%s",
				    t->name, t->modules[i], w,
				    o == t ? "" : " (test ", o == t ? "" : o->name,
				    o == t ? "" : ")");
		}
	}
	return 0;
}

static int set_guest_config(struct parser *p, struct test_def *t,
			    const char *v)
{
	if (strcmp(v, "quick") && strcmp(v, "broad"))
		return perr(p, "test %s: guest_config must be quick or broad, "
			       "not '%s'",
			    t->name, v);
	t->guest_config = xstrdup(v);
	return 0;
}

static int set_description(struct parser *p, struct test_def *t, const char *v)
{
	t->description = xstrdup(v);
	return 0;
}

/* The keys, and the kinds each applies to (a bit per kind). */
#define K(kind) (1u << (kind))
#define ALL                                                                    \
	(K(TEST_BOOT) | K(TEST_CONSOLE) | K(TEST_GUEST) | K(TEST_KTAP) |       \
	 K(TEST_KSELFTEST))
static const struct key {
	const char *name;
	int (*set)(struct parser *, struct test_def *, const char *);
	unsigned kinds;
	int comment_ok; /* may end with " # comment" */
} keys[] = {
	{"kind", set_kind, ALL, 1},
	{"command", set_command, K(TEST_GUEST), 0},
	{"timeout", set_timeout, K(TEST_GUEST) | K(TEST_KSELFTEST), 1},
	{"fail_on", set_fail_on, K(TEST_CONSOLE), 0},
	{"modules", set_modules, K(TEST_GUEST), 1},
	{"targets", set_targets, K(TEST_KSELFTEST), 1},
	{"guest_config", set_guest_config, ALL, 1},
	{"description", set_description, ALL, 0},
};
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
#define KEY_BIT(k) (1u << ((k)-keys))

static int valid_name(const char *s, size_t len)
{
	if (len == 0 || len > MAX_NAME)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return 0;
	return 1;
}

/* Checks what needs the whole section: kind given, keys fit the kind. */
static int finish_test(struct parser *p)
{
	struct test_def *t;
	int saved = p->line;
	int ret = 0;

	if (!p->n)
		return 0;
	t = &p->tests[p->n - 1];
	p->line = t->line;
	if (!(p->seen & KEY_BIT(&keys[0]))) {
		ret = perr(p,
			   "test %s: no kind (boot, console, guest, ktap, "
			   "kselftest)",
			   t->name);
		goto out;
	}
	for (size_t i = 0; i < NKEYS; i++)
		if ((p->seen & KEY_BIT(&keys[i])) &&
		    !(keys[i].kinds & K(t->kind))) {
			ret = perr(p, "test %s: '%s' does not apply to kind %s",
				   t->name, keys[i].name,
				   test_kind_name(t->kind));
			goto out;
		}
	if (t->kind == TEST_GUEST && !t->command) {
		ret = perr(p, "test %s: guest test without command", t->name);
		goto out;
	}
	if (t->kind == TEST_KSELFTEST && !t->ntargets) {
		ret = perr(p, "test %s: kselftest without targets", t->name);
		goto out;
	}
	if ((ret = once_per_guest(p, t)) < 0)
		goto out;
	if ((t->kind == TEST_GUEST || t->kind == TEST_KSELFTEST) &&
	    !t->timeout)
		t->timeout = TESTSET_DEFAULT_TIMEOUT;
	if (t->kind == TEST_CONSOLE && !t->nfail_on)
		t->nfail_on = split(TESTSET_DEFAULT_FAIL_ON, "|", &t->fail_on);
out:
	p->line = saved;
	return ret;
}

static int parse_header(struct parser *p, const char *s, size_t len)
{
	const char *name;
	size_t nlen;
	int ret;

	if (len < 2 || s[len - 1] != ']')
		return perr(p, "section header without closing ']'");
	s++;
	len -= 2;
	while (len && isspace((unsigned char)*s))
		s++, len--;
	while (len && isspace((unsigned char)s[len - 1]))
		len--;
	if (len < 5 || strncmp(s, "test", 4) || !isspace((unsigned char)s[4]))
		return perr(p,
			    "unknown section '[%.*s]' (expected [test NAME])",
			    (int)len, s);
	name = s + 5;
	nlen = len - 5;
	while (nlen && isspace((unsigned char)*name))
		name++, nlen--;
	if (!valid_name(name, nlen))
		return perr(p,
			    "bad test name '%.*s' (1-%d of A-Z a-z 0-9 . _ -)",
			    (int)nlen, name, MAX_NAME);
	for (size_t i = 0; i < p->n; i++)
		if (strlen(p->tests[i].name) == nlen &&
		    !strncmp(p->tests[i].name, name, nlen))
			return perr(
				p, "test %.*s defined twice (first at line %d)",
				(int)nlen, name, p->tests[i].line);
	if ((ret = finish_test(p)) < 0)
		return ret;
	if (p->n == p->alloc) {
		p->alloc = p->alloc ? 2 * p->alloc : 8;
		p->tests = xrealloc(p->tests, p->alloc * sizeof(*p->tests));
	}
	memset(&p->tests[p->n], 0, sizeof(p->tests[p->n]));
	p->tests[p->n].name = xstrndup(name, nlen);
	p->tests[p->n].line = p->line;
	p->n++;
	p->seen = 0;
	return 0;
}

static int parse_pair(struct parser *p, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	const struct key *k = NULL;
	size_t klen;
	char *val;
	int ret;

	if (!p->n)
		return perr(p, "'%.*s' outside a [test NAME] section",
			    (int)(len > 40 ? 40 : len), s);
	if (!eq)
		return perr(p, "expected 'key = value'");
	klen = (size_t)(eq - s);
	while (klen && isspace((unsigned char)s[klen - 1]))
		klen--;
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == klen &&
		    !strncmp(keys[i].name, s, klen))
			k = &keys[i];
	if (!k)
		return perr(p, "unknown key '%.*s'", (int)klen, s);
	if (p->seen & KEY_BIT(k))
		return perr(p, "test %s: '%s' given twice",
			    p->tests[p->n - 1].name, k->name);
	p->seen |= KEY_BIT(k);
	eq++;
	len -= (size_t)(eq - s);
	while (len && isspace((unsigned char)*eq))
		eq++, len--;
	val = xstrndup(eq, len);
	if (k->comment_ok) {
		char *h = strchr(val, '#');
		if (h && (h == val || isspace((unsigned char)h[-1])))
			*h = '\0';
	}
	for (size_t l = strlen(val); l && isspace((unsigned char)val[l - 1]);)
		val[--l] = '\0';
	if (!*val && k->set != set_description)
		ret = perr(p, "test %s: empty %s", p->tests[p->n - 1].name,
			   k->name);
	else
		ret = k->set(p, &p->tests[p->n - 1], val);
	free(val);
	return ret;
}

int testset_parse(const char *buf, size_t len, const char *origin,
		  struct test_def **out, size_t *n)
{
	struct parser p = {.origin = origin ? origin : "tests"};
	size_t pos = 0;
	int ret = 0;

	*out = NULL;
	*n = 0;
	while (pos < len) {
		const char *s = buf + pos;
		const char *nl = memchr(s, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - s) : len - pos;

		pos += l + (nl ? 1 : 0);
		p.line++;
		if (l > MAX_LINE) {
			ret = perr(&p, "line longer than %d bytes", MAX_LINE);
			goto out;
		}
		if (memchr(s, '\0', l)) {
			ret = perr(&p, "NUL byte in the line");
			goto out;
		}
		while (l && isspace((unsigned char)*s))
			s++, l--;
		while (l && isspace((unsigned char)s[l - 1]))
			l--;
		if (!l || *s == '#' || *s == ';')
			continue;
		if (*s == '[')
			ret = parse_header(&p, s, l);
		else
			ret = parse_pair(&p, s, l);
		if (ret < 0)
			goto out;
	}
	if ((ret = finish_test(&p)) < 0)
		goto out;
	if (!p.n) {
		p.line = p.line ? p.line : 1;
		ret = perr(&p, "no [test NAME] section: the test set is empty");
		goto out;
	}
	*out = p.tests;
	*n = p.n;
	return 0;
out:
	testset_free(p.tests, p.n);
	return ret;
}

int testset_load(const char *path, struct test_def **out, size_t *n)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	*out = NULL;
	*n = 0;
	if (strbuf_read_file(&sb, path, 1u << 20) < 0) {
		strbuf_release(&sb);
		return access(path, F_OK) < 0 && errno == ENOENT ? ERR_NOTFOUND
								 : ERR_IO;
	}
	ret = testset_parse(sb.buf, sb.len, path, out, n);
	strbuf_release(&sb);
	return ret;
}

static void testset_free_one(struct test_def *t)
{
	free(t->name);
	free(t->command);
	free_words(t->fail_on, t->nfail_on);
	free_words(t->modules, t->nmodules);
	free_words(t->targets, t->ntargets);
	free(t->description);
	free(t->guest_config);
}

void testset_free(struct test_def *tests, size_t n)
{
	if (!tests)
		return;
	for (size_t i = 0; i < n; i++)
		testset_free_one(&tests[i]);
	free(tests);
}

const struct test_def *testset_find(const struct test_def *tests, size_t n,
				    const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(tests[i].name, name))
			return &tests[i];
	return NULL;
}

void testset_select(struct test_def *tests, size_t *n,
		    const char *const *only, size_t nonly)
{
	size_t out = 0;

	for (size_t i = 0; i < *n; i++) {
		int keep = tests[i].kind != TEST_GUEST;
		size_t len = strlen(tests[i].name);
		for (size_t k = 0; k < nonly && !keep; k++)
			keep = !strcmp(tests[i].name, only[k]) ||
			       (tests[i].kselftest &&
				!strncmp(tests[i].name, only[k], len) &&
				only[k][len] == '.');
		if (keep)
			tests[out++] = tests[i];
		else
			testset_free_one(&tests[i]);
	}
	*n = out;
}

struct test_def *testset_add_guest(struct test_def **tests, size_t *n,
				   const char *name, const char *command,
				   int timeout)
{
	struct test_def *t;

	*tests = xrealloc(*tests, (*n + 1) * sizeof(**tests));
	t = &(*tests)[(*n)++];
	memset(t, 0, sizeof(*t));
	t->name = xstrdup(name);
	t->kind = TEST_GUEST;
	t->command = xstrdup(command);
	t->timeout = timeout;
	return t;
}

void testset_for_guest(struct test_def *tests, size_t *n, const char *guest)
{
	for (size_t i = 0; guest && i < *n;)
		if (tests[i].guest_config && strcmp(tests[i].guest_config, guest))
			testset_remove(tests, n, i);
		else
			i++;
}

void testset_remove(struct test_def *tests, size_t *n, size_t i)
{
	if (i >= *n)
		return;
	testset_free_one(&tests[i]);
	memmove(&tests[i], &tests[i + 1], (*n - i - 1) * sizeof(*tests));
	(*n)--;
}
