// SPDX-License-Identifier: GPL-2.0
/*
 * perf_fuzz: random perf_event_open() calls and operations on the events,
 * aimed at the hwtel PMUs (mrvl_ddr_pmu_* and ndk_pcie_tlm_*), mixed with
 * software events, in several threads, with CPU hotplug in the background.
 *
 *   perf_fuzz [--seed S] [--iters N] [--threads T] [--seconds S]
 *             [--no-hotplug] [--sw-leaders] [--verbose]
 *
 * Every thread draws its operations from its own PRNG stream, seeded from
 * (S, thread index); the hotplug thread has stream T. The choice of every
 * call and its arguments depends only on the stream, never on what earlier
 * calls returned (a file descriptor is named by its slot; an empty slot
 * passes -1), so the same --seed and --iters replay the same call sequence
 * per thread. --seconds stops a thread early: the run is then a prefix of
 * the same sequence.
 *
 * Software-led groups holding other events trip perf core bugs of the lab
 * kernels under CPU hotplug (Documentation/dev-tools/hwtel-core-bugs.rst),
 * so while hotplug runs a new event never joins a group led by a software
 * (or unknown) event unless --sw-leaders is given. Before the threads start,
 * one event of each hwtel PMU is opened under a software leader once; the
 * outcome (success or the errno) is printed.
 *
 * Output: TAP. Diagnostics give the seeds, the calls made per operation with
 * an errno histogram, the hotplug cycles and the splat count from dmesg.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "fuzz_common.h"

#define SYS_DEV		"/sys/bus/event_source/devices"
#define MAX_PMUS	16
#define MAX_FIELDS	8
#define MAX_ALIASES	32
#define MAX_THREADS	16
#define NSLOTS		24
#define MAX_CPUS	64

struct field {
	char name[32];
	int word;		/* 0: config, 1: config1, 2: config2 */
	int lo, hi;
};

struct pmu {
	char name[64];
	unsigned int type;
	int cpu;		/* first CPU of cpumask, -1 if none */
	int nfields;
	struct field f[MAX_FIELDS];
	int naliases;
	char alias[MAX_ALIASES][96];
};

enum op {
	OP_OPEN, OP_CLOSE, OP_READ, OP_IOCTL, OP_MMAP, OP_MUNMAP, OP_PRCTL,
	OP_NR
};

static const char *const op_name[OP_NR] = {
	"open", "close", "read", "ioctl", "mmap", "munmap", "prctl",
};

/* weights of the operations, percent */
static const unsigned int op_weight[OP_NR] = { 36, 12, 18, 22, 6, 4, 2 };

enum kind { K_NONE, K_OURS, K_SW, K_OTHER };

struct slot {
	int fd;
	enum kind kind;
	void *map;
	size_t maplen;
};

struct thr {
	pthread_t tid;
	unsigned int idx;
	uint64_t seed;
	struct fz_rng rng;
	struct slot s[NSLOTS];
	unsigned long calls[OP_NR];
	unsigned long ours_ok;
	struct fz_hist h[OP_NR];
};

static struct pmu pmus[MAX_PMUS];
static int npmus;
static int ncpus;
static int hp_cpus[MAX_CPUS];
static int nhp;
static uint64_t opt_seed;
static unsigned long opt_iters;
static unsigned int opt_threads = 2;
static double opt_seconds;
static int opt_hotplug = 1;
static int opt_sw_leaders;
static int opt_verbose;
static double t_end;
static atomic_int stop_hotplug;
static unsigned long hp_cycles, hp_fail;
static long page_size;

