/* Unit tests for glob: the compiled patterns answer as fnmatch(3) does (no flags or FNM_CASEFOLD),
 * in the C locale and in C.UTF-8, exhaustively over short patterns and names of a small alphabet. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fnmatch.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>

#include "util/glob.h"

/* Every string of length 0..max over alphabet, written one after another (NUL-separated) into out;
 * returns how many. */
static size_t all_strings(const char *alphabet, size_t max, char *out, size_t outsize)
{
	size_t k = strlen(alphabet), count = 0, used = 0;
	for (size_t len = 0; len <= max; len++) {
		size_t total = 1;
		for (size_t i = 0; i < len; i++)
			total *= k;
		for (size_t v = 0; v < total; v++) {
			size_t x = v;
			assert_true(used + len + 1 <= outsize);
			for (size_t i = 0; i < len; i++, x /= k)
				out[used + i] = alphabet[x % k];
			out[used + len] = 0;
			used += len + 1;
			count++;
		}
	}
	return count;
}

static void check_all(const char *pat_alphabet, size_t pat_max, const char *name_alphabet, size_t name_max,
		      bool casefold, bool *saw_simple)
{
	static char pats[1 << 20], names[1 << 20];
	size_t np = all_strings(pat_alphabet, pat_max, pats, sizeof(pats));
	size_t nn = all_strings(name_alphabet, name_max, names, sizeof(names));
	const char *p = pats;
	for (size_t i = 0; i < np; i++, p += strlen(p) + 1) {
		struct glob g;
		glob_init(&g, p, casefold);
		*saw_simple |= g.simple;
		const char *n = names;
		for (size_t j = 0; j < nn; j++, n += strlen(n) + 1) {
			bool want = fnmatch(p, n, casefold ? FNM_CASEFOLD : 0) == 0;
			if (glob_match(&g, n, strlen(n)) != want)
				fail_msg("pattern '%s' name '%s' casefold %d: fnmatch says %d", p, n, casefold, want);
		}
		glob_free(&g);
	}
}

static void stars_and_literals_match_as_fnmatch(void **state)
{
	bool simple = false;
	check_all("ab*", 6, "ab", 7, false, &simple);
	assert_true(simple);
	check_all("a*/.", 4, "a/.", 5, false, &simple);
}

static void casefold_matches_as_fnmatch(void **state)
{
	bool simple = false;
	check_all("aB*", 5, "AbBa", 5, true, &simple);
	assert_true(simple);
	/* bytes past ASCII fold to nothing in the C locale */
	check_all("\xc3\xa9*", 4, "\xc3\xa9\xc3\x89", 4, true, &simple);
}

static void other_patterns_go_to_fnmatch(void **state)
{
	bool simple = false;
	check_all("a?[]\\*", 4, "a]\\", 3, false, &simple);
	struct glob g;
	glob_init(&g, "f?01", false);
	assert_false(g.simple);
	assert_true(glob_match(&g, "fx01", 4));
	glob_free(&g);
}

static void common_patterns(void **state)
{
	struct {
		const char *pat, *name;
		bool casefold, want;
	} cases[] = {
	    {"*01*", "f0000001", false, true}, {"*01*", "f0000010", false, true},
	    {"*01*", "f1111000", false, false}, {"*.tmp", "x.tmp", false, true},
	    {"*.tmp", ".tmp", false, true}, {"*.tmp", "x.tmpl", false, false},
	    {"core.*", "core.", false, true}, {"core.*", "core", false, false},
	    {"*", "", false, true}, {"", "", false, true}, {"", "a", false, false},
	    {"a*a", "a", false, false}, {"a*a", "aa", false, true}, {"ab*ba", "aba", false, false},
	    {"*.TMP", "x.tmp", true, true}, {"README", "readme", true, true},
	    {"README", "readme", false, false}, {"*/x*", "/d/x1", false, true},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct glob g;
		glob_init(&g, cases[i].pat, cases[i].casefold);
		assert_true(g.simple);
		if (glob_match(&g, cases[i].name, strlen(cases[i].name)) != cases[i].want)
			fail_msg("'%s' on '%s'", cases[i].pat, cases[i].name);
		glob_free(&g);
	}
}

/* In C.UTF-8 fnmatch folds letters past ASCII (the Kelvin sign and k, É and é, İ and i) and matches
 * names that are not UTF-8 bytewise: the bytes of those letters, and a lone \xe9, mixed every way. */
static void utf8_locale_matches_as_fnmatch(void **state)
{
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		skip();
	bool simple = false;
	const char *kelvin = "k*\xe2\x84\xaa", *e = "\xc3\xa9\x89*";
	check_all(kelvin, 4, "kK\xe2\x84\xaa", 5, true, &simple);
	check_all(kelvin, 4, "kK\xe2\x84\xaa", 5, false, &simple);
	check_all(e, 4, "\xc3\xa9\x89", 5, true, &simple);
	check_all(e, 4, "\xc3\xa9\x89" "e", 4, false, &simple);
	check_all("i*\xc4\xb0", 4, "iI\xc4\xb0", 4, true, &simple);
	check_all("a?*", 4, "a\xc3\xa9", 5, false, &simple);
	assert_true(simple);
	struct glob g;
	glob_init(&g, "k", true);
	assert_true(g.simple);
	assert_true(glob_match(&g, "\xe2\x84\xaa", 3));
	glob_free(&g);
	setlocale(LC_CTYPE, "C");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(stars_and_literals_match_as_fnmatch),
	    cmocka_unit_test(casefold_matches_as_fnmatch),
	    cmocka_unit_test(other_patterns_go_to_fnmatch),
	    cmocka_unit_test(common_patterns),
	    cmocka_unit_test(utf8_locale_matches_as_fnmatch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
