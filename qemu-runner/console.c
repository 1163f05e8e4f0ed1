/* console.c: reads a guest's serial console into test results and a verdict. */
#include "console.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK "@@stableq "
#define MAX_LOG (64u << 20)
#define KTAP_LEVELS 8
#define EXCERPT_MAX 8192
/* KUnit prints under 2,000 cases; a flood beyond this is not a kernel's. */
#define KTAP_MAX_CASES 50000
/* A KTAP name part (suite, case, parameter) kept at most this long. */
#define KTAP_NAME_MAX 120
/* kselftest.h's exit status of a test that cannot run here. */
#define KSFT_SKIP 4
/* TAP results of one kselftest kept at most (a flood is no test's). */
#define TAP_MAX_PER_TEST 2000

/* Kernel problems that fail a run whatever the test set says. */
static const char *const problems[] = {
	"Kernel panic", "Oops",	 "BUG:",   "kernel BUG",
	"WARNING:",	"KASAN", "UBSAN:", "general protection fault",
	"Call Trace",
};

static const char *const status_names[] = {"pass", "fail", "skip", "hang"};
static const char *const verdict_names[] = {"pass", "fail", "hang"};

const char *test_status_name(enum test_status s)
{
	return (size_t)s < 4 ? status_names[s] : "unknown";
}

const char *run_verdict_name(enum run_verdict v)
{
	return (size_t)v < 3 ? verdict_names[v] : "unknown";
}

struct line {
	size_t off; /* into text */
	size_t len;
	int stamped; /* had a "[ 1.234] " printk timestamp */
};

struct guest_state {
	long begin, end; /* line indexes, -1 if not seen */
	int status;
	int timeout; /* the guest's timeout marker: seconds, or 0 */
};

struct kcase {
	char *suite, *name; /* sanitized; name NULL for a suite's own result */
	char *param;        /* a parameterised case's parameter, or NULL */
	enum test_status status;
	struct strbuf detail;
	long line;
};

struct parse {
	struct strbuf text; /* cleaned lines, each NUL-terminated */
	struct line *lines;
	size_t nlines, alines;
	int any_stamp;
	long userspace_line, done_line, last_marker;
	const char *token; /* markers must end with it; NULL: any marker */
	long cur_guest;    /* the guest test between its begin and end, or -1 */
	const struct test_def *tests;
	size_t ntests;
	struct guest_state *guest; /* by test index */
	long *console_hit; /* by test index: first offending line */
	long problem_line;
	/* KTAP */
	int ktap_active, ktap_seen;
	char *names[KTAP_LEVELS];
	long seg_start[KTAP_LEVELS];
	struct kcase *cases;
	size_t ncases, acases;
	size_t suite_first;    /* the first case after the last suite result */
	size_t pending_params; /* params at the end of cases whose case has
				* not printed its result yet */
	int ktap_overflow;     /* more than KTAP_MAX_CASES results */
	struct console_report *rep;
	size_t aresults;
};

static const char *L(const struct parse *p, size_t i)
{
	return p->text.buf + p->lines[i].off;
}

/* Drops "ESC [ ... final", "ESC x", CR and other control bytes but TAB. */
static void clean_line(struct strbuf *out, const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == 0x1b) {
			if (i + 1 < len && s[i + 1] == '[') {
				i += 2;
				while (i < len &&
				       !(s[i] >= 0x40 && s[i] <= 0x7e))
					i++;
			} else {
				i++;
			}
			continue;
		}
		if (c < 0x20 && c != '\t')
			continue;
		if (c == 0x7f)
			continue;
		strbuf_addch(out, c);
	}
}

/* Length of a leading "[    1.234567] " printk timestamp, or 0. */
static size_t stamp_len(const char *s)
{
	size_t i = 0;
	int digits = 0, dot = 0;

	if (s[i++] != '[')
		return 0;
	while (s[i] == ' ')
		i++;
	for (; s[i] && s[i] != ']'; i++) {
		if (isdigit((unsigned char)s[i]))
			digits++;
		else if (s[i] == '.' && !dot)
			dot = 1;
		else
			return 0;
	}
	if (s[i] != ']' || !digits || !dot)
		return 0;
	i++;
	if (s[i] == ' ')
		i++;
	return i;
}

static void split_lines(struct parse *p, const char *log, size_t len)
{
	struct strbuf tmp = STRBUF_INIT;
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(log + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - (log + pos)) : len - pos;
		size_t sl;

		strbuf_reset(&tmp);
		clean_line(&tmp, log + pos, l);
		pos += l + (nl ? 1 : 0);
		sl = stamp_len(tmp.buf);
		if (p->nlines == p->alines) {
			p->alines = p->alines ? 2 * p->alines : 1024;
			p->lines = xrealloc(p->lines,
					    p->alines * sizeof(*p->lines));
		}
		p->lines[p->nlines].off = p->text.len;
		p->lines[p->nlines].len = tmp.len - sl;
		p->lines[p->nlines].stamped = sl > 0;
		p->any_stamp |= sl > 0;
		p->nlines++;
		strbuf_add(&p->text, tmp.buf + sl, tmp.len - sl);
		strbuf_addch(&p->text, '\0');
	}
	strbuf_release(&tmp);
}

