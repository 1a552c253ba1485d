// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libhwtel: a PMU's sysfs description (type, cpumask, format/, events/)
 * turned into perf_event_attr. This is what perf's parse-events does for
 * "pmu/term=value,.../"; libperf does not, so it is done here once.
 */

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "internal.h"

/*
 * A caller's perf_event_attr is between PERF_ATTR_SIZE_VER1 (the first with
 * config2, which is written) and this: the kernel refuses a longer one with
 * 4 KiB pages (E2BIG), and a larger size is more likely an unset one.
 */
#define ATTR_SIZE_MAX	4096u

/* "config:0-7", "config1:3", "config:0-3,8-11" */
int hwtel_format_parse(const char *name, const char *text, struct hwtel_format *fmt)
{
	const char *p = text;
	char *end;

	hwtel_clear_error();
	memset(fmt, 0, sizeof(*fmt));
	snprintf(fmt->name, sizeof(fmt->name), "%s", name);
	if (!strncmp(p, "config2:", 8)) {
		fmt->word = 2;
		p += 8;
	} else if (!strncmp(p, "config1:", 8)) {
		fmt->word = 1;
		p += 8;
	} else if (!strncmp(p, "config:", 7)) {
		fmt->word = 0;
		p += 7;
	} else {
		return hwtel_err(-EINVAL, "format %s: unknown field word in '%s'", name, text);
	}
	for (;;) {
		unsigned long lo, hi, b;

		if (!isdigit((unsigned char)*p))
			return hwtel_err(-EINVAL, "format %s: bad bit range in '%s'", name, text);
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return hwtel_err(-EINVAL, "format %s: bad bit range in '%s'", name, text);
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi > 63)
			return hwtel_err(-EINVAL, "format %s: bit range %lu-%lu out of 0-63", name, lo, hi);
		for (b = lo; b <= hi; b++) {
			unsigned int i;

			for (i = 0; i < fmt->nbits; i++)
				if (fmt->bits[i] == b)
					return hwtel_err(-EINVAL, "format %s: bit %lu given twice", name, b);
			if (fmt->nbits >= HWTEL_CONFIG_WORD_BITS)
				return hwtel_err(-EINVAL, "format %s: too many bits", name);
			fmt->bits[fmt->nbits++] = (unsigned char)b;
		}
		if (*p == ',') {
			p++;
			continue;
		}
		while (*p == '\n' || *p == ' ')
			p++;
		if (*p)
			return hwtel_err(-EINVAL, "format %s: trailing '%s'", name, p);
		return 0;
	}
}

static int pmu_path(const char *name, const char *rel, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/bus/event_source/devices/%s%s%s",
			 hwtel_sysfs_root(), name, rel ? "/" : "", rel ? rel : "");

	return n >= (int)size ? -ENAMETOOLONG : 0;
}