static int read_str(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(((const struct pmu *)a)->name, ((const struct pmu *)b)->name);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* entries of a directory, sorted (deterministic order for replay) */
static int list_dir(const char *path, char names[][96], int max)
{
	char *p[64];
	struct dirent *d;
	DIR *dir = opendir(path);
	int n = 0, i;

	if (!dir)
		return 0;
	while ((d = readdir(dir)) && n < 64) {
		if (d->d_name[0] == '.')
			continue;
		p[n++] = strdup(d->d_name);
	}
	closedir(dir);
	qsort(p, n, sizeof(p[0]), cmp_str);
	for (i = 0; i < n; i++) {
		if (i < max)
			snprintf(names[i], 96, "%s", p[i]);
		free(p[i]);
	}
	return n < max ? n : max;
}

static void load_pmu(struct pmu *p)
{
	char path[512], buf[256], names[MAX_ALIASES][96];
	int n, i;

	snprintf(path, sizeof(path), SYS_DEV "/%s/type", p->name);
	read_str(path, buf, sizeof(buf));
	p->type = strtoul(buf, NULL, 0);
	snprintf(path, sizeof(path), SYS_DEV "/%s/cpumask", p->name);
	p->cpu = read_str(path, buf, sizeof(buf)) || !buf[0] ? -1 : atoi(buf);

	snprintf(path, sizeof(path), SYS_DEV "/%s/format", p->name);
	n = list_dir(path, names, MAX_FIELDS);
	for (i = 0; i < n; i++) {
		struct field *f = &p->f[p->nfields];
		char *c;

		snprintf(path, sizeof(path), SYS_DEV "/%s/format/%s", p->name, names[i]);
		if (read_str(path, buf, sizeof(buf)))
			continue;
		snprintf(f->name, sizeof(f->name), "%s", names[i]);
		f->word = !strncmp(buf, "config1", 7) ? 1 : !strncmp(buf, "config2", 7) ? 2 : 0;
		c = strchr(buf, ':');
		if (!c)
			continue;
		f->lo = atoi(c + 1);
		c = strchr(c, '-');
		f->hi = c ? atoi(c + 1) : f->lo;
		if (f->lo < 0 || f->hi > 63 || f->hi < f->lo)
			continue;
		p->nfields++;
	}

	snprintf(path, sizeof(path), SYS_DEV "/%s/events", p->name);
	n = list_dir(path, names, MAX_ALIASES);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), SYS_DEV "/%s/events/%s", p->name, names[i]);
		if (!read_str(path, buf, sizeof(buf)) && strchr(buf, '='))
			snprintf(p->alias[p->naliases++], 96, "%s", buf);
	}
}

static void find_pmus(void)
{
	struct dirent *d;
	DIR *dir = opendir(SYS_DEV);

	if (!dir)
		return;
	while ((d = readdir(dir)) && npmus < MAX_PMUS) {
		if (strncmp(d->d_name, "mrvl_ddr_pmu_", 13) &&
		    strncmp(d->d_name, "ndk_pcie_tlm_", 13))
			continue;
		snprintf(pmus[npmus++].name, sizeof(pmus[0].name), "%s", d->d_name);
	}
	closedir(dir);
	qsort(pmus, npmus, sizeof(pmus[0]), cmp_name);
	for (int i = 0; i < npmus; i++)
		load_pmu(&pmus[i]);
}

static void find_cpus(void)
{
	char path[128];
	int i;

	ncpus = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	for (i = 0; i < ncpus; i++) {
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", i);
		if (!access(path, W_OK))
			hp_cpus[nhp++] = i;
	}
}

static uint64_t field_mask(const struct field *f)
{
	int w = f->hi - f->lo + 1;

	return w >= 64 ? ~0ULL : (1ULL << w) - 1;
}

static void set_field(uint64_t *cfg, const struct field *f, uint64_t v)
{
	uint64_t m = field_mask(f);

	cfg[f->word] &= ~(m << f->lo);
	cfg[f->word] |= (v & m) << f->lo;
}

/* a value for one field: mostly small (the legal range), sometimes edges */
static uint64_t field_value(struct fz_rng *r, const struct field *f)
{
	uint64_t m = field_mask(f);

	switch (fz_below(r, 10)) {
	case 0: case 1: case 2: case 3: case 4:
		return fz_below(r, 16);
	case 5: case 6:
		return fz_below(r, 128);
	case 7:
		return m;
	case 8:
		return fz_next(r) & m;
	default:
		return 0;
	}
}

