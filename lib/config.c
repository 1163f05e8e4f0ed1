/* config.c: a table of keys, their defaults, and the `key = value` parser. */
#include "config.h"
#include "err.h"
#include "karch.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum ktype { K_STR, K_INT, K_LONG, K_ENUM };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	const char *def;
	const char *choices; /* K_ENUM: "a|b|c" */
	int words;           /* K_ENUM: one or more of them, space-separated */
};

#define S(f) offsetof(struct config, f)
static const struct key keys[] = {
	{ "db", K_STR, S(db), "var/stableq.db", NULL },
	{ "var_dir", K_STR, S(var_dir), "var", NULL },
	{ "listen", K_STR, S(listen), "127.0.0.1:8080", NULL },
	{ "branch", K_STR, S(branch), "linux-6.1.y", NULL },
	{ "linux_source", K_STR, S(linux_source),
	  "/usr/src/linux-source-6.1.tar.xz", NULL },
	{ "tree_dir", K_STR, S(tree_dir), "var/linux", NULL },
	{ "build_dir", K_STR, S(build_dir), "var/build", NULL },
	{ "ccache_dir", K_STR, S(ccache_dir), "", NULL },
	{ "icecc", K_STR, S(icecc), "", NULL },
	{ "queue_dir", K_STR, S(queue_dir), "var/queue-6.1", NULL },
	{ "queue_seed", K_STR, S(queue_seed), "config/queues/6.1", NULL },
	{ "build_cache_dir", K_STR, S(build_cache_dir), "", NULL },
	{ "build_cache_mb", K_INT, S(build_cache_mb), "2048", NULL },
	{ "kernel_config_dir", K_STR, S(kernel_config_dir), "config/kernel/6.1/quick",
	  NULL },
	{ "tests_file", K_STR, S(tests_file), "config/tests.conf", NULL },
	{ "guest_config", K_ENUM, S(guest_config), "quick", "quick|broad" },
	{ "arches", K_ENUM, S(arches), "x86_64", KARCH_BOOT_CHOICES, 1 },
	{ "compilers", K_ENUM, S(compilers), "gcc", "gcc|clang", 1 },
	{ "broad_config_dir", K_STR, S(broad_config_dir), "config/kernel/6.1/broad",
	  NULL },
	{ "kunit_deny", K_STR, S(kunit_deny), "config/kunit-deny.conf", NULL },
	{ "upstream_repo", K_STR, S(upstream_repo), "", NULL },
	{ "stable_queue_repo", K_STR, S(stable_queue_repo), "", NULL },
	{ "min_soak_days", K_INT, S(min_soak_days), "0", NULL },
	{ "qemu_accel", K_ENUM, S(qemu_accel), "auto", "auto|tcg|kvm" },
	{ "auto_revert", K_ENUM, S(auto_revert), "yes", "yes|plan|propose" },
	{ "revert_daily_limit", K_INT, S(revert_daily_limit), "3", NULL },
	{ "revert_grace", K_INT, S(revert_grace), "1800", NULL },
	{ "smtp_url", K_STR, S(smtp_url), "", NULL },
	{ "mail_from", K_STR, S(mail_from), "stableq <stableq@localhost>",
	  NULL },
	{ "mail_cc", K_STR, S(mail_cc), "", NULL },
	{ "read_access", K_ENUM, S(read_access), "loopback",
	  "loopback|open|token" },
	{ "web_root", K_STR, S(web_root), "", NULL },
	{ "public_url", K_STR, S(public_url), "", NULL },
	{ "make_jobs", K_INT, S(make_jobs), "0", NULL },
	{ "cell_jobs", K_INT, S(cell_jobs), "0", NULL },
	{ "build_timeout", K_INT, S(build_timeout), "10800", NULL },
	{ "coverage_build_dir", K_STR, S(coverage_build_dir), "var/build-cover",
	  NULL },
	{ "coverage_config", K_STR, S(coverage_config),
	  "config/coverage.config", NULL },
	{ "coverage_boot", K_ENUM, S(coverage_boot), "no", "yes|no" },
	{ "boot_timeout", K_INT, S(boot_timeout), "300", NULL },
	{ "qemu_memory", K_INT, S(qemu_memory), "256", NULL },
	{ "bisect_confirm", K_INT, S(bisect_confirm), "2", NULL },
	{ "test_retries", K_INT, S(test_retries), "2", NULL },
	{ "test_baseline", K_ENUM, S(test_baseline), "yes", "yes|no" },
	{ "baseline_idle", K_ENUM, S(baseline_idle), "yes", "yes|no" },
	{ "candidates_pending_max", K_INT, S(candidates_pending_max), "4", NULL },
	{ "mail_max_attempts", K_INT, S(mail_max_attempts), "8", NULL },
	{ "mail_backoff", K_INT, S(mail_backoff), "30", NULL },
	{ "max_patch_bytes", K_LONG, S(max_patch_bytes), "8388608", NULL },
	{ "http_connections", K_INT, S(http_connections), "512", NULL },
	{ "http_timeout", K_INT, S(http_timeout), "15", NULL },
	{ "http_request_timeout", K_INT, S(http_request_timeout), "30", NULL },
	{ "http_hosts", K_STR, S(http_hosts), "", NULL },
	{ "poll_interval", K_INT, S(poll_interval), "5", NULL },
	{ "debian_changelog", K_STR, S(debian_changelog),
	  "/usr/share/doc/linux-source-6.1/changelog.Debian.gz", NULL },
	{ "mail_bulk_limit", K_INT, S(mail_bulk_limit), "5", NULL },
	{ "mail_max_recipients", K_INT, S(mail_max_recipients), "10", NULL },
	{ "intake_maildir", K_STR, S(intake_maildir), "", NULL },
	{ "intake_inbox", K_STR, S(intake_inbox), "", NULL },
	{ "rc_list", K_STR, S(rc_list), "", NULL },
	{ "rc_window", K_INT, S(rc_window), "172800", NULL },
	{ "regressions_list", K_STR, S(regressions_list), "", NULL },
	{ "rc_cc", K_STR, S(rc_cc), "", NULL },
	{ "rc_git_url", K_STR, S(rc_git_url), "", NULL },
	{ "release_signoff", K_STR, S(release_signoff), "", NULL },
	{ "tester_identity", K_STR, S(tester_identity), "", NULL },
	{ "sandbox", K_ENUM, S(sandbox), "bwrap", "bwrap|none" },
	{ "build_user", K_STR, S(build_user), "stableq-build", NULL },
	{ "build_memory_mb", K_INT, S(build_memory_mb), "4096", NULL },
	{ "intake_build", K_ENUM, S(intake_build), "none", "none|trusted" },
	{ "intake_trusted", K_STR, S(intake_trusted), "", NULL },
};
#define B(f) offsetof(struct branch_conf, f)
/*
 * The keys a `[branch KEY]` section may give. distinct: two branches may
 * not share the path (one tree, build or queue directory each).
 */
