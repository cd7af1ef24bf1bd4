/* SPDX-License-Identifier: MIT */
/*
 * symbols.h - naming raw frames: user code with libdwfl (files found by
 * build id), the kernel from a kallsyms that matches the recording, JIT code
 * from /tmp/perf-PID.map. A wrong name is worse than none: a file whose
 * build id differs from the recording's is never used, and this machine's
 * /proc/kallsyms only when its kernel is the recorded one.
 */
#ifndef SYMBOLS_SYMBOLS_H
#define SYMBOLS_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../machine/machine.h"

enum frame_flag {
	FRAME_F_KERNEL = 1 << 0,
	FRAME_F_USER = 1 << 1,
	FRAME_F_INLINED = 1 << 2,
	FRAME_F_JIT = 1 << 3,
	FRAME_F_UNKNOWN = 1 << 4,
	/* where a stack ends (never kept in a profile's frames): */
	FRAME_F_ROOT = 1 << 5,    /* a runtime's stack root (src/symbols/roots/):
				   * nothing beyond it is a caller */
	FRAME_F_OUTSIDE = 1 << 6, /* a return address outside every mapping of
				   * a known process: the chain left the stack
				   * here; it and what is beyond are no frames */
	FRAME_F_SWITCH = 1 << 7,  /* it moved onto another stack: a root of a
				   * stack unwound from a copy (dwarf), not of
				   * a frame-pointer chain */
};

#define FRAME_F_ENDS (FRAME_F_ROOT | FRAME_F_OUTSIDE | FRAME_F_SWITCH)

/**
 * sym_frame_ends() - whether a stack walked from its leaf ends at a frame
 * flagged @flags: 0 not; 1 after it (a root); 2 before it (it is outside
 * every mapping). @unwound: the stack's user part was unwound from its
 * copy (--call-graph dwarf).
 */
static inline int sym_frame_ends(unsigned flags, bool unwound)
{
	return flags & FRAME_F_OUTSIDE ? 2 :
	       flags & FRAME_F_ROOT || (unwound && flags & FRAME_F_SWITCH) ? 1 : 0;
}

/* Why a frame has no name; counted for `perfport info`. */
enum sym_cause {
	SYM_NAMED = 0,
	SYM_NO_MAP,          /* no map covers the address */
	SYM_NO_FILE,         /* the mapped file was not found */
	SYM_BUILD_ID,        /* only files with another build id were found */
	SYM_NO_SYMBOL,       /* the file has no symbol there */
	SYM_NO_KALLSYMS,     /* no kallsyms matching the recorded kernel */
	SYM_NOT_NAMEABLE,    /* guest, hypervisor, [vsyscall]... */
	SYM_JIT_NO_MAP,      /* anonymous executable memory (JIT code) no perf map or jitdump names */
	SYM_NOT_SAME,        /* no build id recorded, and the file found is not
			      * known to be the recorded one (another host, inode) */
	SYM_CAUSE_COUNT,
};

/* A named frame. Strings are owned by the symbolizer and live as long as it. */
struct sym_frame {
	const char *function;   /* unnamed: "MODULE+0xOFFSET" (FRAME_F_UNKNOWN set);
				 * NULL only without a module */
	const char *module;     /* the dso path, "[kernel.kallsyms]", or NULL */
	const char *file;       /* source file, or NULL */
	unsigned line;          /* 0 when unknown */
	uint64_t offset;        /* module-relative address (file offset for user code) */
	uint64_t sym_offset;    /* address minus the function's start */
	unsigned flags;         /* enum frame_flag */
	uint8_t cause;          /* enum sym_cause */
};