/* Lines [from, to] joined, at most EXCERPT_MAX bytes (the start kept). */
static char *excerpt(const struct parse *p, long from, long to)
{
	struct strbuf sb = STRBUF_INIT;

	if (from < 0)
		from = 0;
	if (to >= (long)p->nlines)
		to = (long)p->nlines - 1;
	for (long i = from; i <= to; i++) {
		if (sb.len + p->lines[i].len + 1 > EXCERPT_MAX) {
			strbuf_addstr(&sb, "[...]\n");
			break;
		}
		strbuf_add(&sb, L(p, (size_t)i), p->lines[i].len);
		strbuf_addch(&sb, '\n');
	}
	return strbuf_detach(&sb, NULL);
}

/* Head and tail of a long text, with a mark where the middle was cut. */
static void trim_middle(struct strbuf *sb, size_t max)
{
	size_t head = max / 4, tail = max - head;
	struct strbuf out = STRBUF_INIT;

	if (sb->len <= max)
		return;
	while (head && sb->buf[head - 1] != '\n' && head > max / 8)
		head--;
	strbuf_add(&out, sb->buf, head);
	strbuf_addf(&out, "[... %zu bytes cut ...]\n", sb->len - head - tail);
	strbuf_add(&out, sb->buf + sb->len - tail, tail);
	strbuf_release(sb);
	*sb = out;
}

/* "failures:\n<not ok lines>[... output ...]\n" + sb, for a long TAP output. */
static void prepend_failures(struct strbuf *sb, const struct strbuf *notok)
{
	struct strbuf out = STRBUF_INIT;

	strbuf_addstr(&out, "failures:\n");
	strbuf_addbuf(&out, notok);
	strbuf_addstr(&out, "output:\n");
	strbuf_addbuf(&out, sb);
	strbuf_release(sb);
	*sb = out;
}

static struct test_result *add_result(struct parse *p, const char *name,
				      enum test_status st)
{
	struct console_report *r = p->rep;
	struct test_result *t;

	if (r->nresults == p->aresults) {
		p->aresults = p->aresults ? 2 * p->aresults : 16;
		r->results =
			xrealloc(r->results, p->aresults * sizeof(*r->results));
	}
	t = &r->results[r->nresults++];
	t->name = xstrdup(name);
	t->status = st;
	t->detail = NULL;
	t->excerpt = NULL;
	t->not_run = 0;
	return t;
}

static long test_index(const struct parse *p, const char *name, size_t len)
{
	for (size_t i = 0; i < p->ntests; i++)
		if (strlen(p->tests[i].name) == len &&
		    !strncmp(p->tests[i].name, name, len) &&
		    p->tests[i].kind == TEST_GUEST)
			return (long)i;
	return -1;
}

/* "@@stableq begin NAME" and friends; s points after "@@stableq ". */
static void on_marker(struct parse *p, size_t i, const char *s)
{
	const char *arg;
	size_t nlen;
	long t;

	p->last_marker = (long)i;
	p->ktap_active = 0;
	if (!strncmp(s, "userspace", 9)) {
		if (p->userspace_line < 0)
			p->userspace_line = (long)i;
		return;
	}
	if (!strncmp(s, "done", 4)) {
		if (p->done_line < 0)
			p->done_line = (long)i;
		return;
	}
	if (!strncmp(s, "kernel ", 7)) {
		if (!p->rep->kernel_release) {
			arg = s + 7;
			p->rep->kernel_release =
				xstrndup(arg, strcspn(arg, " \t"));
		}
		return;
	}
	if (!strncmp(s, "begin ", 6))
		arg = s + 6;
	else if (!strncmp(s, "end ", 4))
		arg = s + 4;
	else if (!strncmp(s, "timeout ", 8))
		arg = s + 8;
	else
		return;
	nlen = strcspn(arg, " \t");
	t = test_index(p, arg, nlen);
	if (t < 0)
		return;
	struct guest_state *g = &p->guest[t];
	const char *num = arg + nlen;
	while (*num == ' ' || *num == '\t')
		num++;
	if (s[0] == 'b') {
		if (g->begin < 0) {
			g->begin = (long)i;
			p->cur_guest = t;
		}
	} else if (s[0] == 'e') {
		if (p->cur_guest == t)
			p->cur_guest = -1;
		if (g->begin >= 0 && g->end < 0) {
			g->end = (long)i;
			g->status =
				isdigit((unsigned char)*num) ? atoi(num) : 255;
		}
	} else {
		g->timeout = isdigit((unsigned char)*num) ? atoi(num) : 1;
		if (g->timeout <= 0)
			g->timeout = 1;
	}
}

