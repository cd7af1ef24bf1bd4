/* SPDX-License-Identifier: MIT */
/*
 * header.c - the file header, the attrs and their ids, and the feature
 * sections (in file mode after the data, in pipe mode as HEADER_FEATURE
 * records; the encoding is the same).
 *
 * File header (104 bytes): magic, size, attr_size, then the sections
 * attrs, data and event_types ({u64 offset, u64 size} each), then a 256-bit
 * feature bitmap. The feature sections follow the data as an array of
 * {offset, size}, one per set bit in bit order.
 */
#include "priv.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "../util/log.h"

void perf_skip(struct perf_reader *r, uint64_t off, uint32_t type, uint64_t bytes,
	       const char *why)
{
	r->st.skipped_records++;
	r->st.skipped_bytes += bytes;
	if (r->st.nr_skips_kept < PERF_SKIP_KEEP) {
		struct perf_skip *s = &r->st.skips[r->st.nr_skips_kept++];

		s->offset = off;
		s->type = type;
		s->why = why;
	}
	pp_debug("skipped %" PRIu64 " bytes at offset %" PRIu64 " (record type %u): %s",
		 bytes, off, type, why);
}

/* --- events and the id map --- */

static uint64_t id_hash(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdULL;
	id ^= id >> 33;
	return id;
}

int perf_id_add(struct perf_reader *r, uint64_t id, struct perf_evsel *e)
{
	size_t mask, i;

	if (r->ids_used * 2 >= r->ids_cap) {
		size_t cap = r->ids_cap ? r->ids_cap * 2 : 64;
		struct id_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return PP_ENOMEM;
		for (size_t j = 0; j < r->ids_cap; j++) {
			if (!r->ids[j].evsel)
				continue;
			i = id_hash(r->ids[j].id) & (cap - 1);
			while (n[i].evsel)
				i = (i + 1) & (cap - 1);
			n[i] = r->ids[j];
		}
		free(r->ids);
		r->ids = n;
		r->ids_cap = cap;
	}
	mask = r->ids_cap - 1;
	for (i = id_hash(id) & mask; r->ids[i].evsel; i = (i + 1) & mask) {
		if (r->ids[i].id == id) {
			r->ids[i].evsel = e; /* the later attr wins, as in perf */
			return PP_OK;
		}
	}
	r->ids[i].id = id;
	r->ids[i].evsel = e;
	r->ids_used++;
	return PP_OK;
}

struct perf_evsel *perf_id_find(const struct perf_reader *r, uint64_t id)
{
	size_t mask, i;

	if (!r->ids_cap)
		return NULL;
	mask = r->ids_cap - 1;
	for (i = id_hash(id) & mask; r->ids[i].evsel; i = (i + 1) & mask)
		if (r->ids[i].id == id)
			return r->ids[i].evsel;
	return NULL;
}

static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses",
	"branches", "branch-misses", "bus-cycles",
	"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles",
};

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches",
	"cpu-migrations", "minor-faults", "major-faults", "alignment-faults",
	"emulation-faults", "dummy", "bpf-output", "cgroup-switches",
};

/*
 * The modifiers perf prints after a name it makes from type and config
 * (what `perf script` and `perf report` call an event recorded without
 * its name): the contexts still counted when any is left out (k, u, h),
 * the precision (p, pp, ppp), and host and guest (H, G) when left out
 * otherwise than those imply - a precise or context-limited event leaves
 * the guest out by default, others count it. Writes ":mods" or nothing.
 */