/* an alias ("kind=0x3,ep=?,bus=?") with its '?' fields filled in */
static void apply_alias(struct fz_rng *r, const struct pmu *p, const char *a,
			uint64_t *cfg)
{
	char buf[96], *tok, *save;
	int i;

	snprintf(buf, sizeof(buf), "%s", a);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;

		if (!eq)
			continue;
		*eq = 0;
		v = eq[1] == '?' ? fz_below(r, fz_pct(r, 80) ? 4 : 64) :
				   strtoull(eq + 1, NULL, 0);
		for (i = 0; i < p->nfields; i++)
			if (!strcmp(p->f[i].name, tok))
				set_field(cfg, &p->f[i], v);
	}
}

static void make_config_ours(struct fz_rng *r, const struct pmu *p, uint64_t *cfg)
{
	int i;

	if (p->naliases && fz_pct(r, 50)) {
		apply_alias(r, p, p->alias[fz_below(r, p->naliases)], cfg);
		/* occasionally poke one field of an otherwise valid event */
		if (p->nfields && fz_pct(r, 15)) {
			const struct field *f = &p->f[fz_below(r, p->nfields)];

			set_field(cfg, f, field_value(r, f));
		}
	} else {
		for (i = 0; i < p->nfields; i++)
			set_field(cfg, &p->f[i], field_value(r, &p->f[i]));
	}
	if (fz_pct(r, 8))
		cfg[0] |= 1ULL << fz_below(r, 64);	/* maybe outside every field */
	if (fz_pct(r, 3))
		cfg[0] = fz_next(r);
	if (fz_pct(r, 4))
		cfg[1] = fz_next(r);
	if (fz_pct(r, 3))
		cfg[2] = fz_next(r);
}

/* a CPU argument: -1, the PMU's CPU, any CPU (one may be offline), or bad */
static int pick_cpu(struct fz_rng *r, int owner)
{
	unsigned int c = fz_below(r, 100);

	if (c < 15)
		return -1;
	if (c < 60 && owner >= 0)
		return owner;
	if (c < 90)
		return fz_below(r, ncpus);
	if (c < 95)
		return ncpus + fz_below(r, 4);
	return (int)fz_next(r);
}