static struct kcase *add_case(struct parse *p)
{
	struct kcase *c;

	if (p->ncases >= KTAP_MAX_CASES) {
		p->ktap_overflow = 1;
		return NULL;
	}
	if (p->ncases == p->acases) {
		p->acases = p->acases ? 2 * p->acases : 64;
		p->cases = xrealloc(p->cases, p->acases * sizeof(*p->cases));
	}
	c = &p->cases[p->ncases++];
	memset(c, 0, sizeof(*c));
	strbuf_init(&c->detail, 0);
	return c;
}

/*
 * A KTAP name part as a result name part: at most KTAP_NAME_MAX bytes of
 * [A-Za-z0-9_+:=,-], anything else '_' ('.' too where dots would let
 * "suite.case" pairs collide; a parameter, the last part, keeps its dots).
 * Names travel to the store, mails, pages and KCIDB ids.
 */
static char *ktap_name(const char *s, size_t n, int keep_dots)
{
	char *out;

	if (n > KTAP_NAME_MAX)
		n = KTAP_NAME_MAX;
	if (!n)
		return xstrdup("_");
	out = xstrndup(s, n);
	for (char *c = out; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("_+:=,-", *c) &&
		    !(keep_dots && *c == '.'))
			*c = '_';
	return out;
}

/* "ok 3 name # SKIP why" -> status, name, directive. 0 if not a result. */
static int parse_result(const char *s, enum test_status *st, const char **name,
			size_t *nlen, const char **why)
{
	const char *hash;

	if (!strncmp(s, "ok ", 3)) {
		*st = TEST_PASS;
		s += 3;
	} else if (!strncmp(s, "not ok ", 7)) {
		*st = TEST_FAIL;
		s += 7;
	} else {
		return 0;
	}
	if (!isdigit((unsigned char)*s))
		return 0;
	while (isdigit((unsigned char)*s))
		s++;
	while (*s == ' ')
		s++;
	if (*s == '-' && s[1] == ' ')
		s += 2;
	*name = s;
	*why = "";
	hash = strstr(s, " # ");
	*nlen = hash ? (size_t)(hash - s) : strlen(s);
	while (*nlen && s[*nlen - 1] == ' ')
		(*nlen)--;
	if (hash) {
		const char *d = hash + 3;
		if (!strncasecmp(d, "SKIP", 4)) {
			*st = TEST_SKIP;
			d += 4;
			while (*d == ' ')
				d++;
			*why = d;
		}
	}
	return 1;
}

static void set_name(struct parse *p, int level, const char *s, size_t n)
{
	for (int l = level; l < KTAP_LEVELS; l++) {
		free(p->names[l]);
		p->names[l] = NULL;
	}
	if (s)
		p->names[level] = xstrndup(s, n);
}

/* The failing case's diagnostics: the lines since its segment began. */
static void case_detail(struct parse *p, struct kcase *c, int level, size_t i,
			enum test_status st, const char *why)
{
	if (st == TEST_SKIP) {
		strbuf_addstr(&c->detail, why);
	} else if (st == TEST_FAIL) {
		for (long k = p->seg_start[level]; k < (long)i; k++) {
			strbuf_add(&c->detail, L(p, (size_t)k),
				   p->lines[k].len);
			strbuf_addch(&c->detail, '\n');
		}
		trim_middle(&c->detail, CONSOLE_DETAIL_MAX);
		strbuf_rtrim(&c->detail);
		if (!c->detail.len)
			strbuf_addstr(&c->detail, "not ok");
	}
}

/* Params printed before their case's result get the case's name. */
static void name_params(struct parse *p, const char *suite, const char *name)
{
	for (size_t k = p->ncases - p->pending_params; k < p->ncases; k++) {
		free(p->cases[k].suite);
		free(p->cases[k].name);
		p->cases[k].suite = xstrdup(suite);
		p->cases[k].name = xstrdup(name);
	}
	p->pending_params = 0;
}

/*
 * KTAP as KUnit prints it at boot: "KTAP version 1" and a plan per level,
 * suites at level 0 ("ok 1 suite"), their cases at level 1 (4 spaces,
 * "# Subtest: suite" first) and a parameterised case's parameters at level
 * 2 ("# Subtest: case", "ok 1 param", then the case's own "ok N case" at
 * level 1). Built-in KUnit runs before /init; after "@@stableq userspace"
 * KTAP is read only while a guest test that loads modules runs (a KUnit
 * module, its KTAP shown with stableq.verbose): a program's output is never
 * read as KUnit's, so a test cannot print another test's result.
 */
