/* t-http.c: http_start() in-process (ASan+UBSan): routes, credentials, limits, the answer cache, threads. */
#include "api.h"
#include "app.h"
#include "db.h"
#include "err.h"
#include "file.h"
#include "http.h"
#include "net.h"
#include "strbuf.h"
#include "tap.h"
#include "token.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static int port;

struct answer {
	int status;
	struct strbuf head, body;
};

static void answer_release(struct answer *a)
{
	strbuf_release(&a->head);
	strbuf_release(&a->body);
}

/* Sends raw bytes on a new connection and reads the answer to its end. */
static int exchange(const char *req, size_t len, struct answer *a)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct timeval tv = { .tv_sec = 10 };
	struct strbuf all = STRBUF_INIT;
	char buf[65536];
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char *sep;

	strbuf_init(&a->head, 0);
	strbuf_init(&a->body, 0);
	a->status = -1;
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	if (write(fd, req, len) < 0) {
		/* the server may answer and close before taking it all */
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&all, buf, (size_t)n);
	close(fd);
	if (all.len > 12 && !strncmp(all.buf, "HTTP/1.1 ", 9))
		a->status = atoi(all.buf + 9);
	if ((sep = strstr(all.buf, "\r\n\r\n"))) {
		strbuf_add(&a->head, all.buf, (size_t)(sep - all.buf));
		strbuf_add(&a->body, sep + 4,
			   all.len - (size_t)(sep + 4 - all.buf)); /* gzip: NULs */
	}
	strbuf_release(&all);
	return a->status;
}

static int request(const char *method, const char *path, const char *headers,
		   const char *body, struct answer *a)
{
	struct strbuf r = STRBUF_INIT;
	int ret;

	strbuf_addf(&r, "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s",
		    method, path, headers ? headers : "");
	if (body)
		strbuf_addf(&r, "Content-Length: %zu\r\n\r\n%s", strlen(body), body);
	else
		strbuf_addstr(&r, "\r\n");
	ret = exchange(r.buf, r.len, a);
	strbuf_release(&r);
	return ret;
}

static int get(const char *path, struct answer *a)
{
	return request("GET", path, NULL, NULL, a);
}

static const char patch_mail[] =
	"From: Jane Dev <jane@example.org>\n"
	"Date: Mon, 1 Sep 2025 10:00:00 +0000\n"
	"Subject: [PATCH 6.1] lib: fix line 7\n"
	"Message-Id: <t-http-1@example.org>\n"
	"\n"
	"Line 7 was wrong.\n"
	"\n"
	"Fixes: 0123456789ab (\"lib: add lines\")\n"
	"Signed-off-by: Jane Dev <jane@example.org>\n"
	"---\n"
	"diff --git a/lib.c b/lib.c\n"
	"index 1111111..2222222 100644\n"
	"--- a/lib.c\n"
	"+++ b/lib.c\n"
	"@@ -6,3 +6,3 @@\n"
	" line 6\n"
	"-line 7\n"
	"+line seven\n"
	" line 8\n";

/* A gzip body inflated into out; 0 or -1. */
static int gunzip(const struct strbuf *in, struct strbuf *out)
{
	z_stream z = { 0 };
	unsigned char buf[16384];
	int rc;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -1;
	z.next_in = (unsigned char *)in->buf;
	z.avail_in = (uInt)in->len;
	do {
		z.next_out = buf;
		z.avail_out = sizeof(buf);
		rc = inflate(&z, Z_NO_FLUSH);
		strbuf_add(out, buf, sizeof(buf) - z.avail_out);
	} while (rc == Z_OK);
	inflateEnd(&z);
	return rc == Z_STREAM_END && !z.avail_in ? 0 : -1;
}

/* GET path with and without Accept-Encoding: ae; 1 if gzip came and matches. */
static int gzipped_same(const char *path, const char *ae)
{
	struct answer plain, z;
	struct strbuf h = STRBUF_INIT, out = STRBUF_INIT;
	int ret = -1;

	strbuf_addf(&h, "Accept-Encoding: %s\r\n", ae);
	if (get(path, &plain) == 200 &&
	    request("GET", path, h.buf, NULL, &z) == 200) {
		int enc = strstr(z.head.buf, "Content-Encoding: gzip") != NULL;
		int vary = strstr(z.head.buf, "Vary: Accept-Encoding") &&
			   strstr(plain.head.buf, "Vary: Accept-Encoding");
		if (!enc)
			ret = z.body.len == plain.body.len &&
					      !memcmp(z.body.buf, plain.body.buf,
						      plain.body.len)
				      ? 0
				      : -1;
		else
			ret = vary && !strstr(plain.head.buf,
					      "Content-Encoding") &&
					      z.body.len < plain.body.len &&
					      !gunzip(&z.body, &out) &&
					      out.len == plain.body.len &&
					      !memcmp(out.buf, plain.body.buf,
						      out.len)
				      ? 1
				      : -1;
		answer_release(&z);
	}
	answer_release(&plain);
	strbuf_release(&h);
	strbuf_release(&out);
	return ret;
}

