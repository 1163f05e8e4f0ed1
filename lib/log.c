/* log.c: logging in the OpenBSD daemon manner (log_warn, log_warnx, fatal). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

static int log_verbose;
static int log_syslog;
static const char *log_prefix = "stableq";

void log_init(int verbose, int to_syslog)
{
	log_verbose = verbose;
	log_syslog = to_syslog;
	if (to_syslog)
		openlog("stableq", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

void log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

static void vlog(int pri, const char *fmt, va_list ap, const char *suffix)
{
	char msg[8192];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_syslog) {
		syslog(pri, "%s%s%s", msg, suffix ? ": " : "",
		       suffix ? suffix : "");
		return;
	}
	fprintf(stderr, "%s: %s%s%s\n", log_prefix, msg, suffix ? ": " : "",
		suffix ? suffix : "");
	fflush(stderr);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, NULL);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, NULL);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	const char *e = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, e);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, NULL);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, NULL);
	va_end(ap);
	exit(1);
}