static void on_ktap(struct parse *p, size_t i)
{
	const char *s = L(p, i);
	size_t indent = strspn(s, " ");
	int level = (int)(indent / 4);
	enum test_status st;
	const char *name, *why;
	size_t nlen;

	if (p->userspace_line >= 0 &&
	    (p->cur_guest < 0 || !p->tests[p->cur_guest].nmodules))
		return;
	s += indent;
	if (!strncmp(s, "KTAP version ", 13) ||
	    !strncmp(s, "TAP version ", 12)) {
		p->ktap_active = p->ktap_seen = 1;
		if (level < KTAP_LEVELS) {
			set_name(p, level, NULL, 0);
			p->seg_start[level] = (long)i + 1;
		}
		return;
	}
	if (!p->ktap_active || level >= KTAP_LEVELS)
		return;
	if (!strncmp(s, "# Subtest: ", 11)) {
		name = s + 11;
		set_name(p, level, name, strlen(name));
		p->seg_start[level] = (long)i + 1;
		return;
	}
	if (!strncmp(s, "1..", 3)) {
		/* the plan is no case's diagnostic */
		p->seg_start[level] = (long)i + 1;
		return;
	}
	if (!parse_result(s, &st, &name, &nlen, &why))
		return;
	if (level == 2) {
		struct kcase *c = add_case(p);
		if (c) {
			const char *cn = p->names[2] ? p->names[2] : "unknown";
			c->suite = ktap_name(p->names[1] ? p->names[1]
							 : "unknown",
					     strlen(p->names[1] ? p->names[1]
								: "unknown"),
					     0);
			c->name = ktap_name(cn, strlen(cn), 0);
			c->param = ktap_name(name, nlen, 1);
			c->status = st;
			c->line = (long)i;
			case_detail(p, c, 2, i, st, why);
			p->pending_params++;
		}
		p->seg_start[2] = (long)i + 1;
	} else if (level == 1) {
		char *suite = ktap_name(p->names[1] ? p->names[1] : "unknown",
					strlen(p->names[1] ? p->names[1]
							   : "unknown"),
					0);
		char *cname = ktap_name(name, nlen, 0);
		name_params(p, suite, cname);
		struct kcase *c = add_case(p);
		if (c) {
			c->suite = suite;
			c->name = cname;
			c->status = st;
			c->line = (long)i;
			case_detail(p, c, 1, i, st, why);
		} else {
			free(suite);
			free(cname);
		}
		p->seg_start[1] = (long)i + 1;
		for (int l = 2; l < KTAP_LEVELS; l++)
			set_name(p, l, NULL, 0);
	} else if (level == 0) {
		/* A failing suite with no failing case (its init failed). */
		char *suite = ktap_name(name, nlen, 0);
		int failed_case = 0;
		p->pending_params = 0; /* params of no case: named already */
		/* the suite's cases came since the last suite's result */
		for (size_t k = p->suite_first; k < p->ncases; k++)
			if (p->cases[k].status == TEST_FAIL &&
			    !strcmp(p->cases[k].suite, suite))
				failed_case = 1;
		if (st == TEST_FAIL && !failed_case) {
			struct kcase *c = add_case(p);
			if (c) {
				c->suite = suite;
				suite = NULL;
				c->status = TEST_FAIL;
				c->line = (long)i;
				strbuf_addstr(&c->detail,
					      "the suite is not ok");
			}
		}
		free(suite);
		p->suite_first = p->ncases;
		set_name(p, 1, NULL, 0);
		p->seg_start[0] = p->seg_start[1] = (long)i + 1;
	}
	/* deeper levels are no KUnit's */
}

/*
 * The marker on line s, without "@@stableq " and the token, or NULL (caller
 * frees). /init's echo ends its line, so the last "@@stableq " of a line is
 * the one to read: text a test printed without a newline comes before it.
 * With a token, a marker counts only if it ends with " TOKEN": a test or a
 * kernel message cannot print one (the guest deletes the token file before
 * any test runs).
 */
static char *marker(const struct parse *p, const char *s)
{
	const char *m = NULL, *k = s;
	size_t len, tl;

	while ((k = strstr(k, MARK)) != NULL)
		m = k++;
	if (!m)
		return NULL;
	m += strlen(MARK);
	len = strlen(m);
	while (len && (m[len - 1] == ' ' || m[len - 1] == '\t'))
		len--;
	if (!p->token)
		return xstrndup(m, len);
	tl = strlen(p->token);
	if (len < tl + 2 || m[len - tl - 1] != ' ' ||
	    memcmp(m + len - tl, p->token, tl))
		return NULL;
	return xstrndup(m, len - tl - 1);
}

static int is_cmdline(const char *s)
{
	return !strncmp(s, "Command line:", 13) ||
	       !strncmp(s, "Kernel command line:", 20);
}

