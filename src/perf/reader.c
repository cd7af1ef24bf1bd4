/* SPDX-License-Identifier: MIT */
/*
 * reader.c - opening a recording and streaming its records: the names of
 * record types and features, the reader made and opened (a file, a
 * directory of perf record --threads, standard input, memory: pipe or file
 * mode told from the first 16 bytes, a file's header read), --event
 * checked against its events, perf_reader_run() and what it says after,
 * perf_reader_close() and the reader's accessors.
 *
 * Input is read sequentially through a window (struct rstream), so memory
 * does not grow with the file and pipes work like files. Records are cut
 * from the window (reader-loop.c); a record that straddles the window's
 * end is moved to the front and the window refilled (source.c: read(),
 * read ahead, or views of a mapping). PERF_RECORD_COMPRESSED(2) payloads are
 * decompressed into a second window and cut the same way, carrying a partial
 * record over to the next compressed chunk.
 *
 * Kernel records are delivered in time order when asked: they wait in the
 * ordering queue until a FINISHED_ROUND says that nothing older can come
 * (flush up to the largest time seen at the previous round), or until the
 * queue exceeds its byte limit. Records of the perf tool (attrs, features,
 * tracing data, build ids...) take effect as soon as they are read
 * (reader-tool.c). With opts.threaded, a file's records are cut on a
 * thread of the reader's and delivered in batches (reader-cutter.c).
 */
#include "priv.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"


