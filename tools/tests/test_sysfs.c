// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs format/ and events/ parsing into perf_event_attr, PMU discovery and
 * -d resolution, against the fixture trees in fixtures/sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>

#include "lib/internal.h"	/* struct hwtel_pmu, hwtel_pmu_load() */
#include "unit.h"

#define FIX "fixtures/sys"
#define PCIE0 "ndk_pcie_tlm_3fff00000000"
#define PCIE1 "ndk_pcie_tlm_3fff00100000"

TEST(format_parse_ranges)
{
	struct hwtel_format f;

	CHECK_EQ(hwtel_format_parse("kind", "config:0-7", &f), 0);
	CHECK_EQ(f.word, 0);
	CHECK_EQ(f.nbits, 8);
	CHECK_EQ(f.bits[0], 0);
	CHECK_EQ(f.bits[7], 7);
	CHECK_EQ(hwtel_format_parse("idx", "config:32-47\n", &f), 0);
	CHECK_EQ(f.nbits, 16);
	CHECK_EQ(f.bits[0], 32);
	CHECK_EQ(hwtel_format_parse("s", "config1:0-3,8-11", &f), 0);
	CHECK_EQ(f.word, 1);
	CHECK_EQ(f.nbits, 8);
	CHECK_EQ(f.bits[4], 8);
	CHECK_EQ(hwtel_format_parse("t", "config2:63", &f), 0);
	CHECK_EQ(f.word, 2);
	CHECK_EQ(f.nbits, 1);
	CHECK_EQ(f.bits[0], 63);
	CHECK_EQ(hwtel_format_parse("e", "config:0-8", &f), 0);
	CHECK_EQ(f.nbits, 9);
}

TEST(format_parse_rejects)
{
	struct hwtel_format f;

	CHECK_EQ(hwtel_format_parse("x", "config:7-3", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:64", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:60-64", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "foo:1", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:1-", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:1,1", &f), -EINVAL);
	CHECK_EQ(hwtel_format_parse("x", "config:1x", &f), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "trailing") != NULL);
}

TEST(pmu_load_fixture)
{
	struct hwtel_pmu p;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load(PCIE0, &p), 0);
	CHECK_EQ(p.type, 42);
	CHECK_EQ(p.cpu, 0);
	CHECK_EQ(p.nformats, 4);
	CHECK_STR(p.formats[0].name, "bus");
	CHECK_STR(p.formats[3].name, "kind");
	CHECK_EQ(hwtel_pmu_load("hwtel_fmt_test", &p), 0);
	CHECK_EQ(p.cpu, 2);	/* first CPU of "2-3" */
	CHECK_EQ(hwtel_pmu_load("no_such_pmu", &p), -ENOENT);
	CHECK(strstr(hwtel_last_error(), "no PMU no_such_pmu") != NULL);
	CHECK_EQ(hwtel_pmu_load("../x", &p), -EINVAL);
	hwtel_set_sysfs_root(NULL);
}

/* The public handle: opened, read through its accessors, closed */
TEST(pmu_open_accessors)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct hwtel_pmu *p = NULL;
	char buf[32];

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_open(PCIE0, &p), 0);
	CHECK(p != NULL);
	if (p) {
		CHECK_STR(hwtel_pmu_name(p), PCIE0);
		CHECK(strstr(hwtel_pmu_path(p), "/bus/event_source/devices/" PCIE0) != NULL);
		CHECK_EQ(hwtel_pmu_type(p), 42);
		CHECK_EQ(hwtel_pmu_cpu(p), 0);
		CHECK_EQ(hwtel_pmu_event_attr(p, "words,ep=0,bus=1", &a), 0);
		CHECK_U64(a.config, 0x3 | (1ull << 16));
		CHECK(hwtel_pmu_read_attr(p, "type", buf, sizeof(buf)) > 0);
		CHECK_STR(buf, "42");
	}
	hwtel_pmu_close(p);
	p = (struct hwtel_pmu *)1;
	CHECK_EQ(hwtel_pmu_open("no_such_pmu", &p), -ENOENT);
	CHECK(p == NULL);
	CHECK_EQ(hwtel_pmu_open("../x", &p), -EINVAL);
	hwtel_pmu_close(NULL);
	hwtel_set_sysfs_root(NULL);
}

