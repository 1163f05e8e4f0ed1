/* t-icecc.c: the icecc config value, scheduler addresses, and a port nobody answers on. */
#include "err.h"
#include "icecc.h"
#include "tap.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const struct {
	const char *addr;
	int code;
	const char *msg;
} bad[] = {
	{ "", ERR_INVALID, "empty scheduler address" },
	{ "[::1", ERR_INVALID, "missing ']'" },
	{ "[::1]x", ERR_INVALID, "expected HOST[:PORT]" },
	{ "host:0", ERR_INVALID, "the port must be 1 to 65534" },
	{ "host:65535", ERR_INVALID, "the port must be 1 to 65534" },
	{ "host:8x", ERR_INVALID, "the port must be 1 to 65534" },
	{ ":8765", ERR_INVALID, "no host" },
};

int main(void)
{
	struct icecc_farm farm;
	char *s;

	ok(!icecc_enabled(NULL) && !icecc_enabled(""), "NULL and \"\" are off");
	ok(icecc_enabled("on") && icecc_enabled("sched:8765"),
	   "on and an address are on");
	s = icecc_scheduler("build1:9000");
	ok(!strcmp(s, "build1:9000"), "an address is the scheduler: %s", s);
	free(s);
	unsetenv("ICECC_SCHEDULER");
	s = icecc_scheduler("on");
	ok(!strcmp(s, "127.0.0.1"), "on without ICECC_SCHEDULER: 127.0.0.1");
	free(s);
	setenv("ICECC_SCHEDULER", "sched.example.org", 1);
	s = icecc_scheduler("on");
	ok(!strcmp(s, "sched.example.org"), "on: icecc's ICECC_SCHEDULER");
	free(s);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = icecc_farm_query(bad[i].addr, 500, &farm);
		ok(r == bad[i].code && strstr(err_msg(), bad[i].msg),
		   "'%s': %s", bad[i].addr, err_msg());
	}

	/* a loopback port that was just free: nobody answers there */
	{
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t l = sizeof(a);
		char addr[64];
		char *why = NULL;

		bind(fd, (struct sockaddr *)&a, sizeof(a));
		getsockname(fd, (struct sockaddr *)&a, &l);
		close(fd);
		/* the text port is the scheduler port + 1 */
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(a.sin_port) - 1);
		ok(icecc_farm_query(addr, 1000, &farm) == ERR_IO &&
			   strstr(err_msg(), "does not answer"),
		   "a scheduler that does not answer: %s", err_msg());
		is_int(icecc_make_jobs(addr, 2, &why), 2,
		       "make -j falls back to the local cores");
		ok(why && strstr(why, "make -j2 from the local cores"),
		   "... and says why: %s", why ? why : "(null)");
		free(why);
	}
	return done_testing();
}
