/* http-limit.c: who may connect (in all, per address) and how long a request may take to arrive. */
#include "http.h"
#include "http-int.h"
#include "log.h"
#include "strbuf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

/*
 * libmicrohttpd keeps its limits per thread of its pool, and its timeout
 * is an idle timeout: a client that sends one header line every few
 * seconds is never dropped, and a few addresses can hold every
 * connection. So the server keeps its own list of clients:
 *
 * - http_connections in all, three quarters of them from one address,
 *   counted across the pool. on_accept refuses what is over; two threads
 *   accepting at once may both pass it, so a connection that is over when
 *   it is counted is shut down at once: the limits hold.
 * - When the server is full, a new client (within its address's share)
 *   takes the place of the one whose request has been arriving the
 *   longest, if that has taken a second or more: clients that trickle
 *   their requests, or sit idle between two, make way; a few addresses
 *   cannot keep everyone else out.
 * - A request's headers and body must be in within http_request_timeout
 *   of its start (the connection's start, or the end of the request
 *   before it on the connection). A watch thread shuts down the socket of
 *   a request that is late; libmicrohttpd then closes the connection.
 *   Requests that are in (being answered, or waiting for the writer) are
 *   not timed here: their clients are slow only in reading, which the
 *   idle timeout covers.
 *
 * Sockets are shut down only under clients_lock, and a client leaves the
 * list (on MHD_CONNECTION_NOTIFY_CLOSED) under it before libmicrohttpd
 * closes the socket: a shut down descriptor is never another's.
 */

#define WATCH_MS 200 /* how often late requests are looked for */
#define EVICT_MS 1000 /* a full server cuts requests arriving this long */

struct client {
	struct client *prev, *next;
	int fd;
	int family;               /* AF_INET, AF_INET6; 0: unknown */
	unsigned char addr[16];
	atomic_llong since_ms;    /* the current request's start */
	atomic_int receiving;     /* its headers or body are not all in */
	int cut;                  /* shut down here */
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The address's family and bytes (IPv4 mapped into IPv6 as IPv4). */
static int addr_key(const struct sockaddr *sa, unsigned char out[16])
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		memcpy(out, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return AF_INET;
	}
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a)) {
			memcpy(out, a->s6_addr + 12, 4);
			return AF_INET;
		}
		memcpy(out, a->s6_addr, 16);
		return AF_INET6;
	}
	return 0;
}

static int same_addr(const struct client *cl, int family,
		     const unsigned char *addr)
{
	return family && cl->family == family &&
	       !memcmp(cl->addr, addr, family == AF_INET ? 4 : 16);
}

/* Clients from this address; under clients_lock. */
static unsigned count_addr(struct http_server *s, int family,
			   const unsigned char *addr)
{
	unsigned n = 0;

	for (struct client *cl = s->clients; cl; cl = cl->next)
		n += !cl->cut && same_addr(cl, family, addr);
	return n;
}

static void addr_text(int family, const unsigned char *addr, char *out,
		      size_t size)
{
	if (!family || !inet_ntop(family, addr, out, (socklen_t)size))
		snprintf(out, size, "?");
}

/*
 * A refusal is logged at most once a second: a client that knocks a
 * thousand times does not write a thousand lines.
 */
static void log_refusal(struct http_server *s, const char *fmt,
			const char *who, unsigned limit)
{
	long long now = now_ms(), last = atomic_load(&s->refusal_logged_ms);

	if (now - last < 1000 ||
	    !atomic_compare_exchange_strong(&s->refusal_logged_ms, &last, now))
		return;
	log_warnx(fmt, who, limit);
}

/* Shuts a client's connection down; under clients_lock. */
static void cut(struct http_server *s, struct client *cl)
{
	if (cl->cut || cl->fd < 0)
		return;
	shutdown(cl->fd, SHUT_RDWR);
	cl->cut = 1;
	s->ncut++;
}

/* Whether one more client from this address is within the limits. */
static int within_limits(struct http_server *s, int family,
			 const unsigned char *addr, int counted)
{
	unsigned all = s->nclients - s->ncut - (unsigned)counted;
	unsigned mine = count_addr(s, family, addr) - (unsigned)counted;

	return all < s->conns_max && mine < s->per_addr_max;
}

/*
 * The server is full: makes room by cutting the client whose request has
 * been arriving the longest, if one has for EVICT_MS (clients that
 * trickle, or idle between requests); 1 if it did. Clients that are
 * being answered, and requests that came in quickly, are never cut.
 */
static int evict_slowest(struct http_server *s, long long now)
{
	struct client *slowest = NULL;

	for (struct client *cl = s->clients; cl; cl = cl->next)
		if (!cl->cut && atomic_load(&cl->receiving) &&
		    now - atomic_load(&cl->since_ms) >= EVICT_MS &&
		    (!slowest || atomic_load(&cl->since_ms) <
					 atomic_load(&slowest->since_ms)))
			slowest = cl;
	if (!slowest || slowest->fd < 0)
		return 0;
	cut(s, slowest);
	return 1;
}

