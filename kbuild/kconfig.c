/* kconfig.c: a kernel configuration from fragments: its identity (hash), its fragments, and a .config checked against them. */
#include "kconfig.h"
#include "err.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bump when the configuration procedure changes: every build reconfigures. */
#define HASH_SCHEME "stableq-kbuild-config 1\n"
#define MAX_FRAGMENT (1u << 20)

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.config names of dir, sorted; *n of them. Caller frees each + array. */
int kconfig_fragments(const char *dir, char ***out, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!d)
		return err_set(errno == ENOENT ? ERR_NOTFOUND : ERR_IO,
			       "config fragments %s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l <= 7 || de->d_name[0] == '.' ||
		    strcmp(de->d_name + l - 7, ".config"))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 8;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (!*n)
		return err_set(ERR_NOTFOUND, "%s: no *.config fragment", dir);
	qsort(*out, *n, sizeof(**out), cmp_str);
	return 0;
}

void kconfig_fragments_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void hash_part(EVP_MD_CTX *ctx, const char *what, const char *name,
		      const struct strbuf *data)
{
	char head[PATH_MAX + 64];
	int l = snprintf(head, sizeof(head), "%s %s %zu\n", what, name,
			 data->len);

	EVP_DigestUpdate(ctx, head, (size_t)l);
	EVP_DigestUpdate(ctx, data->buf, data->len);
}

int kconfig_hash(const char *src_dir, const char *config_dir,
		       char out[65])
{
	static const char *const base[] = {
		"kernel/configs/tiny-base.config",
		"kernel/configs/tiny.config",
		"arch/x86/configs/tiny.config",
	};
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned mdlen = 0;
	struct strbuf data = STRBUF_INIT;
	char **frags = NULL;
	size_t nfrags = 0;
	EVP_MD_CTX *ctx = NULL;
	int ret;

	out[0] = '\0';
	if ((ret = kconfig_fragments(config_dir, &frags, &nfrags)) < 0)
		goto out;
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = err_set(ERR_IO, "sha256: cannot initialize");
		goto out;
	}
	EVP_DigestUpdate(ctx, HASH_SCHEME, strlen(HASH_SCHEME));
	for (size_t i = 0; src_dir && i < sizeof(base) / sizeof(base[0]); i++) {
		char *p = xstrfmt("%s/%s", src_dir, base[i]);
		strbuf_reset(&data);
		if (access(p, F_OK) == 0 &&
		    strbuf_read_file(&data, p, MAX_FRAGMENT) < 0) {
			free(p);
			ret = ERR_IO;
			goto out;
		}
		if (access(p, F_OK) == 0)
			hash_part(ctx, "base", base[i], &data);
		free(p);
	}
	for (size_t i = 0; i < nfrags; i++) {
		char *p = xstrfmt("%s/%s", config_dir, frags[i]);
		strbuf_reset(&data);
		ret = strbuf_read_file(&data, p, MAX_FRAGMENT);
		free(p);
		if (ret < 0) {
			ret = ERR_IO;
			goto out;
		}
		hash_part(ctx, "fragment", frags[i], &data);
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen)) {
		ret = err_set(ERR_IO, "sha256: cannot finish");
		goto out;
	}
	for (unsigned i = 0; i < mdlen && i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
	ret = 0;
out:
	EVP_MD_CTX_free(ctx);
	kconfig_fragments_free(frags, nfrags);
	strbuf_release(&data);
	return ret;
}

/* "CONFIG_X=v" -> X, v; "# CONFIG_X is not set" -> X, "n". 0 if neither. */
static int config_line(const char *s, size_t len, const char **sym,
		       size_t *slen, const char **val, size_t *vlen)
{
	static const char unset[] = " is not set";

	if (len > 9 && !strncmp(s, "# CONFIG_", 9)) {
		const char *e = memmem(s, len, unset, sizeof(unset) - 1);
		if (!e || (size_t)(e - s) + sizeof(unset) - 1 != len)
			return 0;
		*sym = s + 9;
		*slen = (size_t)(e - *sym);
		*val = "n";
		*vlen = 1;
		return *slen > 0;
	}
	if (len > 7 && !strncmp(s, "CONFIG_", 7)) {
		const char *eq = memchr(s, '=', len);
		if (!eq)
			return 0;
		*sym = s + 7;
		*slen = (size_t)(eq - *sym);
		*val = eq + 1;
		*vlen = len - (size_t)(eq + 1 - s);
		return *slen > 0;
	}
	return 0;
}

/* The value of CONFIG_<sym> in a .config text: pointer + length, or NULL. */
static const char *config_value(const struct strbuf *cfg, const char *sym,
				size_t slen, size_t *vlen)
{
	const char *p = cfg->buf, *end = cfg->buf + cfg->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		const char *s, *v;
		size_t sl, vl;
		if (config_line(p, l, &s, &sl, &v, &vl) && sl == slen &&
		    !memcmp(s, sym, slen)) {
			*vlen = vl;
			return v;
		}
		p += l + 1;
	}
	return NULL;
}

