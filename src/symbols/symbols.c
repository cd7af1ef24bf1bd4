/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - naming frames.
 *
 * User code: each dso's file is found once (by build id where the recording
 * gives one: --symfs, perf's build-id cache, the recorded path) and reported
 * to its own Dwfl at bias 0; a frame's file offset is turned into a virtual
 * address through the file's PT_LOAD headers (so map base = start - pgoff
 * holds for PIE, shared objects and fixed-address executables alike) and
 * looked up with dwfl_module_addrinfo / dwfl_module_getsrc. libdwfl's
 * standard debuginfo search adds .gnu_debuglink, /usr/lib/debug/.build-id
 * and debuginfod (when DEBUGINFOD_URLS is set; when it is not, the search
 * runs only if a file it could find exists). Return addresses are looked
 * up at pc - 1. Results are cached per (dso, offset).
 */
#include "symbols.h"

#include <elfutils/libdwelf.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "../util/error.h"
#include "../util/hash.h"
#include "../util/log.h"
#include "../util/radix.h"
#include "filebus.h"
#include "priv.h"
#include "roots.h"

static const char *const cause_names[SYM_CAUSE_COUNT] = {
	[SYM_NAMED] = "named",
	[SYM_NO_MAP] = "no map",
	[SYM_NO_FILE] = "file not found",
	[SYM_BUILD_ID] = "build-id mismatch",
	[SYM_NO_SYMBOL] = "no symbol",
	[SYM_NO_KALLSYMS] = "no matching kallsyms",
	[SYM_NOT_NAMEABLE] = "guest/hypervisor/special",
	[SYM_JIT_NO_MAP] = "JIT code without a perf map",
	[SYM_NOT_SAME] = "not the recorded file",
};

const char *sym_cause_name(enum sym_cause cause)
{
	return cause < SYM_CAUSE_COUNT ? cause_names[cause] : "?";
}

/* --- files --- */

static char *debuginfo_path;

/* libdwfl's search path when Dwfl_Callbacks.debuginfo_path is unset */
#define DEBUGINFO_PATH_DEFAULT ":.debug:/usr/lib/debug"

/* Is there a regular file at dir/sub/name, other than the main file @main_file? */
static bool regular_at(const struct stat *main_file, const char *dir, const char *sub,
		       const char *name)
{
	char path[4096];
	struct stat st;
	int n = snprintf(path, sizeof(path), "%s%s%s%s%s", dir, *dir ? "/" : "", sub,
			 *sub ? "/" : "", name);

	/* a name too long to try: say yes, libdwfl will see */
	if (n < 0 || (size_t)n >= sizeof(path))
		return true;
	return !stat(path, &st) && S_ISREG(st.st_mode) &&
	       !(st.st_dev == main_file->st_dev && st.st_ino == main_file->st_ino);
}

/*
 * Could libdwfl's standard search find a debug file for @file_name? A
 * superset of where it looks (libdwfl.h, Dwfl_Callbacks.debuginfo_path):
 * for every element of the path, the main file's directory (empty element),
 * a directory under it (relative), or an absolute directory followed by
 * each tail of the main file's directory, and its .dwz; the debuglink's
 * name, <file>.debug and <file>; and <dir>/.build-id/xx/rest(.debug) by
 * build id. Only existence is checked: a candidate found means the real
 * search runs, with its own checks (CRC, build id).
 *
 * What it is for: libdw 0.188 ends a search that found nothing by loading
 * its debuginfod client - ~25 libraries (curl, krb5, ldap...), 10-15 ms on
 * the bench recording, where perf's own binary has no debug file - even
 * when DEBUGINFOD_URLS names no server to ask.
 */
static bool debug_file_may_exist(Dwfl_Module *mod, const char *file_name, const char *debuglink)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int idn = dwfl_module_build_id(mod, &id, &vaddr);
	char *path = strdup(debuginfo_path ? debuginfo_path : DEBUGINFO_PATH_DEFAULT);
	const char *base = strrchr(file_name, '/') ? strrchr(file_name, '/') + 1 : file_name;
	const char *names[3];
	char dir[4096], debug_name[512], hex[2 * 64 + 1];
	struct stat main_st;
	bool found = false;
	size_t nn = 0;

	/* the main file is never its own separate debug file (libdwfl skips it) */
	if (stat(file_name, &main_st))
		main_st.st_dev = main_st.st_ino = 0;
	if (!path || strlen(file_name) >= sizeof(dir) ||
	    (size_t)snprintf(debug_name, sizeof(debug_name), "%s.debug", base) >= sizeof(debug_name)) {
		free(path);
		return true;
	}
	if (debuglink) {
		if (debuglink[0] == '/' && regular_at(&main_st, "", "", debuglink))
			found = true;
		names[nn++] = strrchr(debuglink, '/') ? strrchr(debuglink, '/') + 1 : debuglink;
	}
	names[nn++] = debug_name;
	names[nn++] = base;
	/* the main file's directory: "" for a bare name, "/" at the root */
	memcpy(dir, file_name, (size_t)(base - file_name));
	dir[base - file_name > 1 ? base - file_name - 1 : base - file_name] = '\0';
	if (idn > 0 && idn <= 64)
		sym_hex(id, (size_t)idn, hex);
	else
		idn = 0;
	/* elements may be empty (the main file's directory): not strtok */
	for (char *next = path, *el; !found && (el = next);) {
		next = strchr(el, ':');
		if (next)
			*next++ = '\0';
		if (*el == '+' || *el == '-')
			el++;
		for (size_t k = 0; k < nn && !found; k++) {
			if (!*el)
				found = regular_at(&main_st, dir, "", names[k]);
			else if (*el != '/')
				found = regular_at(&main_st, dir, el, names[k]);
			else {
				/* each tail of the main file's directory, down to none */
				for (const char *t = dir; !found && t && *t == '/'; t = strchr(t + 1, '/'))
					found = regular_at(&main_st, el, t + 1, names[k]);
				found = found || regular_at(&main_st, el, "", names[k]) ||
					regular_at(&main_st, el, ".dwz", names[k]);
			}
		}
		/* dwz's shared files (.gnu_debugaltlink) are also found by their
		 * own build id, which is not the module's: any of them, search */
		if (!found && *el == '/') {
			char dwz[4096];
			struct stat st;

			snprintf(dwz, sizeof(dwz), "%s/.dwz", el);
			found = !stat(dwz, &st) && S_ISDIR(st.st_mode);
		}
		for (int dbg = 0; !found && *el == '/' && idn && dbg < 2; dbg++) {
			char sub[sizeof(hex) + 32];

			snprintf(sub, sizeof(sub), ".build-id/%.2s/%s%s", hex, hex + 2,
				 dbg ? ".debug" : "");
			found = regular_at(&main_st, el, "", sub);
		}
	}
	free(path);
	return found;
}

static bool debuginfod_configured(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return urls && *urls;
}

/*
 * The build ids debuginfod had no debug file for (or gave none in time) in
 * this run: not asked again. Every Dwfl asks for its own modules - the
 * namer's, each unwinding thread's, info's - so a server that drips bytes
 * cost the same build id its whole timeout six times. The lock also keeps
 * two threads from asking for one build id at once.
 */
#define DI_FAILED_MAX 1024
static pthread_mutex_t di_lock = PTHREAD_MUTEX_INITIALIZER;
static struct di_failed {
	uint8_t id[PERF_MAX_BUILD_ID];
	uint8_t n;
} di_failed[DI_FAILED_MAX];
static size_t nr_di_failed;

static bool di_failed_has(const unsigned char *id, int n)
{
	for (size_t i = 0; i < nr_di_failed; i++)
		if (di_failed[i].n == n && !memcmp(di_failed[i].id, id, (size_t)n))
			return true;
	return false;
}

/* libdwfl's search for a separate debug file, after perfport's cache of
 * uncompressed copies (debugcache.c). The copy must come first: once
 * libdwfl's own search finds a file by build id it keeps that file's
 * handle, whatever descriptor this returns. */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(mod, &id, &vaddr);
	int fd = n > 0 ? sym_debug_uncompressed(id, (size_t)n, debuginfo_file_name) : -1;

	if (fd >= 0)
		return fd;
	/* nothing to find and no server to ask: libdwfl would only load its
	 * debuginfod client to learn that */
	if (file_name && !debuginfod_configured() &&
	    !debug_file_may_exist(mod, file_name, debuglink_file)) {
		errno = 0;
		return -1;
	}
	if (!debuginfod_configured() || n <= 0 || n > PERF_MAX_BUILD_ID)
		return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
						    debuglink_file, debuglink_crc, debuginfo_file_name);
	/* debuginfod asked once per build id: a failure is remembered */
	pthread_mutex_lock(&di_lock);
	if (di_failed_has(id, n) && (!file_name ||
				     !debug_file_may_exist(mod, file_name, debuglink_file))) {
		pthread_mutex_unlock(&di_lock);
		errno = 0;
		return -1;
	}
	fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					  debuglink_crc, debuginfo_file_name);
	if (fd < 0 && !di_failed_has(id, n) && nr_di_failed < DI_FAILED_MAX) {
		memcpy(di_failed[nr_di_failed].id, id, (size_t)n);
		di_failed[nr_di_failed++].n = (uint8_t)n;
	}
	pthread_mutex_unlock(&di_lock);
	return fd;
}

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/*
 * The GNU build id of an ELF file, and (@symtab not NULL) whether it keeps
 * its full symbol table (.symtab: not stripped). Return: the id's length
 * (0: none or not ELF), -1 if it is missing or not a regular file.
 */
