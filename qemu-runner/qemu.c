/* qemu.c: boots a kernel with a deadline; TCG or KVM by a cached probe. */
#include "qemu.h"
#include "err.h"
#include "file.h"
#include "karch.h"
#include "spawn.h"
#include "strbuf.h"
#include "strvec.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define QEMU_BIN "qemu-system-x86_64"
#define QEMU_PKG "qemu-system-x86"
#define BASE_APPEND "panic=-1 oops=panic loglevel=7"
#define USERSPACE_MARK "@@stableq userspace"

void qemu_result_release(struct qemu_result *r)
{
	if (!r)
		return;
	free(r->cmdline);
	free(r->qemu_output);
	memset(r, 0, sizeof(*r));
}

/* Reads what the console file gained since *off; 1 if needle showed up. */
static int console_has(int fd, off_t *off, struct strbuf *carry,
		       const char *needle)
{
	char buf[8192];
	size_t keep = strlen(needle);
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), *off)) > 0) {
		*off += n;
		strbuf_add(carry, buf, (size_t)n);
		if (memmem(carry->buf, carry->len, needle, strlen(needle)))
			return 1;
		/* keep a needle's length, a marker may straddle reads */
		if (carry->len > keep) {
			memmove(carry->buf, carry->buf + carry->len - keep,
				keep);
			strbuf_setlen(carry, keep);
		}
	}
	return 0;
}

/* Watches the console for stop_at (the boot ends there) or mark_at. */
static int wait_stop_at(struct spawn *s, const struct qemu_opts *o,
			struct qemu_result *r)
{
	struct strbuf carry = STRBUF_INIT;
	const char *needle = o->stop_at ? o->stop_at : o->mark_at;
	double t0 = now_monotonic();
	off_t off = 0;
	int fd = -1, ret;

	for (;;) {
		ret = spawn_poll(s, 0);
		if (ret != 0)
			break;
		if (fd < 0)
			fd = open(o->console_log, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && console_has(fd, &off, &carry, needle)) {
			if (!o->stop_at) {
				/* marked: the rest of the boot is waited for */
				r->mark_seconds = now_monotonic() - t0;
				ret = spawn_poll(s, 1);
				break;
			}
			r->stopped = 1;
			spawn_kill(s, 0);
			ret = s->pid > 0 ? spawn_poll(s, 1) : 1;
			break;
		}
		usleep(50 * 1000);
	}
	if (fd >= 0)
		close(fd);
	strbuf_release(&carry);
	return ret < 0 ? ret : 0;
}

