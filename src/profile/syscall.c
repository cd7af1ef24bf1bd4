/* SPDX-License-Identifier: MIT */
/*
 * syscall.c - off-CPU evidence from the system call a thread waits in (see
 * syscall.h). The table names each call that can block, which argument
 * holds its timeout, and what that argument is.
 */
#include <stdbool.h>
#include <string.h>

#include "syscall.h"

enum timeout_kind {
	TO_NONE,        /* the call has no timeout: the wait is untimed */
	TO_ALWAYS,      /* the call is a sleep: always timed */
	TO_POINTER,     /* a pointer to a time: NULL is untimed */
	TO_MILLIS,      /* an int of milliseconds: negative is untimed */
	TO_FUTEX,       /* futex(): by its op, then a pointer */
	TO_FLOCK,       /* flock(): a lock wait unless LOCK_NB */
	TO_FCNTL,       /* fcntl(): a lock wait for F_SETLKW and F_OFD_SETLKW */
	TO_URING,       /* io_uring_enter(): by its flags, then the extended argument */
};

/* What a timeout pointer points to: a relative time whose length can be
 * read (where the sample copied the memory), or something that cannot be
 * compared with the wait's length here (an absolute time, a clock's). */
enum timeout_form {
	TF_OPAQUE,
	TF_TIMESPEC,    /* { tv_sec, tv_nsec }, relative */
	TF_TIMEVAL,     /* { tv_sec, tv_usec }, relative */
};

struct sys_call {
	const char *name;
	const char *impl;               /* a kernel function it can be seen by instead of its
					 * entry point (which a tail call leaves out), or NULL */
	enum timeout_kind kind;
	int arg;                        /* the timeout's (or op's) argument */
	enum counter untimed;           /* the counter of an untimed wait */
	enum timeout_form form;         /* what a TO_POINTER (or futex wait) points to */
	bool unsaid;                    /* what it awaits its arguments do not say
					 * (sys_awaits_unsaid(); futex: by its op) */
};

static const struct sys_call calls[] = {
	{ "futex", NULL, TO_FUTEX, 3, CNT_SLEEP, TF_TIMESPEC, true },
	{ "futex_waitv", NULL, TO_POINTER, 3, CNT_SLEEP, TF_OPAQUE, true },
	{ "poll", NULL, TO_MILLIS, 2, CNT_SLEEP, TF_OPAQUE, false },
	{ "ppoll", NULL, TO_POINTER, 2, CNT_SLEEP, TF_TIMESPEC, false },
	{ "select", NULL, TO_POINTER, 4, CNT_SLEEP, TF_TIMEVAL, false },
	{ "pselect6", NULL, TO_POINTER, 4, CNT_SLEEP, TF_TIMESPEC, false },
	{ "epoll_wait", NULL, TO_MILLIS, 3, CNT_SLEEP, TF_OPAQUE, false },
	{ "epoll_pwait", NULL, TO_MILLIS, 3, CNT_SLEEP, TF_OPAQUE, false },
	{ "epoll_pwait2", NULL, TO_POINTER, 3, CNT_SLEEP, TF_TIMESPEC, false },
	{ "nanosleep", NULL, TO_ALWAYS, 0, CNT_TIMED_SLEEP, TF_OPAQUE, false },
	{ "clock_nanosleep", NULL, TO_ALWAYS, 0, CNT_TIMED_SLEEP, TF_OPAQUE, false },
	{ "semop", NULL, TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, true },
	/* glibc's semop() is semtimedop(..., NULL) on 64-bit; the kernel's
	 * entry tail-calls do_semtimedop (a libc calling semop itself leaves
	 * the 4th register as it was: such a wait may read as timed) */
	{ "semtimedop", "do_semtimedop", TO_POINTER, 3, CNT_SLEEP, TF_TIMESPEC, true },
	{ "io_getevents", NULL, TO_POINTER, 4, CNT_IO, TF_TIMESPEC, false },
	{ "io_pgetevents", NULL, TO_POINTER, 4, CNT_IO, TF_TIMESPEC, false },
	{ "mq_timedreceive", NULL, TO_POINTER, 4, CNT_SLEEP, TF_OPAQUE, false },
	{ "mq_timedsend", NULL, TO_POINTER, 4, CNT_SLEEP, TF_OPAQUE, false },
	{ "rt_sigtimedwait", NULL, TO_POINTER, 2, CNT_SLEEP, TF_TIMESPEC, false },
	{ "rt_sigsuspend", NULL, TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, false },
	{ "pause", NULL, TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, false },
	/* the entry points tail-call their kernel_ function (6.x x86_64) */
	{ "wait4", "kernel_wait4", TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, false },
	{ "waitid", "kernel_waitid", TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, false },
	{ "msgrcv", NULL, TO_NONE, 0, CNT_SLEEP, TF_OPAQUE, false },
	{ "flock", NULL, TO_FLOCK, 1, CNT_LOCK, TF_OPAQUE, false },
	{ "fcntl", NULL, TO_FCNTL, 1, CNT_LOCK, TF_OPAQUE, false },
	{ "io_uring_enter", NULL, TO_URING, 4, CNT_IO, TF_OPAQUE, false },
};

