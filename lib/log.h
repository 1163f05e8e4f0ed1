/* log.h: one line per event, to stderr (foreground) or syslog (daemon). */
#ifndef STABLEQ_LOG_H
#define STABLEQ_LOG_H

/* verbose: 0 warnings and info, 1 adds debug. to_syslog: daemonized. */
void log_init(int verbose, int to_syslog);

__attribute__((format(printf, 1, 2))) void log_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_debug(const char *fmt, ...);
/* A warning (the name as OpenBSD's: the message says why, no errno added). */
__attribute__((format(printf, 1, 2))) void log_warnx(const char *fmt, ...);
/* Logs and exits with status 1. */
__attribute__((format(printf, 1, 2), noreturn)) void fatal(const char *fmt, ...);

#endif
