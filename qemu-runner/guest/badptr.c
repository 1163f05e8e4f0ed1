/* badptr.c - guest test: bad user pointers to syscalls and sigreturn (TAP). */

/*
 * Runs as a static binary inside the QEMU guest (never on the build host's
 * kernel). Three groups of checks, each one TAP line:
 *
 *   efault   every syscall in sc_table, given every pointer in ptr_table,
 *            must fail with EFAULT (and not crash the caller or the kernel);
 *   sigsegv  a child that sigreturns through a bad frame, or takes a signal
 *            on a PROT_NONE alternate stack, must die of SIGSEGV;
 *   noleak   a syscall that faults half way through an output buffer may
 *            write a prefix of the right answer into the accessible part,
 *            but nothing else: every accessible byte is either still our
 *            fill pattern or equal to a reference answer.
 *
 * Build: gcc -static -O2 -Wall -o badptr badptr.c
 * Exit status 0 iff every check passed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define FILL 0xa5

static long page;
static char *none_page; /* PROT_NONE, preceded by one RW page */
static char *rw_page; /* the RW page just below none_page */
static char *unmapped; /* was mapped, now unmapped */
static char *none_stack; /* 64 KiB PROT_NONE, for sigaltstack */
#define NONE_STACK_SIZE (64 * 1024)

static int test_no;
static int failures;

static void tap(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", ok ? "" : "not ", ++test_no);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!ok)
		failures++;
}

static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* Raw syscalls only: libc wrappers and the vDSO would fault in userspace. */
static long ret_errno(long r)
{
	return r < 0 ? -errno : r;
}

/* ---- efault: syscall x pointer ---- */

struct bad_ptr {
	const char *name;
	uintptr_t addr; /* 0: filled in at runtime from ->runtime */
	char **runtime;
};

static struct bad_ptr ptr_table[] = {
	{"NULL+16", 16, NULL},
	{"kernel direct map 0xffff888000000000", 0xffff888000000000ul, NULL},
	{"kernel text 0xffffffff81000000", 0xffffffff81000000ul, NULL},
	{"non-canonical 0x8000000000000000", 0x8000000000000000ul, NULL},
	{"unmapped page", 0, &unmapped},
	{"PROT_NONE page", 0, &none_page},
};

static long sc_read(void *p)
{
	int fds[2];
	long r;

	if (pipe(fds))
		return -1000;
	if (write(fds[1], "0123456789abcdef", 16) != 16)
		return -1001;
	r = ret_errno(syscall(SYS_read, fds[0], p, 16));
	close(fds[0]);
	close(fds[1]);
	return r;
}

static long sc_write(void *p)
{
	int fds[2];
	long r;

	if (pipe(fds))
		return -1000;
	r = ret_errno(syscall(SYS_write, fds[1], p, 16));
	close(fds[0]);
	close(fds[1]);
	return r;
}

static long sc_readv_iov(void *p)
{
	int fds[2];
	long r;

	if (pipe(fds))
		return -1000;
	if (write(fds[1], "0123456789abcdef", 16) != 16)
		return -1001;
	r = ret_errno(syscall(SYS_readv, fds[0], p, 1));
	close(fds[0]);
	close(fds[1]);
	return r;
}

static long sc_writev_base(void *p)
{
	struct iovec iov = {.iov_base = p, .iov_len = 16};
	int fds[2];
	long r;

	if (pipe(fds))
		return -1000;
	r = ret_errno(syscall(SYS_writev, fds[1], &iov, 1));
	close(fds[0]);
	close(fds[1]);
	return r;
}

/*
 * arm64 (the generic syscall table) has no stat, open, poll or select:
 * their *at and p* forms copy the same user memory, cross-built with
 * aarch64-linux-gnu-gcc -static for the arm64 guest.
 */
static long raw_stat(const void *path, void *st)
{
#ifdef SYS_stat
	return syscall(SYS_stat, path, st);
#else
	return syscall(SYS_newfstatat, AT_FDCWD, path, st, 0);
#endif
}

static long sc_stat_path(void *p)
{
	struct stat st;

	return ret_errno(raw_stat(p, &st));
}

static long sc_stat_buf(void *p)
{
	return ret_errno(raw_stat("/", p));
}

static long sc_fstat_buf(void *p)
{
	return ret_errno(syscall(SYS_fstat, 1, p));
}

static long sc_open_path(void *p)
{
#ifdef SYS_open
	return ret_errno(syscall(SYS_open, p, 0));
#else
	return ret_errno(syscall(SYS_openat, AT_FDCWD, p, 0));
#endif
}