static void test_accept_encoding(void)
{
	static const struct {
		const char *v;
		int want;
	} cases[] = {
		{ NULL, 0 },
		{ "", 0 },
		{ "gzip", 1 },
		{ "GZIP", 1 },
		{ "x-gzip", 1 },
		{ "gzip, deflate, br", 1 },
		{ "br,gzip", 1 },
		{ "deflate, br", 0 },
		{ "identity", 0 },
		{ "*", 1 },
		{ "*;q=0", 0 },
		{ "gzip;q=0", 0 },
		{ "gzip; q=0.000", 0 },
		{ "gzip;q=0.001", 1 },
		{ "gzip;q=1", 1 },
		{ "gzip;q=1.000", 1 },
		{ "gzip;q=1.5", 0 },
		{ "gzip;q=abc", 0 },
		{ "gzip;q=", 0 },
		{ "gzip;level=1", 0 },
		{ "gzip;q=0, *", 0 },
		{ "*, gzip;q=0", 0 },
		{ "br;q=1, *;q=0.5", 1 },
		{ "gzipx", 0 },
		{ "xgzip", 0 },
		{ " , ,gzip , ", 1 },
		{ "gzip\t;\tq=0.5", 1 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		is_int(http_accepts_gzip(cases[i].v), cases[i].want,
		       "Accept-Encoding: %s", cases[i].v ? cases[i].v : "(none)");
}

static int loopback4(const char *ip)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	inet_pton(AF_INET, ip, &a.sin_addr);
	return http_is_loopback((struct sockaddr *)&a);
}

static int loopback6(const char *ip)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };

	inet_pton(AF_INET6, ip, &a.sin6_addr);
	return http_is_loopback((struct sockaddr *)&a);
}

/*
 * read_access against where a read comes from. A test cannot connect from
 * an address that is not loopback (network tests stay on loopback), so
 * the address is classified here and the decision taken by api_begin()
 * on a request as http.c makes it.
 */
static void test_read_access(struct app *app)
{
	static const char *const modes[] = { "loopback", "open", "token" };
	/* [mode][loopback peer]: answered without a token? */
	static const int open_read[3][2] = { { 0, 1 }, { 1, 1 }, { 0, 0 } };
	char *saved = app->bc.cfg.read_access;

	ok(loopback4("127.0.0.1") && loopback4("127.255.0.9") &&
		   loopback6("::1") && loopback6("::ffff:127.0.0.1"),
	   "127.0.0.0/8, ::1 and ::ffff:127.0.0.1 are loopback");
	ok(!loopback4("10.0.0.1") && !loopback4("0.0.0.0") &&
		   !loopback4("128.0.0.1") && !loopback6("::ffff:10.0.0.1") &&
		   !loopback6("2001:db8::1") && !loopback6("::") &&
		   !http_is_loopback(NULL),
	   "10.0.0.1, 0.0.0.0, 128.0.0.1, ::ffff:10.0.0.1, 2001:db8::1, :: are not");
	for (int m = 0; m < 3; m++)
		for (int lo = 0; lo < 2; lo++) {
			struct api_request req = { .method = "GET",
						   .path = "/patches",
						   .loopback = lo,
						   .app = *app };
			struct api_response res;
			int r;
			req.app.bc.cfg.read_access = (char *)modes[m];
			api_response_init(&res);
			r = api_begin(&req, &res);
			if (open_read[m][lo])
				ok(r == 0, "read_access = %s, a read from %s: no token needed",
				   modes[m], lo ? "loopback" : "another address");
			else
				ok(r != 0 && res.status == 401 && strstr(res.body.buf, "read_access"),
				   "read_access = %s, a read from %s: 401, a token needed (%d)",
				   modes[m], lo ? "loopback" : "another address", res.status);
			free(req.actor);
			api_response_release(&res);
		}
	app->bc.cfg.read_access = saved;
}

