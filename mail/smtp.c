/* smtp.c: one SMTP conversation per message over a reused libcurl handle. */
#include "smtp.h"
#include "err.h"
#include "strbuf.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct smtp {
	CURL *curl;
	char *url;
	char *shown; /* url without the password, for messages */
	struct smtp_opts opts;
	char errbuf[CURL_ERROR_SIZE];
	char reply[256]; /* the relay's last reply line */
};

struct reader {
	const char *data;
	size_t len, off;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_FAILED_INIT;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static size_t read_cb(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct reader *r = arg;
	size_t room = size * nmemb, n = r->len - r->off;

	if (n > room)
		n = room;
	memcpy(buf, r->data + r->off, n);
	r->off += n;
	return n;
}

/* Keeps the relay's last answer: libcurl's own messages often lack its text. */
static int debug_cb(CURL *c, curl_infotype type, char *data, size_t size,
		    void *arg)
{
	struct smtp *s = arg;
	size_t n = size;

	if (type != CURLINFO_HEADER_IN)
		return 0;
	while (n && (data[n - 1] == '\n' || data[n - 1] == '\r'))
		n--;
	if (n >= sizeof(s->reply))
		n = sizeof(s->reply) - 1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)data[i];
		s->reply[i] = ch < 0x20 || ch > 0x7e ? '?' : (char)ch;
	}
	s->reply[n] = '\0';
	return 0;
}

char *smtp_url_redacted(const char *url)
{
	const char *host = strstr(url, "://");
	const char *at, *colon, *end;

	if (!host)
		return xstrdup(url);
	host += 3;
	end = host + strcspn(host, "/?#");
	at = memchr(host, '@', (size_t)(end - host));
	if (!at)
		return xstrdup(url);
	colon = memchr(host, ':', (size_t)(at - host));
	if (!colon)
		return xstrdup(url);
	return xstrfmt("%.*s%s", (int)(colon - url), url, at);
}

struct smtp *smtp_open(const char *url, const struct smtp_opts *opts)
{
	struct smtp *s;

	pthread_once(&curl_once, curl_init);
	if (curl_init_rc != CURLE_OK) {
		err_set(ERR_IO, "libcurl: %s",
			curl_easy_strerror(curl_init_rc));
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->curl = curl_easy_init();
	if (!s->curl) {
		free(s);
		err_set(ERR_IO, "libcurl: cannot create a handle");
		return NULL;
	}
	s->url = xstrdup(url);
	s->shown = smtp_url_redacted(url);
	if (opts)
		s->opts = *opts;
	if (s->opts.connect_timeout_ms <= 0)
		s->opts.connect_timeout_ms = SMTP_CONNECT_TIMEOUT_MS;
	if (s->opts.timeout_ms <= 0)
		s->opts.timeout_ms = SMTP_TIMEOUT_MS;

	CURL *c = s->curl;
	curl_easy_setopt(c, CURLOPT_URL, s->url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS,
			 (long)(CURLPROTO_SMTP | CURLPROTO_SMTPS));
#endif
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 s->opts.connect_timeout_ms);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, s->opts.timeout_ms);
	/*
	 * QUIT is said when the handle is cleaned up, outside any transfer:
	 * only this bounds the wait for its answer (libcurl copies it to the
	 * handle that closes cached connections at each transfer).
	 */
	curl_easy_setopt(c, CURLOPT_SERVER_RESPONSE_TIMEOUT,
			 (long)SMTP_RESPONSE_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
	curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);
	curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, debug_cb);
	curl_easy_setopt(c, CURLOPT_DEBUGDATA, s);
	return s;
}

static int relay_wide(CURLcode rc, long code)
{
	switch (rc) {
	case CURLE_UNSUPPORTED_PROTOCOL:
	case CURLE_URL_MALFORMAT:
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_LOGIN_DENIED:
	case CURLE_GOT_NOTHING:
		return 1;
	default:
		/* 421: the relay is closing the channel for everyone */
		return code == 421;
	}
}

int smtp_send(struct smtp *s, const char *from, const char *const *rcpt,
	      size_t nrcpt, const char *data, size_t len, int *relay_down,
	      long *code)
{
	struct reader r = {data, len, 0};
	struct curl_slist *list = NULL, *l;
	char *env_from = NULL;
	long reply = 0;
	CURLcode rc;
	int ret = 0;

	if (relay_down)
		*relay_down = 0;
	if (code)
		*code = 0;
	if (!nrcpt)
		return err_set(ERR_INVALID, "no recipients");
	for (size_t i = 0; i < nrcpt; i++) {
		char *a = xstrfmt("<%s>", rcpt[i]);
		l = curl_slist_append(list, a);
		free(a);
		if (!l) {
			curl_slist_free_all(list);
			return err_set(ERR_IO, "libcurl: out of memory");
		}
		list = l;
	}
	env_from = xstrfmt("<%s>", from);
	s->errbuf[0] = '\0';
	s->reply[0] = '\0';
	curl_easy_setopt(s->curl, CURLOPT_MAIL_FROM, env_from);
	curl_easy_setopt(s->curl, CURLOPT_MAIL_RCPT, list);
	curl_easy_setopt(s->curl, CURLOPT_READDATA, &r);
	curl_easy_setopt(s->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)len);

	rc = curl_easy_perform(s->curl);

	curl_easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &reply);
	curl_easy_setopt(s->curl, CURLOPT_MAIL_RCPT, NULL);
	curl_easy_setopt(s->curl, CURLOPT_READDATA, NULL);
	if (code)
		*code = reply;
	if (rc != CURLE_OK) {
		const char *why =
			s->errbuf[0] ? s->errbuf : curl_easy_strerror(rc);
		if (s->reply[0] && reply >= 400)
			ret = err_set(ERR_IO, "%s: %s (relay said: %s)",
				      s->shown, why, s->reply);
		else
			ret = err_set(ERR_IO, "%s: %s", s->shown, why);
		if (relay_down)
			*relay_down = relay_wide(rc, reply);
	}
	curl_slist_free_all(list);
	free(env_from);
	return ret;
}

void smtp_close(struct smtp *s)
{
	if (!s)
		return;
	curl_easy_cleanup(s->curl);
	free(s->url);
	free(s->shown);
	free(s);
}