static int elf_probe(const char *path, uint8_t *id, size_t max, bool *symtab)
{
	struct stat st;
	const void *p;
	ssize_t n = 0;
	Elf *elf;
	int fd;

	if (symtab)
		*symtab = false;
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return -1; /* missing, or a device, fifo, directory: never opened */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf) {
		Elf_Scn *scn = NULL;

		n = dwelf_elf_gnu_build_id(elf, &p);
		if (n > 0) {
			if ((size_t)n > max)
				n = (ssize_t)max;
			memcpy(id, p, (size_t)n);
		} else {
			n = 0;
		}
		while (symtab && !*symtab && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			*symtab = gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB;
		}
		elf_end(elf);
	}
	close(fd);
	return (int)n;
}

/*
 * The GNU build id of an ELF file. Return: its length (0: none or not ELF).
 */
int sym_file_build_id(const char *path, uint8_t *id, size_t max)
{
	elf_version(EV_CURRENT);        /* callable before any symbolizer */
	return elf_probe(path, id, max, NULL);
}

void sym_hex(const uint8_t *id, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * n] = 0;
}

/*
 * Whether the file at @path (found in place @from) is the file @d, which
 * the recording gave no build id: the user said so (--symfs, --trust-paths);
 * or it is the recorded file itself - the recording was made on this host,
 * and where its MMAP2 gave the file's device and inode, they are this
 * file's. A file of the same path elsewhere (another distribution's libc, a
 * program built again) would name its frames wrong.
 */
static bool same_file(const struct symbolizer *s, const struct dso *d, const char *path,
		      uint8_t from)
{
	struct stat sb;

	if (from == SYM_FROM_SYMFS || s->opts.trust_paths)
		return true;
	if (s->other_host)
		return false;
	if (!d->ino)
		return true; /* no evidence against it (nor a host name to check) */
	return !stat(path, &sb) && sb.st_ino == d->ino && major(sb.st_dev) == d->maj &&
	       minor(sb.st_dev) == d->min;
}

/*
 * Try one candidate path (found in place @from); *@symtab: whether it keeps
 * its .symtab. Return: 1 usable, 0 missing, -1 exists with another build
 * id, -2 exists but is not known to be the recorded file (no build id:
 * same_file()).
 */
static int candidate(const struct symbolizer *s, const struct dso *d, const char *path,
		     uint8_t from, bool *symtab)
{
	uint8_t id[PERF_MAX_BUILD_ID];
	int n = elf_probe(path, id, sizeof(id), symtab);

	if (n < 0)
		return 0;
	if (!d->build_id_size) {
		if (same_file(s, d, path, from))
			return 1;
		pp_debug("'%s' is not known to be the recorded '%s' (no build id recorded)",
			 path, d->path);
		return -2;
	}
	if ((size_t)n != d->build_id_size || memcmp(id, d->build_id, (size_t)n) != 0) {
		pp_debug("'%s' has another build id than the recorded '%s'", path, d->path);
		return -1;
	}
	return 1;
}

/*
 * Find the file for @d: the first of the places below that holds it (its
 * build id, when recorded, matching); but a stripped one only when no later
 * place holds the same file with its symbol table - as perf, which takes
 * the full symbols of any copy with the same build id (a stripped
 * deployment whose unstripped build perf's cache kept). Return: a new path
 * (*from: where it was found), or NULL with *cause set.
 */
static char *find_file(struct symbolizer *s, const struct dso *d, uint8_t *cause,
		       uint8_t *from)
{
	char buf[8448], idhex[2 * PERF_MAX_BUILD_ID + 1];
	const char *base = strrchr(d->path, '/');
	char *stripped = NULL;         /* the first found, without .symtab */
	uint8_t stripped_from = 0;
	bool mismatch = false, unverified = false, symtab;
	int r;

#define TRY(...) do {                                                     \
		snprintf(buf, sizeof(buf), __VA_ARGS__);                  \
		r = candidate(s, d, buf, *from, &symtab);                 \
		if (r > 0 && (symtab || !d->build_id_size)) {             \
			free(stripped);                                   \
			return strdup(buf);                               \
		}                                                         \
		if (r > 0 && !stripped) {                                 \
			stripped = strdup(buf);                           \
			stripped_from = *from;                            \
		}                                                         \
		mismatch = mismatch || r == -1;                           \
		unverified = unverified || r == -2;                       \
	} while (0)

	*from = SYM_FROM_SYMFS;
	if (s->opts.no_files) {
		*cause = SYM_NO_FILE;
		return NULL;
	}
	if (s->opts.symfs) {
		TRY("%s%s%s", s->opts.symfs, d->path[0] == '/' ? "" : "/", d->path);
		if (base)
			TRY("%s/%s", s->opts.symfs, base + 1);
	}
	if (d->build_id_size) {
		/* perf's cache (an unpacked perf archive first): DIR/<path>/<id>/elf,
		 * DIR/[vdso]/<id>/vdso, and DIR/.build-id/xx/rest linking to either */
		const char *dirs[2] = { s->opts.archive_dir, s->buildid_dir };

		sym_hex(d->build_id, d->build_id_size, idhex);
		for (int k = 0; k < 2; k++) {
			const char *dir = dirs[k];

			if (!dir)
				continue;
			*from = k ? SYM_FROM_CACHE : SYM_FROM_ARCHIVE;
			TRY("%s%s%s/%s/elf", dir, d->path[0] == '/' ? "" : "/", d->path, idhex);
			TRY("%s/.build-id/%.2s/%s/elf", dir, idhex, idhex + 2);
			TRY("%s/.build-id/%.2s/%s/vdso", dir, idhex, idhex + 2);
			TRY("%s/.build-id/%.2s/%s", dir, idhex, idhex + 2);
			if (d->kind == DSO_VDSO)
				TRY("%s/[vdso]/%s/vdso", dir, idhex);
		}
	}
	if (d->mapper && d->path[0] == '/') {
		/* a container's file: through its root while one of it runs */
		char root[64];

		*from = SYM_FROM_NSROOT;
		if (sym_ns_root(s, d->mapper, root, sizeof(root)))
			TRY("%s%s", root, d->path);
	}
	/* a container's path on the host is another file, unless its build
	 * id says it is the same */
	*from = SYM_FROM_PATH;
	if (d->path[0] == '/' && (d->build_id_size || !sym_ns_foreign(d->mapper)))
		TRY("%s", d->path);
#undef TRY
	if (stripped) {
		*from = stripped_from;
		return stripped;
	}
	*cause = mismatch ? SYM_BUILD_ID : unverified ? SYM_NOT_SAME : SYM_NO_FILE;
	return NULL;
}

static const char *clean_name(struct symbolizer *s, const char *name);

static unsigned leading_underscores(const char *n)
{
	unsigned k = 0;

	while (n[k] == '_')
		k++;
	return k;
}

int sym_alias_order(bool sized_x, uint8_t bind_x, const char *x, bool sized_y, uint8_t bind_y,
		    const char *y)
{
	unsigned ux, uy;
	size_t lx, ly;

	if (sized_x != sized_y)
		return sized_x ? -1 : 1;
	if ((bind_x == STB_WEAK) != (bind_y == STB_WEAK))
		return bind_x == STB_WEAK ? 1 : -1;
	if ((bind_x == STB_GLOBAL) != (bind_y == STB_GLOBAL))
		return bind_x == STB_GLOBAL ? -1 : 1;
	ux = leading_underscores(x);
	uy = leading_underscores(y);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	lx = strlen(x);
	ly = strlen(y);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x, y);
}

int fsym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->label != y->label)
		return x->label ? 1 : -1;
	return sym_alias_order(x->size != 0, x->bind, x->name, y->size != 0, y->bind, y->name);
}

/* Insertion sort of the run @v[0..@n) by fsym_cmp(): stable, for the few
 * aliases at one address. */
static void fsym_sort_run(struct fsym *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct fsym x = v[i];
		size_t j = i;

		for (; j > 0 && fsym_cmp(&v[j - 1], &x) > 0; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/*
 * By address first with a radix sort of one word a symbol (its address
 * above, its place in the table below: equal addresses keep their order),
 * the table then put in that order in place, and each run at one address
 * sorted by fsym_cmp(). glibc's qsort() took 7-13 ms for libLLVM-14.so.1's
 * 35,860 functions and 1.1-2.0 ms for libc.so.6's 6,832, with a copy of
 * the table as its scratch (mapped and unmapped each time: on a VM every
 * page first touched is a trap). A table too big for the word, or with
 * addresses above 2^40, is left to qsort().
 */
#define FSYM_IDX_BITS 24

void fsym_sort(struct fsym *v, size_t n)
{
	uint64_t *key = NULL, *tmp = NULL, diff = 0, mask = (1ull << FSYM_IDX_BITS) - 1;
	size_t i, j;

	if (n < 2)
		return;
	for (i = 0; i < n; i++)
		diff |= v[i].addr ^ v[0].addr;
	if (n > mask || (v[0].addr | diff) >> (64 - FSYM_IDX_BITS) ||
	    !(key = malloc(n * sizeof(*key))) || !(tmp = malloc(n * sizeof(*tmp)))) {
		free(key);
		qsort(v, n, sizeof(*v), fsym_cmp);
		return;
	}
	for (i = 0; i < n; i++)
		key[i] = v[i].addr << FSYM_IDX_BITS | i;
	/* the least significant byte first; bytes no two keys differ in are
	 * skipped */
	radix_sort_words(&key, &tmp, n, FSYM_IDX_BITS, diff);
	/* in place, a cycle at a time: slot i takes the symbol at key[i]'s
	 * index; a slot filled is marked by an index of its own */
	for (i = 0; i < n; i++) {
		struct fsym hold;
		size_t at = i, from;

		if ((key[i] & mask) == i || (key[i] & mask) == mask)
			continue;
		hold = v[i];
		for (;;) {
			from = key[at] & mask;
			key[at] |= mask;
			if (from == i) {
				v[at] = hold;
				break;
			}
			v[at] = v[from];
			at = from;
		}
	}
	free(tmp);
	free(key);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && v[j].addr == v[i].addr; j++)
			;
		if (j - i > 32)
			qsort(v + i, j - i, sizeof(*v), fsym_cmp);
		else if (j - i > 1)
			fsym_sort_run(v + i, j - i);
	}
}

