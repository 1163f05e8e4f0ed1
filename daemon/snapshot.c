/* snapshot.c: the config the daemon holds, kept as a private file for its child steps. */
#include "file.h"
#include "snapshot.h"
#include "err.h"
#include "strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *snapshot_path(const char *var_dir)
{
	return xstrfmt("%s/run/config.conf", var_dir);
}

/* The loader's message about tmp, told about path instead. */
static int blame_file(int ret, const char *tmp, const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	const char *msg = err_msg(), *at = strstr(msg, tmp);

	if (at) {
		strbuf_add(&sb, msg, (size_t)(at - msg));
		strbuf_addstr(&sb, path);
		strbuf_addstr(&sb, at + strlen(tmp));
	} else {
		strbuf_addf(&sb, "%s: %s", path, msg);
	}
	err_set(ret, "%s", sb.buf);
	strbuf_release(&sb);
	return ret;
}

int snapshot_take(const char *path, const char *var_dir, struct config *out)
{
	struct strbuf bytes = STRBUF_INIT;
	char *dir = xstrfmt("%s/run", var_dir), *final = snapshot_path(var_dir);
	char *tmp = xstrfmt("%s.new", final);
	int ret;

	memset(out, 0, sizeof(*out));
	if (path && (ret = strbuf_read_file(&bytes, path, 1 << 20)) < 0) {
		ret = err_set(ERR_IO, "config file %s", err_msg());
		goto out;
	}
	if ((ret = mkdir_p(dir)) < 0 || chmod(dir, 0700) < 0 ||
	    (ret = write_file_atomic(tmp, bytes.buf, bytes.len)) < 0) {
		ret = err_set(ERR_IO, "%s: cannot keep the config: %s", dir,
			      ret < 0 ? err_msg() : strerror(errno));
		goto out;
	}
	if ((ret = config_load(out, tmp)) < 0) {
		blame_file(ret, tmp, path ? path : "(defaults)");
		config_free(out);
		unlink(tmp);
		goto out;
	}
	if (rename(tmp, final) < 0) {
		ret = err_set(ERR_IO, "%s: %s", final, strerror(errno));
		config_free(out);
		unlink(tmp);
		goto out;
	}
	free(out->path);
	out->path = path ? xstrdup(path) : NULL;
	ret = 0;
out:
	strbuf_release(&bytes);
	free(dir);
	free(final);
	free(tmp);
	return ret;
}
