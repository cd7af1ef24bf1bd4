/* SPDX-License-Identifier: MIT */
/*
 * jit.c - JIT code named from /tmp/perf-PID.map, the file Node
 * (--perf-basic-prof), Python 3.12 (-X perf) and the JVM's perf-map-agent
 * write: one "START SIZE NAME" line per function, START and SIZE in hex.
 * Looked up under --symfs first. Each pid's file is read once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/log.h"
#include "priv.h"

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static FILE *open_map(const struct symbolizer *s, uint32_t pid)
{
	char path[4096];
	FILE *f = NULL;

	if (s->opts.symfs) {
		snprintf(path, sizeof(path), "%s/tmp/perf-%" PRIu32 ".map", s->opts.symfs, pid);
		f = fopen(path, "r");
	}
	if (!f) {
		snprintf(path, sizeof(path), "/tmp/perf-%" PRIu32 ".map", pid);
		f = fopen(path, "r");
	}
	return f;
}

static struct jit_map *load(struct symbolizer *s, uint32_t pid)
{
	struct jit_map *n = realloc(s->jits, (s->nr_jits + 1) * sizeof(*n)), *m;
	char line[4096];
	size_t cap = 0;
	FILE *f;

	if (!n)
		return NULL;
	s->jits = n;
	m = &s->jits[s->nr_jits++];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	f = open_map(s, pid);
	if (!f)
		return m;
	while (fgets(line, sizeof(line), f)) {
		uint64_t start, size;
		int pos;

		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &pos) != 2 || !size)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (m->nr == cap) {
			struct jit_sym *js;

			cap = cap ? cap * 2 : 256;
			js = realloc(m->syms, cap * sizeof(*js));
			if (!js)
				break;
			m->syms = js;
		}
		m->syms[m->nr].start = start;
		m->syms[m->nr].end = start + size;
		m->syms[m->nr].name = strtab_intern(&s->strings, line + pos);
		if (m->syms[m->nr].name)
			m->nr++;
	}
	fclose(f);
	if (m->nr)
		qsort(m->syms, m->nr, sizeof(*m->syms), cmp_jit);
	pp_debug("%zu JIT symbols for pid %" PRIu32, m->nr, pid);
	return m;
}

bool jit_lookup(struct symbolizer *s, const struct raw_frame *f, struct sym_frame *out)
{
	uint64_t addr = f->ret ? f->addr - 1 : f->addr;
	struct jit_map *m = NULL;
	size_t lo;

	for (size_t i = 0; i < s->nr_jits; i++)
		if (s->jits[i].pid == f->pid)
			m = &s->jits[i];
	if (!m)
		m = load(s, f->pid);
	if (!m || !m->nr)
		return false;
	lo = sym_count_at_or_below(m->syms, m->nr, sizeof(*m->syms), addr);
	if (lo == 0 || addr >= m->syms[lo - 1].end)
		return false;
	out->function = m->syms[lo - 1].name;
	out->sym_offset = f->addr - m->syms[lo - 1].start;
	out->flags |= FRAME_F_JIT;
	if (!out->module)
		out->module = "[jit]";
	out->cause = SYM_NAMED;
	return true;
}

void jit_free(struct symbolizer *s)
{
	for (size_t i = 0; i < s->nr_jits; i++)
		free(s->jits[i].syms);
	free(s->jits);
	s->jits = NULL;
	s->nr_jits = 0;
}