int hwtel_pmu_read_attr(const struct hwtel_pmu *pmu, const char *rel,
			char *buf, size_t size)
{
	char path[PATH_MAX];

	hwtel_clear_error();
	if (snprintf(path, sizeof(path), "%s/%s", pmu->path, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return hwtel_read_file(path, buf, size);
}

static int cmp_format(const void *a, const void *b)
{
	return strcmp(((const struct hwtel_format *)a)->name,
		      ((const struct hwtel_format *)b)->name);
}

int hwtel_pmu_load(const char *name, struct hwtel_pmu *pmu)
{
	char path[PATH_MAX], buf[256];
	unsigned long long type;
	struct dirent *de;
	DIR *d;
	int ret;

	hwtel_clear_error();
	memset(pmu, 0, sizeof(*pmu));
	if (strlen(name) >= sizeof(pmu->name) || strchr(name, '/'))
		return hwtel_err(-EINVAL, "bad PMU name '%s'", name);
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	if (pmu_path(name, NULL, pmu->path, sizeof(pmu->path)))
		return hwtel_err(-ENAMETOOLONG, "sysfs path too long");
	if (pmu_path(name, "type", path, sizeof(path)))
		return -ENAMETOOLONG;
	ret = hwtel_read_uint(path, &type);
	if (ret == -ENOENT)
		return hwtel_err(ret, "no PMU %s in %s/bus/event_source/devices", name,
				 hwtel_sysfs_root());
	if (ret < 0 || type > UINT32_MAX)
		return hwtel_err(ret < 0 ? ret : -EINVAL, "%s: unreadable type", path);
	pmu->type = (uint32_t)type;
	pmu->cpu = -1;
	if (hwtel_pmu_read_attr(pmu, "cpumask", buf, sizeof(buf)) > 0 &&
	    isdigit((unsigned char)buf[0]))
		pmu->cpu = atoi(buf);

	if (pmu_path(name, "format", path, sizeof(path)))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return hwtel_err(-errno, "%s: %s", path, strerror(errno));
	while ((de = readdir(d))) {
		char fpath[PATH_MAX + 300];

		if (de->d_name[0] == '.')
			continue;
		if (pmu->nformats >= HWTEL_MAX_FORMATS) {
			closedir(d);
			return hwtel_err(-E2BIG, "%s: too many format fields", path);
		}
		snprintf(fpath, sizeof(fpath), "%s/%s", path, de->d_name);
		ret = hwtel_read_file(fpath, buf, sizeof(buf));
		if (ret < 0) {
			closedir(d);
			return hwtel_err(ret, "%s: unreadable", fpath);
		}
		ret = hwtel_format_parse(de->d_name, buf, &pmu->formats[pmu->nformats]);
		if (ret < 0) {
			closedir(d);
			return ret;
		}
		pmu->nformats++;
	}
	closedir(d);
	qsort(pmu->formats, pmu->nformats, sizeof(pmu->formats[0]), cmp_format);
	return 0;
}

int hwtel_pmu_open(const char *name, struct hwtel_pmu **out)
{
	struct hwtel_pmu *pmu = malloc(sizeof(*pmu));
	int ret;

	*out = NULL;
	if (!pmu)
		return -ENOMEM;
	ret = hwtel_pmu_load(name, pmu);
	if (ret) {
		free(pmu);
		return ret;
	}
	*out = pmu;
	return 0;
}

void hwtel_pmu_close(struct hwtel_pmu *pmu)
{
	free(pmu);
}

const char *hwtel_pmu_name(const struct hwtel_pmu *pmu)
{
	return pmu->name;
}

const char *hwtel_pmu_path(const struct hwtel_pmu *pmu)
{
	return pmu->path;
}

uint32_t hwtel_pmu_type(const struct hwtel_pmu *pmu)
{
	return pmu->type;
}

int hwtel_pmu_cpu(const struct hwtel_pmu *pmu)
{
	return pmu->cpu;
}

static const struct hwtel_format *find_format(const struct hwtel_pmu *pmu, const char *n)
{
	unsigned int i;

	for (i = 0; i < pmu->nformats; i++)
		if (!strcmp(pmu->formats[i].name, n))
			return &pmu->formats[i];
	return NULL;
}

struct term {
	char name[32];
	uint64_t value;
	bool unset;	/* "=?" */
};

#define MAX_TERMS 24

/* Split "a=1,b=?,c" into terms; a bare word is name=1 unless @first_name. */
static int parse_terms(const char *text, struct term *t, unsigned int *n,
		       char *event, size_t evsize, bool allow_event)
{
	char buf[512], *save = NULL, *tok;
	bool first = true;

	if (strlen(text) >= sizeof(buf))
		return hwtel_err(-EINVAL, "event '%s' too long", text);
	snprintf(buf, sizeof(buf), "%s", text);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), first = false) {
		char *eq = strchr(tok, '=');
		struct term *cur;
		unsigned int i;

		while (isspace((unsigned char)*tok))
			tok++;
		if (!*tok)
			return hwtel_err(-EINVAL, "empty term in '%s'", text);
		if (!eq && first && allow_event) {
			snprintf(event, evsize, "%s", tok);
			continue;
		}
		if (eq)
			*eq = '\0';
		if (strlen(tok) >= sizeof(t[0].name))
			return hwtel_err(-EINVAL, "term '%s' too long", tok);
		for (i = 0; i < *n; i++)
			if (!strcmp(t[i].name, tok))
				break;
		if (i == *n) {
			if (*n >= MAX_TERMS)
				return hwtel_err(-EINVAL, "too many terms in '%s'", text);
			(*n)++;
		}
		cur = &t[i];
		snprintf(cur->name, sizeof(cur->name), "%s", tok);
		cur->unset = false;
		cur->value = 1;
		if (eq) {
			if (!strcmp(eq + 1, "?"))
				cur->unset = true;
			else if (hwtel_parse_u64(eq + 1, &cur->value))
				return hwtel_err(-EINVAL, "bad value '%s' of term %s", eq + 1, tok);
		}
	}
	return 0;
}