static void scan(struct parse *p)
{
	for (size_t i = 0; i < p->nlines; i++) {
		const char *s = L(p, i);
		char *m = marker(p, s);

		if (m) {
			on_marker(p, i, m);
			free(m);
			continue;
		}
		on_ktap(p, i);
		if (is_cmdline(s))
			continue;
		/* With timestamps, only the kernel's own lines count. */
		if (p->problem_line < 0 &&
		    (!p->any_stamp || p->lines[i].stamped))
			for (size_t k = 0;
			     k < sizeof(problems) / sizeof(problems[0]); k++)
				if (strstr(s, problems[k])) {
					p->problem_line = (long)i;
					break;
				}
		for (size_t t = 0; t < p->ntests; t++) {
			const struct test_def *d = &p->tests[t];
			if (d->kind != TEST_CONSOLE || p->console_hit[t] >= 0)
				continue;
			for (size_t k = 0; k < d->nfail_on; k++)
				if (strstr(s, d->fail_on[k])) {
					p->console_hit[t] = (long)i;
					break;
				}
		}
	}
}

static void eval_guest(struct parse *p, size_t t, struct test_result *r)
{
	const struct guest_state *g = &p->guest[t];
	struct strbuf out = STRBUF_INIT, notok = STRBUF_INIT;
	long last;

	if (g->begin < 0) {
		r->status = TEST_FAIL;
		if (p->done_line >= 0) {
			r->detail = xstrdup("never started, although the guest "
					    "finished its list");
			return;
		}
		r->not_run = 1;
		if (p->userspace_line < 0)
			r->detail = xstrdup("not run: the guest never reached "
					    "userspace");
		else
			r->detail = xstrdup(p->rep->killed
						    ? "not run: the guest was "
						      "killed at its deadline "
						      "before this test"
						    : "not run: the guest "
						      "stopped before this "
						      "test");
		return;
	}
	last = g->end >= 0 ? g->end : (long)p->nlines;
	for (long k = g->begin + 1; k < last; k++) {
		const char *s = L(p, (size_t)k);
		strbuf_add(&out, s, p->lines[k].len);
		strbuf_addch(&out, '\n');
		/* TAP output: its failures must survive the trimming */
		s += strspn(s, " ");
		if (!strncmp(s, "not ok ", 7) &&
		    notok.len < CONSOLE_DETAIL_MAX / 2)
			strbuf_addf(&notok, "%s\n", s);
	}
	if (out.len > CONSOLE_DETAIL_MAX && notok.len) {
		trim_middle(&out, CONSOLE_DETAIL_MAX - notok.len);
		prepend_failures(&out, &notok);
	} else {
		trim_middle(&out, CONSOLE_DETAIL_MAX);
	}
	if (g->end >= 0 && g->status == 0 && !g->timeout) {
		r->status = TEST_PASS;
		r->detail = xstrdup("");
		strbuf_release(&out);
		strbuf_release(&notok);
		return;
	}
	struct strbuf d = STRBUF_INIT;
	if (p->tests[t].kselftest && g->end >= 0 && !g->timeout &&
	    g->status == KSFT_SKIP) {
		/* kselftest.h's KSFT_SKIP: the test says it cannot run here */
		r->status = TEST_SKIP;
		strbuf_addbuf(&d, &out);
		strbuf_rtrim(&d);
		r->detail = strbuf_detach(&d, NULL);
		strbuf_release(&out);
		strbuf_release(&notok);
		return;
	}
	if (g->timeout) {
		r->status = TEST_HANG;
		strbuf_addf(&d,
			    "killed by the guest after its timeout of %d s\n",
			    g->timeout);
	} else if (g->end >= 0) {
		r->status = TEST_FAIL;
		strbuf_addf(&d, "exit status %d\n", g->status);
	} else if (p->rep->killed) {
		r->status = TEST_HANG;
		strbuf_addstr(&d, "did not finish: the guest was killed at its "
				  "deadline\n");
	} else {
		r->status = TEST_FAIL;
		strbuf_addstr(&d, "did not finish: the guest stopped during "
				  "it\n");
	}
	strbuf_addbuf(&d, &out);
	strbuf_rtrim(&d);
	r->detail = strbuf_detach(&d, NULL);
	r->excerpt = excerpt(p, g->begin, g->end >= 0 ? g->end : last - 1);
	strbuf_release(&out);
	strbuf_release(&notok);
}

static void add_case_results(struct parse *p);

/*
 * A kselftest's own TAP: each "ok N name" / "not ok N name [# SKIP why]" at
 * the start of a line between its begin and end markers is a result
 * "TEST.NAME" (the name made safe, dots included, so it cannot reach
 * another test's names). Only lines of its own run count: another test
 * cannot print them (the markers carry the token), and a name printed twice
 * keeps the worse status.
 */