/* The value of header name in an answer's head, into out ("" if none). */
static void header_of(const struct answer *a, const char *name, char *out, size_t size)
{
	const char *h = a->head.buf ? a->head.buf : "";
	size_t n = strlen(name);

	out[0] = '\0';
	for (const char *l = h; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncasecmp(l, name, n) && l[n] == ':') {
			const char *v = l + n + 1, *e = v;
			while (*v == ' ')
				v++;
			for (e = v; *e && *e != '\r' && *e != '\n'; e++)
				;
			snprintf(out, size, "%.*s", (int)(e - v), v);
			return;
		}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Sends raw request bytes (a printf format) and reads to the end; how
 * long the answer took in *secs. The answer's body holds everything after
 * the first head, so a second answer on the connection shows there.
 */
__attribute__((format(printf, 3, 4)))
static int exchange_f(struct answer *a, double *secs, const char *fmt, ...)
{
	struct strbuf r = STRBUF_INIT;
	double t0 = now_s();
	va_list ap;
	int ret;

	va_start(ap, fmt);
	strbuf_vaddf(&r, fmt, ap);
	va_end(ap);
	ret = exchange(r.buf, r.len, a);
	if (secs)
		*secs = now_s() - t0;
	strbuf_release(&r);
	return ret;
}

/*
 * Bodies and framing, checked on the headers (issue 11, items 1 and 8):
 * a body on a route that takes none is refused before it is read, as are
 * ambiguous lengths; the connection is closed after such an answer, so a
 * request smuggled behind it is never served.
 */
static void test_framing(const char *auth)
{
	struct answer a;
	double dt;

	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 999999\r\n\r\n"),
	       400, "GET with an 8 MB body announced: 400 from the headers");
	like(a.body.buf, "takes no body", "... the route takes no body");
	ok(dt < 1.0, "... at once, before any body (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "HEAD /api/v1/patches HTTP/1.1\r\nHost: localhost\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n"),
	       400, "HEAD with a chunked body: 400 from the headers");
	ok(dt < 1.0, "... at once (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, NULL, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n"
			  "Connection: close\r\nContent-Length: 5\r\n\r\nhello"),
	       400, "GET with a small body: 400 as well");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /app.js HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 999999\r\n\r\n"),
	       400, "a dashboard file with a body announced: 400");
	ok(dt < 1.0, "... at once (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/nope HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 999999\r\n\r\n"),
	       404, "an unknown route with a body: 404 (routed first)");
	ok(dt < 1.0, "... at once (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/patches/1/flag HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 999999\r\n\r\n"),
	       405, "a method the route does not take, with a body: 405");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "POST /api/v1/patches HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Type: text/plain\r\nContent-Length: 999999\r\n\r\n"),
	       401, "a write without a token, 1 MB announced: 401 before the body");
	ok(dt < 1.0, "... at once (%.2f s)", dt);
	answer_release(&a);

	is_int(exchange_f(&a, &dt, "POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: localhost\r\n%s"
			  "Content-Type: application/json\r\n"
			  "Content-Length: 2\r\nContent-Length: 40\r\n\r\n{}"
			  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n", auth),
	       400, "two different Content-Length headers: 400");
	like(a.body.buf, "Content-Length", "... saying so");
	ok(!strstr(a.body.buf, "HTTP/1.1"), "... and the request behind it is not served");
	like(a.head.buf, "Connection: close", "... Connection: close");
	ok(dt < 1.0, "... the connection is closed at once (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: localhost\r\n%s"
			  "Content-Type: application/json\r\nContent-Length: 5\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
			  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n", auth),
	       400, "Content-Length with chunked: 400");
	like(a.body.buf, "Transfer-Encoding", "... saying so");
	ok(!strstr(a.body.buf, "HTTP/1.1"), "... and the request behind it is not served");
	ok(dt < 1.0, "... the connection is closed at once (%.2f s)", dt);
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
			  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n"),
	       400, "a GET with Content-Length and chunked: 400");
	ok(!strstr(a.body.buf, "HTTP/1.1"), "... and the request behind it is not served");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n"
			  "Content-Length: 0\r\nContent-Length: 0\r\n\r\n"
			  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
	       200, "the same Content-Length twice (0): served");
	like(a.body.buf, "HTTP/1.1 200", "... and so is the next request on the connection");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n"
			  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
	       200, "two GETs on one connection: the first answered");
	like(a.body.buf, "HTTP/1.1 200", "... and the second (keep-alive holds)");
	answer_release(&a);
}

/* Sends len raw bytes (NULs allowed); the answer in a, the time in *secs. */
static int exchange_raw(struct answer *a, double *secs, const char *req,
			size_t len)
{
	double t0 = now_s();
	int ret = exchange(req, len, a);

	*secs = now_s() - t0;
	return ret;
}

/*
 * The last HTTP quirks (issue 23, items 3 to 6), each answered at once
 * with one clean answer and the connection closed: a request behind it
 * on the connection is never served.
 */
