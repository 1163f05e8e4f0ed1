/* thread.c: the series in a set of mails: roots by In-Reply-To, n/m order, rerolls. */
#include "thread.h"
#include "strbuf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int thread_version(const char *prefix)
{
	const char *p = prefix;

	while (p && *p) {
		size_t n = strcspn(p, " \t");
		if (n >= 2 && n <= 4 && (p[0] == 'v' || p[0] == 'V') &&
		    strspn(p + 1, "0123456789") == n - 1) {
			int v = atoi(p + 1);
			return v > 0 ? v : 1;
		}
		p += n;
		p += strspn(p, " \t");
	}
	return 1;
}

static int is_cover(const struct patch *p)
{
	return !p->diff && p->series_part == 0 && p->series_total > 0 &&
	       !p->reply;
}

static int in_series(const struct patch *p)
{
	return p->diff || is_cover(p);
}

/* Who sent it: the mail's From:, not the author an in-body From: names. */
static const char *sender(const struct patch *p)
{
	return p->sender_email ? p->sender_email : p->author_email;
}

static const char *author_of(const struct patch *p)
{
	return sender(p) ? sender(p) : "";
}

static int same_author(const struct patch *a, const struct patch *b)
{
	if (!sender(a) || !sender(b))
		return !sender(a) && !sender(b);
	return !strcasecmp(sender(a), sender(b));
}

/* Message-Ids sorted, for finding a parent in O(log n). */
struct byid {
	const char *id;
	size_t i;
};

static int byid_cmp(const void *a, const void *b)
{
	const struct byid *x = a, *y = b;
	int c = strcmp(x->id, y->id);
	return c ? c : (x->i < y->i ? -1 : x->i > y->i);
}

static size_t find_id(const struct byid *v, size_t n, const char *id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].id, id);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the first message with that id: a second delivery is a copy */
	return lo < n && !strcmp(v[lo].id, id) ? v[lo].i : THREAD_NONE;
}

/* The message a series member hangs from, or THREAD_NONE when it is a root. */
static size_t parent_of(struct patch *const *msgs, const struct byid *ids,
			size_t nids, size_t i)
{
	const struct patch *p = msgs[i];
	size_t j;

	if (is_cover(p) || !p->in_reply_to)
		return THREAD_NONE;
	j = find_id(ids, nids, p->in_reply_to);
	/* a v2 sent in reply to the v1 is a series of its own */
	if (j == THREAD_NONE || j == i || !in_series(msgs[j]) ||
	    !same_author(p, msgs[j]) ||
	    thread_version(p->subject_prefix) !=
		    thread_version(msgs[j]->subject_prefix))
		return THREAD_NONE;
	return j;
}

/*
 * Roots that answer the same message outside the set (the cover not seen
 * yet, or read in an earlier pass) from the same author, with the same
 * version and m: one series, as b4 takes a thread.
 */
static struct patch *const *vroot_msgs;

static int vroot_cmp(const void *a, const void *b)
{
	const struct patch *x = vroot_msgs[*(const size_t *)a];
	const struct patch *y = vroot_msgs[*(const size_t *)b];
	int c = strcmp(x->in_reply_to, y->in_reply_to);

	if (!c)
		c = strcasecmp(author_of(x), author_of(y));
	if (!c)
		c = thread_version(x->subject_prefix) -
		    thread_version(y->subject_prefix);
	if (!c)
		c = x->series_total - y->series_total;
	if (!c)
		c = *(const size_t *)a < *(const size_t *)b ? -1 : 1;
	return c;
}

static int vroot_same(struct patch *const *msgs, size_t a, size_t b)
{
	const struct patch *x = msgs[a], *y = msgs[b];

	return !strcmp(x->in_reply_to, y->in_reply_to) && same_author(x, y) &&
	       thread_version(x->subject_prefix) ==
		       thread_version(y->subject_prefix) &&
	       x->series_total == y->series_total;
}

static void join_virtual_roots(struct patch *const *msgs, size_t n,
			       const struct byid *ids, size_t nids,
			       size_t *root)
{
	size_t *v = xcalloc(n ? n : 1, sizeof(*v)), nv = 0;
	size_t *to = xcalloc(n ? n : 1, sizeof(*to));

	for (size_t i = 0; i < n; i++) {
		const struct patch *p = msgs[i];
		to[i] = i;
		if (root[i] == i && !is_cover(p) && p->diff && p->in_reply_to &&
		    p->series_total > 0 &&
		    find_id(ids, nids, p->in_reply_to) == THREAD_NONE)
			v[nv++] = i;
	}
	vroot_msgs = msgs;
	if (nv)
		qsort(v, nv, sizeof(*v), vroot_cmp);
	vroot_msgs = NULL;
	for (size_t k = 1; k < nv; k++)
		if (vroot_same(msgs, v[k - 1], v[k]))
			to[v[k]] = to[v[k - 1]];
	for (size_t i = 0; i < n; i++)
		if (root[i] != THREAD_NONE)
			root[i] = to[root[i]];
	free(v);
	free(to);
}

static const char *series_subject(struct patch *const *msgs,
				  const struct thread_series *s)
{
	if (s->cover != THREAD_NONE)
		return msgs[s->cover]->subject;
	return s->nparts ? msgs[s->parts[0]]->subject : "";
}

static const struct patch *series_head(struct patch *const *msgs,
				       const struct thread_series *s)
{
	return msgs[s->cover != THREAD_NONE ? s->cover : s->parts[0]];
}

static struct patch *const *sort_msgs;

static int part_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int px = sort_msgs[x]->series_part, py = sort_msgs[y]->series_part;

	if (px != py)
		return px < py ? -1 : 1;
	return x < y ? -1 : x > y;
}

