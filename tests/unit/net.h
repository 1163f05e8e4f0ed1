/* net.h: for tests and fuzzers that run a server on loopback. */
#ifndef STABLEQ_TEST_NET_H
#define STABLEQ_TEST_NET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP port on 127.0.0.1 that was free a moment ago. */
static inline int free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), p;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	bind(fd, (struct sockaddr *)&a, sizeof(a));
	getsockname(fd, (struct sockaddr *)&a, &len);
	p = ntohs(a.sin_port);
	close(fd);
	return p;
}

#endif
