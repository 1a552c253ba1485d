// SPDX-License-Identifier: GPL-2.0
/*
 * The DRM source's parsers (libhwtel gpu_drm.c): fdinfo usage stats
 * (Documentation/gpu/drm-usage-stats.rst) and devfreq trans_stat, on
 * well-formed and malformed text: every bad line is diagnosed with its
 * line number and skipped, nothing crashes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libhwtel/gpu.h>

#include "lib/internal.h"

#include "unit.h"

/* Parse @text into *@fi (the previous one freed) */
static int parse(const char *text, struct hwtel_gpu_fdinfo **fi, char **diag)
{
	size_t len = 0;
	FILE *f = open_memstream(diag, &len);
	int ret;

	hwtel_gpu_fdinfo_free(*fi);
	ret = hwtel_gpu_fdinfo_parse(text, strlen(text), fi, f, "fdinfo/5");

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
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL;

	CHECK_EQ(parse(panfrost, &fi, &diag), 0);
	CHECK_STR(fi->driver, "panfrost");
	CHECK_U64(fi->client_id, 17);
	CHECK_EQ(fi->nengines, 2);
	CHECK_STR(fi->engine[0].name, "fragment");
	CHECK_U64(fi->engine[0].busy_ns, 1234567);
	CHECK_U64(fi->engine[0].cycles, 987654);
	CHECK(fi->engine[0].has_cycles && fi->engine[0].has_busy);
	CHECK_U64(fi->engine[0].maxfreq_hz, 800000000);
	CHECK_U64(fi->engine[0].curfreq_hz, 400000000);
	CHECK_STR(fi->engine[1].name, "vertex-tiler");
	CHECK_U64(fi->engine[1].busy_ns, 42);
	CHECK_EQ(fi->malformed, 0);
	CHECK_STR(diag, "");
	free(diag);
	hwtel_gpu_fdinfo_free(fi);
}

TEST(fdinfo_msm_61_no_trailing_newline)
{
	/* msm on 6.1: one engine "gpu", a last line without its newline */
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL;

	CHECK_EQ(parse("drm-driver:\tmsm\ndrm-client-id:\t3\ndrm-engine-gpu:\t500 ns\n"
		       "drm-cycles-gpu:\t100\ndrm-maxfreq-gpu:\t710000000 Hz", &fi, &diag), 0);
	CHECK_EQ(fi->nengines, 1);
	CHECK_U64(fi->engine[0].busy_ns, 500);
	CHECK_U64(fi->engine[0].maxfreq_hz, 710000000);
	CHECK_STR(diag, "");
	free(diag);
	hwtel_gpu_fdinfo_free(fi);
}

TEST(fdinfo_not_drm)
{
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL;

	CHECK_EQ(parse("pos:\t0\nflags:\t02\nmnt_id:\t3\n", &fi, &diag), -ENOENT);
	CHECK_STR(diag, "");
	free(diag);
	CHECK_EQ(parse("", &fi, &diag), -ENOENT);
	free(diag);
	hwtel_gpu_fdinfo_free(fi);
}

TEST(fdinfo_malformed_lines)
{
	struct hwtel_gpu_fdinfo *fi = NULL;
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
	CHECK_EQ(fi->malformed, 10);
	CHECK_EQ(fi->nengines, 2);
	CHECK_U64(fi->engine[0].busy_ns, 100);
	CHECK_STR(fi->engine[1].name, "render");
	CHECK_U64(fi->engine[1].busy_ns, 7);
	CHECK_STR(fi->driver, "v3d");
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
	hwtel_gpu_fdinfo_free(fi);
}

TEST(fdinfo_client_id)
{
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL;

	CHECK_EQ(parse("drm-driver:\tlima\ndrm-engine-gp:\t1 ns\n", &fi, &diag), -EINVAL);
	CHECK(strstr(diag, "fdinfo/5:2: drm-driver without drm-client-id: not counted\n"));
	free(diag);
	CHECK_EQ(parse("drm-driver:\tlima\ndrm-client-id:\tfour\n", &fi, &diag), -EINVAL);
	CHECK(strstr(diag, "fdinfo/5:2: drm-client-id: not a decimal number, skipped\n"));
	free(diag);
	hwtel_gpu_fdinfo_free(fi);
}

/*
 * amdgpu from 6.1 (until it printed one key per IP block) prints one
 * drm-engine-<ip><ring> key per ring it used (amdgpu_ctx_num_entities:
 * gfx 1, compute 4, dma 2, then one each for dec, enc, enc_1 and jpeg):
 * eleven engines, more than the nine units of a Mali Utgard.
 */
TEST(fdinfo_amdgpu_rings)
{
	static const char *const names[] = {
		"gfx0", "compute0", "compute1", "compute2", "compute3", "dma0", "dma1",
		"dec0", "enc0", "enc_10", "jpeg0",
	};
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL, text[2048];
	unsigned int i;
	int len;

	len = snprintf(text, sizeof(text), "pos:\t0\nflags:\t02100002\nmnt_id:\t24\n"
		       "drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t44\n"
		       "drm-memory-vram:\t1024 KiB\n");
	for (i = 0; i < 11; i++)
		len += snprintf(text + len, sizeof(text) - (size_t)len, "drm-engine-%s:\t%u ns\n",
				names[i], 1000000u * (i + 1) + i);
	CHECK_EQ(parse(text, &fi, &diag), 0);
	CHECK_STR(diag, "");
	CHECK_EQ(fi->malformed, 0);
	CHECK_EQ(fi->nengines, 11);
	for (i = 0; i < 11 && i < fi->nengines; i++) {
		CHECK_STR(fi->engine[i].name, names[i]);
		CHECK_U64(fi->engine[i].busy_ns, 1000000u * (i + 1) + i);
	}
	free(diag);
	hwtel_gpu_fdinfo_free(fi);
}