static const struct thread_series *sort_series;

static int same_series(struct patch *const *msgs, const struct thread_series *a,
		       const struct thread_series *b)
{
	return !strcmp(series_subject(msgs, a), series_subject(msgs, b)) &&
	       !strcasecmp(author_of(series_head(msgs, a)),
			   author_of(series_head(msgs, b)));
}

/* by subject, author, then version: rerolls of one series side by side */
static int series_cmp(const void *x, const void *y)
{
	const struct thread_series *a = &sort_series[*(const size_t *)x];
	const struct thread_series *b = &sort_series[*(const size_t *)y];
	int c = strcmp(series_subject(sort_msgs, a),
		       series_subject(sort_msgs, b));

	if (!c)
		c = strcasecmp(author_of(series_head(sort_msgs, a)),
			       author_of(series_head(sort_msgs, b)));
	if (!c && a->version != b->version)
		c = a->version < b->version ? -1 : 1;
	return c;
}

/*
 * Whether series b was sent in the thread of series a: one of b's
 * messages answers one of a's (git format-patch -v2 --in-reply-to=<v1's
 * cover>). Only then does b supersede a: the same subject from the same
 * address in another thread is another submission.
 */
static int answers(struct patch *const *msgs, const struct byid *ids,
		   size_t nids, const size_t *series_of,
		   const struct thread_series *v, size_t b, size_t a)
{
	const struct thread_series *s = &v[b];

	for (size_t k = 0; k <= s->nparts; k++) {
		size_t i = k < s->nparts ? s->parts[k] : s->cover, j;
		if (i == THREAD_NONE || !msgs[i]->in_reply_to)
			continue;
		j = find_id(ids, nids, msgs[i]->in_reply_to);
		if (j != THREAD_NONE && series_of[j] == a)
			return 1;
	}
	return 0;
}

size_t thread_assemble(struct thread_series **out, struct patch *const *msgs,
		       size_t n)
{
	struct byid *ids = xcalloc(n ? n : 1, sizeof(*ids));
	size_t *root = xcalloc(n ? n : 1, sizeof(*root));
	size_t *series_of = xcalloc(n ? n : 1, sizeof(*series_of));
	size_t nids = 0, ns = 0;
	struct thread_series *v = NULL;

	for (size_t i = 0; i < n; i++)
		if (msgs[i]->message_id && in_series(msgs[i]))
			ids[nids++] = (struct byid){ msgs[i]->message_id, i };
	if (nids)
		qsort(ids, nids, sizeof(*ids), byid_cmp);

	/* roots: follow parents at most n steps (a loop ends somewhere) */
	for (size_t i = 0; i < n; i++) {
		size_t r = i, steps = 0, up;
		root[i] = THREAD_NONE;
		series_of[i] = THREAD_NONE;
		if (!in_series(msgs[i]))
			continue;
		if (msgs[i]->message_id &&
		    find_id(ids, nids, msgs[i]->message_id) != i)
			continue; /* a second copy of a message */
		while ((up = parent_of(msgs, ids, nids, r)) != THREAD_NONE &&
		       steps++ < n)
			r = up;
		root[i] = r;
	}
	join_virtual_roots(msgs, n, ids, nids, root);
	/* one series per root, in the order of first appearance */
	for (size_t i = 0; i < n; i++) {
		size_t r = root[i], s;
		if (r == THREAD_NONE)
			continue;
		if (series_of[r] == THREAD_NONE) {
			v = xrealloc(v, (ns + 1) * sizeof(*v));
			memset(&v[ns], 0, sizeof(v[ns]));
			v[ns].cover = THREAD_NONE;
			v[ns].version = thread_version(msgs[r]->subject_prefix);
			v[ns].total = msgs[r]->series_total;
			series_of[r] = ns++;
		}
		s = series_of[r];
		series_of[i] = s;
		if (is_cover(msgs[i])) {
			if (v[s].cover == THREAD_NONE)
				v[s].cover = i;
			continue;
		}
		v[s].parts = xrealloc(v[s].parts,
				      (v[s].nparts + 1) * sizeof(size_t));
		v[s].parts[v[s].nparts++] = i;
	}
	/* n/m order; a part seen twice keeps its first message */
	sort_msgs = msgs;
	for (size_t s = 0; s < ns; s++) {
		size_t k = 0;
		if (v[s].nparts)
			qsort(v[s].parts, v[s].nparts, sizeof(size_t),
			      part_cmp);
		for (size_t j = 0; j < v[s].nparts; j++)
			if (!k || !msgs[v[s].parts[j]]->series_part ||
			    msgs[v[s].parts[j]]->series_part !=
				    msgs[v[s].parts[k - 1]]->series_part)
				v[s].parts[k++] = v[s].parts[j];
		v[s].nparts = k;
	}
	sort_msgs = NULL;
	/* a v2 supersedes a v1: the same subject from the same author */
	size_t *order = xcalloc(ns ? ns : 1, sizeof(*order));
	for (size_t s = 0; s < ns; s++)
		order[s] = s;
	sort_msgs = msgs;
	sort_series = v;
	if (ns)
		qsort(order, ns, sizeof(*order), series_cmp);
	for (size_t k = 0; k + 1 < ns; k++)
		if (same_series(msgs, &v[order[k]], &v[order[k + 1]]) &&
		    v[order[k]].version < v[order[k + 1]].version &&
		    answers(msgs, ids, nids, series_of, v, order[k + 1],
			    order[k]))
			v[order[k]].superseded = 1;
	sort_msgs = NULL;
	sort_series = NULL;
	free(order);
	free(ids);
	free(root);
	free(series_of);
	*out = v;
	return ns;
}

void thread_series_free(struct thread_series *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].parts);
	free(v);
}
