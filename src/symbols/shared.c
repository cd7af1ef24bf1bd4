// SPDX-License-Identifier: MIT
/*
 * shared.c - what symbolizers naming side by side (the namer's lanes, each
 * with its own libdw) build once for all of them: a unit's index of
 * inlined calls (inlidx.c), a unit's line table (lineidx.c). An object is
 * known by its kind, its file (the file's build id and the path of its
 * DWARF, hashed: the same offsets in every Dwarf of it) and a key in the
 * file (the unit's DIE offset); the first symbolizer to need it builds it,
 * without the lock, and the others wait - or help, where the builder
 * offers work to take (a big unit's parts). Objects never change once
 * built, so any thread reads them; they live as long as the table, which
 * lives as long as the last symbolizer holding a reference.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "priv.h"

struct shared_obj {
	uint64_t file, key;         /* key 0: an empty slot */
	uint8_t kind;
	bool building;              /* by one of them, the others wait... */
	void *job;                  /* ...or help with this (shared_offer()) */
	void *obj;                  /* built (NULL: could not be) */
	void (*destroy)(void *obj);
};

struct sym_shared {
	pthread_mutex_t lock;
	pthread_cond_t changed;     /* an object built, a job offered or done */
	struct shared_obj *objs;    /* open addressing on (kind, file, key) */
	size_t cap, nr;
	atomic_uint refs;
};

struct sym_shared *shared_new(void)
{
	struct sym_shared *sh = calloc(1, sizeof(*sh));

	if (!sh)
		return NULL;
	if (pthread_mutex_init(&sh->lock, NULL))
		goto fail;
	if (pthread_cond_init(&sh->changed, NULL))
		goto fail_lock;
	atomic_init(&sh->refs, 1);
	return sh;
fail_lock:
	pthread_mutex_destroy(&sh->lock);
fail:
	free(sh);
	return NULL;
}

struct sym_shared *shared_ref(struct sym_shared *sh)
{
	if (sh)
		atomic_fetch_add(&sh->refs, 1);
	return sh;
}

void shared_unref(struct sym_shared *sh)
{
	if (!sh || atomic_fetch_sub(&sh->refs, 1) != 1)
		return;
	for (size_t i = 0; i < sh->cap; i++)
		if (sh->objs[i].key && sh->objs[i].obj)
			sh->objs[i].destroy(sh->objs[i].obj);
	free(sh->objs);
	pthread_cond_destroy(&sh->changed);
	pthread_mutex_destroy(&sh->lock);
	free(sh);
}

static size_t obj_slot(unsigned kind, uint64_t file, uint64_t key, size_t cap)
{
	uint64_t h = (file ^ (key * 0xbf58476d1ce4e5b9ULL) ^ kind) * 0x9e3779b97f4a7c15ULL;

	return (size_t)(h >> 40) & (cap - 1);
}

/* The slot of (@kind, @file, @key), under the lock: found, or empty (room
 * made first when @insert); NULL out of memory. */
static struct shared_obj *obj_find(struct sym_shared *sh, unsigned kind, uint64_t file,
				   uint64_t key, bool insert)
{
	size_t i;

	if (insert && (sh->nr + 1) * 2 > sh->cap) {
		size_t cap = sh->cap ? sh->cap * 2 : 64;
		struct shared_obj *n = calloc(cap, sizeof(*n));

		if (!n)
			return NULL;
		for (size_t j = 0; j < sh->cap; j++) {
			const struct shared_obj *o = &sh->objs[j];

			if (!o->key)
				continue;
			for (i = obj_slot(o->kind, o->file, o->key, cap); n[i].key; i = (i + 1) & (cap - 1))
				;
			n[i] = *o;
		}
		free(sh->objs);
		sh->objs = n;
		sh->cap = cap;
	}
	for (i = obj_slot(kind, file, key, sh->cap);
	     sh->objs[i].key && (sh->objs[i].kind != kind || sh->objs[i].file != file ||
				 sh->objs[i].key != key);
	     i = (i + 1) & (sh->cap - 1))
		;
	return &sh->objs[i];
}

void *shared_get(struct sym_shared *sh, const struct shared_build *b, uint64_t file, uint64_t key,
		 void *arg, bool *built_here)
{
	struct shared_obj *o;
	void *obj;

	*built_here = false;
	pthread_mutex_lock(&sh->lock);
	for (;;) {
		o = obj_find(sh, b->kind, file, key, true);
		if (!o || !o->key)
			break;
		if (!o->building) {
			obj = o->obj;
			pthread_mutex_unlock(&sh->lock);
			return obj;
		}
		/* being built: help with it while there is work to take */
		if (!o->job || !b->help || !b->help(sh, o->job, arg))
			pthread_cond_wait(&sh->changed, &sh->lock);
	}
	if (!o) {
		pthread_mutex_unlock(&sh->lock);
		return NULL;
	}
	*o = (struct shared_obj){ .file = file, .key = key, .kind = b->kind, .building = true,
				  .destroy = b->destroy };
	sh->nr++;
	pthread_mutex_unlock(&sh->lock);

	obj = b->build(sh, file, key, arg);
	*built_here = true;

	pthread_mutex_lock(&sh->lock);
	o = obj_find(sh, b->kind, file, key, false); /* the table may have grown meanwhile */
	o->obj = obj;
	o->building = false;
	o->job = NULL;
	pthread_cond_broadcast(&sh->changed);
	pthread_mutex_unlock(&sh->lock);
	return obj;
}

void shared_offer(struct sym_shared *sh, unsigned kind, uint64_t file, uint64_t key, void *job)
{
	obj_find(sh, kind, file, key, false)->job = job;
	pthread_cond_broadcast(&sh->changed);
}

void shared_lock(struct sym_shared *sh)
{
	pthread_mutex_lock(&sh->lock);
}

void shared_unlock(struct sym_shared *sh)
{
	pthread_mutex_unlock(&sh->lock);
}

void shared_wait(struct sym_shared *sh)
{
	pthread_cond_wait(&sh->changed, &sh->lock);
}

void shared_wake(struct sym_shared *sh)
{
	pthread_cond_broadcast(&sh->changed);
}
