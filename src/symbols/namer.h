/* SPDX-License-Identifier: MIT */
/*
 * namer.h - naming raw frames on threads of their own (lanes), while the
 * caller goes on reading and counting.
 *
 * The caller hands each raw frame it has not seen before to the namer
 * (namer_submit()) and gets a ticket; the names come back by ticket
 * (namer_result()), waiting only if they are not ready yet. The namer owns
 * its symbolizer from namer_new() to namer_free(): nothing else may call
 * it in between. With several lanes, each names with a symbolizer of its
 * own (the first lane with the caller's, the others with siblings of it:
 * sym_new_sibling()): a file's first frames go to one lane, a busy
 * file's later ones to every lane by page; the names are the same
 * whatever the number of lanes.
 *
 * Naming reads what the raw frame points into: its dso, the process and
 * mount namespace behind it (struct proc_info), all owned by the machine.
 * What may change there is copied with the request when its naming reads
 * it (a file's first frame, JIT frames); what a copy cannot hold (a mount
 * namespace's members) makes the request wait: call namer_drain() before
 * applying a record that changes the machine, as for the unwinding pool.
 * Each frame is so named with the machine as it was when it was submitted,
 * and the names are the same whether the namer has a thread or not.
 */
#ifndef SYMBOLS_NAMER_H
#define SYMBOLS_NAMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

struct namer;

#define NAMER_MAX_LANES 8

/**
 * namer_new() - a namer over @s.
 * @threads: the lanes naming on threads of their own (at most
 *           NAMER_MAX_LANES, fewer when memory for their symbolizers is
 *           short); 0 names in the caller, at namer_drain() and
 *           namer_result(), in the order submitted. More than one is for a
 *           single pass: what the other lanes' symbolizers hold is bounded
 *           by nothing but the pass's end (sym_trim() is for @s only).
 * Return: the namer (free with namer_free()), or NULL out of memory. @s
 * stays the caller's to free, after namer_free().
 */
struct namer *namer_new(struct symbolizer *s, unsigned threads);

/** namer_lanes() - the lanes naming on threads (0: the caller names). */
unsigned namer_lanes(const struct namer *n);

/**
 * namer_submit() - queue @f (copied) for naming.
 * @kernel_text: as for sym_resolve().
 * Return: its ticket, dense from 0 in the order submitted; UINT32_MAX out
 * of memory.
 */
uint32_t namer_submit(struct namer *n, const struct raw_frame *f, uint64_t kernel_text);

/**
 * namer_result() - the names of ticket @t, waiting until they are made.
 * @frames: receives the frames, as sym_resolve() writes them; owned by
 *          the namer, valid until namer_free().
 * @raw: receives the raw frame as submitted (a copy owned by the namer),
 *       or NULL.
 * Return: the number of frames (>= 1), 0 out of memory.
 */
size_t namer_result(struct namer *n, uint32_t t, const struct sym_frame **frames,
		    const struct raw_frame **raw);

/**
 * namer_drain() - return once no frame submitted, named or still to be,
 * reads the machine as it is: it may then change. Waits only for requests
 * whose naming reads the live machine (and those before them).
 */
void namer_drain(struct namer *n);

/**
 * namer_finish() - name everything submitted and return: the symbolizer's
 * counts are then whole, namer_result() does not wait, and the symbolizer
 * may be changed (sym_trim()) until the next namer_submit().
 */
void namer_finish(struct namer *n);

/**
 * namer_add_stats() - add to @st what the lanes other than the first
 * counted (frames named and why not): with sym_stats() of the namer's
 * symbolizer, the whole. After namer_finish().
 */
void namer_add_stats(const struct namer *n, struct sym_stats *st);

/**
 * namer_reset() - name everything submitted, then forget it: tickets start
 * again from 0 and every result given out is freed. For a stream's window
 * boundaries, where nothing holds a ticket or a result any more (what
 * names cost stays in the symbolizer's caches).
 */
void namer_reset(struct namer *n);

/** namer_free() - stop the thread (after what is queued) and free @n; NULL is a no-op. */
void namer_free(struct namer *n);

#endif /* SYMBOLS_NAMER_H */
