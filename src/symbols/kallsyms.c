/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.c - kernel frames, named only from a kallsyms of the recorded
 * kernel: --kallsyms FILE, perf's build-id cache
 * (~/.debug/[kernel.kallsyms]/<build id>/kallsyms), or this machine's
 * /proc/kallsyms when the running kernel's build id (/sys/kernel/notes)
 * equals the recorded one. Symbols are moved to the recorded base: the
 * recorded kernel map starts at the runtime _text, so a kallsyms of the same
 * kernel from another boot (another KASLR offset) still fits.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <string.h>

#include "../util/log.h"
#include "../util/cachedir.h"
#include "../util/mem.h"
#include "priv.h"

#define KCACHE 4096 /* kernel look-up cache slots */

/* By address, then in the file's order (the names are stored in it). */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Sort (when the file was not in order already: kallsyms mostly is), then
 * keep the best symbol of each address, as perf chooses among aliases
 * (clear_page and __pi_clear_page on arm64): kallsyms has no sizes, so
 * perf gives each symbol the distance to the next; at one address only
 * the last in the file has one, and a symbol with a size comes first.
 */
static void ksyms_sort(struct symbolizer *s)
{
	size_t k = 0;
	bool sorted = true;

	for (size_t i = 1; i < s->nr_ksyms && sorted; i++)
		sorted = cmp_ksym(&s->ksyms[i - 1], &s->ksyms[i]) <= 0;
	if (!sorted)
		qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), cmp_ksym);
	for (size_t i = 0, j; i < s->nr_ksyms; i = j) {
		size_t best = i;

		for (j = i + 1; j < s->nr_ksyms && s->ksyms[j].addr == s->ksyms[i].addr; j++)
			;
		for (size_t e = i + 1; e < j; e++)
			if (sym_alias_order(e == j - 1, s->ksyms[e].bind, s->ksym_names + s->ksyms[e].name,
					    best == j - 1, s->ksyms[best].bind,
					    s->ksym_names + s->ksyms[best].name) < 0)
				best = e;
		s->ksyms[k++] = s->ksyms[best];
	}
	s->nr_ksyms = k;
}

/* hex digit values, 0xff for anything else */
static const uint8_t hexdigit[256] = {
	['0'] = 0, ['1'] = 1, ['2'] = 2, ['3'] = 3, ['4'] = 4, ['5'] = 5, ['6'] = 6, ['7'] = 7,
	['8'] = 8, ['9'] = 9, ['a'] = 10, ['b'] = 11, ['c'] = 12, ['d'] = 13, ['e'] = 14,
	['f'] = 15, ['A'] = 10, ['B'] = 11, ['C'] = 12, ['D'] = 13, ['E'] = 14, ['F'] = 15,
};

static bool is_hex(unsigned char c)
{
	return hexdigit[c] || c == '0';
}

/*
 * Parse "ADDR TYPE NAME[\t[module]]" lines; keep text symbols. The names
 * are copied once into one block (a kallsyms has ~10^5 lines). One pass,
 * a byte at a time: this runs before the first kernel frame is named.
 */