/*
 * An untyped symbol in code: an assembly entry point without .type, such as
 * ld.so's _start, which perf names code by. ARM's mapping symbols ($x, $d)
 * and local labels (.L) are not names.
 */
static bool is_code_label(const GElf_Sym *sym, GElf_Word shndx, Elf *elf, const char *name)
{
	Elf_Scn *scn;
	GElf_Shdr sh;

	if (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE || !elf || shndx == SHN_UNDEF ||
	    shndx >= SHN_LORESERVE || name[0] == '$' || (name[0] == '.' && name[1] == 'L'))
		return false;
	scn = elf_getscn(elf, shndx);
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* A section of @elf by name, and its header. */
static Elf_Scn *section_named(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && strcmp(name, want) == 0)
			return scn;
	}
	return NULL;
}

/*
 * The PLT's entries, named "FUNCTION@plt" after their jump-slot relocations
 * as perf names them (x86_64: a 16-byte header, then 16-byte entries, or
 * .plt.sec's entries without header when built for IBT; aarch64: a 32-byte
 * header, then 16-byte entries). Entry i is relocation i of .rela.plt; an
 * IRELATIVE slot has no name and stays unnamed. Appended to st->syms.
 */
static size_t plt_symbols(struct symbolizer *s, struct dso_state *st, size_t k)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	GElf_Shdr rsh, psh, dsh;
	Elf_Scn *rela, *plt, *dynsym;
	Elf_Data *rd, *dd;
	GElf_Ehdr eh;
	uint64_t header, entry = 16, start, room;
	uint32_t jump_slot;
	size_t nrel;
	struct fsym *n;

	if (!elf || !gelf_getehdr(elf, &eh))
		return k;
	if (eh.e_machine == EM_X86_64) {
		header = 16;
		jump_slot = R_X86_64_JUMP_SLOT;
	} else if (eh.e_machine == EM_AARCH64) {
		header = 32;
		jump_slot = R_AARCH64_JUMP_SLOT;
	} else {
		return k;
	}
	rela = section_named(elf, ".rela.plt", &rsh);
	if (!rela || rsh.sh_type != SHT_RELA || !rsh.sh_entsize)
		return k;
	plt = section_named(elf, ".plt.sec", &psh);
	if (plt && eh.e_machine == EM_X86_64)
		header = 0;
	else if (!(plt = section_named(elf, ".plt", &psh)))
		return k;
	if (psh.sh_type != SHT_PROGBITS || !(psh.sh_flags & SHF_EXECINSTR))
		return k;
	dynsym = elf_getscn(elf, rsh.sh_link);
	rd = elf_getdata(rela, NULL);
	if (!dynsym || !gelf_getshdr(dynsym, &dsh) || !(dd = elf_getdata(dynsym, NULL)) || !rd)
		return k;
	nrel = rsh.sh_size / rsh.sh_entsize;
	room = psh.sh_size > header ? (psh.sh_size - header) / entry : 0;
	if (nrel > room)
		nrel = room;
	if (!nrel)
		return k;
	n = realloc(st->syms, (k + nrel) * sizeof(*n));
	if (!n)
		return k;
	st->syms = n;
	start = psh.sh_addr + bias + header;
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		char buf[512];

		if (!gelf_getrela(rd, (int)i, &r) || GELF_R_TYPE(r.r_info) != jump_slot ||
		    !gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &sym))
			continue;
		name = elf_strptr(elf, dsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		snprintf(buf, sizeof(buf), "%s@plt", clean_name(s, name));
		st->syms[k] = (struct fsym){ .addr = start + i * entry, .size = entry,
					     .bind = STB_GLOBAL, .clean = true,
					     .name = strtab_intern_text(&s->strings, buf) };
		if (st->syms[k].name)
			k++;
	}
	return k;
}

/*
 * Note where a linked file's PLT sections are (.plt, .plt.sec, .plt.got,
 * .iplt): the linker writes their stubs itself, so no compilation unit's
 * ranges hold them, and a frame there (as common as calls into a shared
 * library) need not search the units: in glibc's libc.so.6 that search,
 * which reads every unit's ranges when .debug_aranges has none for the
 * address, cost ~4 ms a run for nothing. (A relocatable file, a kernel
 * module, has section addresses of 0 and PLTs the loader makes: none.)
 */
static void plt_sections(struct dso_state *st)
{
	static const char *const names[] = { ".plt", ".plt.sec", ".plt.got", ".iplt" };
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	GElf_Ehdr eh;
	GElf_Shdr sh;

	st->nr_plt = 0;
	if (!elf || !gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!section_named(elf, names[i], &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		st->plt[st->nr_plt].lo = sh.sh_addr + bias;
		st->plt[st->nr_plt++].hi = sh.sh_addr + bias + sh.sh_size;
	}
}

/* Is @addr (a module address) in one of @st's PLT sections? */
static bool in_plt(const struct dso_state *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nr_plt; i++)
		if (addr >= st->plt[i].lo && addr < st->plt[i].hi)
			return true;
	return false;
}

static const char *symtab_name(struct symbolizer *s, struct fsym *f);

/*
 * Every function symbol of the module (symtab, else dynsym, plus
 * MiniDebugInfo, plus the PLT's entries) and the code labels no function
 * covers, sorted, one per address. libdwfl's own address lookup scans the
 * whole table each time; this is built once. Names stay where the module
 * has them until a frame is named in their function (symtab_name()):
 * demangling and interning every symbol of a C++ program cost its first
 * frame more than the naming did, and kept every name of every file a
 * long stream saw.
 */
void sym_build_symtab(struct symbolizer *s, struct dso_state *st)
{
	int n = dwfl_module_getsymtab(st->mod);
	uint64_t covered = 0;
	size_t k = 0;

	if (n < 0)
		n = 0;
	st->syms = malloc(((size_t)n + 1) * sizeof(*st->syms));
	if (!st->syms)
		return;
	for (int i = 1; i < n; i++) {
		GElf_Addr addr;
		GElf_Word shndx;
		GElf_Sym sym;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(st->mod, i, &sym, &addr, &shndx, &elf,
							   NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		bool label;

		/* (st_value, not addr: a module whose first segment is not at 0,
		 * as perf inject's jitted-PID-N.so, has a bias that makes a
		 * function's address 0) */
		if (!name || !*name || !sym.st_value || shndx == SHN_UNDEF)
			continue;
		label = is_code_label(&sym, shndx, elf, name);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && !label)
			continue;
		st->syms[k].addr = addr;
		st->syms[k].size = label ? 0 : sym.st_size;
		st->syms[k].bind = (uint8_t)GELF_ST_BIND(sym.st_info);
		st->syms[k].label = label;
		/* made clean when a frame is named in it: most are never */
		st->syms[k].name = name;
		st->syms[k].clean = false;
		k++;
	}
	k = plt_symbols(s, st, k);
	plt_sections(st);
	fsym_sort(st->syms, k);
	/* aliases at one address are ordered by their clean names (those are
	 * the names compared since perfport's first symbol tables): they are
	 * made clean now, the few of them, and ordered again */
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i + 1; j < k && st->syms[j].addr == st->syms[i].addr; j++)
			;
		if (j - i < 2)
			continue;
		for (size_t a = i; a < j; a++)
			if (!symtab_name(s, &st->syms[a]))
				st->syms[a].name = "";
		qsort(st->syms + i, j - i, sizeof(*st->syms), fsym_cmp);
	}
	/* keep the best of each address, and a label only outside functions */
	st->nr_syms = 0;
	for (size_t i = 0; i < k; i++) {
		const struct fsym *f = &st->syms[i];

		if (st->nr_syms && st->syms[st->nr_syms - 1].addr == f->addr)
			continue;
		if (f->label && f->addr < covered)
			continue;
		if (f->size && f->addr + f->size > covered)
			covered = f->addr + f->size;
		st->syms[st->nr_syms++] = *f;
	}
}

/* The function containing @addr: the last at or below it, within its size. */
static struct fsym *symtab_find(const struct dso_state *st, uint64_t addr)
{
	size_t lo = sym_count_at_or_below(st->syms, st->nr_syms, sizeof(*st->syms), addr);
	struct fsym *f;

	if (!lo)
		return NULL;
	f = &st->syms[lo - 1];
	if (f->size && addr - f->addr >= f->size)
		return NULL;
	return f;
}

/* @st's file (st->path) reported to a Dwfl of its own as @module, at bias 0. */
static Dwfl_Module *dso_report(struct dso_state *st, const char *module)
{
	st->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!st->dwfl)
		return NULL;
	dwfl_report_begin(st->dwfl);
	st->mod = dwfl_report_elf(st->dwfl, module, st->path, -1, 0, false);
	dwfl_report_end(st->dwfl, NULL, NULL);
	return st->mod;
}

int sym_load_dso(struct symbolizer *s, struct dso_state *st, const struct dso *d)
{
	uint8_t cause = SYM_NO_FILE;
	char *path = find_file(s, d, &cause, &st->from);
	size_t nphdr;
	Elf *elf;

	if (!path)
		return cause;
	st->path = strtab_intern_text(&s->strings, path);
	free(path);
	if (!st->path)
		return SYM_NO_FILE;
	if (!dso_report(st, d->path)) {
		pp_debug("'%s': %s", st->path, dwfl_errmsg(-1));
		return SYM_NO_FILE;
	}
	elf = dwfl_module_getelf(st->mod, &st->bias);
	if (!elf || elf_getphdrnum(elf, &nphdr))
		return SYM_NO_FILE;
	st->segs = calloc(nphdr ? nphdr : 1, sizeof(*st->segs));
	if (!st->segs)
		return SYM_NO_FILE;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD) {
			st->segs[st->nr_segs].offset = ph.p_offset;
			st->segs[st->nr_segs].filesz = ph.p_filesz;
			st->segs[st->nr_segs].vaddr = ph.p_vaddr;
			st->nr_segs++;
		}
	}
	pp_debug("symbols for '%s' from '%s'", d->path, st->path);
	return 1;
}

