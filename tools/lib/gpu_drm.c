// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: the DRM source of the GPU power report. Per open DRM file the
 * client usage stats of /proc/PID/fdinfo/FD (drm-engine-<name> busy ns,
 * drm-cycles-<name>), per GPU its devfreq device (trans_stat) and OPP
 * voltages; energy in pseudo-joules as for the Mali source.
 *
 * Energy is accumulated exactly in Hz x uV^2 x ns (unsigned __int128);
 * 1 uPJ = 266e6 Hz x (1e6 uV)^2 x 1e9 ns / 1e6 of those. The rules that
 * price the busy time of one sub-interval (between two samples) are in
 * Documentation/userspace-api/hwtel.rst, "The DRM source".
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <libhwtel/gpu.h>

#include "internal.h"

typedef unsigned __int128 u128;

#define UPJ_RAW ((u128)266000000u * 1000000000000ull * 1000u)

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* ---- parsers ---------------------------------------------------------- */

static void diag_line(FILE *diag, const char *what, unsigned long line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void diag_line(FILE *diag, const char *what, unsigned long line, const char *fmt, ...)
{
	va_list ap;

	if (!diag)
		return;
	fprintf(diag, "%s:%lu: ", what ? what : "fdinfo", line);
	va_start(ap, fmt);
	vfprintf(diag, fmt, ap);
	va_end(ap);
	fputc('\n', diag);
}

/* "  123  UNIT" with optional UNIT (NULL: none allowed) */
static int parse_value(const char *v, const char *unit, uint64_t *out)
{
	char *end;

	while (*v == ' ' || *v == '\t')
		v++;
	if (!isdigit((unsigned char)*v))
		return -1;
	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno)
		return -1;
	while (*end == ' ' || *end == '\t')
		end++;
	if (unit) {
		if (strcmp(end, unit))
			return -1;
	} else if (*end) {
		return -1;
	}
	return 0;
}

/* The engine @name of @o, a new one if needed; NULL: out of memory */
static struct hwtel_gpu_fdinfo_engine *engine_of(struct hwtel_gpu_fdinfo *o, const char *name,
						 size_t nlen, unsigned int *cap)
{
	struct hwtel_gpu_fdinfo_engine *e;
	unsigned int i;

	for (i = 0; i < o->nengines; i++)
		if (strlen(o->engine[i].name) == nlen && !memcmp(o->engine[i].name, name, nlen))
			return &o->engine[i];
	if (o->nengines == *cap) {
		e = realloc(o->engine, (*cap ? 2 * *cap : 8) * sizeof(*e));
		if (!e)
			return NULL;
		o->engine = e;
		*cap = *cap ? 2 * *cap : 8;
	}
	e = &o->engine[o->nengines++];
	memset(e, 0, sizeof(*e));
	memcpy(e->name, name, nlen);
	e->name[nlen] = '\0';
	return e;
}

void hwtel_gpu_fdinfo_free(struct hwtel_gpu_fdinfo *fi)
{
	if (fi)
		free(fi->engine);
	free(fi);
}

int hwtel_gpu_fdinfo_parse(const char *buf, size_t len, struct hwtel_gpu_fdinfo **out,
			   FILE *diag, const char *what)
{
	struct hwtel_gpu_fdinfo *o;
	unsigned int cap = 0;
	static const struct {
		const char *prefix, *unit;
		int kind;
	} keys[] = {
		{ "drm-engine-", "ns", 0 },
		{ "drm-cycles-", NULL, 1 },
		{ "drm-maxfreq-", "Hz", 2 },
		{ "drm-curfreq-", "Hz", 3 },
		{ "drm-total-cycles-", NULL, 4 },
	};
	bool have_driver = false, have_id = false, bad_id = false;
	const char *p = buf, *end = buf + len;
	char line[512];

	hwtel_clear_error();
	*out = o = calloc(1, sizeof(*o));
	if (!o)
		return -ENOMEM;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *ls = p;
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *colon, *key, *val;
		unsigned int k;

		o->lines++;
		p += l + (nl ? 1 : 0);
		if (l < 4 || memcmp(ls, "drm-", 4))
			continue;
		if (l >= sizeof(line)) {
			diag_line(diag, what, o->lines, "line too long (%zu bytes), skipped", l);
			o->malformed++;
			continue;
		}
		if (memchr(ls, '\0', l)) {
			diag_line(diag, what, o->lines, "NUL byte in the line, skipped");
			o->malformed++;
			continue;
		}
		memcpy(line, ls, l);
		line[l] = '\0';
		colon = strchr(line, ':');
		if (!colon) {
			diag_line(diag, what, o->lines, "'%s': no ':', skipped", line);
			o->malformed++;
			continue;
		}
		*colon = '\0';
		key = line;
		val = colon + 1;
		if (!strcmp(key, "drm-driver")) {
			while (*val == ' ' || *val == '\t')
				val++;
			if (!*val || have_driver || strlen(val) >= sizeof(o->driver)) {
				diag_line(diag, what, o->lines, "drm-driver: %s, skipped",
					  !*val ? "empty" : have_driver ? "duplicate" : "name too long");
				o->malformed++;
				continue;
			}
			snprintf(o->driver, sizeof(o->driver), "%s", val);
			have_driver = true;
			continue;
		}
		if (!strcmp(key, "drm-client-id")) {
			uint64_t v;

			if (have_id || parse_value(val, NULL, &v)) {
				diag_line(diag, what, o->lines, "drm-client-id: %s, skipped",
					  have_id ? "duplicate" : "not a decimal number");
				o->malformed++;
				bad_id = !have_id;
				continue;
			}
			o->client_id = v;
			have_id = true;
			continue;
		}
		for (k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strncmp(key, keys[k].prefix, strlen(keys[k].prefix)))
				break;
		if (k == sizeof(keys) / sizeof(keys[0]))
			continue;	/* drm-memory-*, drm-pdev, ...: not used */
		{
			const char *name = key + strlen(keys[k].prefix);
			size_t nlen = strlen(name);
			struct hwtel_gpu_fdinfo_engine *e;
			uint64_t v;

			/* drm-engine-capacity-<name> is a count, not a busy time */
			if (keys[k].kind == 0 && !strncmp(name, "capacity-", 9))
				continue;
			if (!nlen || nlen >= sizeof(e->name)) {
				diag_line(diag, what, o->lines, "%s: engine name %s, skipped", key,
					  nlen ? "over 23 characters" : "empty");
				o->malformed++;
				continue;
			}
			if (parse_value(val, keys[k].unit, &v)) {
				diag_line(diag, what, o->lines,
					  "%s: expected a decimal number%s%s, skipped", key,
					  keys[k].unit ? " and " : "",
					  keys[k].unit ? keys[k].unit : "");
				o->malformed++;
				continue;
			}
			e = engine_of(o, name, nlen, &cap);
			if (!e) {
				hwtel_gpu_fdinfo_free(o);
				*out = NULL;
				return -ENOMEM;
			}
			switch (keys[k].kind) {
			case 0:
				if (e->has_busy)
					goto dup;
				e->busy_ns = v;
				e->has_busy = true;
				break;
			case 1:
				if (e->has_cycles)
					goto dup;
				e->cycles = v;
				e->has_cycles = true;
				break;
			case 2:
				e->maxfreq_hz = v;
				break;
			case 4:
				if (e->has_total_cycles)
					goto dup;
				e->total_cycles = v;
				e->has_total_cycles = true;
				break;
			default:
				e->curfreq_hz = v;
				break;
			}
			continue;
dup:
			diag_line(diag, what, o->lines, "%s: duplicate, skipped", key);
			o->malformed++;
		}
	}
	if (!have_driver)
		return -ENOENT;
	if (!have_id) {
		if (!bad_id)
			diag_line(diag, what, o->lines, "drm-driver without drm-client-id: not counted");
		return -EINVAL;
	}
	return 0;
}