int kallsyms_parse(struct symbolizer *s, const char *text, size_t len, uint64_t *text_addr)
{
	const unsigned char *p = (const unsigned char *)text, *end = p + len;
	size_t cap = 1, used = 0;
	bool nonzero = false;
	char *names;

	*text_addr = 0;
	/* a symbol a line at most: the arrays are made once, their pages
	 * faulted in together (the names fill most of theirs) */
	for (const char *q = text; (q = memchr(q, '\n', (size_t)(text + len - q))); q++)
		cap++;
	free(s->ksyms);
	s->ksyms = malloc(cap * sizeof(*s->ksyms));
	names = malloc(len + 1);
	if (!names || !s->ksyms) {
		free(names);
		free(s->ksyms);
		s->ksyms = NULL;
		return -1;
	}
	mem_populate(names, len / 2);
	mem_populate(s->ksyms, cap * sizeof(*s->ksyms) / 2);
	while (p < end) {
		const unsigned char *name, *q;
		uint64_t addr = 0;
		int digits = 0;
		unsigned char type;
		size_t nl;

		while (p < end && digits < 16 && is_hex(*p)) {
			addr = addr << 4 | hexdigit[*p++];
			digits++;
		}
		if (!digits || end - p < 3 || p[0] != ' ' || p[2] != ' ')
			goto next;
		type = p[1];
		name = q = p + 3;
		while (q < end && *q != ' ' && *q != '\t' && *q != '\n')
			q++;
		nl = (size_t)(q - name);
		p = q;
		if (!nl)
			goto next;
		if (nl == 5 && memcmp(name, "_text", 5) == 0)
			*text_addr = addr;
		if ((type == 't' || type == 'T' || type == 'w' || type == 'W') && s->nr_ksyms < cap) {
			memcpy(names + used, name, nl);
			names[used + nl] = 0;
			s->ksyms[s->nr_ksyms] = (struct ksym){ .addr = addr, .name = (uint32_t)used };
			s->ksyms[s->nr_ksyms].bind = type == 'w' || type == 'W' ? STB_WEAK
						     : type == 'T' ? STB_GLOBAL : STB_LOCAL;
			used += nl + 1;
			s->nr_ksyms++;
			nonzero = nonzero || addr;
		}
next:
		while (p < end && *p != '\n')
			p++;
		p++;
	}
	if (!nonzero) {
		/* kptr_restrict hides the addresses: unusable. */
		free(names);
		free(s->ksyms);
		s->ksyms = NULL;
		s->nr_ksyms = 0;
		return -1;
	}
	s->ksym_names = names;
	s->ksym_names_len = used;
	ksyms_sort(s);
	return 0;
}

/*
 * The text of @path: mapped when it is a regular file (no copy, and the
 * page cache's pages mapped many at a time), else read whole (/proc files
 * have no size). Release with text_release().
 */
static char *text_get(const char *path, size_t *len, bool *mapped)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	size_t cap = 1 << 20, n = 0;
	char *buf;

	*mapped = false;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);

		if (m != MAP_FAILED) {
			close(fd);
			*mapped = true;
			*len = (size_t)st.st_size;
			return m;
		}
	}
	buf = malloc(cap);
	while (buf) {
		ssize_t r = read(fd, buf + n, cap - n);

		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = b;
			cap *= 2;
		}
	}
	close(fd);
	*len = n;
	return buf;
}

static void text_release(char *text, size_t len, bool mapped)
{
	if (mapped)
		munmap(text, len);
	else
		free(text);
}

/* The build id in /sys/kernel/notes (ELF notes: namesz, descsz, type). */
static int running_kernel_build_id(uint8_t *id)
{
	size_t len = 0, pos = 0;
	bool mapped = false;
	char *buf = text_get("/sys/kernel/notes", &len, &mapped);
	int n = 0;

	while (buf && pos + 12 <= len) {
		uint32_t namesz, descsz, type;

		memcpy(&namesz, buf + pos, 4);
		memcpy(&descsz, buf + pos + 4, 4);
		memcpy(&type, buf + pos + 8, 4);
		pos += 12;
		if (namesz > len || descsz > len)
			break;
		{
			size_t name_end = pos + ((namesz + 3) & ~3u);
			size_t desc_end = name_end + ((descsz + 3) & ~3u);

			if (desc_end > len)
				break;
			if (type == 3 && namesz == 4 && memcmp(buf + pos, "GNU", 4) == 0 &&
			    descsz <= PERF_MAX_BUILD_ID) {
				memcpy(id, buf + name_end, descsz);
				n = (int)descsz;
				break;
			}
			pos = desc_end;
		}
	}
	if (buf)
		text_release(buf, len, mapped);
	return n;
}