/* The events/ file of @event, from the PMU's cache when read before. */
static int event_def(const struct hwtel_pmu *cpmu, const char *event, char *buf, size_t size)
{
	/* the cache is not part of the PMU's value: it may be filled here */
	struct hwtel_pmu *pmu = (struct hwtel_pmu *)cpmu;
	char path[PATH_MAX + 200];
	unsigned int i;
	int ret;

	for (i = 0; i < pmu->nevcache; i++)
		if (!strcmp(pmu->evcache[i].name, event)) {
			snprintf(buf, size, "%s", pmu->evcache[i].def);
			return (int)strlen(buf);
		}
	snprintf(path, sizeof(path), "%s/events/%s", pmu->path, event);
	ret = hwtel_read_file(path, buf, size);
	if (ret >= 0 && pmu->nevcache < ARRAY_SIZE(pmu->evcache) &&
	    strlen(event) < sizeof(pmu->evcache[0].name) &&
	    strlen(buf) < sizeof(pmu->evcache[0].def)) {
		i = pmu->nevcache++;
		snprintf(pmu->evcache[i].name, sizeof(pmu->evcache[i].name), "%s", event);
		snprintf(pmu->evcache[i].def, sizeof(pmu->evcache[i].def), "%s", buf);
	}
	return ret;
}

int hwtel_pmu_event_attr(const struct hwtel_pmu *pmu, const char *spec,
			 struct perf_event_attr *attr)
{
	struct term t[MAX_TERMS];
	char event[128] = "", buf[512];
	uint64_t cfg[3] = { 0, 0, 0 };
	unsigned int n = 0, i;
	uint32_t size;
	int ret;

	hwtel_clear_error();
	/* the caller's struct, not ours: it may come from other kernel headers */
	if (attr->size < PERF_ATTR_SIZE_VER1 || attr->size > ATTR_SIZE_MAX)
		return hwtel_err(-EINVAL, "attr->size %u: set it to sizeof(struct perf_event_attr)",
				 attr->size);
	memset(t, 0, sizeof(t));
	/* the event's own definition first, then the user's terms on top */
	ret = parse_terms(spec, t, &n, event, sizeof(event), true);
	if (ret)
		return ret;
	if (event[0]) {
		struct term user[MAX_TERMS];
		unsigned int nu = n;

		memcpy(user, t, sizeof(user));
		n = 0;
		memset(t, 0, sizeof(t));
		if (strchr(event, '/') || event[0] == '.')
			return hwtel_err(-EINVAL, "bad event name '%s'", event);
		ret = event_def(pmu, event, buf, sizeof(buf));
		if (ret < 0)
			return hwtel_err(ret == -ENOENT ? -EINVAL : ret,
					 "%s has no event '%s'", pmu->name, event);
		ret = parse_terms(buf, t, &n, NULL, 0, false);
		if (ret)
			return ret;
		for (i = 0; i < nu; i++) {
			unsigned int k;

			for (k = 0; k < n; k++)
				if (!strcmp(t[k].name, user[i].name))
					break;
			if (k == n) {
				if (n >= MAX_TERMS)
					return hwtel_err(-EINVAL, "too many terms");
				n++;
			}
			t[k] = user[i];
		}
	}
	for (i = 0; i < n; i++) {
		const struct hwtel_format *f = find_format(pmu, t[i].name);
		unsigned int b;

		if (!f)
			return hwtel_err(-EINVAL, "%s has no format field '%s' (event '%s')",
					 pmu->name, t[i].name, spec);
		if (t[i].unset)
			return hwtel_err(-EINVAL, "event '%s' needs %s=<value>", spec, t[i].name);
		if (f->nbits < 64 && (t[i].value >> f->nbits))
			return hwtel_err(-EINVAL, "value 0x%llx of %s does not fit its %u bit(s)",
					 (unsigned long long)t[i].value, t[i].name, f->nbits);
		for (b = 0; b < f->nbits; b++) {
			uint64_t bit = 1ull << f->bits[b];

			if ((t[i].value >> b) & 1)
				cfg[f->word] |= bit;
			else
				cfg[f->word] &= ~bit;
		}
	}
	size = attr->size;
	memset(attr, 0, size);
	attr->size = size;
	attr->type = pmu->type;
	attr->config = cfg[0];
	attr->config1 = cfg[1];
	attr->config2 = cfg[2];
	return 0;
}
