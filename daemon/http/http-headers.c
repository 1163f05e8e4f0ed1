/* http-headers.c: a request's headers and URI checked before it is routed: framing, NULs, duplicates, Host. */
#include "http.h"
#include "http-int.h"
#include "log.h"
#include "strbuf.h"

#include <arpa/inet.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/*
 * Everything here is decided on the headers alone, before a route is
 * looked at or a body read, and every refusal closes the connection: a
 * proxy in front may read an ambiguous request otherwise than we do (RFC
 * 9112 6.3, 11.2), and a value cut at a NUL would be read as something it
 * is not (a token, a file name, a branch).
 */

/* What check_header() gathers. */
struct scan {
	const char *length;  /* the first Content-Length */
	int lengths_differ;  /* another Content-Length says otherwise */
	int te;              /* Transfer-Encoding headers */
	int te_chunked;      /* ... the one there is says exactly "chunked" */
	int auths;           /* Authorization headers */
	const char *nul;     /* the first header whose value holds a NUL */
	const char *host;    /* the Host header */
	int hosts;
	size_t seen;         /* the bytes of "key: value\r\n" lines */
};

/* "chunked", alone, in any case, with optional blanks around it. */
static int lone_chunked(const char *v, size_t n)
{
	while (n && (*v == ' ' || *v == '\t'))
		v++, n--;
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == 7 && !strncasecmp(v, "chunked", 7);
}

static enum MHD_Result check_header(void *cls, enum MHD_ValueKind kind,
				    const char *key, size_t key_size,
				    const char *value, size_t value_size)
{
	struct scan *f = cls;

	if (!value)
		value = "";
	f->seen += key_size + 2 + value_size + 2;
	if (!f->nul && (strlen(value) != value_size || strlen(key) != key_size))
		f->nul = key;
	if (!strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH)) {
		if (!f->length)
			f->length = value;
		else if (strcmp(f->length, value))
			f->lengths_differ = 1;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
		f->te++;
		f->te_chunked = lone_chunked(value, strlen(value));
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_AUTHORIZATION)) {
		f->auths++;
	} else if (!strcasecmp(key, MHD_HTTP_HEADER_HOST)) {
		f->host = value;
		f->hosts++;
	}
	return MHD_YES;
}

/* A Content-Length: digits only, nothing else (no sign, blank or list). */
static int parse_length(const char *v, long long *out)
{
	long long n = 0;

	if (!*v)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9' || n > (LLONG_MAX - 9) / 10)
			return -1;
		n = n * 10 + (*v - '0');
	}
	*out = n;
	return 0;
}

static enum MHD_Result nul_in_arg(void *cls, enum MHD_ValueKind kind,
				  const char *key, size_t key_size,
				  const char *value, size_t value_size)
{
	int *nul = cls;

	if (strlen(key) != key_size || (value && strlen(value) != value_size))
		*nul = 1;
	return MHD_YES;
}

/* The name in a Host value, without its port: [::1]:8080 -> ::1. */
static void host_name(const char *v, char *out, size_t size)
{
	const char *end;
	size_t n;

	if (*v == '[') {
		v++;
		end = strchr(v, ']');
	} else {
		end = strchr(v, ':');
	}
	n = end ? (size_t)(end - v) : strlen(v);
	if (n >= size)
		n = 0; /* too long to be a name we serve */
	memcpy(out, v, n);
	out[n] = '\0';
	if (n && out[n - 1] == '.')
		out[n - 1] = '\0'; /* "localhost." is localhost */
}

/* Whether name is in the space- or comma-separated list. */
static int in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		size_t len = strcspn(list, " ,\t");
		if (len == n && !strncasecmp(list, name, n))
			return 1;
		list += len;
		list += strspn(list, " ,\t");
	}
	return 0;
}