TEST(fdinfo_limits)
{
	struct hwtel_gpu_fdinfo *fi = NULL;
	char *diag = NULL, *text, *p;
	size_t n = 4096;
	int i;

	/* ten engines, all kept; a NUL byte; a 600-byte line */
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
	CHECK_EQ(fi->nengines, 10);
	CHECK(fi->nengines == 10 && fi->engine[9].busy_ns == 9 && !strcmp(fi->engine[9].name, "e9"));
	CHECK_EQ(fi->malformed, 2);
	CHECK(strstr(diag, "x:13: NUL byte in the line, skipped\n"));
	CHECK(strstr(diag, "x:14: line too long ("));
	free(diag);
	free(text);
	hwtel_gpu_fdinfo_free(fi);
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
	struct hwtel_gpu_trans_stat *ts;
	char why[128] = "";

	CHECK_EQ(hwtel_gpu_trans_stat_parse(trans, strlen(trans), &ts, why, sizeof(why)), 0);
	if (!ts)
		return;
	CHECK_EQ(ts->nstates, 3);
	CHECK_EQ(ts->cur, 2);
	CHECK_U64(ts->hz[1], 300000000);
	CHECK_U64(ts->time_ms[0], 2176);
	CHECK_U64(ts->time_ms[2], 360);
	CHECK_U64(ts->to_count[0], 1);
	CHECK_U64(ts->to_count[1], 1);
	CHECK_U64(ts->to_count[2], 1);
	CHECK_U64(ts->total, 3);
	hwtel_gpu_trans_stat_free(ts);
	CHECK_EQ(hwtel_gpu_trans_stat_parse("Not Supported.\n", 15, &ts, why, sizeof(why)),
		 -ENOTSUP);
	CHECK(ts == NULL);
}

/*
 * A trans_stat as devfreq's trans_stat_show() prints it (drivers/devfreq/
 * devfreq.c: "%10lu" frequencies, "%10u" transition counts, "%10llu" ms),
 * for @n states at 100 MHz + 25 MHz steps, @cur the current one (the '*').
 * Returns its length.
 */
static size_t kernel_trans_stat(char *buf, size_t size, unsigned int n, unsigned int cur)
{
	unsigned int i, j, total = 0;
	size_t len = 0;

	len += (size_t)snprintf(buf + len, size - len, "     From  :   To\n");
	len += (size_t)snprintf(buf + len, size - len, "           :");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(buf + len, size - len, "%10lu", 100000000ul + 25000000ul * i);
	len += (size_t)snprintf(buf + len, size - len, "   time(ms)\n");
	for (i = 0; i < n; i++) {
		len += (size_t)snprintf(buf + len, size - len, "%s%10lu:", i == cur ? "*" : " ",
					100000000ul + 25000000ul * i);
		/* i -> i + 1 (i + 1) times, the last state -> the first once */
		for (j = 0; j < n; j++) {
			unsigned int t = j == (i + 1) % n ? (j ? i + 1 : 1) : 0;

			total += t;
			len += (size_t)snprintf(buf + len, size - len, "%10u", t);
		}
		len += (size_t)snprintf(buf + len, size - len, "%10llu\n", 1000ull + 37ull * i);
	}
	len += (size_t)snprintf(buf + len, size - len, "Total transition : %u\n", total);
	return len;
}

/*
 * "%10lu" leaves no space before a frequency of 10 digits: from 1 GHz on
 * the kernel's columns touch ("  975000000" then "1000000000").
 */
TEST(trans_stat_ghz)
{
	static const char text[] =
		"     From  :   To\n"
		"           : 97500000010000000001200000000   time(ms)\n"
		"  975000000:         0         2         0       100\n"
		" 1000000000:         1         0         1        20\n"
		"*1200000000:         1         0         0      4000\n"
		"Total transition : 5\n";
	struct hwtel_gpu_trans_stat *ts;
	char why[128] = "";
	int ret;

	ret = hwtel_gpu_trans_stat_parse(text, strlen(text), &ts, why, sizeof(why));
	if (ret)
		printf("#   why: '%s'\n", why);
	CHECK_EQ(ret, 0);
	if (ret)
		return;
	CHECK_EQ(ts->nstates, 3);
	CHECK_EQ(ts->cur, 2);
	CHECK_U64(ts->hz[0], 975000000);
	CHECK_U64(ts->hz[1], 1000000000);
	CHECK_U64(ts->hz[2], 1200000000);
	CHECK_U64(ts->time_ms[2], 4000);
	CHECK_U64(ts->to_count[0], 2);
	CHECK_U64(ts->to_count[1], 2);
	CHECK_U64(ts->to_count[2], 1);
	hwtel_gpu_trans_stat_free(ts);
}

/*
 * devfreq has no limit on the number of states but the sysfs page: with
 * 64 KiB pages (arm64) the 40 states here (17385 bytes) are printed whole.
 */
TEST(trans_stat_40_states)
{
	static char text[65536];
	struct hwtel_gpu_trans_stat *ts;
	char why[128] = "";
	size_t len = kernel_trans_stat(text, sizeof(text), 40, 39);
	unsigned int i;
	int ret;

	CHECK_EQ(len, 17385);
	ret = hwtel_gpu_trans_stat_parse(text, len, &ts, why, sizeof(why));
	if (ret)
		printf("#   why: '%s'\n", why);
	CHECK_EQ(ret, 0);
	if (ret)
		return;
	CHECK_EQ(ts->nstates, 40);
	CHECK_EQ(ts->cur, 39);
	CHECK_U64(ts->total, 781);
	for (i = 0; i < 40 && i < ts->nstates; i++) {
		CHECK_U64(ts->hz[i], 100000000ull + 25000000ull * i);
		CHECK_U64(ts->time_ms[i], 1000ull + 37ull * i);
		/* into i from i - 1: i times; into 0 from 39: once */
		CHECK_U64(ts->to_count[i], i ? i : 1);
	}
	hwtel_gpu_trans_stat_free(ts);
}

