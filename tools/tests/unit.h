/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP unit test harness for the host tests of libhwtel and the CLI
 * (run under ASan+UBSan by `make unit`).
 */
#ifndef _HWTEL_UNIT_H
#define _HWTEL_UNIT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
	struct unit_test *next;
};

void unit_register(struct unit_test *t);
extern int unit_failed;	/* checks failed in the current test */

#define TEST(n)								\
	static void test_##n(void);					\
	static struct unit_test ut_##n = { #n, test_##n, NULL };	\
	__attribute__((constructor)) static void reg_##n(void)		\
	{ unit_register(&ut_##n); }					\
	static void test_##n(void)

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		printf("#   %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
		unit_failed++;						\
	}								\
} while (0)

#define CHECK_EQ(a, b) do {						\
	long long _a = (long long)(a), _b = (long long)(b);		\
	if (_a != _b) {							\
		printf("#   %s:%d: %s == %lld, expected %s == %lld\n",	\
		       __FILE__, __LINE__, #a, _a, #b, _b);		\
		unit_failed++;						\
	}								\
} while (0)

#define CHECK_U64(a, b) do {						\
	uint64_t _a = (a), _b = (b);					\
	if (_a != _b) {							\
		printf("#   %s:%d: %s == %" PRIu64 ", expected %" PRIu64 "\n", \
		       __FILE__, __LINE__, #a, _a, _b);			\
		unit_failed++;						\
	}								\
} while (0)

#define CHECK_STR(a, b) do {						\
	const char *_a = (a), *_b = (b);				\
	if (!_a || !_b || strcmp(_a, _b)) {				\
		printf("#   %s:%d: %s == \"%s\", expected \"%s\"\n",	\
		       __FILE__, __LINE__, #a, _a ? _a : "(null)", _b ? _b : "(null)"); \
		unit_failed++;						\
	}								\
} while (0)

#define CHECK_NEAR(a, b, eps) do {					\
	double _a = (a), _b = (b);					\
	if (!(_a - _b <= (eps) && _b - _a <= (eps))) {			\
		printf("#   %s:%d: %s == %.9g, expected %.9g\n",	\
		       __FILE__, __LINE__, #a, _a, _b);			\
		unit_failed++;						\
	}								\
} while (0)

/* helpers (unit.c) */
char *unit_slurp(const char *path, size_t *len);
/* compare @got with golden file @path; on mismatch print a diff hint.
 * With HWTEL_UPDATE_GOLDEN=1 in the environment, rewrite the golden
 * (only for goldens that are ours, never the seed's).
 */
bool unit_golden(const char *got, const char *path, bool updatable);

/*
 * unit_tmp("x.json"): the path of a scratch file in this run's own
 * directory (mkdtemp under $TMPDIR or /tmp, removed at the end; also in
 * $HWTEL_UNIT_DIR for commands), so that two runs at once (make check's
 * unit stage beside the package build's) never share a file. The same name
 * gives the same string for the whole run.
 */
const char *unit_tmp(const char *name);
/* printf into a static buffer (one at a time), for system()'s commands */
const char *unit_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* fail unless `promtool check metrics` (Debian: package prometheus) and
 * selftests/fleet/promcheck.py accept the exposition @text; their
 * complaints are printed. A missing promtool is a failure, not a skip.
 */
void unit_check_prom(const char *what, const char *text);
/* setlocale(LC_ALL, ...) to a locale with a decimal comma (built with
 * localedef in a scratch directory if none is installed); false, with the
 * reason printed and the test failed, when there is none. Back with
 * unit_setlocale_c().
 */
bool unit_setlocale_comma(void);
void unit_setlocale_c(void);
/* fail with the first differing line unless @out (rendered in the comma
 * locale) equals @c_out (rendered in C)
 */
void unit_same_in_comma_locale(const char *what, const char *c_out, const char *out);

#endif