TEST(event_attr_pcie_terms)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct hwtel_pmu p;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load(PCIE0, &p), 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0,bus=1", &a), 0);
	CHECK_EQ(a.type, 42);
	CHECK_EQ(a.size, sizeof(a));
	CHECK_U64(a.config, 0x3 | (1ull << 16));
	CHECK_EQ(hwtel_pmu_event_attr(&p, "region,ep=2,bus=3,idx=1", &a), 0);
	CHECK_U64(a.config, 0x9 | (2ull << 8) | (3ull << 16) | (1ull << 32));
	CHECK_EQ(hwtel_pmu_event_attr(&p, "pcie_cycles,ep=0xf", &a), 0);
	CHECK_U64(a.config, 0x1 | (0xfull << 8));
	/* plain terms, no event name */
	CHECK_EQ(hwtel_pmu_event_attr(&p, "kind=0xd,idx=17", &a), 0);
	CHECK_U64(a.config, 0xd | (17ull << 32));
	/* a user term overrides the event's own */
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0,bus=0,kind=4", &a), 0);
	CHECK_U64(a.config, 0x4);
	/* the maximum of every field */
	CHECK_EQ(hwtel_pmu_event_attr(&p, "kind=255,ep=255,bus=65535,idx=65535", &a), 0);
	CHECK_U64(a.config, 0xffffffffffffull);
	hwtel_set_sysfs_root(NULL);
}

TEST(event_attr_pcie_rejects)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct hwtel_pmu p;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load(PCIE0, &p), 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0", &a), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "needs bus=<value>") != NULL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=256,bus=0", &a), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "does not fit") != NULL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0,bus=0,foo=1", &a), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "no format field 'foo'") != NULL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "nope", &a), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "no event 'nope'") != NULL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=x,bus=0", &a), -EINVAL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=-1,bus=0", &a), -EINVAL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "words,,ep=0,bus=0", &a), 0);	/* empty token skipped by strtok */
	CHECK_EQ(hwtel_pmu_event_attr(&p, "../../type", &a), -EINVAL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "kind=0x1ff", &a), -EINVAL);
	hwtel_set_sysfs_root(NULL);
}

TEST(event_attr_split_and_config_words)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct hwtel_pmu p;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load("hwtel_fmt_test", &p), 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "both,c1=5", &a), 0);
	CHECK_U64(a.config, 0xf0f);	/* 0xff spread over bits 0-3 and 8-11 */
	CHECK_U64(a.config1, 5);
	CHECK_U64(a.config2, 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "flagged", &a), 0);
	CHECK_U64(a.config, 0x11);	/* split=1, bare "flag" = 1 */
	CHECK_EQ(hwtel_pmu_event_attr(&p, "top=1", &a), 0);
	CHECK_U64(a.config2, 1ull << 63);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "split=0x100", &a), -EINVAL);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "both", &a), -EINVAL);	/* c1=? unset */
	hwtel_set_sysfs_root(NULL);
}

TEST(event_attr_ddr)
{
	struct perf_event_attr a = { .size = sizeof(a) };
	struct hwtel_pmu p;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load("mrvl_ddr_pmu_87e1c0000000", &p), 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "ddr_cam_read", &a), 0);
	CHECK_U64(a.config, 0x10);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "ddr_ddr_reads", &a), 0);
	CHECK_U64(a.config, 101);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "event=0x1ff", &a), 0);
	CHECK_EQ(hwtel_pmu_event_attr(&p, "event=0x200", &a), -EINVAL);
	hwtel_set_sysfs_root(NULL);
}