static enum kind make_attr(struct fz_rng *r, struct perf_event_attr *a,
			   unsigned char *tail, int *cpu, int *pid)
{
	enum kind k;
	uint64_t cfg[3] = { 0, 0, 0 };
	int owner = -1, clean;
	unsigned int c = fz_below(r, 100);

	memset(a, 0, sizeof(*a));
	clean = fz_pct(r, 40);
	if (npmus && c < 66) {
		const struct pmu *p = &pmus[fz_below(r, npmus)];

		k = K_OURS;
		a->type = p->type;
		owner = p->cpu;
		make_config_ours(r, p, cfg);
	} else if (c < 90) {
		k = K_SW;
		a->type = PERF_TYPE_SOFTWARE;
		cfg[0] = fz_below(r, PERF_COUNT_SW_MAX + 2);
	} else if (c < 94) {
		k = K_OTHER;
		a->type = PERF_TYPE_HARDWARE;
		cfg[0] = fz_below(r, PERF_COUNT_HW_MAX + 1);
	} else {
		k = K_OTHER;
		a->type = fz_pct(r, 50) ? fz_below(r, 64) : (uint32_t)fz_next(r);
		cfg[0] = fz_next(r) & 0xffff;
	}
	a->config = cfg[0];
	a->config1 = cfg[1];
	a->config2 = cfg[2];

	if (clean) {
		/* what a counting tool asks for: most of these open */
		a->size = sizeof(*a);
		memset(tail, 0, 64);
		a->disabled = fz_pct(r, 50);
		a->read_format = fz_next(r) & 0x1f;
		*cpu = owner >= 0 && fz_pct(r, 85) ? owner : (int)fz_below(r, ncpus);
		*pid = -1;
		return k;
	}

	c = fz_below(r, 100);
	a->size = c < 85 ? sizeof(*a) : c < 90 ? PERF_ATTR_SIZE_VER0 :
		  (uint32_t)fz_below(r, sizeof(*a) + 64);
	memset(tail, 0, 64);
	if (a->size > sizeof(*a) && fz_pct(r, 30))
		tail[fz_below(r, 64)] = 1;	/* non-zero tail: E2BIG */

	a->disabled = fz_pct(r, 50);
	a->inherit = fz_pct(r, 8);
	a->pinned = fz_pct(r, 8);
	a->exclusive = fz_pct(r, 5);
	a->exclude_user = fz_pct(r, 8);
	a->exclude_kernel = fz_pct(r, 8);
	a->exclude_hv = fz_pct(r, 8);
	a->exclude_idle = fz_pct(r, 8);
	a->mmap = fz_pct(r, 4);
	a->comm = fz_pct(r, 4);
	a->inherit_stat = fz_pct(r, 3);
	a->enable_on_exec = fz_pct(r, 4);
	a->task = fz_pct(r, 3);
	a->precise_ip = fz_pct(r, 10) ? fz_below(r, 4) : 0;
	a->mmap_data = fz_pct(r, 3);
	a->sample_id_all = fz_pct(r, 8);
	a->exclude_host = fz_pct(r, 4);
	a->exclude_guest = fz_pct(r, 4);
	a->exclude_callchain_kernel = fz_pct(r, 3);
	a->exclude_callchain_user = fz_pct(r, 3);
	a->mmap2 = fz_pct(r, 3);
	a->comm_exec = fz_pct(r, 3);
	a->context_switch = fz_pct(r, 3);
	a->write_backward = fz_pct(r, 3);
	a->namespaces = fz_pct(r, 2);
	a->ksymbol = fz_pct(r, 2);
	a->bpf_event = fz_pct(r, 2);
	a->aux_output = fz_pct(r, 2);
	a->cgroup = fz_pct(r, 2);
	a->text_poke = fz_pct(r, 2);
	a->build_id = fz_pct(r, 2);
	a->inherit_thread = fz_pct(r, 2);
	a->remove_on_exec = fz_pct(r, 2);
	a->sigtrap = fz_pct(r, 2);
	if (fz_pct(r, 5)) {
		a->use_clockid = 1;
		a->clockid = fz_below(r, 14);
	}
	if (fz_pct(r, 4)) {
		a->watermark = 1;
		a->wakeup_watermark = fz_below(r, 8192);
	} else if (fz_pct(r, 4)) {
		a->wakeup_events = fz_below(r, 8);
	}

	c = fz_below(r, 100);
	if (c < 10) {
		a->freq = 1;
		a->sample_freq = fz_pct(r, 80) ? 1 + fz_below(r, 4000) : fz_next(r);
	} else if (c < 25) {
		a->sample_period = fz_pct(r, 85) ? 1000 + fz_below(r, 1000000) : fz_next(r);
	}
	if (fz_pct(r, 25))
		a->sample_type = fz_next(r) & ((1ULL << 24) - 1);
	if (fz_pct(r, 60))
		a->read_format = fz_next(r) & 0x1f;	/* GROUP ID TOTAL_* LOST */
	if (fz_pct(r, 3))
		a->read_format = fz_next(r);
	if (fz_pct(r, 3))
		a->branch_sample_type = fz_next(r) & 0xfffff;
	if (fz_pct(r, 2))
		a->sig_data = fz_next(r);

	*cpu = pick_cpu(r, owner);
	c = fz_below(r, 100);
	*pid = c < 75 ? -1 : c < 95 ? 0 : c < 98 ? getpid() : (int)fz_below(r, 1 << 16);
	return k;
}

static void close_slot(struct thr *t, struct slot *s)
{
	if (s->map) {
		munmap(s->map, s->maplen);
		s->map = NULL;
	}
	if (s->fd >= 0) {
		t->calls[OP_CLOSE]++;
		fz_hist_add(&t->h[OP_CLOSE], close(s->fd) ? errno : 0);
	}
	s->fd = -1;
	s->kind = K_NONE;
}