static void name_modifiers(const struct perf_attr *a, char *buf, size_t len)
{
	uint64_t f = a->flags;
	unsigned precise = (unsigned)(f >> PERF_ATTR_PRECISE_SHIFT) & 3;
	bool guest_default = false;
	char m[12];
	size_t n = 0;

	if (f & (PERF_ATTR_FLAG_EXCLUDE_KERNEL | PERF_ATTR_FLAG_EXCLUDE_USER |
		 PERF_ATTR_FLAG_EXCLUDE_HV)) {
		if (!(f & PERF_ATTR_FLAG_EXCLUDE_KERNEL))
			m[n++] = 'k';
		if (!(f & PERF_ATTR_FLAG_EXCLUDE_USER))
			m[n++] = 'u';
		if (!(f & PERF_ATTR_FLAG_EXCLUDE_HV))
			m[n++] = 'h';
		guest_default = true;
	}
	if (precise) {
		while (precise--)
			m[n++] = 'p';
		guest_default = true;
	}
	if ((f & PERF_ATTR_FLAG_EXCLUDE_HOST) || !!(f & PERF_ATTR_FLAG_EXCLUDE_GUEST) == guest_default) {
		if (!(f & PERF_ATTR_FLAG_EXCLUDE_HOST))
			m[n++] = 'H';
		if (!(f & PERF_ATTR_FLAG_EXCLUDE_GUEST))
			m[n++] = 'G';
	}
	m[n] = '\0';
	if (n)
		snprintf(buf, len, ":%s", m);
	else if (len)
		*buf = '\0';
}

/* perf's names of generalized cache events: cache, operation, result */
static const char *const cache_names[] = {
	"L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB", "branch", "node",
};

/* an operation is named in the singular before a result, else plural */
static const char *const cache_op_names[][2] = {
	{ "load", "loads" }, { "store", "stores" }, { "prefetch", "prefetches" },
};

static const char *const cache_result_names[] = { "refs", "misses" };