static void add_tap_results(struct parse *p, size_t t)
{
	const struct guest_state *g = &p->guest[t];
	long last = g->end >= 0 ? g->end : (long)p->nlines;
	size_t first = p->rep->nresults, count = 0;

	if (g->begin < 0)
		return;
	for (long k = g->begin + 1; k < last && count < TAP_MAX_PER_TEST;
	     k++) {
		const char *s = L(p, (size_t)k), *name, *why;
		enum test_status st;
		size_t nlen;
		struct test_result *r = NULL;

		/* a "[ 1.234] " stamp: a kernel message, not the test's */
		if (p->lines[k].stamped ||
		    !parse_result(s, &st, &name, &nlen, &why))
			continue;
		char *sub = ktap_name(name, nlen, 0);
		char *full = xstrfmt("%s.%s", p->tests[t].name, sub);
		free(sub);
		for (size_t i = first; i < p->rep->nresults && !r; i++)
			if (!strcmp(p->rep->results[i].name, full))
				r = &p->rep->results[i];
		if (r &&
		    test_status_rank(st) <= test_status_rank(r->status)) {
			free(full);
			continue;
		}
		if (!r) {
			r = add_result(p, full, st);
			count++;
		} else {
			r->status = st;
			free(r->detail);
			free(r->excerpt);
			r->excerpt = NULL;
		}
		free(full);
		r->detail = st == TEST_SKIP ? xstrdup(why)
			    : st == TEST_PASS ? xstrdup("")
					      : xstrdup(s);
		if (st == TEST_FAIL)
			r->excerpt = excerpt(p, k - 20 > g->begin ? k - 20
								   : g->begin + 1,
					     k);
	}
}

static void eval_ktap(struct parse *p, struct test_result *r, int add_cases)
{
	size_t failed = 0, total = p->ncases;
	struct strbuf d = STRBUF_INIT;
	long first_fail = -1;

	for (size_t k = 0; k < p->ncases; k++)
		if (p->cases[k].status == TEST_FAIL) {
			if (!failed++)
				first_fail = p->cases[k].line;
		}
	if (!p->ktap_seen || !total) {
		r->status = TEST_FAIL;
		r->detail = xstrdup("no KTAP results on the console (is KUnit "
				    "built in?)");
	} else if (p->ktap_overflow) {
		r->status = TEST_FAIL;
		r->detail = xstrfmt("more than %d KTAP results on the console:"
				    " the rest were not read",
				    KTAP_MAX_CASES);
	} else if (failed) {
		r->status = TEST_FAIL;
		strbuf_addf(&d, "%zu of %zu KUnit cases not ok:", failed,
			    total);
		for (size_t k = 0; k < p->ncases; k++)
			if (p->cases[k].status == TEST_FAIL && d.len < 1024)
				strbuf_addf(&d, " kunit.%s%s%s%s%s",
					    p->cases[k].suite,
					    p->cases[k].name ? "." : "",
					    p->cases[k].name ? p->cases[k].name
							     : "",
					    p->cases[k].param ? "." : "",
					    p->cases[k].param ? p->cases[k].param
							      : "");
		r->detail = strbuf_detach(&d, NULL);
		r->excerpt = excerpt(p, first_fail - 20, first_fail + 2);
	} else {
		strbuf_addf(&d, "%zu KUnit cases ok", total);
		r->detail = strbuf_detach(&d, NULL);
	}
	if (!add_cases)
		return;
	add_case_results(p);
}

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int test_status_rank(enum test_status s)
{
	return s == TEST_HANG ? 3 : s == TEST_FAIL ? 2 : s == TEST_PASS ? 1 : 0;
}

/*
 * Each case a result: "kunit.SUITE.CASE", a parameter "kunit.SUITE.CASE.
 * PARAM", a suite that failed without a failing case "kunit.SUITE". A name
 * printed twice is one result holding the worse status, so a line that
 * repeats a case's name cannot turn its failure into a pass.
 */
static void add_case_results(struct parse *p)
{
	size_t nslots = 64;
	size_t *slots;

	while (nslots < 2 * p->ncases)
		nslots *= 2;
	slots = xcalloc(nslots, sizeof(*slots));
	for (size_t k = 0; k < p->ncases; k++) {
		struct kcase *c = &p->cases[k];
		char *n = c->param ? xstrfmt("kunit.%s.%s.%s", c->suite,
					     c->name, c->param)
			  : c->name ? xstrfmt("kunit.%s.%s", c->suite, c->name)
				    : xstrfmt("kunit.%s", c->suite);
		size_t h = (size_t)name_hash(n) & (nslots - 1);
		struct test_result *cr = NULL;

		for (; slots[h]; h = (h + 1) & (nslots - 1))
			if (!strcmp(p->rep->results[slots[h] - 1].name, n)) {
				cr = &p->rep->results[slots[h] - 1];
				break;
			}
		if (cr) {
			if (test_status_rank(c->status) >
			    test_status_rank(cr->status)) {
				cr->status = c->status;
				free(cr->detail);
				free(cr->excerpt);
				cr->excerpt = NULL;
				cr->detail = strbuf_detach(&c->detail, NULL);
				if (c->status == TEST_FAIL)
					cr->excerpt = excerpt(p, c->line - 20,
							      c->line);
			}
			free(n);
			continue;
		}
		cr = add_result(p, n, c->status);
		slots[h] = p->rep->nresults;
		free(n);
		cr->detail = strbuf_detach(&c->detail, NULL);
		if (c->status == TEST_FAIL)
			cr->excerpt = excerpt(p, c->line - 20, c->line);
	}
	free(slots);
}

