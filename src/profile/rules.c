/* SPDX-License-Identifier: MIT */
/*
 * rules.c - parsing and matching the off-CPU state rules (see rules.h).
 */
#include "rules.h"

#include <ctype.h>
#include <pthread.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syscall.h"
#include "../util/error.h"
#include "../util/log.h"

#define RULES_FILE_MAX (1 << 20)

uint64_t rules_state_bit(char c)
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
		m |= rules_state_bit(s[0]);
		if (!s[1])
			return m;
		s += 2;
	}
}

/* How @r's pattern is matched: a literal at a place where it can be. */
static void pattern_kind(struct rule *r)
{
	const char *p = r->pattern;
	size_t len = strlen(p);
	bool lead = len && p[0] == '*', trail = len > 1 && p[len - 1] == '*';
	size_t b = lead, e = len - trail;

	r->match = MATCH_GLOB;
	if (b >= e)
		return;
	for (size_t i = b; i < e; i++)
		if (strchr("*?[\\", p[i]))
			return;
	r->lit = p + b;
	r->lit_len = e - b;
	r->match = lead && trail ? MATCH_INFIX : lead ? MATCH_SUFFIX : trail ? MATCH_PREFIX :
									    MATCH_EXACT;
}

bool rules_match(const struct rules *rs, size_t i, const char *fn)
{
	const struct rule *r = &rs->r[i];
	size_t n;

	switch (r->match) {
	case MATCH_ANY:
		return true;
	case MATCH_EXACT:
		return strcmp(fn, r->lit) == 0;
	case MATCH_PREFIX:
		return strncmp(fn, r->lit, r->lit_len) == 0;
	case MATCH_SUFFIX:
		n = strlen(fn);
		return n >= r->lit_len && memcmp(fn + n - r->lit_len, r->lit, r->lit_len) == 0;
	case MATCH_INFIX:
		return memmem(fn, strlen(fn), r->lit, r->lit_len) != NULL;
	default:
		return fnmatch(r->pattern, fn, 0) == 0;
	}
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * size);
	if (!p)
		return PP_ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* "runtime NAME [MODULE-PATTERN...]" */
static int parse_runtime(struct rules *rs, char **tok, size_t nt, enum rule_set set,
			 const char *name, unsigned lineno)
{
	struct rule_runtime *rt;

	if (nt < 2) {
		pp_error("'%s' line %u: a runtime line is 'runtime NAME [MODULE-PATTERN...]'", name,
			 lineno);
		return PP_ERULES;
	}
	if (rs->nrt >= UINT16_MAX - 1) {
		pp_error("'%s' line %u: too many runtimes", name, lineno);
		return PP_ERULES;
	}
	if (grow((void **)&rs->rt, &rs->cap_rt, rs->nrt + 1, sizeof(*rs->rt)))
		return PP_ENOMEM;
	rt = &rs->rt[rs->nrt];
	memset(rt, 0, sizeof(*rt));
	rt->set = (uint8_t)set;
	rs->nrt++;
	if (!(rt->name = strdup(tok[1])))
		return PP_ENOMEM;
	if (nt > 2 && !(rt->modules = calloc(nt - 2, sizeof(*rt->modules))))
		return PP_ENOMEM;
	for (size_t i = 2; i < nt; i++) {
		if (!(rt->modules[rt->nr_modules] = strdup(tok[i])))
			return PP_ENOMEM;
		rt->nr_modules++;
	}
	return 0;
}

/* "advice TEXT..." or "note TEXT..." (@word) for the runtime above it:
 * the rest of the line. */
static int parse_text(struct rules *rs, const char *word, const char *rest, enum rule_set set,
		      const char *name, unsigned lineno)
{
	struct rule_runtime *rt = rs->nrt ? &rs->rt[rs->nrt - 1] : NULL;
	char **to;
	size_t len;

	while (*rest == ' ' || *rest == '\t')
		rest++;
	len = strcspn(rest, "#\r");
	while (len && (rest[len - 1] == ' ' || rest[len - 1] == '\t'))
		len--;
	if (!rt || rt->set != set || !len) {
		pp_error("'%s' line %u: '%s TEXT' follows a runtime line", name, lineno, word);
		return PP_ERULES;
	}
	to = strcmp(word, "note") == 0 ? &rt->note : &rt->advice;
	free(*to);
	*to = strndup(rest, len);
	return *to ? 0 : PP_ENOMEM;
}

