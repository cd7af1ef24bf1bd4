// SPDX-License-Identifier: MIT
/*
 * roots.c - the runtimes' stack roots (see roots.h): read from the texts of
 * src/symbols/roots/, looked up by a frame's name.
 */
#include "roots.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/log.h"

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct roots_entry *)a)->function,
		      ((const struct roots_entry *)b)->function);
}

static int roots_add_runtime(struct roots *r, const char *name)
{
	char **n = realloc(r->runtimes, (r->nr_runtimes + 1) * sizeof(*n));

	if (!n)
		return PP_ENOMEM;
	r->runtimes = n;
	if (!(n[r->nr_runtimes] = strdup(name)))
		return PP_ENOMEM;
	r->nr_runtimes++;
	return PP_OK;
}

static int roots_add(struct roots *r, const char *function, bool switches)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct roots_entry *n = realloc(r->e, cap * sizeof(*n));

		if (!n)
			return PP_ENOMEM;
		r->e = n;
		r->cap = cap;
	}
	r->e[r->n].function = strdup(function);
	if (!r->e[r->n].function)
		return PP_ENOMEM;
	r->e[r->n].runtime = r->nr_runtimes ? r->runtimes[r->nr_runtimes - 1] : "";
	r->e[r->n].switches = switches;
	r->n++;
	return PP_OK;
}

/* One line, cut into words in place. */
static int parse_line(struct roots *r, char *line, const char *name, unsigned lineno)
{
	char *save = NULL, *word = strtok_r(line, " \t\r", &save), *t;
	int ret;

	if (!word || word[0] == '#')
		return PP_OK;
	if (strcmp(word, "runtime") == 0) {
		t = strtok_r(NULL, " \t\r", &save);
		if (!t || t[0] == '#' || ((word = strtok_r(NULL, " \t\r", &save)) && word[0] != '#')) {
			pp_error("'%s' line %u: a runtime line is 'runtime NAME'", name, lineno);
			return PP_ERULES;
		}
		return roots_add_runtime(r, t);
	}
	if (strcmp(word, "root") != 0 && strcmp(word, "switch") != 0) {
		pp_error("'%s' line %u: '%s' is none of 'runtime NAME', 'root FUNCTION...', "
			 "'switch FUNCTION...'", name, lineno, word);
		return PP_ERULES;
	}
	ret = PP_OK;
	for (t = strtok_r(NULL, " \t\r", &save); t && t[0] != '#' && !ret;
	     t = strtok_r(NULL, " \t\r", &save))
		ret = roots_add(r, t, word[0] == 's');
	return ret;
}

int roots_parse(struct roots *r, const char *text, const char *name)
{
	char *copy = strdup(text), *line, *next;
	unsigned lineno = 0;
	int ret = PP_OK;

	if (!copy)
		return PP_ENOMEM;
	for (line = copy; line && !ret; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		ret = parse_line(r, line, name, ++lineno);
	}
	free(copy);
	if (r->n)
		qsort(r->e, r->n, sizeof(*r->e), entry_cmp);
	return ret;
}

const struct roots_entry *roots_find(const struct roots *r, const char *function)
{
	struct roots_entry key = { .function = (char *)function };

	if (!function || !r->n)
		return NULL;
	return bsearch(&key, r->e, r->n, sizeof(*r->e), entry_cmp);
}

void roots_free(struct roots *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->e[i].function);
	for (size_t i = 0; i < r->nr_runtimes; i++)
		free(r->runtimes[i]);
	free(r->e);
	free(r->runtimes);
	memset(r, 0, sizeof(*r));
}

/* The built-in roots, parsed once; kept to the end (one small table). */
static struct roots builtin;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_parse(void)
{
	for (const struct roots_text *t = sym_roots_texts; t->name; t++)
		if (roots_parse(&builtin, t->text, t->name)) {
			/* a built-in text that does not parse is a bug the unit
			 * test catches: without it, no stack is cut */
			roots_free(&builtin);
			return;
		}
}

const struct roots_entry *sym_root_of(const char *function)
{
	pthread_once(&builtin_once, builtin_parse);
	return roots_find(&builtin, function);
}