/*
 * Drop "@GLIBC_2.2.5" / "@@..." version suffixes and demangle C++ and Rust
 * names (libiberty, without parameter lists, as perf prints them).
 */
/* Where a Go ABI suffix (".abi0", ".abiinternal") starts in @name; 0 none. */
static size_t go_abi_suffix(const char *name)
{
	static const char *const suffix[] = { ".abi0", ".abiinternal" };
	size_t len = strlen(name);

	for (size_t i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		size_t k = strlen(suffix[i]);

		if (len > k && !strcmp(name + len - k, suffix[i]))
			return len - k;
	}
	return 0;
}

static const char *clean_name(struct symbolizer *s, const char *name)
{
	const char *at = strchr(name, '@');
	const char *res;
	char buf[1024];
	char *dm;

	if (at && at != name) {
		snprintf(buf, sizeof(buf), "%.*s", (int)(at - name), name);
		name = buf;
	}
	if (s->opts.raw_names)
		return strtab_intern_text(&s->strings, name);
	/* Go's assembly functions (and ABI wrappers) carry their ABI in the
	 * ELF name, "runtime.goexit.abi0": Go's own tools show it without */
	if (go_abi_suffix(name)) {
		if (name != buf)
			snprintf(buf, sizeof(buf), "%s", name);
		buf[go_abi_suffix(buf)] = 0;
		name = buf;
	}
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return strtab_intern_text(&s->strings, name);
	dm = cplus_demangle(name, DMGL_AUTO | DMGL_ANSI);
	res = strtab_intern_text(&s->strings, dm ? dm : name);
	free(dm);
	return res;
}

/* @f's name made clean (once): NULL out of memory. */
static const char *symtab_name(struct symbolizer *s, struct fsym *f)
{
	const char *name;

	if (f->clean)
		return f->name;
	name = clean_name(s, f->name);
	if (name) {
		f->name = name;
		f->clean = true;
	}
	return name;
}

/*
 * Copy the names of @st's symbol table not yet made clean out of its
 * module, into one block of its own, before the Dwfl that holds them
 * ends. Return: 0, or PP_ENOMEM (the table is then let go: built again
 * when the file is opened again).
 */
static int symtab_detach(struct dso_state *st)
{
	size_t len = 0;
	char *p;

	if (st->sym_names)
		return 0;
	for (size_t i = 0; i < st->nr_syms; i++)
		if (!st->syms[i].clean)
			len += strlen(st->syms[i].name) + 1;
	if (!len)
		return 0;
	if (!(p = malloc(len))) {
		free(st->syms);
		st->syms = NULL;
		st->nr_syms = 0;
		st->syms_built = false;
		return PP_ENOMEM;
	}
	st->sym_names = p;
	for (size_t i = 0; i < st->nr_syms; i++) {
		size_t n;

		if (st->syms[i].clean)
			continue;
		n = strlen(st->syms[i].name) + 1;
		memcpy(p, st->syms[i].name, n);
		st->syms[i].name = p;
		p += n;
	}
	return 0;
}

static struct cached *cache_slot(struct dso_state *st, uint64_t key, bool *found)
{
	size_t i;

	if ((st->cache_nr + 1) * 2 > st->cache_cap) {
		size_t cap = st->cache_cap ? st->cache_cap * 2 : 256;
		struct cached *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < st->cache_cap; j++) {
			if (!st->cache[j].key)
				continue;
			for (i = (st->cache[j].key * 0x9e3779b97f4a7c15ULL) >> 40 & (cap - 1); n[i].key;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = st->cache[j];
		}
		free(st->cache);
		st->cache = n;
		st->cache_cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 40 & (st->cache_cap - 1); st->cache[i].key;
	     i = (i + 1) & (st->cache_cap - 1)) {
		if (st->cache[i].key == key) {
			*found = true;
			return &st->cache[i];
		}
	}
	*found = false;
	st->cache[i].key = key;
	st->cache_nr++;
	return &st->cache[i];
}

/*
 * The slot of @die's function among @st's names made from DWARF: by the
 * DIE it is an instance of (its abstract origin), so the calls of one
 * function inlined in many places share it. NULL out of memory.
 */
static struct dwname_slot *dwn_slot(struct dso_state *st, Dwarf_Die *die, Dwarf_Die *origin)
{
	Dwarf_Attribute attr;
	uint64_t key;
	size_t i;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) || !dwarf_formref_die(&attr, origin))
		*origin = *die;
	key = dwarf_dieoffset(origin) + 1;
	if ((st->dwn_nr + 1) * 2 > st->dwn_cap) {
		size_t cap = st->dwn_cap ? st->dwn_cap * 2 : 64;
		struct dwname_slot *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < st->dwn_cap; j++) {
			if (!st->dwn[j].key)
				continue;
			for (i = (st->dwn[j].key * 0x9e3779b97f4a7c15ULL) >> 40 & (cap - 1); n[i].key;
			     i = (i + 1) & (cap - 1))
				;
			n[i] = st->dwn[j];
		}
		free(st->dwn);
		st->dwn = n;
		st->dwn_cap = cap;
	}
	for (i = (key * 0x9e3779b97f4a7c15ULL) >> 40 & (st->dwn_cap - 1); st->dwn[i].key;
	     i = (i + 1) & (st->dwn_cap - 1))
		if (st->dwn[i].key == key && st->dwn[i].dwarf == origin->cu)
			return &st->dwn[i];
	st->dwn[i] = (struct dwname_slot){ .key = key, .dwarf = origin->cu };
	st->dwn_nr++;
	return &st->dwn[i];
}

/*
 * The name of the function @die is a call of: its linkage name made clean
 * (demangled), else qualified from its DWARF scopes where its language has
 * them (dwname.c; a lambda's operator(), a C function), else its own name.
 * Made once per function (dwn_slot()): the demangling was a quarter of
 * what naming new addresses cost on C++ with much inlining.
 */
static const char *die_name(struct symbolizer *s, struct dso_state *st, Dwarf_Die *die)
{
	struct dwname_slot *slot;
	Dwarf_Attribute attr;
	Dwarf_Die origin;
	const char *name = NULL, *raw;

	slot = dwn_slot(st, die, &origin);
	if (slot && slot->made)
		return slot->name;
	if ((dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
	     dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr)) &&
	    (raw = dwarf_formstring(&attr)))
		name = clean_name(s, raw);
	else if (!(name = dwname_qualified(s, st->inlidx, &origin)) &&
		 dwarf_attr_integrate(die, DW_AT_name, &attr) && (raw = dwarf_formstring(&attr)))
		name = clean_name(s, raw);
	if (slot && name) {
		slot->name = name;
		slot->made = true;
	}
	return name;
}

/*
 * The key of @st's file in @s's table shared with its siblings (0: none):
 * its build id and the path of its DWARF (the same build id found as
 * another debug file would number its DIEs otherwise), hashed; 0 without a
 * build id, whose units are then indexed by each symbolizer on its own.
 */
static uint64_t unit_file(const struct symbolizer *s, struct dso_state *st)
{
	const unsigned char *id;
	const char *main_file = NULL, *debug_file = NULL, *p;
	GElf_Addr vaddr;
	uint64_t h = 0x6a09e667f3bcc909ULL;
	int n;

	if (!s->shared)
		return 0;
	if (st->unit_file_made)
		return st->unit_file;
	st->unit_file_made = true;
	n = st->mod ? dwfl_module_build_id(st->mod, &id, &vaddr) : 0;
	if (n <= 0)
		return st->unit_file = 0;
	dwfl_module_info(st->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug_file);
	for (int i = 0; i < n; i++)
		h = mix64(h ^ id[i]);
	for (p = debug_file ? debug_file : main_file ? main_file : ""; *p; p++)
		h = mix64(h ^ (unsigned char)*p);
	return st->unit_file = h ? h : 1;
}

/* The call site of the inlined call @scope in unit @cu: its file from the
 * unit's table as lineidx copied it (libdw's may be gone). */
static void call_site(struct symbolizer *s, struct dso_state *st, Dwarf_Die *cu, Dwarf_Die *scope,
		      const char **file, unsigned *line)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	*file = NULL;
	*line = 0;
	if (dwarf_attr(scope, DW_AT_call_line, &attr) && dwarf_formudata(&attr, &v) == 0)
		*line = (unsigned)v;
	if (dwarf_attr(scope, DW_AT_call_file, &attr) && dwarf_formudata(&attr, &v) == 0)
		*file = lineidx_file(&st->lineidx, s->shared, unit_file(s, st),
				     &s->strings, cu, v);
}

/*
 * The calls inlined at @addr (an address of its unit @cu's), innermost
 * first: each gets the function inlined and the position inside it; the
 * containing function gets the outermost call site. Return: how many were
 * added to st->inl.
 *
 * The chain is the concrete nesting of the code at @addr - the inlined
 * calls it is in, inside out, then the function - from the index of its
 * unit (inlidx.c), built once per unit where dwarf_getscopes() walked the
 * unit's DIEs again for every address.
 */
