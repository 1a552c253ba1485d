// SPDX-License-Identifier: GPL-2.0
/*
 * The JSON writer (lib/json.c): strings are always valid UTF-8 JSON, whatever
 * bytes a process name, a PMU or an event name carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libhwtel/gpu.h>

#include "lib/internal.h"
#include "unit.h"

/* hj_str(@in) as a top-level value */
static char *json_str(const char *in)
{
	struct hwtel_json j;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	hj_init(&j, f);
	hj_str(&j, in);
	fclose(f);
	return out;
}

#define CHECK_JSTR(in, want) do {					\
	char *_o = json_str(in);					\
	CHECK_STR(_o, want);						\
	free(_o);							\
} while (0)

TEST(json_string_escapes)
{
	CHECK_JSTR("abc", "\"abc\"");
	CHECK_JSTR("", "\"\"");
	CHECK_JSTR("a\"b\\c", "\"a\\\"b\\\\c\"");
	CHECK_JSTR("\n\t", "\"\\n\\t\"");
	CHECK_JSTR("\x01\x1f\r\b\f", "\"\\u0001\\u001f\\u000d\\u0008\\u000c\"");
	/* DEL and '/' need no escape */
	CHECK_JSTR("\x7f/", "\"\x7f/\"");
}

TEST(json_string_valid_utf8_passes)
{
	CHECK_JSTR("\xc3\xa9", "\"\xc3\xa9\"");				/* U+00E9 */
	CHECK_JSTR("\xc2\x80\xdf\xbf", "\"\xc2\x80\xdf\xbf\"");		/* U+0080, U+07FF */
	CHECK_JSTR("\xe0\xa0\x80\xe2\x82\xac", "\"\xe0\xa0\x80\xe2\x82\xac\"");	/* U+0800, U+20AC */
	CHECK_JSTR("\xed\x9f\xbf\xee\x80\x80", "\"\xed\x9f\xbf\xee\x80\x80\"");	/* U+D7FF, U+E000 */
	CHECK_JSTR("\xef\xbf\xbd", "\"\xef\xbf\xbd\"");			/* U+FFFD itself */
	CHECK_JSTR("\xf0\x90\x80\x80\xf0\x9f\x98\x80", "\"\xf0\x90\x80\x80\xf0\x9f\x98\x80\"");
	CHECK_JSTR("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");		/* U+10FFFF */
}