struct sym_opts {
	const char *symfs;        /* look for recorded paths under this directory */
	const char *buildid_dir;  /* perf's build-id cache; NULL: $HOME/.debug */
	const char *archive_dir;  /* an unpacked perf archive, searched first; NULL: none */
	const char *kallsyms;     /* a kallsyms file for the recorded kernel */
	const char *vmlinux;      /* an ELF image of the recorded kernel */
	bool no_inline;           /* do not expand inlined calls */
	bool no_lines;            /* read no line tables: every frame's file NULL, its
				   * line 0 (for formats that show neither) */
	bool raw_names;           /* names as the symbol table spells them: not
				   * demangled, Go's ".abi0" kept (--raw-names) */
	bool trust_paths;         /* a file recorded without build id is the file at its
				   * path here, whatever host recorded it */
	bool use_proc_kallsyms;   /* allow /proc/kallsyms when the kernel matches (default on) */
	bool no_files;            /* open no file the recording names (the fuzzer: its
				   * inputs name this machine's libraries, slow to load) */
	size_t dwarf_max;         /* what libdw may hold for naming (sym_trim(), between
				   * a stream's windows); 0: not bounded, and not counted */
	unsigned idle_s;          /* sym_trim(): a file no frame was named in for this
				   * many seconds is let go altogether; 0: never */
};

#define SYM_DWARF_MAX_DEFAULT ((size_t)48 << 20)
#define SYM_IDLE_S_DEFAULT 300u

struct sym_stats {
	uint64_t frames;
	uint64_t by_cause[SYM_CAUSE_COUNT];
	uint64_t unwound;          /* --call-graph dwarf samples unwound */
	uint64_t unwind_stopped;   /* ... whose unwinding stopped before the outermost frame */
	uint64_t unwind_truncated; /* ... of those, with a full stack copy: cut by its size */
	uint64_t unwind_failed;    /* ... that could not be unwound at all (no file, no CFI) */
	uint64_t leaf_callers;     /* aarch64 -g samples given the caller only lr held */
	uint64_t unwind_released;  /* processes whose unwinding state went at their exit */
	uint64_t unwind_fallbacks; /* ... given to libdwfl (those the CFI rows could not
				    * walk, or all with PERFPORT_UNWIND=libdw) */
};

struct symbolizer;

/**
 * sym_new() - a symbolizer for one recording.
 * @opts: copied (the strings must outlive the symbolizer).
 * @hdr: the recording's header (kernel build id, os release).
 * Return: the symbolizer, free with sym_free(); NULL out of memory.
 */
struct symbolizer *sym_new(const struct sym_opts *opts, const struct perf_header_info *hdr);
void sym_free(struct symbolizer *s);

/**
 * sym_new_sibling() - a symbolizer for @s's recording, with its options, to
 * name on another thread than @s: each has its own files open (libdw is
 * not shared), but the index of a unit's inlined calls (a file's by build
 * id) is built by whichever of them needs it first and then read by all,
 * the others waiting meanwhile rather than building it again.
 * Return: the sibling, free with sym_free() (before or after @s); NULL out
 * of memory.
 */
struct symbolizer *sym_new_sibling(struct symbolizer *s);

/**
 * sym_rebind() - use @s for another recording, @hdr's (borrowed until the
 * next sym_rebind() or sym_free()), of the same machine: perf's rotated
 * files, each numbering its dsos anew. What was made of a file found by
 * its build id (its symbol table, debug information, indexes, names) is
 * kept for the dso of the same build id and path; the rest (files without
 * a build id or not found, the kernel's symbols, JIT maps, mount
 * namespaces, the counts) is let go and made again as the new recording
 * asks. No frame may be being named meanwhile.
 */
void sym_rebind(struct symbolizer *s, const struct perf_header_info *hdr);

/**
 * sym_prefetch() - open ahead, on @threads threads of their own, the files
 * of the DSOs the recording's build-id list names (perf lists those that
 * had samples): their symbol tables and DWARF (decompressed) are then
 * ready, or being made ready, when the first frame in them comes, while
 * this thread reads and names other things. Names come out as without it.
 * Call it once, after the header is read, on a symbolizer that names
 * frames; 0 threads, or no list (pipe mode), does nothing. The threads
 * end by themselves; sym_free() waits for them.
 */
void sym_prefetch(struct symbolizer *s, unsigned threads);