static uint32_t inline_chain(struct symbolizer *s, struct dso_state *st, Dwarf_Die *cu,
			     uint64_t addr, struct cached *c)
{
	Dwarf_Die chain[64], cudie, split;
	const char *file = c->file;
	unsigned line = c->line;
	uint32_t count = 0;
	uint8_t unit_type;
	size_t n;

	/* split DWARF (-gsplit-dwarf): the skeleton unit has no children; its
	 * functions and inlined calls are in the split unit (a .dwo file, or a
	 * .dwp), which libdw finds and links to it */
	if (dwarf_cu_info(cu->cu, NULL, &unit_type, NULL, &split, NULL, NULL, NULL) == 0 &&
	    unit_type == DW_UT_skeleton && split.addr && /* zeroed: not found */
	    dwarf_tag(&split) == DW_TAG_compile_unit)
		cu = &split;
	n = inlidx_chain(&st->inlidx, s->shared, unit_file(s, st), cu, addr, chain,
			 sizeof(chain) / sizeof(chain[0]), &cudie);
	for (size_t i = 0; i < n; i++) {
		struct inl *in;

		if (dwarf_tag(&chain[i]) != DW_TAG_inlined_subroutine)
			break;          /* the containing function: no call site */
		if (st->nr_inl == st->cap_inl) {
			size_t cap = st->cap_inl ? st->cap_inl * 2 : 256;
			struct inl *m = realloc(st->inl, cap * sizeof(*m));

			if (!m)
				break;
			st->inl = m;
			st->cap_inl = cap;
		}
		in = &st->inl[st->nr_inl++];
		in->function = die_name(s, st, &chain[i]);
		in->file = file;
		in->line = line;
		count++;
		/* the next frame out is at this call's site */
		call_site(s, st, &cudie, &chain[i], &file, &line);
	}
	if (count) {
		c->file = file;
		c->line = line;
	}
	return count;
}

/*
 * The start addresses of @st's functions from its .eh_frame_hdr (found by
 * its PT_GNU_EH_FRAME segment, so a file without section headers has it
 * too): the sorted table the unwinders search, as GNU ld writes it
 * (datarel, sdata4 entries). Nothing when it is another form.
 */
static void fde_starts_build(struct dso_state *st)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(st->mod, &bias);
	size_t nph = 0;

	st->fde_built = true;
	if (!elf || elf_getphdrnum(elf, &nph))
		return;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		Elf_Data *d;
		const uint8_t *p;
		uint32_t count;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
		if (!d || d->d_size < 12)
			return;
		p = d->d_buf;
		/* version 1; eh_frame_ptr as 4 bytes; the count as udata4; the
		 * table as datarel sdata4 pairs (start, FDE) */
		if (p[0] != 1 || (p[1] & 0x0f) != 0x0b || p[2] != 0x03 || p[3] != 0x3b)
			return;
		memcpy(&count, p + 8, 4);
		if (count > (d->d_size - 12) / 8)
			count = (uint32_t)((d->d_size - 12) / 8);
		st->fde_starts = malloc((count ? count : 1) * sizeof(*st->fde_starts));
		if (!st->fde_starts)
			return;
		for (uint32_t k = 0; k < count; k++) {
			int32_t rel;

			memcpy(&rel, p + 12 + 8 * (size_t)k, 4);
			st->fde_starts[k] = ph.p_vaddr + (uint64_t)(int64_t)rel;
		}
		st->nr_fde_starts = count;
		return;
	}
}

/*
 * A name for code of @st at @vaddr that no symbol covers: the module's
 * file name (@module's) and the address (as nm, objdump and addr2line give
 * it) of the function around it - the start of the call frame information
 * entry that covers it, one per function - else of the address itself.
 * Distinct functions keep distinct names, and every address of one
 * function the same.
 */
static const char *address_name(struct symbolizer *s, struct dso_state *st, const char *module,
				uint64_t vaddr, uint64_t *startp)
{
	const char *base = module ? strrchr(module, '/') : NULL;
	uint64_t start = vaddr;
	Dwarf_Addr cbias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(st->mod, &cbias);
	Dwarf_Frame *fr = NULL;
	char buf[512];

	if (!st->fde_built)
		fde_starts_build(st);
	/* an FDE covers it: the last start at or below it is its function's */
	if (cfi && st->nr_fde_starts &&
	    dwarf_cfi_addrframe(cfi, vaddr + st->bias - cbias, &fr) == 0) {
		size_t lo = 0, hi = st->nr_fde_starts;

		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (st->fde_starts[mid] <= vaddr)
				lo = mid;
			else
				hi = mid;
		}
		if (st->fde_starts[lo] <= vaddr)
			start = st->fde_starts[lo];
	}
	free(fr);
	*startp = start;
	base = base ? base + 1 : module ? module : "[unknown]";
	snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, base, start);
	return strtab_intern_text(&s->strings, buf);
}

/*
 * What libdw keeps per unit looked up, as measured with valgrind's massif
 * on libdw 0.188 (a window stream naming libc and a C++ program): its line
 * table (Dwarf_Line, and libdwfl's index of it) and the unit itself.
 */
#define DW_LINE_BYTES 64u
#define DW_UNIT_BYTES 1024u
#define DW_ARANGE_BYTES 48u
#define DW_RELEASE_MIN (64u << 10) /* sym_trim() lets go of files holding more */

static int cmp_cu_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Read @dw's units' address ranges into @st's table, sorted by address. */
static void cu_ranges_build(struct dso_state *st, Dwarf *dw)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	size_t cap = 0;

	while (dwarf_get_units(dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		/* (a skeleton's split unit is found from it: inline_chain()) */
		if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
		    unit_type != DW_UT_skeleton)
			continue;
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
			/* 0: a function the linker dropped (its tombstone) */
			if (!lo || hi <= lo)
				continue;
			if (st->nr_cu_ranges == cap) {
				size_t ncap = cap ? cap * 2 : 64;
				struct cu_range *v = realloc(st->cu_ranges, ncap * sizeof(*v));

				if (!v)
					return; /* what was read is used */
				st->cu_ranges = v;
				cap = ncap;
			}
			st->cu_ranges[st->nr_cu_ranges++] = (struct cu_range){ lo, hi, cudie };
		}
	}
	if (st->nr_cu_ranges)
		qsort(st->cu_ranges, st->nr_cu_ranges, sizeof(*st->cu_ranges), cmp_cu_range);
	st->dw_bytes += cap * sizeof(*st->cu_ranges);
}

/*
 * The unit around @addr (the module's address), where libdwfl found none:
 * it looks units up in .debug_aranges only (elfutils 0.188), which clang
 * does not write unless asked (-gdwarf-aranges), so a clang-built program
 * had no lines and no inlined calls. Its units' own ranges, read once.
 * Return: the unit's DIE (valid while the Dwfl lives), *@dbias set; NULL.
 */
static Dwarf_Die *unit_by_ranges(struct dso_state *st, Dwarf_Addr addr, Dwarf_Addr *dbias)
{
	Dwarf *dw = dwfl_module_getdwarf(st->mod, dbias);
	size_t lo = 0, hi;

	if (!dw)
		return NULL;
	if (!st->cu_ranges_built) {
		st->cu_ranges_built = true;
		cu_ranges_build(st, dw);
	}
	addr -= *dbias;
	/* the last range starting at or below @addr */
	hi = st->nr_cu_ranges;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->cu_ranges[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= st->cu_ranges[lo - 1].hi)
		return NULL;
	return &st->cu_ranges[lo - 1].die;
}

/*
 * Count what a lookup in unit @cu (NULL: none) makes libdw keep: the unit,
 * once a Dwfl, and the line table it parsed for lineidx (@rows, 0: none).
 */
static void dw_account(struct dso_state *st, Dwarf_Die *cu, size_t rows)
{
	uint64_t key;
	bool fresh = false;

	if (!st->dw_bytes) {
		/* the module's address ranges, read with its first lookup */
		Dwarf_Addr dbias;
		Dwarf *dw = dwfl_module_getdwarf(st->mod, &dbias);
		Dwarf_Aranges *ar;
		size_t nar = 0;

		st->dw_bytes = DW_UNIT_BYTES;
		if (dw && dwarf_getaranges(dw, &ar, &nar) == 0)
			st->dw_bytes += nar * DW_ARANGE_BYTES;
	}
	st->dw_bytes += rows * DW_LINE_BYTES;
	if (!cu)
		return;
	key = (uint64_t)(uintptr_t)cu->cu;
	if (!st->dw_units_next)
		st->dw_units_next = 1;
	if (wordmap_get(&st->dw_units, &key, 1, &st->dw_units_next, &fresh) && fresh)
		st->dw_bytes += DW_UNIT_BYTES;
}

/*
 * End what libdw holds for @st. What was named stays (the caches), and so
 * do the indexes made from its units: opened again, the module names a
 * unit seen before without libdw parsing it again.
 */
static void dso_dwarf_release(struct dso_state *st)
{
	lineidx_end_dwarf(st->lineidx); /* on the module's Elf */
	if (st->dwfl)
		dwfl_end(st->dwfl);
	st->dwfl = NULL;
	st->mod = NULL;
	free(st->cu_ranges);
	st->cu_ranges = NULL;
	st->nr_cu_ranges = 0;
	st->cu_ranges_built = false;
	/* qualified names are keyed by their units, which are gone */
	free(st->dwn);
	st->dwn = NULL;
	st->dwn_cap = st->dwn_nr = 0;
	wordmap_free(&st->dw_units);
	st->dw_units_next = 1;
	st->dw_bytes = 0;
}

/* Let go of the indexes made from @st's units (its Dwfl released first). */
static void dso_index_release(struct dso_state *st)
{
	inlidx_free(st->inlidx);
	st->inlidx = NULL;
	lineidx_free(st->lineidx);
	st->lineidx = NULL;
}

static uint64_t dso_index_bytes(const struct dso_state *st)
{
	return inlidx_bytes(st->inlidx) + lineidx_bytes(st->lineidx);
}