static long sc_uname(void *p)
{
	return ret_errno(syscall(SYS_uname, p));
}

static long sc_clock_gettime(void *p)
{
	return ret_errno(syscall(SYS_clock_gettime, CLOCK_MONOTONIC, p));
}

static long sc_gettimeofday(void *p)
{
	return ret_errno(syscall(SYS_gettimeofday, p, NULL));
}

static long sc_nanosleep(void *p)
{
	return ret_errno(syscall(SYS_nanosleep, p, NULL));
}

static long sc_getrusage(void *p)
{
	return ret_errno(syscall(SYS_getrusage, RUSAGE_SELF, p));
}

static long sc_sysinfo(void *p)
{
	return ret_errno(syscall(SYS_sysinfo, p));
}

static long sc_sigaction_act(void *p)
{
	return ret_errno(syscall(SYS_rt_sigaction, SIGUSR1, p, NULL, 8));
}

static long sc_sigaction_oldact(void *p)
{
	return ret_errno(syscall(SYS_rt_sigaction, SIGUSR1, NULL, p, 8));
}

static long sc_sigprocmask_old(void *p)
{
	return ret_errno(syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, p, 8));
}

static long sc_poll(void *p)
{
#ifdef SYS_poll
	return ret_errno(syscall(SYS_poll, p, 1, 0));
#else
	struct timespec ts = {0, 0};

	return ret_errno(syscall(SYS_ppoll, p, 1, &ts, NULL, 8));
#endif
}

static long sc_select(void *p)
{
#ifdef SYS_select
	struct timeval tv = {0, 0};

	return ret_errno(syscall(SYS_select, 1, p, NULL, NULL, &tv));
#else
	struct timespec ts = {0, 0};

	return ret_errno(syscall(SYS_pselect6, 1, p, NULL, NULL, &ts, NULL));
#endif
}

static long sc_pipe(void *p)
{
	return ret_errno(syscall(SYS_pipe2, p, 0));
}

static long sc_getcwd(void *p)
{
	return ret_errno(syscall(SYS_getcwd, p, 256));
}

static long sc_times(void *p)
{
	/* times() returns ticks, which may look negative: only EFAULT counts */
	long r = syscall(SYS_times, p);

	return r == -1 && errno == EFAULT ? -EFAULT : 0;
}

struct sc_test {
	const char *name;
	long (*call)(void *p);
};

static const struct sc_test sc_table[] = {
	{"read(pipe, buf)", sc_read},
	{"write(pipe, buf)", sc_write},
	{"readv(pipe, iov)", sc_readv_iov},
	{"writev(pipe, iov.iov_base)", sc_writev_base},
	{"stat(path)", sc_stat_path},
	{"stat(\"/\", statbuf)", sc_stat_buf},
	{"fstat(1, statbuf)", sc_fstat_buf},
	{"open(path)", sc_open_path},
	{"uname(buf)", sc_uname},
	{"clock_gettime(MONOTONIC, ts)", sc_clock_gettime},
	{"gettimeofday(tv)", sc_gettimeofday},
	{"nanosleep(req)", sc_nanosleep},
	{"getrusage(SELF, ru)", sc_getrusage},
	{"sysinfo(info)", sc_sysinfo},
	{"rt_sigaction(USR1, act)", sc_sigaction_act},
	{"rt_sigaction(USR1, NULL, oldact)", sc_sigaction_oldact},
	{"rt_sigprocmask(BLOCK, NULL, oldset)", sc_sigprocmask_old},
	{"poll(fds)", sc_poll},
	{"select(readfds)", sc_select},
	{"pipe2(fds)", sc_pipe},
	{"getcwd(buf)", sc_getcwd},
	{"times(buf)", sc_times},
};

static void run_efault(void)
{
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(sc_table); i++) {
		for (j = 0; j < ARRAY_SIZE(ptr_table); j++) {
			const struct bad_ptr *bp = &ptr_table[j];
			void *p = bp->runtime ? (void *)*bp->runtime
					      : (void *)bp->addr;
			long r = sc_table[i].call(p);

			tap(r == -EFAULT, "efault: %s with %s (got %ld%s%s)",
			    sc_table[i].name, bp->name, r, r < 0 ? ", " : "",
			    r < 0 && r > -4096 ? strerror((int)-r) : "");
		}
	}
}

/* ---- sigsegv: a child must die of SIGSEGV, the kernel must not care ---- */