static void test_header_quirks(const char *auth)
{
	static const char *const tes[] = { "xchunked", "chunked, identity",
					   "identity", "gzip, chunked" };
	static const char *const lengths[] = { "2, 2", "-1", "+2", "0x2" };
	struct answer a;
	double dt;

	for (size_t i = 0; i < sizeof(tes) / sizeof(tes[0]); i++) {
		is_int(exchange_f(&a, &dt, "POST /api/v1/candidates HTTP/1.1\r\n"
				  "Host: localhost\r\n%sTransfer-Encoding: %s\r\n\r\n"
				  "2\r\n{}\r\n0\r\n\r\n", auth, tes[i]),
		       501, "Transfer-Encoding: %s: 501", tes[i]);
		ok(dt < 2.0, "... at once (%.2f s), not at the idle timeout", dt);
		like(a.body.buf, "only a lone 'chunked'", "... saying what is understood");
		answer_release(&a);
	}
	is_int(exchange_f(&a, &dt, "POST /api/v1/candidates HTTP/1.1\r\n"
			  "Host: localhost\r\n%sTransfer-Encoding: chunked\r\n"
			  "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", auth),
	       501, "two Transfer-Encoding headers: 501");
	answer_release(&a);
	for (size_t i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		is_int(exchange_f(&a, &dt, "POST /api/v1/candidates HTTP/1.1\r\n"
				  "Host: localhost\r\n%sContent-Type: application/json\r\n"
				  "Content-Length: %s\r\n\r\n{}"
				  "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n\r\n",
				  auth, lengths[i]),
		       400, "Content-Length: %s: 400", lengths[i]);
		ok(!strstr(a.body.buf, "HTTP/1.1"),
		   "... one answer: no second header block in its body");
		like(a.body.buf, "\"error\":\"bad-request\"", "... a JSON error");
		ok(dt < 2.0, "... and the connection closed at once (%.2f s)", dt);
		answer_release(&a);
	}
	{
		struct strbuf r = STRBUF_INIT;
		/* "Bearer TOKEN<NUL>junk": the token is not taken */
		strbuf_addstr(&r, "POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: localhost\r\n");
		strbuf_add(&r, auth, strlen(auth) - 2);
		strbuf_add(&r, "\0junk\r\n", 7);
		strbuf_addstr(&r, "Content-Type: application/json\r\nContent-Length: 16\r\n\r\n"
				  "{\"reason\":\"nul\"}");
		is_int(exchange_raw(&a, &dt, r.buf, r.len), 400,
		       "Authorization: Bearer TOKEN<NUL>junk: 400");
		like(a.body.buf, "NUL", "... naming the NUL");
		answer_release(&a);
		strbuf_release(&r);
		strbuf_addstr(&r, "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\nX-Note: a");
		strbuf_add(&r, "\0b\r\n\r\n", 6);
		is_int(exchange_raw(&a, &dt, r.buf, r.len), 400, "a NUL in any header's value: 400");
		answer_release(&a);
		strbuf_release(&r);
	}
	is_int(get("/index.html%00.js", &a), 400, "GET /index.html%%00.js: 400, not index.html");
	ok(!strstr(a.body.buf, "<html"), "... no page");
	answer_release(&a);
	is_int(get("/api/v1/patches?branch=6.1%00evil", &a), 400,
	       "?branch=6.1%%00evil: 400, not taken as 6.1");
	answer_release(&a);
	is_int(get("/api/v1/patches?branch=6.1", &a), 200, "?branch=6.1 alone: 200");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "POST /api/v1/patches/1/flag HTTP/1.1\r\nHost: localhost\r\n"
			  "%sAuthorization: Bearer nope\r\nContent-Type: application/json\r\n"
			  "Content-Length: 16\r\n\r\n{\"reason\":\"two\"}", auth),
	       400, "two Authorization headers: 400, not the first one's token");
	like(a.body.buf, "2 Authorization headers", "... saying so");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/mail HTTP/1.1\r\nHost: rebound.example\r\n"
			  "Connection: close\r\n\r\n"),
	       421, "Host: rebound.example (DNS rebinding): 421");
	ok(!strstr(a.body.buf, "\"mail\""), "... the outbox is not read");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET / HTTP/1.1\r\nHost: rebound.example:8080\r\n"
			  "Connection: close\r\n\r\n"),
	       421, "... the dashboard too");
	answer_release(&a);
	{
		static const char *const hosts[] = { "localhost", "LOCALHOST:8080",
			"127.0.0.1", "127.0.0.2:80", "[::1]:8080", "localhost." };
		for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
			is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\n"
					  "Host: %s\r\nConnection: close\r\n\r\n", hosts[i]),
			       200, "Host: %s: served", hosts[i]);
			answer_release(&a);
		}
	}
	/* RFC 9112 3.2: Host is required of HTTP/1.1, not of HTTP/1.0 */
	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.1\r\n"
			  "Connection: close\r\n\r\n"),
	       400, "HTTP/1.1 without Host: 400");
	like(a.body.buf, "needs a Host header", "... saying so");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n"),
	       400, "... the dashboard too");
	answer_release(&a);
	is_int(exchange_f(&a, &dt, "GET /api/v1/health HTTP/1.0\r\n\r\n"),
	       200, "HTTP/1.0 without Host: served");
	like(a.body.buf, "\"ok\":true", "... the health answer");
	answer_release(&a);
	ok(http_host_allowed("0.0.0.0:8080", "stableq.example.org, build1",
			     "stableq.example.org:8080") &&
	   http_host_allowed("*:8080", "stableq.example.org build1", "BUILD1") &&
	   !http_host_allowed("*:8080", "stableq.example.org", "example.org") &&
	   http_host_allowed("192.0.2.7:8080", "", "192.0.2.7:8080") &&
	   !http_host_allowed("192.0.2.7:8080", "", "192.0.2.8"),
	   "http_hosts and the listen address name the hosts served");
}

/*
 * Token scopes (issue 23, item 7), per route from the route table: read
 * tokens read, write tokens also import, flag and override, admin tokens
 * also revert and release mail.
 */
