/* icecc.c: asks an icecream scheduler how big its farm is (its text interface). */
#include "icecc.h"
#include "err.h"
#include "spawn.h"
#include "strbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define ANSWER_MAX (1u << 20)

int icecc_enabled(const char *value)
{
	return value && *value;
}

char *icecc_scheduler(const char *value)
{
	const char *env = getenv("ICECC_SCHEDULER");

	if (value && *value && strcmp(value, "on"))
		return xstrdup(value);
	return xstrdup(env && *env ? env : "127.0.0.1");
}

/* "HOST[:PORT]" or "[V6]:PORT" -> host (caller frees) and the text port. */
static int split_addr(const char *addr, char **host, int *port)
{
	const char *colon, *end;
	char *e;
	long p = ICECC_SCHEDULER_PORT;

	*host = NULL;
	if (!addr || !*addr)
		return err_set(ERR_INVALID, "icecc: empty scheduler address");
	if (*addr == '[') {
		end = strchr(addr, ']');
		if (!end)
			return err_set(ERR_INVALID,
				       "icecc: %s: missing ']'", addr);
		*host = xstrndup(addr + 1, (size_t)(end - addr - 1));
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon) {
			free(*host);
			*host = NULL;
			return err_set(ERR_INVALID,
				       "icecc: %s: expected HOST[:PORT]", addr);
		}
	} else {
		colon = strrchr(addr, ':');
		*host = colon ? xstrndup(addr, (size_t)(colon - addr))
			      : xstrdup(addr);
	}
	if (colon) {
		errno = 0;
		p = strtol(colon + 1, &e, 10);
		if (errno || e == colon + 1 || *e || p < 1 || p >= 65535) {
			free(*host);
			*host = NULL;
			return err_set(ERR_INVALID,
				       "icecc: %s: the port must be 1 to 65534",
				       addr);
		}
	}
	if (!**host) {
		free(*host);
		*host = NULL;
		return err_set(ERR_INVALID, "icecc: %s: no host", addr);
	}
	*port = (int)p + 1; /* the text interface */
	return 0;
}

static int wait_fd(int fd, short ev, double deadline)
{
	struct pollfd p = { .fd = fd, .events = ev };
	double left = deadline - now_monotonic();
	int r;

	if (left <= 0)
		return 0;
	do
		r = poll(&p, 1, (int)(left * 1000) + 1);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Connects within the deadline; the socket or -1 (errno set). */
static int connect_to(const char *host, int port, double deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	char ps[16];
	int fd = -1, gai;

	snprintf(ps, sizeof(ps), "%d", port);
	if ((gai = getaddrinfo(host, ps, &hints, &res)) != 0) {
		errno = EHOSTUNREACH;
		return -1;
	}
	for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);

		fd = socket(a->ai_family,
			    a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
			    a->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		if (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline) > 0 &&
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0 &&
		    !soerr)
			break;
		close(fd);
		fd = -1;
		if (soerr)
			errno = soerr;
		else if (errno == EINPROGRESS)
			errno = ETIMEDOUT;
	}
	freeaddrinfo(res);
	return fd;
}

/* " node (127.0.0.1:10245) [x86_64] speed=... jobs=0/4 load=..." */
static void parse_answer(const char *text, struct icecc_farm *farm)
{
	const char *t = strstr(text, " total)");

	if (t) {
		const char *s = t;
		while (s > text && s[-1] >= '0' && s[-1] <= '9')
			s--;
		if (s < t && s > text && s[-1] == '(')
			farm->jobs = strtoll(s, NULL, 10);
	}
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = xstrndup(p, len);
		const char *j = strstr(line, " jobs=");
		int running, max;

		if (line[0] == ' ' && j &&
		    sscanf(j, " jobs=%d/%d", &running, &max) == 2 && max >= 0 &&
		    max < 100000) {
			farm->hosts++;
			farm->slots += max;
		}
		free(line);
		p = nl ? nl + 1 : NULL;
	}
}

int icecc_farm_query(const char *addr, int timeout_ms, struct icecc_farm *farm)
{
	static const char ask[] = "listcs\r\nquit\r\n";
	double deadline = now_monotonic() + (timeout_ms > 0 ? timeout_ms : 3000) / 1000.0;
	struct strbuf got = STRBUF_INIT;
	char *host = NULL;
	int port = 0, fd = -1, ret;

	memset(farm, 0, sizeof(*farm));
	if ((ret = split_addr(addr, &host, &port)) < 0)
		return ret;
	fd = connect_to(host, port, deadline);
	if (fd < 0) {
		ret = err_set(ERR_IO,
			      "icecc: the scheduler %s does not answer on its "
			      "text port %s:%d: %s",
			      addr, host, port, strerror(errno));
		goto out;
	}
	if (send(fd, ask, sizeof(ask) - 1, MSG_NOSIGNAL) !=
	    (ssize_t)(sizeof(ask) - 1)) {
		ret = err_set(ERR_IO, "icecc: %s: send: %s", addr,
			      strerror(errno));
		goto out;
	}
	for (;;) {
		char buf[4096];
		ssize_t n;

		if (wait_fd(fd, POLLIN, deadline) <= 0) {
			ret = err_set(ERR_IO,
				      "icecc: the scheduler %s did not finish "
				      "its answer in time",
				      addr);
			goto out;
		}
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (got.len + (size_t)n > ANSWER_MAX) {
			ret = err_set(ERR_TOOBIG, "icecc: %s: answer over 1 MiB",
				      addr);
			goto out;
		}
		strbuf_add(&got, buf, (size_t)n);
		if (strstr(got.buf, "200 Good Bye!"))
			break;
	}
	if (strncmp(got.buf, "200", 3)) {
		ret = err_set(ERR_IO,
			      "icecc: %s:%d does not talk like an icecream "
			      "scheduler",
			      host, port);
		goto out;
	}
	parse_answer(got.buf, farm);
	ret = 0;
out:
	if (fd >= 0)
		close(fd);
	free(host);
	strbuf_release(&got);
	return ret;
}

int icecc_make_jobs(const char *value, int local_cores, char **why)
{
	struct icecc_farm farm;
	char *addr = icecc_scheduler(value);
	int n = local_cores > 0 ? local_cores : 1;

	*why = NULL;
	if (icecc_farm_query(addr, 3000, &farm) < 0)
		*why = xstrfmt("%s: make -j%d from the local cores", err_msg(),
			       n);
	else if (farm.slots > n)
		n = farm.slots;
	free(addr);
	return n;
}