/*
 * @n columns of the kernel's "%10lu"/"%10u" at @s: each 10 characters,
 * spaces then at least one digit (a 10-digit value fills its column, so
 * columns can touch: "  975000000" "1000000000"). Values into @v (NULL:
 * only checked). Returns 0, or -1 when @s is not so laid out.
 */
static int fixed_columns(const char *s, unsigned int n, uint64_t *v)
{
	unsigned int i, k;

	for (i = 0; i < n; i++, s += 10) {
		uint64_t x = 0;

		for (k = 0; k < 10 && s[k] == ' '; k++)
			;
		if (k == 10)
			return -1;
		for (; k < 10; k++) {
			if (!isdigit((unsigned char)s[k]))
				return -1;
			x = x * 10 + (uint64_t)(s[k] - '0');
		}
		if (v)
			v[i] = x;
	}
	return 0;
}

/*
 * The frequencies of the header, the text after its ':': the kernel's
 * columns then "   time(ms)", or (hand-written) numbers between blanks.
 * Returns their number (into @hz unless NULL, up to @max), or -1 with the
 * bad token in @bad.
 */
static int trans_header(char *rest, uint64_t *hz, unsigned int max, const char **bad)
{
	char *tm = strstr(rest, "time(ms)"), *tok, *save;
	size_t l = tm ? (size_t)(tm - rest) : strlen(rest);
	unsigned int n = 0;

	if (tm && l >= 3 && (l - 3) % 10 == 0 && !memcmp(rest + l - 3, "   ", 3) &&
	    (l - 3) / 10 <= (hz ? max : UINT_MAX) &&
	    !fixed_columns(rest, (unsigned int)((l - 3) / 10), hz))
		return (int)((l - 3) / 10);
	if (tm)
		*tm = '\0';
	for (tok = strtok_r(rest, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		uint64_t v;

		*bad = tok;
		if ((hz && n == max) || parse_value(tok, NULL, hz ? &hz[n] : &v))
			return -1;
		n++;
	}
	return (int)n;
}

/*
 * The kernel's text always ends with its "Total transition" line. Without
 * it the text was cut: the table did not fit in the sysfs page (kernels
 * before 08e23d05fa6d write past it and sysfs returns PAGE_SIZE - 1 bytes;
 * kernels with it do so when the frequency header alone does not fit), or
 * the reader's buffer was too small. Its last row or number may be cut
 * short, so nothing of it is used.
 */
static bool trans_stat_whole(const char *buf, size_t len)
{
	const char *last;

	if (!len || buf[len - 1] != '\n')
		return false;
	for (last = buf + len - 1; last > buf && last[-1] != '\n'; last--)
		;
	while (last < buf + len && *last == ' ')
		last++;
	return (size_t)(buf + len - last) >= 16 && !memcmp(last, "Total transition", 16);
}

void hwtel_gpu_trans_stat_free(struct hwtel_gpu_trans_stat *ts)
{
	free(ts);
}

int hwtel_gpu_trans_stat_parse(const char *buf, size_t len, struct hwtel_gpu_trans_stat **out,
			       char *why, size_t whylen)
{
	struct hwtel_gpu_trans_stat *o = NULL;
	unsigned int row = 0, lineno = 0, nhdr = 0;
	uint64_t *v = NULL;
	char *text, *p, *end;
	bool header = false;
	int ret = -EINVAL;

	hwtel_clear_error();
	*out = NULL;
	if (why && whylen)
		why[0] = '\0';
	if (memchr(buf, '\0', len)) {
		snprintf(why, whylen, "NUL byte in the text");
		return -EINVAL;
	}
	text = malloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf, len);
	text[len] = '\0';
	for (p = text; *p == ' ' || *p == '\n'; p++)
		;
	if (!strncmp(p, "Not Supported", 13)) {
		free(text);
		return -ENOTSUP;
	}
	if (!trans_stat_whole(text, len)) {
		snprintf(why, whylen,
			 "truncated at %zu bytes (no \"Total transition\" line at the end): the table did not fit in the kernel's page",
			 len);
		free(text);
		return -EFBIG;
	}
	/* the number of states: the frequencies of the ": F0 F1 ... time(ms)" line */
	for (p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		char *s = p, *nl = strchr(p, '\n'), *hdr;
		const char *bad = "";
		int n;

		while (*s == ' ')
			s++;
		if (*s != ':')
			continue;
		hdr = strndup(s + 1, nl ? (size_t)(nl - s - 1) : strlen(s + 1));
		if (!hdr) {
			free(text);
			return -ENOMEM;
		}
		n = trans_header(hdr, NULL, 0, &bad);
		free(hdr);
		nhdr = n > 0 ? (unsigned int)n : 0;
		break;
	}
	o = calloc(1, sizeof(*o) + 3 * (size_t)nhdr * sizeof(uint64_t));
	v = calloc((size_t)nhdr + 2, sizeof(*v));
	if (!o || !v) {
		ret = -ENOMEM;
		goto out;
	}
	o->hz = (uint64_t *)(o + 1);
	o->time_ms = o->hz + nhdr;
	o->to_count = o->time_ms + nhdr;
	o->cur = -1;

	for (p = text, end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *s = p, *tok, *save, *colon;
		unsigned int n = 0;
		bool star = false;

		if (nl)
			*nl = '\0';
		p = nl ? nl + 1 : end;
		lineno++;
		while (*s == ' ')
			s++;
		if (!*s)
			continue;
		if (!strncmp(s, "From", 4))
			continue;
		if (!strncmp(s, "Total transition", 16)) {
			char *c = strchr(s, ':');

			if (!c || parse_value(c + 1, NULL, &o->total)) {
				snprintf(why, whylen, "line %u: bad total", lineno);
				goto out;
			}
			continue;
		}
		if (*s == ':') {
			if (header) {
				snprintf(why, whylen, "line %u: a second frequency header", lineno);
				goto out;
			}
			/* ": F0 F1 ... time(ms)" */
			{
				const char *bad = "";
				int nh = trans_header(s + 1, o->hz, nhdr, &bad);

				if (nh < 0) {
					snprintf(why, whylen, "line %u: bad frequency '%s'", lineno, bad);
					goto out;
				}
				o->nstates = (unsigned int)nh;
			}
			header = true;
			continue;
		}
		if (!header) {
			snprintf(why, whylen, "line %u: a row before the frequency header", lineno);
			goto out;
		}
		if (*s == '*') {
			star = true;
			s++;
		}
		/* "%10lu:" then the kernel's columns, or numbers between blanks */
		colon = strchr(s, ':');
		if (colon)
			*colon = '\0';
		if (!colon || parse_value(s, NULL, &v[0])) {
			snprintf(why, whylen, "line %u: bad row", lineno);
			goto out;
		}
		n = 1;
		s = colon + 1;
		if (strlen(s) >= 10 * ((size_t)o->nstates + 1) &&
		    !fixed_columns(s, o->nstates, v + 1) &&
		    !parse_value(s + 10 * (size_t)o->nstates, NULL, &v[o->nstates + 1])) {
			n = o->nstates + 2;
		} else {
			for (tok = strtok_r(s, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
				if (n == o->nstates + 2 || parse_value(tok, NULL, &v[n])) {
					snprintf(why, whylen, "line %u: bad row", lineno);
					goto out;
				}
				n++;
			}
		}
		if (n != o->nstates + 2 || row >= o->nstates || v[0] != o->hz[row]) {
			snprintf(why, whylen, "line %u: row of %u numbers, expected %u for %" PRIu64 " Hz",
				 lineno, n, o->nstates + 2, row < o->nstates ? o->hz[row] : 0);
			goto out;
		}
		for (n = 0; n < o->nstates; n++)
			o->to_count[n] += v[1 + n];
		o->time_ms[row] = v[o->nstates + 1];
		if (star)
			o->cur = (int)row;
		row++;
	}
	if (!header || row != o->nstates) {
		snprintf(why, whylen, "%u rows for %u frequencies", row, o->nstates);
		goto out;
	}
	*out = o;
	o = NULL;
	ret = 0;
out:
	free(o);
	free(v);
	free(text);
	return ret;
}

/* ---- sampler ---------------------------------------------------------- */

struct drm_dvfs {
	char name[64];
	char devpath[PATH_MAX];
	struct hwtel_gpu_trans_stat *prev;	/* the last read */
	struct hwtel_gpu_trans_stat *base;	/* read before the last sample's fdinfo */
	struct hwtel_gpu_trans_stat *start;	/* read before this sample's fdinfo */
	bool have_start, said;
	/* per state of prev (the number of states does not change) */
	uint64_t *uv;				/* 0: unknown */
	unsigned int nvis;
	unsigned int *vis;
	uint64_t *w;				/* ms in the state in the sub-interval */
};

struct drm_cons {
	int pid;
	uint64_t start;			/* /proc/PID/stat starttime */
	unsigned int life;
	char comm[32], cmdline[256];
	unsigned int nunits;		/* of busy and cbusy (the units seen when it last grew) */
	uint64_t *busy, unpriced;
	u128 raw;
	uint64_t *cbusy, cunpriced;
	u128 craw;
};

struct drm_client {
	uint64_t rdev, id;
	unsigned int cons;
	int held;
	int dvfs;
	bool seen;
	uint64_t t_read;		/* d->now() of the last read */
	unsigned long malformed;
	unsigned int nengines, cap;
	struct drm_engine {
		char name[24];
		uint64_t busy, cycles, total;
		bool has_cycles, share;	/* share: xe's cycles and total cycles */
		uint64_t pdt, pdc;	/* pending: read, not priced yet */
		bool pc;
	} *e;				/* [nengines] */
};

struct drm_bad {
	int pid, fd;
	uint64_t rdev;
	bool seen;		/* found again by this scan: still open */
};

struct hwtel_gpu_drm {
	char proc[PATH_MAX], sys[PATH_MAX], dbg[PATH_MAX];
	/* DRM files without a client id, said once; those gone dropped (scan()) */
	struct drm_bad *bad;
	unsigned int nbad;
	bool own_proc, hold, init_set;
	uint32_t init_mhz, init_mv;
	FILE *diag;
	char prefix[64];
	struct hwtel_gpu_opp *opp;
	unsigned int nopp;
	struct drm_dvfs *dvfs;
	unsigned int ndvfs;
	struct drm_client *cl;
	unsigned int ncl;
	struct drm_cons *cons;
	unsigned int ncons;
	/* the consumers whose process ended, once reported (fold_gone()) */
	struct hwtel_gpu_fold *fold;
	unsigned int nfold;
	char **units;			/* engine names, in order of appearance */
	unsigned int nunits;
	uint64_t t0, cum_t0;
	/* interval diagnostics */
	uint64_t est_ns, cest_ns;
	u128 bound, cbound;
	unsigned long lost, clost, malformed, cmalformed, clients, cclients;
	struct hwtel_gpu_report rep, cum;
	uint64_t (*now)(void);		/* the clock of the reads */
};

static void drm_diag(struct hwtel_gpu_drm *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void drm_diag(struct hwtel_gpu_drm *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	hwtel_vdiag(d->diag, d->prefix, fmt, ap);
	va_end(ap);
}

/* Small file into buf (NUL-terminated); length or -errno */
static ssize_t slurp_at(int dirfd, const char *path, char *buf, size_t size)
{
	int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	while (n + 1 < size) {
		ssize_t r = read(fd, buf + n, size - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (ssize_t)n;
}

/*
 * u_volt_target of the OPP of @hz in the OPP table directory @tab. Up to 6.x
 * an OPP's directory is opp:<hz>; newer kernels name it opp:<hz>-<index>
 * (7.3), so without the first the entries are matched by their rate_hz.
 */
static int opp_dir_uv(const char *tab, uint64_t hz, unsigned long long *uv)
{
	char path[PATH_MAX * 2 + 200];
	unsigned long long rate;
	struct dirent *de;
	int ret = -ENOENT;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/opp:%" PRIu64 "/supply-0/u_volt_target", tab, hz);
	if (!hwtel_read_uint(path, uv))
		return 0;
	dir = opendir(tab);
	if (!dir)
		return -ENOENT;
	while ((de = readdir(dir))) {
		if (strncmp(de->d_name, "opp:", 4))
			continue;
		snprintf(path, sizeof(path), "%s/%s/rate_hz", tab, de->d_name);
		if (hwtel_read_uint(path, &rate) || rate != hz)
			continue;
		snprintf(path, sizeof(path), "%s/%s/supply-0/u_volt_target", tab, de->d_name);
		ret = hwtel_read_uint(path, uv) ? -ENOENT : 0;
		break;
	}
	closedir(dir);
	return ret;
}

static uint64_t opp_uv(struct hwtel_gpu_drm *d, struct drm_dvfs *v, uint64_t hz)
{
	char tab[PATH_MAX * 2 + 100], dev[PATH_MAX], parent[PATH_MAX];
	unsigned long long uv;
	unsigned int i;
	char *b;

	if (d->nopp) {
		for (i = 0; i < d->nopp; i++)
			if ((uint64_t)d->opp[i].mhz * 1000000u == hz)
				return (uint64_t)d->opp[i].mv * 1000u;
		return 0;
	}
	/* debugfs opp/<parent>-<dev>/ (or opp/<dev>/), then the OPP of @hz */
	snprintf(dev, sizeof(dev), "%s", v->devpath);
	b = strrchr(dev, '/');
	if (!b)
		return 0;
	*b = '\0';
	snprintf(parent, sizeof(parent), "%s", strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev);
	snprintf(tab, sizeof(tab), "%s/opp/%s-%s", d->dbg, parent, b + 1);
	if (!opp_dir_uv(tab, hz, &uv))
		return uv;
	snprintf(tab, sizeof(tab), "%s/opp/%s", d->dbg, b + 1);
	if (!opp_dir_uv(tab, hz, &uv))
		return uv;
	return 0;
}

/*
 * The whole of a sysfs file, whatever its length (a sysfs attribute is at
 * most a page, 64 KiB with arm64's largest; over 1 MiB is refused with
 * -EFBIG): a malloc'ed NUL-terminated buffer and its length, or -errno
 * (-EFBIG from read(): the kernel's table does not fit in its page).
 */
static ssize_t slurp_all(const char *path, char **out)
{
	size_t size = 4096, n = 0;
	char *buf = NULL, *nb;
	int fd, e = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (!buf || n + 1 == size) {
			if (buf)
				size *= 2;
			nb = size <= (1u << 20) ? realloc(buf, size) : NULL;
			if (!nb) {
				e = size <= (1u << 20) ? ENOMEM : EFBIG;
				break;
			}
			buf = nb;
		}
		r = read(fd, buf + n, size - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			break;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (e) {
		free(buf);
		return -e;
	}
	buf[n] = '\0';
	*out = buf;
	return (ssize_t)n;
}

/* Returns 0 with a new *@ts, or a negative errno (the reason said once) */
static int dvfs_read(struct hwtel_gpu_drm *d, struct drm_dvfs *v, struct hwtel_gpu_trans_stat **ts)
{
	char path[PATH_MAX + 100], why[200], *buf;
	ssize_t n;
	int ret;

	*ts = NULL;
	snprintf(path, sizeof(path), "%s/class/devfreq/%s/trans_stat", d->sys, v->name);
	n = slurp_all(path, &buf);
	if (n < 0) {
		if (n == -EFBIG)
			drm_diag(d, "%s: the kernel's table does not fit in its page (EFBIG)", path);
		return (int)n;
	}
	ret = hwtel_gpu_trans_stat_parse(buf, (size_t)n, ts, why, sizeof(why));
	free(buf);
	if (ret == -EINVAL || ret == -EFBIG)
		drm_diag(d, "%s: %s", path, why);
	return ret;
}

static void dvfs_release(struct drm_dvfs *v)
{
	hwtel_gpu_trans_stat_free(v->prev);
	hwtel_gpu_trans_stat_free(v->base);
	hwtel_gpu_trans_stat_free(v->start);
	free(v->uv);
	free(v->vis);
	free(v->w);
}

static struct hwtel_gpu_trans_stat *ts_dup(const struct hwtel_gpu_trans_stat *ts)
{
	size_t n = (size_t)ts->nstates;
	struct hwtel_gpu_trans_stat *c = malloc(sizeof(*c) + 3 * n * sizeof(uint64_t));

	if (!c)
		return NULL;
	*c = *ts;
	c->hz = (uint64_t *)(c + 1);
	c->time_ms = c->hz + n;
	c->to_count = c->time_ms + n;
	memcpy(c->hz, ts->hz, n * sizeof(uint64_t));
	memcpy(c->time_ms, ts->time_ms, n * sizeof(uint64_t));
	memcpy(c->to_count, ts->to_count, n * sizeof(uint64_t));
	return c;
}

static void dvfs_discover(struct hwtel_gpu_drm *d)
{
	char path[PATH_MAX + 100];
	struct dirent *de;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/class/devfreq", d->sys);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir))) {
		struct drm_dvfs *v, *nv;
		char link[PATH_MAX + 200];
		unsigned int i, ns;

		if (de->d_name[0] == '.' || strlen(de->d_name) >= sizeof(v->name))
			continue;
		nv = realloc(d->dvfs, (d->ndvfs + 1) * sizeof(*d->dvfs));
		if (!nv)
			break;
		d->dvfs = nv;
		v = &d->dvfs[d->ndvfs];
		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", de->d_name);
		snprintf(link, sizeof(link), "%s/%s/device", path, de->d_name);
		if (!realpath(link, v->devpath))
			continue;
		if (dvfs_read(d, v, &v->prev)) {
			drm_diag(d, "devfreq %s: no trans_stat: its GPU's energy is unpriced", v->name);
			continue;
		}
		ns = v->prev->nstates ? v->prev->nstates : 1;
		v->base = ts_dup(v->prev);
		v->uv = calloc(ns, sizeof(*v->uv));
		v->vis = calloc(ns, sizeof(*v->vis));
		v->w = calloc(ns, sizeof(*v->w));
		if (!v->base || !v->uv || !v->vis || !v->w) {
			dvfs_release(v);
			break;
		}
		for (i = 0; i < v->prev->nstates; i++) {
			v->uv[i] = opp_uv(d, v, v->prev->hz[i]);
			if (!v->uv[i])
				drm_diag(d, "devfreq %s: no voltage for %" PRIu64 " Hz (OPP debugfs or --opp): time there is unpriced",
					 v->name, v->prev->hz[i]);
		}
		d->ndvfs++;
	}
	closedir(dir);
}

/* Before a sample's fdinfo reads */
static void dvfs_start(struct hwtel_gpu_drm *d, struct drm_dvfs *v)
{
	struct hwtel_gpu_trans_stat *ts;

	hwtel_gpu_trans_stat_free(v->start);
	v->start = NULL;
	v->have_start = !dvfs_read(d, v, &ts) && ts->nstates == v->prev->nstates;
	if (v->have_start)
		v->start = ts;
	else
		hwtel_gpu_trans_stat_free(ts);
}

/* The start read becomes the base of the next sample */
static void dvfs_rebase(struct drm_dvfs *v)
{
	hwtel_gpu_trans_stat_free(v->base);
	v->base = v->start;
	v->start = NULL;
}

/*
 * After them: the states the device visited from before the previous
 * sample's fdinfo reads to after this one's, a window that contains the
 * time between the two reads of every client.
 */
static void dvfs_end(struct hwtel_gpu_drm *d, struct drm_dvfs *v)
{
	const struct hwtel_gpu_trans_stat *b = v->base;
	struct hwtel_gpu_trans_stat *ts = NULL;
	unsigned int i;

	v->nvis = 0;
	if (!v->have_start || dvfs_read(d, v, &ts) || ts->nstates != b->nstates) {
		if (!v->said)
			drm_diag(d, "devfreq %s: trans_stat unreadable or changed: its GPU's samples are unpriced",
				 v->name);
		v->said = true;
		hwtel_gpu_trans_stat_free(ts);
		if (v->have_start)
			dvfs_rebase(v);
		return;
	}
	for (i = 0; i < ts->nstates; i++) {
		bool in = (int)i == b->cur || (int)i == ts->cur ||
			  ts->time_ms[i] > b->time_ms[i] || ts->to_count[i] > b->to_count[i];

		if (!in)
			continue;
		v->vis[v->nvis] = i;
		v->w[v->nvis] = ts->time_ms[i] >= b->time_ms[i] ? ts->time_ms[i] - b->time_ms[i] : 0;
		v->nvis++;
	}
	hwtel_gpu_trans_stat_free(v->prev);
	v->prev = ts;
	dvfs_rebase(v);
}

static int dvfs_of_rdev(struct hwtel_gpu_drm *d, uint64_t rdev)
{
	char link[PATH_MAX + 64], real[PATH_MAX];
	unsigned int i;

	snprintf(link, sizeof(link), "%s/dev/char/%u:%u/device", d->sys, major(rdev), minor(rdev));
	if (!realpath(link, real))
		return -1;
	for (i = 0; i < d->ndvfs; i++)
		if (!strcmp(d->dvfs[i].devpath, real))
			return (int)i;
	return -1;
}

/* The unit of engine @name, a new one if needed; -1: out of memory */
static int unit_of(struct hwtel_gpu_drm *d, const char *name)
{
	unsigned int i;
	char **nu;

	for (i = 0; i < d->nunits; i++)
		if (!strcmp(d->units[i], name))
			return (int)i;
	nu = realloc(d->units, (d->nunits + 1) * sizeof(*nu));
	if (!nu)
		return -1;
	d->units = nu;
	d->units[d->nunits] = strdup(name);
	if (!d->units[d->nunits])
		return -1;
	return (int)d->nunits++;
}

/* The start time of process @pid (0 if not given); -1 if it is gone */
static int proc_start(struct hwtel_gpu_drm *d, int pid, uint64_t *start)
{
	char path[PATH_MAX + 40], buf[1024], *p;
	int i;

	*start = 0;
	snprintf(path, sizeof(path), "%s/%d/stat", d->proc, pid);
	if (slurp_at(AT_FDCWD, path, buf, sizeof(buf)) <= 0)
		return -1;
	p = strrchr(buf, ')');
	/* field 3 (state) follows ") "; starttime is field 22 */
	for (i = 3; i < 22 && p; i++)
		p = strchr(p + 1, ' ');
	if (p)
		*start = strtoull(p + 1, NULL, 10);
	return 0;
}

/*
 * The consumer of @pid's life, a new one if needed. Its life number is one
 * more than the greatest of the PID's lives kept (0 if none is kept: once
 * summed per name, a life no longer takes a number).
 */
static int cons_of(struct hwtel_gpu_drm *d, int pid)
{
	unsigned int i, life = 0;
	struct drm_cons *nc, *c;
	uint64_t st;

	proc_start(d, pid, &st);
	for (i = 0; i < d->ncons; i++) {
		if (d->cons[i].pid != pid)
			continue;
		if (d->cons[i].start == st)
			return (int)i;
		if (d->cons[i].life >= life)
			life = d->cons[i].life + 1;
	}
	nc = realloc(d->cons, (d->ncons + 1) * sizeof(*nc));
	if (!nc)
		return -ENOMEM;
	d->cons = nc;
	c = &d->cons[d->ncons];
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->start = st;
	c->life = life;
	if (!hwtel_read_proc_name(d->proc, pid, c->comm, sizeof(c->comm), c->cmdline,
				  sizeof(c->cmdline)))
		c->comm[0] = c->cmdline[0] = '\0';
	return (int)d->ncons++;
}

static u128 pw_raw(const struct drm_dvfs *v, unsigned int s)
{
	return (u128)v->prev->hz[s] * v->uv[s] * v->uv[s];
}

/* Price @dt ns of busy time (@dc cycles when @has_c) of a client on @v */
static void price(struct hwtel_gpu_drm *d, struct drm_client *c, int unit, uint64_t dt,
		  uint64_t dc, bool has_c)
{
	struct drm_cons *k = &d->cons[c->cons];
	struct drm_dvfs *v = c->dvfs >= 0 ? &d->dvfs[c->dvfs] : NULL;
	u128 raw = 0, pmin = 0, pmax = 0;
	unsigned int i;

	/* out of memory: this sample's busy time of @unit is not counted */
	if (unit >= 0 && (unsigned int)unit >= k->nunits)
		hwtel_grow_pair(&k->busy, &k->cbusy, &k->nunits, d->nunits);
	if (unit >= 0 && (unsigned int)unit < k->nunits) {
		k->busy[unit] += dt;
		k->cbusy[unit] += dt;
	}
	if (!dt)
		return;
	if (!v || !v->nvis) {
		if (!v && d->init_set) {
			raw = (u128)dt * ((uint64_t)d->init_mhz * 1000000u) *
			      ((uint64_t)d->init_mv * 1000u) * ((uint64_t)d->init_mv * 1000u);
			goto add;
		}
		goto unpriced;
	}
	for (i = 0; i < v->nvis; i++) {
		u128 p;

		if (!v->uv[v->vis[i]])
			goto unpriced;
		p = pw_raw(v, v->vis[i]);
		if (!i || p < pmin)
			pmin = p;
		if (!i || p > pmax)
			pmax = p;
	}
	if (v->nvis == 1) {
		raw = (u128)dt * pw_raw(v, v->vis[0]);
		goto add;
	}
	if (v->nvis == 2 && has_c) {
		/* t_a + t_b = dt, f_a t_a + f_b t_b = dc x 1e9: exact */
		unsigned int a = v->vis[0], b = v->vis[1];
		__int128 fa = (__int128)v->prev->hz[a], fb = (__int128)v->prev->hz[b];
		__int128 num = (__int128)dc * 1000000000 - fa * (__int128)dt;
		__int128 den = fb - fa, tb;

		if (den) {
			if (den < 0) {
				den = -den;
				num = -num;
			}
			tb = (num + den / 2) / den;
			if (num >= 0 && tb <= (__int128)dt) {
				raw = (u128)(dt - (uint64_t)tb) * pw_raw(v, a) +
				      (u128)(uint64_t)tb * pw_raw(v, b);
				goto add;
			}
		}
		/* cycles inconsistent with the two frequencies: estimate */
	}
	{
		/* dt split in proportion to the device's time in each state */
		uint64_t wsum = 0, left = dt;

		for (i = 0; i < v->nvis; i++)
			wsum += v->w[i];
		for (i = 0; i < v->nvis; i++) {
			uint64_t t;

			if (i + 1 == v->nvis)
				t = left;
			else if (wsum)
				t = (uint64_t)((u128)dt * v->w[i] / wsum);
			else
				t = dt / v->nvis;
			left -= t;
			raw += (u128)t * pw_raw(v, v->vis[i]);
		}
		d->est_ns += dt;
		d->cest_ns += dt;
		d->bound += (u128)dt * (pmax - pmin);
		d->cbound += (u128)dt * (pmax - pmin);
	}
add:
	k->raw += raw;
	k->craw += raw;
	return;
unpriced:
	k->unpriced += dt;
	k->cunpriced += dt;
}

/*
 * The busy ns of an engine that gives drm-cycles with drm-total-cycles (xe)
 * from the previous read: its share of the wall time @wall between the two
 * reads (up to the class's capacity times it). -1: a counter went back.
 */
static int64_t share_ns(const struct hwtel_gpu_fdinfo_engine *e, uint64_t cycles, uint64_t total,
			uint64_t wall)
{
	uint64_t dc, dtot;

	if (e->cycles < cycles || e->total_cycles < total)
		return -1;
	dc = e->cycles - cycles;
	dtot = e->total_cycles - total;
	if (!dtot)
		return 0;
	return (int64_t)(((u128)dc * wall + dtot / 2) / dtot);
}

static void account(struct hwtel_gpu_drm *d, struct drm_client *c,
		    const struct hwtel_gpu_fdinfo *fi, bool baseline, uint64_t now)
{
	uint64_t wall = c->t_read && now > c->t_read ? now - c->t_read : 0;
	unsigned int i, j;

	c->t_read = now;
	for (i = 0; i < fi->nengines; i++) {
		const struct hwtel_gpu_fdinfo_engine *e = &fi->engine[i];
		bool share = !e->has_busy && e->has_cycles && e->has_total_cycles;
		uint64_t dt, dc = 0;
		bool has_c;

		if (!e->has_busy && !share)
			continue;
		for (j = 0; j < c->nengines; j++)
			if (!strcmp(c->e[j].name, e->name))
				break;
		if (j == c->nengines) {
			if (j == c->cap) {
				struct drm_engine *ne = realloc(c->e, (j ? 2 * j : 4) * sizeof(*ne));

				if (!ne)
					continue;
				c->e = ne;
				c->cap = j ? 2 * j : 4;
			}
			memset(&c->e[j], 0, sizeof(c->e[j]));
			snprintf(c->e[j].name, sizeof(c->e[j].name), "%s", e->name);
			c->e[j].has_cycles = e->has_cycles;
			c->e[j].share = share;
			c->nengines++;
			/* cycle shares need a previous read: the first one is a baseline */
			if (baseline || share) {
				c->e[j].busy = e->busy_ns;
				c->e[j].cycles = e->cycles;
				c->e[j].total = e->total_cycles;
				if (share)
					continue;
			}
		}
		if (share || c->e[j].share) {
			int64_t ns = share && c->e[j].share ?
				     share_ns(e, c->e[j].cycles, c->e[j].total, wall) : -1;

			if (ns < 0)
				drm_diag(d, "client %" PRIu64 " engine %s: cycle counters went back or changed form: rebased",
					 c->id, e->name);
			c->e[j].busy = e->busy_ns;
			c->e[j].cycles = e->cycles;
			c->e[j].total = e->total_cycles;
			c->e[j].share = share;
			if (ns <= 0)
				continue;
			dt = (uint64_t)ns;
			has_c = false;
		} else {
			if (e->busy_ns < c->e[j].busy) {
				drm_diag(d, "client %" PRIu64 " engine %s: busy time went back from %" PRIu64 " to %" PRIu64 " ns: rebased",
					 c->id, e->name, c->e[j].busy, e->busy_ns);
				c->e[j].busy = e->busy_ns;
				c->e[j].cycles = e->cycles;
				continue;
			}
			dt = e->busy_ns - c->e[j].busy;
			has_c = e->has_cycles && c->e[j].has_cycles && e->cycles >= c->e[j].cycles;
			if (has_c)
				dc = e->cycles - c->e[j].cycles;
			c->e[j].busy = e->busy_ns;
			c->e[j].cycles = e->cycles;
			c->e[j].has_cycles = e->has_cycles;
		}
		if (c->e[j].pdt && !has_c)
			c->e[j].pc = false;
		else if (!c->e[j].pdt)
			c->e[j].pc = has_c;
		c->e[j].pdt += dt;
		c->e[j].pdc += dc;
	}
}

static void price_pending(struct hwtel_gpu_drm *d, struct drm_client *c)
{
	unsigned int j;

	for (j = 0; j < c->nengines; j++) {
		price(d, c, unit_of(d, c->e[j].name), c->e[j].pdt, c->e[j].pdc, c->e[j].pc);
		c->e[j].pdt = c->e[j].pdc = 0;
		c->e[j].pc = false;
	}
}

static struct drm_client *client_find(struct hwtel_gpu_drm *d, uint64_t rdev, uint64_t id)
{
	unsigned int i;

	for (i = 0; i < d->ncl; i++)
		if (d->cl[i].rdev == rdev && d->cl[i].id == id)
			return &d->cl[i];
	return NULL;
}

static int hold_fd(int pid, int fd)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0), r;

	if (pfd < 0)
		return -1;
	r = (int)syscall(SYS_pidfd_getfd, pfd, fd, 0);
	close(pfd);
	return r;
}

static int scan_fd(struct hwtel_gpu_drm *d, int pid, int fddir, int infodir, const char *fdname,
		   bool baseline)
{
	char buf[16384], what[PATH_MAX + 400];
	struct hwtel_gpu_fdinfo *fi = NULL;
	struct drm_client *c;
	struct stat st;
	uint64_t now;
	ssize_t n;
	int ret;

	if (fstatat(fddir, fdname, &st, 0) || !S_ISCHR(st.st_mode))
		return 0;
	n = slurp_at(infodir, fdname, buf, sizeof(buf));
	now = d->now();
	if (n <= 0)
		return 0;
	snprintf(what, sizeof(what), "%s%s/%d/fdinfo/%s", d->prefix, d->proc, pid, fdname);
	ret = hwtel_gpu_fdinfo_parse(buf, (size_t)n, &fi, NULL, what);
	if (ret == -ENOENT || ret == -ENOMEM) {
		hwtel_gpu_fdinfo_free(fi);
		return ret == -ENOMEM ? ret : 0;
	}
	if (ret) {
		unsigned int i;
		struct drm_bad *nb;

		for (i = 0; i < d->nbad; i++)
			if (d->bad[i].pid == pid && d->bad[i].fd == atoi(fdname) &&
			    d->bad[i].rdev == st.st_rdev) {
				d->bad[i].seen = true;
				hwtel_gpu_fdinfo_free(fi);
				return 0;
			}
		nb = realloc(d->bad, (d->nbad + 1) * sizeof(*nb));
		if (nb) {
			d->bad = nb;
			d->bad[d->nbad++] = (struct drm_bad){ pid, atoi(fdname), st.st_rdev, true };
		}
	}
	c = ret ? NULL : client_find(d, st.st_rdev, fi->client_id);
	if (ret || !c || fi->malformed != c->malformed) {
		/* diagnostics once per client, again when they change */
		hwtel_gpu_fdinfo_free(fi);
		if (hwtel_gpu_fdinfo_parse(buf, (size_t)n, &fi, d->diag, what) == -ENOMEM)
			return -ENOMEM;
		d->malformed += fi->malformed;
		d->cmalformed += fi->malformed;
		if (ret) {
			hwtel_gpu_fdinfo_free(fi);
			return 0;
		}
	}
	if (c && c->seen) {
		hwtel_gpu_fdinfo_free(fi);
		return 0;		/* the same open file in another fd or process */
	}
	if (!c) {
		struct drm_client *ncl = realloc(d->cl, (d->ncl + 1) * sizeof(*ncl));
		int k;

		if (!ncl) {
			hwtel_gpu_fdinfo_free(fi);
			return -ENOMEM;
		}
		d->cl = ncl;
		k = cons_of(d, pid);
		if (k < 0) {
			hwtel_gpu_fdinfo_free(fi);
			return k;
		}
		c = &d->cl[d->ncl++];
		memset(c, 0, sizeof(*c));
		c->rdev = st.st_rdev;
		c->id = fi->client_id;
		c->cons = (unsigned int)k;
		c->dvfs = dvfs_of_rdev(d, st.st_rdev);
		c->held = d->hold && d->own_proc ? hold_fd(pid, atoi(fdname)) : -1;
		d->clients++;
		d->cclients++;
	}
	c->malformed = fi->malformed;
	c->seen = true;
	account(d, c, fi, baseline, now);
	hwtel_gpu_fdinfo_free(fi);
	return 0;
}

static int scan(struct hwtel_gpu_drm *d, bool baseline)
{
	struct dirent *de;
	unsigned int i;
	DIR *proc;
	int self = getpid(), ret = 0;

	for (i = 0; i < d->ndvfs; i++)
		dvfs_start(d, &d->dvfs[i]);
	for (i = 0; i < d->ncl; i++)
		d->cl[i].seen = false;
	for (i = 0; i < d->nbad; i++)
		d->bad[i].seen = false;
	proc = opendir(d->proc);
	if (!proc)
		return hwtel_err(-errno, "%s: %s", d->proc, strerror(errno));
	while (!ret && (de = readdir(proc))) {
		char path[PATH_MAX + 300];
		int pid, fddir, infodir;
		struct dirent *fe;
		DIR *fds;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = atoi(de->d_name);
		if (d->own_proc && pid == self)
			continue;	/* our held duplicates */
		snprintf(path, sizeof(path), "%s/%s/fd", d->proc, de->d_name);
		fddir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fddir < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/fdinfo", d->proc, de->d_name);
		infodir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		fds = infodir >= 0 ? fdopendir(dup(fddir)) : NULL;
		if (!fds) {
			if (infodir >= 0)
				close(infodir);
			close(fddir);
			continue;
		}
		while (!ret && (fe = readdir(fds)))
			if (isdigit((unsigned char)fe->d_name[0]))
				ret = scan_fd(d, pid, fddir, infodir, fe->d_name, baseline);
		closedir(fds);
		close(infodir);
		close(fddir);
	}
	closedir(proc);
	if (ret)
		return ret;
	/*
	 * DRM files without a client id not found again: closed, or their
	 * process ended. Kept, they would grow by every such file a long-running
	 * host ever opened; a file opened again under that fd is a new one,
	 * said once again.
	 */
	for (i = 0; i < d->nbad;) {
		if (d->bad[i].seen)
			i++;
		else
			d->bad[i] = d->bad[--d->nbad];
	}
	if (!d->nbad) {
		free(d->bad);
		d->bad = NULL;
	}
	/* clients gone: their last usage through our duplicate */
	for (i = 0; i < d->ncl; i++) {
		struct drm_client *c = &d->cl[i];

		if (c->seen)
			continue;
		if (c->held >= 0) {
			char buf[16384], name[32];
			struct hwtel_gpu_fdinfo *fi = NULL;
			ssize_t n;

			snprintf(name, sizeof(name), "/proc/self/fdinfo/%d", c->held);
			n = slurp_at(AT_FDCWD, name, buf, sizeof(buf));
			if (n > 0 && !hwtel_gpu_fdinfo_parse(buf, (size_t)n, &fi, NULL, name) &&
			    fi->client_id == c->id)
				account(d, c, fi, false, d->now());
			else
				d->lost++, d->clost++;
			hwtel_gpu_fdinfo_free(fi);
			close(c->held);
			c->held = -1;
		} else {
			d->lost++;
			d->clost++;
		}
	}
	for (i = 0; i < d->ndvfs; i++)
		dvfs_end(d, &d->dvfs[i]);
	for (i = 0; i < d->ncl;) {
		price_pending(d, &d->cl[i]);
		if (d->cl[i].seen) {
			i++;
		} else {
			free(d->cl[i].e);
			d->cl[i] = d->cl[--d->ncl];
		}
	}
	return 0;
}

struct hwtel_gpu_drm *hwtel_gpu_drm_new(const char *procroot, const char *sysroot,
					const char *debugfs)
{
	struct hwtel_gpu_drm *d = calloc(1, sizeof(*d));

	hwtel_clear_error();
	if (!d) {
		hwtel_err(-ENOMEM, "out of memory");
		return NULL;
	}
	snprintf(d->proc, sizeof(d->proc), "%s", procroot ? procroot : "/proc");
	snprintf(d->sys, sizeof(d->sys), "%s", sysroot ? sysroot : "/sys");
	snprintf(d->dbg, sizeof(d->dbg), "%s", debugfs ? debugfs : "/sys/kernel/debug");
	d->own_proc = !procroot || !strcmp(procroot, "/proc");
	d->hold = true;
	d->now = hwtel_now_ns;
	return d;
}

void hwtel_gpu_drm_free(struct hwtel_gpu_drm *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < d->ncl; i++) {
		if (d->cl[i].held >= 0)
			close(d->cl[i].held);
		free(d->cl[i].e);
	}
	free(d->cl);
	free(d->bad);
	for (i = 0; i < d->ncons; i++)
		free(d->cons[i].busy);
	free(d->cons);
	hwtel_gpu_fold_free(d->fold, d->nfold);
	for (i = 0; i < d->nunits; i++)
		free(d->units[i]);
	free(d->units);
	for (i = 0; i < d->ndvfs; i++)
		dvfs_release(&d->dvfs[i]);
	free(d->dvfs);
	free(d->opp);
	free(d->rep.consumers);
	free(d->rep.busy_ns);
	free(d->cum.consumers);
	free(d->cum.exited);
	free(d->cum.busy_ns);
	free(d);
}

void hwtel_gpu_drm_set_diag(struct hwtel_gpu_drm *d, FILE *f, const char *prefix)
{
	d->diag = f;
	snprintf(d->prefix, sizeof(d->prefix), "%s", prefix ? prefix : "");
}

int hwtel_gpu_drm_set_opp_table(struct hwtel_gpu_drm *d, const struct hwtel_gpu_opp *t,
				unsigned int n)
{
	struct hwtel_gpu_opp *c = n ? malloc(n * sizeof(*t)) : NULL;

	hwtel_clear_error();
	if (n && !c)
		return hwtel_err(-ENOMEM, "out of memory");
	if (n)
		memcpy(c, t, n * sizeof(*t));
	free(d->opp);
	d->opp = c;
	d->nopp = n;
	return 0;
}

void hwtel_gpu_drm_set_initial_opp(struct hwtel_gpu_drm *d, uint32_t mhz, uint32_t mv)
{
	d->init_set = true;
	d->init_mhz = mhz;
	d->init_mv = mv;
}

void hwtel_gpu_drm_set_clock(struct hwtel_gpu_drm *d, uint64_t (*now_ns)(void))
{
	d->now = now_ns ? now_ns : hwtel_now_ns;
}

void hwtel_gpu_drm_set_hold(struct hwtel_gpu_drm *d, bool hold)
{
	d->hold = hold;
}

int hwtel_gpu_drm_begin(struct hwtel_gpu_drm *d, uint64_t t0_ns)
{
	hwtel_clear_error();
	d->t0 = d->cum_t0 = t0_ns;
	dvfs_discover(d);
	return scan(d, true);
}

int hwtel_gpu_drm_sample(struct hwtel_gpu_drm *d)
{
	hwtel_clear_error();
	return scan(d, false);
}

static uint64_t upj_of(u128 raw)
{
	return (uint64_t)((raw + UPJ_RAW / 2) / UPJ_RAW);
}

static int cmp_cons(const void *a, const void *b)
{
	const struct hwtel_gpu_consumer *x = a, *y = b;

	if (x->energy_upj != y->energy_upj)
		return x->energy_upj < y->energy_upj ? 1 : -1;
	if (x->busy_total_ns != y->busy_total_ns)
		return x->busy_total_ns < y->busy_total_ns ? 1 : -1;
	return x->pid - y->pid;
}

static int build(struct hwtel_gpu_drm *d, bool cum, uint64_t t0, uint64_t t1)
{
	struct hwtel_gpu_report *r = cum ? &d->cum : &d->rep;
	/* no engine seen yet: one unit named "-" */
	unsigned int i, k, n = 0, nu = d->nunits ? d->nunits : 1;
	struct hwtel_gpu_consumer *cs;
	const char **names;
	uint64_t *units;
	u128 total = 0;

	cs = hwtel_gpu_consumers_new(d->ncons, nu);
	/* busy_ns, jobs and unbilled_ns (zero), then the names */
	units = calloc(1, 3 * nu * sizeof(*units) + nu * sizeof(*names));
	if (!cs || !units) {
		free(cs);
		free(units);
		return hwtel_err(-ENOMEM, "out of memory");
	}
	free(r->consumers);
	free(r->exited);
	free(r->busy_ns);
	memset(r, 0, sizeof(*r));
	r->source = "drm";
	r->t0_ns = t0;
	r->t1_ns = t1;
	r->seconds = (double)(t1 - t0) / 1e9;
	r->nunits = nu;
	r->busy_ns = units;
	r->jobs = units + nu;
	r->unbilled_ns = units + 2 * nu;
	names = (const char **)(units + 3 * nu);
	for (k = 0; k < nu; k++)
		names[k] = d->nunits ? d->units[k] : "-";
	r->unit_names = names;
	for (i = 0; i < d->ncons; i++) {
		struct drm_cons *c = &d->cons[i];
		const uint64_t *busy = cum ? c->cbusy : c->busy;
		struct hwtel_gpu_consumer *o = &cs[n];
		u128 raw = cum ? c->craw : c->raw;

		memset(o->busy_ns, 0, nu * sizeof(*o->busy_ns));
		for (k = 0; k < c->nunits && k < nu; k++) {
			o->busy_ns[k] = busy[k];
			o->busy_total_ns += busy[k];
			r->busy_ns[k] += busy[k];
		}
		o->unpriced_ns = cum ? c->cunpriced : c->unpriced;
		if (!o->busy_total_ns && !o->unpriced_ns)
			continue;
		o->pid = c->pid;
		o->life = c->life;
		snprintf(o->comm, sizeof(o->comm), "%s", c->comm);
		snprintf(o->cmdline, sizeof(o->cmdline), "%s", c->cmdline);
		o->energy_upj = upj_of(raw);
		o->energy_pj = (double)raw / (double)UPJ_RAW / 1e6;
		o->mean_pw = r->seconds > 0 ? o->energy_pj / r->seconds : 0;
		total += raw;
		n++;
	}
	r->nconsumers = n;
	r->consumers = cs;
	/* the consumers summed per name count in the totals since the start */
	for (i = 0; cum && i < d->nfold; i++) {
		for (k = 0; k < d->fold[i].nunits && k < nu; k++)
			r->busy_ns[k] += d->fold[i].busy[k];
		total += d->fold[i].raw;
	}
	r->energy_upj = upj_of(total);
	r->energy_pj = (double)total / (double)UPJ_RAW / 1e6;
	r->mean_pw = r->seconds > 0 ? r->energy_pj / r->seconds : 0;
	for (i = 0; i < n; i++)
		cs[i].share = total ? (double)cs[i].energy_pj / r->energy_pj : 0;
	qsort(cs, n, sizeof(*cs), cmp_cons);
	if (d->ndvfs && d->dvfs[0].prev->cur >= 0 && d->dvfs[0].uv[d->dvfs[0].prev->cur]) {
		int s = d->dvfs[0].prev->cur;

		r->opp_known = true;
		r->opp.mhz = (uint32_t)(d->dvfs[0].prev->hz[s] / 1000000u);
		r->opp.mv = (uint32_t)(d->dvfs[0].uv[s] / 1000u);
	} else if (!d->ndvfs && d->init_set) {
		r->opp_known = true;
		r->opp.mhz = d->init_mhz;
		r->opp.mv = d->init_mv;
	}
	r->estimated_ns = cum ? d->cest_ns : d->est_ns;
	r->bound_upj = upj_of(cum ? d->cbound : d->bound);
	r->clients = cum ? d->cclients : d->clients;
	r->clients_lost = cum ? d->clost : d->lost;
	r->fdinfo_malformed = cum ? d->cmalformed : d->malformed;
	r->dvfs_changes = 0;
	return cum ? hwtel_gpu_fold_report(d->fold, d->nfold, total, r) : 0;
}

/*
 * After an interval's reports: the consumers whose process ended (its
 * /proc/PID is gone or is a later life) and that have no client left (their
 * last usage is read: scan() dropped the clients gone) are added to their
 * name's entry of fold[] and freed; those that never used the GPU are just
 * freed. What stays is the consumers of processes alive. A process that
 * closed its DRM files but lives on keeps its consumer, so a file it opens
 * later is the same row.
 */
static void fold_gone(struct hwtel_gpu_drm *d)
{
	unsigned int i, n, *map;
	bool *used;

	if (!d->ncons)
		return;
	map = malloc(d->ncons * sizeof(*map));
	used = calloc(d->ncons, sizeof(*used));
	if (!map || !used)
		goto out;		/* kept until the next interval */
	for (i = 0; i < d->ncl; i++)
		used[d->cl[i].cons] = true;
	for (i = n = 0; i < d->ncons; i++) {
		struct drm_cons *c = &d->cons[i];
		uint64_t st, busy = c->cunpriced;
		unsigned int k;

		for (k = 0; k < c->nunits; k++)
			busy += c->cbusy[k];
		if (!used[i] && (proc_start(d, c->pid, &st) || st != c->start) &&
		    (!busy || !hwtel_gpu_fold_add(&d->fold, &d->nfold, c->comm, c->cbusy, NULL,
						  c->nunits, c->cunpriced, c->craw))) {
			free(c->busy);
			continue;
		}
		map[i] = n;
		d->cons[n++] = *c;
	}
	if (n && n < d->ncons) {
		struct drm_cons *nc = realloc(d->cons, n * sizeof(*nc));

		if (nc)
			d->cons = nc;	/* cons_of() grows it one at a time */
	}
	d->ncons = n;
	for (i = 0; i < d->ncl; i++)
		d->cl[i].cons = map[d->cl[i].cons];
out:
	free(map);
	free(used);
}

int hwtel_gpu_drm_interval(struct hwtel_gpu_drm *d, uint64_t t1_ns,
			   const struct hwtel_gpu_report **out)
{
	unsigned int i;
	int ret;

	hwtel_clear_error();
	ret = scan(d, false);
	if (!ret)
		ret = build(d, false, d->t0, t1_ns);
	if (!ret)
		ret = build(d, true, d->cum_t0, t1_ns);
	if (ret)
		return ret;
	fold_gone(d);
	for (i = 0; i < d->ncons; i++) {
		if (d->cons[i].nunits)
			memset(d->cons[i].busy, 0, d->cons[i].nunits * sizeof(*d->cons[i].busy));
		d->cons[i].unpriced = 0;
		d->cons[i].raw = 0;
	}
	d->est_ns = 0;
	d->bound = 0;
	d->lost = d->malformed = 0;
	d->clients = d->ncl;
	d->t0 = t1_ns;
	*out = &d->rep;
	return 0;
}

const struct hwtel_gpu_report *hwtel_gpu_drm_cumulative(const struct hwtel_gpu_drm *d)
{
	return &d->cum;
}

unsigned int hwtel_gpu_drm_retained(const struct hwtel_gpu_drm *d)
{
	return d->ncons;
}

unsigned int hwtel_gpu_drm_retained_bad(const struct hwtel_gpu_drm *d)
{
	return d->nbad;
}