/*
 * The caller's struct perf_event_attr is attr->size bytes, which need not be
 * the library's sizeof: shorter for a program built against older kernel
 * headers (6.1: 128 bytes; 6.3: 136), longer for newer ones. Each buffer
 * below is malloc'ed at exactly that size, so ASan sees a write past it;
 * every byte but type, size and config must come back zero.
 */
TEST(event_attr_caller_size)
{
	const uint32_t sizes[] = { PERF_ATTR_SIZE_VER1, PERF_ATTR_SIZE_VER5,
				   sizeof(struct perf_event_attr) - 8,
				   sizeof(struct perf_event_attr),
				   sizeof(struct perf_event_attr) + 8 };
	const uint64_t config = 0x3 | (1ull << 16);
	struct hwtel_pmu p;
	unsigned int i;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load(PCIE0, &p), 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t sz = sizes[i], type = 42;
		unsigned char *buf = malloc(sz), *want = calloc(1, sz);

		CHECK(buf && want);
		memset(buf, 0xa5, sz);
		memcpy(buf + offsetof(struct perf_event_attr, size), &sz, sizeof(sz));
		memcpy(want + offsetof(struct perf_event_attr, type), &type, sizeof(type));
		memcpy(want + offsetof(struct perf_event_attr, size), &sz, sizeof(sz));
		memcpy(want + offsetof(struct perf_event_attr, config), &config, sizeof(config));
		CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0,bus=1",
					      (struct perf_event_attr *)buf), 0);
		if (memcmp(buf, want, sz))
			printf("# caller size %u: attr differs from the expected\n", sz);
		CHECK(memcmp(buf, want, sz) == 0);
		free(buf);
		free(want);
	}
	hwtel_set_sysfs_root(NULL);
}

/* A size too small for config2, or none set: refused, the attr untouched. */
TEST(event_attr_caller_size_rejects)
{
	const uint32_t sizes[] = { 0, PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER1 - 1, 4097 };
	_Alignas(8) unsigned char buf[PERF_ATTR_SIZE_VER1];
	unsigned char want[PERF_ATTR_SIZE_VER1];
	struct hwtel_pmu p;
	unsigned int i;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pmu_load(PCIE0, &p), 0);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(buf, 0xa5, sizeof(buf));
		memcpy(buf + offsetof(struct perf_event_attr, size), &sizes[i],
		       sizeof(sizes[i]));
		memcpy(want, buf, sizeof(buf));
		CHECK_EQ(hwtel_pmu_event_attr(&p, "words,ep=0,bus=1",
					      (struct perf_event_attr *)buf), -EINVAL);
		CHECK(strstr(hwtel_last_error(), "attr->size") != NULL);
		CHECK(memcmp(buf, want, sizeof(buf)) == 0);
	}
	hwtel_set_sysfs_root(NULL);
}

TEST(pmu_list_sorted_by_base)
{
	char **names = NULL;
	int n;

	hwtel_set_sysfs_root(FIX);
	n = hwtel_pmu_list("ndk_pcie_tlm_", &names);
	CHECK_EQ(n, 2);
	if (n == 2) {
		CHECK_STR(names[0], PCIE0);
		CHECK_STR(names[1], PCIE1);
		CHECK(names[2] == NULL);
	}
	hwtel_pmu_list_free(names);
	n = hwtel_pmu_list("mrvl_ddr_pmu_", &names);
	CHECK_EQ(n, 2);
	hwtel_pmu_list_free(names);
	hwtel_set_sysfs_root("fixtures/empty-sys-does-not-exist");
	n = hwtel_pmu_list("x", &names);
	CHECK_EQ(n, 0);
	CHECK(names != NULL && names[0] == NULL);
	hwtel_pmu_list_free(names);
	hwtel_pmu_list_free(NULL);
	hwtel_set_sysfs_root(NULL);
}

int hwtel_resolve_device(const char *prefix, const char *module, const char *device,
			 unsigned int index, char *name, size_t size);

