/* SPDX-License-Identifier: MIT */
/*
 * machine.h - the recorded machine: processes, threads, their executable
 * maps, and the files (dsos) those maps name. Fed the reader's records in
 * time order; turns a sample into raw frames (address, dso, file offset).
 * It names nothing: that is src/symbols/.
 */
#ifndef MACHINE_MACHINE_H
#define MACHINE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../perf/perf.h"

enum dso_kind {
	DSO_USER,       /* a file mapped by a process */
	DSO_KERNEL,     /* [kernel.kallsyms] */
	DSO_MODULE,     /* a kernel module */
	DSO_VDSO,       /* [vdso] */
	DSO_ANON,       /* //anon, [anon:...], memfd: JIT code, named by perf-PID.map */
	DSO_SPECIAL,    /* [vsyscall], [uprobes], ... */
};

/*
 * A mount namespace the recording names (NAMESPACES records: perf record
 * --namespaces): the processes seen in it, so that its files can be found
 * through one that still runs when the recording is read on its own host.
 */
struct mount_ns {
	uint64_t dev, ino;        /* the namespace's identity (nsfs) */
	uint32_t *pids;           /* the processes recorded in it, oldest first */
	size_t nr, cap;
	bool host;                /* the recording host's own: pid 1's, or the first seen */
};

/* What the recording says of a process, for finding its files. */
struct proc_info {
	uint32_t pid;             /* as recorded (the recording's pid namespace) */
	uint32_t ppid;            /* its parent, 0 unknown */
	uint32_t nspid;           /* its pid in its own pid namespace (the N of a
				   * jit-N.dump it mapped), 0 unknown */
	uint64_t pid_ns;          /* its pid namespace's inode, 0 not recorded */
	bool other_pid_ns;        /* recorded in a pid namespace not the host's */
	const struct mount_ns *mnt; /* its mount namespace, NULL not recorded */
	char comm[16];            /* its main thread's command name */
};

/* A mapped file, shared by every map and process that maps it. */
struct dso {
	unsigned id;              /* dense, from 0: index for later stages' caches */
	enum dso_kind kind;
	char *path;               /* as recorded, " (deleted)" removed */
	uint8_t build_id[PERF_MAX_BUILD_ID];
	uint8_t build_id_size;    /* 0: the recording did not say */
	const struct proc_info *mapper; /* the first process that mapped it (user files) */
	/* the file's device and inode as its first MMAP2 gave them (perf's
	 * records without build ids); ino 0: not given */
	uint32_t maj, min;
	uint64_t ino, ino_generation;
};

struct map {
	uint64_t start, end;      /* [start, end) */
	uint64_t pgoff;           /* file offset of start */
	struct dso *dso;
};

enum frame_kind {
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_GUEST,
	FRAME_HV,
};

/* A frame before it is named. */
struct raw_frame {
	uint64_t addr;            /* as recorded */
	uint64_t offset;          /* file offset (user) or addr (kernel): where to look */
	const struct dso *dso;    /* NULL: no map covers addr */
	uint32_t pid;
	uint8_t kind;             /* enum frame_kind */
	bool ret;                 /* a return address: look it up at offset - 1 */
	const struct dso *jitdump; /* the process's jit-PID.dump, if it mapped one */
	const struct proc_info *proc; /* the process (user frames), NULL unknown */
};

struct machine;

/**
 * machine_new() - an empty machine for one recording.
 * @hdr: the reader's header; its BUILD_ID entries give build ids to dsos by
 *       path. Must outlive the machine.
 * Return: the machine (free with machine_free()), or NULL out of memory.
 */
struct machine *machine_new(const struct perf_header_info *hdr);
void machine_free(struct machine *m);

/**
 * machine_event() - apply a record: COMM, FORK, EXIT, MMAP, MMAP2,
 * NAMESPACES. Others are ignored. Records must come in time order.
 * Return: 0, or PP_ENOMEM.
 */
int machine_event(struct machine *m, const struct perf_event *ev);

/** machine_event_applies() - is @ev one machine_event() applies (COMM, FORK, EXIT, MMAP, MMAP2)? */
bool machine_event_applies(const struct perf_event *ev);

/**
 * machine_sample_frames() - a sample's stack as raw frames, leaf first:
 * the callchain when there is one (context markers applied), else the ip.
 * @out: room for @max frames.
 * Return: the number of frames written.
 */
size_t machine_sample_frames(const struct machine *m, const struct perf_event *ev,
			     struct raw_frame *out, size_t max);

/**
 * machine_stack_key() - the words that decide the raw frames of @ev (with
 * @npcs user pcs unwound from its stack, if any): its process and that
 * process's map generation, the kernel's text address, the sampled mode
 * when there is no callchain, the callchain or ip, the pcs, and an LBR
 * call stack's branches (other branch stacks make no frames). Two samples
 * with equal keys get the same raw frames from machine_sample_frames() (or
 * the kernel frames and machine_user_frames()) while the machine is
 * unchanged.
 * @key: receives the words; room for machine_stack_key_max() of them.
 * Return: the number of words written.
 */
size_t machine_stack_key(const struct machine *m, const struct perf_event *ev,
			 const uint64_t *pcs, size_t npcs, uint64_t *key);

/** machine_stack_key_max() - the most words machine_stack_key() writes for @ev. */
static inline size_t machine_stack_key_max(const struct perf_event *ev, size_t npcs)
{
	return 6 + (size_t)ev->sample.callchain_nr + npcs + 2 * (size_t)ev->sample.branch_nr;
}

/** machine_kernel_frames() - as machine_sample_frames(), the kernel part only. */
size_t machine_kernel_frames(const struct machine *m, const struct perf_event *ev,
			     struct raw_frame *out, size_t max);

/**
 * machine_user_frames() - raw frames for user addresses of @pid (from an
 * unwinder): @addrs[0] is where the thread was, the rest return addresses.
 * Return: the number of frames written.
 */
size_t machine_user_frames(const struct machine *m, uint32_t pid, const uint64_t *addrs,
			   size_t n, struct raw_frame *out, size_t max);

/**
 * machine_maps_settle() - merge the maps that landed between others since
 * the last call into each process's sorted array, so that
 * machine_process_maps() returns them all. Call it on the thread that feeds
 * machine_event(), while no other thread reads the machine (the unwinding
 * pool does, before its workers start). Lookups (machine_user_frames) see
 * every map without it. Return: 0 or PP_ENOMEM.
 */
int machine_maps_settle(struct machine *m);

/**
 * machine_process_maps() - a process's executable maps, sorted by start.
 * @gen: receives a number that changes whenever the maps change.
 * Return: the maps (owned by the machine, valid until the next
 * machine_event()), NULL with *nr = 0 for an unknown process.
 */
const struct map *machine_process_maps(const struct machine *m, uint32_t pid, size_t *nr,
				       uint64_t *gen);

/** machine_dsos() - every dso seen, indexed by id; @nr receives the count. */
struct dso *const *machine_dsos(const struct machine *m, size_t *nr);

/** machine_kernel_text() - the recorded runtime address of _text, or 0. */
uint64_t machine_kernel_text(const struct machine *m);

/**
 * machine_mount_ns() - every mount namespace the recording names; @nr
 * receives the count. Owned by the machine.
 */
const struct mount_ns *const *machine_mount_ns(const struct machine *m, size_t *nr);

/** machine_comm() - a thread's command name, or NULL. Owned by the machine. */
const char *machine_comm(const struct machine *m, uint32_t tid);

#endif /* MACHINE_MACHINE_H */