/* Rule @i's pattern @pat ("*" for none). */
static int rule_pattern(struct rules *rs, size_t i, const char *pat, size_t len)
{
	struct rule *r = &rs->r[i];

	r->match = MATCH_ANY;
	if (len == 1 && pat[0] == '*')
		return 0;
	if (!(r->pattern = strndup(pat, len)))
		return PP_ENOMEM;
	pattern_kind(r);
	return 0;
}

static int parse_rule(struct rules *rs, char **tok, size_t nt, enum rule_set set,
		      const char *name, unsigned lineno)
{
	enum rule_side side = RULE_BLOCKED;
	const char *amp;
	struct rule *r;
	size_t at;
	int c = -1, ret;
	bool defer;

	if (nt && strcmp(tok[0], "woken-by") == 0) {
		side = RULE_WAKER;
		tok++;
		nt--;
	}
	if (nt != 3) {
		pp_error("'%s' line %u: a rule is [woken-by] STATES FUNCTION COUNTER", name,
			 lineno);
		return PP_ERULES;
	}
	/* FUNCTION&ALSO: both patterns match a frame of the stack;
	 * FUNCTION^CALLER: CALLER matches the frame that called FUNCTION's
	 * (the next one out; not '<', which C++ templates' names hold) */
	amp = strpbrk(tok[1], "&^");
	if (amp && (amp == tok[1] || !amp[1] || strpbrk(amp + 1, "&^"))) {
		pp_error("'%s' line %u: bad function '%s' (PATTERN, PATTERN&PATTERN or "
			 "PATTERN^CALLER)", name, lineno, tok[1]);
		return PP_ERULES;
	}
	defer = strcmp(tok[2], "defer") == 0;
	if (!defer)
		c = counter_parse(tok[2]);
	/* idle: a thread with nothing to do (a pool's worker, a scheduler
	 * thread with nothing to run), as the idle task is */
	if (!defer && (c < 0 || c == CNT_ON_CPU)) {
		pp_error("'%s' line %u: '%s' is not an off-CPU counter (preempted, lock, io, "
			 "sleep, timed-sleep, idle) or defer", name, lineno, tok[2]);
		return PP_ERULES;
	}
	if (rs->n + 2 >= INT32_MAX || grow((void **)&rs->r, &rs->cap, rs->n + 2, sizeof(*rs->r)))
		return PP_ENOMEM;
	at = rs->n;
	r = &rs->r[at];
	memset(r, 0, sizeof(*r));
	r->states = parse_states(tok[0]);
	if (!r->states) {
		pp_error("'%s' line %u: bad states '%s' (letters joined by commas, or *)", name,
			 lineno, tok[0]);
		return PP_ERULES;
	}
	r->counter = defer ? 0 : (uint8_t)c;
	r->defer = defer;
	r->set = (uint8_t)set;
	r->side = (uint8_t)side;
	r->line = lineno;
	r->runtime = rs->nrt && rs->rt[rs->nrt - 1].set == set ? (uint16_t)rs->nrt : 0;
	ret = rule_pattern(rs, at, tok[1], amp ? (size_t)(amp - tok[1]) : strlen(tok[1]));
	if (ret)
		return ret;
	rs->n++;
	if (!amp)
		return 0;
	/* the second pattern: a rule of its own that decides nothing (no
	 * states), looked for among the stack's matches by the first */
	if (!rs->r[at].pattern || strcmp(amp + 1, "*") == 0) {
		pp_error("'%s' line %u: '%s': both sides of '%c' name functions", name, lineno,
			 tok[1], *amp);
		return PP_ERULES;
	}
	r = &rs->r[rs->n];
	*r = rs->r[at];
	r->states = 0;
	r->pattern = NULL;
	ret = rule_pattern(rs, rs->n, amp + 1, strlen(amp + 1));
	if (ret)
		return ret;
	rs->r[at].also = (uint32_t)rs->n + 1;
	if (*amp == '^')
		rs->r[rs->n].caller_of = (uint32_t)at + 1;
	rs->n++;
	return 0;
}