#ifdef __x86_64__
static void child_sigreturn_at(void *sp)
{
	/* rt_sigreturn reads its frame at sp - 8; the frame is unreadable */
	asm volatile("mov %0, %%rsp\n\t"
		     "mov %1, %%eax\n\t"
		     "syscall\n\t"
		     "ud2\n\t"
		     :
		     : "r"(sp), "i"(SYS_rt_sigreturn)
		     : "memory");
}
#endif

static void child_sigreturn_none(void)
{
#ifdef __x86_64__
	child_sigreturn_at(none_page + 64);
#endif
}

static void child_sigreturn_kernel(void)
{
#ifdef __x86_64__
	child_sigreturn_at((void *)(0xffff888000000000ul + 64));
#endif
}

static void usr1_must_not_run(int sig)
{
	(void)sig;
	_exit(3);
}

static void child_altstack_none(void)
{
	stack_t ss = {.ss_sp = none_stack, .ss_size = NONE_STACK_SIZE};
	struct sigaction sa;

	if (sigaltstack(&ss, NULL))
		_exit(4);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = usr1_must_not_run;
	sa.sa_flags = SA_ONSTACK;
	if (sigaction(SIGUSR1, &sa, NULL))
		_exit(4);
	raise(SIGUSR1);
}

/* What the SA_SIGINFO handler does to its own frame before returning. */
static enum {
	CORRUPT_FPSTATE_KERNEL,
	CORRUPT_FPSTATE_NONE,
	CORRUPT_RIP_KERNEL,
	CORRUPT_RIP_NONCANONICAL,
} corruption;

static void corrupt_frame(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;

	(void)sig;
	(void)si;
	(void)uc;
#ifdef __x86_64__
	switch (corruption) {
	case CORRUPT_FPSTATE_KERNEL:
		uc->uc_mcontext.fpregs = (void *)0xffff888000000000ul;
		break;
	case CORRUPT_FPSTATE_NONE:
		uc->uc_mcontext.fpregs = (void *)none_page;
		break;
	case CORRUPT_RIP_KERNEL:
		uc->uc_mcontext.gregs[REG_RIP] = 0xffffffff81000000l;
		break;
	case CORRUPT_RIP_NONCANONICAL:
		uc->uc_mcontext.gregs[REG_RIP] = 0x8000000000000000l;
		break;
	}
#endif
}

static void child_corrupt_frame(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = corrupt_frame;
	sa.sa_flags = SA_SIGINFO;
	if (sigaction(SIGUSR1, &sa, NULL))
		_exit(4);
	raise(SIGUSR1);
}

static void child_fpstate_kernel(void)
{
	corruption = CORRUPT_FPSTATE_KERNEL;
	child_corrupt_frame();
}

static void child_fpstate_none(void)
{
	corruption = CORRUPT_FPSTATE_NONE;
	child_corrupt_frame();
}

static void child_rip_kernel(void)
{
	corruption = CORRUPT_RIP_KERNEL;
	child_corrupt_frame();
}

static void child_rip_noncanonical(void)
{
	corruption = CORRUPT_RIP_NONCANONICAL;
	child_corrupt_frame();
}

struct segv_test {
	const char *name;
	void (*child)(void);
	int x86_only; /* x86_64's frame layout: skipped elsewhere */
};

static const struct segv_test segv_table[] = {
	{"rt_sigreturn with its frame on a PROT_NONE page",
	 child_sigreturn_none, 1},
	{"rt_sigreturn with its frame at a kernel address",
	 child_sigreturn_kernel, 1},
	{"SA_ONSTACK signal with the alternate stack on PROT_NONE pages",
	 child_altstack_none},
	{"sigreturn with uc_mcontext.fpregs at a kernel address",
	 child_fpstate_kernel, 1},
	{"sigreturn with uc_mcontext.fpregs on a PROT_NONE page",
	 child_fpstate_none, 1},
	{"sigreturn to a kernel RIP", child_rip_kernel, 1},
	{"sigreturn to a non-canonical RIP", child_rip_noncanonical, 1},
};

static void run_sigsegv(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(segv_table); i++) {
		int status = 0;
		pid_t pid;

#ifndef __x86_64__
		if (segv_table[i].x86_only) {
			printf("ok %d - sigsegv: %s # SKIP x86_64's signal "
			       "frame\n", ++test_no, segv_table[i].name);
			continue;
		}
#endif
		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			alarm(10); /* a hang shows up as SIGALRM, not SIGSEGV */
			segv_table[i].child();
			_exit(2); /* survived: the kernel let it go on */
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid) {
			tap(0, "sigsegv: %s (fork/wait failed: %s)",
			    segv_table[i].name, strerror(errno));
			continue;
		}
		if (WIFSIGNALED(status))
			tap(WTERMSIG(status) == SIGSEGV,
			    "sigsegv: %s (child killed by signal %d)",
			    segv_table[i].name, WTERMSIG(status));
		else
			tap(0, "sigsegv: %s (child exited with %d)",
			    segv_table[i].name, WEXITSTATUS(status));
	}
}

