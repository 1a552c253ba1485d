// SPDX-License-Identifier: GPL-2.0
/*
 * Removal of the device (not the module) while events are open: the
 * platform device is unbound from the driver through sysfs. The driver
 * defers the removal until the last event of the PMU is closed: the
 * unbind write blocks, the open events go on counting exactly, new
 * events are refused with ENODEV; once they are closed the unbind
 * completes and the PMU is gone. Binding again brings it back, counting.
 */
#include "ddr_test.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

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

FIXTURE(rm) {
	char pmu[64];
	char dev[64];
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
	snprintf(self->dev, sizeof(self->dev), "%s-ddr-pmu-sim.0",
		 variant->v->name);
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

/* A child that writes @dev to DRV/@what; exits 0 when the write succeeded */
static pid_t drv_write_async(const char *what, const char *dev)
{
	pid_t pid = fork();

	if (!pid) {
		char path[256];
		int fd;

		/*
		 * Not with the parent's perf events: the unbind would wait for
		 * events that its own writer holds.
		 */
		for (fd = 3; fd < 1024; fd++)
			close(fd);
		snprintf(path, sizeof(path), DRV "/%s", what);
		_exit(ddr_write_file(path, dev) ? 1 : 0);
	}
	return pid;
}

/* Exit status of @pid within @ms milliseconds, -1 if it is still running */
static int wait_ms(pid_t pid, int ms)
{
	int st, t;

	for (t = 0; t <= ms; t += 20) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
		ddr_msleep(20);
	}
	return -1;
}

TEST_F_TIMEOUT(rm, unbind_with_events_open, 180)
{
	int fd, fr, ret;
	pid_t pid;

	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	fr = ddr_open(self->type, DDR_READS, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fr, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 100));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 50));

	pid = drv_write_async("unbind", self->dev);
	ASSERT_GT(pid, 0);
	/* deferred while events are open */
	ret = wait_ms(pid, 1000);
	EXPECT_EQ(-1, ret) TH_LOG("unbind returned %d with events open", ret);
	EXPECT_TRUE(pmu_exists(self->pmu));
	EXPECT_EQ(ENODEV, ddr_open_errno(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL));

	/* the open events still count exactly */
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 7));
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 3));
	EXPECT_EQ(107ULL, ddr_count(fd));
	EXPECT_EQ(53ULL, ddr_count(fr));
	close(fd);
	EXPECT_EQ(-1, wait_ms(pid, 300)) TH_LOG("unbind did not wait for the last event");
	EXPECT_EQ(53ULL, ddr_count(fr));
	close(fr);

	/* the last one closed: the unbind completes */
	ret = ret >= 0 ? ret : wait_ms(pid, 10000);
	EXPECT_EQ(0, ret);
	if (ret < 0) {
		kill(pid, 9);
		waitpid(pid, NULL, 0);
	}
	EXPECT_FALSE(pmu_exists(self->pmu));

	/* bind again: the PMU is back and counts */
	pid = drv_write_async("bind", self->dev);
	ASSERT_GT(pid, 0);
	EXPECT_EQ(0, wait_ms(pid, 10000));
	ASSERT_TRUE(pmu_exists(self->pmu));
	self->type = ddr_pmu_type(self->pmu);
	fd = ddr_open(self->type, CAM_READ, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_cam_read", 11));
	EXPECT_EQ(11ULL, ddr_count(fd));
	close(fd);
}

/* Unbind and bind with nothing open, several times */
TEST_F_TIMEOUT(rm, unbind_bind_idle, 180)
{
	int i, fd;

	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0, wait_ms(drv_write_async("unbind", self->dev), 10000));
		EXPECT_FALSE(pmu_exists(self->pmu));
		EXPECT_EQ(0, wait_ms(drv_write_async("bind", self->dev), 10000));
		ASSERT_TRUE(pmu_exists(self->pmu));
	}
	self->type = ddr_pmu_type(self->pmu);
	fd = ddr_open(self->type, DDR_READS, -1, DDR_OWNER_CPU, -1, NULL);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ddr_inject(self->pmu, "ddr_ddr_reads", 9));
	EXPECT_EQ(9ULL, ddr_count(fd));
	close(fd);
}

TEST_HARNESS_MAIN