static const struct perf_build_id *recorded_kernel_id(const struct symbolizer *s)
{
	for (size_t i = 0; i < s->hdr->nr_build_ids; i++)
		if (strcmp(s->hdr->build_ids[i].filename, "[kernel.kallsyms]") == 0)
			return &s->hdr->build_ids[i];
	return NULL;
}

/* The difference between the recorded and the file's _text: looked-up
 * addresses are moved by it (the symbols stay as the file has them). */
static void place(struct symbolizer *s, uint64_t kernel_text, uint64_t text_addr)
{
	s->ksym_delta = kernel_text && text_addr ? kernel_text - text_addr : 0;
}

/* --- perfport's cache of parsed kallsyms files ---
 *
 * A kallsyms text of ~10^5 lines takes tens of milliseconds to parse, each
 * time, for a file that never changes (perf's build-id cache keeps one per
 * kernel). Once parsed, the sorted symbols and their names are written to
 * $XDG_CACHE_HOME/perfport/kallsyms-HASH (~/.cache/perfport), keyed by the
 * source's path, device, inode, size and modification time, and later
 * mapped as they are: no parsing, no copy. A cache that does not match or
 * does not hold together is ignored (and rewritten).
 */

#define KSYM_CACHE_MAGIC "PPKSYM02"

struct ksym_cache_hdr {
	char magic[8];
	uint64_t dev, ino, size, mtime_ns;   /* the kallsyms it was made from */
	uint64_t text_addr;
	uint64_t nr, names_len;
	uint64_t path_len;                   /* the source's path follows, padded to 8 */
};

_Static_assert(sizeof(struct ksym) == 16, "struct ksym is the cache's record");

static bool ksym_cache_path(const char *src, char *out, size_t size, bool make)
{
	uint64_t h = 1469598103934665603ull;
	char dir[4096];

	if (!cache_dir(dir, sizeof(dir), NULL, make))
		return false;
	for (const unsigned char *c = (const unsigned char *)src; *c; c++)
		h = (h ^ *c) * 1099511628211ull;
	return snprintf(out, size, "%s/kallsyms-%016" PRIx64, dir, h) < (int)size;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull + (uint64_t)st->st_mtim.tv_nsec;
}