static const char *resolve(const char *dev, unsigned int idx, int *ret)
{
	static char name[HWTEL_NAME_MAX];

	name[0] = '\0';
	*ret = hwtel_resolve_device("ndk_pcie_tlm_", "ndk_pcie_tlm", dev, idx, name, sizeof(name));
	return name;
}

TEST(device_resolution)
{
	int ret;

	hwtel_set_sysfs_root(FIX);
	CHECK_STR(resolve(NULL, 0, &ret), PCIE0);
	CHECK_EQ(ret, 0);
	CHECK_STR(resolve("", 1, &ret), PCIE1);
	CHECK_STR(resolve(PCIE1, 0, &ret), PCIE1);
	CHECK_STR(resolve("/sys/bus/event_source/devices/" PCIE1, 0, &ret), PCIE1);
	CHECK_STR(resolve("/sys/bus/event_source/devices/" PCIE1 "/", 0, &ret), PCIE1);
	CHECK_STR(resolve("0x3fff00100000", 0, &ret), PCIE1);
	CHECK_STR(resolve("1", 0, &ret), PCIE1);
	CHECK_STR(resolve("/dev/nfb1", 0, &ret), PCIE1);
	CHECK_STR(resolve("/dev/nfb/0", 7, &ret), PCIE0);
	resolve(NULL, 2, &ret);
	CHECK_EQ(ret, -ENOENT);
	CHECK(strstr(hwtel_last_error(), "instance 2 does not exist: 2 ndk_pcie_tlm_* PMU(s) found") != NULL);
	resolve("ndk_pcie_tlm_dead", 0, &ret);
	CHECK_EQ(ret, -ENOENT);
	CHECK(strstr(hwtel_last_error(), "modprobe ndk_pcie_tlm") != NULL);
	resolve("0x1234", 0, &ret);
	CHECK_EQ(ret, -ENOENT);
	resolve("/dev/nfb", 0, &ret);
	CHECK_EQ(ret, -EINVAL);
	hwtel_set_sysfs_root("fixtures/none");
	resolve(NULL, 0, &ret);
	CHECK(ret == -ENOENT);
	hwtel_set_sysfs_root(NULL);
}

TEST(pcie_layout_from_caps)
{
	struct hwtel_pcie *h = NULL;
	const struct hwtel_pcie_config *c;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pcie_open(NULL, 0, HWTEL_OPEN_NO_PERF | HWTEL_OPEN_NO_NETLINK, &h), 0);
	if (h) {
		c = hwtel_pcie_config(h);
		CHECK_STR(hwtel_pcie_name(h), PCIE0);
		CHECK_EQ(c->pcie_endpoints, 1);
		CHECK_EQ(c->counters_per_ep, 52);
		CHECK_EQ(c->regions[HWTEL_BUS_UP], 2);
		CHECK_EQ(c->region_bytes[HWTEL_BUS_RQ], 32);
		CHECK_EQ(c->brake_channels, 14);
		hwtel_pcie_close(h);
	}
	h = NULL;
	CHECK_EQ(hwtel_pcie_open("1", 0, HWTEL_OPEN_NO_PERF | HWTEL_OPEN_NO_NETLINK, &h), 0);
	if (h) {
		c = hwtel_pcie_config(h);
		CHECK_EQ(c->pcie_endpoints, 2);
		CHECK_EQ(c->dma_ports, 2);
		CHECK_EQ(c->regions[HWTEL_BUS_DOWN], 3);
		hwtel_pcie_close(h);
	}
	hwtel_set_sysfs_root(NULL);
}

/*
 * A handle's readings have its block's layout; a reading of another
 * block's is refused before anything is read or written.
 */
