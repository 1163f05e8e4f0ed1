/* stable.c: does a stable annotation ("5.10+", "3.3.x") cover a kernel version? */
/*
 * Documentation/process/stable-kernel-rules.rst: "# 3.3.x" means every
 * stable tree starting with that version, so a bare version is a lower
 * bound, as "3.3+" is; "only" and ranges ("5.4 - 6.1") bound it.
 */
#include "patch.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

struct kver {
	long v[3];
	int n; /* components given: 1..3 (a ".x" wildcard is not counted) */
};

static const char *skip_sp(const char *s, const char *end)
{
	while (s < end && isspace((unsigned char)*s))
		s++;
	return s;
}

/* "v6.1", "6.1.x", "5.10.192", "6.1.y": returns the end, or NULL. */
static const char *parse_kver(const char *s, const char *end, struct kver *k)
{
	k->n = 0;
	k->v[0] = k->v[1] = k->v[2] = 0;
	if (s < end && (*s == 'v' || *s == 'V'))
		s++;
	while (s < end && k->n < 3 && isdigit((unsigned char)*s)) {
		long x = 0;
		while (s < end && isdigit((unsigned char)*s)) {
			x = x * 10 + (*s++ - '0');
			if (x > 100000)
				return NULL;
		}
		k->v[k->n++] = x;
		if (s + 1 < end && *s == '.' && isdigit((unsigned char)s[1]))
			s++;
		else
			break;
	}
	if (!k->n)
		return NULL;
	if (s + 1 < end && *s == '.' && s[1] && strchr("xXyY*", s[1]))
		s += 2;
	return s;
}

/* Compares the first n components. */
static int kcmp(const struct kver *a, const struct kver *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a->v[i] != b->v[i])
			return a->v[i] < b->v[i] ? -1 : 1;
	return 0;
}

static int min2(int a, int b)
{
	return a < b ? a : b;
}

static int has_word(const char *s, const char *end, const char *w)
{
	size_t k = strlen(w);
	return (size_t)(end - s) >= k && !strncasecmp(s, w, k);
}

/* One item of the annotation: 1 / 0, or -1 if it cannot be read. */
static int covers_one(const char *s, const char *end, const struct kver *v)
{
	struct kver a, b;
	int plus = 0, only = 0;

	s = skip_sp(s, end);
	if (has_word(s, end, ">=")) {
		plus = 1;
		s = skip_sp(s + 2, end);
	}
	if (!(s = parse_kver(s, end, &a)))
		return -1;
	s = skip_sp(s, end);
	if (s < end && *s == '+') {
		plus = 1;
		s = skip_sp(s + 1, end);
	} else if (has_word(s, end, "and later") ||
		   has_word(s, end, "and newer") ||
		   has_word(s, end, "or later") ||
		   has_word(s, end, "or newer")) {
		plus = 1;
		s = end;
	} else if (s < end && *s == '-' && !plus) {
		s = skip_sp(s + 1, end);
		if (!(s = parse_kver(s, end, &b)))
			return -1;
		s = skip_sp(s, end);
		if (s != end)
			return -1;
		/* a lower bound with a patch level counts it; the upper
		 * bound is a whole series unless it names a patch level */
		if (kcmp(v, &a, a.n) < 0)
			return 0;
		int c = kcmp(v, &b, min2(b.n, 2));
		if (c > 0)
			return 0;
		if (c == 0 && b.n == 3 && v->v[2] > b.v[2])
			return 0;
		return 1;
	}
	if (has_word(s, end, "only")) {
		only = 1;
		s = skip_sp(s + 4, end);
	}
	if (s != end)
		return -1;
	if (only)
		return kcmp(v, &a, min2(a.n, 2)) == 0;
	/* "5.15.x", "5.15", "5.15+": this tree and every later one */
	return kcmp(v, &a, a.n) >= 0;
}

int stable_version_covers(const char *annotation, const char *version)
{
	struct kver v;
	const char *s, *end, *ve;
	int unreadable = 0;

	if (!annotation || !version)
		return -1;
	ve = version + strlen(version);
	if (!parse_kver(skip_sp(version, ve), ve, &v) || v.n < 2)
		return -1;
	s = annotation;
	end = s + strlen(s);
	if (skip_sp(s, end) == end)
		return -1;
	while (s < end) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *ie = comma ? comma : end;
		int r = covers_one(s, ie, &v);
		if (r > 0)
			return 1;
		if (r < 0)
			unreadable = 1;
		s = comma ? comma + 1 : end;
	}
	return unreadable ? -1 : 0;
}

int stable_cc_covers(const char *annotation, const char *version)
{
	const char *s = annotation;

	while (s && isspace((unsigned char)*s))
		s++;
	if (!s || !*s) /* an unversioned Cc: stable: every applicable tree */
		return version ? 1 : -1;
	return stable_version_covers(annotation, version);
}