static const struct bkey {
	const char *name;
	size_t boff, coff;
	int distinct;
} bkeys[] = {
	{ "branch", B(branch), S(branch), 0 },
	{ "linux_source", B(linux_source), S(linux_source), 0 },
	{ "tree_dir", B(tree_dir), S(tree_dir), 1 },
	{ "build_dir", B(build_dir), S(build_dir), 1 },
	{ "queue_dir", B(queue_dir), S(queue_dir), 1 },
	{ "queue_seed", B(queue_seed), S(queue_seed), 0 },
	{ "kernel_config_dir", B(kernel_config_dir), S(kernel_config_dir), 0 },
	{ "tests_file", B(tests_file), S(tests_file), 0 },
	{ "guest_config", B(guest_config), S(guest_config), 0 },
	{ "arches", B(arches), S(arches), 0 },
	{ "compilers", B(compilers), S(compilers), 0 },
	{ "broad_config_dir", B(broad_config_dir), S(broad_config_dir), 0 },
	{ "debian_changelog", B(debian_changelog), S(debian_changelog), 0 },
	{ "coverage_build_dir", B(coverage_build_dir), S(coverage_build_dir),
	  1 },
	{ "coverage_boot", B(coverage_boot), S(coverage_boot), 0 },
	{ "upstream_repo", B(upstream_repo), S(upstream_repo), 0 },
	{ "stable_queue_repo", B(stable_queue_repo), S(stable_queue_repo), 0 },
};
#undef B
#undef S
#define NKEYS (sizeof(keys) / sizeof(keys[0]))
#define NBKEYS (sizeof(bkeys) / sizeof(bkeys[0]))

static char **bslot(struct branch_conf *b, const struct bkey *k)
{
	return (char **)((char *)b + k->boff);
}

static char **cslot(struct config *c, const struct bkey *k)
{
	return (char **)((char *)c + k->coff);
}

static int enum_check(const struct key *k, const char *val, const char *where);