int qemu_boot(const struct qemu_opts *o, struct qemu_result *r)
{
	struct spawn s = SPAWN_INIT;
	struct strvec argv = STRVEC_INIT;
	int ret, timeout = o->timeout_s > 0 ? o->timeout_s : 300;
	const struct karch *ga = o->arch ? o->arch : &karch_table[0];
	int kvm;

	memset(r, 0, sizeof(*r));
	if (!o->kernel || !o->initrd || !o->console_log || !o->accel)
		return err_set(ERR_INVALID,
			       "qemu: kernel, initrd, console log and accel "
			       "are needed");
	kvm = !strcmp(o->accel, "kvm");
	if (!kvm && strcmp(o->accel, "tcg"))
		return err_set(ERR_INVALID, "qemu: unknown accel '%s'",
			       o->accel);
	if (access(o->kernel, R_OK) < 0)
		return err_set(ERR_NOTFOUND, "qemu: kernel %s: %s", o->kernel,
			       strerror(errno));
	if (access(o->initrd, R_OK) < 0)
		return err_set(ERR_NOTFOUND, "qemu: initrd %s: %s", o->initrd,
			       strerror(errno));
	/* truncate: the parser must see this boot only */
	int cfd = open(o->console_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		       0644);
	if (cfd < 0)
		return err_set(ERR_IO, "qemu: console log %s: %s",
			       o->console_log, strerror(errno));
	close(cfd);

	strvec_pushl(&argv, o->qemu ? o->qemu : ga->qemu, "-nodefaults",
		     "-nographic", "-no-reboot", "-smp", "1", "-m", NULL);
	strvec_pushf(&argv, "%d", o->memory_mb > 0 ? o->memory_mb : 256);
	/*
	 * TCG's "max" model has SMAP and SMEP, so user access outside
	 * user_access_begin() faults as it does on real hardware.
	 */
	if (ga->machine)
		strvec_pushl(&argv, "-M", ga->machine, NULL);
	strvec_pushl(&argv, "-accel", o->accel, "-cpu", kvm ? "host" : ga->tcg_cpu,
		     "-kernel", o->kernel, "-initrd", o->initrd, "-append", NULL);
	strvec_pushf(&argv, "console=%s " BASE_APPEND "%s%s", ga->console,
		     o->append && *o->append ? " " : "",
		     o->append && *o->append ? o->append : "");
	strvec_push(&argv, "-serial");
	strvec_pushf(&argv, "file:%s", o->console_log);
	strvec_pushl(&argv, "-monitor", "none", NULL);

	r->cmdline = spawn_cmdline(argv.v);
	s.argv = argv.v;
	s.capture = 1;
	s.capture_max = 64 * 1024;
	s.timeout_ms = timeout * 1000;
	ret = spawn_start(&s);
	if (ret == ERR_NOTFOUND) {
		err_set(ret,
			"%s not found: install the Debian package %s "
			"(`make deps`)",
			argv.v[0], ga->qemu_pkg);
		goto out;
	}
	if (ret < 0)
		goto out;
	if (o->stop_at || o->mark_at)
		ret = wait_stop_at(&s, o, r);
	else
		ret = spawn_poll(&s, 1) < 0 ? -1 : 0;
	if (ret < 0) {
		ret = ERR_IO;
		goto out;
	}
	r->status = s.status;
	r->timed_out = s.timed_out && !r->stopped;
	r->seconds = s.seconds;
	ret = 0;
out:
	r->qemu_output = xstrndup(s.out.buf, s.out.len);
	spawn_release(&s);
	strvec_clear(&argv);
	return ret;
}