/* The symbols of @src from the cache. Return: true when used. */
static bool ksym_cache_load(struct symbolizer *s, const char *src, const struct stat *st,
			    uint64_t *text_addr)
{
	char path[4096 + 64];
	const struct ksym_cache_hdr *h;
	size_t plen = strlen(src), off;
	struct stat cs;
	uint8_t *m;
	int fd;

	if (!ksym_cache_path(src, path, sizeof(path), false))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	if (fstat(fd, &cs) || !S_ISREG(cs.st_mode) || cs.st_uid != geteuid() ||
	    (size_t)cs.st_size < sizeof(*h)) {
		close(fd);
		return false;
	}
	m = mmap(NULL, (size_t)cs.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return false;
	h = (const struct ksym_cache_hdr *)m;
	off = sizeof(*h) + ((plen + 7) & ~(size_t)7);
	if (memcmp(h->magic, KSYM_CACHE_MAGIC, 8) != 0 || h->dev != (uint64_t)st->st_dev ||
	    h->ino != (uint64_t)st->st_ino || h->size != (uint64_t)st->st_size ||
	    h->mtime_ns != mtime_ns(st) || h->path_len != plen || !h->nr || !h->names_len ||
	    h->nr > UINT32_MAX || h->names_len > UINT32_MAX ||
	    off + h->nr * sizeof(struct ksym) + h->names_len != (uint64_t)cs.st_size ||
	    memcmp(m + sizeof(*h), src, plen) != 0 || m[cs.st_size - 1] != 0) {
		munmap(m, (size_t)cs.st_size);
		return false;
	}
	s->ksym_map = m;
	s->ksym_map_len = (size_t)cs.st_size;
	s->ksyms = (struct ksym *)(m + off);
	s->nr_ksyms = h->nr;
	s->ksym_names = (char *)(m + off + h->nr * sizeof(struct ksym));
	s->ksym_names_len = h->names_len;
	*text_addr = h->text_addr;
	return true;
}

/* Keep the parsed symbols of @src for the next run; failing is harmless. */
static void ksym_cache_save(const struct symbolizer *s, const char *src, const struct stat *st,
			    uint64_t text_addr)
{
	struct ksym_cache_hdr h = { .dev = (uint64_t)st->st_dev, .ino = (uint64_t)st->st_ino,
				    .size = (uint64_t)st->st_size, .mtime_ns = mtime_ns(st),
				    .text_addr = text_addr, .nr = s->nr_ksyms,
				    .names_len = s->ksym_names_len, .path_len = strlen(src) };
	char path[4096 + 64], tmp[4096 + 96];
	static const char zero[8];
	int fd;
	bool ok;

	if (!s->nr_ksyms || !s->ksym_names_len || !ksym_cache_path(src, path, sizeof(path), true))
		return;
	memcpy(h.magic, KSYM_CACHE_MAGIC, 8);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	ok = cache_write(fd, &h, sizeof(h)) && cache_write(fd, src, h.path_len) &&
	     cache_write(fd, zero, (8 - h.path_len % 8) % 8) &&
	     cache_write(fd, s->ksyms, s->nr_ksyms * sizeof(*s->ksyms)) &&
	     cache_write(fd, s->ksym_names, s->ksym_names_len);
	if (close(fd) || !ok || rename(tmp, path)) {
		unlink(tmp);
		pp_debug("cannot keep the parsed kernel symbols in '%s'", path);
	}
}

static bool try_file(struct symbolizer *s, const char *path, uint64_t kernel_text,
		     const char *what)
{
	uint64_t text_addr;
	size_t len;
	bool mapped, regular;
	struct stat st;
	char *buf;
	int ret;

	/* a regular file with a size can be cached (not /proc/kallsyms) */
	regular = stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
	if (regular && ksym_cache_load(s, path, &st, &text_addr)) {
		place(s, kernel_text, text_addr);
		s->kernel_source = strtab_intern_text(&s->strings, what);
		pp_info("kernel symbols from %s (parsed before, from perfport's cache)", what);
		return true;
	}
	buf = text_get(path, &len, &mapped);
	if (!buf)
		return false;
	ret = kallsyms_parse(s, buf, len, &text_addr);
	text_release(buf, len, mapped);
	if (ret)
		return false;
	if (regular)
		ksym_cache_save(s, path, &st, text_addr);
	place(s, kernel_text, text_addr);
	s->kernel_source = strtab_intern_text(&s->strings, what);
	pp_info("kernel symbols from %s", what);
	return true;
}

/*
 * A recording without a kernel build id made on this very boot: the same
 * release (uname -r) and the recorded kernel's _text where /proc/kallsyms
 * has it (KASLR places it anew at each boot). Return: true when loaded.
 */
static bool same_boot(struct symbolizer *s, uint64_t kernel_text)
{
	struct utsname u;
	uint64_t text_addr;
	size_t len;
	bool mapped;
	char *buf;
	int ret;

	if (!kernel_text || !s->hdr || !s->hdr->osrelease || uname(&u) != 0 ||
	    strcmp(u.release, s->hdr->osrelease) != 0)
		return false;
	buf = text_get("/proc/kallsyms", &len, &mapped);
	if (!buf)
		return false;
	ret = kallsyms_parse(s, buf, len, &text_addr);
	text_release(buf, len, mapped);
	if (ret || text_addr != kernel_text) {
		if (!ret)
			snprintf(s->kernel_why, sizeof(s->kernel_why),
				 "the recording has no kernel build id (recorded to a "
				 "pipe, or with --no-buildid); this machine runs the same release (%s) but "
				 "not the same boot (the kernel is at another address); pass "
				 "--kallsyms with a copy of /proc/kallsyms from the recording's "
				 "boot, or record without --no-buildid", u.release);
		kernel_free(s);
		return false;
	}
	s->kernel_source = strtab_intern_text(&s->strings, "/proc/kallsyms (same release and boot, "
				       "no build id recorded)");
	pp_info("kernel symbols from %s", s->kernel_source);
	return true;
}

/*
 * Function symbols of a vmlinux (its .symtab), if its build id is the
 * recorded kernel's (or the recording did not say).
 */
static bool try_vmlinux(struct symbolizer *s, const char *path, uint64_t kernel_text,
			const struct perf_build_id *rec)
{
	uint8_t id[PERF_MAX_BUILD_ID];
	int n = sym_file_build_id(path, id, sizeof(id));
	uint64_t text_addr = 0;
	size_t cap = 0, names_used = 0, names_cap = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	if (n < 0) {
		pp_warn("cannot read '%s' as a vmlinux", path);
		return false;
	}
	if (rec && (n != rec->size || memcmp(id, rec->id, (size_t)n) != 0)) {
		pp_warn("'%s' is not the recorded kernel (its build id differs): kernel frames "
			"stay unnamed", path);
		return false;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			const char *name;
			GElf_Sym sym;

			if (!gelf_getsym(data, (int)i, &sym) || !sym.st_value ||
			    sym.st_shndx == SHN_UNDEF ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || !*name)
				continue;
			if (strcmp(name, "_text") == 0)
				text_addr = sym.st_value;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC)
				continue;
			if (s->nr_ksyms == cap) {
				struct ksym *k;

				cap = cap ? cap * 2 : 65536;
				k = realloc(s->ksyms, cap * sizeof(*k));
				if (!k)
					break;
				s->ksyms = k;
			}
			{
				size_t nl = strlen(name) + 1;

				if (names_used + nl > names_cap) {
					size_t nc = names_cap ? names_cap * 2 : 1 << 20;
					char *nn;

					while (nc < names_used + nl)
						nc *= 2;
					nn = realloc(s->ksym_names, nc);
					if (!nn)
						break;
					s->ksym_names = nn;
					names_cap = nc;
				}
				memcpy(s->ksym_names + names_used, name, nl);
				s->ksyms[s->nr_ksyms] = (struct ksym){ .addr = sym.st_value,
								       .name = (uint32_t)names_used };
				s->ksyms[s->nr_ksyms].bind = (uint8_t)GELF_ST_BIND(sym.st_info);
				names_used += nl;
				s->nr_ksyms++;
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!s->nr_ksyms) {
		pp_warn("'%s' has no function symbols", path);
		return false;
	}
	s->ksym_names_len = names_used;
	ksyms_sort(s);
	place(s, kernel_text, text_addr);
	s->kernel_source = strtab_intern_text(&s->strings, path);
	pp_info("kernel symbols from %s", path);
	return true;
}

static void load(struct symbolizer *s, uint64_t kernel_text)
{
	const struct perf_build_id *rec = recorded_kernel_id(s);
	char path[4096 + 128], idhex[2 * PERF_MAX_BUILD_ID + 1];

	s->kernel_tried = true;
	if (s->opts.vmlinux) {
		try_vmlinux(s, s->opts.vmlinux, kernel_text, rec);
		return; /* asked for this image: nothing else is used */
	}
	if (s->opts.kallsyms) {
		if (try_file(s, s->opts.kallsyms, kernel_text, s->opts.kallsyms))
			return;
		pp_warn("cannot use '%s' as kallsyms: unreadable or without addresses",
			s->opts.kallsyms);
	}
	if (!rec) {
		/* no build id: this machine's kallsyms if it is the same boot */
		if (s->opts.use_proc_kallsyms && same_boot(s, kernel_text))
			return;
		if (!s->kernel_why[0])
			snprintf(s->kernel_why, sizeof(s->kernel_why),
				 "the recording has no kernel build id (recorded to a "
				 "pipe, or with --no-buildid) and this machine does not run the recorded "
				 "kernel; pass --kallsyms with a copy of the recording host's "
				 "/proc/kallsyms, or record without --no-buildid");
		return;
	}
	sym_hex(rec->id, rec->size, idhex);
	if (s->opts.archive_dir) {
		snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", s->opts.archive_dir,
			 idhex);
		if (try_file(s, path, kernel_text, "the perf archive"))
			return;
	}
	snprintf(path, sizeof(path), "%s/[kernel.kallsyms]/%s/kallsyms", s->buildid_dir, idhex);
	if (try_file(s, path, kernel_text, path))
		return;
	if (s->opts.use_proc_kallsyms) {
		uint8_t id[PERF_MAX_BUILD_ID];
		int n = running_kernel_build_id(id);

		if (n == rec->size && memcmp(id, rec->id, (size_t)n) == 0) {
			if (try_file(s, "/proc/kallsyms", kernel_text, "/proc/kallsyms (same kernel)"))
				return;
			/* this machine's kernel, its addresses hidden from this user */
			snprintf(s->kernel_why, sizeof(s->kernel_why),
				 "the recorded kernel is this machine's, but /proc/kallsyms "
				 "shows this user no addresses (kernel.kptr_restrict): run as "
				 "root, or pass --kallsyms with a copy read as root (sudo cat "
				 "/proc/kallsyms > FILE)");
			return;
		}
	}
	snprintf(s->kernel_why, sizeof(s->kernel_why),
		 "the recorded kernel (build id %.40s) is not this machine's and perf's "
		 "build-id cache (%s) has no kallsyms for it; run 'perf archive' on the "
		 "recording host and unpack it into that cache, or pass --kallsyms or "
		 "--vmlinux of the recorded kernel", idhex, s->buildid_dir);
}