int http_host_allowed(const char *listen, const char *hosts, const char *value)
{
	char name[256], own[256];
	struct in_addr a4;
	struct in6_addr a6;

	host_name(value, name, sizeof(name));
	if (!name[0])
		return 0;
	if (!strcasecmp(name, "localhost") ||
	    (strlen(name) > 10 &&
	     !strcasecmp(name + strlen(name) - 10, ".localhost")))
		return 1;
	if (inet_pton(AF_INET, name, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127 || in_list(hosts, name) ||
		       (host_name(listen, own, sizeof(own)), !strcmp(own, name));
	if (inet_pton(AF_INET6, name, &a6) == 1 && IN6_IS_ADDR_LOOPBACK(&a6))
		return 1;
	host_name(listen ? listen : "", own, sizeof(own));
	return !strcasecmp(own, name) || in_list(hosts, name);
}

/*
 * libmicrohttpd 0.9.75 cuts a header's value at a NUL byte without a word
 * ("Authorization: Bearer TOKEN<NUL>junk" reads as the token), so the
 * bytes it read are counted against the lines it shows: request line,
 * then "key: value" lines. More bytes than that is a NUL (or blanks
 * beyond the one space after the colon, which no client sends).
 */
static int hidden_bytes(struct req_ctx *c, const struct scan *f)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		c->conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	size_t seen = strlen(c->req.method) + 1 + c->uri_len + 1 +
		      c->version_len + 2 + f->seen + 2;

	return ci && ci->header_size > seen;
}

int http_check_headers(struct req_ctx *c, int *has_body)
{
	struct scan f = { 0 };
	const struct config *cfg = &c->srv->app->bc.cfg;
	int nul = c->nul_in_uri;

	MHD_get_connection_values_n(c->conn, MHD_HEADER_KIND, check_header, &f);
	MHD_get_connection_values_n(c->conn, MHD_GET_ARGUMENT_KIND, nul_in_arg,
				    &nul);
	*has_body = f.te > 0;
	if (!f.nul && hidden_bytes(c, &f)) {
		api_error(&c->res, 400, "bad-request",
			  "the header block holds bytes not in any header's"
			  " value (a NUL byte, or blanks beyond one space"
			  " after a colon): refused");
		return -1;
	}
	if (nul || f.nul) {
		api_error(&c->res, 400, "bad-request",
			  "a NUL byte in %s%.60s: refused",
			  f.nul ? "the header " : "the request's path or query",
			  f.nul ? f.nul : "");
		return -1;
	}
	if (f.te && (f.te > 1 || !f.te_chunked)) {
		api_error(&c->res, 501, "not-implemented",
			  "Transfer-Encoding: only a lone 'chunked' is"
			  " understood here");
		return -1;
	}
	if (f.lengths_differ || (f.length && f.te)) {
		api_error(&c->res, 400, "bad-request", "%s",
			  f.te ? "Content-Length and Transfer-Encoding"
				 " together: the body's length is"
				 " ambiguous"
			       : "two different Content-Length headers:"
				 " the body's length is ambiguous");
		return -1;
	}
	if (f.length) {
		long long n;
		if (parse_length(f.length, &n) < 0) {
			api_error(&c->res, 400, "bad-request",
				  "Content-Length '%.40s' is not a length",
				  f.length);
			return -1;
		}
		*has_body = n > 0;
		c->length = n;
	}
	if (f.auths > 1) {
		api_error(&c->res, 400, "bad-request",
			  "%d Authorization headers: send one", f.auths);
		return -1;
	}
	/* RFC 9112 3.2: an HTTP/1.1 request without Host is refused */
	if (!f.hosts && !c->http10) {
		api_error(&c->res, 400, "bad-request",
			  "an HTTP/1.1 request needs a Host header"
			  " (RFC 9112 3.2)");
		return -1;
	}
	if (f.hosts > 1) {
		api_error(&c->res, 400, "bad-request",
			  "%d Host headers: send one", f.hosts);
		return -1;
	}
	if (f.host && !http_host_allowed(cfg->listen, cfg->http_hosts, f.host)) {
		api_error(&c->res, 421, "misdirected-request",
			  "Host '%.100s' is not served here (the loopback"
			  " names, the listen address and http_hosts are)",
			  f.host);
		return -1;
	}
	return 0;
}

/*
 * libmicrohttpd 0.9.75 refuses a Content-Length it cannot read ("2, 2",
 * "-1", "+2", "0x2") by itself, without asking the server, and sends its
 * 400's header block twice: the client reads the second one as the body.
 * It says so in its log first, on the thread reading the request, so the
 * server answers there itself: a clean 400 written on the socket, which
 * it then shuts down, so that libmicrohttpd's answer goes nowhere. The
 * request is known by the thread: the one connection of this thread
 * whose request line is in and whose headers are not yet handed over.
 * With two such connections on the thread (a client that split its
 * headers across reads while another's came in) the request is not
 * known, and libmicrohttpd's answer stands.
 */
static _Thread_local struct req_ctx *parsing;
static _Thread_local int nparsing;

void http_headers_parsing(struct req_ctx *c)
{
	c->parsing = 1;
	parsing = c;
	nparsing++;
}

void http_headers_parsed(struct req_ctx *c)
{
	if (!c->parsing)
		return;
	c->parsing = 0;
	nparsing--;
	if (parsing == c)
		parsing = NULL;
}

int http_refuse_length(const char *msg)
{
	static const char body[] =
		"{\"error\":\"bad-request\",\"message\":\"the Content-Length"
		" header is not a length\"}";
	struct req_ctx *c = parsing;
	const union MHD_ConnectionInfo *ci;
	struct strbuf sb = STRBUF_INIT;
	ssize_t n;

	if (!strstr(msg, "Content-Length") || nparsing != 1 || !c)
		return 0;
	ci = MHD_get_connection_info(c->conn,
				     MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci || ci->connect_fd < 0)
		return 0;
	strbuf_addf(&sb,
		    "HTTP/1.1 400 Bad Request\r\n"
		    "Content-Type: application/json\r\n"
		    "X-Content-Type-Options: nosniff\r\n"
		    "Cache-Control: no-store\r\n"
		    "Connection: close\r\n"
		    "Content-Length: %zu\r\n\r\n%s",
		    sizeof(body) - 1, body);
	n = send(ci->connect_fd, sb.buf, sb.len, MSG_NOSIGNAL | MSG_DONTWAIT);
	strbuf_release(&sb);
	if (n < 0)
		return 0;
	/* Under clients_lock, as http-limit.c cuts sockets. */
	pthread_mutex_lock(&c->srv->clients_lock);
	shutdown(ci->connect_fd, SHUT_RDWR);
	pthread_mutex_unlock(&c->srv->clients_lock);
	api_note_status(400);
	http_headers_parsed(c);
	return 1;
}
