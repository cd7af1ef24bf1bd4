/* SPDX-License-Identifier: MIT */
/*
 * dwname.c - the name of an inlined call from its DWARF.
 *
 * An inlined call has no symbol of its own: its name is its DIE's linkage
 * name, demangled. GCC gives none to the call operator of a lambda (and to
 * other functions defined inside a function), whose DW_AT_name is then a
 * bare "operator()": a lambda's name is qualified here from the DIE's scopes as
 * the demangler spells them - "main::{lambda(long)#3}::operator()", the
 * closure numbered among its function's lambdas of the same parameters, as
 * the Itanium ABI numbers them - so that each lambda keeps the name perf and
 * the symbol table give it when it is not inlined.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <libiberty/demangle.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "priv.h"

#define NAME_MAX_LEN 1024
#define MAX_DEPTH 8

/* the index of the module being named (its units' DIE parents), for the
 * scopes of a DIE without a walk of its unit; set per dwname_qualified() */
static _Thread_local struct inl_index *cur_index;

/* A string being built in a fixed buffer; truncation is an error. */
struct sb {
	char s[NAME_MAX_LEN];
	size_t n;
	bool over;
	bool lambda;          /* a closure was named */
};

static void sb_add(struct sb *b, const char *t)
{
	size_t l = strlen(t);

	if (b->n + l >= sizeof(b->s)) {
		b->over = true;
		return;
	}
	memcpy(b->s + b->n, t, l + 1);
	b->n += l;
}

static const char *die_string(Dwarf_Die *die, int at)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, at, &a) ? dwarf_formstring(&a) : NULL;
}

/* What @die is an instance of: through abstract origins and specifications. */
static void die_decl(Dwarf_Die *die, Dwarf_Die *out)
{
	Dwarf_Die cur = *die, next;
	Dwarf_Attribute a;

	for (int i = 0; i < MAX_DEPTH; i++) {
		if (!(dwarf_attr(&cur, DW_AT_abstract_origin, &a) ||
		      dwarf_attr(&cur, DW_AT_specification, &a)) ||
		    !dwarf_formref_die(&a, &next))
			break;
		cur = next;
	}
	*out = cur;
}

/* A base type as the demangler spells it (DWARF has "long unsigned int"). */
static const char *base_name(const char *n)
{
	static const char *const map[][2] = {
		{ "long int", "long" }, { "long unsigned int", "unsigned long" },
		{ "short int", "short" }, { "short unsigned int", "unsigned short" },
		{ "long long int", "long long" }, { "long long unsigned int", "unsigned long long" },
		{ "_Bool", "bool" }, { "__int128 unsigned", "unsigned __int128" },
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(n, map[i][0]))
			return map[i][1];
	return n;
}

static bool scope_prefix(Dwarf_Die *die, struct sb *b, int depth);

/* The type @die as the demangler prints it; false for what it cannot spell. */
static bool type_name(Dwarf_Die *die, struct sb *b, int depth)
{
	Dwarf_Attribute a;
	Dwarf_Die inner;
	const char *n;
	bool has_inner;

	if (depth > MAX_DEPTH)
		return false;
	if (!die) {
		sb_add(b, "void");
		return true;
	}
	has_inner = dwarf_attr(die, DW_AT_type, &a) && dwarf_formref_die(&a, &inner);
	switch (dwarf_tag(die)) {
	case DW_TAG_base_type:
		if (!(n = dwarf_diename(die)))
			return false;
		sb_add(b, base_name(n));
		return true;
	case DW_TAG_unspecified_type:
		if (!(n = dwarf_diename(die)))
			return false;
		sb_add(b, !strcmp(n, "decltype(nullptr)") ? "decltype(nullptr)" : n);
		return true;
	case DW_TAG_typedef:
		return type_name(has_inner ? &inner : NULL, b, depth + 1);
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (has_inner && dwarf_tag(&inner) == DW_TAG_subroutine_type)
			return false;
		if (!type_name(has_inner ? &inner : NULL, b, depth + 1))
			return false;
		sb_add(b, dwarf_tag(die) == DW_TAG_pointer_type ? "*" :
			  dwarf_tag(die) == DW_TAG_reference_type ? "&" : "&&");
		return true;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (!type_name(has_inner ? &inner : NULL, b, depth + 1))
			return false;
		sb_add(b, dwarf_tag(die) == DW_TAG_const_type ? " const" : " volatile");
		return true;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
	case DW_TAG_enumeration_type:
		if (!(n = dwarf_diename(die)))
			return false;
		if (!scope_prefix(die, b, depth + 1))
			return false;
		sb_add(b, n);
		return true;
	default:
		return false;
	}
}