/* per cache, the operations perf counts as existing (bit per op) */
static const uint8_t cache_ops_valid[] = {
	0x7, 0x5, 0x7, 0x7, 0x1, 0x1, 0x7,
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* A PERF_TYPE_HW_CACHE config (cache | op << 8 | result << 16) as perf names it. */
static void cache_event_name(uint64_t config, char *buf, size_t len)
{
	unsigned cache = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;

	if (cache >= NELEM(cache_names))
		snprintf(buf, len, "unknown-ext-hardware-cache-type");
	else if (op >= NELEM(cache_op_names))
		snprintf(buf, len, "unknown-ext-hardware-cache-op");
	else if (res >= NELEM(cache_result_names))
		snprintf(buf, len, "unknown-ext-hardware-cache-result");
	else if (!(cache_ops_valid[cache] & (1u << op)))
		snprintf(buf, len, "invalid-cache");
	else if (res)
		snprintf(buf, len, "%s-%s-%s", cache_names[cache], cache_op_names[op][0],
			 cache_result_names[res]);
	else
		snprintf(buf, len, "%s-%s", cache_names[cache], cache_op_names[op][1]);
}

void perf_evsel_name_default(struct perf_evsel *e)
{
	char base[64], buf[96], mods[16];
	const struct perf_attr *a = &e->attr;

	if (e->name)
		return;
	name_modifiers(a, mods, sizeof(mods));
	switch (a->type) {
	case PERF_TYPE_HARDWARE:
		snprintf(base, sizeof(base), "%s",
			 a->config < NELEM(hw_names) ? hw_names[a->config] : "unknown-hardware");
		break;
	case PERF_TYPE_SOFTWARE:
		snprintf(base, sizeof(base), "%s",
			 a->config < NELEM(sw_names) ? sw_names[a->config] : "unknown-software");
		break;
	case PERF_TYPE_HW_CACHE:
		cache_event_name(a->config, base, sizeof(base));
		break;
	case PERF_TYPE_RAW:
		snprintf(base, sizeof(base), "raw 0x%" PRIx64, a->config);
		break;
	case PERF_TYPE_BREAKPOINT:
		/* bp_addr shares config1's place; bp_type: 1 read, 2 write, 4 exec */
		snprintf(base, sizeof(base), "mem:0x%" PRIx64 ":%s%s%s", a->config1,
			 a->bp_type & 1 ? "r" : "", a->bp_type & 2 ? "w" : "",
			 a->bp_type & 4 ? "x" : "");
		break;
	case PERF_TYPE_TRACEPOINT:
		/* the tracing data's system:name replaces it (perf_tracing_bind) */
		snprintf(buf, sizeof(buf), "unknown tracepoint");
		goto done;
	default:
		/* a PMU's dynamic type: the number means nothing off the machine */
		snprintf(buf, sizeof(buf), "unknown attr type: %u", a->type);
		goto done;
	}
	snprintf(buf, sizeof(buf), "%s%s", base, mods);
done:
	e->name = strdup(buf);
	e->name_made = true;
}

int perf_evsel_add(struct perf_reader *r, const void *attr, size_t attr_len,
		   const uint8_t *ids, size_t nr_ids, bool swap)
{
	struct perf_evsel **n, *e;

	if (r->nr_evsels >= 4096)
		return PP_EFORMAT; /* perf caps events far below this */
	n = realloc(r->evsels, (r->nr_evsels + 1) * sizeof(*n));
	if (!n)
		return PP_ENOMEM;
	r->evsels = n;
	e = aligned_alloc(_Alignof(struct perf_evsel), sizeof(*e));
	if (!e)
		return PP_ENOMEM;
	memset(e, 0, sizeof(*e));
	e->idx = (unsigned)r->nr_evsels;
	perf_attr_decode(&e->attr, attr, attr_len, swap);
	perf_evsel_layout(e);
	perf_evsel_name_default(e); /* EVENT_DESC or EVENT_UPDATE may rename it */
	if (!e->name) {
		free(e);
		return PP_ENOMEM;
	}
	if (nr_ids) {
		e->ids = malloc(nr_ids * sizeof(*e->ids));
		if (!e->ids) {
			free(e);
			return PP_ENOMEM;
		}
		e->nr_ids = nr_ids;
		for (size_t i = 0; i < nr_ids; i++) {
			e->ids[i] = load_u64(ids + 8 * i, swap);
			if (perf_id_add(r, e->ids[i], e)) {
				free(e->ids);
				free(e);
				return PP_ENOMEM;
			}
		}
	}
	r->evsels[r->nr_evsels++] = e;
	r->same_id_pos = true;
	for (size_t i = 1; i < r->nr_evsels; i++)
		if (r->evsels[i]->id_pos != r->evsels[0]->id_pos ||
		    r->evsels[i]->is_pos != r->evsels[0]->is_pos)
			r->same_id_pos = false;
	return PP_OK;
}

/* --- feature sections --- */

/* A perf header string: u32 length (padded), then the bytes. */
static char *feat_str(struct cur *c)
{
	uint32_t len = cur_u32(c);
	const uint8_t *p = cur_skip(c, len);

	if (!p)
		return NULL;
	return strndup((const char *)p, len);
}

static void set_str(char **slot, char *s)
{
	if (!s)
		return;
	free(*slot);
	*slot = s;
}

static int feat_event_desc(struct perf_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c), attr_size = cur_u32(c);

	if (c->bad || attr_size < 64 || attr_size > 4096)
		return PP_EFORMAT;
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		uint32_t nr_ids;
		char *name;

		if (!cur_skip(c, attr_size))
			break;
		nr_ids = cur_u32(c);
		name = feat_str(c);
		if (!name)
			break;
		if (nr_ids > cur_left(c) / 8) {
			free(name);
			break;
		}
		cur_skip(c, (uint64_t)nr_ids * 8);
		if (i < r->nr_evsels && name[0]) {
			free(r->evsels[i]->name);
			r->evsels[i]->name = name;
			r->evsels[i]->name_made = false;
		} else {
			free(name);
		}
	}
	return c->bad ? PP_EFORMAT : PP_OK;
}

/* Strings joined with "; ", as CMDLINE and CPU_TOPOLOGY store lists. */
static char *feat_str_list(struct cur *c, const char *sep, uint32_t max)
{
	uint32_t nr = cur_u32(c);
	size_t used = 0, cap = 0;
	char *line = NULL;

	for (uint32_t i = 0; i < nr && i < max && !c->bad; i++) {
		char *item = feat_str(c);
		size_t il, sl = strlen(sep);

		if (!item)
			break;
		il = strlen(item);
		if (used + il + sl + 1 > cap) {
			char *n;

			cap = (used + il + sl + 1) * 2;
			n = realloc(line, cap);
			if (!n) {
				free(item);
				break;
			}
			line = n;
		}
		if (used) {
			memcpy(line + used, sep, sl);
			used += sl;
		}
		memcpy(line + used, item, il + 1);
		used += il;
		free(item);
	}
	if (!line)
		line = strdup("");
	return line;
}

