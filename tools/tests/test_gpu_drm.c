// SPDX-License-Identifier: GPL-2.0
/*
 * The DRM source's parsers (libhwtel gpu_drm.c): fdinfo usage stats
 * (Documentation/gpu/drm-usage-stats.rst) and devfreq trans_stat, on
 * well-formed and malformed text: every bad line is diagnosed with its
 * line number and skipped, nothing crashes.
 */
#include <errno.h>
#include <stdlib.h>

#include <libhwtel/gpu.h>

#include "unit.h"

static int parse(const char *text, struct hwtel_gpu_fdinfo *fi, char **diag)
{
	size_t len = 0;
	FILE *f = open_memstream(diag, &len);
	int ret = hwtel_gpu_fdinfo_parse(text, strlen(text), fi, f, "fdinfo/5");

	fclose(f);
	return ret;
}

/* what panfrost on 6.12 prints, plus the generic fdinfo lines */
static const char panfrost[] =
	"pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1061\n"
	"drm-driver:\tpanfrost\n"
	"drm-client-id:\t17\n"
	"drm-engine-fragment:\t1234567 ns\n"
	"drm-cycles-fragment:\t987654\n"
	"drm-maxfreq-fragment:\t800000000 Hz\n"
	"drm-curfreq-fragment:\t400000000 Hz\n"
	"drm-engine-vertex-tiler:\t42 ns\n"
	"drm-cycles-vertex-tiler:\t0\n"
	"drm-total-memory:\t1024 KiB\n"
	"drm-shared-memory:\t0\n";

TEST(fdinfo_panfrost)
{
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL;

	CHECK_EQ(parse(panfrost, &fi, &diag), 0);
	CHECK_STR(fi.driver, "panfrost");
	CHECK_U64(fi.client_id, 17);
	CHECK_EQ(fi.nengines, 2);
	CHECK_STR(fi.engine[0].name, "fragment");
	CHECK_U64(fi.engine[0].busy_ns, 1234567);
	CHECK_U64(fi.engine[0].cycles, 987654);
	CHECK(fi.engine[0].has_cycles && fi.engine[0].has_busy);
	CHECK_U64(fi.engine[0].maxfreq_hz, 800000000);
	CHECK_U64(fi.engine[0].curfreq_hz, 400000000);
	CHECK_STR(fi.engine[1].name, "vertex-tiler");
	CHECK_U64(fi.engine[1].busy_ns, 42);
	CHECK_EQ(fi.malformed, 0);
	CHECK_STR(diag, "");
	free(diag);
}

TEST(fdinfo_msm_61_no_trailing_newline)
{
	/* msm on 6.1: one engine "gpu", a last line without its newline */
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL;

	CHECK_EQ(parse("drm-driver:\tmsm\ndrm-client-id:\t3\ndrm-engine-gpu:\t500 ns\n"
		       "drm-cycles-gpu:\t100\ndrm-maxfreq-gpu:\t710000000 Hz", &fi, &diag), 0);
	CHECK_EQ(fi.nengines, 1);
	CHECK_U64(fi.engine[0].busy_ns, 500);
	CHECK_U64(fi.engine[0].maxfreq_hz, 710000000);
	CHECK_STR(diag, "");
	free(diag);
}

TEST(fdinfo_not_drm)
{
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL;

	CHECK_EQ(parse("pos:\t0\nflags:\t02\nmnt_id:\t3\n", &fi, &diag), -ENOENT);
	CHECK_STR(diag, "");
	free(diag);
	CHECK_EQ(parse("", &fi, &diag), -ENOENT);
	free(diag);
}

TEST(fdinfo_malformed_lines)
{
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL;
	static const char text[] =
		"drm-driver:\tv3d\n"			/* 1 */
		"drm-client-id:\t9\n"			/* 2 */
		"drm-engine-bin:\t100 ns\n"		/* 3 */
		"drm-engine-render:\t12x ns\n"		/* 4: not a number */
		"drm-engine-tfu:\t100 us\n"		/* 5: wrong unit */
		"drm-engine-csd\n"			/* 6: no ':' */
		"drm-engine-bin:\t200 ns\n"		/* 7: duplicate */
		"drm-cycles-bin:\t-5\n"			/* 8: negative */
		"drm-engine-:\t1 ns\n"			/* 9: empty name */
		"drm-engine-abcdefghijklmnopqrstuvwxyz:\t1 ns\n"	/* 10: name too long */
		"drm-maxfreq-bin:\t100\n"		/* 11: no Hz */
		"drm-engine-capacity-bin:\t2\n"		/* 12: a count, ignored */
		"drm-engine-cache_clean:\t18446744073709551616 ns\n"	/* 13: over 64 bits */
		"drm-driver:\tother\n"			/* 14: duplicate */
		"drm-engine-render:\t7 ns\n";		/* 15 */

	CHECK_EQ(parse(text, &fi, &diag), 0);
	CHECK_EQ(fi.malformed, 10);
	CHECK_EQ(fi.nengines, 2);
	CHECK_U64(fi.engine[0].busy_ns, 100);
	CHECK_STR(fi.engine[1].name, "render");
	CHECK_U64(fi.engine[1].busy_ns, 7);
	CHECK_STR(fi.driver, "v3d");
	CHECK(strstr(diag, "fdinfo/5:4: drm-engine-render: expected a decimal number and ns, skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:5: drm-engine-tfu: expected a decimal number and ns"));
	CHECK(strstr(diag, "fdinfo/5:6: 'drm-engine-csd': no ':', skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:7: drm-engine-bin: duplicate, skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:8: drm-cycles-bin: expected a decimal number, skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:9: drm-engine-: engine name empty, skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:10: drm-engine-abcdefghijklmnopqrstuvwxyz: engine name over 23 characters, skipped\n"));
	CHECK(strstr(diag, "fdinfo/5:11: drm-maxfreq-bin: expected a decimal number and Hz"));
	CHECK(strstr(diag, "fdinfo/5:13: drm-engine-cache_clean: expected a decimal number and ns"));
	CHECK(strstr(diag, "fdinfo/5:14: drm-driver: duplicate, skipped\n"));
	CHECK(!strstr(diag, "fdinfo/5:12:"));
	free(diag);
}