/* What the symbols are loaded for: @kernel_text and the recording's kernel. */
static void loaded_for(struct symbolizer *s, uint64_t kernel_text)
{
	const struct perf_build_id *rec = s->hdr ? recorded_kernel_id(s) : NULL;

	s->ksym_text = kernel_text;
	s->ksym_release = s->hdr && s->hdr->osrelease ?
				  strtab_intern_text(&s->strings, s->hdr->osrelease) : NULL;
	s->ksym_id_size = rec && rec->size <= PERF_MAX_BUILD_ID ? rec->size : 0;
	if (s->ksym_id_size)
		memcpy(s->ksym_id, rec->id, s->ksym_id_size);
}

/* Are the symbols kept from the recording before this one's kernel: the
 * same release and build id, at the same address (the same boot)? */
static bool loaded_same(struct symbolizer *s, uint64_t kernel_text)
{
	const struct perf_build_id *rec = s->hdr ? recorded_kernel_id(s) : NULL;
	const char *rel = s->hdr ? s->hdr->osrelease : NULL;
	uint8_t n = rec && rec->size <= PERF_MAX_BUILD_ID ? rec->size : 0;

	return kernel_text == s->ksym_text && (!rel) == (!s->ksym_release) &&
	       (!rel || strcmp(rel, s->ksym_release) == 0) && n == s->ksym_id_size &&
	       memcmp(rec ? rec->id : s->ksym_id, s->ksym_id, n) == 0;
}