/* "syscall FUNCTION CALL": the runtime above it (if any) wraps CALL in FUNCTION. */
static int parse_syscall(struct rules *rs, char **tok, size_t nt, enum rule_set set,
			 const char *name, unsigned lineno)
{
	struct rule_syscall *sc;
	int call;

	if (nt != 3) {
		pp_error("'%s' line %u: a syscall line is 'syscall FUNCTION CALL'", name, lineno);
		return PP_ERULES;
	}
	call = sys_call_named(tok[2]);
	if (!call) {
		pp_error("'%s' line %u: '%s' is not a system call perfport reads the arguments "
			 "of", name, lineno, tok[2]);
		return PP_ERULES;
	}
	if (grow((void **)&rs->sys, &rs->cap_sys, rs->nr_sys + 1, sizeof(*rs->sys)))
		return PP_ENOMEM;
	sc = &rs->sys[rs->nr_sys];
	sc->call = call;
	sc->runtime = rs->nrt && rs->rt[rs->nrt - 1].set == set ? (uint16_t)rs->nrt : 0;
	if (!(sc->pattern = strdup(tok[1])))
		return PP_ENOMEM;
	rs->nr_sys++;
	return 0;
}

/*
 * The next word of *@s into *@word, NUL-terminated in place: a run of
 * non-blanks, or a "quoted text" (blanks and # in it are text). *@s moves
 * past it. Return: 1 a word, 0 the line's end (or its # comment), -1 a
 * quote not closed, or not followed by a blank.
 */
static int park_word(char **s, char **word)
{
	char *p = *s + strspn(*s, " \t\r"), *end;

	if (!*p || *p == '#')
		return 0;
	if (*p == '"') {
		end = strchr(p + 1, '"');
		if (!end || (end[1] && !strchr(" \t\r", end[1])))
			return -1;
		*word = p + 1;
	} else {
		end = p + strcspn(p, " \t\r");
		*word = p;
	}
	*s = *end ? end + 1 : end;
	*end = '\0';
	return 1;
}

static void park_free(struct rule_park *k)
{
	free(k->function);
	free(k->interpreted);
	free(k->waits);
	free(k->compile);
	free(k->map);
}

/* "park FUNCTION KEY VALUE..." for the runtime above it: @rest, the line
 * after the word park. */
static int parse_park(struct rules *rs, char *rest, enum rule_set set, const char *name,
		      unsigned lineno)
{
	static const char *const keys[] = { "interpreted", "waits", "compile", "map" };
	struct rule_park k = { 0 };
	char **field[] = { &k.interpreted, &k.waits, &k.compile, &k.map };
	char *fn = NULL, *key, *value;
	int w, ret = PP_ERULES;

	if (!rs->nrt || rs->rt[rs->nrt - 1].set != set) {
		pp_error("'%s' line %u: a park line follows a runtime line", name, lineno);
		return PP_ERULES;
	}
	if ((w = park_word(&rest, &fn)) <= 0) {
		pp_error("'%s' line %u: %s", name, lineno, w < 0 ? "a quote is not closed" :
			 "a park line is 'park FUNCTION waits TEXT map TEXT [interpreted NAME "
			 "compile TEXT]'");
		return PP_ERULES;
	}
	while ((w = park_word(&rest, &key)) > 0) {
		size_t i = 0;

		while (i < sizeof(keys) / sizeof(keys[0]) && strcmp(key, keys[i]))
			i++;
		if (i == sizeof(keys) / sizeof(keys[0])) {
			pp_error("'%s' line %u: unknown park key '%s' (interpreted, waits, compile, "
				 "map)", name, lineno, key);
			goto out;
		}
		if (*field[i]) {
			pp_error("'%s' line %u: park key '%s' is given twice", name, lineno, key);
			goto out;
		}
		w = park_word(&rest, &value);
		if (w <= 0 || !*value) {
			pp_error("'%s' line %u: park key '%s' %s", name, lineno, key,
				 w < 0 ? "has a quote not closed" : "has no value");
			goto out;
		}
		if (!(*field[i] = strdup(value))) {
			ret = PP_ENOMEM;
			goto out;
		}
	}
	if (w < 0) {
		pp_error("'%s' line %u: a quote is not closed", name, lineno);
		goto out;
	}
	for (size_t i = 1; i < sizeof(keys) / sizeof(keys[0]); i += 2)
		if (!*field[i]) {   /* waits, map */
			pp_error("'%s' line %u: park '%s' has no '%s'", name, lineno, fn, keys[i]);
			goto out;
		}
	if (!k.interpreted != !k.compile) {
		pp_error("'%s' line %u: park '%s': 'interpreted' and 'compile' go together", name,
			 lineno, fn);
		goto out;
	}
	ret = PP_ENOMEM;
	if (!(k.function = strdup(fn)) ||
	    grow((void **)&rs->parks, &rs->cap_parks, rs->nr_parks + 1, sizeof(*rs->parks)))
		goto out;
	k.runtime = (uint16_t)rs->nrt;
	rs->parks[rs->nr_parks++] = k;
	return 0;
out:
	park_free(&k);
	return ret;
}

