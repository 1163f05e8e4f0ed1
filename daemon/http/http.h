/* http.h: the REST API and the dashboard's files over libmicrohttpd. */
#ifndef STABLEQ_HTTP_H
#define STABLEQ_HTTP_H

#include "app.h"

struct http_server;

/*
 * Listens on app->bc.cfg.listen ("127.0.0.1:8080") with libmicrohttpd's own
 * threads; the caller's loop stays free. app is borrowed for the server's
 * lifetime (cfg may be swapped on SIGHUP between http_stop/http_start).
 * Returns 0 or negative (the address in use, a bad listen value).
 */
int http_start(struct app *app, struct http_server **out);
void http_stop(struct http_server *s);

/*
 * 1 if a Host header's value (port optional) names this server: a
 * loopback name (localhost, 127.0.0.0/8, ::1), the host of listen, or
 * one of hosts (http_hosts: space- or comma-separated, any case).
 */
int http_host_allowed(const char *listen, const char *hosts, const char *value);

/*
 * 1 if an Accept-Encoding header value (NULL: none) accepts gzip: named
 * (or x-gzip) with a weight over 0, or covered by "*" when not named.
 */
int http_accepts_gzip(const char *accept_encoding);

struct sockaddr;
/*
 * 1 if a client's address is loopback (127.0.0.0/8, ::1, or 127.0.0.0/8
 * mapped into IPv6): what read_access = loopback lets read without a token.
 */
int http_is_loopback(const struct sockaddr *sa);

#endif
