/* log.c: logging in the OpenBSD daemon manner (log_info, log_warnx, fatal). */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

static void vlog(int pri, const char *fmt, va_list ap)
{
	char msg[8192];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_syslog) {
		syslog(pri, "%s", msg);
		return;
	}
	fprintf(stderr, "%s: %s\n", log_prefix, msg);
	fflush(stderr);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap);
	va_end(ap);
}

void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap);
	va_end(ap);
	exit(1);
}