TEST(fdinfo_client_id)
{
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL;

	CHECK_EQ(parse("drm-driver:\tlima\ndrm-engine-gp:\t1 ns\n", &fi, &diag), -EINVAL);
	CHECK(strstr(diag, "fdinfo/5:2: drm-driver without drm-client-id: not counted\n"));
	free(diag);
	CHECK_EQ(parse("drm-driver:\tlima\ndrm-client-id:\tfour\n", &fi, &diag), -EINVAL);
	CHECK(strstr(diag, "fdinfo/5:2: drm-client-id: not a decimal number, skipped\n"));
	free(diag);
}

TEST(fdinfo_limits)
{
	struct hwtel_gpu_fdinfo fi;
	char *diag = NULL, *text, *p;
	size_t n = 4096;
	int i;

	/* ten engines: the tenth is diagnosed; a NUL byte; a 600-byte line */
	text = calloc(1, n);
	p = text + sprintf(text, "drm-driver:\tx\ndrm-client-id:\t1\n");
	for (i = 0; i < 10; i++)
		p += sprintf(p, "drm-engine-e%d:\t%d ns\n", i, i);
	p += sprintf(p, "drm-engine-z:\t1");
	*p++ = '\0';
	p += sprintf(p, " ns\ndrm-engine-long:\t");
	memset(p, '1', 600);
	p += 600;
	*p++ = '\n';
	{
		size_t len = 0;
		FILE *f = open_memstream(&diag, &len);

		CHECK_EQ(hwtel_gpu_fdinfo_parse(text, (size_t)(p - text), &fi, f, "x"), 0);
		fclose(f);
	}
	CHECK_EQ(fi.nengines, HWTEL_GPU_UNITS);
	CHECK_EQ(fi.malformed, 3);
	CHECK(strstr(diag, "x:12: drm-engine-e9: more than 9 engines, skipped\n"));
	CHECK(strstr(diag, "x:13: NUL byte in the line, skipped\n"));
	CHECK(strstr(diag, "x:14: line too long ("));
	free(diag);
	free(text);
}

static const char trans[] =
	"     From  :   To\n"
	"           : 200000000 300000000 400000000   time(ms)\n"
	"  200000000:         0         0         1      2176\n"
	"  300000000:         1         0         0        10\n"
	"* 400000000:         0         1         0       360\n"
	"Total transition : 3\n";

TEST(trans_stat)
{
	struct hwtel_gpu_trans_stat ts;
	char why[128] = "";

	CHECK_EQ(hwtel_gpu_trans_stat_parse(trans, strlen(trans), &ts, why, sizeof(why)), 0);
	CHECK_EQ(ts.nstates, 3);
	CHECK_EQ(ts.cur, 2);
	CHECK_U64(ts.hz[1], 300000000);
	CHECK_U64(ts.time_ms[0], 2176);
	CHECK_U64(ts.time_ms[2], 360);
	CHECK_U64(ts.to_count[0], 1);
	CHECK_U64(ts.to_count[1], 1);
	CHECK_U64(ts.to_count[2], 1);
	CHECK_U64(ts.total, 3);
	CHECK_EQ(hwtel_gpu_trans_stat_parse("Not Supported.\n", 15, &ts, why, sizeof(why)),
		 -ENOTSUP);
}

TEST(trans_stat_malformed)
{
	static const char *const bad[] = {
		"  200000000:  0  1\n",
		"           : 200000000 300000000   time(ms)\n  200000000:  0  1\n",
		"           : 200000000   time(ms)\n  300000000:  0  5\n",
		"           : 2x   time(ms)\n",
		"           : 200000000   time(ms)\n  200000000:  0  5\nTotal transition : y\n",
	};
	static const char *const why_exp[] = {
		"line 1: a row before the frequency header",
		"line 2: row of 3 numbers, expected 4 for 200000000 Hz",
		"line 2: row of 3 numbers, expected 3 for 200000000 Hz",
		"line 1: bad frequency '2x'",
		"line 3: bad total",
	};
	struct hwtel_gpu_trans_stat ts;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";

		CHECK_EQ(hwtel_gpu_trans_stat_parse(bad[i], strlen(bad[i]), &ts, why, sizeof(why)),
			 -EINVAL);
		if (!strstr(why, why_exp[i]))
			printf("#   case %u: '%s'\n", i, why);
		CHECK(strstr(why, why_exp[i]));
	}
}