/* Symbols the kernel puts before functions as padding, not code that runs:
 * x86_64's call padding (CONFIG_FUNCTION_PADDING_BYTES), kCFI's type hashes. */
static const char *const padding_prefixes[] = { "__pfx_", "__cfi_" };

static bool is_padding(const char *name)
{
	for (size_t i = 0; i < sizeof(padding_prefixes) / sizeof(*padding_prefixes); i++)
		if (!strncmp(name, padding_prefixes[i], strlen(padding_prefixes[i])))
			return true;
	return false;
}

void kernel_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		    struct sym_frame *out)
{
	uint64_t addr = f->ret ? f->addr - 1 : f->addr;
	size_t lo;

	out->flags = FRAME_F_KERNEL;
	out->module = f->dso && f->dso->kind == DSO_MODULE ? f->dso->path : "[kernel.kallsyms]";
	if (s->kernel_recheck) {
		/* kept by sym_rebind(): this recording's kernel, or loaded anew */
		s->kernel_recheck = false;
		if (!loaded_same(s, kernel_text)) {
			kernel_free(s);
			s->kernel_tried = false;
			s->kernel_source = NULL;
			s->kernel_why[0] = '\0';
		}
	}
	if (!s->kernel_tried) {
		load(s, kernel_text);
		loaded_for(s, kernel_text);
	}
	if (!s->nr_ksyms) {
		out->cause = SYM_NO_KALLSYMS;
		return;
	}
	if (!s->kcache)
		s->kcache = calloc(KCACHE, sizeof(*s->kcache));
	if (s->kcache) {
		const struct kcache *kc = &s->kcache[(addr * 0x9e3779b97f4a7c15ULL) >> 50 & (KCACHE - 1)];

		if (kc->addr == addr && kc->ret == f->ret && kc->idx) {
			lo = kc->idx;
			goto found;
		}
	}
	lo = sym_count_at_or_below(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), addr - s->ksym_delta);
	/* a "return address" at a function's first byte is where an interrupt
	 * or exception stopped it (the frame below an entry frame: x86_64's
	 * asm_sysvec_*, arm64's el1h_64_irq): looked up at itself, as perf
	 * does, not one byte early in the function before. But at padding
	 * before a function (x86_64's __pfx_) a call that does not return
	 * ended the function before (start_kernel's caller, the bottom of
	 * the idle tasks' stacks): a return address. */
	if (f->ret && lo < s->nr_ksyms && s->ksyms[lo].addr == f->addr - s->ksym_delta &&
	    s->ksyms[lo].name < s->ksym_names_len && !is_padding(s->ksym_names + s->ksyms[lo].name))
		while (lo < s->nr_ksyms && s->ksyms[lo].addr == f->addr - s->ksym_delta)
			lo++;
	if (lo == 0 || lo == s->nr_ksyms) {
		/* below the first, or past the last symbol (no end known) */
		out->cause = SYM_NO_SYMBOL;
		return;
	}
	if (s->kcache) {
		struct kcache *kc = &s->kcache[(addr * 0x9e3779b97f4a7c15ULL) >> 50 & (KCACHE - 1)];

		kc->addr = addr;
		kc->ret = f->ret;
		kc->idx = (uint32_t)lo;
	}
found:
	if (s->ksyms[lo - 1].name >= s->ksym_names_len) {
		out->cause = SYM_NO_SYMBOL; /* a damaged cache: never read past the names */
		return;
	}
	out->function = s->ksym_names + s->ksyms[lo - 1].name;
	out->sym_offset = f->addr - s->ksym_delta - s->ksyms[lo - 1].addr;
	out->cause = SYM_NAMED;
}

void kernel_free(struct symbolizer *s)
{
	free(s->kcache);
	s->kcache = NULL;
	if (s->ksym_map) {
		munmap(s->ksym_map, s->ksym_map_len);
	} else {
		free(s->ksym_names);
		free(s->ksyms);
	}
	s->ksym_map = NULL;
	s->ksym_names = NULL;
	s->ksym_names_len = 0;
	s->ksyms = NULL;
	s->nr_ksyms = 0;
}

const char *sym_kernel_why(const struct symbolizer *s)
{
	return s->nr_ksyms ? "" : s->kernel_why;
}

const char *sym_kernel_source(const struct symbolizer *s)
{
	return s->kernel_source ? s->kernel_source : "none";
}
