/*
 * waits.c - one thread per wait primitive, each in a function of its own
 * name (and a thread of that name less "wait_"), waiting about 10 ms at a time for SECONDS: the untimed ones woken
 * by a waker thread, the timed ones by their timeout. The off-CPU state
 * test (71-wait-states) checks where each one's waiting time lands.
 * usage: waits SECONDS DIR      (DIR: for the lock files)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>

#define TICK_NS 10000000L

static struct timespec end_at;
static const char *dir;
static int pipes[4][2];           /* poll, epoll, select, io_uring: written by the waker */
static int quiet[2];              /* never written: the timed waits' fd */
static sem_t sem_woken, sem_never;
static pthread_mutex_t cond_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER, cond_never = PTHREAD_COND_INITIALIZER;
static unsigned long cond_ticks;
static pthread_mutex_t contended = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t recursive, pi_mutex, timed_mutex, clock_mutex, adaptive;
static int semid = -1;            /* a SysV semaphore, posted by the waker */
static int rcvtimeo_sock[2];      /* never written: recv ends by SO_RCVTIMEO */
static pthread_barrier_t barrier;
static int pipe_rd[2], sock[2], efd;
static pthread_t sigwaiter;
static long rounds;               /* the waker's 10 ms rounds: the barrier's too */

static int running(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec < end_at.tv_sec || (now.tv_sec == end_at.tv_sec && now.tv_nsec < end_at.tv_nsec);
}

/* The pause between waits: its own frame, so the test can tell it apart. */
__attribute__((noinline)) static void tick(void)
{
	struct timespec ts = { 0, TICK_NS };

	nanosleep(&ts, NULL);
}

static void drain(int fd)
{
	char buf[64];

	if (read(fd, buf, sizeof(buf)) < 0 && errno != EAGAIN)
		perror("read");
}

__attribute__((noinline)) static void wait_poll_untimed(void)
{
	struct pollfd p = { .fd = pipes[0][0], .events = POLLIN };

	while (running())
		if (poll(&p, 1, -1) > 0)
			drain(p.fd);
}

__attribute__((noinline)) static void wait_poll_timed(void)
{
	struct pollfd p = { .fd = quiet[0], .events = POLLIN };

	while (running())
		poll(&p, 1, 10);
}

static int epoll_on(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	int ep = epoll_create1(0);

	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	return ep;
}

__attribute__((noinline)) static void wait_epoll_untimed(void)
{
	struct epoll_event ev;
	int ep = epoll_on(pipes[1][0]);

	while (running())
		if (epoll_wait(ep, &ev, 1, -1) > 0)
			drain(ev.data.fd);
	close(ep);
}

__attribute__((noinline)) static void wait_epoll_timed(void)
{
	struct epoll_event ev;
	int ep = epoll_on(quiet[0]);

	while (running())
		epoll_wait(ep, &ev, 1, 10);
	close(ep);
}

__attribute__((noinline)) static void wait_select_untimed(void)
{
	while (running()) {
		fd_set r;

		FD_ZERO(&r);
		FD_SET(pipes[2][0], &r);
		if (select(pipes[2][0] + 1, &r, NULL, NULL, NULL) > 0)
			drain(pipes[2][0]);
	}
}

__attribute__((noinline)) static void wait_select_timed(void)
{
	while (running()) {
		struct timeval tv = { 0, 10000 };
		fd_set r;

		FD_ZERO(&r);
		FD_SET(quiet[0], &r);
		select(quiet[0] + 1, &r, NULL, NULL, &tv);
	}
}

static struct timespec in_10ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += TICK_NS;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

__attribute__((noinline)) static void wait_sem_untimed(void)
{
	while (running())
		sem_wait(&sem_woken);
}

__attribute__((noinline)) static void wait_sem_timed(void)
{
	while (running()) {
		struct timespec ts = in_10ms();

		sem_timedwait(&sem_never, &ts);
	}
}

