// SPDX-License-Identifier: GPL-2.0
/*
 * Print the host's TSC frequency in kHz: TSC ticks against CLOCK_MONOTONIC_RAW
 * over 200 ms, the median of five. Under TCG the guest's TSC is the host's,
 * and scripts/vmrun hands this value to the guest (tsc_early_khz=) instead of
 * letting it calibrate against an emulated PIT, which a loaded host skews.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static double ns_of(const struct timespec *t)
{
	return t->tv_sec * 1e9 + t->tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	struct timespec a, b, d = { 0, 200000000 };
	double khz[5];
	uint64_t t0, t1;
	int i;

	for (i = 0; i < 5; i++) {
		clock_gettime(CLOCK_MONOTONIC_RAW, &a);
		t0 = __rdtsc();
		nanosleep(&d, NULL);
		clock_gettime(CLOCK_MONOTONIC_RAW, &b);
		t1 = __rdtsc();
		khz[i] = (double)(t1 - t0) / (ns_of(&b) - ns_of(&a)) * 1e6;
	}
	qsort(khz, 5, sizeof(khz[0]), cmp);
	printf("%.0f\n", khz[2]);
	return 0;
}