TEST(pcie_read_refuses_other_layout)
{
	struct hwtel_pcie *h0 = NULL, *h1 = NULL;
	struct hwtel_pcie_data *a = NULL, *b = NULL;

	hwtel_set_sysfs_root(FIX);
	CHECK_EQ(hwtel_pcie_open(PCIE0, 0, HWTEL_OPEN_NO_PERF | HWTEL_OPEN_NO_NETLINK, &h0), 0);
	CHECK_EQ(hwtel_pcie_open(PCIE1, 0, HWTEL_OPEN_NO_PERF | HWTEL_OPEN_NO_NETLINK, &h1), 0);
	if (h0 && h1) {
		a = hwtel_pcie_data_new(h0);
		b = hwtel_pcie_data_new(h1);
		CHECK(a && b);
	}
	if (a && b) {
		CHECK_STR(a->pmu, PCIE0);
		CHECK_EQ(a->nendpoints, 1);
		CHECK_EQ(b->nendpoints, 2);
		CHECK_EQ(b->endpoints[1].nbuses, 6);
		CHECK_EQ(b->endpoints[1].buses[5].nregions, 3);
		CHECK_EQ(hwtel_pcie_read(h0, b), -EINVAL);
		CHECK_STR(hwtel_last_error(),
			  "hwtel_pcie_read: readings of different layouts (or not allocated by hwtel_pcie_data_new())");
		CHECK_EQ(b->nendpoints, 2);
		/* its own layout gets as far as the missing perf events */
		CHECK_EQ(hwtel_pcie_read(h0, a), -EINVAL);
		CHECK(strstr(hwtel_last_error(), "opened without perf events") != NULL);
		CHECK_EQ(hwtel_pcie_data_copy(a, b), -EINVAL);
	}
	hwtel_pcie_data_free(a);
	hwtel_pcie_data_free(b);
	hwtel_pcie_close(h0);
	hwtel_pcie_close(h1);
	hwtel_set_sysfs_root(NULL);
}

TEST(write_atomic)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", path[64], *back;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	CHECK_EQ(hwtel_write_atomic(path, "a 1\n", 4), 0);
	CHECK_EQ(hwtel_write_atomic(path, "b 2\n", 4), 0);
	back = unit_slurp(path, NULL);
	CHECK_STR(back, "b 2\n");
	free(back);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);	/* no temp file left behind */
	CHECK_EQ(hwtel_write_atomic("/nonexistent-dir/x.prom", "x", 1), -ENOENT);
}

/*
 * A target that is not a regular file is written in place, never replaced
 * (issue 22): a FIFO stays a FIFO and its reader gets the text.
 */
/*
 * hwtel_write_atomic(@target, @text) while a child reads the FIFO @fifo
 * (@target names it, perhaps through a link): the FIFO stays one and its
 * reader gets @text.
 */
static void write_atomic_to_fifo(const char *target, const char *fifo, const char *text)
{
	char got[16] = "";
	struct stat st;
	int pfd[2], status = 0;
	ssize_t n;
	pid_t pid;

	CHECK_EQ(pipe(pfd), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(fifo, O_RDONLY);
		char b[16];
		ssize_t r = fd < 0 ? -1 : read(fd, b, sizeof(b));

		if (r > 0 && write(pfd[1], b, (size_t)r) != r)
			_exit(2);
		_exit(r > 0 ? 0 : 1);
	}
	close(pfd[1]);
	CHECK_EQ(hwtel_write_atomic(target, text, strlen(text)), 0);
	CHECK_EQ(lstat(fifo, &st), 0);
	CHECK(S_ISFIFO(st.st_mode));
	if (!S_ISFIFO(st.st_mode))
		kill(pid, SIGKILL);	/* replaced: its reader waits on */
	n = read(pfd[0], got, sizeof(got) - 1);
	close(pfd[0]);
	waitpid(pid, &status, 0);
	CHECK_EQ(n, (ssize_t)strlen(text));
	CHECK_STR(got, text);
}

TEST(write_atomic_fifo)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", path[64];

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	write_atomic_to_fifo(path, path, "x 1\n");
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
}