static int feat_group_desc(struct perf_reader *r, struct cur *c)
{
	uint32_t nr = cur_u32(c);

	if (c->bad || nr > 4096 || nr > cur_left(c) / 12)
		return PP_EFORMAT;
	free(r->hdr.groups);
	r->hdr.groups = calloc(nr ? nr : 1, sizeof(*r->hdr.groups));
	r->hdr.nr_groups = 0;
	if (!r->hdr.groups)
		return PP_ENOMEM;
	for (uint32_t i = 0; i < nr && !c->bad; i++) {
		struct perf_group_desc *g = &r->hdr.groups[i];

		g->name = feat_str(c);
		g->leader_idx = cur_u32(c);
		g->nr_members = cur_u32(c);
		if (!g->name)
			break;
		r->hdr.nr_groups++;
	}
	return c->bad ? PP_EFORMAT : PP_OK;
}

static int feat_build_ids(struct perf_reader *r, uint8_t *buf, size_t len, bool swap)
{
	size_t pos = 0;

	while (pos + 8 <= len) {
		uint16_t misc = load_u16(buf + pos + 4, swap);
		uint16_t size = load_u16(buf + pos + 6, swap);
		struct perf_build_id *n, *b;
		size_t fn_len;

		if (size < 36 || size > len - pos)
			return PP_EFORMAT;
		n = realloc(r->hdr.build_ids, (r->hdr.nr_build_ids + 1) * sizeof(*n));
		if (!n)
			return PP_ENOMEM;
		r->hdr.build_ids = n;
		b = &n[r->hdr.nr_build_ids];
		memset(b, 0, sizeof(*b));
		b->pid = (int32_t)load_u32(buf + pos + 8, swap);
		b->misc = misc;
		memcpy(b->id, buf + pos + 12, PERF_MAX_BUILD_ID);
		b->size = PERF_MAX_BUILD_ID;
		if ((misc & PERF_MISC_BUILD_ID_SIZE) && buf[pos + 32] <= PERF_MAX_BUILD_ID)
			b->size = buf[pos + 32];
		fn_len = strnlen((const char *)buf + pos + 36, size - 36);
		b->filename = strndup((const char *)buf + pos + 36, fn_len);
		if (!b->filename)
			return PP_ENOMEM;
		r->hdr.nr_build_ids++;
		pos += size;
	}
	return PP_OK;
}