/*
 * A table the kernel's page cannot hold (4 KiB pages: 18 states fit, 19
 * do not). Kernels before commit 08e23d05fa6d ("PM / devfreq: Fix buffer
 * overflow in trans_stat_show", v6.8, in the stable series since) write past
 * the page and sysfs returns its first PAGE_SIZE - 1 bytes; kernels with
 * it return the first PAGE_SIZE - 1 bytes when the frequency header alone
 * does not fit (else -EFBIG from read()). Either text is cut: reported as
 * such, not parsed.
 */
TEST(trans_stat_truncated)
{
	static char text[65536];
	struct hwtel_gpu_trans_stat *ts;
	char why[160] = "";
	unsigned int i;
	size_t len;
	int ret;

	CHECK_EQ(kernel_trans_stat(text, sizeof(text), 18, 0), 3899);
	CHECK_EQ(hwtel_gpu_trans_stat_parse(text, 3899, &ts, why, sizeof(why)), 0);
	CHECK(ts && ts->nstates == 18);
	hwtel_gpu_trans_stat_free(ts);
	/* 19 states: 4302 bytes, cut in the last row */
	CHECK_EQ(kernel_trans_stat(text, sizeof(text), 19, 0), 4302);
	ret = hwtel_gpu_trans_stat_parse(text, 4095, &ts, why, sizeof(why));
	printf("#   19 states, 4095 bytes: %d '%s'\n", ret, why);
	CHECK_EQ(ret, -EFBIG);
	CHECK(strstr(why, "truncated at 4095 bytes"));
	CHECK(ts == NULL);
	/* 410 states: the header line cut (a fixed kernel) */
	len = (size_t)snprintf(text, sizeof(text), "     From  :   To\n           :");
	for (i = 0; i < 410; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%10lu",
					100000000ul + 1000000ul * i);
	CHECK_EQ(len, 4130);
	why[0] = '\0';
	ret = hwtel_gpu_trans_stat_parse(text, 4095, &ts, why, sizeof(why));
	printf("#   header of 4095 bytes: %d '%s'\n", ret, why);
	CHECK_EQ(ret, -EFBIG);
	CHECK(strstr(why, "truncated at 4095 bytes"));
}

TEST(trans_stat_malformed)
{
	static const char *const bad[] = {
		"  200000000:  0  1\nTotal transition : 0\n",
		"           : 200000000 300000000   time(ms)\n  200000000:  0  1\n"
		"Total transition : 0\n",
		"           : 200000000   time(ms)\n  300000000:  0  5\nTotal transition : 0\n",
		"           : 2x   time(ms)\nTotal transition : 0\n",
		"           : 200000000   time(ms)\n  200000000:  0  5\nTotal transition : y\n",
		"           : 200000000   time(ms)\n  200000000:  0  5\n"
		"           : 200000000   time(ms)\nTotal transition : 0\n",
	};
	static const char *const why_exp[] = {
		"line 1: a row before the frequency header",
		"line 2: row of 3 numbers, expected 4 for 200000000 Hz",
		"line 2: row of 3 numbers, expected 3 for 200000000 Hz",
		"line 1: bad frequency '2x'",
		"line 3: bad total",
		"line 3: a second frequency header",
	};
	struct hwtel_gpu_trans_stat *ts;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char why[128] = "";

		CHECK_EQ(hwtel_gpu_trans_stat_parse(bad[i], strlen(bad[i]), &ts, why, sizeof(why)),
			 -EINVAL);
		CHECK(ts == NULL);
		if (!strstr(why, why_exp[i]))
			printf("#   case %u: '%s'\n", i, why);
		CHECK(strstr(why, why_exp[i]));
	}
}

/*
 * The sampler on a fake /proc and /sys: one process with one client whose
 * file is a character device (/dev/null), its device's devfreq trans_stat.
 * A sample period that saw three operating points is priced by the
 * proportional rule, reported as estimated, with the error bound computed
 * here; a client gone before the next read (not held: a test tree) is lost.
 */
static char root[64];

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void mk(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	mkdir(path, 0755);
}

static void ln(const char *target, const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (symlink(target, path))
		perror(path);
}

/* uPJ of ns at MHz and mV, rounded: ns x MHz x mV^2 / 266e9 */
static uint64_t upj3(unsigned __int128 raw)
{
	const unsigned __int128 one = 266000000000ull;

	return (uint64_t)((raw + one / 2) / one);
}

#define RAW(ns, mhz, mv) ((unsigned __int128)(ns) * (mhz) * (mv) * (mv))