/* A symbolic link stays one: the file it names gets the text. */
TEST(write_atomic_symlink)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", real[64], link[64], *back;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(real, sizeof(real), "%s/real.prom", dir);
	snprintf(link, sizeof(link), "%s/link.prom", dir);
	CHECK_EQ(hwtel_write_atomic(real, "a 1\n", 4), 0);
	CHECK_EQ(symlink("real.prom", link), 0);
	CHECK_EQ(hwtel_write_atomic(link, "b 2\n", 4), 0);
	CHECK_EQ(lstat(link, &st), 0);
	CHECK(S_ISLNK(st.st_mode));
	back = unit_slurp(real, NULL);
	CHECK_STR(back, "b 2\n");
	free(back);
	/* a dangling link is refused, not turned into a file */
	unlink(real);
	CHECK_EQ(hwtel_write_atomic(link, "c 3\n", 4), -ENOENT);
	CHECK_EQ(lstat(real, &st), -1);
	unlink(link);
	CHECK_EQ(rmdir(dir), 0);	/* no temp file left behind */
}

/*
 * A device node is written in place and its error reported: a "full"
 * device (1:7) in a scratch directory, made where mknod is allowed (root,
 * as make check runs), so the test never touches /dev.
 */
TEST(write_atomic_device)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", path[64];
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/full", dir);
	if (mknod(path, S_IFCHR | 0600, makedev(1, 7)) < 0) {
		printf("#   write_atomic_device: mknod: %s (not root): not checked\n",
		       strerror(errno));
		CHECK_EQ(rmdir(dir), 0);
		return;
	}
	CHECK_EQ(hwtel_write_atomic(path, "x 1\n", 4), -ENOSPC);
	CHECK_EQ(lstat(path, &st), 0);
	CHECK(S_ISCHR(st.st_mode));
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
}

/*
 * Through a symbolic link to a FIFO or to a device, and to a "null" device
 * (1:3) made in a scratch directory: written in place, the link and the
 * node stay; a "full" one (1:7) behind a link reports ENOSPC.
 */
TEST(write_atomic_links_to_special_files)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", fifo[64], lfifo[64], null[64], lnull[64],
	     full[64], lfull[64];
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(lfifo, sizeof(lfifo), "%s/fifo.prom", dir);
	snprintf(null, sizeof(null), "%s/null", dir);
	snprintf(lnull, sizeof(lnull), "%s/null.prom", dir);
	snprintf(full, sizeof(full), "%s/full", dir);
	snprintf(lfull, sizeof(lfull), "%s/full.prom", dir);
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(symlink("fifo", lfifo), 0);
	write_atomic_to_fifo(lfifo, fifo, "y 2\n");
	CHECK_EQ(lstat(lfifo, &st), 0);
	CHECK(S_ISLNK(st.st_mode));

	if (mknod(null, S_IFCHR | 0600, makedev(1, 3)) == 0 &&
	    mknod(full, S_IFCHR | 0600, makedev(1, 7)) == 0) {
		CHECK_EQ(symlink("null", lnull), 0);
		CHECK_EQ(symlink("full", lfull), 0);
		CHECK_EQ(hwtel_write_atomic(null, "a 1\n", 4), 0);
		CHECK_EQ(hwtel_write_atomic(lnull, "a 1\n", 4), 0);
		CHECK_EQ(hwtel_write_atomic(lfull, "a 1\n", 4), -ENOSPC);
		CHECK(strstr(hwtel_last_error(), "No space left on device") != NULL);
		CHECK_EQ(lstat(null, &st), 0);
		CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3));
		CHECK_EQ(lstat(full, &st), 0);
		CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7));
		CHECK_EQ(lstat(lnull, &st), 0);
		CHECK(S_ISLNK(st.st_mode));
		CHECK_EQ(lstat(lfull, &st), 0);
		CHECK(S_ISLNK(st.st_mode));
	} else {
		printf("#   write_atomic_links_to_special_files: mknod: %s (not root): devices not checked\n",
		       strerror(errno));
	}
	unlink(lnull);
	unlink(lfull);
	unlink(null);
	unlink(full);
	unlink(lfifo);
	unlink(fifo);
	CHECK_EQ(rmdir(dir), 0);	/* nothing else created */
}

