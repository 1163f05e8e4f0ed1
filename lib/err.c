/* err.c: the per-thread error message slot. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char err_buf[4096];
static _Thread_local int err_code;

int err_set(int code, const char *fmt, ...)
{
	/* formatted aside first: err_msg() may be one of the arguments */
	char msg[sizeof(err_buf)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(err_buf, msg, sizeof(err_buf));
	err_code = code;
	return code;
}

int err_prefix(int code, const char *fmt, ...)
{
	char old[sizeof(err_buf)];
	char pre[1024];
	va_list ap;

	memcpy(old, err_buf, sizeof(old));
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	snprintf(err_buf, sizeof(err_buf), "%s: %s", pre, old);
	err_code = code;
	return code;
}

const char *err_msg(void)
{
	return err_buf;
}

void err_clear(void)
{
	err_buf[0] = '\0';
	err_code = 0;
}

int err_last(void)
{
	return err_code;
}