static void test_scopes(sqlite3 *db, const char *admin_auth)
{
	char *r = NULL, *w = NULL;
	struct strbuf ra = STRBUF_INIT, wa = STRBUF_INIT, aa = STRBUF_INIT;
	struct answer a;
	static const char json[] = "Content-Type: application/json\r\n";

	ok(token_add_scoped(db, "bot", TOKEN_READ, "test", &r) == 0 &&
		   token_add_scoped(db, "ci-bot", TOKEN_WRITE, "test", &w) == 0,
	   "a read token and a write token");
	strbuf_addf(&ra, "Authorization: Bearer %s\r\n%s", r, json);
	strbuf_addf(&wa, "Authorization: Bearer %s\r\n%s", w, json);
	strbuf_addf(&aa, "%s%s", admin_auth, json);
	is_int(request("GET", "/api/v1/patches/1", ra.buf, NULL, &a), 200,
	       "read token: GET /patches/1");
	answer_release(&a);
	is_int(request("POST", "/api/v1/patches/1/flag", ra.buf,
		       "{\"reason\": \"from a bot\"}", &a),
	       403, "read token: POST /patches/1/flag is forbidden");
	like(a.body.buf, "token 'bot' has scope read: POST /patches/{id}/flag needs write",
	     "... saying which scope it needs");
	answer_release(&a);
	{
		struct strbuf wt = STRBUF_INIT;
		strbuf_addf(&wt, "Authorization: Bearer %s\r\nContent-Type: text/plain\r\n", w);
		is_int(request("POST", "/api/v1/patches", wt.buf, patch_mail, &a), 200,
		       "write token: POST /patches (a patch known already)");
		answer_release(&a);
		strbuf_release(&wt);
	}
	is_int(request("POST", "/api/v1/patches/1/flag", wa.buf,
		       "{\"reason\": \"from a tester\"}", &a),
	       409, "write token: POST /patches/1/flag passes the scope (409: flagged already)");
	answer_release(&a);
	is_int(request("POST", "/api/v1/patches/1/revert", wa.buf,
		       "{\"dry_run\": true}", &a),
	       403, "write token: POST /patches/1/revert is forbidden");
	like(a.body.buf, "needs admin", "... it needs admin");
	answer_release(&a);
	is_int(request("POST", "/api/v1/mail/release", wa.buf, "{}", &a), 403,
	       "write token: POST /mail/release is forbidden");
	answer_release(&a);
	is_int(request("POST", "/api/v1/patches/1/revert", aa.buf,
		       "{\"dry_run\": true}", &a),
	       200, "admin token: POST /patches/1/revert (dry run)");
	answer_release(&a);
	is_int(get("/api/v1/routes", &a), 200, "GET /routes");
	like(a.body.buf, "\"path\":\"/patches/{id}/revert\",\"write\":true,\"scope\":\"admin\"",
	     "... says the scope each route needs");
	answer_release(&a);
	strbuf_release(&ra);
	strbuf_release(&wa);
	strbuf_release(&aa);
	free(r);
	free(w);
}

