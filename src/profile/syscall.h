/* SPDX-License-Identifier: MIT */
/*
 * syscall.h - off-CPU evidence from the system call a thread waits in.
 *
 * A thread switched out inside a system call waits the way that call's
 * arguments say: poll with a timeout of -1 is an untimed wait, with 100 ms a
 * timed one, although the kernel sleeps in the same function for both.
 * The kernel stack names the call (its entry point, __x64_sys_poll,
 * __arm64_sys_futex...), and the user registers perf samples with every
 * switch-out of a `--call-graph dwarf` or `--user-regs` recording hold its
 * arguments as the thread entered the kernel. The rule table is the last
 * resort, for waits without this evidence.
 */
#ifndef PROFILE_SYSCALL_H
#define PROFILE_SYSCALL_H

#include <stdint.h>

#include "profile.h"

/* Where a recording's user registers keep the syscall arguments. */
enum sys_arch {
	SYS_ARCH_NONE = 0,
	SYS_ARCH_X86_64,
	SYS_ARCH_AARCH64,
};

/** sys_arch_of() - the register layout of perf's arch string (uname -m), or NONE. */
enum sys_arch sys_arch_of(const char *arch);

/**
 * sys_call_of() - the system call whose kernel entry point @function is
 * (__x64_sys_NAME, __arm64_sys_NAME, __se_sys_NAME, __do_sys_NAME), or the
 * function that implements it where the entry tail-calls it and so is not
 * on the stack (do_semtimedop), as an index + 1 into the table of calls
 * that decide a wait; 0 for any other function. The name is matched whole,
 * so a kernel helper is no entry.
 */
int sys_call_of(const char *function);

/**
 * sys_args() - the six syscall arguments from a sample's user registers.
 * @mask, @regs: the sample's PERF_SAMPLE_REGS_USER mask and values.
 * Return: false when the layout is unknown or an argument register was not
 * sampled.
 */
bool sys_args(enum sys_arch arch, uint64_t mask, const uint64_t *regs, uint64_t args[6]);

/*
 * The user memory a sample holds: the stack perf copied from the user stack
 * pointer up (PERF_SAMPLE_STACK_USER), where a call's argument structures
 * often lie (io_uring_enter's extended argument, with its timeout).
 */
struct sys_mem {
	uint64_t base;                  /* the user address of bytes[0] */
	const uint8_t *bytes;           /* borrowed from the sample */
	uint64_t size;
};

/**
 * sys_mem_of() - @out: the stack bytes of a sample, at the stack pointer of
 * its user registers (@mask, @regs) - @stack, @size: its valid bytes.
 * Return: false when there are none or the stack pointer was not sampled.
 */
bool sys_mem_of(enum sys_arch arch, uint64_t mask, const uint64_t *regs, const uint8_t *stack,
		uint64_t size, struct sys_mem *out);

/**
 * sys_counter() - the counter a wait in call @call (sys_call_of()) with
 * @args belongs to, for a thread switched out in @state (sched_switch's
 * letter); -1 when the call and its arguments do not decide it (the
 * kernel's rules do then). A futex wait for the value 2 is a lock word's
 * contended state (glibc's low-level locks, Rust's std Mutex): a lock.
 * @mem: the sample's user memory, or NULL; read for arguments passed in a
 * structure (io_uring_enter's timeout), which without it do not decide.
 */
int sys_counter(int call, const uint64_t args[6], char state, const struct sys_mem *mem);

/**
 * sys_awaits_unsaid() - whether a wait in call @call with @args says only
 * whether it was timed, not what it awaited: a futex word (not a PI lock,
 * not waited for 2: a condition variable's, a semaphore's, a hand-made
 * lock's or event's alike), a set of futexes, a System V semaphore. The
 * untimed such wait is a lock's or an event's; its arguments tell not
 * which. A poll, a wait for a child, a file lock say what they await.
 */
bool sys_awaits_unsaid(int call, const uint64_t args[6]);

/**
 * sys_timeout_ns() - the relative timeout, in ns, of a wait in call @call
 * with @args: a poll's milliseconds, or a relative time the arguments
 * point to in @mem (NULL: none copied). 0 when there is none, it is not
 * readable, or it is absolute (a futex's WAIT_BITSET, a condition
 * variable's): the wait's length cannot be held against it then.
 */
uint64_t sys_timeout_ns(int call, const uint64_t args[6], const struct sys_mem *mem);

/** sys_untimed() - the counter of an untimed wait in @call (sleep, or io for an I/O's). */
int sys_untimed(int call);

/** sys_call_named() - the number of the call named @name ("poll"), 0 if it is not read. */
int sys_call_named(const char *name);

/** sys_call_name() - the name of @call, for messages. */
const char *sys_call_name(int call);

#endif /* PROFILE_SYSCALL_H */
