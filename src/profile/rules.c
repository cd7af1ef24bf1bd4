/* SPDX-License-Identifier: MIT */
#include "rules.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/error.h"
#include "../util/log.h"

static uint64_t state_bit(char c)
{
	unsigned u = (unsigned char)c;

	return u >= '@' && u - '@' < 64 ? 1ULL << (u - '@') : 0;
}

/* "R", "S,D,I" or "*" into a state mask; 0 if malformed. */
static uint64_t parse_states(const char *s)
{
	uint64_t m = 0;

	if (strcmp(s, "*") == 0)
		return ~0ULL;
	for (;;) {
		if (!isalpha((unsigned char)s[0]) || (s[1] && s[1] != ','))
			return 0;
		m |= state_bit(s[0]);
		if (!s[1])
			return m;
		s += 2;
	}
}

static int parse_line(struct rules *rs, char *line, const char *name, unsigned lineno)
{
	char *states, *pattern, *counter, *extra, *save = NULL;
	struct rule *r;
	int c;

	states = strtok_r(line, " \t\r", &save);
	if (!states || states[0] == '#')
		return 0;
	pattern = strtok_r(NULL, " \t\r", &save);
	counter = strtok_r(NULL, " \t\r", &save);
	extra = strtok_r(NULL, " \t\r", &save);
	if (!pattern || !counter || (extra && extra[0] != '#')) {
		pp_error("'%s' line %u: a rule is STATES FUNCTION COUNTER", name, lineno);
		return PP_ERULES;
	}
	if (rs->n == RULES_MAX) {
		pp_error("'%s' line %u: more than %d rules", name, lineno, RULES_MAX);
		return PP_ERULES;
	}
	r = &rs->r[rs->n];
	r->states = parse_states(states);
	if (!r->states) {
		pp_error("'%s' line %u: bad states '%s' (letters joined by commas, or *)", name,
			 lineno, states);
		return PP_ERULES;
	}
	c = counter_parse(counter);
	if (c < 0 || c == CNT_ON_CPU || c == CNT_IDLE) {
		pp_error("'%s' line %u: '%s' is not an off-CPU counter (preempted, lock, io, "
			 "sleep, timed-sleep)", name, lineno, counter);
		return PP_ERULES;
	}
	r->counter = (enum counter)c;
	r->pattern = NULL;
	if (strcmp(pattern, "*") != 0 && !(r->pattern = strdup(pattern)))
		return PP_ENOMEM;
	rs->n++;
	return 0;
}

int rules_parse(struct rules *rs, const char *text, const char *name)
{
	char *copy = strdup(text), *line;
	unsigned lineno = 0;
	int ret = 0;

	memset(rs, 0, sizeof(*rs));
	if (!copy)
		return PP_ENOMEM;
	/* line by line, so that messages can give the line number */
	for (line = copy; !ret && line;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		lineno++;
		ret = parse_line(rs, line, name, lineno);
		line = nl ? nl + 1 : NULL;
	}
	free(copy);
	if (!ret && !rs->n) {
		pp_error("'%s' holds no rules", name);
		ret = PP_ERULES;
	}
	if (ret)
		rules_free(rs);
	return ret;
}

int rules_load(struct rules *rs, const char *path)
{
	FILE *f;
	char *text = NULL;
	size_t len = 0;
	int ret;

	if (!path)
		return rules_parse(rs, profile_default_rules, "built-in rules");
	f = fopen(path, "r");
	if (!f) {
		pp_error("cannot open state rules '%s': %s", path, strerror(errno));
		return PP_ENOENT;
	}
	text = malloc(1 << 20);
	if (!text) {
		fclose(f);
		return PP_ENOMEM;
	}
	len = fread(text, 1, (1 << 20) - 1, f);
	text[len] = '\0';
	ret = ferror(f) ? PP_EIO : 0;
	if (!ret && !feof(f)) {
		pp_error("state rules '%s' are larger than 1 MiB", path);
		ret = PP_ERULES;
	}
	fclose(f);
	if (!ret)
		ret = rules_parse(rs, text, path);
	free(text);
	return ret;
}

void rules_free(struct rules *rs)
{
	for (unsigned i = 0; i < rs->n; i++)
		free(rs->r[i].pattern);
	rs->n = 0;
}

uint64_t rules_frame_mask(const struct rules *rs, const char *function)
{
	uint64_t m = 0;

	if (!function)
		return 0;
	for (unsigned i = 0; i < rs->n; i++)
		if (rs->r[i].pattern && fnmatch(rs->r[i].pattern, function, 0) == 0)
			m |= 1ULL << i;
	return m;
}

enum counter rules_classify(const struct rules *rs, char state, uint64_t stack_mask)
{
	uint64_t sb = state_bit(state);

	for (unsigned i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->r[i];

		if ((r->states & sb) && (!r->pattern || (stack_mask & (1ULL << i))))
			return r->counter;
	}
	return CNT_SLEEP;
}
