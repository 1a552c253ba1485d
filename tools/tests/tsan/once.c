// SPDX-License-Identifier: GPL-2.0
/*
 * ThreadSanitizer check of the library's one-time initialisations (make -C
 * tools tsan): threads that start using the library at the same moment.
 * TSan reports a race and fails the run; without one it prints "ok".
 */
#include <pthread.h>
#include <stdio.h>

#include <libhwtel/hwtel.h>

#include "lib/internal.h"

#define THREADS 4

static pthread_barrier_t start;

static void *first_group(void *arg)
{
	static struct hwtel_pmu pmu;

	(void)arg;
	pthread_barrier_wait(&start);
	hwtel_group_free(hwtel_group_new(&pmu, false));
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	int i;

	pthread_barrier_init(&start, NULL, THREADS);
	for (i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, first_group, NULL);
	for (i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start);
	puts("ok libperf_init once");
	return 0;
}