static char *quote_line(const struct parse *p, long i)
{
	return xstrfmt("console line %ld: %s", i + 1, L(p, (size_t)i));
}

/*
 * The console ended (the guest stopped or was killed, no "done") inside a
 * KUnit suite: the suite is a result of its own, "kunit.SUITE", failed (or
 * hung) with why, so the suite that took the guest down is named.
 */
static void open_suite(struct parse *p)
{
	struct kcase *c;

	if (p->done_line >= 0 || !p->ktap_active || !p->names[1] ||
	    !(c = add_case(p)))
		return;
	c->suite = ktap_name(p->names[1], strlen(p->names[1]), 0);
	c->status = p->rep->killed ? TEST_HANG : TEST_FAIL;
	c->line = (long)p->nlines - 1;
	strbuf_addstr(&c->detail,
		      p->rep->killed ? "did not finish: the guest was killed "
				       "at its deadline during this suite"
				     : "did not finish: the guest stopped "
				       "during this suite");
}

static void evaluate(struct parse *p)
{
	struct console_report *r = p->rep;
	int cases_added = 0, console_failed = 0;

	open_suite(p);

	for (size_t t = 0; t < p->ntests; t++) {
		const struct test_def *d = &p->tests[t];
		struct test_result *res = add_result(p, d->name, TEST_PASS);
		switch (d->kind) {
		case TEST_BOOT:
			if (p->userspace_line >= 0) {
				res->detail = xstrdup("");
				break;
			}
			res->status = TEST_FAIL;
			res->detail = xstrdup(
				p->nlines ? "no \"@@stableq userspace\": the "
					    "guest never reached /init"
					  : "the console is empty");
			res->excerpt = excerpt(p, (long)p->nlines - 30,
					       (long)p->nlines - 1);
			break;
		case TEST_CONSOLE:
			if (p->console_hit[t] < 0) {
				res->detail = xstrdup("");
				break;
			}
			res->status = TEST_FAIL;
			console_failed = 1;
			res->detail = quote_line(p, p->console_hit[t]);
			res->excerpt = excerpt(p, p->console_hit[t] - 5,
					       p->console_hit[t] + 30);
			break;
		case TEST_GUEST:
			eval_guest(p, t, res);
			if (d->kselftest)
				add_tap_results(p, t);
			break;
		case TEST_KSELFTEST:
			/* the runner expands it; unexpanded, nothing ran */
			res->status = TEST_SKIP;
			res->detail = xstrdup("kselftests not built for this "
					      "boot");
			break;
		case TEST_KTAP:
			eval_ktap(p, res, !cases_added);
			cases_added = 1;
			break;
		}
	}
	if (p->problem_line >= 0) {
		r->problem = xstrdup(L(p, (size_t)p->problem_line));
		if (!console_failed) {
			struct test_result *res =
				add_result(p, "kernel-log", TEST_FAIL);
			res->detail = quote_line(p, p->problem_line);
			res->excerpt = excerpt(p, p->problem_line - 5,
					       p->problem_line + 30);
		}
	}
}

static void decide(struct parse *p)
{
	struct console_report *r = p->rep;
	const struct test_result *bad = NULL;

	r->userspace = p->userspace_line >= 0;
	r->done = p->done_line >= 0;
	if (!r->killed && !r->done && p->nlines) {
		for (size_t t = 0; t < p->ntests && !r->stopped_in; t++)
			if (p->guest[t].begin >= 0 && p->guest[t].end < 0)
				r->stopped_in = xstrdup(p->tests[t].name);
		r->stopped_in_kunit = !r->userspace && p->ktap_seen;
	}
	for (size_t i = 0; i < r->nresults && !bad; i++)
		if (r->results[i].status == TEST_FAIL ||
		    r->results[i].status == TEST_HANG)
			bad = &r->results[i];
	if (r->killed && !r->done) {
		r->verdict = VERDICT_HANG;
		for (size_t t = 0; t < p->ntests; t++)
			if (p->guest[t].begin >= 0 && p->guest[t].end < 0) {
				r->reason = xstrfmt("killed at the deadline "
						    "during test %s",
						    p->tests[t].name);
				return;
			}
		if (!p->nlines)
			r->reason = xstrdup("killed at the deadline: the guest "
					    "printed nothing");
		else if (p->userspace_line < 0)
			r->reason = xstrdup("killed at the deadline before "
					    "userspace");
		else
			r->reason = xstrfmt("killed at the deadline after: %s",
					    L(p, (size_t)p->last_marker));
		return;
	}
	if (bad) {
		/* the first line, and the output's first line after a status */
		const char *d = bad->detail ? bad->detail : "";
		size_t l1 = strcspn(d, "\n");
		const char *d2 = d[l1] ? d + l1 + 1 : "";
		size_t l2 = bad->status == TEST_HANG ||
					    !strncmp(d, "exit status", 11)
				    ? strcspn(d2, "\n")
				    : 0;
		r->verdict = VERDICT_FAIL;
		r->reason =
			xstrfmt("%s %s: %.*s%s%.*s", bad->name,
				bad->status == TEST_HANG ? "hung" : "failed",
				(int)(l1 > 300 ? 300 : l1), d, l2 ? "; " : "",
				(int)(l2 > 300 ? 300 : l2), d2);
		return;
	}
	if (r->problem) {
		r->verdict = VERDICT_FAIL;
		r->reason = xstrfmt("kernel problem: %s", r->problem);
		return;
	}
	if (!r->done) {
		r->verdict = VERDICT_FAIL;
		r->reason = xstrdup("the guest ended without \"@@stableq "
				    "done\"");
		return;
	}
	r->verdict = VERDICT_PASS;
	r->reason = xstrdup("");
}