/* ---- noleak: partial writes may only hold the right answer ---- */

/*
 * @buf: the output buffer, its first @accessible bytes in rw_page and the
 * rest on none_page. @ref: the whole answer, taken with a good buffer.
 * Linux allows a faulting copy_to_user() to have written a prefix; it must
 * never write anything but the answer.
 */
static int only_fill_or_ref(const unsigned char *buf, const unsigned char *ref,
			    size_t accessible, size_t *bad_at)
{
	size_t i;

	for (i = 0; i < accessible; i++) {
		if (buf[i] != FILL && buf[i] != ref[i]) {
			*bad_at = i;
			return 0;
		}
	}
	return 1;
}

static void noleak_one(const char *name, size_t accessible, size_t size,
		       long (*call)(void *p), const void *ref)
{
	unsigned char *buf = (unsigned char *)none_page - accessible;
	size_t bad_at = 0;
	long r;
	int ok;

	if (accessible > size)
		accessible = size;
	memset(rw_page, FILL, page);
	r = call(buf);
	ok = r == -EFAULT && only_fill_or_ref(buf, ref, accessible, &bad_at);
	tap(ok, "noleak: %s, %zu of %zu bytes accessible (got %ld)", name,
	    accessible, size, r);
	if (!ok && r == -EFAULT)
		diag("byte %zu is 0x%02x, expected fill 0x%02x or answer "
		     "0x%02x",
		     bad_at, buf[bad_at], FILL,
		     ((const unsigned char *)ref)[bad_at]);
}

static unsigned char pipe_data[256];

static long sc_read_pipe_data(void *p)
{
	int fds[2];
	long r;

	if (pipe(fds))
		return -1000;
	if (write(fds[1], pipe_data, sizeof(pipe_data)) != sizeof(pipe_data))
		return -1001;
	r = ret_errno(syscall(SYS_read, fds[0], p, sizeof(pipe_data)));
	close(fds[0]);
	close(fds[1]);
	return r;
}

static void run_noleak(void)
{
	struct utsname uts;
	struct stat st;
	size_t i;

	/* uname(): the kernel copies one struct built from its own copy */
	memset(&uts, 0, sizeof(uts));
	if (syscall(SYS_uname, &uts))
		diag("uname: %s", strerror(errno));
	noleak_one("uname() across a PROT_NONE page", 100, sizeof(uts),
		   sc_uname, &uts);

	/* stat(): struct stat is zeroed (padding included) before the copy */
	memset(&st, 0, sizeof(st));
	if (raw_stat("/", &st))
		diag("stat: %s", strerror(errno));
	noleak_one("stat(\"/\") across a PROT_NONE page", 40, sizeof(st),
		   sc_stat_buf, &st);

	/* read() from a pipe: at most the piped bytes, in order */
	for (i = 0; i < sizeof(pipe_data); i++)
		pipe_data[i] = (unsigned char)(0x11 * (i % 15 + 1));
	noleak_one("read(pipe) across a PROT_NONE page", 64, sizeof(pipe_data),
		   sc_read_pipe_data, pipe_data);
}

#define NOLEAK_TESTS 3

static int setup(void)
{
	char *two;

	page = sysconf(_SC_PAGESIZE);
	two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (two == MAP_FAILED)
		return -1;
	if (mprotect(two + page, page, PROT_NONE))
		return -1;
	rw_page = two;
	none_page = two + page;

	unmapped = mmap(NULL, page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (unmapped == MAP_FAILED || munmap(unmapped, page))
		return -1;

	none_stack = mmap(NULL, NONE_STACK_SIZE, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (none_stack == MAP_FAILED)
		return -1;
	return 0;
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("1..%zu\n", ARRAY_SIZE(sc_table) * ARRAY_SIZE(ptr_table) +
				   ARRAY_SIZE(segv_table) + NOLEAK_TESTS);
	if (setup()) {
		printf("Bail out! setup: %s\n", strerror(errno));
		return 1;
	}
	run_efault();
	run_sigsegv();
	run_noleak();
	diag("%d of %d checks failed", failures, test_no);
	return failures ? 1 : 0;
}
