/* bare-mhd.c: a bare libmicrohttpd server answering a static body (2 KB by default), the yardstick of api-wrk.sh. */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The same threading as stableq's http.c (one epoll loop per CPU, internal
 * threads) so the comparison measures what stableq adds: routing, SQLite,
 * JSON. The response is built once and queued again for every request.
 */
static struct MHD_Response *resp;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/*
 * The usual libmicrohttpd idiom: the first call only marks the request;
 * the answer is queued once the request is all in, which keeps the
 * connection alive (an answer queued earlier makes it close).
 */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c,
			      const char *url, const char *method,
			      const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	static int marker;

	(void)cls, (void)url, (void)method, (void)version, (void)upload;
	if (!*con_cls) {
		*con_cls = &marker;
		return MHD_YES;
	}
	*upload_size = 0;
	return MHD_queue_response(c, MHD_HTTP_OK, resp);
}

int main(int argc, char **argv)
{
	struct MHD_Daemon *d;
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	int port = argc > 1 ? atoi(argv[1]) : 8090;
	long size = argc > 2 ? atol(argv[2]) : 2048;
	char *body;

	if (n < 2)
		n = 2;
	if (n > 16)
		n = 16;
	if (size < 16 || size > (64L << 20)) {
		fprintf(stderr, "usage: bare-mhd [PORT [BYTES]]\n");
		return 2;
	}
	/* JSON-ish text of the size asked for */
	body = malloc((size_t)size);
	if (!body)
		return 1;
	memset(body, 'x', (size_t)size);
	memcpy(body, "{\"pad\":\"", 8);
	memcpy(body + size - 3, "\"}\n", 3);
	resp = MHD_create_response_from_buffer((size_t)size, body,
					       MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"application/json");
	d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
				     MHD_USE_ERROR_LOG,
			     (unsigned short)port, NULL, NULL, answer, NULL,
			     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)n,
			     MHD_OPTION_CONNECTION_LIMIT, 512u,
			     MHD_OPTION_CONNECTION_TIMEOUT, 15u,
			     MHD_OPTION_END);
	if (!d) {
		fprintf(stderr, "bare-mhd: cannot listen on port %d\n", port);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	printf("bare-mhd: listening on port %d (%ld threads, %ld bytes)\n",
	       port, n, size);
	fflush(stdout);
	while (!stop)
		pause();
	MHD_stop_daemon(d);
	MHD_destroy_response(resp);
	return 0;
}
