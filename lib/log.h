/* log.h: one line per event, to stderr (foreground) or syslog (daemon). */
#ifndef STABLEQ_LOG_H
#define STABLEQ_LOG_H

/* verbose: 0 warnings and info, 1 adds debug. to_syslog: daemonized. */
void log_init(int verbose, int to_syslog);
void log_set_prefix(const char *prefix);

__attribute__((format(printf, 1, 2))) void log_info(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_debug(const char *fmt, ...);
/* log_warn appends strerror(errno); log_warnx does not. */
__attribute__((format(printf, 1, 2))) void log_warn(const char *fmt, ...);
__attribute__((format(printf, 1, 2))) void log_warnx(const char *fmt, ...);
/* Logs and exits with status 1. */
__attribute__((format(printf, 1, 2), noreturn)) void fatal(const char *fmt, ...);

#endif