__attribute__((noinline)) static void wait_cond_untimed(void)
{
	pthread_mutex_lock(&cond_lock);
	while (running()) {
		unsigned long seen = cond_ticks;

		while (seen == cond_ticks)
			pthread_cond_wait(&cond, &cond_lock);
	}
	pthread_mutex_unlock(&cond_lock);
}

__attribute__((noinline)) static void wait_cond_timed(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

	pthread_mutex_lock(&m);
	while (running()) {
		struct timespec ts = in_10ms();

		pthread_cond_timedwait(&cond_never, &m, &ts);
	}
	pthread_mutex_unlock(&m);
}

__attribute__((noinline)) static void wait_nanosleep(void)
{
	while (running())
		tick();
}

int open_lock_file(const char *name);

int open_lock_file(const char *name)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	if (fd < 0)
		perror(path);
	return fd;
}

int open_lock_file(const char *name);

__attribute__((noinline)) static void wait_pipe_read(void)
{
	char c;

	while (running())
		if (read(pipe_rd[0], &c, 1) < 0)
			break;
}

__attribute__((noinline)) static void wait_socket_read(void)
{
	char c;

	while (running())
		if (recv(sock[0], &c, 1, 0) < 0)
			break;
}

__attribute__((noinline)) static void wait_eventfd_read(void)
{
	uint64_t v;

	while (running())
		if (read(efd, &v, sizeof(v)) < 0)
			break;
}

__attribute__((noinline)) static void wait_timerfd_read(void)
{
	/* its own timer: a 10 ms period, each read() waiting for the next
	 * expiry (what woke it - the timer's interrupt, over whatever ran
	 * there - is not in a recording of this process's threads) */
	struct itimerspec its = { { 0, TICK_NS }, { 0, TICK_NS } };
	int fd = timerfd_create(CLOCK_MONOTONIC, 0);
	uint64_t n;

	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL)) {
		perror("timerfd");
		return;
	}
	while (running())
		if (read(fd, &n, sizeof(n)) < 0)
			break;
	close(fd);
}

__attribute__((noinline)) static void wait_barrier(void)
{
	/* the waker is the other party: each round ends when it arrives (a
	 * count of rounds, not the clock, so that neither waits alone) */
	for (long i = 0; i < rounds; i++)
		pthread_barrier_wait(&barrier);
}