TEST(drm_sampler_estimate_and_lost)
{
	static const struct hwtel_gpu_opp opp[] = { { 200, 900 }, { 300, 1000 }, { 400, 1100 } };
	const struct hwtel_gpu_report *r;
	char proc[128], sys[128], dev[160], cmd[300];
	struct hwtel_gpu_drm *d;
	struct stat st;

	snprintf(root, sizeof(root), "/tmp/hwtel-drm-XXXXXX");
	if (!mkdtemp(root) || stat("/dev/null", &st) || !S_ISCHR(st.st_mode)) {
		CHECK(0);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mk("proc"); mk("proc/100"); mk("proc/100/fd"); mk("proc/100/fdinfo");
	mk("sys"); mk("sys/devices"); mk("sys/devices/gpu0"); mk("sys/dev");
	mk("sys/dev/char"); mk("sys/class"); mk("sys/class/devfreq");
	mk("sys/class/devfreq/gpu0");
	snprintf(dev, sizeof(dev), "%s/sys/devices/gpu0", root);
	ln(dev, "sys/class/devfreq/gpu0/device");
	snprintf(cmd, sizeof(cmd), "sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	mk(cmd);
	strcat(cmd, "/device");
	ln(dev, cmd);
	ln("/dev/null", "proc/100/fd/3");
	put("proc/100/comm", "app\n");
	{
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/proc/100/cmdline", root);
		f = fopen(path, "w");
		if (f) {
			fwrite("app\0--fast", 1, 11, f);
			fclose(f);
		}
	}
	put("proc/100/stat", "100 (app) S 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
	put("proc/100/fdinfo/3", "pos:\t0\ndrm-driver:\tfake\ndrm-client-id:\t1\n"
				"drm-engine-fragment:\t5000 ns\n");
	put("sys/class/devfreq/gpu0/trans_stat",
	    "     From  :   To\n"
	    "           : 200000000 300000000 400000000   time(ms)\n"
	    "* 200000000:         0         0         0       100\n"
	    "  300000000:         0         0         0         0\n"
	    "  400000000:         0         0         0         0\n"
	    "Total transition : 0\n");

	d = hwtel_gpu_drm_new(proc, sys, root);
	CHECK(d != NULL);
	if (!d)
		return;
	CHECK_EQ(hwtel_gpu_drm_set_opp_table(d, opp, 3), 0);
	CHECK_EQ(hwtel_gpu_drm_begin(d, 1000000000ull), 0);
	/* 10 ms busy more; the device spent 2, 3 and 5 ms at 200, 300, 400 */
	put("proc/100/fdinfo/3", "drm-driver:\tfake\ndrm-client-id:\t1\n"
				"drm-engine-fragment:\t10005000 ns\n");
	put("sys/class/devfreq/gpu0/trans_stat",
	    "     From  :   To\n"
	    "           : 200000000 300000000 400000000   time(ms)\n"
	    "  200000000:         0         1         0       102\n"
	    "  300000000:         0         0         1         3\n"
	    "* 400000000:         0         0         0         5\n"
	    "Total transition : 2\n");
	CHECK_EQ(hwtel_gpu_drm_interval(d, 2000000000ull, &r), 0);
	CHECK_STR(r->source, "drm");
	CHECK_EQ(r->nconsumers, 1);
	if (r->nconsumers == 1) {
		CHECK_EQ(r->consumers[0].pid, 100);
		CHECK_STR(r->consumers[0].comm, "app");
		CHECK_STR(r->consumers[0].cmdline, "app --fast");
		CHECK_U64(r->consumers[0].busy_ns[0], 10000000);
		CHECK_U64(r->consumers[0].energy_upj,
			  upj3(RAW(2000000, 200, 900) + RAW(3000000, 300, 1000) +
			       RAW(5000000, 400, 1100)));
	}
	CHECK_STR(r->unit_names[0], "fragment");
	CHECK_U64(r->estimated_ns, 10000000);
	CHECK_U64(r->bound_upj, upj3(RAW(10000000, 400, 1100) - RAW(10000000, 200, 900)));
	CHECK(r->opp_known && r->opp.mhz == 400 && r->opp.mv == 1100);
	CHECK_EQ(r->clients_lost, 0);

	/* the process exits between two reads: without a held file, lost */
	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/100", root);
	CHECK_EQ(system(cmd), 0);
	CHECK_EQ(hwtel_gpu_drm_interval(d, 3000000000ull, &r), 0);
	CHECK_EQ(r->nconsumers, 0);
	CHECK_EQ(r->clients_lost, 1);
	CHECK_EQ(hwtel_gpu_drm_cumulative(d)->nconsumers, 1);
	hwtel_gpu_drm_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_EQ(system(cmd), 0);
}

/*
 * The sampler with eleven engines (amdgpu's rings) on a device of 40
 * devfreq states (a 17385-byte trans_stat, as 64 KiB pages allow): every
 * engine is a unit of the report, every state is priced.
 */
TEST(drm_sampler_many_engines_and_states)
{
	static const char *const names[] = {
		"gfx0", "compute0", "compute1", "compute2", "compute3", "dma0", "dma1",
		"dec0", "enc0", "enc_10", "jpeg0",
	};
	static char tstat[65536];
	struct hwtel_gpu_opp opp[40];
	const struct hwtel_gpu_report *r;
	char proc[128], sys[128], dev[160], cmd[300], text[2048];
	struct hwtel_gpu_drm *d;
	uint64_t total = 0;
	struct stat st;
	unsigned int i, k;
	int len;

	snprintf(root, sizeof(root), "/tmp/hwtel-drm-XXXXXX");
	if (!mkdtemp(root) || stat("/dev/null", &st) || !S_ISCHR(st.st_mode)) {
		CHECK(0);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mk("proc"); mk("proc/100"); mk("proc/100/fd"); mk("proc/100/fdinfo");
	mk("sys"); mk("sys/devices"); mk("sys/devices/gpu0"); mk("sys/dev");
	mk("sys/dev/char"); mk("sys/class"); mk("sys/class/devfreq");
	mk("sys/class/devfreq/gpu0");
	snprintf(dev, sizeof(dev), "%s/sys/devices/gpu0", root);
	ln(dev, "sys/class/devfreq/gpu0/device");
	snprintf(cmd, sizeof(cmd), "sys/dev/char/%u:%u", major(st.st_rdev), minor(st.st_rdev));
	mk(cmd);
	strcat(cmd, "/device");
	ln(dev, cmd);
	ln("/dev/null", "proc/100/fd/3");
	put("proc/100/comm", "game\n");
	put("proc/100/stat", "100 (game) S 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
	len = snprintf(text, sizeof(text), "drm-driver:\tamdgpu\ndrm-client-id:\t7\n");
	for (k = 0; k < 11; k++)
		len += snprintf(text + len, sizeof(text) - (size_t)len, "drm-engine-%s:\t0 ns\n",
				names[k]);
	put("proc/100/fdinfo/3", text);
	for (i = 0; i < 40; i++)
		opp[i] = (struct hwtel_gpu_opp){ 100 + 25 * i, 800 + 10 * i };
	kernel_trans_stat(tstat, sizeof(tstat), 40, 39);
	put("sys/class/devfreq/gpu0/trans_stat", tstat);

	d = hwtel_gpu_drm_new(proc, sys, root);
	CHECK(d != NULL);
	if (!d)
		return;
	CHECK_EQ(hwtel_gpu_drm_set_opp_table(d, opp, 40), 0);
	CHECK_EQ(hwtel_gpu_drm_begin(d, 1000000000ull), 0);
	len = snprintf(text, sizeof(text), "drm-driver:\tamdgpu\ndrm-client-id:\t7\n");
	for (k = 0; k < 11; k++) {
		len += snprintf(text + len, sizeof(text) - (size_t)len, "drm-engine-%s:\t%u ns\n",
				names[k], 1000000u * (k + 1));
		total += 1000000u * (k + 1);
	}
	put("proc/100/fdinfo/3", text);
	/* 40 ms more in the last state, still current */
	{
		char *row = strstr(tstat, "*1075000000:");
		char *nl = row ? strchr(row, '\n') : NULL;

		CHECK(nl && !memcmp(nl - 10, "      2443", 10));
		if (nl)
			memcpy(nl - 10, "      2483", 10);
	}
	put("sys/class/devfreq/gpu0/trans_stat", tstat);
	CHECK_EQ(hwtel_gpu_drm_interval(d, 2000000000ull, &r), 0);
	CHECK_EQ(r->nunits, 11);
	for (k = 0; k < 11 && k < r->nunits; k++) {
		CHECK_STR(r->unit_names[k], names[k]);
		CHECK_U64(r->busy_ns[k], 1000000u * (k + 1));
	}
	CHECK_EQ(r->nconsumers, 1);
	if (r->nconsumers == 1) {
		for (k = 0; k < 11 && k < r->nunits; k++)
			CHECK_U64(r->consumers[0].busy_ns[k], 1000000u * (k + 1));
		CHECK_U64(r->consumers[0].busy_total_ns, total);
		CHECK_U64(r->consumers[0].unpriced_ns, 0);
		CHECK_U64(r->consumers[0].energy_upj, upj3(RAW(total, 1075, 1190)));
	}
	CHECK_U64(r->estimated_ns, 0);
	CHECK(r->opp_known && r->opp.mhz == 1075 && r->opp.mv == 1190);
	hwtel_gpu_drm_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_EQ(system(cmd), 0);
}

/*
 * Issue 20, "xe is invisible": xe prints no engine nanoseconds, but per
 * engine class drm-cycles-<class> (cycles the client's work took) and
 * drm-total-cycles-<class> (cycles of the GPU's timestamp clock that passed),
 * Documentation/gpu/drm-usage-stats.rst; the busy share of the time between
 * two reads is the first delta over the second (up to the class's
 * drm-engine-capacity-<class> times that time). Here rcs is busy 1/4 of
 * 100 ms, the four ccs engines together 2 x 100 ms; xe has no devfreq
 * device, so --initial-opp prices it.
 */
static uint64_t fake_now;

static uint64_t fake_clock(void)
{
	return fake_now;
}

static const char xe_fdinfo_fmt[] =
	"pos:\t0\nflags:\t02100002\nmnt_id:\t26\nino:\t1061\n"
	"drm-driver:\txe\n"
	"drm-client-id:\t42\n"
	"drm-pdev:\t0000:00:02.0\n"
	"drm-total-system:\t0\n"
	"drm-cycles-rcs:\t%llu\n"
	"drm-total-cycles-rcs:\t%llu\n"
	"drm-cycles-bcs:\t0\n"
	"drm-total-cycles-bcs:\t%llu\n"
	"drm-cycles-ccs:\t%llu\n"
	"drm-total-cycles-ccs:\t%llu\n"
	"drm-engine-capacity-ccs:\t4\n";

static void put_xe(unsigned long long rcs, unsigned long long ccs, unsigned long long total)
{
	char text[1024];

	snprintf(text, sizeof(text), xe_fdinfo_fmt, rcs, total, total, ccs, total);
	put("proc/100/fdinfo/3", text);
}

TEST(drm_xe_cycles)
{
	const struct hwtel_gpu_report *r;
	struct hwtel_gpu_fdinfo *fi = NULL;
	char proc[128], sys[128], cmd[300], text[1024];
	struct hwtel_gpu_drm *d;
	unsigned int k;

	snprintf(text, sizeof(text), xe_fdinfo_fmt, 28257900ull, 7655183225ull, 7655183225ull,
		 0ull, 7655183225ull);
	CHECK_EQ(hwtel_gpu_fdinfo_parse(text, strlen(text), &fi, NULL, "xe"), 0);
	CHECK_EQ(fi->nengines, 3);
	CHECK_STR(fi->engine[0].name, "rcs");
	CHECK(fi->engine[0].has_cycles && !fi->engine[0].has_busy);
	CHECK_U64(fi->engine[0].cycles, 28257900);
	CHECK(fi->engine[0].has_total_cycles);
	CHECK_U64(fi->engine[0].total_cycles, 7655183225ull);
	CHECK_EQ(fi->malformed, 0);
	hwtel_gpu_fdinfo_free(fi);

	snprintf(root, sizeof(root), "/tmp/hwtel-xe-XXXXXX");
	if (!mkdtemp(root)) {
		CHECK(0);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mk("proc"); mk("proc/100"); mk("proc/100/fd"); mk("proc/100/fdinfo"); mk("sys");
	ln("/dev/null", "proc/100/fd/3");
	put("proc/100/comm", "game\n");
	put("proc/100/stat", "100 (game) S 1 100 100 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 4242 0 0\n");
	put_xe(28257900, 0, 7655183225ull);
	d = hwtel_gpu_drm_new(proc, sys, root);
	CHECK(d != NULL);
	if (!d)
		return;
	hwtel_gpu_drm_set_clock(d, fake_clock);
	hwtel_gpu_drm_set_initial_opp(d, 300, 1000);
	fake_now = 5000000000ull;
	CHECK_EQ(hwtel_gpu_drm_begin(d, 1000000000ull), 0);
	/* 100 ms later: 19.2 MHz x 0.1 s = 1920000 timestamp cycles */
	put_xe(28257900 + 480000, 3840000, 7655183225ull + 1920000);
	fake_now += 100000000;
	CHECK_EQ(hwtel_gpu_drm_interval(d, 1100000000ull, &r), 0);
	CHECK_EQ(r->nconsumers, 1);
	if (r->nconsumers == 1) {
		uint64_t rcs = 0, ccs = 0;

		for (k = 0; k < r->nunits; k++) {
			if (!strcmp(r->unit_names[k], "rcs"))
				rcs = r->consumers[0].busy_ns[k];
			if (!strcmp(r->unit_names[k], "ccs"))
				ccs = r->consumers[0].busy_ns[k];
		}
		CHECK_EQ(r->consumers[0].pid, 100);
		CHECK_U64(rcs, 25000000);
		CHECK_U64(ccs, 200000000);
		CHECK_U64(r->consumers[0].busy_total_ns, 225000000);
		CHECK_U64(r->consumers[0].energy_upj, upj3(RAW(225000000, 300, 1000)));
		CHECK_U64(r->consumers[0].unpriced_ns, 0);
	}
	CHECK_U64(r->energy_upj, upj3(RAW(225000000, 300, 1000)));
	hwtel_gpu_drm_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_EQ(system(cmd), 0);
}

/*
 * Issue 20, "the DRM source never frees its per-process consumers": an
 * always-on exporter sees every process that opens a DRM file. Here 1200
 * processes in a fake /proc, 8 started per 10 ms interval and living 1 to
 * 3 intervals, each with one client (one engine, "gfx") whose busy time
 * grows every interval; named "vk0", "vk1" or "vk2"; their PIDs come back
 * every 40 processes (a new start time: a new life). One "Xorg" lives
 * throughout, closes its client at interval 50 and opens another at 60.
 * The device has no devfreq: --initial-opp 300 MHz 1000 mV prices it. After
 * every interval the consumers kept are no more than the processes alive,
 * and each name's Prometheus counter is the sum of its processes' energies
 * (each rounded to the uPJ, as this test computes them); at the end the
 * ended processes are in the exited list, summed per name.
 */
#define DC_PER		8
#define DC_IVL		150
#define DC_PID		2000
#define DC_REUSE	40
#define DC_XORG		1999

struct dc_proc {
	int pid;
	uint64_t busy;		/* written into its fdinfo, read by the source */
	bool alive;
	bool summed;		/* ended before the last interval: in exited */
};

static void dc_write(int pid, unsigned int fd, unsigned long long id, uint64_t busy)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "proc/%d/fdinfo/%u", pid, fd);
	snprintf(text, sizeof(text), "pos:\t0\ndrm-driver:\tfake\ndrm-client-id:\t%llu\n"
		 "drm-engine-gfx:\t%llu ns\n", id, (unsigned long long)busy);
	put(rel, text);
}

static void dc_spawn(int pid, unsigned long start, const char *comm)
{
	char rel[64], text[256];

	snprintf(rel, sizeof(rel), "proc/%d", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "proc/%d/fd", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "proc/%d/fdinfo", pid);
	mk(rel);
	snprintf(rel, sizeof(rel), "proc/%d/comm", pid);
	snprintf(text, sizeof(text), "%s\n", comm);
	put(rel, text);
	snprintf(rel, sizeof(rel), "proc/%d/cmdline", pid);
	put(rel, comm);
	snprintf(rel, sizeof(rel), "proc/%d/stat", pid);
	snprintf(text, sizeof(text), "%d (%s) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %lu 0 0\n",
		 pid, comm, start);
	put(rel, text);
}

static void dc_fd(int pid, unsigned int fd, bool open)
{
	char rel[64], path[600];

	snprintf(rel, sizeof(rel), "proc/%d/fd/%u", pid, fd);
	if (open) {
		ln("/dev/null", rel);
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc/%d/fdinfo/%u", root, pid, fd);
	unlink(path);
}

static void dc_exit(int pid)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/proc/%d", root, pid);
	if (system(cmd))
		printf("#   %s failed\n", cmd);
}

static uint64_t dc_prom(const char *out, const char *comm)
{
	char key[96];
	const char *p;
	unsigned long long a = 0, b = 0;

	snprintf(key, sizeof(key), "hwtel_gpu_energy_pseudojoules_total{comm=\"%s\"} ", comm);
	p = out ? strstr(out, key) : NULL;
	if (!p || sscanf(p + strlen(key), "%llu.%llu", &a, &b) != 2)
		return UINT64_MAX;
	return a * 1000000ull + b;
}

TEST(drm_consumers_bounded)
{
	static const char *const names[] = { "vk0", "vk1", "vk2" };
	const unsigned long nproc = DC_PER * DC_IVL;
	struct dc_proc *p = calloc(nproc, sizeof(*p));
	uint64_t xorg_busy = 0, xorg_closed = 0, ended_busy[3] = { 0 };
	unsigned long ended[3] = { 0 }, k, n, fails = 0;
	const struct hwtel_gpu_report *r = NULL, *cum;
	char proc[128], sys[128], cmd[300];
	struct hwtel_gpu_drm *d;
	unsigned int i;

	snprintf(root, sizeof(root), "/tmp/hwtel-drmc-XXXXXX");
	if (!p || !mkdtemp(root)) {
		CHECK(0);
		free(p);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mk("proc");
	dc_spawn(DC_XORG, 1, "Xorg");
	dc_fd(DC_XORG, 3, true);
	dc_write(DC_XORG, 3, 900001, 0);
	d = hwtel_gpu_drm_new(proc, sys, root);
	CHECK(d != NULL);
	if (!d) {
		free(p);
		return;
	}
	hwtel_gpu_drm_set_clock(d, fake_clock);
	hwtel_gpu_drm_set_initial_opp(d, 300, 1000);
	fake_now = 1000000000ull;
	CHECK_EQ(hwtel_gpu_drm_begin(d, 1000000000ull), 0);
	for (k = 0; k < DC_IVL && !fails; k++) {
		uint64_t want[3] = { 0 }, xorg_want;
		unsigned long alive = 1;
		char *out = NULL;
		size_t olen = 0;
		FILE *f;

		/* exits first (a PID comes back only after its last life ended) */
		for (n = 0; n < k * DC_PER; n++)
			if (p[n].alive && k >= n / DC_PER + 1 + n % 3) {
				dc_exit(p[n].pid);
				p[n].alive = false;
				p[n].summed = k + 1 < DC_IVL;
				ended[n % 3] += p[n].summed;
				ended_busy[n % 3] += p[n].summed ? p[n].busy : 0;
			}
		for (n = k * DC_PER; n < (k + 1) * DC_PER; n++) {
			p[n].pid = DC_PID + (int)(n % DC_REUSE);
			p[n].alive = true;
			dc_spawn(p[n].pid, 100 + n, names[n % 3]);
			dc_fd(p[n].pid, 4, true);
		}
		/* every client alive: more busy time (from 0 for the new ones) */
		for (n = 0; n < (k + 1) * DC_PER; n++) {
			if (!p[n].alive)
				continue;
			p[n].busy += (n % 7 + 1) * 1000 + k;
			dc_write(p[n].pid, 4, n + 1, p[n].busy);
			alive++;
		}
		if (k == 50) {
			dc_fd(DC_XORG, 3, false);
			xorg_closed = xorg_busy;
		} else if (k == 60) {
			dc_fd(DC_XORG, 5, true);
		}
		if (k < 50) {
			xorg_busy += 3000;
			dc_write(DC_XORG, 3, 900001, xorg_busy);
		} else if (k >= 60) {
			xorg_busy += 3000;
			dc_write(DC_XORG, 5, 900002, xorg_busy - xorg_closed);
		}
		fake_now += 10000000;
		CHECK_EQ(hwtel_gpu_drm_interval(d, 1000000000ull + (k + 1) * 10000000, &r), 0);
		if (hwtel_gpu_drm_retained(d) > alive) {
			printf("#   interval %lu: %lu processes alive; the DRM source keeps %u consumers\n",
			       k, alive, hwtel_gpu_drm_retained(d));
			fails++;
		}
		/* each process's energy, rounded, summed per name */
		for (n = 0; n < (k + 1) * DC_PER; n++)
			want[n % 3] += upj3(RAW(p[n].busy, 300, 1000));
		xorg_want = upj3(RAW(xorg_busy, 300, 1000));
		f = open_memstream(&out, &olen);
		hwtel_gpu_format_prom(f, hwtel_gpu_drm_cumulative(d), r);
		fclose(f);
		for (i = 0; i < 3; i++)
			if (dc_prom(out, names[i]) != want[i]) {
				printf("#   interval %lu: Prometheus %s %llu uPJ, expected %llu\n", k,
				       names[i], (unsigned long long)dc_prom(out, names[i]),
				       (unsigned long long)want[i]);
				fails++;
			}
		if (dc_prom(out, "Xorg") != xorg_want) {
			printf("#   interval %lu: Prometheus Xorg %llu uPJ, expected %llu\n", k,
			       (unsigned long long)dc_prom(out, "Xorg"),
			       (unsigned long long)xorg_want);
			fails++;
		}
		free(out);
	}
	CHECK_EQ(fails, 0);
	CHECK_EQ(k, DC_IVL);
	cum = hwtel_gpu_drm_cumulative(d);
	/*
	 * the processes that ended, summed per name in name order, but those
	 * that ended in the last interval: rows of its reports, summed after
	 */
	CHECK_EQ(cum->nexited, 3);
	for (i = 0; i < cum->nexited && i < 3; i++) {
		uint64_t e = 0;

		for (n = i; n < nproc; n += 3)
			if (p[n].summed)
				e += upj3(RAW(p[n].busy, 300, 1000));
		CHECK_STR(cum->exited[i].comm, names[i]);
		CHECK_EQ(cum->exited[i].pid, 0);
		CHECK_EQ(cum->exited[i].life, ended[i]);
		CHECK_U64(cum->exited[i].busy_total_ns, ended_busy[i]);
		CHECK_U64(cum->exited[i].energy_upj, e);
	}
	{
		/* every process once: in a row or in its name's exited entry */
		uint64_t got = 0, want = 0, busy = 0, wbusy = 0;
		unsigned long lives = 0;

		for (i = 0; i < cum->nconsumers; i++) {
			got += cum->consumers[i].energy_upj;
			busy += cum->consumers[i].busy_total_ns;
			lives++;
		}
		for (i = 0; i < cum->nexited; i++) {
			got += cum->exited[i].energy_upj;
			busy += cum->exited[i].busy_total_ns;
			lives += cum->exited[i].life;
		}
		for (n = 0; n < nproc; n++) {
			want += upj3(RAW(p[n].busy, 300, 1000));
			wbusy += p[n].busy;
		}
		want += upj3(RAW(xorg_busy, 300, 1000));
		wbusy += xorg_busy;
		CHECK_U64(got, want);
		CHECK_U64(busy, wbusy);
		CHECK_U64(cum->busy_ns[0], wbusy);
		CHECK_EQ(lives, nproc + 1);
	}
	/* Xorg: one row over both of its clients */
	for (i = 0; i < cum->nconsumers; i++)
		if (cum->consumers[i].pid == DC_XORG) {
			CHECK_EQ(cum->consumers[i].life, 0);
			CHECK_U64(cum->consumers[i].busy_total_ns, xorg_busy);
		}
	hwtel_gpu_drm_free(d);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	CHECK_EQ(system(cmd), 0);
	free(p);
}

/*
 * Issue 20 item 7, bounded state on a long-running host. A DRM file without
 * drm-client-id is said once, and its (PID, fd, device) kept so that it is
 * not said at every read. Entries whose file is gone (a closed fd, an ended
 * process) are dropped at the next read: kept, they grew by every such file
 * ever seen. A file opened again under the same fd after a close is a new
 * file: said once again. Process 300 keeps fd 3 open throughout, and at each
 * read opens a new fd and closes the one before; a new process with such a
 * file starts at each read and the one before ends; every 10th read fd 5 of
 * process 300 is closed, opened again at the next.
 */
#define DB_READS	40
#define DB_PID		300
#define DB_NEW		400

static void db_open(int pid, unsigned int fd)
{
	dc_fd(pid, fd, true);
	put(unit_fmt("proc/%d/fdinfo/%u", pid, fd), "pos:\t0\ndrm-driver:\tfake\n");
}

/* @said has, once each, the diagnostics of the @n files (PID, fd) and no other line */
static bool db_said(const char *said, const int (*files)[2], unsigned int n)
{
	unsigned int i, lines = 0;
	const char *p;

	for (p = said; *p; p++)
		lines += *p == '\n';
	for (i = 0; i < n; i++) {
		const char *l = unit_fmt("%s/proc/%d/fdinfo/%d:2: drm-driver without drm-client-id: not counted\n",
					 root, files[i][0], files[i][1]);

		if (!strstr(said, l) || strstr(strstr(said, l) + 1, l))
			return false;
	}
	return lines == n;
}

TEST(drm_bad_files_pruned)
{
	char proc[128], sys[128], *diag = NULL;
	const struct hwtel_gpu_report *r = NULL;
	unsigned long k, fails_kept = 0, fails_said = 0;
	struct hwtel_gpu_drm *d;
	size_t dlen = 0, seen = 0;
	bool fd5 = true;
	FILE *f;

	if (snprintf(root, sizeof(root), "%s", unit_tmp("drm-bad")) >= (int)sizeof(root) ||
	    mkdir(root, 0755)) {
		CHECK(0);
		return;
	}
	snprintf(proc, sizeof(proc), "%s/proc", root);
	snprintf(sys, sizeof(sys), "%s/sys", root);
	mk("proc");
	dc_spawn(DB_PID, 1, "gl");
	db_open(DB_PID, 3);
	db_open(DB_PID, 5);
	f = open_memstream(&diag, &dlen);
	d = f ? hwtel_gpu_drm_new(proc, sys, root) : NULL;
	CHECK(d != NULL);
	if (!d) {
		if (f)
			fclose(f);
		free(diag);
		return;
	}
	hwtel_gpu_drm_set_clock(d, fake_clock);
	hwtel_gpu_drm_set_initial_opp(d, 300, 1000);
	hwtel_gpu_drm_set_diag(d, f, "");
	fake_now = 1000000000ull;
	CHECK_EQ(hwtel_gpu_drm_begin(d, fake_now), 0);
	fflush(f);
	{
		static const int first[][2] = { { DB_PID, 3 }, { DB_PID, 5 } };

		CHECK(db_said(diag, first, 2));
	}
	CHECK_EQ(hwtel_gpu_drm_retained_bad(d), 2);
	seen = dlen;
	for (k = 1; k <= DB_READS; k++) {
		int files[3][2];
		unsigned int nsaid = 0, live;

		if (k > 1) {
			dc_fd(DB_PID, 10 + k - 1, false);
			dc_exit(DB_NEW + (int)k - 1);
		}
		db_open(DB_PID, 10 + k);
		files[nsaid][0] = DB_PID;
		files[nsaid++][1] = 10 + (int)k;
		dc_spawn(DB_NEW + (int)k, 100 + k, "gl");
		db_open(DB_NEW + (int)k, 4);
		files[nsaid][0] = DB_NEW + (int)k;
		files[nsaid++][1] = 4;
		if (k % 10 == 0) {
			dc_fd(DB_PID, 5, false);
			fd5 = false;
		} else if (!fd5) {
			db_open(DB_PID, 5);
			fd5 = true;
			files[nsaid][0] = DB_PID;
			files[nsaid++][1] = 5;
		}
		fake_now += 10000000;
		CHECK_EQ(hwtel_gpu_drm_interval(d, fake_now, &r), 0);
		fflush(f);
		/* fd 3, the new fd of 300, the new process's fd 4, fd 5 when open */
		live = 3 + fd5;
		/* the first failures of each kind said, and the last read's */
		if (hwtel_gpu_drm_retained_bad(d) != live && (++fails_kept <= 3 || k == DB_READS))
			printf("#   read %lu: %u files without a client id open, %u kept\n",
			       k, live, hwtel_gpu_drm_retained_bad(d));
		if (!db_said(diag + seen, (const int (*)[2])files, nsaid) && ++fails_said <= 3) {
			const char *l;

			printf("#   read %lu: expected the %u files opened since, once each; said:\n",
			       k, nsaid);
			for (l = diag + seen; *l && strchr(l, '\n'); l = strchr(l, '\n') + 1)
				printf("#     %.*s\n", (int)(strchr(l, '\n') - l), l);
		}
		seen = dlen;
	}
	CHECK_EQ(fails_kept, 0);
	CHECK_EQ(fails_said, 0);
	CHECK(r && r->nconsumers == 0);
	hwtel_gpu_drm_free(d);
	fclose(f);
	free(diag);
	CHECK_EQ(system(unit_fmt("rm -rf -- '%s'", root)), 0);
}
