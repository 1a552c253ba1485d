/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared pieces of the hwtel fuzzers: a small deterministic PRNG, an errno
 * histogram, option parsing helpers and the dmesg splat check.
 */
#ifndef HWTEL_FUZZ_COMMON_H
#define HWTEL_FUZZ_COMMON_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/*
 * PRNG: splitmix64 to derive per-thread seeds, xoshiro-like 64-bit
 * xorshift-multiply for the stream. Only the sequence matters: the same seed
 * gives the same numbers on every machine.
 */
struct fz_rng {
	uint64_t s;
};

static inline uint64_t fz_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static inline void fz_seed(struct fz_rng *r, uint64_t seed, unsigned int stream)
{
	r->s = fz_mix(seed ^ fz_mix(stream + 1));
	if (!r->s)
		r->s = 1;
}

static inline uint64_t fz_next(struct fz_rng *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

/* uniform in [0, n) (n > 0); the tiny modulo bias does not matter here */
static inline uint64_t fz_below(struct fz_rng *r, uint64_t n)
{
	return n ? fz_next(r) % n : 0;
}

/* true with probability pct percent */
static inline int fz_pct(struct fz_rng *r, unsigned int pct)
{
	return fz_below(r, 100) < pct;
}

/* Errno histogram: slot 0 counts successes, slot e counts errno e. */
#define FZ_ERRNO_MAX	200

struct fz_hist {
	unsigned long n[FZ_ERRNO_MAX + 1];
};

static inline void fz_hist_add(struct fz_hist *h, int err)
{
	if (err < 0 || err > FZ_ERRNO_MAX)
		err = FZ_ERRNO_MAX;
	h->n[err]++;
}

static inline void fz_hist_merge(struct fz_hist *dst, const struct fz_hist *src)
{
	int i;

	for (i = 0; i <= FZ_ERRNO_MAX; i++)
		dst->n[i] += src->n[i];
}

static inline const char *fz_errname(int e)
{
	switch (e) {
	case 0: return "ok";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case EINTR: return "EINTR";
	case EIO: return "EIO";
	case ENXIO: return "ENXIO";
	case E2BIG: return "E2BIG";
	case EBADF: return "EBADF";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case EEXIST: return "EEXIST";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case EMFILE: return "EMFILE";
	case ENOTTY: return "ENOTTY";
	case ENOSPC: return "ENOSPC";
	case ERANGE: return "ERANGE";
	case ENOSYS: return "ENOSYS";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EMSGSIZE: return "EMSGSIZE";
	case ENOBUFS: return "ENOBUFS";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ENOLINK: return "ENOLINK";
	case ENODATA: return "ENODATA";
	case EOVERFLOW: return "EOVERFLOW";
	case ETIMEDOUT: return "ETIMEDOUT";
	default: return NULL;
	}
}

/* print "  <label>: ok=N EINVAL=N ..." */
static inline void fz_hist_print(const char *label, const struct fz_hist *h)
{
	const char *nm;
	int i;

	printf("#   %-12s", label);
	for (i = 0; i <= FZ_ERRNO_MAX; i++) {
		if (!h->n[i])
			continue;
		nm = fz_errname(i);
		if (nm)
			printf(" %s=%lu", nm, h->n[i]);
		else
			printf(" errno%d=%lu", i, h->n[i]);
	}
	printf("\n");
}

static inline double fz_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* a default seed when none is given: time and pid */
static inline uint64_t fz_default_seed(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return fz_mix((uint64_t)ts.tv_sec * 1000000007ULL + ts.tv_nsec + getpid()) &
	       0xffffffffffffULL;
}

/*
 * dmesg splat check through /dev/kmsg: fz_kmsg_open() at start skips what
 * is already there; fz_kmsg_splats() counts the records since then that
 * match a kernel warning pattern (the same set selftests/run_in_vm fails
 * on) and prints the first few.
 */
static inline int fz_kmsg_open(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0)
		lseek(fd, 0, SEEK_END);
	return fd;
}

static inline int fz_kmsg_splats(int fd)
{
	static const char *const pat[] = {
		"WARNING:", "BUG:", "BUG kernel", "Oops", "general protection fault",
		"Kernel panic", "rcu: INFO", "self-detected stall",
		"detected stalls on CPUs", "blocked for more than",
		"possible circular locking", "possible recursive locking",
		"inconsistent lock state", "suspicious RCU usage", "lockdep",
		"KASAN", "UBSAN", "kernel BUG", "Call Trace:",
		"list_add corruption", "list_del corruption", "refcount_t:",
		"sleeping function called from invalid context",
	};
	char buf[8192];
	int splats = 0, shown = 0;
	unsigned int i;
	ssize_t n;

	if (fd < 0) {
		printf("# dmesg: /dev/kmsg not readable, splats not checked\n");
		return 0;
	}
	for (;;) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		buf[n] = 0;
		for (i = 0; i < sizeof(pat) / sizeof(pat[0]); i++) {
			if (strstr(buf, pat[i])) {
				char *msg = strchr(buf, ';');

				splats++;
				if (shown++ < 5)
					printf("# splat: %s", msg ? msg + 1 : buf);
				break;
			}
		}
	}
	close(fd);
	return splats;
}

/* strtoull that accepts 0x and refuses garbage; exits on error */
static inline uint64_t fz_num(const char *opt, const char *s)
{
	char *end;
	uint64_t v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || !*s || *end) {
		fprintf(stderr, "bad number for %s: %s\n", opt, s);
		exit(2);
	}
	return v;
}

#endif /* HWTEL_FUZZ_COMMON_H */