static const char *kconfig_sym;
static int kconfig_found;

static int kconfig_visit(const char *path, const struct stat *st, int type,
			 struct FTW *ftw)
{
	const char *base = path + ftw->base;
	struct strbuf sb = STRBUF_INIT;
	size_t sl = strlen(kconfig_sym);

	if (type == FTW_D && (!strcmp(base, ".git") || !strcmp(base, ".pc")))
		return FTW_SKIP_SUBTREE;
	if (type != FTW_F || strncmp(base, "Kconfig", 7))
		return FTW_CONTINUE;
	if (strbuf_read_file(&sb, path, 4u << 20) < 0) {
		err_clear();
		return FTW_CONTINUE;
	}
	for (char *p = sb.buf; p && *p;) {
		char *nl = strchr(p, '\n');
		char *s = p;
		while (*s == ' ' || *s == '\t')
			s++;
		if (!strncmp(s, "menuconfig", 10))
			s += 10;
		else if (!strncmp(s, "config", 6))
			s += 6;
		else
			s = NULL;
		if (s && (*s == ' ' || *s == '\t')) {
			while (*s == ' ' || *s == '\t')
				s++;
			if (!strncmp(s, kconfig_sym, sl) &&
			    (s[sl] == '\n' || s[sl] == ' ' || s[sl] == '\t' ||
			     s[sl] == '\0')) {
				kconfig_found = 1;
				break;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	strbuf_release(&sb);
	(void)st;
	return kconfig_found ? FTW_STOP : FTW_CONTINUE;
}

/* 1 if some Kconfig file under src defines sym, 0 if none, -1 if unknown. */
static int kconfig_defines(const char *src, const char *sym)
{
	if (!src)
		return -1;
	kconfig_sym = sym;
	kconfig_found = 0;
	if (nftw(src, kconfig_visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) < 0)
		return -1;
	return kconfig_found;
}

int kconfig_verify(const char *config_dir, const char *dot_config,
			 const char *src_dir)
{
	struct strbuf cfg = STRBUF_INIT, frag = STRBUF_INIT;
	char **frags = NULL;
	size_t nfrags = 0;
	int ret;

	if ((ret = kconfig_fragments(config_dir, &frags, &nfrags)) < 0)
		goto out;
	if (strbuf_read_file(&cfg, dot_config, 16u << 20) < 0) {
		ret = ERR_NOTFOUND;
		goto out;
	}
	for (size_t f = 0; f < nfrags; f++) {
		char *path = xstrfmt("%s/%s", config_dir, frags[f]);
		const char *p, *end;
		int lineno = 0;

		strbuf_reset(&frag);
		if (strbuf_read_file(&frag, path, MAX_FRAGMENT) < 0) {
			free(path);
			ret = ERR_IO;
			goto out;
		}
		p = frag.buf;
		end = frag.buf + frag.len;
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			const char *s, *v, *got;
			size_t sl, vl, gl = 0;

			lineno++;
			while (l && (p[l - 1] == ' ' || p[l - 1] == '\t' ||
				     p[l - 1] == '\r'))
				l--;
			if (!config_line(p, l, &s, &sl, &v, &vl)) {
				p += (nl ? (size_t)(nl - p) : l) + 1;
				continue;
			}
			got = config_value(&cfg, s, sl, &gl);
			int want_off = vl == 1 && *v == 'n';
			int ok = want_off ? !got || (gl == 1 && *got == 'n')
					  : got && gl == vl &&
						    !memcmp(got, v, vl);
			if (!ok) {
				char *sym = xstrndup(s, sl);
				int def =
					got ? 1 : kconfig_defines(src_dir, sym);
				if (def == 0)
					ret = err_set(ERR_INVALID,
						      "%s:%d: CONFIG_%s=%.*s: "
						      "unknown symbol (no "
						      "Kconfig file defines "
						      "it)",
						      path, lineno, sym,
						      (int)vl, v);
				else if (!got)
					ret = err_set(ERR_INVALID,
						      "%s:%d: CONFIG_%s=%.*s: "
						      "not in the resulting "
						      ".config: its "
						      "dependencies are not "
						      "met",
						      path, lineno, sym,
						      (int)vl, v);
				else
					ret = err_set(ERR_INVALID,
						      "%s:%d: CONFIG_%s=%.*s: "
						      "olddefconfig made it "
						      "%.*s (a dependency or "
						      "select overrides the "
						      "fragment)",
						      path, lineno, sym,
						      (int)vl, v, (int)gl, got);
				free(sym);
				free(path);
				goto out;
			}
			p += (nl ? (size_t)(nl - p) : l) + 1;
		}
		free(path);
	}
	ret = 0;
out:
	kconfig_fragments_free(frags, nfrags);
	strbuf_release(&cfg);
	strbuf_release(&frag);
	return ret;
}
