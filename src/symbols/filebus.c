/* SPDX-License-Identifier: MIT */
/*
 * filebus.c - SIGBUS from a file mapping cut short under perfport. libelf
 * maps the binaries and debug files it reads (dwfl_report_elf() opens
 * them itself, ELF_C_READ_MMAP); a file truncated and written again while
 * mapped (by a build, by a package manager writing in place) makes every
 * access past its new end a SIGBUS, which ended `report` in 148 of 200
 * runs. The handler maps a private page of zeros over the faulting page
 * and returns, so the access is retried and reads zeros: damaged data,
 * which libelf and libdw check as they check any file. Said afterwards.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../util/log.h"
#include "filebus.h"

static atomic_uint bus_pages;         /* pages replaced by zeros so far */
static unsigned bus_said;             /* of them, already warned about */
static uintptr_t bus_page_size;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

/* Async-signal-safe: mmap() is a system call, the count lock-free. */
static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == BUS_ADRERR && si->si_addr) {
		void *page = (void *)((uintptr_t)si->si_addr & ~(bus_page_size - 1));

		if (mmap(page, bus_page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			atomic_fetch_add(&bus_pages, 1);
			return;
		}
	}
	/* not a mapping's missing page: the default action, at the retry */
	signal(sig, SIG_DFL);
}

static void install(void)
{
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };
	long ps = sysconf(_SC_PAGESIZE);

	bus_page_size = ps > 0 ? (uintptr_t)ps : 4096;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void sym_bus_guard(void)
{
	pthread_once(&bus_once, install);
}

void sym_bus_report(void)
{
	unsigned n = atomic_load(&bus_pages);

	if (n == bus_said)
		return;
	pp_warn("a file mapped for naming was cut short while it was read (%u page%s past its "
		"new end read as zeros): a binary or debug file rewritten in place under "
		"perfport; names from it may be missing or wrong", n - bus_said, n - bus_said == 1 ? "" : "s");
	bus_said = n;
}
