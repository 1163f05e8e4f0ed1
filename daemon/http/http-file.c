/* http-file.c: the dashboard's files, from web_root or compiled in. */
#include "http.h"
#include "http-int.h"

#include "strbuf.h"

#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct ctype {
	const char *ext, *type;
};
static const struct ctype ctypes[] = {
	{ ".html", "text/html; charset=utf-8" },
	{ ".js", "text/javascript; charset=utf-8" },
	{ ".css", "text/css; charset=utf-8" },
	{ ".svg", "image/svg+xml" },
	{ ".json", "application/json" },
};

static const char *content_type_of(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < sizeof(ctypes) / sizeof(ctypes[0]); i++) {
		size_t e = strlen(ctypes[i].ext);
		if (n > e && !strcmp(name + n - e, ctypes[i].ext))
			return ctypes[i].type;
	}
	return NULL;
}

/*
 * Serves web/NAME: from web_root on disk when configured (editing the
 * dashboard without rebuilding), else from the copy compiled in. Names are
 * one path component of safe characters: nothing can leave web/.
 */
struct MHD_Response *http_static_file(struct http_server *s,
					struct req_ctx *c, const char *url)
{
	struct api_response *res = &c->res;
	const char *name = url + 1;
	const char *type;
	size_t len;

	if (!strcmp(url, "/"))
		name = "index.html";
	if (*url != '/' || !*name || strlen(name) > 64 ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") != strlen(name) ||
	    name[0] == '.' || !(type = content_type_of(name))) {
		api_error(res, 404, "not-found", "%s: no such file", url);
		return NULL;
	}
	if (s->app->bc.cfg.web_root && *s->app->bc.cfg.web_root) {
		char *path = xstrfmt("%s/%s", s->app->bc.cfg.web_root, name);
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		free(path);
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (fd >= 0)
				close(fd);
			api_error(res, 404, "not-found", "%s: no such file",
				  url);
			return NULL;
		}
		res->status = 200;
		res->fd = fd;
		res->fd_size = st.st_size;
		res->content_type = type;
		return NULL;
	}
	char *path = xstrfmt("web/%s", name);
	const struct embedded_file *f = embed_find(path, &len);
	free(path);
	if (!f) {
		api_error(res, 404, "not-found", "%s: no such file", url);
		return NULL;
	}
	res->status = 200;
	res->content_type = type;
	/* Made once (and compressed once) for the server's lifetime. */
	struct MHD_Response *r = NULL;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < STATIC_MAX; i++) {
		struct static_resp *e = &s->statics[i];
		if (e->f && e->f != f)
			continue;
		if (!e->f) {
			unsigned long long tag = http_hash_of(f->start, len);
			strbuf_add(&res->body, f->start, len);
			if (!(e->r = http_make_responses(c, GZIP_LEVEL_STATIC,
						    &e->rz)))
				break;
			http_set_etag(e->r, tag, 0);
			if (e->rz)
				http_set_etag(e->rz, tag, 1);
			http_etag_of(e->etag[0], sizeof(e->etag[0]), tag, 0);
			http_etag_of(e->etag[1], sizeof(e->etag[1]), tag, 1);
			e->f = f;
		}
		r = c->gzip && e->rz ? e->rz : e->r;
		c->etag = e->etag[c->gzip && e->rz];
		break;
	}
	pthread_mutex_unlock(&s->lock);
	if (!r && !res->body.len)
		strbuf_add(&res->body, f->start, len); /* all slots taken */
	return r;
}
