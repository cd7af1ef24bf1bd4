/* SPDX-License-Identifier: MIT */
/*
 * jit.c - JIT code named from what JITs write for perf:
 * - /tmp/perf-PID.map, the file Node (--perf-basic-prof), Python 3.12
 *   (-X perf) and the JVM's perf-map-agent write: one "START SIZE NAME"
 *   line per function, START and SIZE in hex; looked up under --symfs
 *   first; in a container, PID is its pid namespace's and /tmp its own
 *   (nsroot.c); when that PID is unknown, the one map there naming the
 *   address is used;
 * - the jitdump file (jit-PID.dump: Node --perf-prof, the JVM's agent) the
 *   process mapped, read as it is, without `perf inject --jit`: its
 *   CODE_LOAD and CODE_MOVE records. Code whose address range more than one
 *   record covers (space reused after a move or an unload) stays unnamed:
 *   without each sample's time there is no telling which it was.
 * Either file is opened only if it is a regular file (no link followed, no
 * FIFO or device), owned by this user or root and not writable by others,
 * and of bounded size, as perf checks a perf map: any local user can write
 * /tmp. Each pid's files are read once; pids are found by hash.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../util/log.h"
#include "priv.h"

#define JIT_FILE_MAX (512ull << 20)     /* a map or dump larger is refused */

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/*
 * Read @path whole if it is safe to trust (see above); NULL otherwise, with
 * a warning when it exists but is refused. *@len: its size.
 */
static char *read_trusted(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	const char *why = NULL;
	char *buf = NULL;
	size_t got = 0;

	if (fd < 0) {
		if (errno == ELOOP)
			pp_warn("'%s' is a symbolic link: not read for JIT names", path);
		return NULL;
	}
	if (fstat(fd, &st))
		why = "cannot be examined";
	else if (!S_ISREG(st.st_mode))
		why = "is not a regular file";
	else if (st.st_uid != geteuid() && st.st_uid != 0)
		why = "is owned by another user";
	else if (st.st_mode & S_IWOTH)
		why = "is writable by anyone";
	else if ((uint64_t)st.st_size > JIT_FILE_MAX)
		why = "is larger than 512 MiB";
	if (why) {
		pp_warn("'%s' %s: not read for JIT names", path, why);
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (buf)
		buf[got] = '\0';
	*len = got;
	return buf;
}

static bool add_sym(struct symbolizer *s, struct jit_map *m, size_t *cap, uint64_t start,
		    uint64_t size, const char *name)
{
	if (!size || start + size < start)
		return true;
	if (m->nr == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		struct jit_sym *js = realloc(m->syms, c * sizeof(*js));

		if (!js)
			return false;
		m->syms = js;
		*cap = c;
	}
	m->syms[m->nr].start = start;
	m->syms[m->nr].end = start + size;
	m->syms[m->nr].name = strtab_intern_text(&s->strings, name);
	if (m->syms[m->nr].name)
		m->nr++;
	return true;
}

static void parse_perf_map(struct symbolizer *s, struct jit_map *m, size_t *cap, char *buf)
{
	for (char *line = buf, *next; line && *line; line = next) {
		uint64_t start, size;
		int pos;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &pos) != 2)
			continue;
		if (!add_sym(s, m, cap, start, size, line + pos))
			break;
	}
}

/* Does the perf map text @buf have an entry covering @addr? */
static bool map_covers(const char *buf, uint64_t addr)
{
	for (const char *line = buf; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		uint64_t start, size;

		if (sscanf(line, "%" SCNx64 " %" SCNx64, &start, &size) == 2 && addr >= start &&
		    addr - start < size)
			return true;
	}
	return false;
}

#define MAP_SCAN_MAX 64   /* perf maps looked at when the pid they are named by is unknown */

/*
 * A JIT in a pid namespace of its own whose pid there is unknown (it ended,
 * and mapped no jitdump to say): the one perf map in @dir that names
 * @addr, if exactly one does. NULL otherwise.
 */
static char *scan_perf_maps(const char *dir, uint64_t addr, size_t *len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL, path[4096];
	size_t n = 0, flen = 0, looked = 0;

	if (!d)
		return NULL;
	while ((e = readdir(d)) && looked < MAP_SCAN_MAX) {
		size_t l = strlen(e->d_name), blen = 0;
		char *buf;

		if (strncmp(e->d_name, "perf-", 5) || l < 10 || strcmp(e->d_name + l - 4, ".map"))
			continue;
		looked++;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= sizeof(path))
			continue;
		buf = read_trusted(path, &blen);
		if (buf && map_covers(buf, addr)) {
			n++;
			if (!found) {
				found = buf;
				flen = blen;
				pp_debug("'%s' names the JIT code at %#" PRIx64, path, addr);
				continue;
			}
		}
		free(buf);
	}
	closedir(d);
	if (n != 1) {
		if (n > 1)
			pp_debug("%zu perf maps in '%s' name %#" PRIx64 ": none is used", n, dir, addr);
		free(found);
		return NULL;
	}
	*len = flen;
	return found;
}