int perf_feature_parse(struct perf_reader *r, unsigned feat, uint8_t *buf, size_t len)
{
	struct perf_header_info *h = &r->hdr;
	struct cur c = cur_make(buf, len, h->swapped);
	int ret = PP_OK;

	if (feat < PERF_FEAT_BITS)
		h->features[feat / 64] |= 1ULL << (feat % 64);
	switch (feat) {
	case PERF_FEAT_TRACING_DATA:
		ret = perf_tracing_parse(r, buf, len);
		perf_tracing_bind(r);
		break;
	case PERF_FEAT_BUILD_ID:
		ret = feat_build_ids(r, buf, len, h->swapped);
		break;
	case PERF_FEAT_HOSTNAME:
		set_str(&h->hostname, feat_str(&c));
		break;
	case PERF_FEAT_OSRELEASE:
		set_str(&h->osrelease, feat_str(&c));
		break;
	case PERF_FEAT_VERSION:
		set_str(&h->version, feat_str(&c));
		break;
	case PERF_FEAT_ARCH:
		set_str(&h->arch, feat_str(&c));
		break;
	case PERF_FEAT_CPUDESC:
		set_str(&h->cpudesc, feat_str(&c));
		break;
	case PERF_FEAT_CPUID:
		set_str(&h->cpuid, feat_str(&c));
		break;
	case PERF_FEAT_NRCPUS:
		h->nr_cpus_avail = cur_u32(&c);
		h->nr_cpus_online = cur_u32(&c);
		break;
	case PERF_FEAT_TOTAL_MEM:
		h->total_mem_kb = cur_u64(&c);
		break;
	case PERF_FEAT_CMDLINE:
		set_str(&h->cmdline, feat_str_list(&c, " ", UINT32_MAX));
		break;
	case PERF_FEAT_CPU_TOPOLOGY:
		/* core siblings, thread siblings; later versions add ids we skip */
		set_str(&h->core_siblings, feat_str_list(&c, "; ", 65536));
		set_str(&h->thread_siblings, feat_str_list(&c, "; ", 65536));
		break;
	case PERF_FEAT_GROUP_DESC:
		ret = feat_group_desc(r, &c);
		break;
	case PERF_FEAT_EVENT_DESC:
		ret = feat_event_desc(r, &c);
		break;
	case PERF_FEAT_SAMPLE_TIME:
		h->sample_time_first = cur_u64(&c);
		h->sample_time_last = cur_u64(&c);
		break;
	case PERF_FEAT_CLOCKID:
		h->clockid_res_ns = cur_u64(&c);
		break;
	case PERF_FEAT_CLOCK_DATA: {
		uint32_t version = cur_u32(&c);

		h->clock_data_clockid = cur_u32(&c);
		h->clock_data_wall_ns = cur_u64(&c);
		h->clock_data_clk_ns = cur_u64(&c);
		h->has_clock_data = !c.bad && version >= 1;
		break;
	}
	case PERF_FEAT_COMPRESSED:
		cur_u32(&c); /* version */
		h->comp_type = cur_u32(&c);
		h->comp_level = cur_u32(&c);
		h->comp_ratio = cur_u32(&c);
		h->comp_mmap_len = cur_u32(&c);
		h->has_compressed = !c.bad;
		break;
	case PERF_FEAT_DIR_FORMAT:
		h->dir_format_version = cur_u64(&c);
		break;
	default:
		/* Known by name or not, the rest is kept only as "present". */
		break;
	}
	if (c.bad && ret == PP_OK)
		ret = PP_EFORMAT;
	return ret;
}

/* --- file mode --- */

