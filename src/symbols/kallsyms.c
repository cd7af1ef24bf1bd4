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
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <string.h>

#include "../util/log.h"
#include "priv.h"

#define KCACHE 16384 /* kernel look-up cache slots */

/* By address; at one address the best alias first (kallsyms has no sizes). */
static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return sym_alias_order(false, x->bind, x->name, false, y->bind, y->name);
}

/* Sort, then keep the best symbol of each address. */
static void ksyms_sort(struct symbolizer *s)
{
	size_t k = 0;

	qsort(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), cmp_ksym);
	for (size_t i = 0; i < s->nr_ksyms; i++)
		if (!k || s->ksyms[k - 1].addr != s->ksyms[i].addr)
			s->ksyms[k++] = s->ksyms[i];
	s->nr_ksyms = k;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * Parse "ADDR TYPE NAME[\t[module]]" lines; keep text symbols. The names
 * are copied once into one block (a kallsyms has ~10^5 lines).
 */
int kallsyms_parse(struct symbolizer *s, const char *text, size_t len, uint64_t *text_addr)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, used = 0;
	bool nonzero = false;
	char *names = malloc(len + 1);

	*text_addr = 0;
	if (!names)
		return -1;
	while (p < end) {
		const char *le = memchr(p, '\n', (size_t)(end - p)), *q = p, *name;
		uint64_t addr = 0;
		size_t nl;
		int digits = 0, v;
		char type;

		if (!le)
			le = end;
		while (q < le && (v = hexval((unsigned char)*q)) >= 0 && digits < 16) {
			addr = addr << 4 | (uint64_t)v;
			q++;
			digits++;
		}
		if (!digits || q + 3 > le || q[0] != ' ' || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		nl = strcspn(name, " \t\n");
		if (name + nl > le)
			nl = (size_t)(le - name);
		if (!nl)
			goto next;
		if (nl == 5 && memcmp(name, "_text", 5) == 0)
			*text_addr = addr;
		if (strchr("tTwW", type)) {
			if (s->nr_ksyms == cap) {
				struct ksym *k;

				cap = cap ? cap * 2 : 65536;
				k = realloc(s->ksyms, cap * sizeof(*k));
				if (!k) {
					free(names);
					return -1;
				}
				s->ksyms = k;
			}
			memcpy(names + used, name, nl);
			names[used + nl] = 0;
			s->ksyms[s->nr_ksyms].addr = addr;
			s->ksyms[s->nr_ksyms].name = names + used;
			s->ksyms[s->nr_ksyms].bind = type == 'w' || type == 'W' ? STB_WEAK
						     : type == 'T' ? STB_GLOBAL : STB_LOCAL;
			used += nl + 1;
			s->nr_ksyms++;
			nonzero = nonzero || addr;
		}
next:
		p = le + 1;
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
	ksyms_sort(s);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 20, n = 0;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		size_t r = fread(buf + n, 1, cap - n, f);

		n += r;
		if (r == 0)
			break;
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
	fclose(f);
	*len = n;
	return buf;
}

/* The build id in /sys/kernel/notes (ELF notes: namesz, descsz, type). */
static int running_kernel_build_id(uint8_t *id)
{
	size_t len, pos = 0;
	char *buf = slurp("/sys/kernel/notes", &len);
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
	free(buf);
	return n;
}

static const struct perf_build_id *recorded_kernel_id(const struct symbolizer *s)
{
	for (size_t i = 0; i < s->hdr->nr_build_ids; i++)
		if (strcmp(s->hdr->build_ids[i].filename, "[kernel.kallsyms]") == 0)
			return &s->hdr->build_ids[i];
	return NULL;
}

/* Move every symbol by the difference between the recorded and the file's _text. */
static void place(struct symbolizer *s, uint64_t kernel_text, uint64_t text_addr)
{
	if (kernel_text && text_addr && kernel_text != text_addr) {
		uint64_t delta = kernel_text - text_addr;

		for (size_t i = 0; i < s->nr_ksyms; i++)
			s->ksyms[i].addr += delta; /* same order: a constant shift */
	}
}

static bool try_file(struct symbolizer *s, const char *path, uint64_t kernel_text,
		     const char *what)
{
	uint64_t text_addr;
	size_t len;
	char *buf = slurp(path, &len);
	int ret;

	if (!buf)
		return false;
	ret = kallsyms_parse(s, buf, len, &text_addr);
	free(buf);
	if (ret)
		return false;
	place(s, kernel_text, text_addr);
	s->kernel_source = strtab_intern(&s->strings, what);
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
	char *buf;
	int ret;

	if (!kernel_text || !s->hdr || !s->hdr->osrelease || uname(&u) != 0 ||
	    strcmp(u.release, s->hdr->osrelease) != 0)
		return false;
	buf = slurp("/proc/kallsyms", &len);
	if (!buf)
		return false;
	ret = kallsyms_parse(s, buf, len, &text_addr);
	free(buf);
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
	s->kernel_source = strtab_intern(&s->strings, "/proc/kallsyms (same release and boot, "
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
	size_t cap = 0;
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
			s->ksyms[s->nr_ksyms].addr = sym.st_value;
			s->ksyms[s->nr_ksyms].bind = (uint8_t)GELF_ST_BIND(sym.st_info);
			s->ksyms[s->nr_ksyms].name = strtab_intern(&s->strings, name);
			if (s->ksyms[s->nr_ksyms].name)
				s->nr_ksyms++;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	if (!s->nr_ksyms) {
		pp_warn("'%s' has no function symbols", path);
		return false;
	}
	ksyms_sort(s);
	place(s, kernel_text, text_addr);
	s->kernel_source = strtab_intern(&s->strings, path);
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
	for (size_t i = 0; i < rec->size; i++)
		sprintf(idhex + 2 * i, "%02x", rec->id[i]);
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

		if (n == rec->size && memcmp(id, rec->id, (size_t)n) == 0 &&
		    try_file(s, "/proc/kallsyms", kernel_text, "/proc/kallsyms (same kernel)"))
			return;
	}
	snprintf(s->kernel_why, sizeof(s->kernel_why),
		 "the recorded kernel (build id %.40s) is not this machine's and perf's "
		 "build-id cache (%s) has no kallsyms for it; run 'perf archive' on the "
		 "recording host and unpack it into that cache, or pass --kallsyms or "
		 "--vmlinux of the recorded kernel", idhex, s->buildid_dir);
}

void kernel_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		    struct sym_frame *out)
{
	uint64_t addr = f->ret ? f->addr - 1 : f->addr;
	size_t lo;

	out->flags = FRAME_F_KERNEL;
	out->module = f->dso && f->dso->kind == DSO_MODULE ? f->dso->path : "[kernel.kallsyms]";
	if (!s->kernel_tried)
		load(s, kernel_text);
	if (!s->nr_ksyms) {
		out->cause = SYM_NO_KALLSYMS;
		return;
	}
	if (!s->kcache)
		s->kcache = calloc(KCACHE, sizeof(*s->kcache));
	if (s->kcache) {
		const struct kcache *kc = &s->kcache[(addr * 0x9e3779b97f4a7c15ULL) >> 50 & (KCACHE - 1)];

		if (kc->addr == addr && kc->idx) {
			lo = kc->idx;
			goto found;
		}
	}
	lo = sym_count_at_or_below(s->ksyms, s->nr_ksyms, sizeof(*s->ksyms), addr);
	if (lo == 0 || lo == s->nr_ksyms) {
		/* below the first, or past the last symbol (no end known) */
		out->cause = SYM_NO_SYMBOL;
		return;
	}
	if (s->kcache) {
		struct kcache *kc = &s->kcache[(addr * 0x9e3779b97f4a7c15ULL) >> 50 & (KCACHE - 1)];

		kc->addr = addr;
		kc->idx = (uint32_t)lo;
	}
found:
	out->function = s->ksyms[lo - 1].name;
	out->sym_offset = f->addr - s->ksyms[lo - 1].addr;
	out->cause = SYM_NAMED;
}

void kernel_free(struct symbolizer *s)
{
	free(s->kcache);
	free(s->ksym_names);
	free(s->ksyms);
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
