// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: a minimal streaming JSON writer. The layout is that of Python's
 * json.dumps(obj, indent=4), which the reference tool prints, so the two
 * outputs can be compared line by line.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void hj_init(struct hwtel_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->first[0] = true;
}

static void indent(struct hwtel_json *j)
{
	int i;

	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("    ", j->f);
}

/* Before a value: separator and indentation unless it follows a key. */
static void pre_value(struct hwtel_json *j)
{
	if (j->key_pending) {
		j->key_pending = false;
		return;
	}
	if (j->depth == 0)
		return;
	if (!j->first[j->depth])
		fputc(',', j->f);
	j->first[j->depth] = false;
	indent(j);
}

static void open_(struct hwtel_json *j, char c)
{
	pre_value(j);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->first[j->depth] = true;
}

static void close_(struct hwtel_json *j, char c)
{
	bool empty = j->first[j->depth];

	j->depth--;
	if (!empty)
		indent(j);
	fputc(c, j->f);
}

void hj_obj_begin(struct hwtel_json *j)
{
	open_(j, '{');
}

void hj_obj_end(struct hwtel_json *j)
{
	close_(j, '}');
}

void hj_arr_begin(struct hwtel_json *j)
{
	open_(j, '[');
}

void hj_arr_end(struct hwtel_json *j)
{
	close_(j, ']');
}

/*
 * Length of the well-formed UTF-8 sequence at @s (Unicode table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or minus the
 * length of its maximal subpart when it is ill-formed: the lead byte and
 * the continuation bytes that could still have begun a valid sequence. A
 * truncated sequence stops at the byte that does not fit, which may be
 * the terminating NUL.
 */
static int utf8_len(const unsigned char *s)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		if (s[0] == 0xe0)
			lo = 0xa0;	/* below: overlong */
		else if (s[0] == 0xed)
			hi = 0x9f;	/* above: a surrogate */
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		if (s[0] == 0xf0)
			lo = 0x90;	/* below: overlong */
		else if (s[0] == 0xf4)
			hi = 0x8f;	/* above: beyond U+10FFFF */
	} else {
		return -1;	/* continuation byte, C0, C1, F5..FF */
	}
	for (i = 1; i < n; i++) {
		if (s[i] < lo || s[i] > hi)
			return -i;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/*
 * A JSON string that is valid UTF-8 whatever @str holds: well-formed UTF-8
 * is copied, each maximal subpart of an ill-formed sequence becomes one
 * escaped U+FFFD REPLACEMENT CHARACTER, "\ufffd" (ASCII, so it is never
 * mistaken for a U+FFFD that was in @str), and what RFC 8259 requires
 * escaped (quote, backslash, characters below 0x20) is escaped.
 */
static void put_string(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	while (*s) {
		unsigned char c = *s;

		if (c >= 0x80) {
			n = utf8_len(s);
			if (n > 0)
				fwrite(s, 1, (size_t)n, f);
			else
				fputs("\\ufffd", f);
			s += n > 0 ? n : -n;
			continue;
		}
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
		s++;
	}
	fputc('"', f);
}

void hj_key(struct hwtel_json *j, const char *k)
{
	pre_value(j);
	put_string(j->f, k);
	fputs(": ", j->f);
	j->key_pending = true;
}

void hj_u64(struct hwtel_json *j, uint64_t v)
{
	pre_value(j);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void hj_uint(struct hwtel_json *j, unsigned int v)
{
	pre_value(j);
	fprintf(j->f, "%u", v);
}

void hj_bool(struct hwtel_json *j, bool v)
{
	pre_value(j);
	fputs(v ? "true" : "false", j->f);
}

void hj_null(struct hwtel_json *j)
{
	pre_value(j);
	fputs("null", j->f);
}

void hj_str(struct hwtel_json *j, const char *s)
{
	pre_value(j);
	put_string(j->f, s);
}

void hj_double(struct hwtel_json *j, double v)
{
	struct hwtel_numeric num;
	char buf[64];
	int prec;

	if (!isfinite(v)) {
		hj_null(j);
		return;
	}
	pre_value(j);
	/* the formats set LC_NUMERIC already; this is for any other caller */
	hwtel_numeric_c(&num);
	/*
	 * Shortest text that reads back exactly, in Python's repr() style:
	 * positional between 1e-4 and 1e16 ("400.0", "619.2456896551724"),
	 * exponent form outside.
	 */
	if (v != 0 && (fabs(v) >= 1e16 || fabs(v) < 1e-4)) {
		for (prec = 1; prec <= 17; prec++) {
			snprintf(buf, sizeof(buf), "%.*e", prec - 1, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	} else {
		for (prec = 1; prec <= 20; prec++) {
			snprintf(buf, sizeof(buf), "%.*f", prec, v);
			if (strtod(buf, NULL) == v)
				break;
		}
	}
	hwtel_numeric_restore(&num);
	fputs(buf, j->f);
}

/* RFC 4180 field: quoted when it holds the separator, a quote or a newline */
void hwtel_csv_field(FILE *f, const char *s, const char *sep)
{
	if (!strstr(s, sep) && !strpbrk(s, "\"\n\r")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* A formatted field (a number may hold the separator, "." or ","), then @sep */
void hwtel_csv_fmt(FILE *f, const char *sep, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	hwtel_csv_field(f, buf, sep);
	fputs(sep, f);
}

void hwtel_csv_event(FILE *f, const char *sep, const char *pmu, const char *ev)
{
	char name[256];

	snprintf(name, sizeof(name), "%s/%s/", pmu, ev);
	hwtel_csv_field(f, name, sep);
}