int console_parse(const char *log, size_t len, const struct test_def *tests,
		  size_t n, int killed, struct console_report *rep)
{
	return console_parse_marked(log, len, tests, n, killed, NULL, rep);
}

int console_parse_marked(const char *log, size_t len,
			 const struct test_def *tests, size_t n, int killed,
			 const char *token, struct console_report *rep)
{
	struct parse p;

	if (!rep || (!log && len) || (!tests && n))
		return err_set(ERR_INVALID, "console_parse: NULL argument");
	memset(rep, 0, sizeof(*rep));
	memset(&p, 0, sizeof(p));
	strbuf_init(&p.text, len + 1);
	p.tests = tests;
	p.ntests = n;
	p.token = token && *token ? token : NULL;
	p.rep = rep;
	p.userspace_line = p.done_line = p.last_marker = p.problem_line = -1;
	p.cur_guest = -1;
	p.guest = xcalloc(n ? n : 1, sizeof(*p.guest));
	p.console_hit = xcalloc(n ? n : 1, sizeof(*p.console_hit));
	for (size_t i = 0; i < n; i++) {
		p.guest[i].begin = p.guest[i].end = -1;
		p.console_hit[i] = -1;
	}
	for (int l = 0; l < KTAP_LEVELS; l++)
		p.seg_start[l] = 0;
	rep->killed = killed;

	split_lines(&p, log ? log : "", len);
	scan(&p);
	evaluate(&p);
	decide(&p);

	for (size_t k = 0; k < p.ncases; k++) {
		free(p.cases[k].suite);
		free(p.cases[k].name);
		free(p.cases[k].param);
		strbuf_release(&p.cases[k].detail);
	}
	free(p.cases);
	for (int l = 0; l < KTAP_LEVELS; l++)
		free(p.names[l]);
	free(p.guest);
	free(p.console_hit);
	free(p.lines);
	strbuf_release(&p.text);
	return 0;
}

int console_parse_file(const char *path, const struct test_def *tests, size_t n,
		       int killed, const char *token,
		       struct console_report *rep)
{
	struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "%s: cannot open: %s", path, strerror(errno));
	/* a runaway guest: only the tail is read, its end says how it ended */
	if (fstat(fd, &st) == 0 && st.st_size > (off_t)MAX_LOG)
		lseek(fd, st.st_size - (off_t)MAX_LOG, SEEK_SET);
	if (strbuf_read_fd(&sb, fd, MAX_LOG) < 0) {
		ret = err_set(ERR_IO, "%s: cannot read: %s", path,
			      strerror(errno));
		close(fd);
		strbuf_release(&sb);
		return ret;
	}
	close(fd);
	ret = console_parse_marked(sb.buf, sb.len, tests, n, killed, token,
				   rep);
	strbuf_release(&sb);
	return ret;
}

void console_report_release(struct console_report *rep)
{
	if (!rep)
		return;
	for (size_t i = 0; i < rep->nresults; i++) {
		free(rep->results[i].name);
		free(rep->results[i].detail);
		free(rep->results[i].excerpt);
	}
	free(rep->results);
	free(rep->kernel_release);
	free(rep->problem);
	free(rep->reason);
	free(rep->stopped_in);
	memset(rep, 0, sizeof(*rep));
}

void console_report_add(struct console_report *rep, const char *name,
			enum test_status status, const char *detail)
{
	struct test_result *t;

	rep->results = xrealloc(rep->results,
				(rep->nresults + 1) * sizeof(*rep->results));
	t = &rep->results[rep->nresults++];
	t->name = xstrdup(name);
	t->status = status;
	t->detail = xstrdup(detail ? detail : "");
	t->excerpt = NULL;
	t->not_run = 0;
	if (status != TEST_FAIL || rep->verdict != VERDICT_PASS)
		return;
	rep->verdict = VERDICT_FAIL;
	free(rep->reason);
	rep->reason = xstrfmt("%s failed: %.*s", name,
			      (int)strcspn(t->detail, "\n"), t->detail);
}