/* "interrupt PATTERN..." or "yield PATTERN...": the patterns, into @l. */
static int parse_patterns(struct rule_patterns *l, char **tok, size_t nt, const char *name,
			  unsigned lineno)
{
	if (nt < 2) {
		pp_error("'%s' line %u: a%s %s line is '%s PATTERN...'", name, lineno,
			 tok[0][0] == 'i' ? "n" : "", tok[0], tok[0]);
		return PP_ERULES;
	}
	for (size_t i = 1; i < nt; i++) {
		if (grow((void **)&l->p, &l->cap, l->n + 1, sizeof(*l->p)))
			return PP_ENOMEM;
		if (!(l->p[l->n] = strdup(tok[i])))
			return PP_ENOMEM;
		l->n++;
	}
	return 0;
}

static int parse_line(struct rules *rs, char *line, enum rule_set set, const char *name,
		      unsigned lineno)
{
	char *tok[16], *save = NULL, *t, *first = line + strspn(line, " \t\r");
	size_t nt = 0;

	/* advice and note are free text: the rest of their line */
	if (strncmp(first, "advice", 6) == 0 && (!first[6] || strchr(" \t\r", first[6])))
		return parse_text(rs, "advice", first + 6, set, name, lineno);
	if (strncmp(first, "note", 4) == 0 && (!first[4] || strchr(" \t\r", first[4])))
		return parse_text(rs, "note", first + 4, set, name, lineno);
	/* a park's values may be quoted texts */
	if (strncmp(first, "park", 4) == 0 && (!first[4] || strchr(" \t\r", first[4])))
		return parse_park(rs, first + 4, set, name, lineno);
	for (t = strtok_r(line, " \t\r", &save); t && t[0] != '#'; t = strtok_r(NULL, " \t\r", &save)) {
		if (nt == sizeof(tok) / sizeof(tok[0])) {
			pp_error("'%s' line %u: too many words", name, lineno);
			return PP_ERULES;
		}
		tok[nt++] = t;
	}
	if (!nt)
		return 0;
	if (strcmp(tok[0], "runtime") == 0)
		return parse_runtime(rs, tok, nt, set, name, lineno);
	if (strcmp(tok[0], "wrappers") == 0) {
		if (nt != 1 || !rs->nrt || rs->rt[rs->nrt - 1].set != set) {
			pp_error("'%s' line %u: 'wrappers' stands alone, after a runtime line", name,
				 lineno);
			return PP_ERULES;
		}
		rs->rt[rs->nrt - 1].wrappers = true;
		return 0;
	}
	if (strcmp(tok[0], "syscall") == 0)
		return parse_syscall(rs, tok, nt, set, name, lineno);
	if (strcmp(tok[0], "interrupt") == 0)
		return parse_patterns(&rs->interrupts, tok, nt, name, lineno);
	if (strcmp(tok[0], "yield") == 0)
		return parse_patterns(&rs->yields, tok, nt, name, lineno);
	return parse_rule(rs, tok, nt, set, name, lineno);
}

int rules_parse(struct rules *rs, const char *text, const char *name, enum rule_set set)
{
	char *copy = strdup(text), *line;
	unsigned lineno = 0;
	size_t before = rs->n, rt_before = rs->nrt, sys_before = rs->nr_sys;
	int ret = 0;

	if (!copy)
		return PP_ENOMEM;
	/* line by line, so that messages can give the line number; the text
	 * is not restored (strtok_r writes into the copy) */
	for (line = copy; !ret && line;) {
		char *nl = strchr(line, '\n');

		if (nl)
			*nl = '\0';
		lineno++;
		ret = parse_line(rs, line, set, name, lineno);
		line = nl ? nl + 1 : NULL;
	}
	free(copy);
	if (!ret && rs->n == before && rs->nrt == rt_before && rs->nr_sys == sys_before) {
		pp_error("'%s' holds no rules", name);
		ret = PP_ERULES;
	}
	return ret;
}

