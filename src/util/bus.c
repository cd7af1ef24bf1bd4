/* SPDX-License-Identifier: MIT */
/*
 * bus.c - SIGBUS from a file mapping cut short under perfport. libelf maps
 * the binaries and debug files it reads, the reader maps the recording;
 * a file truncated while mapped makes every access past its new end a
 * SIGBUS, which ended `report` in 148 of 200 runs when a build rewrote a
 * binary under it. The handler maps a private page of zeros over the
 * faulting page and returns, so the access is retried and reads zeros:
 * damaged data, which libelf, libdw and the reader check as they check
 * any file. Each user says so afterwards, from its own count.
 */
#include "bus.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

struct watch {
	atomic_uintptr_t base;  /* 0: free */
	atomic_size_t len;
	atomic_uint pages;
};

static struct watch watches[BUS_WATCH_MAX];
static atomic_uint other_pages;
static uintptr_t page_size;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Async-signal-safe: mmap() is a system call, the counts lock-free. */
static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (si->si_code == BUS_ADRERR && si->si_addr) {
		uintptr_t addr = (uintptr_t)si->si_addr;
		void *page = (void *)(addr & ~(page_size - 1));

		if (mmap(page, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
			for (unsigned i = 0; i < BUS_WATCH_MAX; i++) {
				uintptr_t b = atomic_load(&watches[i].base);

				if (b && addr >= b && addr - b < atomic_load(&watches[i].len)) {
					atomic_fetch_add(&watches[i].pages, 1);
					return;
				}
			}
			atomic_fetch_add(&other_pages, 1);
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

	page_size = ps > 0 ? (uintptr_t)ps : 4096;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

void bus_guard(void)
{
	pthread_once(&once, install);
}

int bus_watch(const void *base, size_t len)
{
	for (int i = 0; i < BUS_WATCH_MAX; i++) {
		uintptr_t none = 0;

		if (atomic_compare_exchange_strong(&watches[i].base, &none, (uintptr_t)base)) {
			atomic_store(&watches[i].pages, 0);
			atomic_store(&watches[i].len, len);
			return i;
		}
	}
	return -1;
}

unsigned bus_watched_pages(int slot)
{
	return slot >= 0 && slot < BUS_WATCH_MAX ? atomic_load(&watches[slot].pages) : 0;
}

void bus_unwatch(int slot)
{
	if (slot < 0 || slot >= BUS_WATCH_MAX)
		return;
	atomic_store(&watches[slot].len, 0);
	atomic_store(&watches[slot].base, 0);
}

unsigned bus_other_pages(void)
{
	return atomic_load(&other_pages);
}
