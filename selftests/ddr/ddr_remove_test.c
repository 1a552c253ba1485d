// SPDX-License-Identifier: GPL-2.0
/*
 * Removal of a DDR PMU while events are open cannot happen: the perf core
 * before 6.15 uses a PMU after an event's ->destroy(), so the driver
 * offers no path that could free one under an event.
 *
 * - The driver has no bind/unbind attributes (as upstream cn10k).
 * - The model behind a bound device cannot be unloaded: the driver pins
 *   it from probe to remove, events or not.
 * - The driver cannot be unloaded while an event is open (the perf core's
 *   module reference), and the open event goes on counting exactly.
 *
 * Each refusal is checked with its errno: delete_module() says EWOULDBLOCK
 * for a module in use.
 */
#include "ddr_test.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
/* 300 s a test, not 30: the lab's loaded guests (run_in_vm bounds each program) */
#undef TEST_TIMEOUT_DEFAULT
#define TEST_TIMEOUT_DEFAULT 300
#pragma GCC diagnostic pop

#define CAM_READ	16
#define DDR_READS	101
#define DRV		"/sys/bus/platform/drivers/marvell-cn10k-ddr-pmu"
#define DRIVER		"marvell_cn10k_ddr_pmu"
#define MODEL		"hwtel_sim_ddr"

FIXTURE(rm) {
	char pmu[64];
	int type;
};

FIXTURE_VARIANT(rm) {
	const struct ddr_variant_info *v;
};

FIXTURE_VARIANT_ADD(rm, cn10k) { .v = &ddr_cn10k };
FIXTURE_VARIANT_ADD(rm, odyssey) { .v = &ddr_odyssey };
FIXTURE_VARIANT_ADD(rm, cn20k) { .v = &ddr_cn20k };

FIXTURE_SETUP(rm)
{
	ASSERT_EQ(0, ddr_load(variant->v->name, 1, NULL));
	ddr_pmu_name(self->pmu, sizeof(self->pmu), variant->v, 0);
	self->type = ddr_pmu_type(self->pmu);
	ASSERT_GT(self->type, 0);
	ddr_pin_self(DDR_OWNER_CPU);
}

FIXTURE_TEARDOWN(rm)
{
	ddr_unload();
}

static int pmu_exists(const char *pmu)
{
	char path[256];
	struct stat st;

	snprintf(path, sizeof(path), DDR_DEVS "/%s", pmu);
	return !stat(path, &st);
}

/* 0, or the errno of delete_module(@name) */
static int unload_errno(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) ? errno : 0;
}

static int open_errno(const char *path)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

TEST_F(rm, no_bind_attributes)
{
	EXPECT_EQ(0, access(DRV, F_OK));
	EXPECT_EQ(ENOENT, open_errno(DRV "/unbind"));
	EXPECT_EQ(ENOENT, open_errno(DRV "/bind"));
	EXPECT_TRUE(pmu_exists(self->pmu));
}

TEST_F(rm, model_pinned_while_bound)
{
	int fd;

	/* nothing open: the bound driver alone holds the model */
	EXPECT_EQ(EWOULDBLOCK, unload_errno(MODEL));
	ASSERT_TRUE(pmu_exists(self->pmu));
	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 13));
	EXPECT_EQ(13ULL, ddr_count(fd));
	close(fd);

	/* the driver goes, then the model may */
	EXPECT_EQ(0, unload_errno(DRIVER));
	EXPECT_FALSE(pmu_exists(self->pmu));
	EXPECT_EQ(0, unload_errno(MODEL));
}

TEST_F(rm, unload_with_events_open)
{
	int fd, fr;

	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	fr = ddr_open(self->type, DDR_READS, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fr, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 100));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 50));

	EXPECT_EQ(EWOULDBLOCK, unload_errno(DRIVER));
	EXPECT_EQ(EWOULDBLOCK, unload_errno(MODEL));
	EXPECT_TRUE(pmu_exists(self->pmu));

	/* the open events still count exactly */
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 7));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 3));
	EXPECT_EQ(107ULL, ddr_count(fd));
	EXPECT_EQ(53ULL, ddr_count(fr));
	close(fd);

	/* one is still open: still refused */
	EXPECT_EQ(EWOULDBLOCK, unload_errno(DRIVER));
	EXPECT_EQ(53ULL, ddr_count(fr));
	close(fr);

	/* the last one closed: the close is synchronous, the driver goes */
	EXPECT_EQ(0, unload_errno(DRIVER));
	EXPECT_FALSE(pmu_exists(self->pmu));
	EXPECT_EQ(0, unload_errno(MODEL));
}

TEST_HARNESS_MAIN