/* A words key: each word one of the choices, once, at least one word. */
static int words_check(const struct key *k, const char *val, const char *where)
{
	struct key one = *k;
	const char *w = val + strspn(val, " "), *dup;
	int n = 0;

	one.words = 0;
	while (*w) {
		size_t len = strcspn(w, " ");
		char *word = xstrndup(w, len);
		int ret = enum_check(&one, word, where);
		for (dup = val; ret == 0 && dup < w; dup++)
			if ((dup == val || dup[-1] == ' ') &&
			    !strncmp(dup, word, len) &&
			    (dup[len] == ' ' || !dup[len]))
				ret = err_set(ERR_INVALID, "%s: %s names %s twice",
					      where, k->name, word);
		free(word);
		if (ret < 0)
			return ret;
		n++;
		w += len;
		w += strspn(w, " ");
	}
	if (!n)
		return err_set(ERR_INVALID, "%s: %s must name one or more of %s",
			       where, k->name, k->choices);
	return 0;
}

/* 0 when val is one of k's choices, else ERR_INVALID naming them. */
static int enum_check(const struct key *k, const char *val, const char *where)
{
	size_t n = strlen(val);
	const char *p = k->choices;

	if (k->words)
		return words_check(k, val, where);
	while (*p) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);
		if (len == n && !strncmp(p, val, n))
			return 0;
		p += len + (bar ? 1 : 0);
	}
	return err_set(ERR_INVALID, "%s: %s must be one of %s, not '%s'", where,
		       k->name, k->choices, val);
}

static int set_key(struct config *c, const struct key *k, const char *val,
		   const char *where)
{
	char *base = (char *)c + k->off;
	char *end;

	switch (k->type) {
	case K_ENUM:
		if (enum_check(k, val, where) < 0)
			return ERR_INVALID;
		/* fall through */
	case K_STR: {
		char **slot = (char **)base;
		free(*slot);
		*slot = xstrdup(val);
		return 0;
	}
	case K_INT:
	case K_LONG: {
		errno = 0;
		long v = strtol(val, &end, 10);
		if (errno || end == val || *end || v < 0 ||
		    (k->type == K_INT && v > INT_MAX))
			return err_set(ERR_INVALID,
				       "%s: %s must be a non-negative number, "
				       "not '%s'",
				       where, k->name, val);
		if (k->type == K_INT)
			*(int *)base = (int)v;
		else
			*(long *)base = v;
		return 0;
	}
	}
	return ERR_INVALID;
}

static void fill_defaults(struct config *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < NKEYS; i++)
		set_key(c, &keys[i], keys[i].def, "default");
	if (!*c->ccache_dir) {
		const char *xdg = getenv("XDG_CACHE_HOME");
		const char *home = getenv("HOME");
		free(c->ccache_dir);
		/* root builds as build_user: not under root's home */
		if (geteuid() == 0)
			c->ccache_dir = xstrdup("/var/cache/stableq/ccache");
		else if (xdg && *xdg)
			c->ccache_dir = xstrfmt("%s/stableq/ccache", xdg);
		else if (home && *home)
			c->ccache_dir = xstrfmt("%s/.cache/stableq/ccache", home);
		else
			c->ccache_dir = xstrdup("var/ccache");
	}
}

/* Branches ------------------------------------------------------------- */

static void branch_free(struct branch_conf *b)
{
	free(b->key);
	for (size_t i = 0; i < NBKEYS; i++)
		free(*bslot(b, &bkeys[i]));
	memset(b, 0, sizeof(*b));
}

