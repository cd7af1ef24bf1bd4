/* SPDX-License-Identifier: MIT */
/*
 * prefetch.c - opening files ahead, on threads of their own.
 *
 * The first frame in a file waits for the file to be found, its symbol
 * table sorted and its DWARF read (for a distribution's libc debug file,
 * tens of milliseconds of decompression). The recording's build-id list
 * names, before any sample is read, every file that had samples; helper
 * threads open those while the symbolizer's own thread reads and names.
 *
 * Each helper works in a scratch symbolizer of its own (options, strings),
 * so nothing it touches is shared until it hands a finished dso_state over
 * under the lock; the owner then moves its strings into its own table. A
 * file the owner needs before a helper has
 * started on it is opened by the owner, as without prefetching.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/threadtime.h"
#include "../util/log.h"
#include "../util/mem.h"
#include "priv.h"

enum pf_state {
	PF_PENDING,   /* no one has started on it */
	PF_LOADING,   /* a helper is opening it */
	PF_DONE,      /* opened; waiting to be taken */
	PF_TAKEN,     /* the owner has it, or opens it itself */
};

struct pf_item {
	struct dso dso;            /* path and build id, as the list gives them */
	size_t order;              /* in the list */
	enum pf_state state;
	struct dso_state st;
};

struct pf_helper {
	struct prefetch *pf;
	pthread_t thread;
	struct symbolizer *scratch;
};

struct prefetch {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct pf_item *items;
	size_t nr, next;           /* the next item a helper may start */
	bool quit;
	struct pf_helper *helpers;
	unsigned nr_helpers;
};

/* A user-space file the list names (not the kernel, its modules, [vdso]). */
static bool wanted(const struct perf_build_id *b)
{
	const char *f = b->filename;
	size_t n;

	if (!f || f[0] != '/' || !b->size || (b->misc & 7) == 1 /* PERF_RECORD_MISC_KERNEL */)
		return false;
	n = strlen(f);
	return !(n > 3 && strcmp(f + n - 3, ".ko") == 0) && !strstr(f, ".ko.");
}

/* Open one file as the owner would on first use, and everything the first
 * naming in it would need: the symbol table and the DWARF. */
static void open_full(struct symbolizer *x, struct pf_item *it)
{
	Dwarf_Addr bias;

	it->st.status = sym_load_dso(x, &it->st, &it->dso);
	if (it->st.status != 1)
		return;
	it->st.syms_built = true;
	sym_build_symtab(x, &it->st);
	dwfl_module_getdwarf(it->st.mod, &bias);
}

static void *helper_main(void *arg)
{
	struct pf_helper *h = arg;
	struct prefetch *pf = h->pf;

	thread_role("prefetch");
	mem_thread_hugepages();

	pthread_mutex_lock(&pf->lock);
	for (;;) {
		struct pf_item *it;

		while (pf->next < pf->nr && pf->items[pf->next].state != PF_PENDING)
			pf->next++;
		if (pf->quit || pf->next == pf->nr)
			break;
		it = &pf->items[pf->next++];
		it->state = PF_LOADING;
		pthread_mutex_unlock(&pf->lock);
		open_full(h->scratch, it);
		pthread_mutex_lock(&pf->lock);
		it->state = PF_DONE;
		pthread_cond_broadcast(&pf->changed);
	}
	pthread_mutex_unlock(&pf->lock);
	thread_time_note("prefetch");
	return NULL;
}

/* Shared libraries first: every process maps libc, so its first frame
 * comes early; an executable is one process's. Else the list's order. */
