/* SPDX-License-Identifier: MIT */
/* condwait.c - four threads wait in pthread_cond_timedwait() from wait_for_work() (e2e 38). */
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
__attribute__((noinline)) void wait_for_work(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 2000000; if (ts.tv_nsec >= 1000000000) { ts.tv_sec++; ts.tv_nsec -= 1000000000; }
	pthread_mutex_lock(&m);
	pthread_cond_timedwait(&c, &m, &ts);
	pthread_mutex_unlock(&m);
}
static void *worker(void *a) { (void)a; for (int i = 0; i < 300; i++) wait_for_work(); return NULL; }
int main(void) { pthread_t t[4]; for (int i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0); for (int i = 0; i < 4; i++) pthread_join(t[i], 0); return 0; }