static int key_valid(const char *key)
{
	size_t n = strlen(key);

	if (!n || n > 32)
		return 0;
	for (const char *p = key; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._-", *p))
			return 0;
	return 1;
}

/* `[branch KEY]`: a new branch, its keys to follow. */
static int section_start(struct config *c, char *p, const char *where)
{
	char *end = strchr(p, ']');
	char *key;

	p += 1 + strspn(p + 1, " \t");
	if (!end || end[1 + strspn(end + 1, " \t")] != '\0' ||
	    strncmp(p, "branch", 6) || !isspace((unsigned char)p[6]))
		return err_set(ERR_INVALID,
			       "%s: expected a section '[branch KEY]'", where);
	*end = '\0';
	key = p + 7;
	key += strspn(key, " \t");
	while (end > key && isspace((unsigned char)end[-1]))
		*--end = '\0';
	if (!key_valid(key))
		return err_set(ERR_INVALID,
			       "%s: a branch key is 1 to 32 letters, digits, "
			       "'.', '_' or '-', not '%s'",
			       where, key);
	for (int i = 0; i < c->nbranches; i++)
		if (!strcmp(c->branches[i].key, key))
			return err_set(ERR_INVALID,
				       "%s: branch %s is configured twice",
				       where, key);
	c->branches = xrealloc(c->branches,
			       (size_t)(c->nbranches + 1) * sizeof(*c->branches));
	memset(&c->branches[c->nbranches], 0, sizeof(*c->branches));
	c->branches[c->nbranches++].key = xstrdup(key);
	return 0;
}

static int section_key(struct config *c, const char *name, const char *val,
		       const char *where)
{
	struct branch_conf *b = &c->branches[c->nbranches - 1];

	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].type == K_ENUM && !strcmp(keys[i].name, name) &&
		    enum_check(&keys[i], val, where) < 0)
			return ERR_INVALID;
	for (size_t i = 0; i < NBKEYS; i++)
		if (!strcmp(bkeys[i].name, name)) {
			char **slot = bslot(b, &bkeys[i]);
			/* a per-branch choice is checked like a top-level one */
			for (size_t k = 0; k < NKEYS; k++) {
				struct config probe = { 0 };
				if (strcmp(keys[k].name, name) ||
				    keys[k].type != K_ENUM)
					continue;
				if (set_key(&probe, &keys[k], val, where) < 0)
					return ERR_INVALID;
				free(*(char **)((char *)&probe + keys[k].off));
			}
			free(*slot);
			*slot = xstrdup(val);
			return 0;
		}
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return err_set(ERR_INVALID,
				       "%s: '%s' is not a per-branch key (set it "
				       "before the first [branch] section)",
				       where, name);
	return err_set(ERR_INVALID, "%s: unknown key '%s'", where, name);
}

/* linux-6.12.y -> "6.12"; any other git branch name is its own key. */
static char *key_of_branch(const char *branch)
{
	size_t n = strlen(branch);

	if (n > 8 && !strncmp(branch, "linux-", 6) &&
	    !strcmp(branch + n - 2, ".y"))
		return xstrndup(branch + 6, n - 8);
	return xstrdup(branch);
}

/* A path as compared for sharing: absolute, without "." and "//". */
static char *path_norm(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	char cwd[4096];
	const char *p = path;

	if (*path != '/' && getcwd(cwd, sizeof(cwd)))
		strbuf_addstr(&sb, cwd);
	while (*p) {
		size_t n;
		p += strspn(p, "/");
		n = strcspn(p, "/");
		if (!n)
			break;
		if (!(n == 1 && *p == '.')) {
			strbuf_addch(&sb, '/');
			strbuf_add(&sb, p, n);
		}
		p += n;
	}
	if (!sb.len)
		strbuf_addch(&sb, '/');
	return strbuf_detach(&sb, NULL);
}

/*
 * After the file: no section makes the top-level keys the one branch; the
 * keys a section left out inherit the top-level values; two branches may
 * not share a tree, build or queue directory, nor a git branch name (the
 * store keys branches by it too).
 */
static int branches_finish(struct config *c, const char *where)
{
	if (!c->nbranches) {
		c->branches = xcalloc(1, sizeof(*c->branches));
		c->nbranches = 1;
		c->branches[0].key = key_of_branch(c->branch);
	}
	for (int i = 0; i < c->nbranches; i++)
		for (size_t k = 0; k < NBKEYS; k++) {
			char **slot = bslot(&c->branches[i], &bkeys[k]);
			if (!*slot)
				*slot = xstrdup(*cslot(c, &bkeys[k]));
		}
	/* from here on the top-level fields borrow the selected branch's */
	for (size_t k = 0; k < NBKEYS; k++) {
		free(*cslot(c, &bkeys[k]));
		*cslot(c, &bkeys[k]) = NULL;
	}
	c->branches_owned = 1;
	for (int i = 0; i < c->nbranches; i++)
		for (int j = i + 1; j < c->nbranches; j++)
			for (size_t k = 0; k < NBKEYS; k++) {
				const char *a = *bslot(&c->branches[i], &bkeys[k]);
				const char *b = *bslot(&c->branches[j], &bkeys[k]);
				int same;
				if (!bkeys[k].distinct &&
				    strcmp(bkeys[k].name, "branch"))
					continue;
				if (bkeys[k].distinct) {
					char *na = path_norm(a), *nb = path_norm(b);
					same = !strcmp(na, nb);
					free(na);
					free(nb);
				} else {
					same = !strcmp(a, b);
				}
				if (same)
					return err_set(ERR_INVALID,
						       "%s: branches %s and %s have "
						       "the same %s (%s): each "
						       "branch needs its own",
						       where, c->branches[i].key,
						       c->branches[j].key,
						       bkeys[k].name, a);
			}
	return config_select_branch(c, NULL);
}

/* The known keys, ", "-separated, for messages. Caller frees. */
static char *config_branch_keys(const struct config *c)
{
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < c->nbranches; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", c->branches[i].key);
	return strbuf_detach(&sb, NULL);
}