static int cmp_need(const void *a, const void *b)
{
	const struct pf_item *x = a, *y = b;
	bool sx = strstr(x->dso.path, ".so") != NULL, sy = strstr(y->dso.path, ".so") != NULL;

	if (sx != sy)
		return sx ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static void prefetch_release(struct prefetch *pf)
{
	for (size_t i = 0; i < pf->nr; i++) {
		if (pf->items[i].state == PF_DONE)
			sym_dso_release(&pf->items[i].st);
		free(pf->items[i].dso.path);
	}
	for (unsigned i = 0; i < pf->nr_helpers; i++)
		if (pf->helpers[i].scratch) {
			strtab_free(&pf->helpers[i].scratch->strings);
			free(pf->helpers[i].scratch);
		}
	free(pf->helpers);
	free(pf->items);
	pthread_cond_destroy(&pf->changed);
	pthread_mutex_destroy(&pf->lock);
	free(pf);
}

void sym_prefetch(struct symbolizer *s, unsigned threads)
{
	const struct perf_header_info *hdr = s->hdr;
	struct prefetch *pf;

	if (s->pf || !threads || !hdr || !hdr->nr_build_ids)
		return;
	pf = calloc(1, sizeof(*pf));
	if (!pf)
		return;
	pthread_mutex_init(&pf->lock, NULL);
	pthread_cond_init(&pf->changed, NULL);
	pf->items = calloc(hdr->nr_build_ids, sizeof(*pf->items));
	pf->helpers = calloc(threads, sizeof(*pf->helpers));
	if (!pf->items || !pf->helpers)
		goto fail;
	for (size_t i = 0; i < hdr->nr_build_ids; i++) {
		const struct perf_build_id *b = &hdr->build_ids[i];
		struct pf_item *it = &pf->items[pf->nr];

		if (!wanted(b))
			continue;
		it->dso.kind = DSO_USER;
		it->dso.path = (char *)b->filename;
		it->dso.build_id_size = b->size;
		memcpy(it->dso.build_id, b->id, b->size);
		if (sym_kept_ready(s, &it->dso)) {
			/* kept from the recording before */
			memset(it, 0, sizeof(*it));
			continue;
		}
		it->order = i;
		it->dso.path = strdup(b->filename);
		if (!it->dso.path)
			goto fail;
		pf->nr++;
	}
	if (!pf->nr)
		goto fail;
	qsort(pf->items, pf->nr, sizeof(*pf->items), cmp_need);
	for (unsigned i = 0; i < threads && i < pf->nr; i++) {
		struct pf_helper *h = &pf->helpers[i];

		h->pf = pf;
		h->scratch = calloc(1, sizeof(*h->scratch));
		if (!h->scratch)
			break;
		h->scratch->opts = s->opts;
		memcpy(h->scratch->buildid_dir, s->buildid_dir, sizeof(s->buildid_dir));
		if (pthread_create(&h->thread, NULL, helper_main, h)) {
			free(h->scratch);
			h->scratch = NULL;
			break;
		}
		pf->nr_helpers++;
	}
	if (!pf->nr_helpers)
		goto fail;
	pp_debug("opening %zu files ahead on %u threads", pf->nr, pf->nr_helpers);
	s->pf = pf;
	return;
fail:
	prefetch_release(pf);
}

/*
 * Names are interned, and the symbolizer compares them by pointer (an
 * inlined call named as the function containing it is dropped): the
 * strings of a state opened in a scratch symbolizer move into the owner's.
 */
static void adopt_strings(struct symbolizer *s, struct dso_state *st)
{
	const char *p = st->path ? strtab_intern_text(&s->strings, st->path) : NULL;

	if (p)
		st->path = p;
	/* (names not yet clean are in the module, which moves with the state) */
	for (size_t i = 0; i < st->nr_syms; i++) {
		if (!st->syms[i].clean)
			continue;
		p = strtab_intern_text(&s->strings, st->syms[i].name);
		if (p)
			st->syms[i].name = p;
	}
}

bool prefetch_take(struct symbolizer *s, const struct dso *d, struct dso_state *st)
{
	struct prefetch *pf = s->pf;
	struct pf_item *it = NULL;
	bool taken = false;

	if (!pf || !d->build_id_size)
		return false;
	for (size_t i = 0; i < pf->nr && !it; i++)
		if (pf->items[i].dso.build_id_size == d->build_id_size &&
		    memcmp(pf->items[i].dso.build_id, d->build_id, d->build_id_size) == 0 &&
		    strcmp(pf->items[i].dso.path, d->path) == 0)
			it = &pf->items[i];
	if (!it)
		return false;
	pthread_mutex_lock(&pf->lock);
	while (it->state == PF_LOADING)
		pthread_cond_wait(&pf->changed, &pf->lock);
	if (it->state == PF_DONE && it->st.status != 1 && d->mapper) {
		/* not found at the listed path: the process's own root (a
		 * container's) may have it; the caller looks */
		sym_dso_release(&it->st);
		memset(&it->st, 0, sizeof(it->st));
	} else if (it->state == PF_DONE) {
		*st = it->st;
		taken = true;
	}
	it->state = PF_TAKEN; /* pending: the caller opens it itself */
	pthread_mutex_unlock(&pf->lock);
	if (taken)
		adopt_strings(s, st);
	return taken;
}

void prefetch_free(struct symbolizer *s)
{
	struct prefetch *pf = s->pf;

	if (!pf)
		return;
	pthread_mutex_lock(&pf->lock);
	pf->quit = true;
	pthread_mutex_unlock(&pf->lock);
	for (unsigned i = 0; i < pf->nr_helpers; i++)
		pthread_join(pf->helpers[i].thread, NULL);
	prefetch_release(pf);
	s->pf = NULL;
}