static int do_open(struct thr *t)
{
	struct fz_rng *r = &t->rng;
	struct {
		struct perf_event_attr a;
		unsigned char tail[64];
	} buf;
	unsigned int target = fz_below(r, NSLOTS), lead = fz_below(r, NSLOTS);
	int use_group = fz_pct(r, 55);
	unsigned long flags;
	int cpu, pid, group = -1, fd;
	enum kind k, lk;
	unsigned int c;

	k = make_attr(r, &buf.a, buf.tail, &cpu, &pid);
	c = fz_below(r, 100);
	flags = c < 80 ? PERF_FLAG_FD_CLOEXEC : c < 90 ? 0 :
		c < 95 ? (fz_next(r) & 0xf) : (uint32_t)fz_next(r);

	close_slot(t, &t->s[target]);	/* the target slot takes the new fd */
	lk = t->s[lead].kind;
	if (use_group && lead != target) {
		/* the core bugs: no new member under a non-hwtel leader */
		if (lk == K_OURS || opt_sw_leaders || !nhp || !opt_hotplug)
			group = t->s[lead].fd;
	}
	t->calls[OP_OPEN]++;
	fd = syscall(SYS_perf_event_open, &buf.a, pid, cpu, group, flags);
	fz_hist_add(&t->h[OP_OPEN], fd < 0 ? errno : 0);
	if (fd < 0)
		return 0;
	if (k == K_OURS)
		t->ours_ok++;
	t->s[target].fd = fd;
	t->s[target].kind = k;
	return 0;
}

static void do_read(struct thr *t)
{
	static const unsigned int sizes[] = {
		0, 1, 7, 8, 15, 16, 23, 24, 31, 32, 40, 48, 56, 64, 4096,
	};
	struct fz_rng *r = &t->rng;
	struct slot *s = &t->s[fz_below(r, NSLOTS)];
	uint64_t buf[1024];
	size_t len;
	ssize_t n;

	len = fz_pct(r, 80) ? sizes[fz_below(r, sizeof(sizes) / sizeof(sizes[0]))] :
			      fz_below(r, sizeof(buf));
	t->calls[OP_READ]++;
	n = read(s->fd, buf, len);
	fz_hist_add(&t->h[OP_READ], n < 0 ? errno : 0);
}

static void do_ioctl(struct thr *t)
{
	struct fz_rng *r = &t->rng;
	struct slot *s = &t->s[fz_below(r, NSLOTS)];
	struct slot *o = &t->s[fz_below(r, NSLOTS)];
	struct perf_event_attr ma;
	struct {
		struct perf_event_query_bpf q;
		uint32_t ids[4];
	} qb;
	uint64_t val = 0;
	unsigned long req, arg = 0;
	int ret;

	switch (fz_below(r, 13)) {
	case 0: req = PERF_EVENT_IOC_ENABLE; goto grp;
	case 1: req = PERF_EVENT_IOC_DISABLE; goto grp;
	case 2: req = PERF_EVENT_IOC_RESET;
grp:
		arg = fz_pct(r, 70) ? 0 : fz_pct(r, 80) ? PERF_IOC_FLAG_GROUP : fz_next(r);
		break;
	case 3:
		req = PERF_EVENT_IOC_REFRESH;
		arg = fz_pct(r, 80) ? fz_below(r, 4) : fz_next(r);
		break;
	case 4:
		req = PERF_EVENT_IOC_PERIOD;
		val = fz_pct(r, 20) ? 0 : fz_pct(r, 80) ? 1 + fz_below(r, 100000) : fz_next(r);
		arg = fz_pct(r, 95) ? (unsigned long)&val : 0;
		break;
	case 5:
		req = PERF_EVENT_IOC_SET_OUTPUT;
		arg = fz_pct(r, 30) ? (unsigned long)-1 : (unsigned long)o->fd;
		break;
	case 6:
		req = PERF_EVENT_IOC_SET_FILTER;
		arg = (unsigned long)(fz_pct(r, 50) ? "common_pid != 0" : "filter?");
		break;
	case 7:
		req = PERF_EVENT_IOC_ID;
		arg = fz_pct(r, 95) ? (unsigned long)&val : 0;
		break;
	case 8:
		req = PERF_EVENT_IOC_SET_BPF;
		arg = fz_pct(r, 50) ? (unsigned long)-1 : (unsigned long)o->fd;
		break;
	case 9:
		req = PERF_EVENT_IOC_PAUSE_OUTPUT;
		arg = fz_below(r, 2);
		break;
	case 10:
		req = PERF_EVENT_IOC_QUERY_BPF;
		memset(&qb, 0, sizeof(qb));
		qb.q.ids_len = fz_below(r, 5);
		arg = (unsigned long)&qb;
		break;
	case 11:
		req = PERF_EVENT_IOC_MODIFY_ATTRIBUTES;
		memset(&ma, 0, sizeof(ma));
		ma.size = sizeof(ma);
		ma.type = fz_below(r, 6);
		ma.config = fz_below(r, 16);
		arg = (unsigned long)&ma;
		break;
	default:
		req = _IO('$', fz_below(r, 16));
		arg = fz_next(r) & 0xff;
		break;
	}
	t->calls[OP_IOCTL]++;
	ret = ioctl(s->fd, req, arg);
	fz_hist_add(&t->h[OP_IOCTL], ret < 0 ? errno : 0);
}