/* What the names made in @st hold: its address cache and inlined chains. */
static uint64_t dso_names_bytes(const struct dso_state *st)
{
	return st->cache_cap * sizeof(*st->cache) + st->cap_inl * sizeof(*st->inl);
}

/* Forget the names made in @st (made again from the indexes when asked). */
static void dso_names_release(struct dso_state *st)
{
	free(st->cache);
	st->cache = NULL;
	st->cache_cap = st->cache_nr = 0;
	free(st->inl);
	st->inl = NULL;
	st->nr_inl = st->cap_inl = 0;
}

/*
 * Open @st's file again after sym_trim() released it, as sym_load_dso()
 * found it (@module: the name it is reported under). Return: 0, or -1
 * when it cannot be (a container's root gone, the file replaced): said
 * once, and its new frames are named from the symbol table alone.
 */
static int dso_reopen(struct dso_state *st, const char *module)
{
	GElf_Addr bias;

	st->dw_released = false;
	if (!dso_report(st, module) || !dwfl_module_getelf(st->mod, &bias) || bias != st->bias) {
		pp_warn("'%s': cannot be opened again for naming: %s", st->path,
			st->mod ? "it changed" : dwfl_errmsg(-1));
		if (st->dwfl)
			dwfl_end(st->dwfl);
		st->dwfl = NULL;
		st->mod = NULL;
		return -1;
	}
	return 0;
}

/*
 * What a file's symbol table holds: its sorted table and the names not
 * yet made clean, and the module's .symtab and .strtab pages it read
 * (mapped: resident while the Dwfl is open; ~24 bytes an entry and ~32 a
 * name, estimated). A file without debug information holds little else,
 * but a big program's table is megabytes.
 */
#define SYMTAB_FILE_BYTES 56u

static uint64_t dso_symtab_bytes(const struct dso_state *st)
{
	uint64_t b = st->nr_syms * (sizeof(*st->syms) + (uint64_t)SYMTAB_FILE_BYTES);

	return b + st->nr_fde_starts * sizeof(*st->fde_starts);
}

/* Let go of @st's symbol table (its Dwfl ended first): built again when
 * the file is opened again. */
static void dso_symtab_release(struct dso_state *st)
{
	free(st->syms);
	st->syms = NULL;
	st->nr_syms = 0;
	st->syms_built = false;
	free(st->sym_names);
	st->sym_names = NULL;
	free(st->fde_starts);
	st->fde_starts = NULL;
	st->nr_fde_starts = 0;
	st->fde_built = false;
}

/* What sym_trim() lets go of in a file, cheapest to make again first. */
enum trim_pass {
	TRIM_DWARF,   /* libdw's part: the indexes make it cheap to open again */
	TRIM_NAMES,   /* the names made: looked up again in the indexes */
	TRIM_INDEXES, /* the indexes: libdw parses the units again */
	TRIM_FILE,    /* all of it, its symbol table too: the file is opened anew */
};

/* What letting go of @st at @pass frees (what earlier passes would have). */
static uint64_t trim_bytes(const struct dso_state *st, enum trim_pass pass)
{
	uint64_t b = st->dw_bytes;

	if (pass >= TRIM_NAMES)
		b += dso_names_bytes(st);
	if (pass >= TRIM_INDEXES)
		b += dso_index_bytes(st);
	if (pass >= TRIM_FILE)
		b += dso_symtab_bytes(st);
	return b;
}

/* Let go of what @pass lets go of in @st (and what earlier passes do). */
static void dso_trim(struct dso_state *st, enum trim_pass pass)
{
	if (pass >= TRIM_FILE)
		dso_symtab_release(st);
	if (st->dwfl) {
		/* what is left of its symbol table's names lives in the module */
		symtab_detach(st);
		dso_dwarf_release(st);
		st->dw_released = true;
	}
	if (pass >= TRIM_NAMES)
		dso_names_release(st);
	if (pass >= TRIM_INDEXES)
		dso_index_release(st);
}

/* The least recently used file holding at least DW_RELEASE_MIN of what
 * @pass lets go of (libdw's part: only an open Dwfl holds any); NULL none. */
static struct dso_state *trim_candidate(struct symbolizer *s, enum trim_pass pass)
{
	struct dso_state *lru = NULL;

	for (size_t i = 0; i < s->nr_states; i++) {
		struct dso_state *st = &s->states[i];
		uint64_t b = pass == TRIM_DWARF ? st->dw_bytes :
			     pass == TRIM_NAMES ? dso_names_bytes(st) :
			     pass == TRIM_INDEXES ? dso_index_bytes(st) : dso_symtab_bytes(st);

		/* a file without debug information holds next to nothing:
		 * opening it again would cost more */
		if (b >= DW_RELEASE_MIN && (!lru || st->dw_used < lru->dw_used))
			lru = st;
	}
	return lru;
}

/*
 * Files no frame was named in for sym_opts.idle_s: let go altogether, and
 * the memory handed back. A program that ran once (a compiler, a cron job)
 * would else keep what naming made of it while it fits the budget - for
 * days. A file's last use is the time of the first sym_trim() after it.
 * Return: how many were let go.
 */
static size_t trim_idle(struct symbolizer *s)
{
	struct timespec ts;
	uint64_t now;
	size_t n = 0;

	if (!s->opts.idle_s)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec;
	for (size_t i = 0; i < s->states_used; i++) {
		struct dso_state *st = &s->states[i];

		if (st->status != 1)
			continue;
		if (st->dw_used > s->trim_clock || !st->used_at) {
			st->used_at = now;
			continue;
		}
		if (now - st->used_at < s->opts.idle_s || !trim_bytes(st, TRIM_FILE))
			continue;
		pp_debug("'%s': not named from for %" PRIu64 " s: let go (~%" PRIu64 " KiB)",
			 st->path, now - st->used_at, trim_bytes(st, TRIM_FILE) >> 10);
		dso_trim(st, TRIM_FILE);
		n++;
	}
	s->trim_clock = s->dw_clock;
#ifdef __GLIBC__
	if (n)
		malloc_trim(0); /* what they held goes back to the system */
#endif
	return n;
}

void sym_held(const struct symbolizer *s, uint64_t *dwarf, uint64_t *indexes, uint64_t *names,
	      uint64_t *symtabs)
{
	*dwarf = *indexes = *names = *symtabs = 0;
	for (size_t i = 0; i < s->nr_states; i++) {
		*dwarf += s->states[i].dw_bytes;
		*indexes += dso_index_bytes(&s->states[i]);
		*names += dso_names_bytes(&s->states[i]);
		*symtabs += dso_symtab_bytes(&s->states[i]);
	}
}

size_t sym_trim(struct symbolizer *s)
{
	static const char *const what[] = {
		[TRIM_DWARF] = "", [TRIM_NAMES] = ", names made too",
		[TRIM_INDEXES] = ", names made and indexes too",
		[TRIM_FILE] = ", and its symbol table: all of it",
	};
	uint64_t held, dw, idx, names, symtabs, budget = s->opts.dwarf_max;
	size_t released = 0;

	if (!budget)
		return 0;
	released = trim_idle(s);
	sym_held(s, &dw, &idx, &names, &symtabs);
	held = dw + idx + names + symtabs;
	pp_debug("naming holds ~%" PRIu64 " KiB (libdw ~%" PRIu64 ", indexes %" PRIu64
		 ", names %" PRIu64 ", symbol tables ~%" PRIu64 "; --dwarf-max %zu KiB)",
		 held >> 10, dw >> 10, idx >> 10, names >> 10, symtabs >> 10,
		 (size_t)(budget >> 10));
	if (held <= budget)
		return released;
	/* the least recently used first, down to three quarters of the budget
	 * (a module in use is not released at every window), what is
	 * cheapest to make again first */
	for (enum trim_pass pass = TRIM_DWARF; pass <= TRIM_FILE; pass++) {
		struct dso_state *lru;

		while (held > budget / 4 * 3 && (lru = trim_candidate(s, pass))) {
			uint64_t b = trim_bytes(lru, pass);

			held -= b;
			pp_debug("'%s': its debug information let go (~%" PRIu64 " KiB%s)", lru->path,
				 b >> 10, what[pass]);
			dso_trim(lru, pass);
			released++;
		}
	}
	/* what libdw freed stays with malloc, for what is named next: the
	 * memory is flat rather than handed back and faulted in again */
	return released;
}

static void lookup_user(struct symbolizer *s, struct dso_state *st, const char *module,
			uint64_t off, bool ret, struct cached *c)
{
	uint64_t vaddr = 0, addr;
	struct fsym *fs;
	Dwarf_Die *cu = NULL;
	size_t rows = 0;
	Dwarf_Addr dbias = 0;
	bool in_seg = false, inlined;

	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_seg *g = &st->segs[i];

		if (off >= g->offset && off < g->offset + g->filesz) {
			vaddr = off - g->offset + g->vaddr;
			in_seg = true;
			break;
		}
	}
	if (!in_seg)
		return;
	addr = vaddr + st->bias;
	/* released by sym_trim(): opened again; if it cannot be, the symbol
	 * table kept still names functions (without lines) */
	if (st->dw_released)
		dso_reopen(st, module);
	if (!st->syms_built) {
		st->syms_built = true; /* on first naming: the unwinder needs none */
		sym_build_symtab(s, st);
	}
	fs = symtab_find(st, addr);
	/* a "return address" whose byte before no symbol covers, at a
	 * function's first byte, was not pushed by a call: a signal frame's
	 * resume address (__restore_rt, Go's runtime.sigreturn__sigaction),
	 * where the kernel returns to. It is that function's, as perf names
	 * it. (A call that does not return, at a function's end, leaves its
	 * return address at the next function's first byte too, but the byte
	 * before is the call's, inside its function.) */
	if (!fs && ret) {
		struct fsym *next = symtab_find(st, addr + 1);

		if (next && next->addr == addr + 1) {
			fs = next;
			addr++;
			vaddr++;
			c->at_own = true;
		}
	}
	if (fs) {
		c->function = symtab_name(s, fs);
		c->sym_offset = addr - fs->addr;
	} else if (st->mod) {
		uint64_t start = vaddr;

		c->function = address_name(s, st, module, vaddr, &start);
		c->addr_name = c->function != NULL;
		c->sym_offset = vaddr - start;
	}
	/* the unit around it, found once: its line, the inlined calls, and
	 * what sym_trim() counts */
	if (st->mod && !in_plt(st, addr) && !(cu = dwfl_module_addrdie(st->mod, addr, &dbias)))
		cu = unit_by_ranges(st, addr, &dbias);
	if (cu) {
		const char *file = NULL;
		unsigned lineno = 0;

		if (lineidx_find(&st->lineidx, s->shared, unit_file(s, st), &s->strings,
				 cu, addr - dbias, &file, &lineno,
				 &rows) && file) {
			c->file = file;
			c->line = lineno;
		}
	}
	if (st->mod && s->opts.dwarf_max)
		dw_account(st, cu, rows);
	inlined = !s->opts.no_inline && c->function && !c->addr_name;
	if (inlined && cu) {
		c->inl_first = (uint32_t)st->nr_inl;
		c->inl_count = inline_chain(s, st, cu, addr - dbias, c);
	}
}