enum MHD_Result http_limit_accept(struct http_server *s,
				  const struct sockaddr *addr)
{
	unsigned char key[16];
	char text[INET6_ADDRSTRLEN];
	int family = addr_key(addr, key), ok;

	pthread_mutex_lock(&s->clients_lock);
	ok = within_limits(s, family, key, 0);
	if (!ok && count_addr(s, family, key) < s->per_addr_max &&
	    evict_slowest(s, now_ms()))
		ok = 1; /* the new client takes the slowest one's place */
	pthread_mutex_unlock(&s->clients_lock);
	if (ok)
		return MHD_YES;
	addr_text(family, key, text, sizeof(text));
	log_refusal(s,
		    "http: %s: refused, over the limits (%u connections, three"
		    " quarters from one address)",
		    text, s->conns_max);
	return MHD_NO;
}

void http_limit_opened(struct http_server *s, struct MHD_Connection *conn,
		       void **socket_ctx)
{
	const union MHD_ConnectionInfo *ci;
	struct client *cl = xcalloc(1, sizeof(*cl));

	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	cl->fd = ci ? ci->connect_fd : -1;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	cl->family = addr_key(ci ? ci->client_addr : NULL, cl->addr);
	atomic_store(&cl->since_ms, now_ms());
	atomic_store(&cl->receiving, 1);
	pthread_mutex_lock(&s->clients_lock);
	cl->next = s->clients;
	if (s->clients)
		s->clients->prev = cl;
	s->clients = cl;
	s->nclients++;
	if (!within_limits(s, cl->family, cl->addr, 1))
		cut(s, cl); /* another thread let one in at the same instant */
	pthread_mutex_unlock(&s->clients_lock);
	*socket_ctx = cl;
}

void http_limit_closed(struct http_server *s, void **socket_ctx)
{
	struct client *cl = *socket_ctx;

	if (!cl)
		return;
	pthread_mutex_lock(&s->clients_lock);
	if (cl->prev)
		cl->prev->next = cl->next;
	else
		s->clients = cl->next;
	if (cl->next)
		cl->next->prev = cl->prev;
	s->nclients--;
	s->ncut -= (unsigned)cl->cut;
	pthread_mutex_unlock(&s->clients_lock);
	free(cl);
	*socket_ctx = NULL;
}

static struct client *client_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

void http_limit_received(struct MHD_Connection *conn)
{
	struct client *cl = client_of(conn);

	if (cl)
		atomic_store(&cl->receiving, 0);
}

void http_limit_next(struct MHD_Connection *conn)
{
	struct client *cl = client_of(conn);

	if (!cl)
		return;
	atomic_store(&cl->since_ms, now_ms());
	atomic_store(&cl->receiving, 1);
}

/* Shuts down the connections whose request is late; under clients_lock. */
static void cut_late(struct http_server *s, long long now)
{
	long long limit = (long long)s->request_timeout * 1000;

	for (struct client *cl = s->clients; cl; cl = cl->next) {
		char text[INET6_ADDRSTRLEN];
		if (cl->cut || !atomic_load(&cl->receiving) ||
		    now - atomic_load(&cl->since_ms) < limit || cl->fd < 0)
			continue;
		cut(s, cl);
		addr_text(cl->family, cl->addr, text, sizeof(text));
		log_refusal(s,
			    "http: %s: a request not in after %us"
			    " (http_request_timeout): connection closed",
			    text, s->request_timeout);
	}
}

static void *watch_main(void *arg)
{
	struct http_server *s = arg;

	pthread_mutex_lock(&s->clients_lock);
	while (!s->watch_stop) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += WATCH_MS * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&s->watch_wake, &s->clients_lock, &ts);
		if (!s->watch_stop && s->request_timeout)
			cut_late(s, now_ms());
	}
	pthread_mutex_unlock(&s->clients_lock);
	return NULL;
}

int http_limit_start(struct http_server *s)
{
	pthread_condattr_t ca;

	pthread_mutex_init(&s->clients_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->watch_wake, &ca);
	pthread_condattr_destroy(&ca);
	s->limit_inited = 1;
	if (pthread_create(&s->watch_thread, NULL, watch_main, s))
		return -1;
	s->watch_started = 1;
	return 0;
}

void http_limit_stop(struct http_server *s)
{
	if (!s->limit_inited)
		return;
	if (s->watch_started) {
		pthread_mutex_lock(&s->clients_lock);
		s->watch_stop = 1;
		pthread_cond_signal(&s->watch_wake);
		pthread_mutex_unlock(&s->clients_lock);
		pthread_join(s->watch_thread, NULL);
	}
	pthread_cond_destroy(&s->watch_wake);
	pthread_mutex_destroy(&s->clients_lock);
}