/*
 * A regular file that is replaced keeps its permission bits: a textfile
 * made 0640 for node_exporter's group stays 0640, not the temporary's 0644.
 */
TEST(write_atomic_keeps_mode)
{
	char dir[] = "/tmp/hwtel-unit-XXXXXX", path[64];
	struct stat st;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK_EQ(fchmod(fd, 0640), 0);
	close(fd);
	CHECK_EQ(hwtel_write_atomic(path, "a 1\n", 4), 0);
	CHECK_EQ(stat(path, &st), 0);
	CHECK_EQ(st.st_mode & 07777, 0640);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);
}

/*
 * -o /dev/stdout (also /dev/fd/1, /proc/self/fd/1) names a descriptor the
 * caller opened: the text goes to that descriptor, where it is (appended
 * after "keep" here, the shell's >>), never a new file renamed over the
 * file behind it, which would drop what it held and leave the descriptor
 * on a deleted inode.
 */
TEST(write_atomic_own_descriptor)
{
	static const char *const via[] = { "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1" };
	char dir[] = "/tmp/hwtel-unit-XXXXXX", path[64], *back;
	struct stat before, after;
	unsigned int i;
	int fd, status = -1;
	pid_t pid;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "keep\n", 5), 5);
	CHECK_EQ(fstat(fd, &before), 0);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		dup2(fd, 1);
		for (i = 0; i < 3; i++)
			bad |= hwtel_write_atomic(via[i], "x 1\n", 4) ? 1 << i : 0;
		_exit(bad);
	}
	close(fd);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
	CHECK_EQ(stat(path, &after), 0);
	CHECK(after.st_ino == before.st_ino);	/* the same file, not a new one */
	back = unit_slurp(path, NULL);
	CHECK_STR(back, "keep\nx 1\nx 1\nx 1\n");
	free(back);
	unlink(path);
	CHECK_EQ(rmdir(dir), 0);	/* no temporary file left behind */
}

/*
 * hwtel_last_error() explains the last failure, never an older one: a call
 * that fails with only an errno leaves "", so the caller falls back on
 * strerror() instead of printing an earlier call's text.
 */
TEST(last_error_not_stale)
{
	struct hwtel_pmu pmu;
	char buf[16];

	CHECK_EQ(hwtel_pmu_load("bad/name", &pmu), -EINVAL);
	CHECK_STR(hwtel_last_error(), "bad PMU name 'bad/name'");
	memset(&pmu, 0, sizeof(pmu));
	snprintf(pmu.path, sizeof(pmu.path), "/nonexistent-hwtel-pmu");
	CHECK_EQ(hwtel_pmu_read_attr(&pmu, "type", buf, sizeof(buf)), -ENOENT);
	CHECK_STR(hwtel_last_error(), "");
	CHECK_EQ(hwtel_write_atomic("/nonexistent-dir/x.prom", "x", 1), -ENOENT);
	CHECK_STR(hwtel_last_error(), "cannot write /nonexistent-dir/x.prom: No such file or directory");
	CHECK_EQ(hwtel_format_parse("k", "config:0-7", &(struct hwtel_format){ 0 }), 0);
	CHECK_STR(hwtel_last_error(), "");
}

/*
 * $HWTEL_SYSFS. The test runs a copy of this binary, which prints the root
 * and exits from the constructor below before any test runs.
 */
__attribute__((constructor)) static void sysfs_root_child(void)
{
	if (!getenv("HWTEL_UNIT_PRINT_SYSFS"))
		return;
	printf("%s\n", hwtel_sysfs_root());
	fflush(stdout);
	_exit(0);
}