/**
 * sym_resolve() - name one raw frame, with the calls inlined at its address
 * expanded into frames of their own.
 * @kernel_text: the recorded runtime _text (machine_kernel_text()), for
 *               placing a kallsyms of the same kernel loaded at another base.
 * @out: room for @max frames (at least 1): the innermost inlined call first
 *       (flagged FRAME_F_INLINED, with the line in it), the function that
 *       contains the address last (with the line of the outermost inlined
 *       call site).
 * Files are opened on first use and cached by dso; results are cached per
 * (dso, address).
 * Return: the number of frames written (>= 1).
 */
size_t sym_resolve(struct symbolizer *s, const struct raw_frame *f, uint64_t kernel_text,
		   struct sym_frame *out, size_t max);

/**
 * sym_unwind() - unwind the user stack of a `--call-graph dwarf` sample.
 * @m: the machine, for the maps of the sample's process.
 * @pcs: receives up to @max user addresses, leaf first: where the thread
 *       was, then return addresses. Feed them to machine_user_frames().
 * Return: how many; 0 when the sample carries no user registers and stack
 * (or the architecture is not supported: x86_64 and aarch64 are).
 */
size_t sym_unwind(struct symbolizer *s, const struct machine *m, const struct perf_event *ev,
		  uint64_t *pcs, size_t max);

/**
 * sym_unwind_forget() - let go of what sym_unwind() keeps for process @pid
 * (the CFI rows' modules of its maps; its Dwfl, where libdwfl unwound its
 * samples: the modules it reported, each file mapped again for it), as
 * once its last sample has been unwound; a later sample of @pid makes it
 * again. Call between sym_unwind() calls only.
 */
void sym_unwind_forget(struct symbolizer *s, uint32_t pid);

/**
 * sym_unwind_event() - whether @e's samples record what sym_unwind() reads
 * (a stack copy, user registers): else none of them has work for it.
 */
static inline bool sym_unwind_event(const struct perf_evsel *e)
{
	return e->attr.sample_type & (PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_USER);
}

/* sym_unwind_wanted()'s look at the sample itself (unwind.c). */
bool sym_unwind_sample_wanted(const struct symbolizer *s, const struct perf_event *ev);

/**
 * sym_unwind_wanted() - whether sym_unwind() has work for @ev: a sample
 * with a stack copy (`--call-graph dwarf`), or an aarch64 frame-pointer
 * callchain with lr recorded, whose leaf's caller lr may hold (then
 * sym_unwind() gives the callchain's user part with that caller in it, or
 * 0 where the chain is whole). A sample of an event that records neither
 * a stack copy nor user registers is answered here, without a call: that
 * is every sample of a `-g` recording.
 */
static inline bool sym_unwind_wanted(const struct symbolizer *s, const struct perf_event *ev)
{
	if (ev->type != PERF_RECORD_SAMPLE || !ev->evsel || !sym_unwind_event(ev->evsel))
		return false;
	return sym_unwind_sample_wanted(s, ev);
}

/**
 * sym_trim() - keep what naming holds at most sym_opts.dwarf_max bytes
 * (sym_held()): past it, the least recently used files' libdw state is
 * ended first (their units' indexes stay, so a file opened again for a new
 * address parses only units it never saw), then, if that is not enough,
 * the names made in them (asked again, they are looked up in the
 * indexes), then their indexes, then everything, the symbol table too
 * (the file is opened anew when named again), down to three quarters.
 * Names already
 * given out stay valid (the strings are the symbolizer's). For a stream's
 * window boundaries: no frame may be being named meanwhile
 * (namer_finish()). Nothing when dwarf_max is 0 (what libdw holds is then
 * not even counted).
 * Return: how many files were released (libdw's part, or more).
 */
size_t sym_trim(struct symbolizer *s);

/**
 * sym_held() - what naming holds towards sym_opts.dwarf_max: libdw's part
 * into *@dwarf (its units, line tables, address ranges and call frame
 * entries, estimated as they were asked for, and the pages of the files
 * it mapped that are resident with the section data it holds in memory,
 * measured here for each file libdw was asked more of since the last
 * call), the indexes made from the units looked up (exact) into
 * *@indexes, the names made (each file's address cache and inlined
 * chains, exact) into *@names, the symbol tables (the sorted tables,
 * exact, and the names copied out of a module or, where its pages cannot
 * be measured, the pages they were read from, estimated) into *@symtabs.
 * libdw's part is counted only with dwarf_max set.
 */