#define NR_CALLS (sizeof(calls) / sizeof(calls[0]))

/* futex ops (linux/futex.h), after FUTEX_PRIVATE_FLAG and FUTEX_CLOCK_REALTIME */
enum {
	FUTEX_OP_WAIT = 0, FUTEX_OP_LOCK_PI = 6, FUTEX_OP_WAIT_BITSET = 9,
	FUTEX_OP_WAIT_REQUEUE_PI = 11, FUTEX_OP_LOCK_PI2 = 13,
	FUTEX_LOCK_CONTENDED = 2,
};

/* io_uring_enter flags (linux/io_uring.h) */
enum {
	URING_GETEVENTS = 1u << 0, URING_EXT_ARG = 1u << 3, URING_EXT_ARG_REG = 1u << 6,
};

/* struct io_uring_getevents_arg { u64 sigmask; u32 sigmask_sz; u32
 * min_wait_usec; u64 ts; }: the timeout pointer's offset */
#define URING_ARG_TS 16

enum sys_arch sys_arch_of(const char *arch)
{
	if (!arch)
		return SYS_ARCH_NONE;
	if (!strcmp(arch, "x86_64"))
		return SYS_ARCH_X86_64;
	if (!strcmp(arch, "aarch64") || !strcmp(arch, "arm64"))
		return SYS_ARCH_AARCH64;
	return SYS_ARCH_NONE;
}

int sys_call_of(const char *function)
{
	static const char *const prefixes[] = {
		"__x64_sys_", "__arm64_sys_", "__se_sys_", "__do_sys_",
	};

	for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
		size_t n = strlen(prefixes[p]);

		if (strncmp(function, prefixes[p], n) != 0)
			continue;
		for (size_t i = 0; i < NR_CALLS; i++)
			if (!strcmp(function + n, calls[i].name))
				return (int)i + 1;
		return 0;
	}
	for (size_t i = 0; i < NR_CALLS; i++)
		if (calls[i].impl && !strcmp(function, calls[i].impl))
			return (int)i + 1;
	return 0;
}

int sys_call_named(const char *name)
{
	for (size_t i = 0; i < NR_CALLS; i++)
		if (!strcmp(name, calls[i].name))
			return (int)i + 1;
	return 0;
}

const char *sys_call_name(int call)
{
	return call > 0 && (size_t)call <= NR_CALLS ? calls[call - 1].name : "?";
}

bool sys_args(enum sys_arch arch, uint64_t mask, const uint64_t *regs, uint64_t args[6])
{
	/* perf's register numbers of the six arguments: x86_64 rdi, rsi, rdx,
	 * r10, r8, r9 (arch/x86/include/uapi/asm/perf_regs.h); aarch64 x0-x5 */
	static const int x86_64[6] = { 5, 4, 3, 18, 16, 17 };
	static const int aarch64[6] = { 0, 1, 2, 3, 4, 5 };
	const int *which = arch == SYS_ARCH_X86_64 ? x86_64 : arch == SYS_ARCH_AARCH64 ? aarch64 : NULL;

	if (!which || !regs)
		return false;
	for (int i = 0; i < 6; i++) {
		uint64_t bit = 1ull << which[i];

		if (!(mask & bit))
			return false;
		/* the sample holds the masked registers in bit order */
		args[i] = regs[__builtin_popcountll(mask & (bit - 1))];
	}
	return true;
}

bool sys_mem_of(enum sys_arch arch, uint64_t mask, const uint64_t *regs, const uint8_t *stack,
		uint64_t size, struct sys_mem *out)
{
	/* perf's number of the stack pointer: x86_64 sp, aarch64 sp */
	int sp = arch == SYS_ARCH_X86_64 ? 7 : arch == SYS_ARCH_AARCH64 ? 31 : -1;
	uint64_t bit;

	if (sp < 0 || !regs || !stack || !size)
		return false;
	bit = 1ull << sp;
	if (!(mask & bit))
		return false;
	out->base = regs[__builtin_popcountll(mask & (bit - 1))];
	out->bytes = stack;
	out->size = size;
	return true;
}

/* The u64 at user address @addr, if @mem holds all of it. */
static bool mem_u64(const struct sys_mem *mem, uint64_t addr, uint64_t *v)
{
	if (!mem || addr < mem->base || addr - mem->base > mem->size ||
	    mem->size - (addr - mem->base) < sizeof(*v))
		return false;
	memcpy(v, mem->bytes + (addr - mem->base), sizeof(*v));
	return true;
}

