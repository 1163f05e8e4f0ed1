/* guestconf.c: the guest kernel configurations (quick, broad), the KUnit deny list, and their identity. */
#include "guestconf.h"
#include "config.h"
#include "err.h"
#include "karch.h"
#include "kconfig.h"
#include "kunitconf.h"
#include "sha256.h"
#include "strbuf.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DENY_MAX (1u << 20)

static const struct guestconf table[] = {
	{ "quick", "tinyconfig", 0, offsetof(struct config, kernel_config_dir),
	  0, 0 },
	/* all of KUnit on a defconfig kernel: minutes under TCG, more memory */
	{ "broad", "defconfig kvm_guest.config", 1,
	  offsetof(struct config, broad_config_dir), 1800, 1024 },
};
#define NTABLE (sizeof(table) / sizeof(table[0]))

/* The names, "|"-separated (static). */
static const char *guestconf_names(void)
{
	return "quick|broad";
}

const struct guestconf *guestconf_find(const char *name)
{
	for (size_t i = 0; name && i < NTABLE; i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	err_set(ERR_INVALID, "guest_config must be one of %s, not '%s'",
		guestconf_names(), name ? name : "");
	return NULL;
}

const char *guestconf_fragments(const struct guestconf *g,
				const struct config *c)
{
	return *(char *const *)((const char *)c + g->fragments);
}

void guestconf_deny_free(char **syms)
{
	for (size_t i = 0; syms && syms[i]; i++)
		free(syms[i]);
	free(syms);
}

int guestconf_deny_load(const char *path, char ***syms)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = 0;
	int lineno = 0, ret = 0;

	*syms = xcalloc(1, sizeof(**syms));
	if (strbuf_read_file(&sb, path, DENY_MAX) < 0) {
		ret = err_set(access(path, F_OK) ? ERR_NOTFOUND : ERR_IO,
			      "KUnit deny list %s: %s", path, err_msg());
		goto out;
	}
	for (char *p = sb.buf; p && *p && ret == 0;) {
		char *nl = strchr(p, '\n');
		size_t len;
		if (nl)
			*nl = '\0';
		lineno++;
		p += strspn(p, " \t");
		len = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
		if (*p && *p != '#') {
			const char *why = p + len + strspn(p + len, " \t");
			if (!len || (p[len] != ' ' && p[len] != '\t') ||
			    !*why || !strncmp(p, "CONFIG_", 7))
				ret = err_set(ERR_INVALID,
					      "%s:%d: expected SYMBOL (without"
					      " CONFIG_, capitals) and why it is"
					      " left out",
					      path, lineno);
			else {
				*syms = xrealloc(*syms,
						 (n + 2) * sizeof(**syms));
				(*syms)[n++] = xstrndup(p, len);
				(*syms)[n] = NULL;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
out:
	if (ret < 0) {
		guestconf_deny_free(*syms);
		*syms = NULL;
	}
	strbuf_release(&sb);
	return ret;
}

int guestconf_kunit(const char *src_dir, const char *deny_path,
		    struct strbuf *out, size_t *suites, size_t *denied)
{
	char **deny = NULL;
	size_t all = 0, extra = 0;
	int ret;

	if (deny_path && *deny_path &&
	    (ret = guestconf_deny_load(deny_path, &deny)) < 0)
		return ret;
	ret = kunitconf_scan(src_dir, (const char *const *)deny, out, &all,
			     &extra, denied);
	if (suites)
		*suites = all + extra;
	guestconf_deny_free(deny);
	return ret;
}

static void hash_file(struct strbuf *sb, const char *what, const char *path)
{
	struct strbuf f = STRBUF_INIT;

	if (strbuf_read_file(&f, path, 16u << 20) < 0)
		err_clear(); /* absent: its absence is what is hashed */
	strbuf_addf(sb, "%s %s %zu\n", what, path, f.len);
	strbuf_addbuf(sb, &f);
	strbuf_release(&f);
}

/* The tree's file a broad base adds to the arch's defconfig (karch.h). */
#define KVM_GUEST_CONFIG "kernel/configs/kvm_guest.config"

int guestconf_hash(const struct guestconf *g, const char *arch,
		   const char *src_dir, const char *config_dir,
		   const char *deny_path, char out[65])
{
	const struct karch *ka = &karch_table[0];
	int other_arch = arch && *arch && strcmp(arch, "x86_64");
	struct strbuf sb = STRBUF_INIT;
	char frag[65];
	int ret;

	if ((ret = kconfig_hash(src_dir, config_dir, frag)) < 0)
		return ret;
	if (!g->kunit_tree && !strcmp(g->base, "tinyconfig")) {
		memcpy(out, frag, 65); /* the quick guest hashes as it did */
		return 0;
	}
	strbuf_addf(&sb, "stableq-guestconf 1\n%s\n%s\n%s\n", g->name, g->base,
		    frag);
	if (other_arch) {
		/* x86_64's text stays as it was: its builds stay cached */
		if (!(ka = karch_boot_find(arch))) {
			ret = err_set(ERR_INVALID, "guest configuration: arch "
					      "'%s' has no defconfig here", arch);
			goto out;
		}
		strbuf_addf(&sb, "arch %s\n", arch);
	}
	if (deny_path && *deny_path)
		hash_file(&sb, "deny", deny_path);
	if (src_dir) {
		const char *tree_files[] = {ka->defconfig, KVM_GUEST_CONFIG};
		for (size_t i = 0; i < 2; i++) {
			char *p = xstrfmt("%s/%s", src_dir, tree_files[i]);
			hash_file(&sb, "tree", p);
			free(p);
		}
		if (g->kunit_tree &&
		    (ret = guestconf_kunit(src_dir, deny_path, &sb, NULL,
					   NULL)) < 0)
			goto out;
	}
	sha256_hex(sb.buf, sb.len, out);
	ret = 0;
out:
	strbuf_release(&sb);
	return ret;
}
