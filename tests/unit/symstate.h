/* SPDX-License-Identifier: MIT */
/*
 * symstate.h - for unit tests naming their own binary: its state in a
 * symbolizer. Include after cmocka.h and symbols/priv.h.
 */
#ifndef TESTS_UNIT_SYMSTATE_H
#define TESTS_UNIT_SYMSTATE_H

/* The state of the file with the most symbols @s has open: the test's binary. */
static inline struct dso_state *symstate_biggest(struct symbolizer *s)
{
	struct dso_state *big = NULL;

	for (size_t i = 0; i < s->nr_states; i++)
		if (s->states[i].nr_syms && (!big || s->states[i].nr_syms > big->nr_syms))
			big = &s->states[i];
	assert_non_null(big);
	return big;
}

#endif