/* The call operator of a closure type, if @die is one. */
static bool closure_operator(Dwarf_Die *die, Dwarf_Die *op)
{
	Dwarf_Die c;

	if ((dwarf_tag(die) != DW_TAG_structure_type && dwarf_tag(die) != DW_TAG_class_type) ||
	    dwarf_diename(die) || dwarf_child(die, &c) != 0)
		return false;
	do {
		const char *n = dwarf_diename(&c);

		if (dwarf_tag(&c) == DW_TAG_subprogram && n && !strncmp(n, "operator()", 10)) {
			*op = c;
			return true;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * A function's parameter list, "long, char const*" (its artificial ones, the
 * object pointer, left out); @is_const: whether the object is const.
 */
static bool function_params(Dwarf_Die *fn, struct sb *b, bool *is_const, int depth)
{
	Dwarf_Die p;
	bool first = true;

	*is_const = false;
	if (dwarf_child(fn, &p) != 0)
		return true;
	do {
		Dwarf_Attribute a;
		Dwarf_Die t, pointee;
		bool typed;

		if (dwarf_tag(&p) != DW_TAG_formal_parameter)
			continue;
		typed = dwarf_attr(&p, DW_AT_type, &a) && dwarf_formref_die(&a, &t);
		if (dwarf_hasattr(&p, DW_AT_artificial)) {
			/* the object pointer: a const member function's points to const
			 * (the pointer itself may be const too) */
			while (typed && dwarf_tag(&t) == DW_TAG_const_type &&
			       dwarf_attr(&t, DW_AT_type, &a) && dwarf_formref_die(&a, &t))
				;
			if (typed && dwarf_tag(&t) == DW_TAG_pointer_type &&
			    dwarf_attr(&t, DW_AT_type, &a) && dwarf_formref_die(&a, &pointee) &&
			    dwarf_tag(&pointee) == DW_TAG_const_type)
				*is_const = true;
			continue;
		}
		if (!first)
			sb_add(b, ", ");
		first = false;
		if (!type_name(typed ? &t : NULL, b, depth + 1))
			return false;
	} while (dwarf_siblingof(&p, &p) == 0);
	return true;
}

/*
 * How many closures come before @closure (pre-order) in the subtree of
 * @scope, not inside other types: its number less one. GCC numbers a
 * function's lambdas in order whatever their parameters (the Itanium ABI
 * counts those of the same parameters; clang does, and gives each call
 * operator a linkage name, so never comes here).
 * Return: -1 when @closure is not found.
 */
static int closure_ordinal(Dwarf_Die *scope, Dwarf_Die *closure, int *seen, int depth)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(scope, &c) != 0)
		return -1;
	do {
		int tag = dwarf_tag(&c);

		if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type) {
			Dwarf_Die op;

			if (dwarf_dieoffset(&c) == dwarf_dieoffset(closure))
				return *seen;
			if (closure_operator(&c, &op))
				(*seen)++;
			continue;
		}
		if (tag == DW_TAG_lexical_block) {
			int r = closure_ordinal(&c, closure, seen, depth + 1);

			if (r >= 0)
				return r;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return -1;
}

/* "{lambda(long)#3}" for the closure @die, whose scope is @scope. */
static bool closure_name(Dwarf_Die *die, Dwarf_Die *scope, struct sb *b, int depth)
{
	struct sb params = { .n = 0 };
	Dwarf_Die op;
	char num[24];
	int seen = 0, ord;
	bool is_const;

	if (!closure_operator(die, &op) || !function_params(&op, &params, &is_const, depth) ||
	    params.over)
		return false;
	ord = closure_ordinal(scope, die, &seen, 0);
	if (ord < 0)
		return false;
	snprintf(num, sizeof(num), ")#%d}", ord + 1);
	sb_add(b, "{lambda(");
	sb_add(b, params.s);
	sb_add(b, num);
	b->lambda = true;
	return true;
}

/*
 * A function scope as the demangler prints a local entity's function: its
 * demangled linkage name with its parameters; else (a lambda's operator())
 * its qualified name, parameters and const.
 */
static bool function_scope(Dwarf_Die *die, struct sb *b, int depth)
{
	const char *ln = die_string(die, DW_AT_linkage_name);
	struct sb params = { .n = 0 };
	Dwarf_Die decl;
	bool is_const;
	size_t before;
	char *dm;

	if (!ln)
		ln = die_string(die, DW_AT_MIPS_linkage_name);
	if (ln) {
		dm = cplus_demangle(ln, DMGL_PARAMS | DMGL_ANSI);
		sb_add(b, dm ? dm : ln);
		free(dm);
		return true;
	}
	die_decl(die, &decl);
	before = b->n;
	if (!dwarf_diename(&decl) || !scope_prefix(&decl, b, depth + 1) ||
	    !function_params(&decl, &params, &is_const, depth) || params.over)
		return false;
	sb_add(b, dwarf_diename(&decl));
	/* a function at file scope without a linkage name is not mangled
	 * (main, extern "C"): the demangler prints no parameters for it */
	if (b->n - strlen(dwarf_diename(&decl)) > before) {
		sb_add(b, "(");
		sb_add(b, params.s);
		sb_add(b, is_const ? ") const" : ")");
	}
	return true;
}

/*
 * The scopes enclosing @die, outermost first, each followed by "::"
 * ("ns::Class::", "main::{lambda(long)#3}::"); nothing at file scope.
 */
static bool scope_prefix(Dwarf_Die *die, struct sb *b, int depth)
{
	Dwarf_Die *sc = NULL;
	int n, first, stop;
	bool ok = true;

	if (depth > MAX_DEPTH)
		return false;
	n = inlidx_scopes(cur_index, die, &sc);
	if (n <= 0) {
		free(sc);
		return n == 0;
	}
	/* sc[0] is @die, sc[n - 1] its unit; a function scope names all above it */
	for (stop = 1; stop < n - 1 && dwarf_tag(&sc[stop]) != DW_TAG_subprogram; stop++)
		;
	first = stop < n - 1 ? stop : n - 2;
	for (int i = first; i >= 1 && ok; i--) {
		Dwarf_Die *d = &sc[i];
		const char *nm = dwarf_diename(d);

		switch (dwarf_tag(d)) {
		case DW_TAG_subprogram:
			ok = function_scope(d, b, depth);
			break;
		case DW_TAG_namespace:
			sb_add(b, nm ? nm : "(anonymous namespace)");
			break;
		case DW_TAG_structure_type:
		case DW_TAG_class_type:
		case DW_TAG_union_type:
			if (nm) {
				sb_add(b, nm);
			} else {
				/* a closure: numbered in its scope, past lexical blocks */
				int j = i + 1;

				while (j < n - 1 && dwarf_tag(&sc[j]) == DW_TAG_lexical_block)
					j++;
				ok = closure_name(d, &sc[j], b, depth);
			}
			break;
		case DW_TAG_lexical_block:
			continue;
		default:
			ok = false;
			break;
		}
		if (ok)
			sb_add(b, "::");
	}
	free(sc);
	return ok && !b->over;
}

static bool lang_cxx(Dwarf_Die *die)
{
	Dwarf_Die cu;
	int lang;

	if (!dwarf_diecu(die, &cu, NULL, NULL))
		return false;
	lang = dwarf_srclang(&cu);
	return lang == DW_LANG_C_plus_plus || lang == DW_LANG_C_plus_plus_03 ||
	       lang == DW_LANG_C_plus_plus_11 || lang == DW_LANG_C_plus_plus_14;
}

const char *dwname_qualified(struct symbolizer *s, struct inl_index *x, Dwarf_Die *die)
{
	struct sb b = { .n = 0 };
	Dwarf_Die decl;
	const char *name;

	cur_index = x;

	die_decl(die, &decl);
	name = dwarf_diename(&decl);
	if (!name || !lang_cxx(&decl))
		return NULL;
	if (!scope_prefix(&decl, &b, 0))
		return NULL;
	sb_add(&b, name);
	/* only a lambda's name is changed: the others keep their DWARF name,
	 * as addr2line and perf print it */
	return b.over || !b.lambda ? NULL : strtab_intern_text(&s->strings, b.s);
}