/* Room for @need elements of @size in *@v (capacity *@cap, doubled), the
 * new ones zeroed. Return: 0, or -1 out of memory (*@v unchanged). */
static int grow_zeroed(void **v, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need)
		ncap *= 2;
	n = realloc(*v, ncap * size);
	if (!n)
		return -1;
	memset((char *)n + *cap * size, 0, (ncap - *cap) * size);
	*v = n;
	*cap = ncap;
	return 0;
}

/* A state not in use: one let go by sym_rebind(), or a new one. */
static uint32_t state_new(struct symbolizer *s)
{
	if (s->nr_free_states)
		return s->free_states[--s->nr_free_states];
	if (grow_zeroed((void **)&s->states, &s->nr_states, s->states_used + 1, sizeof(*s->states)))
		return UINT32_MAX;
	return (uint32_t)s->states_used++;
}

/*
 * The id of @d's file among those kept across recordings: its build id,
 * else the device and inode its mapping gave (perf writes no build ids
 * into --switch-output's files), and its path (a file the recording names
 * by two paths keeps two states, as it has two dsos); 0 with neither, or
 * out of memory.
 */
static uint32_t kept_id(struct symbolizer *s, const struct dso *d)
{
	enum { HEAD = 1 + 4 + 3 };
	size_t plen = d->path ? strlen(d->path) : 0, n = HEAD + (plen + 7) / 8;
	uint64_t stack_key[64], *key;
	uint32_t id;
	bool fresh;

	if (!d->build_id_size && !d->ino)
		return 0;
	key = n <= 64 ? stack_key : calloc(n, sizeof(*key));
	if (!key)
		return 0;
	memset(key, 0, n * sizeof(*key));
	key[0] = (uint64_t)d->build_id_size | (uint64_t)d->kind << 8 | (uint64_t)plen << 16;
	memcpy(key + 1, d->build_id, d->build_id_size < 32 ? d->build_id_size : 32);
	if (!d->build_id_size) {
		key[5] = (uint64_t)d->maj << 32 | d->min;
		key[6] = d->ino;
		key[7] = d->ino_generation;
	}
	memcpy(key + HEAD, d->path, plen);
	if (!s->kept_next)
		s->kept_next = 1;
	id = wordmap_get(&s->kept, key, n, &s->kept_next, &fresh);
	if (key != stack_key)
		free(key);
	return id;
}

bool sym_kept_ready(struct symbolizer *s, const struct dso *d)
{
	uint32_t kid = s->states_used ? kept_id(s, d) : 0;

	return kid && kid < s->state_of_kept_cap && s->state_of_kept[kid] &&
	       s->states[s->state_of_kept[kid] - 1].status == 1;
}

/* @d's state: found by the recording's dso id, else by its file (kept
 * across recordings), else a new one. */
static struct dso_state *dso_state(struct symbolizer *s, const struct dso *d)
{
	uint32_t kid, idx = UINT32_MAX;

	if (d->id < s->slot_cap && s->slot_of[d->id])
		return &s->states[s->slot_of[d->id] - 1];
	if (grow_zeroed((void **)&s->slot_of, &s->slot_cap, (size_t)d->id + 1, sizeof(*s->slot_of)))
		return NULL;
	kid = kept_id(s, d);
	if (kid) {
		if (grow_zeroed((void **)&s->state_of_kept, &s->state_of_kept_cap, (size_t)kid + 1,
				sizeof(*s->state_of_kept)))
			return NULL;
		if (s->state_of_kept[kid])
			idx = s->state_of_kept[kid] - 1;
	}
	if (idx == UINT32_MAX) {
		idx = state_new(s);
		if (idx == UINT32_MAX)
			return NULL;
		if (kid) {
			s->state_of_kept[kid] = idx + 1;
			s->states[idx].kept = kid;
		}
	}
	s->slot_of[d->id] = idx + 1;
	return &s->states[idx];
}

const struct dso_state *sym_dso_loaded(struct symbolizer *s, const struct dso *d)
{
	struct dso_state *st = dso_state(s, d);

	if (!st)
		return NULL;
	if (!st->status) {
		st->status = sym_load_dso(s, st, d);
		/*
		 * Unwinding reads the file's path and load segments, no more:
		 * libdw's mapping of it goes now (should this symbolizer name a
		 * frame in it, it is opened again, as after sym_trim()). Each
		 * unwinding worker loads every file it meets; the kernel maps a
		 * file's pages in large folios, so each mapping of a big library
		 * held megabytes (libpython 3.4 MB), once per worker.
		 */
		if (st->status == 1 && st->dwfl) {
			dso_dwarf_release(st);
			st->dw_released = true;
		}
	}
	return st->status == 1 ? st : NULL;
}

const char *sym_dso_path(const struct dso_state *st)
{
	return st->path;
}

bool sym_dso_bias(const struct dso_state *st, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_seg *g = &st->segs[i];

		if (pgoff >= g->offset && pgoff < g->offset + g->filesz) {
			*bias = start - (pgoff - g->offset + g->vaddr);
			return true;
		}
	}
	return false;
}

static size_t resolve_user(struct symbolizer *s, const struct raw_frame *f, struct sym_frame *out,
			   size_t max)
{
	const struct dso *d = f->dso;
	struct dso_state *st;
	struct cached *c;
	uint64_t off;
	size_t n = 0;
	bool found;

	out->flags = FRAME_F_USER;
	/* a process that wrote a jitdump: its records name what they cover
	 * first, inside a file too (V8 describes its builtins, which live in
	 * the node binary, as perf inject --jit then names them) */
	if (f->jitdump && jit_lookup(s, f, out)) {
		out->module = d ? d->path : out->module;
		return 1;
	}
	if (!d) {
		if (jit_lookup(s, f, out))
			return 1;
		out->cause = SYM_NO_MAP;
		/* a return address of a process whose maps are known that
		 * none covers: the chain left the stack (a frame pointer past
		 * its root, into what is not one) */
		if (f->ret && f->proc)
			out->flags |= FRAME_F_OUTSIDE;
		return 1;
	}
	out->module = d->path;
	if (d->kind == DSO_ANON) {
		if (!jit_lookup(s, f, out))
			out->cause = SYM_JIT_NO_MAP;
		return 1;
	}
	if (d->kind == DSO_SPECIAL) {
		out->cause = SYM_NOT_NAMEABLE;
		return 1;
	}
	st = dso_state(s, d);
	if (!st) {
		out->cause = SYM_NO_FILE;
		return 1;
	}
	if (!st->status && !prefetch_take(s, d, st))
		st->status = sym_load_dso(s, st, d);
	if (st->status != 1) {
		out->cause = (uint8_t)st->status;
		return 1;
	}
	off = f->ret && f->offset ? f->offset - 1 : f->offset;
	/* (a return address's own slot: it may be looked up at itself) */
	c = cache_slot(st, (off + 1) | (uint64_t)(f->ret && f->offset) << 63, &found);
	if (!c) {
		out->cause = SYM_NO_SYMBOL;
		return 1;
	}
	/* a file in use is the last to be trimmed: a name found in its cache
	 * counts as much as one libdw gave (each window names its stacks
	 * again: a file named from every window is used in every window) */
	if (s->opts.dwarf_max)
		st->dw_used = ++s->dw_clock;
	if (!found)
		lookup_user(s, st, d->path, off, f->ret && f->offset, c);
	/* inlined calls first, innermost first; the containing function last */
	/* (a function inlined into itself, a recursion unrolled, is a frame
	 * of its own at each level, as addr2line -i shows it) */
	for (uint32_t i = 0; i < c->inl_count && n + 1 < max; i++) {
		const struct inl *in = &st->inl[c->inl_first + i];

		out[n] = *out;
		out[n].function = in->function;
		out[n].file = in->file;
		out[n].line = in->line;
		out[n].sym_offset = 0;
		out[n].flags |= FRAME_F_INLINED;
		out[n].cause = in->function ? SYM_NAMED : SYM_NO_SYMBOL;
		n++;
	}
	out[n] = out[0];
	out[n].flags &= ~(unsigned)FRAME_F_INLINED;
	out[n].function = c->function;
	out[n].file = c->file;
	out[n].line = c->line;
	out[n].sym_offset = c->sym_offset + (f->ret && !c->at_own ? 1 : 0);
	out[n].cause = c->function && !c->addr_name ? SYM_NAMED : SYM_NO_SYMBOL;
	/* a runtime's stack root ends the stack (roots.c) */
	for (size_t i = 0; i <= n; i++) {
		const struct roots_entry *r = out[i].cause == SYM_NAMED ?
						      sym_root_of(out[i].function) : NULL;

		if (r) {
			out[i].flags |= r->switches ? FRAME_F_SWITCH : FRAME_F_ROOT;
			st->runtime = r->runtime;
		}
	}
	st->frames++;
	st->unnamed += out[n].cause != SYM_NAMED;
	return n + 1;
}

