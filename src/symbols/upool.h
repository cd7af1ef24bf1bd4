/* SPDX-License-Identifier: MIT */
/*
 * upool.h - unwinding `--call-graph dwarf` samples on worker threads, with
 * results handed back in the order the samples came, so the output of
 * `-j N` is the output of `-j 1`.
 *
 * Samples are queued into a batch (held where the reader read them). A
 * batch is unwound when it is full, or when the caller flushes it - which it
 * must do before applying any record that changes the machine (MMAP, COMM,
 * FORK, EXIT): workers read the machine's maps while a batch runs. Each
 * worker has its own symbolizer (libdwfl state is not shared between
 * threads); naming stays with whoever delivers.
 *
 * Delivery: by the caller, between batches; or, with UPOOL_DELIVER_THREAD,
 * by a thread of its own, so that the caller only reads (a pipeline: the
 * caller fills one batch while the workers unwind the next and the
 * delivering thread delivers the one before). The delivering thread and
 * the caller never run the callback at the same time, and a flush
 * delivers everything before it returns.
 */
#ifndef SYMBOLS_UPOOL_H
#define SYMBOLS_UPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

/**
 * typedef upool_fn - receives each sample, in order, with its unwound user
 * addresses (@n = 0 when the sample has none to unwind). @ev and @pcs are
 * valid during the call only.
 */
typedef int (*upool_fn)(void *ctx, const struct perf_event *ev, const uint64_t *pcs, size_t n);

struct upool;

/* upool_new()'s flags */
#define UPOOL_DELIVER_THREAD 1u /* with threads, deliver on one more thread */

/**
 * upool_new() - a pool of @jobs threads (1: no threads, unwound by the caller).
 * @opts, @hdr, @m: as for sym_new(); @m is read by the workers during a
 *                  batch and must not change until upool_flush() returns.
 * @flags: UPOOL_DELIVER_THREAD: @fn runs on a thread of the pool's
 *         between flushes; what @fn touches the caller leaves alone until
 *         the next upool_flush() or upool_wait() returns.
 * Return: the pool (free with upool_free()), or NULL out of memory.
 */
struct upool *upool_new(unsigned jobs, const struct sym_opts *opts,
			const struct perf_header_info *hdr, struct machine *m,
			upool_fn fn, void *ctx, unsigned flags);

/**
 * upool_add() - queue a record, held where the reader read it
 * (perf_event_hold(), released once delivered; a hold still queued at
 * upool_free() goes with the reader) or else copied; call from the
 * reader's consumer. A --call-graph dwarf sample is
 * unwound by a worker, any other record only keeps its place, so @fn sees
 * every record in the order added. Records that change threads or maps must
 * not be queued: flush, then apply them. Delivers a batch when it is full.
 * Return: 0, PP_ENOMEM, or what @fn returned.
 */
int upool_add(struct upool *p, const struct perf_event *ev);

/**
 * upool_flush() - unwind and deliver every queued sample. Not from @fn:
 * what it delivers comes after the record @fn is given (use
 * upool_quiesce() there). Return: as upool_add().
 */
int upool_flush(struct upool *p);

/**
 * upool_quiesce() - return once no worker unwinds: a batch with them is
 * kept, unwound, and delivered in its turn; nothing is delivered here.
 * For @fn (without UPOOL_DELIVER_THREAD) when it must read what the
 * workers change (their counts, the symbolizers' shared state): every
 * record before the one it is given has been delivered already.
 */
void upool_quiesce(struct upool *p);

/**
 * upool_wait() - after an error: return once no thread of the pool is at
 * work; what is still queued is not delivered.
 */
void upool_wait(struct upool *p);

/**
 * upool_machine_event() - apply @ev to @m (machine_event()), first
 * delivering every queued sample when it is a record about threads or maps:
 * the workers read @m, and what came before @ev must see it unchanged.
 * Return: 0, or the error of the flush or of machine_event().
 */
int upool_machine_event(struct upool *p, struct machine *m, const struct perf_event *ev);

/** upool_add_stats() - add the workers' unwinding counts to @st. */
void upool_add_stats(const struct upool *p, struct sym_stats *st);

void upool_free(struct upool *p);

#endif /* SYMBOLS_UPOOL_H */