static int read_text(const char *path, char **out)
{
	FILE *f = fopen(path, "r");
	char *text;
	size_t len;
	int ret = 0;

	*out = NULL;
	if (!f) {
		pp_error("cannot open state rules '%s': %s", path, strerror(errno));
		return PP_ENOENT;
	}
	text = malloc(RULES_FILE_MAX);
	if (!text) {
		fclose(f);
		return PP_ENOMEM;
	}
	len = fread(text, 1, RULES_FILE_MAX - 1, f);
	text[len] = '\0';
	if (ferror(f)) {
		pp_error("cannot read state rules '%s': %s", path, strerror(errno));
		ret = PP_EIO;
	} else if (!feof(f)) {
		pp_error("state rules '%s' are larger than 1 MiB", path);
		ret = PP_ERULES;
	} else if (memchr(text, '\0', len)) {
		pp_error("state rules '%s' are not text", path);
		ret = PP_ERULES;
	}
	fclose(f);
	if (ret)
		free(text);
	else
		*out = text;
	return ret;
}

void rules_index(struct rules *rs)
{
	for (int s = 0; s < RULE_SETS; s++)
		for (int d = 0; d < RULE_SIDES; d++)
			for (int l = 0; l < 64; l++)
				rs->any_first[s][d][l] = SIZE_MAX;
	for (size_t i = rs->n; i-- > 0;) {
		const struct rule *r = &rs->r[i];

		if (r->pattern)
			continue;
		for (int l = 0; l < 64; l++)
			if (r->states & (1ULL << l))
				rs->any_first[r->set][r->side][l] = i;
	}
}

int rules_setup(struct rules *rs, const char *user_path)
{
	int ret = 0;

	memset(rs, 0, sizeof(*rs));
	if (user_path) {
		char *text;

		ret = read_text(user_path, &text);
		if (!ret) {
			ret = rules_parse(rs, text, user_path, RULE_SET_USER);
			free(text);
		}
	}
	for (const struct rules_text *t = profile_program_rules; !ret && t->name; t++)
		ret = rules_parse(rs, t->text, t->name, RULE_SET_PROGRAM);
	if (!ret)
		ret = rules_parse(rs, profile_default_rules, "state-rules", RULE_SET_KERNEL);
	if (ret) {
		rules_free(rs);
		return ret;
	}
	rules_index(rs);
	return 0;
}

static void patterns_free(struct rule_patterns *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i]);
	free(l->p);
}

void rules_free(struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->r[i].pattern);
	for (size_t i = 0; i < rs->nrt; i++) {
		for (size_t k = 0; k < rs->rt[i].nr_modules; k++)
			free(rs->rt[i].modules[k]);
		free(rs->rt[i].modules);
		free(rs->rt[i].name);
		free(rs->rt[i].advice);
		free(rs->rt[i].note);
	}
	for (size_t i = 0; i < rs->nr_sys; i++)
		free(rs->sys[i].pattern);
	free(rs->sys);
	for (size_t i = 0; i < rs->nr_parks; i++)
		park_free(&rs->parks[i]);
	free(rs->parks);
	patterns_free(&rs->interrupts);
	patterns_free(&rs->yields);
	free(rs->rt);
	free(rs->r);
	memset(rs, 0, sizeof(*rs));
}

size_t rules_frame_matches(const struct rules *rs, const char *function, uint32_t *out,
			   size_t max)
{
	size_t n = 0;

	if (!function)
		return 0;
	for (size_t i = 0; i < rs->n; i++)
		if (rs->r[i].pattern && rules_match(rs, i, function)) {
			if (n < max)
				out[n] = (uint32_t)i;
			n++;
		}
	return n;
}

static bool patterns_match(const struct rule_patterns *l, const char *function)
{
	if (!function)
		return false;
	for (size_t i = 0; i < l->n; i++)
		if (fnmatch(l->p[i], function, 0) == 0)
			return true;
	return false;
}

bool rules_is_interrupt(const struct rules *rs, const char *function)
{
	return patterns_match(&rs->interrupts, function);
}

