/* fuzz-http.c: the HTTP request path (request line, headers, query, JSON and patch bodies) of a real server. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "app.h"
#include "db.h"
#include "err.h"
#include "http.h"
#include "strbuf.h"
#include "token.h"
#include "../tests/unit/net.h"

/*
 * Each input is sent as it is, as one client's bytes, to http_start()'s
 * server on loopback (libmicrohttpd's threads, the route table, the
 * writer thread, a real SQLite store in a temp dir), and the answer is
 * read to its end. "@TOKEN@" in an input becomes a valid write token, so
 * that the fuzzer reaches the bodies of the writes. Whatever comes back
 * must be HTTP (or nothing: the connection closed); a crash or a
 * sanitizer report is the finding.
 */

static struct app app = { .bc.actor = "fuzz" };
static struct http_server *srv;
static char dir[] = "/tmp/fuzz-http.XXXXXX";
static char *secret;
static int port;

static void teardown(void)
{
	char cmd[64];

	http_stop(srv);
	db_close(app.bc.db);
	config_free(&app.bc.cfg);
	free(secret);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
}

static void setup(void)
{
	if (!mkdtemp(dir))
		abort();
	config_load(&app.bc.cfg, NULL);
	free(app.bc.cfg.db);
	app.bc.cfg.db = xstrfmt("%s/fuzz.db", dir);
	free(app.bc.cfg.var_dir);
	app.bc.cfg.var_dir = xstrfmt("%s/var", dir);
	free(app.bc.cfg.branches[0].tree_dir);
	app.bc.cfg.branches[0].tree_dir = xstrfmt("%s/linux", dir);
	config_select_branch(&app.bc.cfg, NULL);
	port = free_port();
	free(app.bc.cfg.listen);
	app.bc.cfg.listen = xstrfmt("127.0.0.1:%d", port);
	app.bc.cfg.max_patch_bytes = 65536;
	app.bc.cfg.http_timeout = 1;
	app.bc.cfg.http_request_timeout = 1;
	/* the corpus's requests say "Host: x" */
	free(app.bc.cfg.http_hosts);
	app.bc.cfg.http_hosts = xstrdup("x");
	if (branch_ctx_open_db(&app.bc) < 0 ||
	    token_add(app.bc.db, "fuzz", "fuzz", &secret) < 0 ||
	    http_start(&app, &srv) < 0) {
		fprintf(stderr, "fuzz-http: %s\n", err_msg());
		abort();
	}
	atexit(teardown);
}

/* The input with @TOKEN@ replaced by the token. */
static void request_of(struct strbuf *out, const uint8_t *data, size_t size)
{
	static const char mark[] = "@TOKEN@";
	const char *p = (const char *)data, *end = p + size, *m;

	while ((m = memmem(p, (size_t)(end - p), mark, sizeof(mark) - 1))) {
		strbuf_add(out, p, (size_t)(m - p));
		strbuf_addstr(out, secret);
		p = m + sizeof(mark) - 1;
	}
	strbuf_add(out, p, (size_t)(end - p));
}

/*
 * Whether ans holds a whole answer (after any 100 Continue). The server
 * may keep the connection open after it (keep-alive), so the fuzzer does
 * not wait for it to close.
 */
static int answer_complete(const struct strbuf *ans, int head)
{
	const char *p = ans->buf, *end = ans->buf + ans->len, *sep, *cl;
	int status;

	for (;;) {
		if (!(sep = memmem(p, (size_t)(end - p), "\r\n\r\n", 4)))
			return 0;
		status = end - p > 12 ? atoi(p + 9) : 0;
		if (status != 100)
			break;
		p = sep + 4;
	}
	if (head || status == 204 || status == 304)
		return 1;
	cl = memmem(p, (size_t)(sep - p), "Content-Length: ", 16);
	return cl && (size_t)(end - (sep + 4)) >= strtoull(cl + 16, NULL, 10);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 10 };
	struct strbuf req = STRBUF_INIT, ans = STRBUF_INIT;
	char buf[16384];
	ssize_t n;
	int fd;

	if (!srv)
		setup();
	request_of(&req, data, size);
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		abort(); /* the server must always be there */
	/* The server may answer and close before it has read everything. */
	for (size_t off = 0; off < req.len; off += (size_t)n)
		if ((n = send(fd, req.buf + off, req.len - off, MSG_NOSIGNAL)) <= 0)
			break;
	shutdown(fd, SHUT_WR); /* no more: an unfinished request ends here */
	while (!answer_complete(&ans, size > 5 && !memcmp(data, "HEAD ", 5)) &&
	       (n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&ans, buf, (size_t)n);
	close(fd);
	if (ans.len && (ans.len < 12 || strncmp(ans.buf, "HTTP/1.", 7) ||
			ans.buf[9] < '1' || ans.buf[9] > '5')) {
		fprintf(stderr, "fuzz-http: not an HTTP answer: %.80s\n",
			ans.buf);
		abort();
	}
	strbuf_release(&req);
	strbuf_release(&ans);
	err_clear();
	return 0;
}