/* hwtel_sysfs_root() as @exe prints it with HWTEL_SYSFS=@root */
static bool child_root(const char *exe, const char *root, char *out, size_t size)
{
	char cmd[512];
	FILE *p;
	bool ok;

	snprintf(cmd, sizeof(cmd), "ASAN_OPTIONS=detect_leaks=0 HWTEL_UNIT_PRINT_SYSFS=1 "
		 "HWTEL_SYSFS=%s %s", root, exe);
	p = popen(cmd, "r");
	if (!p)
		return false;
	ok = fgets(out, (int)size, p) != NULL;
	ok = pclose(p) == 0 && ok;
	out[strcspn(out, "\n")] = '\0';
	return ok;
}

/*
 * An ordinary process is pointed at another tree by HWTEL_SYSFS; a setgid
 * one (AT_SECURE, as setuid, setgid and file capabilities make it) is not.
 * The setgid half needs a group other than our real one to give the copy:
 * root has any, others one of their supplementary groups; without one it
 * is skipped, and says so.
 */
TEST(sysfs_env_root)
{
	char dir[] = "/tmp/hwtel-unit-sgid.XXXXXX", self[32], exe[64], cmd[200], out[256];
	gid_t groups[64], gid = (gid_t)-1;
	int n, i;

	/* (a shell's /proc/self would be its own) */
	snprintf(self, sizeof(self), "/proc/%d/exe", (int)getpid());
	CHECK(child_root(self, "/tmp/hwtel-unit-sysfs", out, sizeof(out)));
	CHECK_STR(out, "/tmp/hwtel-unit-sysfs");
	CHECK(child_root(self, "\"\"", out, sizeof(out)));
	CHECK_STR(out, "/sys");

	if (geteuid() == 0) {
		gid = getgid() == 65534 ? 65533 : 65534;
	} else {
		n = getgroups(64, groups);
		for (i = 0; i < n; i++)
			if (groups[i] != getgid())
				gid = groups[i];
	}
	if (gid == (gid_t)-1) {
		printf("#   skipped the setgid half: no group other than the real one\n");
		return;
	}
	CHECK(mkdtemp(dir) != NULL);
	snprintf(exe, sizeof(exe), "%s/unit-tests", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", self, exe);
	CHECK_EQ(system(cmd), 0);
	CHECK_EQ(chown(exe, (uid_t)-1, gid), 0);
	CHECK_EQ(chmod(exe, 02755), 0);
	CHECK(child_root(exe, "/tmp/hwtel-unit-sysfs", out, sizeof(out)));
	CHECK_STR(out, "/sys");
	unlink(exe);
	rmdir(dir);
}

/* A file longer than the buffer is an error, never a silently cut value. */
TEST(read_file_too_long)
{
	char path[] = "/tmp/hwtel-unit-readXXXXXX", buf[8];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "0-1,3\n", 6), 6);
	CHECK_EQ(hwtel_read_file(path, buf, sizeof(buf)), 5);
	CHECK_STR(buf, "0-1,3");
	/* seven bytes fill the buffer exactly: still whole */
	CHECK_EQ(ftruncate(fd, 0), 0);
	CHECK_EQ(pwrite(fd, "0-1,3,5", 7, 0), 7);
	CHECK_EQ(hwtel_read_file(path, buf, sizeof(buf)), 7);
	CHECK_STR(buf, "0-1,3,5");
	/* eight do not fit */
	CHECK_EQ(pwrite(fd, "0-1,3,57", 8, 0), 8);
	CHECK_EQ(hwtel_read_file(path, buf, sizeof(buf)), -EFBIG);
	CHECK_STR(buf, "");	/* no cut value left behind */
	close(fd);
	unlink(path);
}

/* The last error may be an argument of the next one: it wraps it whole. */
TEST(error_wraps_last_error)
{
	hwtel_err(-EIO, "reading %s: %s", "flags", "Input/output error");
	CHECK_EQ(hwtel_err(-ENODEV, "PCIe telemetry %s vanished: %s", "ndk_pcie_tlm_0",
			   hwtel_last_error()), -ENODEV);
	CHECK_STR(hwtel_last_error(),
		  "PCIe telemetry ndk_pcie_tlm_0 vanished: reading flags: Input/output error");
	hwtel_clear_error();
}