/*
 * io_uring_enter(fd, to_submit, min_complete, flags, arg, argsz): a wait for
 * completions only with GETEVENTS; its timeout, if any, is in the extended
 * argument's structure (EXT_ARG), which a registered wait region (EXT_ARG_REG)
 * keeps out of reach. 1 timed, 0 untimed, -1 undecided.
 */
static int uring_timed(const uint64_t args[6], const struct sys_mem *mem)
{
	uint64_t ts;

	if (!(args[3] & URING_GETEVENTS) || (args[3] & URING_EXT_ARG_REG))
		return -1;
	if (!(args[3] & URING_EXT_ARG) || !args[4])
		return 0;
	if (!mem_u64(mem, args[4] + URING_ARG_TS, &ts))
		return -1;
	return ts != 0;
}

int sys_untimed(int call)
{
	return call > 0 && (size_t)call <= NR_CALLS ? (int)calls[call - 1].untimed : CNT_SLEEP;
}

uint64_t sys_timeout_ns(int call, const uint64_t args[6], const struct sys_mem *mem)
{
	const struct sys_call *c;
	uint64_t sec, frac, addr;

	if (call <= 0 || (size_t)call > NR_CALLS)
		return 0;
	c = &calls[call - 1];
	if (c->kind == TO_MILLIS)
		return (int32_t)args[c->arg] > 0 ? (uint64_t)(int32_t)args[c->arg] * 1000000 : 0;
	if (c->kind == TO_FUTEX && (args[1] & 0x7f) != FUTEX_OP_WAIT)
		return 0;       /* WAIT_BITSET's and the PI ops' times are absolute */
	if ((c->kind != TO_POINTER && c->kind != TO_FUTEX) || c->form == TF_OPAQUE)
		return 0;
	addr = args[c->arg];
	if (!addr || !mem_u64(mem, addr, &sec) || !mem_u64(mem, addr + 8, &frac) ||
	    sec > UINT64_MAX / 2000000000 || frac >= 1000000000)
		return 0;
	return sec * 1000000000 + (c->form == TF_TIMEVAL ? frac * 1000 : frac);
}

bool sys_awaits_unsaid(int call, const uint64_t args[6])
{
	const struct sys_call *c;

	if (call <= 0 || (size_t)call > NR_CALLS)
		return false;
	c = &calls[call - 1];
	if (c->kind == TO_FUTEX)
		switch (args[1] & 0x7f) {
		case FUTEX_OP_WAIT:
		case FUTEX_OP_WAIT_BITSET:
		case FUTEX_OP_WAIT_REQUEUE_PI:
			return (uint32_t)args[2] != FUTEX_LOCK_CONTENDED;
		default:
			return false;
		}
	return c->unsaid;
}

int sys_counter(int call, const uint64_t args[6], char state, const struct sys_mem *mem)
{
	const struct sys_call *c;
	bool timed;

	if (call <= 0 || (size_t)call > NR_CALLS || (state != 'S' && state != 'I'))
		return -1;
	c = &calls[call - 1];
	switch (c->kind) {
	case TO_NONE:
		timed = false;
		break;
	case TO_ALWAYS:
		timed = true;
		break;
	case TO_POINTER:
		timed = args[c->arg] != 0;
		break;
	case TO_MILLIS:
		timed = (int32_t)args[c->arg] >= 0;
		break;
	case TO_FUTEX:
		switch (args[1] & 0x7f) {
		case FUTEX_OP_LOCK_PI:
		case FUTEX_OP_LOCK_PI2:
			return CNT_LOCK;     /* a PI futex is a mutex, timed or not */
		case FUTEX_OP_WAIT:
		case FUTEX_OP_WAIT_BITSET:
		case FUTEX_OP_WAIT_REQUEUE_PI:
			/* the value 2 is a lock word's "locked, with waiters":
			 * glibc's low-level locks and Rust's std Mutex wait for
			 * it (condition variables and semaphores wait for 0);
			 * else the timeout decides */
			if ((uint32_t)args[2] == FUTEX_LOCK_CONTENDED)
				return CNT_LOCK;
			timed = args[3] != 0;
			break;
		default:
			return -1;
		}
		break;
	case TO_FLOCK:
		return args[1] & 4 /* LOCK_NB */ ? -1 : CNT_LOCK;
	case TO_FCNTL:
		return args[1] == 7 /* F_SETLKW */ || args[1] == 14 /* F_SETLKW64 */ ||
		       args[1] == 38 /* F_OFD_SETLKW */ ? CNT_LOCK : -1;
	case TO_URING: {
		int t = uring_timed(args, mem);

		if (t < 0)
			return -1;
		timed = t;
		break;
	}
	default:
		return -1;
	}
	return timed ? CNT_TIMED_SLEEP : (int)c->untimed;
}