static void do_mmap(struct thr *t)
{
	static const unsigned int pages[] = { 1, 2, 3, 5, 9, 0, 4 };
	struct fz_rng *r = &t->rng;
	struct slot *s = &t->s[fz_below(r, NSLOTS)];
	size_t len = pages[fz_below(r, 7)] * page_size;
	int prot = fz_pct(r, 60) ? PROT_READ | PROT_WRITE : PROT_READ;
	off_t off = fz_pct(r, 95) ? 0 : page_size;
	void *p;

	if (s->map) {
		munmap(s->map, s->maplen);
		s->map = NULL;
	}
	t->calls[OP_MMAP]++;
	p = mmap(NULL, len ? len : 1, prot, MAP_SHARED, s->fd, off);
	fz_hist_add(&t->h[OP_MMAP], p == MAP_FAILED ? errno : 0);
	if (p == MAP_FAILED)
		return;
	/* look at the control page like a reader would */
	(void)*(volatile uint64_t *)((char *)p + offsetof(struct perf_event_mmap_page, data_head));
	s->map = p;
	s->maplen = len ? len : 1;
}

static void do_munmap(struct thr *t)
{
	struct slot *s = &t->s[fz_below(&t->rng, NSLOTS)];
	int ret;

	if (!s->map)
		return;		/* nothing mapped: no call */
	t->calls[OP_MUNMAP]++;
	ret = munmap(s->map, s->maplen);
	fz_hist_add(&t->h[OP_MUNMAP], ret ? errno : 0);
	s->map = NULL;
}

static void do_prctl(struct thr *t)
{
	int ret;

	t->calls[OP_PRCTL]++;
	ret = prctl(fz_pct(&t->rng, 50) ? PR_TASK_PERF_EVENTS_DISABLE :
					  PR_TASK_PERF_EVENTS_ENABLE, 0, 0, 0, 0);
	fz_hist_add(&t->h[OP_PRCTL], ret ? errno : 0);
}

static void *worker(void *arg)
{
	struct thr *t = arg;
	unsigned long i;
	int k;

	for (k = 0; k < NSLOTS; k++)
		t->s[k].fd = -1;
	for (i = 0; i < opt_iters; i++) {
		unsigned int w = fz_below(&t->rng, 100), acc = 0;
		int op;

		if (opt_seconds > 0 && !(i & 63) && fz_now() > t_end)
			break;
		for (op = 0; op < OP_NR - 1; op++) {
			acc += op_weight[op];
			if (w < acc)
				break;
		}
		switch (op) {
		case OP_OPEN: do_open(t); break;
		case OP_CLOSE: close_slot(t, &t->s[fz_below(&t->rng, NSLOTS)]); break;
		case OP_READ: do_read(t); break;
		case OP_IOCTL: do_ioctl(t); break;
		case OP_MMAP: do_mmap(t); break;
		case OP_MUNMAP: do_munmap(t); break;
		default: do_prctl(t); break;
		}
	}
	for (k = 0; k < NSLOTS; k++)
		close_slot(t, &t->s[k]);
	return NULL;
}

