/* SPDX-License-Identifier: MIT */
/*
 * files.c - finding the file that names a dso's frames (by build id where
 * the recording gives one: --symfs, perf's build-id cache, the recorded
 * path), libdwfl's search for its separate debug file, and loading it
 * into a Dwfl of its own (sym_load_dso()).
 */
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "../util/log.h"
#include "priv.h"

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

/* @st's file (st->path) reported to a Dwfl of its own as @module, at bias 0. */
Dwfl_Module *dso_report(struct dso_state *st, const char *module)
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

