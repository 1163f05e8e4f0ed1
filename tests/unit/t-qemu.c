/* t-qemu.c: the QEMU command line qemu_boot() runs, through a stand-in binary that prints it. */
#include "err.h"
#include "file.h"
#include "qemu.h"
#include "strbuf.h"
#include "tap.h"

#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	char dir[] = "/tmp/t-qemu.XXXXXX";
	struct qemu_result r;
	struct qemu_opts o = { 0 };
	char *fake, *kernel, *initrd, *log, *want;

	if (!mkdtemp(dir))
		return 1;
	fake = xstrfmt("%s/qemu", dir);
	kernel = xstrfmt("%s/bzImage", dir);
	initrd = xstrfmt("%s/initrd", dir);
	log = xstrfmt("%s/console.log", dir);
	/* one argument a line, so that a space inside one shows */
	write_file_atomic(fake, "#!/bin/sh\nfor a; do echo \"[$a]\"; done\nexit 7\n", 44);
	chmod(fake, 0755);
	write_file_atomic(kernel, "k", 1);
	write_file_atomic(initrd, "i", 1);
	o.qemu = fake;
	o.kernel = kernel;
	o.initrd = initrd;
	o.console_log = log;
	o.accel = "tcg";
	o.append = "quiet x=1";
	o.memory_mb = 512;
	o.timeout_s = 30;
	ok(qemu_boot(&o, &r) == 0, "qemu_boot runs the binary");
	is_int(r.status, 7, "... its exit status");
	want = xstrfmt("[-nodefaults]\n[-nographic]\n[-no-reboot]\n[-smp]\n[1]\n[-m]\n[512]\n"
		       "[-accel]\n[tcg]\n[-cpu]\n[max]\n[-kernel]\n[%s]\n[-initrd]\n[%s]\n"
		       "[-append]\n[console=ttyS0 panic=-1 oops=panic loglevel=7 quiet x=1]\n"
		       "[-serial]\n[file:%s]\n[-monitor]\n[none]\n", kernel, initrd, log);
	is_str(r.qemu_output, want, "... with the arguments qemu.h documents, in order");
	like(r.cmdline, "-accel tcg", "cmdline for the logs");
	free(want);
	free(r.cmdline);
	free(r.qemu_output);

	o.accel = "kvm";
	o.append = NULL;
	o.memory_mb = 0;
	ok(qemu_boot(&o, &r) == 0, "with kvm, no extra parameters, default memory");
	like(r.qemu_output, "[-cpu]\n[host]\n", "... -cpu host");
	like(r.qemu_output, "[-m]\n[256]\n", "... 256 MiB");
	like(r.qemu_output, "[-append]\n[console=ttyS0 panic=-1 oops=panic loglevel=7]\n",
	     "... the base parameters alone");
	free(r.cmdline);
	free(r.qemu_output);

	o.accel = "xen";
	is_int(qemu_boot(&o, &r), ERR_INVALID, "an unknown accel is refused");
	free(fake);
	free(kernel);
	free(initrd);
	free(log);
	rm_rf(dir);
	return done_testing();
}
