/* SPDX-License-Identifier: MIT */
/*
 * machine.c - processes, threads and maps rebuilt from COMM, FORK, EXIT,
 * MMAP and MMAP2.
 *
 * Only executable maps are kept (MMAP without MISC_MMAP_DATA, MMAP2 with
 * PROT_EXEC): they are the only ones a frame can be in. A new map replaces
 * whatever part of older maps it overlaps; a new process (FORK with
 * pid != ppid) starts with a copy of its parent's maps; an exec (COMM with
 * the exec flag) starts an empty address space. Kernel and module maps
 * (pid -1) are shared by every process.
 *
 * Containers: a process's mount namespace (NAMESPACES records) goes with
 * the files it maps, so that one path in two namespaces is two files, and
 * src/symbols/ can look for a container's files in its own root.
 */
#include "machine.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../util/error.h"

#define MISC_MMAP_DATA (1U << 13)

struct process {
	struct proc_info info;  /* first: what later stages see */
	const struct dso *jitdump; /* jit-PID.dump, mapped by a JIT that writes one */
	uint64_t gen;         /* changes with the maps */
	struct map *maps;     /* sorted by start, not overlapping: buf + head */
	size_t nr;
	struct map *buf;      /* owns the array; room before maps (head) and after */
	size_t head, cap;     /* cap: the whole buffer */
	/* maps inserted between others since the last merge: sorted, not
	 * overlapping each other, and over maps (a newer map wins) */
	struct map *recent;
	size_t nr_recent, cap_recent;
	bool dirty;           /* on the machine's list of processes to settle */
};

struct thread {
	uint32_t tid, pid;
	char comm[16];
};

/* Open addressing on a u32 key; values are pointers owned by the table. */
struct u32map {
	uint32_t *keys;
	void **vals;
	size_t cap, nr;
};

struct machine {
	const struct perf_header_info *hdr;
	struct u32map procs;   /* pid -> struct process */
	struct u32map threads; /* tid -> struct thread */
	struct process kernel; /* kernel and module maps */
	struct dso **dsos;
	size_t nr_dsos, cap_dsos;
	uint32_t *dso_slots;   /* open addressing on the path: index + 1 */
	size_t dso_slots_cap;
	uint64_t kernel_text;
	struct dso *kernel_dso;
	uint64_t host_pid_ns;     /* pid 1's pid namespace, else the first seen */
	struct u32map mnt_by_ino; /* (u32) inode -> struct mount_ns */
	struct mount_ns **mnts;   /* in order seen */
	size_t nr_mnts, cap_mnts;
	/* processes with recent maps not merged yet (machine_maps_settle) */
	struct process **dirty;
	size_t nr_dirty, cap_dirty;
};

/* --- u32 map --- */

static size_t u32_slot(uint32_t key, size_t cap)
{
	return (size_t)((key * 2654435761u) & (cap - 1));
}

static void *u32map_get(const struct u32map *t, uint32_t key)
{
	if (!t->cap)
		return NULL;
	for (size_t i = u32_slot(key, t->cap); t->vals[i]; i = (i + 1) & (t->cap - 1))
		if (t->keys[i] == key)
			return t->vals[i];
	return NULL;
}

static int u32map_put(struct u32map *t, uint32_t key, void *val)
{
	size_t i;

	if ((t->nr + 1) * 2 > t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		uint32_t *keys = calloc(cap, sizeof(*keys));
		void **vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return PP_ENOMEM;
		}
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->vals[j])
				continue;
			for (i = u32_slot(t->keys[j], cap); vals[i]; i = (i + 1) & (cap - 1))
				;
			keys[i] = t->keys[j];
			vals[i] = t->vals[j];
		}
		free(t->keys);
		free(t->vals);
		t->keys = keys;
		t->vals = vals;
		t->cap = cap;
	}
	for (i = u32_slot(key, t->cap); t->vals[i]; i = (i + 1) & (t->cap - 1)) {
		if (t->keys[i] == key) {
			t->vals[i] = val; /* the caller freed the old value */
			return PP_OK;
		}
	}
	t->keys[i] = key;
	t->vals[i] = val;
	t->nr++;
	return PP_OK;
}