/*
 * The process's perf map: /tmp/perf-PID.map, PID as the JIT sees its own
 * (in a container: its pid namespace's), under --symfs first, then in the
 * process's root (a container's /tmp) or this machine's /tmp.
 */
static void load_perf_map(struct symbolizer *s, struct jit_map *m, size_t *cap,
			  const struct raw_frame *f)
{
	uint32_t nspid = f->proc ? sym_ns_pid(s, f->proc) : m->pid;
	char path[4096], root[64] = "";
	char *buf = NULL;
	size_t len = 0;
	bool rooted = f->proc && sym_ns_root(s, f->proc, root, sizeof(root));

	if (s->opts.symfs && nspid) {
		snprintf(path, sizeof(path), "%s/tmp/perf-%" PRIu32 ".map", s->opts.symfs, nspid);
		buf = read_trusted(path, &len);
	}
	if (!buf && !rooted && sym_ns_foreign(f->proc))
		return; /* the container's /tmp is not ours, and none of it runs */
	if (!buf && nspid) {
		snprintf(path, sizeof(path), "%s/tmp/perf-%" PRIu32 ".map", root, nspid);
		buf = read_trusted(path, &len);
	}
	if (!buf && !nspid) {
		snprintf(path, sizeof(path), "%s/tmp", root);
		buf = scan_perf_maps(path, f->ret ? f->addr - 1 : f->addr, &len);
	}
	parse_perf_map(s, m, cap, buf);
	free(buf);
}

/* jitdump (tools/perf/util/jitdump.h): a header, then records */
enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JITDUMP_MAGIC = 0x4A695444 };

static uint32_t rd32(const unsigned char *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const unsigned char *p, bool swap)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return swap ? __builtin_bswap64(v) : v;
}

static void load_jitdump(struct symbolizer *s, struct jit_map *m, size_t *cap,
			 const struct dso *dump)
{
	const char *path = dump->path, *used = path;
	char full[4096], root[64];
	size_t len = 0, off;
	unsigned char *buf = NULL;
	bool swap;
	uint32_t hsize;

	if (s->opts.symfs) {
		snprintf(full, sizeof(full), "%s%s", s->opts.symfs, path);
		buf = (unsigned char *)read_trusted(full, &len);
		used = full;
	}
	if (!buf && dump->mapper && sym_ns_root(s, dump->mapper, root, sizeof(root))) {
		snprintf(full, sizeof(full), "%s%s", root, path); /* a container's */
		buf = (unsigned char *)read_trusted(full, &len);
		used = full;
	} else if (!buf && !sym_ns_foreign(dump->mapper)) {
		buf = (unsigned char *)read_trusted(path, &len);
		used = path;
	}
	if (!buf || len < 40)
		goto out;
	swap = rd32(buf, false) != JITDUMP_MAGIC;
	if (rd32(buf, swap) != JITDUMP_MAGIC)
		goto out;
	hsize = rd32(buf + 8, swap);
	for (off = hsize < 40 ? 40 : hsize; off + 16 <= len;) {
		uint32_t id = rd32(buf + off, swap), size = rd32(buf + off + 4, swap);
		const unsigned char *r = buf + off + 16;   /* after id, size, timestamp */

		if (size < 16 || size > len - off)
			break;
		if (id == JIT_CODE_LOAD && size >= 16 + 40 + 1) {
			/* pid, tid, vma, code_addr, code_size, code_index, name */
			const char *name = (const char *)r + 40;
			size_t max = size - 16 - 40;

			if (memchr(name, '\0', max) &&
			    !add_sym(s, m, cap, rd64(r + 16, swap), rd64(r + 24, swap), name))
				break;
		} else if (id == JIT_CODE_MOVE && size >= 16 + 48) {
			/* pid, tid, vma, old_code_addr, new_code_addr, code_size,
			 * code_index: the new place has the old one's name */
			uint64_t old = rd64(r + 16, swap), new_addr = rd64(r + 24, swap);
			const char *name = NULL;

			for (size_t i = 0; i < m->nr && !name; i++)
				if (m->syms[i].start == old)
					name = m->syms[i].name;
			if (name && !add_sym(s, m, cap, new_addr, rd64(r + 32, swap), name))
				break;
		}
		off += size;
	}
	pp_debug("'%s': %zu JIT code records", used, m->nr);
out:
	free(buf);
}

/* Entries whose ranges overlap another's name nothing: which was running
 * when is unknown. Sorted by start first. */