const struct branch_conf *config_branch(const struct config *c,
					const char *key)
{
	if (!c->nbranches) {
		err_set(ERR_NOTFOUND, "no branch is configured");
		return NULL;
	}
	if (!key)
		return &c->branches[0];
	for (int i = 0; i < c->nbranches; i++)
		if (!strcmp(c->branches[i].key, key))
			return &c->branches[i];
	char *known = config_branch_keys(c);
	err_set(ERR_NOTFOUND, "unknown branch '%s' (configured: %s)", key,
		known);
	free(known);
	return NULL;
}

int config_select_branch(struct config *c, const char *key)
{
	const struct branch_conf *b = config_branch(c, key);

	if (!b)
		return err_last();
	/* pointers only: a shallow copy of a config may select its own */
	for (size_t k = 0; k < NBKEYS; k++)
		*cslot(c, &bkeys[k]) = *bslot((struct branch_conf *)b, &bkeys[k]);
	c->selected = (int)(b - c->branches);
	c->branch_key = b->key;
	return 0;
}

int config_load(struct config *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = 0, lineno = 0, in_section = 0;
	char *line, *next;

	fill_defaults(c);
	if (!path)
		return branches_finish(c, "defaults");
	c->path = xstrdup(path);
	if ((ret = strbuf_read_file(&sb, path, 1 << 20)) < 0)
		return ERR_NOTFOUND;
	for (line = sb.buf; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char where[512];
		lineno++;
		snprintf(where, sizeof(where), "%s:%d", path, lineno);
		char *p = line;
		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#' || *p == ';')
			continue;
		if (*p == '[') {
			if ((ret = section_start(c, p, where)) < 0)
				goto out;
			in_section = 1;
			continue;
		}
		char *eq = strchr(p, '=');
		if (!eq) {
			ret = err_set(ERR_INVALID, "%s: expected 'key = value'",
				      where);
			goto out;
		}
		char *kend = eq;
		while (kend > p && isspace((unsigned char)kend[-1]))
			kend--;
		*kend = '\0';
		char *v = eq + 1;
		while (isspace((unsigned char)*v))
			v++;
		char *vend = v + strlen(v);
		while (vend > v && isspace((unsigned char)vend[-1]))
			vend--;
		*vend = '\0';
		if (in_section) {
			if ((ret = section_key(c, p, v, where)) < 0)
				goto out;
			continue;
		}
		const struct key *k = NULL;
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(keys[i].name, p))
				k = &keys[i];
		if (!k) {
			ret = err_set(ERR_INVALID, "%s: unknown key '%s'", where,
				      p);
			goto out;
		}
		if ((ret = set_key(c, k, v, where)) < 0)
			goto out;
	}
	ret = branches_finish(c, path);
out:
	strbuf_release(&sb);
	return ret;
}

static int is_branch_key(const char *name)
{
	for (size_t k = 0; k < NBKEYS; k++)
		if (!strcmp(bkeys[k].name, name))
			return 1;
	return 0;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].type == K_STR || keys[i].type == K_ENUM) {
			char **slot = (char **)((char *)c + keys[i].off);
			if (!c->branches_owned || !is_branch_key(keys[i].name))
				free(*slot);
			*slot = NULL;
		}
	for (int i = 0; i < c->nbranches; i++)
		branch_free(&c->branches[i]);
	free(c->branches);
	c->branches = NULL;
	c->nbranches = 0;
	c->branch_key = NULL;
	c->branches_owned = 0;
	free(c->path);
	c->path = NULL;
}

void config_dump(const struct config *c, void (*emit)(const char *line))
{
	for (size_t i = 0; i < NKEYS; i++) {
		const char *base = (const char *)c + keys[i].off;
		char *line;
		if (keys[i].type == K_INT)
			line = xstrfmt("%s = %d", keys[i].name, *(const int *)base);
		else if (keys[i].type == K_LONG)
			line = xstrfmt("%s = %ld", keys[i].name,
				       *(const long *)base);
		else
			line = xstrfmt("%s = %s", keys[i].name,
				       *(char *const *)base);
		emit(line);
		free(line);
	}
	for (int i = 0; i < c->nbranches; i++) {
		char *line = xstrfmt("[branch %s]", c->branches[i].key);
		emit(line);
		free(line);
		for (size_t k = 0; k < NBKEYS; k++) {
			line = xstrfmt("%s = %s", bkeys[k].name,
				       *bslot(&c->branches[i], &bkeys[k]));
			emit(line);
			free(line);
		}
	}
}
