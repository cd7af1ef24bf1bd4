/* SPDX-License-Identifier: MIT */
/*
 * tree.h - the growing call tree: frames interned once, nodes keyed by
 * (parent, frame), self counts per counter. Internal to src/profile; the
 * finished tree leaves as struct profile's flat view (tree_finish()).
 */
#ifndef PROFILE_TREE_H
#define PROFILE_TREE_H

#include <stdint.h>

#include "../util/strtab.h"
#include "profile.h"

#define TREE_ROOT 0u
#define TREE_NONE UINT32_MAX

struct tree_node {
	uint32_t parent;
	uint32_t frame;
	uint32_t first_child, next_sibling;
};

#define TREE_INTERN_SLOTS 256

struct tree {
	struct strtab strings;
	/* tree_intern()'s last answers by the caller's pointer (its text
	 * compared: a pointer may be reused), direct-mapped; they move with
	 * the strings */
	struct {
		const char *src, *dst;
	} interned[TREE_INTERN_SLOTS];
	struct profile_frame *frames;
	size_t nr_frames, cap_frames;
	uint32_t *frame_slots;          /* open addressing: frame index + 1, 0 empty */
	size_t frame_slots_cap;
	struct tree_node *nodes;
	struct profile_counts *self;
	size_t nr_nodes, cap_nodes;
	uint32_t *node_slots;           /* open addressing on (parent, frame): node + 1 */
	size_t node_slots_cap;
	struct profile_slice *slices;   /* self values by time slice (tree_add_slice) */
	size_t nr_slices, cap_slices;
	uint32_t *slice_slots;          /* open addressing on (slice, node, counter): index + 1 */
	size_t slice_slots_cap;
	struct profile_timed *timed;    /* samples and intervals by time (tree_add_timed) */
	size_t nr_timed, cap_timed;
	bool by_line;                   /* frames keyed by file and line too (set after tree_init) */
};

/** tree_init() - an empty tree holding only the root. Return: 0 or PP_ENOMEM. */
int tree_init(struct tree *t);

/** tree_release() - free what @t holds (its strings too). */
void tree_release(struct tree *t);

/**
 * tree_intern() - copy @s into the tree's strings. Return: the copy, owned by
 * the tree, NULL for NULL or out of memory (then *err is set).
 */
const char *tree_intern(struct tree *t, const char *s, int *err);

/**
 * tree_frame() - the index of a frame, added if new. The strings must come
 * from tree_intern(). Frames are equal when function, module and flags are;
 * file and line are those of the first occurrence (with @t->by_line: when
 * file and line are too).
 * Return: the index, or TREE_NONE out of memory.
 */
uint32_t tree_frame(struct tree *t, const char *function, const char *module, const char *file,
		    uint32_t line, uint32_t flags);

/** tree_child() - the child of @parent for @frame, added if new; TREE_NONE out of memory. */
uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t frame);

/** tree_add() - add @count and @ns to @node's self value for @c. */
static inline void tree_add(struct tree *t, uint32_t node, enum counter c, uint64_t count,
			    uint64_t ns)
{
	t->self[node].count[c] += count;
	t->self[node].ns[c] += ns;
}

/**
 * tree_add_slice() - also count @count and @ns of @node for @c in time
 * slice @slice (what tree_add() added, kept by time).
 * Return: 0 or PP_ENOMEM.
 */
int tree_add_slice(struct tree *t, uint32_t slice, uint32_t node, enum counter c,
		   uint64_t count, uint64_t ns);

/**
 * tree_add_timed() - also keep what tree_add() added for @node as one
 * timed record (@r->node is set to @node). Return: 0 or PP_ENOMEM.
 */
int tree_add_timed(struct tree *t, uint32_t node, const struct profile_timed *r);

/**
 * tree_strip() - rebuild @t without the frames that have any of @flags
 * (FRAME_F_KERNEL for --no-kernel): each such node's counts and children
 * go to its nearest kept ancestor. The strings stay with @t.
 * Return: 0 or PP_ENOMEM (then @t is unchanged).
 */
int tree_strip(struct tree *t, uint32_t flags);

/**
 * tree_finish() - the flat view: nodes in DFS pre-order with children sorted
 * by frame (function, module, file, line, flags), subtrees with nothing
 * counted left out, frames renumbered in order of first use.
 * @frames, @nodes, @self, @total: set to arrays the caller frees.
 * @slices: set to the slice values with their nodes renumbered, sorted by
 * slice, node and counter (NULL when there are none); the caller frees it.
 * The tree's timed records are renumbered in place and sorted by time.
 * Return: 0 or PP_ENOMEM. The tree's strings stay with the tree.
 */
int tree_finish(struct tree *t, struct profile_frame **frames, size_t *nr_frames,
		struct profile_node **nodes, struct profile_counts **self,
		struct profile_counts **total, size_t *nr_nodes,
		struct profile_slice **slices, size_t *nr_slices);

#endif /* PROFILE_TREE_H */