static void u32map_free(struct u32map *t, void (*free_val)(void *))
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->vals[i])
			free_val(t->vals[i]);
	free(t->keys);
	free(t->vals);
}

/* --- dsos --- */

static enum dso_kind dso_kind_of(const char *path, bool kernel_side)
{
	if (strncmp(path, "[kernel.kallsyms]", 17) == 0)
		return DSO_KERNEL;
	if (kernel_side)
		return DSO_MODULE;
	if (strcmp(path, "[vdso]") == 0)
		return DSO_VDSO;
	if (strncmp(path, "//anon", 6) == 0 || strncmp(path, "[anon", 5) == 0 ||
	    strncmp(path, "/memfd:", 7) == 0 || strncmp(path, "/tmp/perf-", 10) == 0)
		return DSO_ANON;
	if (path[0] == '[')
		return DSO_SPECIAL;
	return DSO_USER;
}

/* The build id the BUILD_ID feature records for @path, if any. */
static const struct perf_build_id *header_build_id(const struct machine *m, const char *path)
{
	for (size_t i = 0; i < m->hdr->nr_build_ids; i++)
		if (strcmp(m->hdr->build_ids[i].filename, path) == 0)
			return &m->hdr->build_ids[i];
	return NULL;
}

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static int dso_slots_grow(struct machine *m)
{
	size_t cap = m->dso_slots_cap ? m->dso_slots_cap * 2 : 64;
	uint32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return PP_ENOMEM;
	/* in creation order: each chain keeps the order of its dsos */
	for (size_t i = 0; i < m->nr_dsos; i++) {
		size_t j = path_hash(m->dsos[i]->path) & (cap - 1);

		while (s[j])
			j = (j + 1) & (cap - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(m->dso_slots);
	m->dso_slots = s;
	m->dso_slots_cap = cap;
	return PP_OK;
}

/* One path in two mount namespaces is two files; unknown matches any. */
static bool same_mount_ns(const struct proc_info *a, const struct proc_info *b)
{
	return !a || !b || !a->mnt || !b->mnt || a->mnt == b->mnt;
}

static struct dso *dso_get(struct machine *m, const char *recorded, bool kernel_side,
			   const uint8_t *build_id, uint8_t build_id_size,
			   const struct proc_info *mapper)
{
	size_t len = strlen(recorded);
	const struct perf_build_id *hb;
	struct dso *d;
	char *path;

	if (len > 10 && strcmp(recorded + len - 10, " (deleted)") == 0)
		len -= 10;
	path = strndup(recorded, len);
	if (!path)
		return NULL;
	if (strncmp(path, "[kernel.kallsyms]", 17) == 0)
		path[17] = 0; /* "[kernel.kallsyms]_text" is the kernel too */
	if (!build_id_size && (hb = header_build_id(m, path))) {
		build_id = hb->id;
		build_id_size = hb->size;
	}
	/* by path through a hash (100,000 distinct files were quadratic);
	 * a path's dsos sit in one probe chain, the first match wins as in
	 * the order they were made */
	if ((m->nr_dsos + 1) * 2 > m->dso_slots_cap && dso_slots_grow(m)) {
		free(path);
		return NULL;
	}
	for (size_t j = path_hash(path) & (m->dso_slots_cap - 1); m->dso_slots[j];
	     j = (j + 1) & (m->dso_slots_cap - 1)) {
		d = m->dsos[m->dso_slots[j] - 1];
		if (strcmp(d->path, path) == 0 && same_mount_ns(d->mapper, mapper) &&
		    (!build_id_size || !d->build_id_size ||
		     (d->build_id_size == build_id_size &&
		      memcmp(d->build_id, build_id, build_id_size) == 0))) {
			if (!d->build_id_size && build_id_size) {
				memcpy(d->build_id, build_id, build_id_size);
				d->build_id_size = build_id_size;
			}
			free(path);
			return d;
		}
	}
	if (m->nr_dsos == m->cap_dsos) {
		size_t cap = m->cap_dsos ? m->cap_dsos * 2 : 32;
		struct dso **n = realloc(m->dsos, cap * sizeof(*n));

		if (!n) {
			free(path);
			return NULL;
		}
		m->dsos = n;
		m->cap_dsos = cap;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		free(path);
		return NULL;
	}
	d->id = (unsigned)m->nr_dsos;
	d->path = path;
	d->kind = dso_kind_of(path, kernel_side);
	d->mapper = kernel_side ? NULL : mapper;
	if (build_id_size) {
		d->build_id_size = build_id_size > PERF_MAX_BUILD_ID ? PERF_MAX_BUILD_ID : build_id_size;
		memcpy(d->build_id, build_id, d->build_id_size);
	}
	m->dsos[m->nr_dsos++] = d;
	{
		size_t j = path_hash(path) & (m->dso_slots_cap - 1);

		while (m->dso_slots[j])
			j = (j + 1) & (m->dso_slots_cap - 1);
		m->dso_slots[j] = (uint32_t)m->nr_dsos;
	}
	return d;
}

/* --- maps --- */

static uint64_t map_generation; /* unique across processes and machines */

/* Room for one more map before the first or after the last. */
static int maps_room(struct process *p)
{
	size_t cap = (p->nr + 1) * 2 + 16, head = cap / 4;
	struct map *b = malloc(cap * sizeof(*b));

	if (!b)
		return PP_ENOMEM;
	if (p->nr)
		memcpy(b + head, p->maps, p->nr * sizeof(*b));
	free(p->buf);
	p->buf = b;
	p->maps = b + head;
	p->head = head;
	p->cap = cap;
	return PP_OK;
}

/*
 * Overlay @r (@nr_r maps, sorted, not overlapping) on @a (@nr_a, likewise):
 * the maps of @a cut where @r's lie, merged with @r in order into @out
 * (room for nr_a + 2 * nr_r). Return: the number written.
 */
static size_t maps_overlay(const struct map *a, size_t nr_a, const struct map *r, size_t nr_r,
			   struct map *out)
{
	size_t n = 0, i = 0, j = 0, k = 0;

	/* a piece of an old map is [cur, end) of a[i], past every r before it */
	while (i < nr_a) {
		uint64_t cur = a[i].start;

		while (k < nr_r && r[k].end <= cur)
			k++;
		for (size_t x = k; cur < a[i].end; x++) {
			uint64_t e = x < nr_r && r[x].start < a[i].end ? r[x].start : a[i].end;

			if (e > cur) {
				/* the new maps that start before this piece come first */
				while (j < nr_r && r[j].start < cur)
					out[n++] = r[j++];
				out[n] = a[i];
				out[n].start = cur;
				out[n].end = e;
				out[n].pgoff = a[i].pgoff + (cur - a[i].start);
				n++;
			}
			if (x >= nr_r || r[x].start >= a[i].end)
				break;
			cur = r[x].end;
		}
		i++;
	}
	while (j < nr_r)
		out[n++] = r[j++];
	return n;
}

/* Merge the recent maps into the main array (one linear pass). */
static int maps_flush(struct process *p)
{
	struct map *out;

	if (!p->nr_recent)
		return PP_OK;
	out = malloc((p->nr + 2 * p->nr_recent + 1) * sizeof(*out));
	if (!out)
		return PP_ENOMEM;
	p->nr = maps_overlay(p->maps, p->nr, p->recent, p->nr_recent, out);
	free(p->buf);
	p->buf = p->maps = out;
	p->head = 0;
	p->cap = p->nr;
	p->nr_recent = 0;
	return PP_OK;
}

/*
 * A map that lands between others: into the recent maps (a sorted array
 * kept about the square root of the main one's size, where an insertion
 * moves that many entries), merged into the main array when they grow past
 * it. Lookups search the recent maps first. n insertions in any order cost
 * O(n sqrt n) moves, not the O(n^2) of copying the array each time.
 */
static int recent_insert(struct machine *m, struct process *p, const struct map *nm)
{
	size_t lo = 0, hi, limit = 64;
	struct map left = { 0 }, right = { 0 };
	bool has_left = false, has_right = false;

	while (limit * limit < p->nr)
		limit *= 2;
	/* the recent maps nm overlaps: [lo, hi) */
	while (lo < p->nr_recent && p->recent[lo].end <= nm->start)
		lo++;
	hi = lo;
	while (hi < p->nr_recent && p->recent[hi].start < nm->end)
		hi++;
	if (hi > lo && p->recent[lo].start < nm->start) {
		left = p->recent[lo];
		left.end = nm->start;
		has_left = true;
	}
	if (hi > lo && p->recent[hi - 1].end > nm->end) {
		right = p->recent[hi - 1];
		right.pgoff += nm->end - right.start;
		right.start = nm->end;
		has_right = true;
	}
	{
		size_t add = 1 + has_left + has_right, need = p->nr_recent - (hi - lo) + add;

		if (need > p->cap_recent) {
			size_t cap = p->cap_recent ? p->cap_recent * 2 : 16;
			struct map *n;

			while (cap < need)
				cap *= 2;
			n = realloc(p->recent, cap * sizeof(*n));
			if (!n)
				return PP_ENOMEM;
			p->recent = n;
			p->cap_recent = cap;
		}
		memmove(p->recent + lo + add, p->recent + hi, (p->nr_recent - hi) * sizeof(*p->recent));
		if (has_left)
			p->recent[lo++] = left;
		p->recent[lo++] = *nm;
		if (has_right)
			p->recent[lo] = right;
		p->nr_recent = need;
	}
	p->gen = ++map_generation;
	if (p->nr_recent > limit)
		return maps_flush(p);
	if (!p->dirty) {
		if (m->nr_dirty == m->cap_dirty) {
			size_t cap = m->cap_dirty ? m->cap_dirty * 2 : 16;
			struct process **d = realloc(m->dirty, cap * sizeof(*d));

			if (!d)
				return maps_flush(p);
			m->dirty = d;
			m->cap_dirty = cap;
		}
		m->dirty[m->nr_dirty++] = p;
		p->dirty = true;
	}
	return PP_OK;
}

int machine_maps_settle(struct machine *m)
{
	int ret = PP_OK;

	for (size_t i = 0; i < m->nr_dirty; i++) {
		if (maps_flush(m->dirty[i]))
			ret = PP_ENOMEM;
		m->dirty[i]->dirty = false;
	}
	m->nr_dirty = 0;
	return ret;
}

static int maps_insert(struct machine *m, struct process *p, const struct map *nm)
{
	/* the common cases in O(1): a map below all others (the kernel
	 * hands out mmap addresses top-down) or above them all */
	if (!p->nr_recent &&
	    (!p->nr || nm->end <= p->maps[0].start || nm->start >= p->maps[p->nr - 1].end)) {
		bool front = p->nr && nm->end <= p->maps[0].start;

		if ((front ? !p->head : p->head + p->nr == p->cap) && maps_room(p))
			return PP_ENOMEM;
		if (front) {
			p->maps--;
			p->head--;
			p->maps[0] = *nm;
		} else {
			p->maps[p->nr] = *nm;
		}
		p->nr++;
		p->gen = ++map_generation;
		return PP_OK;
	}
	return recent_insert(m, p, nm);
}

static const struct map *maps_search(const struct map *maps, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (maps[mid].end <= addr)
			lo = mid + 1;
		else if (maps[mid].start > addr)
			hi = mid;
		else
			return &maps[mid];
	}
	return NULL;
}

/* The map of @addr: a recent one (newer) over the main array's. */
static const struct map *maps_find(const struct process *p, uint64_t addr)
{
	const struct map *r = p->nr_recent ? maps_search(p->recent, p->nr_recent, addr) : NULL;

	return r ? r : maps_search(p->maps, p->nr, addr);
}

static void process_free(void *v)
{
	struct process *p = v;

	free(p->recent);
	free(p->buf);
	free(p);
}

static struct process *process_get(struct machine *m, uint32_t pid)
{
	struct process *p = u32map_get(&m->procs, pid);

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->info.pid = pid;
	if (u32map_put(&m->procs, pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

static struct thread *thread_get(struct machine *m, uint32_t tid, uint32_t pid)
{
	struct thread *t = u32map_get(&m->threads, tid);

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || u32map_put(&m->threads, tid, t)) {
			free(t);
			return NULL;
		}
		t->tid = tid;
	}
	t->pid = pid;
	return t;
}

/* --- records --- */

/*
 * A JIT's dump file (the jitdump format perf inject reads): it maps
 * "jit-PID.dump" so that the recording says where it is. PID is the JIT's
 * pid as it sees it: in a container, its pid namespace's. Return: PID, or
 * 0 when @path is not one.
 */
static uint32_t jitdump_pid(const char *path)
{
	const char *b = strrchr(path, '/');
	char *end;
	unsigned long v;

	b = b ? b + 1 : path;
	if (strncmp(b, "jit-", 4) || b[4] < '0' || b[4] > '9')
		return 0;
	v = strtoul(b + 4, &end, 10);
	if (strcmp(end, ".dump") || !v || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/* --- namespaces --- */

static struct mount_ns *mount_ns_get(struct machine *m, uint64_t dev, uint64_t ino)
{
	struct mount_ns *n = u32map_get(&m->mnt_by_ino, (uint32_t)ino);

	if (n)
		return n->ino == ino && n->dev == dev ? n : NULL; /* a clash: not known */
	if (m->nr_mnts == m->cap_mnts) {
		size_t cap = m->cap_mnts ? m->cap_mnts * 2 : 8;
		struct mount_ns **v = realloc(m->mnts, cap * sizeof(*v));

		if (!v)
			return NULL;
		m->mnts = v;
		m->cap_mnts = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n || u32map_put(&m->mnt_by_ino, (uint32_t)ino, n)) {
		free(n);
		return NULL;
	}
	n->dev = dev;
	n->ino = ino;
	m->mnts[m->nr_mnts++] = n;
	return n;
}

static void mount_ns_free(void *v)
{
	struct mount_ns *n = v;

	free(n->pids);
	free(n);
}

static int on_namespaces(struct machine *m, const struct perf_ns_rec *ns)
{
	struct process *p;
	struct mount_ns *mn;

	if (ns->pid != ns->tid || !ns->mnt_ino)
		return PP_OK; /* threads share their process's */
	p = process_get(m, ns->pid);
	if (!p)
		return PP_ENOMEM;
	p->info.pid_ns = ns->pid_ino;
	if (ns->pid_ino && (ns->pid == 1 || !m->host_pid_ns))
		m->host_pid_ns = ns->pid_ino;
	p->info.other_pid_ns = ns->pid_ino && ns->pid_ino != m->host_pid_ns;
	mn = mount_ns_get(m, ns->mnt_dev, ns->mnt_ino);
	if (!mn) {
		p->info.mnt = NULL;
		return PP_OK;
	}
	if (ns->pid == 1 || m->nr_mnts == 1) {
		for (size_t i = 0; i < m->nr_mnts; i++)
			m->mnts[i]->host = false;
		mn->host = true; /* init's, else the first seen */
	}
	if (p->info.mnt != mn) {
		if (mn->nr == mn->cap) {
			size_t cap = mn->cap ? mn->cap * 2 : 8;
			uint32_t *v = realloc(mn->pids, cap * sizeof(*v));

			if (!v)
				return PP_ENOMEM;
			mn->pids = v;
			mn->cap = cap;
		}
		mn->pids[mn->nr++] = ns->pid;
	}
	p->info.mnt = mn;
	return PP_OK;
}

static int on_mmap(struct machine *m, const struct perf_event *ev)
{
	const struct perf_mmap_rec *mm = &ev->u.mmap;
	uint16_t cpumode = ev->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	bool kernel_side = mm->pid == UINT32_MAX || cpumode == PERF_RECORD_MISC_KERNEL;
	struct process *p;
	struct map nm;
	uint32_t nspid;

	if (ev->type == PERF_RECORD_MMAP && (ev->misc & MISC_MMAP_DATA))
		return PP_OK;
	if (ev->type == PERF_RECORD_MMAP2 && !(mm->prot & PROT_EXEC) && !kernel_side)
		return PP_OK;
	if (!mm->len || mm->start + mm->len < mm->start)
		nm.end = UINT64_MAX;
	else
		nm.end = mm->start + mm->len;
	nm.start = mm->start;
	nm.pgoff = mm->pgoff;
	p = kernel_side ? NULL : process_get(m, mm->pid);
	if (!kernel_side && !p)
		return PP_ENOMEM;
	nm.dso = dso_get(m, mm->filename, kernel_side, mm->build_id, mm->build_id_size,
			 p ? &p->info : NULL);
	if (!nm.dso)
		return PP_ENOMEM;
	if (ev->type == PERF_RECORD_MMAP2 && !mm->build_id_size && mm->ino && !nm.dso->ino) {
		nm.dso->maj = mm->maj;
		nm.dso->min = mm->min;
		nm.dso->ino = mm->ino;
		nm.dso->ino_generation = mm->ino_generation;
	}
	if (kernel_side) {
		if (nm.dso->kind == DSO_KERNEL) {
			m->kernel_text = mm->pgoff; /* start == pgoff == runtime _text */
			m->kernel_dso = nm.dso;
		}
		return maps_insert(m, &m->kernel, &nm);
	}
	if ((nspid = jitdump_pid(nm.dso->path))) {
		/* a JIT names its dump after its own pid, in its pid namespace */
		p->jitdump = nm.dso;
		if (nspid != mm->pid || !p->info.nspid)
			p->info.nspid = nspid;
	}
	return maps_insert(m, p, &nm);
}

bool machine_event_applies(const struct perf_event *ev)
{
	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_NAMESPACES:
		return true;
	default:
		return false;
	}
}

int machine_event(struct machine *m, const struct perf_event *ev)
{
	struct process *p, *parent;
	struct thread *t;

	switch (ev->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return on_mmap(m, ev);
	case PERF_RECORD_COMM:
		t = thread_get(m, ev->u.comm.tid, ev->u.comm.pid);
		if (!t)
			return PP_ENOMEM;
		strncpy(t->comm, ev->u.comm.comm, sizeof(t->comm) - 1);
		/* a name set by the program: no control byte reaches an output */
		for (char *c = t->comm; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		if (ev->u.comm.tid == ev->u.comm.pid) {
			p = process_get(m, ev->u.comm.pid);
			if (!p)
				return PP_ENOMEM;
			memcpy(p->info.comm, t->comm, sizeof(p->info.comm));
		} else {
			p = u32map_get(&m->procs, ev->u.comm.pid);
		}
		if (ev->u.comm.exec && p) {
			free(p->buf); /* a new program: a new address space */
			p->buf = p->maps = NULL;
			p->nr = p->cap = p->head = 0;
			p->nr_recent = 0;
			p->gen = ++map_generation;
		}
		return PP_OK;
	case PERF_RECORD_FORK: {
		struct thread *pt = u32map_get(&m->threads, ev->u.task.ptid);

		t = thread_get(m, ev->u.task.tid, ev->u.task.pid);
		if (!t)
			return PP_ENOMEM;
		if (pt)
			memcpy(t->comm, pt->comm, sizeof(t->comm));
		if (ev->u.task.pid == ev->u.task.ppid || u32map_get(&m->procs, ev->u.task.pid))
			return PP_OK; /* a thread, or a process we already know */
		parent = u32map_get(&m->procs, ev->u.task.ppid);
		p = process_get(m, ev->u.task.pid);
		if (!p)
			return PP_ENOMEM;
		p->info.ppid = ev->u.task.ppid;
		memcpy(p->info.comm, t->comm, sizeof(p->info.comm));
		if (parent) {
			/* its own NAMESPACES record follows when they are recorded */
			p->info.mnt = parent->info.mnt;
			p->info.pid_ns = parent->info.pid_ns;
			p->info.other_pid_ns = parent->info.other_pid_ns;
		}
		if (parent && maps_flush(parent))
			return PP_ENOMEM;
		if (parent && parent->nr) {
			p->buf = p->maps = malloc(parent->nr * sizeof(*p->maps));
			if (!p->maps)
				return PP_ENOMEM;
			memcpy(p->maps, parent->maps, parent->nr * sizeof(*p->maps));
			p->nr = p->cap = parent->nr;
			p->head = 0;
			p->gen = ++map_generation;
		}
		return PP_OK;
	}
	case PERF_RECORD_NAMESPACES:
		return on_namespaces(m, &ev->u.ns);
	default:
		return PP_OK;
	}
}

static struct raw_frame make_frame(const struct machine *m, const struct process *p,
				   uint32_t pid, uint64_t addr, uint8_t kind, bool ret)
{
	struct raw_frame f = { .addr = addr, .pid = pid, .kind = kind, .ret = ret,
			       .jitdump = p ? p->jitdump : NULL, .proc = p ? &p->info : NULL };
	const struct map *mp;

	if (kind == FRAME_KERNEL) {
		mp = maps_find(&m->kernel, addr);
		f.dso = mp ? mp->dso : m->kernel_dso;
		f.offset = addr;
		if (mp && mp->dso->kind == DSO_MODULE)
			f.offset = addr - mp->start + mp->pgoff;
		return f;
	}
	if (kind != FRAME_USER)
		return f;
	mp = p ? maps_find(p, addr) : NULL;
	if (mp) {
		f.dso = mp->dso;
		f.offset = addr - mp->start + mp->pgoff;
	}
	return f;
}

size_t machine_user_frames(const struct machine *m, uint32_t pid, const uint64_t *addrs,
			   size_t n, struct raw_frame *out, size_t max)
{
	const struct process *p = u32map_get(&m->procs, pid);
	size_t k;

	for (k = 0; k < n && k < max; k++)
		out[k] = make_frame(m, p, pid, addrs[k], FRAME_USER, k > 0);
	return k;
}

const struct map *machine_process_maps(const struct machine *m, uint32_t pid, size_t *nr,
				       uint64_t *gen)
{
	const struct process *p = u32map_get(&m->procs, pid);

	*nr = p ? p->nr : 0;
	*gen = p ? p->gen : 0;
	return p ? p->maps : NULL;
}

size_t machine_kernel_frames(const struct machine *m, const struct perf_event *ev,
			     struct raw_frame *out, size_t max)
{
	size_t n = machine_sample_frames(m, ev, out, max), k = 0;

	for (size_t i = 0; i < n; i++)
		if (out[i].kind == FRAME_KERNEL)
			out[k++] = out[i];
	return k;
}

/*
 * `--call-graph lbr`, as perf builds it: the kernel part of the callchain,
 * then the entry of the function running (the newest branch's to), then the
 * call sites the hardware recorded (each entry's from, outermost last). The
 * sampled address itself is used only when the branch stack is empty.
 */
static size_t lbr_frames(const struct machine *m, const struct process *p,
			 const struct perf_event *ev, struct raw_frame *out, size_t max)
{
	const struct perf_sample *s = &ev->sample;
	uint64_t user_ip = s->ip;
	bool kernel = false, user_seen = false;
	size_t n = 0;

	for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			continue;
		}
		if (kernel) {
			out[n] = make_frame(m, p, s->pid, ip, FRAME_KERNEL, n > 0);
			n++;
		} else if (!user_seen) {
			user_ip = ip; /* the user context's first entry: where it was */
			user_seen = true;
		}
	}
	if (n < max && s->branch_nr && s->branch[0].to)
		out[n++] = make_frame(m, p, s->pid, s->branch[0].to, FRAME_USER, false);
	else if (n < max && user_ip < (uint64_t)PERF_CONTEXT_MAX && (user_seen || !n))
		out[n++] = make_frame(m, p, s->pid, user_ip, FRAME_USER, false);
	for (uint64_t i = 0; i < s->branch_nr && n < max; i++)
		if (s->branch[i].from)
			out[n++] = make_frame(m, p, s->pid, s->branch[i].from, FRAME_USER, false);
	return n;
}

size_t machine_sample_frames(const struct machine *m, const struct perf_event *ev,
			     struct raw_frame *out, size_t max)
{
	const struct perf_sample *s = &ev->sample;
	const struct process *p = u32map_get(&m->procs, s->pid);
	uint8_t kind = FRAME_USER;
	bool first = true;
	size_t n = 0;

	if (s->branch_nr && ev->evsel &&
	    (ev->evsel->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK))
		return lbr_frames(m, p, ev, out, max);

	if (!s->callchain_nr) {
		switch (ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) {
		case PERF_RECORD_MISC_KERNEL: kind = FRAME_KERNEL; break;
		case PERF_RECORD_MISC_HYPERVISOR: kind = FRAME_HV; break;
		case PERF_RECORD_MISC_GUEST_KERNEL:
		case PERF_RECORD_MISC_GUEST_USER: kind = FRAME_GUEST; break;
		default: kind = FRAME_USER; break;
		}
		if (max)
			out[n++] = make_frame(m, p, s->pid, s->ip, kind, false);
		return n;
	}
	for (uint64_t i = 0; i < s->callchain_nr && n < max; i++) {
		uint64_t ip = s->callchain[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			switch ((int64_t)ip) {
			case PERF_CONTEXT_KERNEL: kind = FRAME_KERNEL; break;
			case PERF_CONTEXT_USER: kind = FRAME_USER; break;
			case PERF_CONTEXT_HV: kind = FRAME_HV; break;
			default: kind = FRAME_GUEST; break;
			}
			first = true; /* a context's first entry is where it was interrupted */
			continue;
		}
		out[n++] = make_frame(m, p, s->pid, ip, kind, !first);
		first = false;
	}
	return n;
}

size_t machine_stack_key(const struct machine *m, const struct perf_event *ev,
			 const uint64_t *pcs, size_t npcs, uint64_t *key)
{
	const struct perf_sample *s = &ev->sample;
	const struct process *p = u32map_get(&m->procs, s->pid);
	bool lbr = s->branch_nr && ev->evsel &&
		   (ev->evsel->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
	size_t len = 0;

	/* the mode decides the kind of a lone ip (a guest's kernel and the
	 * host's share addresses); a callchain says it with its markers */
	key[len++] = (uint64_t)s->pid << 32 |
		     (s->callchain_nr ? 0 : (uint64_t)(ev->misc & PERF_RECORD_MISC_CPUMODE_MASK) << 1) |
		     lbr;
	key[len++] = p ? p->gen : 0;
	key[len++] = m->kernel_text;
	key[len++] = s->callchain_nr;
	if (s->callchain_nr)
		memcpy(key + len, s->callchain, s->callchain_nr * sizeof(*key));
	len += s->callchain_nr;
	if (!s->callchain_nr)
		key[len++] = s->ip;
	key[len++] = npcs;
	for (size_t i = 0; i < npcs; i++)
		key[len++] = pcs[i];
	if (lbr) {
		/* only an LBR call stack's entries make frames (the
		 * key's length says how many) */
		for (uint64_t i = 0; i < s->branch_nr; i++) {
			key[len++] = s->branch[i].from;
			key[len++] = s->branch[i].to;
		}
	}
	return len;
}

struct machine *machine_new(const struct perf_header_info *hdr)
{
	struct machine *m = calloc(1, sizeof(*m));

	if (m)
		m->hdr = hdr;
	return m;
}

void machine_free(struct machine *m)
{
	if (!m)
		return;
	u32map_free(&m->procs, process_free);
	u32map_free(&m->threads, free);
	u32map_free(&m->mnt_by_ino, mount_ns_free);
	free(m->mnts);
	free(m->kernel.buf);
	free(m->kernel.recent);
	free(m->dirty);
	for (size_t i = 0; i < m->nr_dsos; i++) {
		free(m->dsos[i]->path);
		free(m->dsos[i]);
	}
	free(m->dsos);
	free(m->dso_slots);
	free(m);
}

struct dso *const *machine_dsos(const struct machine *m, size_t *nr)
{
	*nr = m->nr_dsos;
	return m->dsos;
}

uint64_t machine_kernel_text(const struct machine *m)
{
	return m->kernel_text;
}

const struct mount_ns *const *machine_mount_ns(const struct machine *m, size_t *nr)
{
	*nr = m->nr_mnts;
	return (const struct mount_ns *const *)m->mnts;
}

const char *machine_comm(const struct machine *m, uint32_t tid)
{
	const struct thread *t = u32map_get(&m->threads, tid);

	return t && t->comm[0] ? t->comm : NULL;
}