/*
 * The name of a frame nothing named: its module's file name and its offset
 * there (the file offset of a user frame, a kernel frame's address), as
 * perf report and pprof show an address they cannot name - "libc.so.6+0x2a1b0",
 * "[kernel.kallsyms]+0xffffffff81234567". One name per address, so
 * unnamed frames stay apart, and what names them later (pprof with the
 * binaries, a backend's symbolizer) finds them from the same two values.
 * Return: the interned name, or NULL out of memory (the frame stays unnamed).
 */
static const char *offset_name(struct symbolizer *s, const char *module, uint64_t offset)
{
	const char *base = module[0] == '[' ? NULL : strrchr(module, '/');
	char buf[512];

	snprintf(buf, sizeof(buf), "%.400s+0x%" PRIx64, base && base[1] ? base + 1 : module, offset);
	return strtab_intern_text(&s->strings, buf);
}

size_t sym_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		   struct sym_frame *out, size_t max)
{
	size_t n = 1;

	memset(out, 0, sizeof(*out));
	out->offset = f->offset;
	switch (f->kind) {
	case FRAME_USER:
		n = resolve_user(s, f, out, max);
		break;
	case FRAME_KERNEL:
		kernel_resolve(s, f, kernel_text, out);
		break;
	default:
		out->cause = SYM_NOT_NAMEABLE;
		break;
	}
	for (size_t i = 0; i < n; i++)
		if (out[i].cause != SYM_NAMED)
			out[i].flags |= FRAME_F_UNKNOWN;
	/* a frame nothing named keeps its identity: its module and offset
	 * (anonymous memory, JIT code: its address, as perf shows it - an
	 * offset in it says nothing, and its maps come and go) */
	if (!out[n - 1].function && out[n - 1].module)
		out[n - 1].function = offset_name(s, out[n - 1].module,
						  f->dso && f->dso->kind == DSO_ANON ? f->addr
										     : out[n - 1].offset);
	/* statistics count addresses: the containing function decides (an
	 * address outside every mapping that ends a chain is no frame) */
	if (out[0].flags & FRAME_F_OUTSIDE)
		return n;
	s->stats.frames++;
	s->stats.by_cause[out[n - 1].cause]++;
	return n;
}

/* Whether @hdr says the recording was made on a host other than this one. */
static bool recorded_elsewhere(const struct perf_header_info *hdr)
{
	char here[256];

	if (!hdr || !hdr->hostname || !*hdr->hostname || gethostname(here, sizeof(here)))
		return false;
	here[sizeof(here) - 1] = '\0';
	return strcmp(here, hdr->hostname) != 0;
}

struct symbolizer *sym_new(const struct sym_opts *opts, const struct perf_header_info *hdr)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	const char *home = getenv("HOME");

	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	sym_bus_guard(); /* a file cut short while mapped: zeros, not SIGBUS */
	s->opts = *opts;
	s->hdr = hdr;
	s->other_host = recorded_elsewhere(hdr);
	if (opts->buildid_dir) {
		snprintf(s->buildid_dir, sizeof(s->buildid_dir), "%s", opts->buildid_dir);
	} else {
		snprintf(s->buildid_dir, sizeof(s->buildid_dir), "%s/.debug", home ? home : "/root");
	}
	return s;
}

struct symbolizer *sym_new_sibling(struct symbolizer *s)
{
	struct symbolizer *sib;

	if (!s->shared && !(s->shared = shared_new()))
		return NULL;
	sib = sym_new(&s->opts, s->hdr);
	if (sib)
		sib->shared = shared_ref(s->shared);
	return sib;
}

void sym_dso_release(struct dso_state *st)
{
	dso_dwarf_release(st);
	dso_index_release(st);
	free(st->segs);
	free(st->syms);
	free(st->sym_names);
	free(st->inl);
	free(st->cache);
	free(st->fde_starts);
}

void sym_rebind(struct symbolizer *s, const struct perf_header_info *hdr)
{
	size_t kept = 0, let_go = 0;

	prefetch_free(s);
	s->hdr = hdr;
	s->other_host = recorded_elsewhere(hdr);
	/* the new recording numbers its dsos anew */
	if (s->slot_of)
		memset(s->slot_of, 0, s->slot_cap * sizeof(*s->slot_of));
	for (size_t i = 0; i < s->states_used; i++) {
		struct dso_state *st = &s->states[i];

		if (!st->status && !st->kept)
			continue; /* unused, or let go already */
		if (st->kept && st->status == 1) {
			/* the same file (build id, or device and inode, and
			 * path): what naming made of it stays; the counts are
			 * the new recording's */
			st->frames = st->unnamed = 0;
			kept++;
			continue;
		}
		/* known by neither build id nor inode, or not found: looked
		 * for again as the new recording names it */
		if (st->kept)
			s->state_of_kept[st->kept] = 0;
		sym_dso_release(st);
		memset(st, 0, sizeof(*st));
		if (grow_zeroed((void **)&s->free_states, &s->cap_free_states,
				s->nr_free_states + 1, sizeof(*s->free_states)) == 0)
			s->free_states[s->nr_free_states++] = (uint32_t)i;
		let_go++;
	}
	/* the kernel's symbols stay if this recording's kernel is the same
	 * (checked at its first kernel frame); what is the recording's own
	 * goes: its processes' JIT maps (they grow), its mount namespaces,
	 * its counts */
	s->kernel_recheck = s->kernel_tried;
	jit_free(s);
	unwind_free(s);
	memset(&s->ns, 0, sizeof(s->ns));
	memset(&s->stats, 0, sizeof(s->stats));
	pp_debug("symbols of %zu files kept for the next recording (%zu let go)", kept, let_go);
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	sym_bus_report();
	prefetch_free(s);
	for (size_t i = 0; i < s->nr_states; i++)
		sym_dso_release(&s->states[i]);
	free(s->states);
	free(s->slot_of);
	free(s->state_of_kept);
	free(s->free_states);
	wordmap_free(&s->kept);
	kernel_free(s);
	jit_free(s);
	unwind_free(s);
	shared_unref(s->shared); /* after the states that read it */
	strtab_free(&s->strings);
	free(s);
}

const char *sym_from_name(enum sym_from f)
{
	static const char *const names[] = {
		[SYM_FROM_SYMFS] = "--symfs", [SYM_FROM_ARCHIVE] = "perf archive",
		[SYM_FROM_CACHE] = "build-id cache", [SYM_FROM_PATH] = "recorded path",
		[SYM_FROM_NSROOT] = "container root",
	};

	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

void sym_dso_where(struct symbolizer *s, const struct dso *d, struct sym_where *w)
{
	struct dso_state *st = d->id < s->slot_cap && s->slot_of[d->id] ?
				       &s->states[s->slot_of[d->id] - 1] : NULL;
	const char *main_file = NULL, *debug = NULL;

	memset(w, 0, sizeof(*w));
	if (!st || !st->status)
		return;
	w->tried = true;
	w->frames = st->frames;
	w->unnamed = st->unnamed;
	w->found = st->status == 1;
	w->cause = w->found ? SYM_NAMED : (uint8_t)st->status;
	if (!w->found)
		return;
	w->from = (enum sym_from)st->from;
	w->file = st->path;
	w->runtime = st->runtime;
	if (!d->build_id_size)
		w->same = w->from == SYM_FROM_SYMFS ? "no build id recorded: --symfs gave it" :
			  s->opts.trust_paths ? "no build id recorded: --trust-paths" :
			  d->ino ? "no build id recorded: the recorded device and inode" :
				   "no build id recorded: the file at its path here (the recording "
				   "names no other host)";
	/* the debug file libdwfl found for it (looked for now if naming did
	 * not need it; cached, so not fetched twice) */
	if (st->mod) {
		Dwarf_Addr bias;
		const char *cache = getenv("DEBUGINFOD_CACHE_PATH");

		w->dwarf = dwfl_module_getdwarf(st->mod, &bias) != NULL;
		if (dwfl_module_info(st->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug) &&
		    debug && (!main_file || strcmp(main_file, debug))) {
			w->debug = strtab_intern_text(&s->strings, debug);
			w->debuginfod = strstr(debug, "/debuginfod_client/") ||
					(cache && *cache && !strncmp(debug, cache, strlen(cache)));
		}
		/* libdwfl does not name a file debuginfod gave it: its cache does */
		if (!w->debug && d->build_id_size) {
			const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
			char idhex[2 * PERF_MAX_BUILD_ID + 1], path[4096 + 128];
			struct stat sb;

			sym_hex(d->build_id, d->build_id_size, idhex);
			if (cache && *cache)
				snprintf(path, sizeof(path), "%s/%s/debuginfo", cache, idhex);
			else if (xdg && *xdg)
				snprintf(path, sizeof(path), "%s/debuginfod_client/%s/debuginfo", xdg, idhex);
			else
				snprintf(path, sizeof(path), "%s/.cache/debuginfod_client/%s/debuginfo",
					 home ? home : "/root", idhex);
			if (getenv("DEBUGINFOD_URLS") && !stat(path, &sb) && S_ISREG(sb.st_mode) && sb.st_size) {
				w->debug = strtab_intern_text(&s->strings, path);
				w->debuginfod = true;
			}
		}
	}
}

const struct sym_stats *sym_stats(const struct symbolizer *s)
{
	return &s->stats;
}
