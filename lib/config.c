/* config.c: a table of keys, their defaults, and the `key = value` parser. */
#include "config.h"
#include "err.h"
#include "strbuf.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum ktype { K_STR, K_INT, K_LONG, K_ENUM };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	const char *def;
	const char *choices; /* K_ENUM: "a|b|c" */
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
	{ "queue_seed", K_STR, S(queue_seed), "kernel-queue/queue-6.1", NULL },
	{ "build_cache_dir", K_STR, S(build_cache_dir), "", NULL },
	{ "build_cache_mb", K_INT, S(build_cache_mb), "2048", NULL },
	{ "kernel_config_dir", K_STR, S(kernel_config_dir), "config/kernel",
	  NULL },
	{ "tests_file", K_STR, S(tests_file), "config/tests.conf", NULL },
	{ "upstream_repo", K_STR, S(upstream_repo), "", NULL },
	{ "stable_queue_repo", K_STR, S(stable_queue_repo), "", NULL },
	{ "qemu_accel", K_ENUM, S(qemu_accel), "auto", "auto|tcg|kvm" },
	{ "auto_revert", K_ENUM, S(auto_revert), "yes", "yes|plan" },
	{ "smtp_url", K_STR, S(smtp_url), "", NULL },
	{ "mail_from", K_STR, S(mail_from), "stableq <stableq@localhost>",
	  NULL },
	{ "mail_cc", K_STR, S(mail_cc), "", NULL },
	{ "read_access", K_ENUM, S(read_access), "loopback",
	  "loopback|open|token" },
	{ "web_root", K_STR, S(web_root), "", NULL },
	{ "public_url", K_STR, S(public_url), "", NULL },
	{ "make_jobs", K_INT, S(make_jobs), "0", NULL },
	{ "build_timeout", K_INT, S(build_timeout), "3600", NULL },
	{ "coverage_build_dir", K_STR, S(coverage_build_dir), "var/build-cover",
	  NULL },
	{ "coverage_config", K_STR, S(coverage_config),
	  "config/coverage.config", NULL },
	{ "boot_timeout", K_INT, S(boot_timeout), "300", NULL },
	{ "qemu_memory", K_INT, S(qemu_memory), "256", NULL },
	{ "bisect_confirm", K_INT, S(bisect_confirm), "2", NULL },
	{ "mail_max_attempts", K_INT, S(mail_max_attempts), "8", NULL },
	{ "mail_backoff", K_INT, S(mail_backoff), "30", NULL },
	{ "max_patch_bytes", K_LONG, S(max_patch_bytes), "8388608", NULL },
	{ "http_connections", K_INT, S(http_connections), "512", NULL },
	{ "http_timeout", K_INT, S(http_timeout), "15", NULL },
	{ "http_request_timeout", K_INT, S(http_request_timeout), "30", NULL },
	{ "poll_interval", K_INT, S(poll_interval), "5", NULL },
	{ "debian_changelog", K_STR, S(debian_changelog),
	  "/usr/share/doc/linux-source-6.1/changelog.Debian.gz", NULL },
	{ "mail_bulk_limit", K_INT, S(mail_bulk_limit), "5", NULL },
};
#undef S
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *key_names[NKEYS + 1];

const char *const *config_keys(void)
{
	for (size_t i = 0; i < NKEYS; i++)
		key_names[i] = keys[i].name;
	key_names[NKEYS] = NULL;
	return key_names;
}

static int set_key(struct config *c, const struct key *k, const char *val,
		   const char *where)
{
	char *base = (char *)c + k->off;
	char *end;

	switch (k->type) {
	case K_ENUM: {
		size_t n = strlen(val);
		const char *p = k->choices;
		int found = 0;
		while (*p) {
			const char *bar = strchr(p, '|');
			size_t len = bar ? (size_t)(bar - p) : strlen(p);
			if (len == n && !strncmp(p, val, n))
				found = 1;
			p += len + (bar ? 1 : 0);
		}
		if (!found)
			return err_set(ERR_INVALID,
				       "%s: %s must be one of %s, not '%s'",
				       where, k->name, k->choices, val);
	}
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
		if (xdg && *xdg)
			c->ccache_dir = xstrfmt("%s/stableq/ccache", xdg);
		else if (home && *home)
			c->ccache_dir = xstrfmt("%s/.cache/stableq/ccache", home);
		else
			c->ccache_dir = xstrdup("var/ccache");
	}
}

int config_load(struct config *c, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = 0, lineno = 0;
	char *line, *next;

	fill_defaults(c);
	if (!path)
		return 0;
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
out:
	strbuf_release(&sb);
	return ret;
}

void config_free(struct config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].type == K_STR || keys[i].type == K_ENUM) {
			char **slot = (char **)((char *)c + keys[i].off);
			free(*slot);
			*slot = NULL;
		}
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
}