/* One \ufffd per maximal subpart of an ill-formed sequence (Unicode 3.9) */
TEST(json_string_invalid_utf8_replaced)
{
	/* lone continuation bytes, bytes that never occur */
	CHECK_JSTR("a\x80z", "\"a\\ufffdz\"");
	CHECK_JSTR("\xbf\xfe\xff", "\"\\ufffd\\ufffd\\ufffd\"");
	/* overlong: C0/C1 leads, E0 80..9F, F0 80..8F */
	CHECK_JSTR("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	CHECK_JSTR("\xc1\xbf", "\"\\ufffd\\ufffd\"");
	CHECK_JSTR("\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_JSTR("\xf0\x80\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* UTF-16 surrogates encoded in UTF-8 (ED A0..BF) */
	CHECK_JSTR("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	CHECK_JSTR("\xed\xbf\xbfx", "\"\\ufffd\\ufffd\\ufffdx\"");
	/* above U+10FFFF: F4 90.., F5..F7 leads */
	CHECK_JSTR("\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	CHECK_JSTR("\xf5\x80\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");
	/* truncated sequences: one replacement for the valid prefix */
	CHECK_JSTR("\xe2\x82x", "\"\\ufffdx\"");
	CHECK_JSTR("\xe2\x82", "\"\\ufffd\"");
	CHECK_JSTR("\xf0\x9f\x98", "\"\\ufffd\"");
	CHECK_JSTR("\xf0\x9f\x98\"", "\"\\ufffd\\\"\"");
	CHECK_JSTR("\xc3", "\"\\ufffd\"");
	CHECK_JSTR("\xc3\xc3\xa9", "\"\\ufffd\xc3\xa9\"");
	/* a control character after a truncated lead is still escaped */
	CHECK_JSTR("\xe2\n", "\"\\ufffd\\n\"");
}

/* Keys go through the same writer */
TEST(json_key_invalid_utf8)
{
	struct hwtel_json j;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	CHECK(f != NULL);
	if (!f)
		return;
	hj_init(&j, f);
	hj_obj_begin(&j);
	hj_key(&j, "ev\xff");
	hj_uint(&j, 1);
	hj_obj_end(&j);
	fclose(f);
	CHECK_STR(out, "{\n    \"ev\\ufffd\": 1\n}");
	free(out);
}

/* A process name with arbitrary bytes in the GPU report's JSON */
TEST(json_gpu_comm_invalid_utf8)
{
	struct hwtel_gpu_consumer c;
	struct hwtel_gpu_report r;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	memset(&r, 0, sizeof(r));
	memset(&c, 0, sizeof(c));
	c.pid = 7;
	strcpy(c.comm, "app\xc3(\xe9)");
	strcpy(c.cmdline, "app \xed\xa0\x80");
	r.consumers = &c;
	r.nconsumers = 1;
	f = open_memstream(&out, &len);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ(hwtel_gpu_format_json(f, &r), 0);
	fclose(f);
	CHECK(out && strstr(out, "\"comm\": \"app\\ufffd(\\ufffd)\""));
	CHECK(out && strstr(out, "\"cmdline\": \"app \\ufffd\\ufffd\\ufffd\""));
	if (out && !strstr(out, "\"comm\": \"app\\ufffd(\\ufffd)\""))
		printf("#   got %.300s\n", strstr(out, "\"comm\"") ? strstr(out, "\"comm\"") : out);
	free(out);
}

static char *json_double(double v)
{
	struct hwtel_json j;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	hj_init(&j, f);
	hj_double(&j, v);
	fclose(f);
	return out;
}

static char *gpu_render(int which, const struct hwtel_gpu_report *r)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	if (which == 0)
		CHECK_EQ(hwtel_gpu_format_json(f, r), 0);
	else if (which == 1)
		CHECK_EQ(hwtel_gpu_format_csv(f, r, ";"), 0);
	else if (which == 2)
		CHECK_EQ(hwtel_gpu_format_prom(f, r, r), 0);
	else
		CHECK_EQ(hwtel_gpu_format_text(f, r), 0);
	fclose(f);
	return out;
}

/* Numbers have a '.' whatever LC_NUMERIC the program set */
TEST(json_numbers_locale_independent)
{
	static const char *const name[] = { "json", "csv", "prom", "text" };
	uint64_t cb[HWTEL_GPU_MALI_UNITS] = { 0 }, cj[HWTEL_GPU_MALI_UNITS] = { 0 };
	uint64_t rb[HWTEL_GPU_MALI_UNITS] = { 0 }, rj[HWTEL_GPU_MALI_UNITS] = { 0 };
	uint64_t ru[HWTEL_GPU_MALI_UNITS] = { 0 };
	struct hwtel_gpu_consumer c;
	struct hwtel_gpu_report r;
	char *c_out, *out;
	int i;

	if (!unit_setlocale_comma())
		return;
	out = json_double(1.5);
	CHECK_STR(out, "1.5");
	free(out);
	out = json_double(619.2456896551724);
	CHECK_STR(out, "619.2456896551724");
	free(out);
	out = json_double(2.5e-7);
	CHECK_STR(out, "2.5e-07");
	free(out);
	unit_setlocale_c();

	memset(&r, 0, sizeof(r));
	memset(&c, 0, sizeof(c));
	r.nunits = HWTEL_GPU_MALI_UNITS;
	r.busy_ns = rb;
	r.jobs = rj;
	r.unbilled_ns = ru;
	c.busy_ns = cb;
	c.jobs = cj;
	c.pid = 7;
	strcpy(c.comm, "app");
	c.busy_ns[0] = 1500000;
	c.busy_total_ns = 1500000;
	c.energy_pj = 2.25;
	c.mean_pw = 1.5;
	c.share = 0.75;
	r.consumers = &c;
	r.nconsumers = 1;
	r.seconds = 1.5;
	r.t1_ns = 1500000000;
	r.mean_pw = 2.0 / 3;
	r.energy_pj = 3;
	for (i = 0; i < 4; i++) {
		c_out = gpu_render(i, &r);
		if (!unit_setlocale_comma()) {
			free(c_out);
			break;
		}
		out = gpu_render(i, &r);
		unit_setlocale_c();
		unit_same_in_comma_locale(name[i], c_out, out);
		free(c_out);
		free(out);
	}
}