void sym_held(struct symbolizer *s, uint64_t *dwarf, uint64_t *indexes, uint64_t *names,
	      uint64_t *symtabs);

/** sym_stats() - frames resolved so far, by cause. */
const struct sym_stats *sym_stats(const struct symbolizer *s);

/** sym_cause_name() - "no file", "build-id mismatch", ... */
const char *sym_cause_name(enum sym_cause cause);

/**
 * sym_archive_unpack() - unpack the perf archive @tarball (perf.data.tar.bz2
 * and the like) into a new private directory, its path into @root (@len
 * bytes): a build-id cache for sym_opts.archive_dir. Unsafe entries (absolute,
 * "..", links out of it, devices) are skipped with a warning.
 * Return: PP_OK, or an error (logged; @root is then "").
 */
int sym_archive_unpack(const char *tarball, char *root, size_t len);

/**
 * sym_archive_unpack_into() - unpack the perf archive @tarball into the
 * directory @root (made by the caller; removed on failure), only the
 * members of the build ids in @want (lowercase hex, NULL-terminated; NULL:
 * every member). Return: PP_OK, or an error (logged).
 */
int sym_archive_unpack_into(const char *tarball, const char *root, const char *const *want);

/**
 * sym_archive_open() - the perf archive @tarball as a directory laid out as
 * perf's build-id cache, into @root: unpacked once into perfport's cache
 * (keyed by the archive's identity and what is wanted of it) and read there
 * by later runs; with @ids_known, only the members of the build ids in
 * @ids (the recording's) whose files are not here with that build id.
 * @temporary: set when no cache directory could be had and @root is a
 * private directory to remove (sym_archive_remove()) when the run ends.
 * Return: PP_OK, or an error (logged; @root is then "").
 */
int sym_archive_open(const char *tarball, const struct perf_build_id *ids, size_t nr_ids,
		     bool ids_known, char *root, size_t len, bool *temporary);

/** sym_archive_remove() - remove what sym_archive_unpack() made at @root. */
void sym_archive_remove(const char *root);

/* Where a module's file was found. */
enum sym_from {
	SYM_FROM_SYMFS,      /* --symfs */
	SYM_FROM_ARCHIVE,    /* the perf archive */
	SYM_FROM_CACHE,      /* perf's build-id cache */
	SYM_FROM_PATH,       /* the recorded path, on this machine */
	SYM_FROM_NSROOT,     /* a running container's root (/proc/PID/root) */
};

/* What sym_dso_where() says of a module. */
struct sym_where {
	bool tried;             /* its frames were looked up */
	bool found;
	enum sym_from from;     /* when found */
	const char *file;       /* the file used, when found */
	const char *debug;      /* the separate debug file used, or NULL */
	bool debuginfod;        /* ... fetched from debuginfod */
	uint8_t cause;          /* enum sym_cause, when not found */
	uint64_t frames;        /* addresses of it named so far */
	uint64_t unnamed;       /* ... that no symbol covers ("module+0xADDR") */
	const char *same;       /* found, the recording without its build id: why the
				 * file is taken for the recorded one; else NULL */
	bool dwarf;             /* found, with debug information (its own, or @debug) */
	const char *runtime;    /* a runtime whose stack root (src/symbols/roots/) a
				 * frame of it was named, "Go"; else NULL */
};

/**
 * sym_dso_where() - where @d's symbols came from (for info's per-module
 * lines). Strings are owned by @s.
 */
void sym_dso_where(struct symbolizer *s, const struct dso *d, struct sym_where *w);

/** sym_from_name() - "--symfs", "perf archive", "build-id cache", "recorded path". */
const char *sym_from_name(enum sym_from f);

/** sym_kernel_source() - where kernel names come from ("none" if nowhere). */
const char *sym_kernel_source(const struct symbolizer *s);

/**
 * sym_kernel_why() - why kernel frames are not named, with what would name
 * them (for info's warnings); "" when they are or were never looked up.
 */
const char *sym_kernel_why(const struct symbolizer *s);

#endif /* SYMBOLS_SYMBOLS_H */