static int cpu_set_online(int cpu, int on)
{
	char path[128];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		ret = -errno;
	close(fd);
	return ret;
}

static void *hotplug(void *arg)
{
	struct fz_rng r;
	int i;

	fz_seed(&r, opt_seed, opt_threads);
	while (!atomic_load(&stop_hotplug)) {
		int cpu = hp_cpus[fz_below(&r, nhp)];

		if (cpu_set_online(cpu, 0))
			hp_fail++;
		usleep(fz_below(&r, 20000));
		if (cpu_set_online(cpu, 1))
			hp_fail++;
		else
			hp_cycles++;
		usleep(fz_below(&r, 20000));
	}
	for (i = 0; i < nhp; i++)
		cpu_set_online(hp_cpus[i], 1);
	return arg;
}

/* one event of each hwtel PMU under a software leader, no hotplug running */
static void probe_sw_leader(void)
{
	struct perf_event_attr a;
	int i, lead, fd;

	for (i = 0; i < npmus; i++) {
		struct fz_rng r;
		uint64_t cfg[3] = { 0, 0, 0 };
		int cpu = pmus[i].cpu < 0 ? 0 : pmus[i].cpu;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.disabled = 1;
		lead = syscall(SYS_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (lead < 0) {
			printf("# sw-leader probe %s: leader open failed: %s\n",
			       pmus[i].name, strerror(errno));
			continue;
		}
		fz_seed(&r, 0, 0);
		if (pmus[i].naliases)
			apply_alias(&r, &pmus[i], pmus[i].alias[0], cfg);
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = pmus[i].type;
		a.config = cfg[0];
		fd = syscall(SYS_perf_event_open, &a, -1, cpu, lead, PERF_FLAG_FD_CLOEXEC);
		printf("# sw-leader probe %s: %s under a cpu-clock leader: %s\n",
		       pmus[i].name, pmus[i].naliases ? pmus[i].alias[0] : "config 0",
		       fd >= 0 ? "accepted" : fz_errname(errno) ? fz_errname(errno) : "errno?");
		if (fd >= 0)
			close(fd);
		close(lead);
	}
}

static void on_sigtrap(int sig)
{
	(void)sig;
}

static void usage(void)
{
	fprintf(stderr, "usage: perf_fuzz [--seed S] [--iters N] [--threads T] "
		"[--seconds S] [--no-hotplug] [--sw-leaders] [--verbose]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static struct thr thr[MAX_THREADS];
	struct fz_hist tot[OP_NR];
	unsigned long calls[OP_NR], total = 0, ours_ok = 0;
	struct rlimit rl = { 4096, 4096 };
	struct sigaction sa;
	pthread_t hp;
	int i, kmsg, splats, all_online = 1, seeded = 0;
	double t0;

	for (i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (!strcmp(o, "--no-hotplug")) {
			opt_hotplug = 0;
		} else if (!strcmp(o, "--sw-leaders")) {
			opt_sw_leaders = 1;
		} else if (!strcmp(o, "--verbose")) {
			opt_verbose = 1;
		} else if (i + 1 < argc && !strcmp(o, "--seed")) {
			opt_seed = fz_num(o, argv[++i]);
			seeded = 1;
		} else if (i + 1 < argc && !strcmp(o, "--iters")) {
			opt_iters = fz_num(o, argv[++i]);
		} else if (i + 1 < argc && !strcmp(o, "--threads")) {
			opt_threads = fz_num(o, argv[++i]);
		} else if (i + 1 < argc && !strcmp(o, "--seconds")) {
			opt_seconds = strtod(argv[++i], NULL);
		} else {
			usage();
		}
	}
	if (!opt_threads || opt_threads > MAX_THREADS)
		usage();
	if (!seeded)
		opt_seed = fz_default_seed();
	if (!opt_iters)
		opt_iters = opt_seconds > 0 ? ~0UL : 10000;	/* --seconds alone: the time */
	page_size = sysconf(_SC_PAGESIZE);
	setrlimit(RLIMIT_NOFILE, &rl);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGIO, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = on_sigtrap;	/* survive attr.sigtrap events */
	sigaction(SIGTRAP, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);

	find_pmus();
	find_cpus();
	printf("TAP version 13\n1..4\n");
	printf("# perf_fuzz --seed 0x%llx --iters %lu --threads %u --seconds %g%s%s\n",
	       (unsigned long long)opt_seed, opt_iters == ~0UL ? 0 : opt_iters,
	       opt_threads, opt_seconds,
	       opt_hotplug ? "" : " --no-hotplug", opt_sw_leaders ? " --sw-leaders" : "");
	for (i = 0; i < npmus; i++)
		printf("# pmu %s type %u cpu %d fields %d aliases %d\n", pmus[i].name,
		       pmus[i].type, pmus[i].cpu, pmus[i].nfields, pmus[i].naliases);
	if (npmus)
		printf("ok 1 found %d hwtel PMUs\n", npmus);
	else
		printf("not ok 1 found no hwtel PMU (load the models and drivers)\n");
	if (opt_hotplug && !nhp)
		printf("# no CPU can go offline: hotplug off\n");

	kmsg = fz_kmsg_open();
	probe_sw_leader();

	t0 = fz_now();
	t_end = t0 + opt_seconds;
	if (opt_hotplug && nhp)
		pthread_create(&hp, NULL, hotplug, NULL);
	for (i = 0; i < (int)opt_threads; i++) {
		thr[i].idx = i;
		fz_seed(&thr[i].rng, opt_seed, i);
		thr[i].seed = thr[i].rng.s;
		printf("# thread %d stream seed 0x%016llx\n", i, (unsigned long long)thr[i].seed);
		pthread_create(&thr[i].tid, NULL, worker, &thr[i]);
	}
	for (i = 0; i < (int)opt_threads; i++)
		pthread_join(thr[i].tid, NULL);
	atomic_store(&stop_hotplug, 1);
	if (opt_hotplug && nhp)
		pthread_join(hp, NULL);

	memset(tot, 0, sizeof(tot));
	memset(calls, 0, sizeof(calls));
	for (i = 0; i < (int)opt_threads; i++) {
		for (int op = 0; op < OP_NR; op++) {
			fz_hist_merge(&tot[op], &thr[i].h[op]);
			calls[op] += thr[i].calls[op];
			total += thr[i].calls[op];
		}
		ours_ok += thr[i].ours_ok;
	}
	printf("# %.1f s, calls %lu:", fz_now() - t0, total);
	for (i = 0; i < OP_NR; i++)
		printf(" %s=%lu", op_name[i], calls[i]);
	printf("\n# errno histogram per call:\n");
	for (i = 0; i < OP_NR; i++)
		fz_hist_print(op_name[i], &tot[i]);
	printf("# perf_event_open of hwtel PMUs that succeeded: %lu\n", ours_ok);
	printf("# hotplug cycles %lu (failed writes %lu)\n", hp_cycles, hp_fail);
	if (!npmus || ours_ok)
		printf("ok 2 perf_event_open calls %lu, %lu opened a hwtel event\n",
		       calls[OP_OPEN], ours_ok);
	else
		printf("not ok 2 no hwtel event ever opened (%lu calls)\n", calls[OP_OPEN]);

	for (i = 0; i < nhp; i++) {
		char path[128], b[8];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", hp_cpus[i]);
		if (!read_str(path, b, sizeof(b)) && b[0] != '1')
			all_online = 0;
	}
	printf("%s 3 every CPU online again\n", all_online ? "ok" : "not ok");

	splats = fz_kmsg_splats(kmsg);
	printf("# %d splats\n", splats);
	printf("%s 4 %d splats in dmesg\n", splats ? "not ok" : "ok", splats);
	return splats || !all_online || !npmus || (npmus && !ours_ok);
}