static const char *const record_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_REC_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PERF_REC_CALLCHAIN_DEFERRED] = "CALLCHAIN_DEFERRED",
	[PERF_REC_HEADER_ATTR] = "HEADER_ATTR",
	[PERF_REC_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[PERF_REC_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA",
	[PERF_REC_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[PERF_REC_FINISHED_ROUND] = "FINISHED_ROUND",
	[PERF_REC_ID_INDEX] = "ID_INDEX",
	[PERF_REC_AUXTRACE_INFO] = "AUXTRACE_INFO",
	[PERF_REC_AUXTRACE] = "AUXTRACE",
	[PERF_REC_AUXTRACE_ERROR] = "AUXTRACE_ERROR",
	[PERF_REC_THREAD_MAP] = "THREAD_MAP",
	[PERF_REC_CPU_MAP] = "CPU_MAP",
	[PERF_REC_STAT_CONFIG] = "STAT_CONFIG",
	[PERF_REC_STAT] = "STAT",
	[PERF_REC_STAT_ROUND] = "STAT_ROUND",
	[PERF_REC_EVENT_UPDATE] = "EVENT_UPDATE",
	[PERF_REC_TIME_CONV] = "TIME_CONV",
	[PERF_REC_HEADER_FEATURE] = "HEADER_FEATURE",
	[PERF_REC_COMPRESSED] = "COMPRESSED",
	[PERF_REC_FINISHED_INIT] = "FINISHED_INIT",
	[PERF_REC_COMPRESSED2] = "COMPRESSED2",
	[PERF_REC_BPF_METADATA] = "BPF_METADATA",
	[PERF_REC_SCHEDSTAT_CPU] = "SCHEDSTAT_CPU",
	[PERF_REC_SCHEDSTAT_DOMAIN] = "SCHEDSTAT_DOMAIN",
};

const char *perf_record_type_name(uint32_t type)
{
	if (type >= sizeof(record_names) / sizeof(*record_names))
		return NULL;
	return record_names[type];
}

static const char *const feature_names[PERF_FEAT_NR_KNOWN] = {
	[PERF_FEAT_TRACING_DATA] = "TRACING_DATA", [PERF_FEAT_BUILD_ID] = "BUILD_ID",
	[PERF_FEAT_HOSTNAME] = "HOSTNAME", [PERF_FEAT_OSRELEASE] = "OSRELEASE",
	[PERF_FEAT_VERSION] = "VERSION", [PERF_FEAT_ARCH] = "ARCH",
	[PERF_FEAT_NRCPUS] = "NRCPUS", [PERF_FEAT_CPUDESC] = "CPUDESC",
	[PERF_FEAT_CPUID] = "CPUID", [PERF_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PERF_FEAT_CMDLINE] = "CMDLINE", [PERF_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PERF_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY", [PERF_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PERF_FEAT_BRANCH_STACK] = "BRANCH_STACK", [PERF_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PERF_FEAT_GROUP_DESC] = "GROUP_DESC", [PERF_FEAT_AUXTRACE] = "AUXTRACE",
	[PERF_FEAT_STAT] = "STAT", [PERF_FEAT_CACHE] = "CACHE",
	[PERF_FEAT_SAMPLE_TIME] = "SAMPLE_TIME", [PERF_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY",
	[PERF_FEAT_CLOCKID] = "CLOCKID", [PERF_FEAT_DIR_FORMAT] = "DIR_FORMAT",
	[PERF_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO", [PERF_FEAT_BPF_BTF] = "BPF_BTF",
	[PERF_FEAT_COMPRESSED] = "COMPRESSED", [PERF_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS",
	[PERF_FEAT_CLOCK_DATA] = "CLOCK_DATA", [PERF_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY",
	[PERF_FEAT_PMU_CAPS] = "PMU_CAPS", [PERF_FEAT_CPU_DOMAIN_INFO] = "CPU_DOMAIN_INFO",
};

const char *perf_feature_name(unsigned feat)
{
	return feat < PERF_FEAT_NR_KNOWN ? feature_names[feat] : NULL;
}

/* --- opening --- */

static int reader_alloc(const struct perf_reader_opts *opts, struct perf_reader **out)
{
	struct perf_reader *r = aligned_alloc(_Alignof(struct perf_reader), sizeof(*r));

	if (!r)
		return PP_ENOMEM;
	memset(r, 0, sizeof(*r));
	if (opts)
		r->opts = *opts;
	r->fd = -1;
	r->read_next = 1; /* read_map's ids start at 1 */
	r->src_end = UINT64_MAX;
	/* grows to WINDOW once the input needs more */
	r->in.b = oq_buf_get(&r->oq, WINDOW_START);
	if (r->in.b) {
		r->in.buf = r->in.b->data;
		r->in.cap = r->in.b->cap;
	} else {
		perf_reader_close(r);
		return PP_ENOMEM;
	}
	*out = r;
	return PP_OK;
}

/* Decide pipe or file mode from the first 16 bytes and read the header. */
/* Does @entry (@len bytes) name the event @name, whole or without modifiers? */
static bool event_named(const char *entry, size_t len, const char *name)
{
	const char *colon = strrchr(name, ':');
	size_t n = strlen(name), base = strcspn(name, "/");

	if (len == n && strncmp(entry, name, n) == 0)
		return true;
	/*
	 * "cpu-clock/freq=997/" and "cpu-clock:u" are cpu-clock; a tracepoint
	 * "system:event" is only itself (its event is no run of modifier letters)
	 */
	if (base == n && colon && colon[1] && strspn(colon + 1, "ukhGHpPISDWe") == strlen(colon + 1))
		base = (size_t)(colon - name);
	return base < n && len == base && strncmp(entry, name, base) == 0;
}

bool perf_event_listed(const char *list, const char *name)
{
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);

		if (event_named(p, len, name))
			return true;
		p = c ? c + 1 : NULL;
	}
	return false;
}

/*
 * Every entry of @list must name one of the events known so far (none yet,
 * from a pipe not read: nothing to check). Return: 0, or PP_EUSAGE (logged).
 */
static int check_events(const struct perf_reader *r, const char *list)
{
	for (const char *p = list; p && *p;) {
		const char *c = strchr(p, ',');
		int len = (int)(c ? (size_t)(c - p) : strlen(p));
		char one[256], names[512] = "";
		size_t used = 0;
		bool found = !r->nr_evsels;

		snprintf(one, sizeof(one), "%.*s", len, p);
		for (size_t i = 0; i < r->nr_evsels && !found; i++)
			found = perf_event_listed(one, r->evsels[i]->name ? r->evsels[i]->name : "");
		if (!found) {
			for (size_t i = 0; i < r->nr_evsels && used < sizeof(names); i++) {
				const char *name = r->evsels[i]->name ? r->evsels[i]->name : "?";
				int w = snprintf(names + used, sizeof(names) - used, "%s'%s'",
						 i ? ", " : "", name);

				used += w > 0 ? (size_t)w : 0;
			}
			pp_error("--event: '%s' is not an event of '%s' (its events: %s)", one,
				 r->path, names);
			return PP_EUSAGE;
		}
		p = c ? c + 1 : NULL;
	}
	return 0;
}

static int open_common(struct perf_reader *r)
{
	uint8_t head[PERF_PIPE_HEADER_SIZE];
	uint64_t magic, size;
	ssize_t have;

	have = window_fill(r, &r->in, sizeof(head));
	if (have < 0)
		return PP_EIO;
	if ((size_t)have < sizeof(head)) {
		pp_error("'%s' is too short to be a perf.data file (%zd bytes)", r->path, have);
		return PP_EMAGIC;
	}
	memcpy(head, r->in.buf, sizeof(head));
	magic = load_u64(head, false);
	if (magic != PERF_MAGIC2 && magic != PERF_MAGIC2_SWAPPED) {
		if (memcmp(head, "PERFFILE", 8) == 0)
			pp_error("'%s' is in perf's first file format (before 2010), which "
				 "perfport does not read", r->path);
		else
			pp_error("'%s' is not a perf.data file (no PERFILE2 magic)", r->path);
		return PP_EMAGIC;
	}
	r->hdr.swapped = magic == PERF_MAGIC2_SWAPPED;
	size = load_u64(head + 8, r->hdr.swapped);
	if (size == PERF_PIPE_HEADER_SIZE) {
		r->hdr.pipe = true;
		r->in.pos = PERF_PIPE_HEADER_SIZE;
		return PP_OK;
	}
	/* File mode: random access to the header, then stream the data. */
	r->in.len = r->in.pos = 0;
	r->in.base = 0;
	{
		int ret = perf_header_read_file(r);

		if (ret)
			return ret;
	}
	if (r->mem) {
		r->src_pos = r->hdr.data_offset;
	} else if (lseek(r->fd, (off_t)r->hdr.data_offset, SEEK_SET) < 0) {
		return errno == ESPIPE ? PP_ENOSEEK : PP_EIO;
	} else {
		r->src_pos = r->hdr.data_offset;
	}
	r->in.base = r->hdr.data_offset;
	r->src_end = r->hdr.data_offset + r->hdr.data_size;
	r->progress_total = r->hdr.data_size;
	return PP_OK;
}

static int open_fd(struct perf_reader *r)
{
	struct stat st;
	int ret;

	if (fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		r->hdr.file_size = (uint64_t)st.st_size;
		r->hdr.mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u +
				  (uint64_t)st.st_mtim.tv_nsec;
		r->progress_total = (uint64_t)st.st_size;
		posix_fadvise(r->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	} else {
		r->hdr.file_size = UINT64_MAX; /* a pipe: sizes are checked as read */
		/* room for what gathers between reads; as much as an unprivileged
		 * process may ask (pipe-max-size's default), less is fine */
		if (r->opts.gather_ms && S_ISFIFO(st.st_mode)) {
			int cap;

			fcntl(r->fd, F_SETPIPE_SZ, 1 << 20);
			cap = fcntl(r->fd, F_GETPIPE_SZ);
			r->pipe_cap = cap > 0 ? (size_t)cap : 0;
			r->gather_ns = (uint64_t)r->opts.gather_ms * 1000000u;
		}
	}
	ret = open_common(r);
	/* a file's data read ahead (not a pipe's: a live stream is read as it
	 * comes, and stopped by a signal) */
	r->ra_wanted = ret == PP_OK && r->opts.read_ahead && r->hdr.file_size != UINT64_MAX &&
		       !r->hdr.pipe;
	/* mapped only when PERFPORT_MMAP=1 asks (make bench compares the two:
	 * on a 2-vCPU guest, page cache warm, mapping and unmapping each page
	 * cost more than read()'s copy of it); records rewritten in place
	 * (another byte order) cannot be cut from a read-only mapping */
	r->map_wanted = ret == PP_OK && r->hdr.file_size != UINT64_MAX && !r->hdr.pipe &&
			!r->hdr.swapped && perf_map_asked();
	if (ret == PP_ENOSEEK)
		pp_error("'%s' holds file-mode perf.data on an input that cannot seek: "
			 "record with 'perf record -o -' for pipes, or pass the file itself",
			 r->path);
	if (ret == PP_OK && r->opts.events)
		ret = check_events(r, r->opts.events);
	return ret;
}

int perf_reader_open(const char *path, const struct perf_reader_opts *opts,
		     struct perf_reader **out)
{
	struct perf_reader *r;
	struct stat st;
	char *data_path = NULL;
	int ret;

	*out = NULL;
	ret = reader_alloc(opts, &r);
	if (ret)
		return ret;
	r->path = strdup(path);
	if (!r->path) {
		ret = PP_ENOMEM;
		goto fail;
	}
	if (strcmp(path, "-") == 0) {
		r->fd = STDIN_FILENO;
	} else {
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			/* perf record --threads: the header lives in DIR/data. */
			if (asprintf(&data_path, "%s/data", path) < 0) {
				ret = PP_ENOMEM;
				goto fail;
			}
			r->hdr.directory = true;
		}
		r->fd = open(data_path ? data_path : path, O_RDONLY | O_CLOEXEC);
		if (r->fd < 0 && data_path && errno == ENOENT) {
			pp_error("'%s' is a directory, and not one 'perf record --threads' wrote "
				 "(it has no 'data' file)", path);
			ret = PP_ENOENT;
			goto fail;
		}
		if (r->fd < 0) {
			pp_error("cannot open '%s': %s", data_path ? data_path : path,
				 strerror(errno));
			ret = errno == ENOENT ? PP_ENOENT : PP_EIO;
			goto fail;
		}
		r->own_fd = true;
		if (opts && opts->shown && !r->hdr.directory) {
			char *shown = strdup(opts->shown);

			if (!shown) {
				ret = PP_ENOMEM;
				goto fail;
			}
			free(r->path);
			r->path = shown;
		}
	}
	ret = open_fd(r);
	if (ret)
		goto fail;
	if (r->hdr.directory && r->hdr.pipe) {
		pp_error("'%s/data' is a pipe-mode stream, not a perf directory header", path);
		ret = PP_EFORMAT;
		goto fail;
	}
	free(data_path);
	*out = r;
	return PP_OK;
fail:
	free(data_path);
	perf_reader_close(r);
	return ret;
}

int perf_reader_open_mem(const void *buf, size_t len, const struct perf_reader_opts *opts,
			 struct perf_reader **out)
{
	struct perf_reader *r;
	int ret;

	*out = NULL;
	ret = reader_alloc(opts, &r);
	if (ret)
		return ret;
	r->mem = buf;
	r->mem_len = len;
	r->hdr.file_size = len;
	r->progress_total = len;
	r->path = strdup("<memory>");
	ret = r->path ? open_common(r) : PP_ENOMEM;
	if (ret) {
		perf_reader_close(r);
		return ret;
	}
	*out = r;
	return PP_OK;
}

/*
 * A trace in AUX data (Intel PT, BTS, ARM SPE, CoreSight: AUXTRACE and AUX
 * records) is read past, not decoded: its samples are made by perf's
 * decoders. Said once, with the command that makes them samples.
 */
static void undecoded_warn(const struct perf_reader *r)
{
	uint64_t n = r->st.records[PERF_REC_AUXTRACE] + r->st.records[PERF_REC_AUXTRACE_INFO] +
		     r->st.records[PERF_RECORD_AUX];
	const char *p = r->path && strcmp(r->path, "-") ? r->path : "perf.data";

	if (!n)
		return;
	pp_warn("'%s' holds a hardware trace (%" PRIu64 " AUXTRACE and AUX records: Intel PT, "
		"ARM SPE, CoreSight...) that perfport does not decode, so none of its samples "
		"is counted; decode it into samples with 'perf inject -i %s --itrace=i100usg "
		"-o %s.itrace' and read that file", r->path ? r->path : "-", n, p, p);
}

int perf_reader_run(struct perf_reader *r, perf_event_fn fn, void *ctx)
{
	int ret;

	if (r->ran)
		return PP_EUSAGE;
	r->ran = true;
	r->fn = fn;
	r->ctx = ctx;
	if (!(r->opts.threaded && r->ra_wanted) || (ret = perf_dl_run(r)) < 0)
		ret = perf_cut_all(r);
	if (r->err)
		return r->err;
	undecoded_warn(r);
	if (r->stop)
		return PP_ESTOPPED;
	if (ret == PP_OK && r->opts.events) /* a pipe announces its events as it goes */
		ret = check_events(r, r->opts.events);
	return ret;
}

void perf_reader_close(struct perf_reader *r)
{
	if (!r)
		return;
	perf_dl_free(r);
	perf_ra_stop(r);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->nr_evsels; i++) {
		free(r->evsels[i]->name);
		free(r->evsels[i]->ids);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->ids);
	perf_header_free(&r->hdr);
	oq_free(&r->oq);
	perf_map_close(r);
	wordmap_free(&r->read_map);
	free(r->read_last);
	free(r->reads);
	if (r->zd)
		ZSTD_freeDStream(r->zd);
	free(r->scratch); /* the streams' buffers went with the queue */
	free(r->path);
	free(r);
}

void perf_reader_set_threaded(struct perf_reader *r, bool on)
{
	r->opts.threaded = on;
}

const struct perf_header_info *perf_reader_header(const struct perf_reader *r)
{
	return &r->hdr;
}

const struct perf_stats *perf_reader_stats(const struct perf_reader *r)
{
	return &r->st;
}

struct perf_evsel *const *perf_reader_evsels(const struct perf_reader *r, size_t *nr)
{
	*nr = r->nr_evsels;
	return r->evsels;
}