static void drop_ambiguous(struct jit_map *m)
{
	uint64_t reach = 0;
	size_t owner = SIZE_MAX;

	for (size_t i = 0; i < m->nr; i++) {
		if (owner != SIZE_MAX && m->syms[i].start < reach) {
			if (m->syms[i].start != m->syms[owner].start || m->syms[i].end != m->syms[owner].end ||
			    m->syms[i].name != m->syms[owner].name) {
				m->syms[i].name = NULL;
				m->syms[owner].name = NULL;
			}
		}
		if (m->syms[i].end > reach) {
			reach = m->syms[i].end;
			owner = i;
		}
	}
}

static struct jit_map *load(struct symbolizer *s, const struct raw_frame *f)
{
	uint32_t pid = f->pid;
	const struct dso *jitdump = f->jitdump;
	struct jit_map *m;
	size_t cap = 0;

	/* the table grows by doubling; pid -> index + 1 by open addressing */
	if (s->nr_jits == s->cap_jits) {
		size_t c = s->cap_jits ? s->cap_jits * 2 : 16;
		struct jit_map *n = realloc(s->jits, c * sizeof(*n));

		if (!n)
			return NULL;
		s->jits = n;
		s->cap_jits = c;
	}
	if ((s->nr_jits + 1) * 2 > s->jit_slots_cap) {
		size_t c = s->jit_slots_cap ? s->jit_slots_cap * 2 : 64;
		uint32_t *slots = calloc(c, sizeof(*slots));

		if (!slots)
			return NULL;
		for (size_t i = 0; i < s->nr_jits; i++) {
			size_t j = (s->jits[i].pid * 0x9e3779b1u) & (c - 1);

			while (slots[j])
				j = (j + 1) & (c - 1);
			slots[j] = (uint32_t)i + 1;
		}
		free(s->jit_slots);
		s->jit_slots = slots;
		s->jit_slots_cap = c;
	}
	m = &s->jits[s->nr_jits];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	load_perf_map(s, m, &cap, f);
	if (!m->nr && jitdump) {
		load_jitdump(s, m, &cap, jitdump);
		m->dump_read = true;
	}
	if (m->nr) {
		qsort(m->syms, m->nr, sizeof(*m->syms), cmp_jit);
		drop_ambiguous(m);
	}
	{
		size_t j = (pid * 0x9e3779b1u) & (s->jit_slots_cap - 1);

		while (s->jit_slots[j])
			j = (j + 1) & (s->jit_slots_cap - 1);
		s->jit_slots[j] = (uint32_t)++s->nr_jits;
	}
	pp_debug("%zu JIT symbols for pid %" PRIu32, m->nr, pid);
	return m;
}

static void reload_jitdump(struct symbolizer *s, struct jit_map *m, const struct dso *jitdump)
{
	size_t cap = 0;

	m->dump_read = true;
	free(m->syms);
	m->syms = NULL;
	m->nr = 0;
	load_jitdump(s, m, &cap, jitdump);
	if (m->nr) {
		qsort(m->syms, m->nr, sizeof(*m->syms), cmp_jit);
		drop_ambiguous(m);
	}
}

static struct jit_map *find(struct symbolizer *s, uint32_t pid)
{
	if (!s->jit_slots_cap)
		return NULL;
	for (size_t j = (pid * 0x9e3779b1u) & (s->jit_slots_cap - 1); s->jit_slots[j];
	     j = (j + 1) & (s->jit_slots_cap - 1))
		if (s->jits[s->jit_slots[j] - 1].pid == pid)
			return &s->jits[s->jit_slots[j] - 1];
	return NULL;
}

bool jit_lookup(struct symbolizer *s, const struct raw_frame *f, struct sym_frame *out)
{
	uint64_t addr = f->ret ? f->addr - 1 : f->addr;
	struct jit_map *m = find(s, f->pid);
	size_t lo;

	if (!m)
		m = load(s, f);
	else if (f->jitdump && !m->dump_read && !m->nr)
		reload_jitdump(s, m, f->jitdump);    /* mapped after the first lookup */
	if (!m || !m->nr)
		return false;
	lo = sym_count_at_or_below(m->syms, m->nr, sizeof(*m->syms), addr);
	if (lo == 0 || addr >= m->syms[lo - 1].end || !m->syms[lo - 1].name)
		return false;
	out->function = m->syms[lo - 1].name;
	out->sym_offset = f->addr - m->syms[lo - 1].start;
	out->flags |= FRAME_F_JIT;
	if (!out->module)
		out->module = "[jit]";
	out->cause = SYM_NAMED;
	return true;
}

void jit_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nr_jits; i++)
		free(s->jits[i].syms);
	free(s->jits);
	free(s->jit_slots);
	s->jits = NULL;
	s->jit_slots = NULL;
	s->nr_jits = s->cap_jits = s->jit_slots_cap = 0;
}