static int src_pread(struct perf_reader *r, void *buf, size_t len, uint64_t off)
{
	if (r->mem) {
		if (off > r->mem_len || len > r->mem_len - off)
			return PP_ETRUNC;
		memcpy(buf, r->mem + off, len);
		return PP_OK;
	}
	while (len) {
		ssize_t n = pread(r->fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ESPIPE ? PP_ENOSEEK : PP_EIO;
		if (n == 0)
			return PP_ETRUNC;
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return PP_OK;
}

/* Read a whole section into a new buffer, capped for hostile sizes. */
static int read_section(struct perf_reader *r, uint64_t off, uint64_t size, uint8_t **out)
{
	uint8_t *buf;
	int ret;

	*out = NULL;
	if (size > r->hdr.file_size || off > r->hdr.file_size - size)
		return PP_ETRUNC;
	buf = malloc(size ? size : 1);
	if (!buf)
		return PP_ENOMEM;
	ret = src_pread(r, buf, size, off);
	if (ret) {
		free(buf);
		return ret;
	}
	*out = buf;
	return PP_OK;
}

static int read_features(struct perf_reader *r, uint64_t feat_off)
{
	struct perf_header_info *h = &r->hdr;
	unsigned nr = 0, i = 0;
	uint8_t *table = NULL;
	int ret;

	for (unsigned f = 0; f < PERF_FEAT_BITS; f++)
		nr += !!(h->features[f / 64] & (1ULL << (f % 64)));
	if (!nr)
		return PP_OK;
	ret = read_section(r, feat_off, (uint64_t)nr * 16, &table);
	if (ret) {
		pp_warn("feature table at offset %" PRIu64 " is unreadable: %s",
			feat_off, pp_strerror(ret));
		r->st.truncated = true;
		return PP_OK; /* the data is still usable */
	}
	for (unsigned f = 0; f < PERF_FEAT_BITS; f++) {
		uint64_t off, size;
		uint8_t *sec;

		if (!(h->features[f / 64] & (1ULL << (f % 64))))
			continue;
		off = load_u64(table + 16 * i, h->swapped);
		size = load_u64(table + 16 * i + 8, h->swapped);
		i++;
		ret = read_section(r, off, size, &sec);
		if (ret) {
			/* skipped: what of it lies in the file, not what it claimed
			 * (a section "1 TB long" skips nothing that is there) */
			uint64_t in_file = off < h->file_size ? h->file_size - off : 0;

			perf_skip(r, off, f, size < in_file ? size : in_file,
				  "feature section outside the file");
			continue;
		}
		ret = perf_feature_parse(r, f, sec, size);
		if (ret && ret != PP_ENOMEM) {
			const char *name = perf_feature_name(f);

			pp_warn("feature section '%s' at offset %" PRIu64 " is malformed: %s",
				name ? name : "?", off, pp_strerror(ret));
			r->st.truncated = r->st.truncated || ret == PP_ETRUNC;
			perf_skip(r, off, f, size, "malformed feature section");
		}
		free(sec);
		if (ret == PP_ENOMEM) {
			free(table);
			return ret;
		}
	}
	free(table);
	return PP_OK;
}

int perf_header_read_file(struct perf_reader *r)
{
	struct perf_header_info *h = &r->hdr;
	uint8_t fh[PERF_FILE_HEADER_SIZE];
	uint64_t hdr_size, attr_size, attrs_off, attrs_size, nr_attrs;
	uint64_t (*taken)[2] = NULL;       /* sections read: offset, size */
	size_t nr_taken = 0;
	uint8_t *attrs = NULL;
	int ret;

	ret = src_pread(r, fh, sizeof(fh), 0);
	if (ret)
		return ret == PP_ETRUNC ? PP_EMAGIC : ret;
	h->swapped = load_u64(fh, false) == PERF_MAGIC2_SWAPPED;
	hdr_size = load_u64(fh + 8, h->swapped);
	attr_size = load_u64(fh + 16, h->swapped);
	attrs_off = load_u64(fh + 24, h->swapped);
	attrs_size = load_u64(fh + 32, h->swapped);
	h->data_offset = load_u64(fh + 40, h->swapped);
	h->data_size = load_u64(fh + 48, h->swapped);
	for (int i = 0; i < 4; i++)
		h->features[i] = load_u64(fh + 72 + 8 * i, h->swapped);
	if (hdr_size < PERF_FILE_HEADER_SIZE - 32 || hdr_size > 4096) {
		pp_error("file header size %" PRIu64 " is not one perf writes", hdr_size);
		return PP_EFORMAT;
	}
	if (hdr_size < PERF_FILE_HEADER_SIZE)
		memset(h->features, 0, sizeof(h->features)); /* no feature bitmap */

	/* Each attr is followed by the {offset, size} of its ids. */
	if (attr_size < 64 + 16 || attr_size > 4096) {
		pp_error("attr size %" PRIu64 " is not one perf writes", attr_size);
		return PP_EFORMAT;
	}
	nr_attrs = attrs_size / attr_size;
	if (nr_attrs == 0 || nr_attrs > 4096) {
		pp_error("the file has %" PRIu64 " event attributes", nr_attrs);
		return PP_EFORMAT;
	}
	ret = read_section(r, attrs_off, nr_attrs * attr_size, &attrs);
	if (ret) {
		pp_error("event attributes at offset %" PRIu64 " are unreadable: %s",
			 attrs_off, pp_strerror(ret));
		return ret;
	}
	/* the ids sections taken so far: perf writes each attr's apart, so
	 * one that overlaps another (or the attrs) is refused - the file's
	 * bytes are then held once, however many attrs point at them */
	taken = calloc(nr_attrs + 1, sizeof(*taken));
	if (!taken) {
		ret = PP_ENOMEM;
		goto out;
	}
	taken[0][0] = attrs_off;
	taken[0][1] = nr_attrs * attr_size;
	nr_taken = 1;
	for (uint64_t i = 0; i < nr_attrs; i++) {
		const uint8_t *a = attrs + i * attr_size;
		uint64_t ids_off = load_u64(a + attr_size - 16, h->swapped);
		uint64_t ids_size = load_u64(a + attr_size - 8, h->swapped);
		uint8_t *ids = NULL;
		bool overlap = false;

		for (size_t k = 0; k < nr_taken && ids_size && !overlap; k++)
			overlap = ids_off < taken[k][0] + taken[k][1] && taken[k][0] < ids_off + ids_size &&
				  ids_off + ids_size > ids_off;
		if (overlap) {
			pp_warn("ids of event %" PRIu64 " at offset %" PRIu64 " (%" PRIu64 " bytes) overlap "
				"another section: not read", i, ids_off, ids_size);
			ids_size = 0;
		} else if (ids_size % 8 || read_section(r, ids_off, ids_size, &ids)) {
			pp_warn("ids of event %" PRIu64 " at offset %" PRIu64 " are unreadable",
				i, ids_off);
			ids_size = 0;
		} else if (ids_size) {
			taken[nr_taken][0] = ids_off;
			taken[nr_taken][1] = ids_size;
			nr_taken++;
		}
		ret = perf_evsel_add(r, a, attr_size - 16, ids, ids_size / 8, h->swapped);
		free(ids);
		if (ret)
			goto out;
	}

	if (h->data_offset > h->file_size) {
		pp_error("data section at offset %" PRIu64 " starts past the end (%" PRIu64 " bytes)",
			 h->data_offset, h->file_size);
		ret = PP_ETRUNC;
		goto out;
	}
	if (h->data_size == 0 && h->file_size > h->data_offset && !h->directory) {
		/* perf was killed before it finished the header: what it wrote
		 * is read (perf_stats_partly() says so at the end) */
		pp_debug("the header says the data section is empty: reading to the end of the file");
		h->data_size = h->file_size - h->data_offset;
		memset(h->features, 0, sizeof(h->features));
		r->st.unfinished = true;
		r->st.truncated = true; /* every command reads it as partial */
	} else if (h->data_size > h->file_size - h->data_offset) {
		pp_warn("data section ends %" PRIu64 " bytes past the end of the file",
			h->data_size - (h->file_size - h->data_offset));
		h->data_size = h->file_size - h->data_offset;
		r->st.truncated = true;
	}
	ret = read_features(r, h->data_offset + h->data_size);
out:
	free(taken);
	free(attrs);
	return ret;
}

void perf_header_free(struct perf_header_info *h)
{
	free(h->hostname);
	free(h->osrelease);
	free(h->version);
	free(h->arch);
	free(h->cpudesc);
	free(h->cpuid);
	free(h->cmdline);
	free(h->core_siblings);
	free(h->thread_siblings);
	for (size_t i = 0; i < h->nr_groups; i++)
		free(h->groups[i].name);
	free(h->groups);
	for (size_t i = 0; i < h->nr_build_ids; i++)
		free(h->build_ids[i].filename);
	free(h->build_ids);
	if (h->tep)
		tep_free(h->tep);
	for (size_t i = 0; i < h->nr_tp_print_fmts; i++)
		free(h->tp_print_fmts[i].text);
	free(h->tp_print_fmts);
}

void perf_stats_partly(const struct perf_stats *st, char *buf, size_t len)
{
	int n = 0;

	buf[0] = '\0';
	if (st->unfinished)
		n = snprintf(buf, len, "perf record did not finish the file (its header gives "
			     "no data size): its records were read to the end of the file, but "
			     "not the header's build ids, host and event names%s",
			     st->skipped_records ? "; " : "");
	if (n < 0 || (size_t)n >= len)
		return;
	if (st->skipped_records || !st->unfinished)
		snprintf(buf + n, len - (size_t)n, "%" PRIu64 " records skipped%s",
			 st->skipped_records,
			 st->truncated && !st->unfinished ? ", the data ends early" : "");
}