__attribute__((noinline)) static void wait_waitpid(void)
{
	while (running()) {
		pid_t child = fork();

		if (child == 0) {
			struct timespec ts = { 0, TICK_NS };

			prctl(PR_SET_NAME, "waitpid_child");
			nanosleep(&ts, NULL);
			_exit(0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
}

/* A vfork's parent waits for its child to exec or exit (here: after a
 * 10 ms sleep): an event of another task, not an I/O, though the kernel
 * waits in the uninterruptible state. The child touches no memory it
 * shares: its name and its sleep are system calls on constants. */
__attribute__((noinline)) static void wait_vfork(void)
{
	static const struct timespec ts = { 0, TICK_NS };
	static const char child_name[] = "vfork_child";

	while (running()) {
		pid_t child = vfork();

		if (child == 0) {
			prctl(PR_SET_NAME, child_name);
			nanosleep(&ts, NULL);
			_exit(0);
		}
		if (child > 0)
			waitpid(child, NULL, 0);
	}
}

__attribute__((noinline)) static void wait_sigwait(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (running())
		sigwait(&set, &sig);
}

__attribute__((noinline)) static void wait_sigtimedwait(void)
{
	struct timespec ts = { 0, TICK_NS };
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);       /* never sent */
	while (running())
		sigtimedwait(&set, NULL, &ts);
}

__attribute__((noinline)) static void wait_fsync(void)
{
	static char page[4096];
	int fd = open_lock_file("fsync");

	while (running()) {
		if (pwrite(fd, page, sizeof(page), 0) < 0)
			break;
		fsync(fd);
	}
	close(fd);
}

__attribute__((noinline)) static void wait_fdatasync(void)
{
	static char page[4096];
	int fd = open_lock_file("fdatasync");

	while (running()) {
		if (pwrite(fd, page, sizeof(page), 0) < 0)
			break;
		fdatasync(fd);
	}
	close(fd);
}

__attribute__((noinline)) static void wait_msync(void)
{
	int fd = open_lock_file("msync");
	char *m;

	if (ftruncate(fd, 4096) || (m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
		return;
	while (running()) {
		m[0]++;
		msync(m, 4096, MS_SYNC);
	}
	munmap(m, 4096);
	close(fd);
}

#define COLD_SIZE (8 << 20)

/* A file of COLD_SIZE bytes, written and synced, its pages then dropped. */
static int cold_file(const char *name, int flags)
{
	static char chunk[1 << 16];
	int fd = open_lock_file(name);

	for (int i = 0; i < COLD_SIZE / (int)sizeof(chunk); i++)
		if (write(fd, chunk, sizeof(chunk)) < 0)
			break;
	fsync(fd);
	close(fd);
	if (flags) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		return open(path, O_RDONLY | flags);
	}
	return open_lock_file(name);
}

__attribute__((noinline)) static void wait_read_cold(void)
{
	static char buf[1 << 16];
	int fd = cold_file("cold", 0);

	while (running()) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		for (off_t o = 0; o < COLD_SIZE && running(); o += sizeof(buf))
			if (pread(fd, buf, sizeof(buf), o) <= 0)
				break;
	}
	close(fd);
}

__attribute__((noinline)) static void wait_read_direct(void)
{
	void *buf;
	int fd = cold_file("direct", O_DIRECT);

	if (fd < 0 || posix_memalign(&buf, 4096, 1 << 16))
		return;
	while (running())
		for (off_t o = 0; o < COLD_SIZE && running(); o += 1 << 16)
			if (pread(fd, buf, 1 << 16, o) <= 0)
				break;
	free(buf);
	close(fd);
}

__attribute__((noinline)) static void wait_page_fault(void)
{
	int fd = cold_file("faults", 0);
	volatile char sink = 0;

	while (running()) {
		char *m = mmap(NULL, COLD_SIZE, PROT_READ, MAP_SHARED, fd, 0);

		if (m == MAP_FAILED)
			break;
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		madvise(m, COLD_SIZE, MADV_RANDOM);
		for (long o = 0; o < COLD_SIZE && running(); o += 4096)
			sink += m[o];
		munmap(m, COLD_SIZE);
	}
	(void)sink;
	close(fd);
}

__attribute__((noinline)) static void wait_mutex_adaptive(void)
{
	while (running()) {
		pthread_mutex_lock(&adaptive);
		pthread_mutex_unlock(&adaptive);
		tick();
	}
}

/* An io_uring of its own, set up with the raw system calls (no liburing). */
struct ring {
	int fd;
	unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail;
	struct io_uring_sqe *sqes;
};

static int ring_init(struct ring *r)
{
	struct io_uring_params p;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0) {
		perror("io_uring_setup");
		return -1;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(unsigned), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -1;
	r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned *)(sq + p.sq_off.array);
	r->cq_head = (unsigned *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
	return 0;
}

static void ring_reap(struct ring *r)
{
	__atomic_store_n(r->cq_head, __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
}

/* Submits a read of the io_uring pipe and waits for it (no timeout): the
 * waker's write completes it. */
__attribute__((noinline)) static void wait_uring_untimed(void)
{
	struct ring r;
	char buf[64];

	if (ring_init(&r))
		return;
	while (running()) {
		unsigned tail = *r.sq_tail, i = tail & *r.sq_mask;
		struct io_uring_sqe *e = &r.sqes[i];

		memset(e, 0, sizeof(*e));
		e->opcode = IORING_OP_READ;
		e->fd = pipes[3][0];
		e->addr = (uint64_t)(uintptr_t)buf;
		e->len = sizeof(buf);
		e->off = (uint64_t)-1;
		r.sq_array[i] = i;
		__atomic_store_n(r.sq_tail, tail + 1, __ATOMIC_RELEASE);
		if (syscall(__NR_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			break;
		ring_reap(&r);
	}
	close(r.fd);
}

/* Waits for a completion that never comes, 10 ms at a time: the timeout is
 * passed in io_uring_enter's extended argument (as liburing's
 * io_uring_wait_cqe_timeout passes it), on the stack. */
__attribute__((noinline)) static void wait_uring_timed(void)
{
	struct ring r;

	if (ring_init(&r))
		return;
	while (running()) {
		struct __kernel_timespec ts = { 0, TICK_NS };
		struct io_uring_getevents_arg arg;

		memset(&arg, 0, sizeof(arg));
		arg.ts = (uint64_t)(uintptr_t)&ts;
		syscall(__NR_io_uring_enter, r.fd, 0, 1, IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
			&arg, sizeof(arg));
	}
	close(r.fd);
}

/* A POSIX record lock (lockf: fcntl F_SETLKW) held by another process, the
 * child posix_holder: POSIX locks are per process, so a thread of the same
 * one would never wait. */
__attribute__((noinline)) static void wait_posix_lock(void)
{
	int fd = open_lock_file("posix");

	while (running()) {
		if (lockf(fd, F_LOCK, 0) == 0)
			lockf(fd, F_ULOCK, 0);
		tick();
	}
	close(fd);
}

/* The child process that holds the POSIX lock 10 ms at a time. */
static pid_t posix_holder(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open_lock_file("posix");

		prctl(PR_SET_NAME, "posix_holder");
		while (running()) {
			lockf(fd, F_LOCK, 0);
			tick();
			lockf(fd, F_ULOCK, 0);
			sched_yield();
			tick();
		}
		_exit(0);
	}
	return pid;
}

/* Holds the flock and the OFD lock 10 ms at a time, against the waiters. */
static void *lock_holder(void *arg)
{
	int f1 = open_lock_file("flock"), f2 = open_lock_file("ofd");
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };

	(void)arg;
	while (running()) {
		flock(f1, LOCK_EX);
		fl.l_type = F_WRLCK;
		fcntl(f2, F_OFD_SETLKW, &fl);
		pthread_mutex_lock(&contended);
		pthread_rwlock_wrlock(&rwlock);
		pthread_mutex_lock(&recursive);
		pthread_mutex_lock(&pi_mutex);
		pthread_mutex_lock(&timed_mutex);
		pthread_mutex_lock(&clock_mutex);
		pthread_mutex_lock(&adaptive);
		tick();
		pthread_mutex_unlock(&adaptive);
		pthread_mutex_unlock(&clock_mutex);
		pthread_mutex_unlock(&timed_mutex);
		pthread_mutex_unlock(&pi_mutex);
		pthread_mutex_unlock(&recursive);
		pthread_rwlock_unlock(&rwlock);
		pthread_mutex_unlock(&contended);
		fl.l_type = F_UNLCK;
		fcntl(f2, F_OFD_SETLK, &fl);
		flock(f1, LOCK_UN);
		sched_yield();
		tick();
	}
	close(f1);
	close(f2);
	return NULL;
}

__attribute__((noinline)) static void wait_flock(void)
{
	int fd = open_lock_file("flock");

	while (running()) {
		flock(fd, LOCK_EX);
		flock(fd, LOCK_UN);
		tick();
	}
	close(fd);
}

__attribute__((noinline)) static void wait_ofd_lock(void)
{
	int fd = open_lock_file("ofd");
	struct flock fl = { .l_whence = SEEK_SET };

	while (running()) {
		fl.l_type = F_WRLCK;
		fcntl(fd, F_OFD_SETLKW, &fl);
		fl.l_type = F_UNLCK;
		fcntl(fd, F_OFD_SETLK, &fl);
		tick();
	}
	close(fd);
}

__attribute__((noinline)) static void wait_mutex(void)
{
	while (running()) {
		pthread_mutex_lock(&contended);
		pthread_mutex_unlock(&contended);
		tick();
	}
}

__attribute__((noinline)) static void wait_rwlock(void)
{
	while (running()) {
		pthread_rwlock_rdlock(&rwlock);
		pthread_rwlock_unlock(&rwlock);
		tick();
	}
}

__attribute__((noinline)) static void wait_mutex_recursive(void)
{
	while (running()) {
		pthread_mutex_lock(&recursive);
		pthread_mutex_unlock(&recursive);
		tick();
	}
}

__attribute__((noinline)) static void wait_mutex_pi(void)
{
	while (running()) {
		pthread_mutex_lock(&pi_mutex);
		pthread_mutex_unlock(&pi_mutex);
		tick();
	}
}

__attribute__((noinline)) static void wait_mutex_timed(void)
{
	while (running()) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 5;
		if (pthread_mutex_timedlock(&timed_mutex, &ts) == 0)
			pthread_mutex_unlock(&timed_mutex);
		tick();
	}
}

/* A SysV semaphore's semop() without a timeout (glibc passes it to the
 * kernel as semtimedop with a NULL timeout), posted by the waker. */
__attribute__((noinline)) static void wait_semop(void)
{
	struct sembuf down = { .sem_num = 0, .sem_op = -1 };

	while (running())
		if (semop(semid, &down, 1) < 0 && errno != EINTR)
			break;
}

/* recv() on a socket nobody writes, ended by its SO_RCVTIMEO (10 ms): a
 * timeout that is no argument of the call. */
__attribute__((noinline)) static void wait_recv_timeout(void)
{
	struct timeval tv = { 0, TICK_NS / 1000 };
	char c;

	setsockopt(rcvtimeo_sock[0], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (running())
		if (recv(rcvtimeo_sock[0], &c, 1, 0) > 0)
			break;
}

/* pthread_mutex_clocklock() (CLOCK_MONOTONIC, 5 s) on a mutex the holder
 * keeps 10 ms at a time: a lock wait with a timeout. */
__attribute__((noinline)) static void wait_mutex_clocklock(void)
{
	while (running()) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += 5;
		if (pthread_mutex_clocklock(&clock_mutex, CLOCK_MONOTONIC, &ts) == 0)
			pthread_mutex_unlock(&clock_mutex);
		tick();
	}
}

/* Ends one wait of each untimed waiter. */
static void wake_all(void)
{
	for (int i = 0; i < 4; i++)
		if (write(pipes[i][1], "x", 1) < 0)
			perror("write");
	sem_post(&sem_woken);
	/* broadcast after the unlock: a waiter woken while the mutex is still
	 * held would wait for it (a lock wait, rightly, and on a loaded
	 * machine 14% of the condition's waiting once) */
	pthread_mutex_lock(&cond_lock);
	cond_ticks++;
	pthread_mutex_unlock(&cond_lock);
	pthread_cond_broadcast(&cond);
	if (write(pipe_rd[1], "x", 1) < 0 || send(sock[1], "x", 1, 0) < 0 ||
	    write(efd, &(uint64_t){ 1 }, sizeof(uint64_t)) < 0)
		perror("wake");
	pthread_kill(sigwaiter, SIGUSR1);
	if (semid >= 0 && semop(semid, &(struct sembuf){ .sem_num = 0, .sem_op = 1 }, 1) < 0)
		perror("semop");
}

/* Wakes the untimed waits every 10 ms, and a few times more at the end so
 * that they see it. */
static void *waker(void *arg)
{
	(void)arg;
	for (long i = 0; i < rounds; i++) {
		tick();
		wake_all();
		pthread_barrier_wait(&barrier);
	}
	for (int k = 0; k < 3; k++) {
		wake_all();
		tick();
	}
	return NULL;
}

struct wait {
	void (*fn)(void);
	const char *name;         /* the thread's name: the function's, less "wait_" */
};

static void *run(void *arg)
{
	const struct wait *w = arg;

	pthread_setname_np(pthread_self(), w->name);
	w->fn();
	return NULL;
}

int main(int argc, char **argv)
{
#define W(f) { wait_##f, #f }
	static const struct wait waits[] = {
		W(poll_untimed), W(poll_timed), W(epoll_untimed), W(epoll_timed),
		W(select_untimed), W(select_timed), W(sem_untimed), W(sem_timed),
		W(cond_untimed), W(cond_timed), W(nanosleep), W(flock), W(ofd_lock), W(mutex),
		W(rwlock), W(mutex_recursive), W(mutex_pi), W(mutex_timed), W(barrier),
		W(pipe_read), W(socket_read), W(eventfd_read), W(waitpid), W(sigwait),
		W(sigtimedwait), W(fsync), W(fdatasync), W(msync), W(read_cold), W(read_direct),
		W(page_fault), W(mutex_adaptive), W(uring_untimed), W(uring_timed), W(posix_lock),
		W(semop), W(recv_timeout), W(mutex_clocklock), W(vfork), W(timerfd_read),
	};
	enum { N = sizeof(waits) / sizeof(waits[0]) };
	pthread_t t[N + 2];
	pid_t holder;
	double secs = argc > 1 ? atof(argv[1]) : 1.0;

	dir = argc > 2 ? argv[2] : "/tmp";
	for (int i = 0; i < 4; i++)
		if (pipe2(pipes[i], O_NONBLOCK))
			return 1;
	if (pipe(quiet))
		return 1;
	sem_init(&sem_woken, 0, 0);
	sem_init(&sem_never, 0, 0);
	{
		pthread_mutexattr_t a;
		sigset_t set;

		pthread_mutexattr_init(&a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
		pthread_mutex_init(&recursive, &a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_NORMAL);
		pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
		pthread_mutex_init(&pi_mutex, &a);
		pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_NONE);
		pthread_mutex_init(&timed_mutex, &a);
		pthread_mutex_init(&clock_mutex, &a);
		pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ADAPTIVE_NP);
		pthread_mutex_init(&adaptive, &a);
		pthread_barrier_init(&barrier, NULL, 2);
		if (pipe(pipe_rd) || socketpair(AF_UNIX, SOCK_STREAM, 0, sock) ||
		    socketpair(AF_UNIX, SOCK_STREAM, 0, rcvtimeo_sock) ||
		    (efd = eventfd(0, 0)) < 0)
			return 1;
		/* the signals are taken by sigwait alone */
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigaddset(&set, SIGUSR2);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &end_at);
	end_at.tv_sec += (time_t)secs;
	end_at.tv_nsec += (long)((secs - (double)(time_t)secs) * 1e9);
	if (end_at.tv_nsec >= 1000000000L) {
		end_at.tv_sec++;
		end_at.tv_nsec -= 1000000000L;
	}
	rounds = (long)(secs * 1e9 / TICK_NS);
	semid = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
	holder = posix_holder();
	for (int i = 0; i < N; i++) {
		pthread_create(&t[i], NULL, run, (void *)&waits[i]);
		if (waits[i].fn == wait_sigwait)
			sigwaiter = t[i];
	}
	pthread_create(&t[N], NULL, waker, NULL);
	pthread_create(&t[N + 1], NULL, lock_holder, NULL);
	/* the waker first: it signals the sigwait thread, whose id is valid
	 * until that thread is joined */
	pthread_join(t[N], NULL);
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	pthread_join(t[N + 1], NULL);
	if (holder > 0)
		waitpid(holder, NULL, 0);
	if (semid >= 0)
		semctl(semid, 0, IPC_RMID);
	return 0;
}