/* A connection from a given loopback address (127.0.0.X), -1 if refused. */
static int connect_from(const char *ip)
{
	struct sockaddr_in sa = { .sin_family = AF_INET }, me = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	inet_pton(AF_INET, ip, &me.sin_addr);
	sa.sin_port = htons((unsigned short)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 once the server has closed fd (EOF or reset), without waiting. */
static int closed_by_server(int fd)
{
	char buf[512];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/*
 * Slow clients (issue 11, item 2): eight connections from 127.0.0.2 and
 * two from 127.0.0.3 send one header line every 0.3 s, so the idle
 * timeout (2 s) never fires. One address holds at most three quarters of
 * the connections (6 of 8); the two from 127.0.0.3 fill the server, yet a
 * client from 127.0.0.1 is served: it takes the place of the one that has
 * trickled the longest. Each is cut off when its request has not arrived
 * within http_request_timeout (3 s). Bounded: it gives up after 6 s.
 */
static void test_slow_clients(void)
{
	enum { NSLOW = 10 };
	const char *head = "GET /api/v1/health HTTP/1.1\r\nHost: localhost\r\n";
	int fds[NSLOW], open_at_start = 0, tried = 0, all_closed = 0;
	double t0 = now_s(), dt = 0, closed_at = -1;
	struct answer a;

	for (int i = 0; i < NSLOW; i++) {
		fds[i] = connect_from(i < 8 ? "127.0.0.2" : "127.0.0.3");
		if (fds[i] >= 0 && write(fds[i], head, strlen(head)) < 0) {
		}
		if (i == 7)
			usleep(300000);
	}
	usleep(300000);
	for (int i = 0; i < 8; i++)
		open_at_start += fds[i] >= 0 && !closed_by_server(fds[i]);
	ok(open_at_start == 6, "8 slow connections from one address: %d kept (6: three quarters)",
	   open_at_start);
	ok(fds[8] >= 0 && fds[9] >= 0 && !closed_by_server(fds[8]) && !closed_by_server(fds[9]),
	   "2 more from another address: the server is full (8)");
	while (now_s() - t0 < 6.0 && !all_closed) {
		all_closed = 1;
		for (int i = 0; i < NSLOW; i++) {
			if (fds[i] < 0)
				continue;
			if (closed_by_server(fds[i])) {
				close(fds[i]);
				fds[i] = -1;
				continue;
			}
			all_closed = 0;
			if (send(fds[i], "X-Slow: 1\r\n", 11, MSG_NOSIGNAL) < 0) {
			}
		}
		if (all_closed) {
			closed_at = now_s() - t0;
		} else if (!tried && now_s() - t0 > 1.3) {
			double t1 = now_s();
			int served = get("/api/v1/health", &a) == 200;
			tried = 1;
			dt = now_s() - t1;
			answer_release(&a);
			ok(served && dt < 1.0,
			   "a client from 127.0.0.1 is served though they fill the server (%.2f s)", dt);
		} else {
			usleep(300000);
		}
	}
	ok(all_closed && closed_at >= 2.5,
	   "... each is cut off by http_request_timeout (3 s) though it keeps sending: %.1f s",
	   closed_at);
	for (int i = 0; i < NSLOW; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

struct worker {
	int ok, n;
};

static void *hammer(void *arg)
{
	struct worker *w = arg;
	static const char *const paths[] = { "/api/v1/patches?limit=5",
					     "/api/v1/health",
					     "/api/v1/patches/1",
					     "/api/v1/events?limit=3",
					     "/api/v1/metrics", "/app.js" };

	for (int i = 0; i < w->n; i++) {
		struct answer a;
		if (get(paths[i % 6], &a) == 200)
			w->ok++;
		answer_release(&a);
	}
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/t-http.XXXXXX", *secret = NULL;
	struct app app = { .bc.actor = "test" };
	struct http_server *srv = NULL;
	struct answer a;
	char auth[128], listen[64];
	sqlite3 *db;

	if (!mkdtemp(dir))
		return 1;
	test_accept_encoding();
	/* no tree: what the API imports is not checked (a var/linux of
	 * the checkout running the tests must not change that) */
	{
		char *conf = xstrfmt("%s/stableq.conf", dir);
		char *text = xstrfmt("tree_dir = %s/no-tree\n", dir);

		if (write_file_atomic(conf, text, strlen(text)) < 0 ||
		    config_load(&app.bc.cfg, conf) < 0)
			return 1;
		free(conf);
		free(text);
	}
	free(app.bc.cfg.db);
	app.bc.cfg.db = xstrfmt("%s/t.db", dir);
	free(app.bc.cfg.var_dir);
	app.bc.cfg.var_dir = xstrfmt("%s/var", dir);
	port = free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	free(app.bc.cfg.listen);
	app.bc.cfg.listen = xstrdup(listen);
	app.bc.cfg.max_patch_bytes = 4096;
	app.bc.cfg.http_timeout = 2;
	ok(branch_ctx_open_db(&app.bc) == 0, "the store");
	ok(token_add(app.bc.db, "tester", "test", &secret) == 0, "a token");
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s\r\n", secret);

	test_read_access(&app);
	ok(http_start(&app, &srv) == 0, "http_start on %s", listen);
	{
		struct http_server *again = NULL;
		ok(http_start(&app, &again) < 0 && !again,
		   "a second server on the same address fails: %s", err_msg());
	}

	is_int(get("/api/v1/health", &a), 200, "GET /health");
	like(a.body.buf, "\"ok\":true", "... ok");
	like(a.head.buf, "Content-Type: application/json", "... JSON");
	answer_release(&a);
	is_int(get("/api/v1/patches", &a), 200, "GET /patches");
	like(a.body.buf, "\"total\":0", "... empty");
	answer_release(&a);

	is_int(request("POST", "/api/v1/patches", "Content-Type: text/plain\r\n",
		       patch_mail, &a),
	       401, "POST /patches without a token");
	like(a.head.buf, "WWW-Authenticate: Bearer", "... asks for one");
	answer_release(&a);
	{
		struct strbuf h = STRBUF_INIT;
		strbuf_addf(&h, "%sContent-Type: text/plain\r\n", auth);
		is_int(request("POST", "/api/v1/patches", h.buf, patch_mail, &a), 201,
		       "POST /patches with the token");
		like(a.body.buf, "\"added\":1", "... added");
		answer_release(&a);
		is_int(request("POST", "/api/v1/patches", h.buf, patch_mail, &a), 200,
		       "... again: a duplicate");
		answer_release(&a);
		is_int(request("POST", "/api/v1/patches", h.buf, "no patch here\n", &a),
		       422, "not a patch: 422");
		like(a.body.buf, "\"error\":\"invalid-patch\"", "... invalid-patch");
		answer_release(&a);
		strbuf_release(&h);
	}

	/* The cache: the same read twice, then a change, then the read again. */
	is_int(get("/api/v1/patches/1", &a), 200, "GET /patches/1");
	like(a.body.buf, "\"state\":\"imported\"", "... imported");
	answer_release(&a);
	is_int(get("/api/v1/patches/1", &a), 200, "GET /patches/1 again (kept)");
	like(a.body.buf, "\"state\":\"imported\"", "... imported");
	answer_release(&a);
	{
		struct strbuf h = STRBUF_INIT;
		strbuf_addf(&h, "%sContent-Type: application/json\r\n", auth);
		is_int(request("POST", "/api/v1/patches/1/flag", h.buf,
			       "{\"reason\": \"broken in test\"}", &a),
		       200, "flag through the API");
		answer_release(&a);
		is_int(request("POST", "/api/v1/patches/1/flag", h.buf, "{\"reason\": 1}", &a),
		       400, "a reason of the wrong type");
		answer_release(&a);
		strbuf_release(&h);
	}
	is_int(get("/api/v1/patches/1", &a), 200, "GET /patches/1 after the flag");
	like(a.body.buf, "\"state\":\"broken\"", "... broken: the writer's change is seen");
	answer_release(&a);
	/* ETag: a client that has the answer gets 304 until the store changes */
	{
		char etag[64], etag2[64], cc[64], h[160];
		is_int(get("/api/v1/patches/1", &a), 200, "GET /patches/1 for its ETag");
		header_of(&a, "ETag", etag, sizeof(etag));
		header_of(&a, "Cache-Control", cc, sizeof(cc));
		ok(strlen(etag) == 18 && etag[0] == '"', "... ETag %s", etag);
		is_str(cc, "no-cache", "... Cache-Control: no-cache (ask again, with the ETag)");
		answer_release(&a);
		snprintf(h, sizeof(h), "If-None-Match: %s\r\n", etag);
		is_int(request("GET", "/api/v1/patches/1", h, NULL, &a), 304,
		       "If-None-Match: that ETag -> 304");
		ok(a.body.len == 0, "... no body");
		header_of(&a, "ETag", etag2, sizeof(etag2));
		is_str(etag2, etag, "... the same ETag");
		answer_release(&a);
		snprintf(h, sizeof(h), "If-None-Match: \"x\", W/%s\r\n", etag);
		is_int(request("GET", "/api/v1/patches/1", h, NULL, &a), 304,
		       "... in a list, weak (W/): 304");
		answer_release(&a);
		is_int(request("GET", "/api/v1/patches/1", "If-None-Match: \"0000000000000000\"\r\n",
			       NULL, &a), 200, "another ETag -> 200");
		answer_release(&a);
		request("GET", "/api/v1/openapi.json", "Accept-Encoding: gzip\r\n", NULL, &a);
		header_of(&a, "ETag", etag2, sizeof(etag2));
		like(etag2, "-gz\"", "the gzipped form has an ETag of its own (%s)", etag2);
		answer_release(&a);
		is_int(get("/api/v1/health", &a), 200, "GET /health");
		header_of(&a, "Cache-Control", cc, sizeof(cc));
		is_str(cc, "no-store", "... not cached: Cache-Control: no-store, no ETag");
		header_of(&a, "ETag", etag2, sizeof(etag2));
		is_str(etag2, "", "... (none)");
		answer_release(&a);
		/* the store changes: the old ETag no longer matches */
		ok(db_open(&db, app.bc.cfg.db) == 0, "another connection");
		db_exec(db, "UPDATE patches SET subject = 'changed for the ETag' WHERE id = 1", NULL);
		db_close(db);
		snprintf(h, sizeof(h), "If-None-Match: %s\r\n", etag);
		is_int(request("GET", "/api/v1/patches/1", h, NULL, &a), 200,
		       "after a change, the old ETag -> 200");
		like(a.body.buf, "changed for the ETag", "... with the new answer");
		header_of(&a, "ETag", etag2, sizeof(etag2));
		ok(strcmp(etag, etag2), "... and a new ETag");
		answer_release(&a);
		is_int(get("/app.js", &a), 200, "GET /app.js");
		header_of(&a, "ETag", etag, sizeof(etag));
		answer_release(&a);
		snprintf(h, sizeof(h), "If-None-Match: %s\r\n", etag);
		is_int(request("GET", "/app.js", h, NULL, &a), 304, "the dashboard's files too: 304");
		answer_release(&a);
	}
	/* a change by another process (here: another connection) */
	ok(db_open(&db, app.bc.cfg.db) == 0, "another connection");
	db_exec(db, "UPDATE patches SET subject = 'changed elsewhere' WHERE id = 1", NULL);
	db_close(db);
	is_int(get("/api/v1/patches?limit=5", &a), 200, "GET /patches");
	like(a.body.buf, "changed elsewhere", "... sees a change made by another connection");
	answer_release(&a);

	is_int(get("/api/v1/nope", &a), 404, "an unknown route");
	answer_release(&a);
	is_int(request("DELETE", "/api/v1/patches/1", NULL, NULL, &a), 405, "DELETE");
	like(a.head.buf, "Allow: GET, HEAD", "... Allow");
	answer_release(&a);
	is_int(get("/api/v1/patches?limit=0", &a), 400, "limit=0");
	answer_release(&a);
	{
		const char *big = "POST /api/v1/patches HTTP/1.1\r\nHost: localhost\r\n"
				  "Content-Type: text/plain\r\nContent-Length: 999999\r\n";
		struct strbuf r = STRBUF_INIT;
		strbuf_addf(&r, "%s%s\r\n", big, auth);
		is_int(exchange(r.buf, r.len, &a), 413, "a body over the limit, from its headers");
		answer_release(&a);
		strbuf_release(&r);
	}
	{
		struct strbuf r = STRBUF_INIT;
		strbuf_addf(&r, "POST /api/v1/patches HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
			       "Content-Type: text/plain\r\nTransfer-Encoding: chunked\r\n%s\r\n", auth);
		for (int i = 0; i < 6; i++) {
			strbuf_addf(&r, "400\r\n");
			for (int k = 0; k < 1024; k++)
				strbuf_addch(&r, 'x');
			strbuf_addstr(&r, "\r\n");
		}
		strbuf_addstr(&r, "0\r\n\r\n");
		is_int(exchange(r.buf, r.len, &a), 413, "a chunked body over the limit");
		answer_release(&a);
		strbuf_release(&r);
	}
	test_framing(auth);
	test_header_quirks(auth);
	test_scopes(app.bc.db, auth);
	/* Compression: both forms the same bytes, each with Vary. */
	is_int(gzipped_same("/api/v1/openapi.json", "gzip"), 1,
	       "GET /openapi.json with Accept-Encoding: gzip: gzipped, the same bytes");
	is_int(gzipped_same("/api/v1/openapi.json", "gzip"), 1,
	       "... again, from the answer cache");
	is_int(gzipped_same("/app.js", "br, gzip;q=0.8"), 1,
	       "GET /app.js (compiled in, compressed once): gzipped, the same bytes");
	is_int(gzipped_same("/app.js", "gzip;q=0"), 0,
	       "... gzip;q=0: as it is");
	is_int(gzipped_same("/api/v1/health", "gzip"), 0,
	       "GET /health (under 1 KB): as it is");
	is_int(request("GET", "/api/v1/nope", "Accept-Encoding: gzip\r\n", NULL, &a), 404,
	       "an error with Accept-Encoding: gzip");
	like(a.body.buf, "\"error\":\"not-found\"", "... plain JSON");
	answer_release(&a);

	is_int(get("/", &a), 200, "GET / (the dashboard)");
	like(a.body.buf, "app.js", "... index.html");
	answer_release(&a);
	is_int(get("/../../etc/passwd", &a), 404, "a path out of web/");
	answer_release(&a);

	{
		pthread_t th[8];
		struct worker w[8];
		int total = 0;
		for (int i = 0; i < 8; i++) {
			w[i] = (struct worker){ 0, 40 };
			pthread_create(&th[i], NULL, hammer, &w[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			total += w[i].ok;
		}
		is_int(total, 8 * 40, "8 threads x 40 mixed reads: all answered 200");
	}
	is_int(get("/api/v1/metrics", &a), 200, "GET /metrics");
	like(a.body.buf, "stableq_http_requests_total{code=\"200\"}", "... counts requests");
	answer_release(&a);

	http_stop(srv);
	ok(get("/api/v1/health", &a) < 0, "http_stop: nobody listens");
	answer_release(&a);
	/* SIGHUP does this: the same address again at once (TIME_WAIT sockets) */
	srv = NULL;
	ok(http_start(&app, &srv) == 0, "http_start again on the same address");
	is_int(get("/api/v1/patches/1", &a), 200, "... and it answers");
	answer_release(&a);
	http_stop(srv);

	/* Connection limits: 8 in all, 6 from one address (three quarters). */
	app.bc.cfg.http_connections = 8;
	app.bc.cfg.http_request_timeout = 3;
	srv = NULL;
	ok(http_start(&app, &srv) == 0, "http_start with http_connections = 8");
	{
		int fds[6], n = 0;
		struct sockaddr_in sa = { .sin_family = AF_INET };
		sa.sin_port = htons((unsigned short)port);
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		for (int i = 0; i < 6; i++) {
			fds[i] = socket(AF_INET, SOCK_STREAM, 0);
			n += connect(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == 0;
		}
		is_int(n, 6, "6 idle connections");
		usleep(200000);
		ok(get("/api/v1/health", &a) < 0, "a 7th from the same address is refused");
		answer_release(&a);
		for (int i = 0; i < 6; i++)
			close(fds[i]);
		usleep(300000);
		is_int(get("/api/v1/health", &a), 200, "once they are gone, requests are served");
		answer_release(&a);
	}
	test_slow_clients();
	http_stop(srv);

	free(secret);
	db_close(app.bc.db);
	config_free(&app.bc.cfg);
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd)) {
		}
	}
	return done_testing();
}