/* What the probe's answer depends on: the host kernel and the QEMU binary. */
static char *probe_key(const char *qemu)
{
	struct utsname u;
	struct stat st;
	char *path = NULL;
	const char *bin = qemu ? qemu : QEMU_BIN;

	if (!strchr(bin, '/')) {
		const char *pathenv = getenv("PATH");
		char *dup = xstrdup(pathenv ? pathenv : "/usr/bin:/bin");
		for (char *save = NULL, *d = strtok_r(dup, ":", &save); d;
		     d = strtok_r(NULL, ":", &save)) {
			char *c = xstrfmt("%s/%s", d, bin);
			if (!access(c, X_OK)) {
				path = c;
				break;
			}
			free(c);
		}
		free(dup);
	}
	if (!path)
		path = xstrdup(bin);
	if (uname(&u) < 0)
		memset(&u, 0, sizeof(u));
	if (stat(path, &st) < 0)
		memset(&st, 0, sizeof(st));
	char *key =
		xstrfmt("host %s %s; %s %lld %lld", u.release, u.version, path,
			(long long)st.st_size, (long long)st.st_mtime);
	free(path);
	for (char *c = key; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = ' ';
	return key;
}

static int read_cache(const char *cache_path, const char *key,
		      const char **accel, char **why)
{
	struct strbuf sb = STRBUF_INIT;
	int hit = 0;

	if (!cache_path || strbuf_read_file(&sb, cache_path, 4096) < 0) {
		err_clear();
		strbuf_release(&sb);
		return 0;
	}
	strbuf_rtrim(&sb);
	char *t1 = strchr(sb.buf, '\t');
	char *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
	if (t1 && t2) {
		*t1 = *t2 = '\0';
		if (!strcmp(t1 + 1, key) &&
		    (!strcmp(sb.buf, "kvm") || !strcmp(sb.buf, "tcg"))) {
			*accel = !strcmp(sb.buf, "kvm") ? "kvm" : "tcg";
			if (why)
				*why = xstrfmt("cached in %s: %s", cache_path,
					       t2 + 1);
			hit = 1;
		}
	}
	strbuf_release(&sb);
	return hit;
}

static void write_cache(const char *cache_path, const char *accel,
			const char *key, const char *why)
{
	char *line;

	if (!cache_path)
		return;
	line = xstrfmt("%s\t%s\t%s\n", accel, key, why);
	for (char *c = line + strlen(accel) + strlen(key) + 2; *c; c++)
		if (*c == '\t' || (*c == '\n' && c[1]))
			*c = ' ';
	if (write_file_atomic(cache_path, line, strlen(line)) < 0)
		err_clear(); /* no cache: the next boot probes again */
	free(line);
}

/* Last non-empty line of QEMU's own output, for the probe's reason. */
static char *last_line(const char *s)
{
	size_t len = strlen(s);

	while (len && (s[len - 1] == '\n' || s[len - 1] == '\r'))
		len--;
	size_t start = len;
	while (start && s[start - 1] != '\n')
		start--;
	return xstrndup(s + start, len - start);
}

int qemu_choose_accel(const char *setting, const struct qemu_opts *o,
		      int probe_timeout_s, const char *cache_path,
		      const char **accel, char **why, double *probe_seconds)
{
	struct qemu_opts p;
	struct qemu_result r;
	char *key, *reason, *log;
	int fd, ret;

	if (why)
		*why = NULL;
	if (probe_seconds)
		*probe_seconds = 0;
	if (!setting || !strcmp(setting, "tcg") || !strcmp(setting, "kvm")) {
		*accel = setting && !strcmp(setting, "kvm") ? "kvm" : "tcg";
		if (why)
			*why = xstrfmt("qemu_accel = %s", *accel);
		return 0;
	}
	if (strcmp(setting, "auto"))
		return err_set(ERR_INVALID,
			       "qemu_accel must be auto, tcg or kvm, not '%s'",
			       setting);
	if (o->arch && o->arch->tcg_only) {
		*accel = "tcg";
		if (why)
			*why = xstrfmt("%s guests run under TCG", o->arch->name);
		return 0;
	}
	key = probe_key(o->qemu);
	if (read_cache(cache_path, key, accel, why)) {
		free(key);
		return 0;
	}
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		*accel = "tcg";
		reason = xstrfmt("/dev/kvm: %s", strerror(errno));
		goto decided;
	}
	close(fd);

	p = *o;
	p.accel = "kvm";
	p.timeout_s = probe_timeout_s > 0 ? probe_timeout_s : 20;
	p.stop_at = USERSPACE_MARK;
	log = xstrfmt("%s.kvm-probe", o->console_log);
	p.console_log = log;
	ret = qemu_boot(&p, &r);
	if (probe_seconds)
		*probe_seconds = r.seconds;
	if (ret == ERR_NOTFOUND && strstr(err_msg(), QEMU_PKG)) {
		qemu_result_release(&r);
		free(log);
		free(key);
		return ret;
	}
	if (ret < 0) {
		*accel = "tcg";
		reason = xstrfmt("KVM probe could not run: %s", err_msg());
	} else if (r.stopped) {
		*accel = "kvm";
		reason = xstrfmt("KVM probe reached userspace in %.1f s",
				 r.seconds);
	} else {
		char *ll = last_line(r.qemu_output ? r.qemu_output : "");
		*accel = "tcg";
		if (r.timed_out)
			reason = xstrfmt("KVM probe: no userspace within %d s "
					 "(guest hung)",
					 p.timeout_s);
		else
			reason = xstrfmt("KVM probe: QEMU ended with status "
					 "%d before userspace%s%s",
					 r.status, *ll ? ": " : "", ll);
		free(ll);
	}
	qemu_result_release(&r);
	free(log);
decided:
	write_cache(cache_path, *accel, key, reason);
	if (why)
		*why = xstrfmt("probe: %s", reason);
	free(reason);
	free(key);
	return 0;
}