bool rules_is_yield(const struct rules *rs, const char *function)
{
	return patterns_match(&rs->yields, function);
}

static int rules_cmp_id(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

long rules_first(const struct rules *rs, enum rule_set set, enum rule_side side, char state,
		 const uint32_t *matched, size_t n)
{
	uint64_t bit = rules_state_bit(state);
	size_t best;

	if (!bit)
		return -1;
	best = rs->any_first[set][side][__builtin_ctzll(bit)];
	for (size_t k = 0; k < n && matched[k] < best; k++) {
		const struct rule *r = &rs->r[matched[k]];

		if (r->set == set && r->side == side && (r->states & bit) &&
		    (!r->also || bsearch(&(uint32_t){ r->also - 1 }, matched, n,
					 sizeof(*matched), rules_cmp_id))) {
			best = matched[k];
			break;
		}
	}
	return best == SIZE_MAX ? -1 : (long)best;
}

/* The built-in program rules, parsed once for profile_runtime_of(), and
 * their parks as profile_parks() gives them. */
static struct rules builtin_runtimes;
static struct profile_park *builtin_parks;
static size_t builtin_nr_parks;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_parse(void)
{
	int ret = 0;

	for (const struct rules_text *t = profile_program_rules; !ret && t->name; t++)
		ret = rules_parse(&builtin_runtimes, t->text, t->name, RULE_SET_PROGRAM);
	if (ret) {
		rules_free(&builtin_runtimes);
		return;
	}
	builtin_parks = calloc(builtin_runtimes.nr_parks + 1, sizeof(*builtin_parks));
	if (!builtin_parks)
		return;
	for (size_t i = 0; i < builtin_runtimes.nr_parks; i++)
		rules_park_view(&builtin_runtimes, i, &builtin_parks[i]);
	builtin_nr_parks = builtin_runtimes.nr_parks;
}

void rules_park_view(const struct rules *rs, size_t i, struct profile_park *out)
{
	const struct rule_park *k = &rs->parks[i];

	out->runtime = rs->rt[k->runtime - 1].name;
	out->park = k->function;
	out->interpreted = k->interpreted;
	out->waits = k->waits;
	out->compile = k->compile;
	out->map = k->map;
}

const struct profile_park *profile_parks(size_t *n)
{
	pthread_once(&builtin_once, builtin_parse);
	*n = builtin_nr_parks;
	return builtin_parks;
}

int rules_wrapper_call(const struct rules *rs, const char *function, const char *module)
{
	const struct rule_runtime *owner;

	if (!function || !rs->nr_sys)
		return 0;
	owner = rules_runtime_of(rs, module);
	for (size_t i = 0; i < rs->nr_sys; i++) {
		const struct rule_syscall *sc = &rs->sys[i];

		if (owner && sc->runtime && &rs->rt[sc->runtime - 1] != owner)
			continue;
		if (fnmatch(sc->pattern, function, 0) == 0)
			return sc->call;
	}
	return 0;
}

const struct rule_runtime *rules_runtime_of(const struct rules *rs, const char *module)
{
	const char *base;

	if (!module)
		return NULL;
	base = strrchr(module, '/') ? strrchr(module, '/') + 1 : module;
	for (size_t i = 0; i < rs->nrt; i++)
		for (size_t k = 0; k < rs->rt[i].nr_modules; k++)
			if (fnmatch(rs->rt[i].modules[k], base, 0) == 0)
				return &rs->rt[i];
	return NULL;
}

const char *profile_runtime_of(const char *module, const char **advice)
{
	const struct rule_runtime *rt;

	pthread_once(&builtin_once, builtin_parse);
	rt = rules_runtime_of(&builtin_runtimes, module);
	if (advice)
		*advice = rt ? rt->advice : NULL;
	return rt ? rt->name : NULL;
}

const char *profile_runtime_note(const char *name)
{
	pthread_once(&builtin_once, builtin_parse);
	for (size_t i = 0; name && i < builtin_runtimes.nrt; i++)
		if (!strcmp(builtin_runtimes.rt[i].name, name))
			return builtin_runtimes.rt[i].note;
	return NULL;
}

bool profile_module_is_wrapper(const char *module)
{
	const struct rule_runtime *rt;

	pthread_once(&builtin_once, builtin_parse);
	rt = rules_runtime_of(&builtin_runtimes, module);
	return rt && rt->wrappers;
}
