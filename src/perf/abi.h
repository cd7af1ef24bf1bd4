/* SPDX-License-Identifier: MIT */
/*
 * abi.h - on-disk constants of perf.data that the kernel's uapi header does
 * not carry: the perf tool's own record types, header features, and a few
 * kernel bits newer than the build machine's <linux/perf_event.h>.
 *
 * Layouts are described where they are decoded (header.c, records.c,
 * sample.c); this file holds only numbers.
 */
#ifndef PERF_ABI_H
#define PERF_ABI_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PERF_MAGIC2          0x32454c4946524550ULL /* "PERFILE2" little endian */
#define PERF_MAGIC2_SWAPPED  0x50455246494c4532ULL
#define PERF_FILE_HEADER_SIZE 104
#define PERF_PIPE_HEADER_SIZE 16

/* Kernel record types newer than some uapi headers. */
#define PERF_REC_AUX_OUTPUT_HW_ID 21
#define PERF_REC_CALLCHAIN_DEFERRED 22
#define PERF_REC_KERNEL_MAX 64

/* Record types synthesized by the perf tool (tools/perf/util/event.h). */
enum perf_user_record_type {
	PERF_REC_HEADER_ATTR = 64,
	PERF_REC_HEADER_EVENT_TYPE = 65,
	PERF_REC_HEADER_TRACING_DATA = 66,
	PERF_REC_HEADER_BUILD_ID = 67,
	PERF_REC_FINISHED_ROUND = 68,
	PERF_REC_ID_INDEX = 69,
	PERF_REC_AUXTRACE_INFO = 70,
	PERF_REC_AUXTRACE = 71,
	PERF_REC_AUXTRACE_ERROR = 72,
	PERF_REC_THREAD_MAP = 73,
	PERF_REC_CPU_MAP = 74,
	PERF_REC_STAT_CONFIG = 75,
	PERF_REC_STAT = 76,
	PERF_REC_STAT_ROUND = 77,
	PERF_REC_EVENT_UPDATE = 78,
	PERF_REC_TIME_CONV = 79,
	PERF_REC_HEADER_FEATURE = 80,
	PERF_REC_COMPRESSED = 81,
	PERF_REC_FINISHED_INIT = 82,
	PERF_REC_COMPRESSED2 = 83,
	PERF_REC_BPF_METADATA = 84,
	PERF_REC_SCHEDSTAT_CPU = 85,
	PERF_REC_SCHEDSTAT_DOMAIN = 86,
	PERF_REC_TYPE_MAX = 128, /* counters are kept for types below this */
};

/* Header feature bits (tools/perf/util/header.h). */
enum perf_feature {
	PERF_FEAT_RESERVED = 0,
	PERF_FEAT_TRACING_DATA = 1,
	PERF_FEAT_BUILD_ID,
	PERF_FEAT_HOSTNAME,
	PERF_FEAT_OSRELEASE,
	PERF_FEAT_VERSION,
	PERF_FEAT_ARCH,
	PERF_FEAT_NRCPUS,
	PERF_FEAT_CPUDESC,
	PERF_FEAT_CPUID,
	PERF_FEAT_TOTAL_MEM,
	PERF_FEAT_CMDLINE,
	PERF_FEAT_EVENT_DESC,
	PERF_FEAT_CPU_TOPOLOGY,
	PERF_FEAT_NUMA_TOPOLOGY,
	PERF_FEAT_BRANCH_STACK,
	PERF_FEAT_PMU_MAPPINGS,
	PERF_FEAT_GROUP_DESC,
	PERF_FEAT_AUXTRACE,
	PERF_FEAT_STAT,
	PERF_FEAT_CACHE,
	PERF_FEAT_SAMPLE_TIME,
	PERF_FEAT_MEM_TOPOLOGY,
	PERF_FEAT_CLOCKID,
	PERF_FEAT_DIR_FORMAT,
	PERF_FEAT_BPF_PROG_INFO,
	PERF_FEAT_BPF_BTF,
	PERF_FEAT_COMPRESSED,
	PERF_FEAT_CPU_PMU_CAPS,
	PERF_FEAT_CLOCK_DATA,
	PERF_FEAT_HYBRID_TOPOLOGY,
	PERF_FEAT_PMU_CAPS,
	PERF_FEAT_CPU_DOMAIN_INFO,
	PERF_FEAT_NR_KNOWN,
	PERF_FEAT_BITS = 256,
};

/* perf_event_attr flag bits, in the order of the kernel's bitfield. */
#define PERF_ATTR_FLAG_DISABLED       (1ULL << 0)
#define PERF_ATTR_FLAG_INHERIT        (1ULL << 1)
#define PERF_ATTR_FLAG_EXCLUDE_USER   (1ULL << 4)
#define PERF_ATTR_FLAG_EXCLUDE_KERNEL (1ULL << 5)
#define PERF_ATTR_FLAG_EXCLUDE_HV     (1ULL << 6)
#define PERF_ATTR_FLAG_MMAP           (1ULL << 8)
#define PERF_ATTR_FLAG_COMM           (1ULL << 9)
#define PERF_ATTR_FLAG_FREQ           (1ULL << 10)
#define PERF_ATTR_PRECISE_SHIFT       15 /* precise_ip: 2 bits */
#define PERF_ATTR_FLAG_SAMPLE_ID_ALL  (1ULL << 18)
#define PERF_ATTR_FLAG_EXCLUDE_HOST   (1ULL << 19)
#define PERF_ATTR_FLAG_EXCLUDE_GUEST  (1ULL << 20)
#define PERF_ATTR_FLAG_EXCL_CC_KERNEL (1ULL << 21)
#define PERF_ATTR_FLAG_EXCL_CC_USER   (1ULL << 22)
#define PERF_ATTR_FLAG_MMAP2          (1ULL << 23)
#define PERF_ATTR_FLAG_COMM_EXEC      (1ULL << 24)
#define PERF_ATTR_FLAG_USE_CLOCKID    (1ULL << 25)
#define PERF_ATTR_FLAG_CONTEXT_SWITCH (1ULL << 26)
#define PERF_ATTR_FLAG_BUILD_ID       (1ULL << 34)

/* Sample-type bits newer than some uapi headers. */
#ifndef PERF_SAMPLE_WEIGHT_STRUCT
#define PERF_SAMPLE_WEIGHT_STRUCT (1U << 24)
#endif
#define PERF_SAMPLE_KNOWN_MASK ((1ULL << 25) - 1)

#define PERF_MISC_BUILD_ID_SIZE (1U << 15) /* build_id_event carries a size */
#define PERF_MISC_MMAP_BUILD_ID (1U << 14)
#define PERF_MISC_COMM_EXEC     (1U << 13)
#define PERF_MISC_SWITCH_OUT    (1U << 13)
#define PERF_MISC_SWITCH_OUT_PREEMPT (1U << 14)

#define PERF_MAX_BUILD_ID 20

#endif /* PERF_ABI_H */
