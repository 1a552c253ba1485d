// SPDX-License-Identifier: GPL-2.0
/*
 * NDK card FDT parsing (libhwtel nfb.c) on blobs built here with libfdt's
 * sequential-write API: the telemetry nodes, their MI bus resource
 * "PCI<i>,BAR<b>" and their reg, read with the MI bus' #address-cells and
 * #size-cells (1 or 2 each).
 */
#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>
#include <libhwtel/nfb.h>

#include "cli.h"
#include "unit.h"

#define TLM "cesnet,ofm,pcie_telemetry_mi"
#define MI "netcope,bus,mi"

static char blob[8192];

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* a node @name with compatible @compat and reg of @cells 32-bit cells */
static void node(const char *name, const char *compat, const uint32_t *cells, int ncells)
{
	uint8_t reg[32];
	int i;

	fdt_begin_node(blob, name);
	fdt_property_string(blob, "compatible", compat);
	for (i = 0; i < ncells; i++)
		be32(reg + 4 * i, cells[i]);
	if (ncells)
		fdt_property(blob, "reg", reg, 4 * ncells);
	fdt_end_node(blob);
}

static void begin(void)
{
	CHECK_EQ(fdt_create(blob, sizeof(blob)), 0);
	fdt_finish_reservemap(blob);
	fdt_begin_node(blob, "");
	fdt_begin_node(blob, "firmware");
}

static void bus(const char *name, const char *compat, const char *resource)
{
	fdt_begin_node(blob, name);
	fdt_property_string(blob, "compatible", compat);
	if (resource)
		fdt_property_string(blob, "resource", resource);
}

/* the open bus node's #address-cells and #size-cells; < 0: no property */
static void cells(int ac, int sc)
{
	if (ac >= 0)
		fdt_property_u32(blob, "#address-cells", (uint32_t)ac);
	if (sc >= 0)
		fdt_property_u32(blob, "#size-cells", (uint32_t)sc);
}

static void finish(void)
{
	fdt_end_node(blob);	/* firmware */
	fdt_end_node(blob);	/* / */
	CHECK_EQ(fdt_finish(blob), 0);
}

TEST(nfb_fdt_reg_forms)
{
	static const uint32_t r8[] = { 0x20000, 0x10000 };
	static const uint32_t r12[] = { 0x1, 0x4000, 0x2000 };
	static const uint32_t r16[] = { 0x2, 0x0, 0x1, 0x0 };
	struct hwtel_nfb_node n[4];

	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(1, 1);
	node("pcie_telemetry@20000", TLM, r8, 2);
	node("other@0", "cesnet,ofm,mi_test_space", r8, 2);
	fdt_end_node(blob);
	bus("mi_bus1", MI, "PCI1,BAR2");
	cells(2, 1);
	node("pcie_telemetry@100004000", TLM, r12, 3);
	fdt_end_node(blob);
	bus("mi_bus2", MI, "PCI1,BAR2");
	cells(2, 2);
	node("pcie_telemetry@200000000", TLM, r16, 4);
	fdt_end_node(blob);
	finish();

	CHECK_EQ(hwtel_nfb_find(blob, n, 4), 3);
	CHECK_STR(n[0].path, "/firmware/mi_bus0/pcie_telemetry@20000");
	CHECK_EQ(n[0].pci, 0);
	CHECK_EQ(n[0].bar, 0);
	CHECK_U64(n[0].offset, 0x20000);
	CHECK_U64(n[0].size, 0x10000);
	CHECK_EQ(n[1].pci, 1);
	CHECK_EQ(n[1].bar, 2);
	CHECK_U64(n[1].offset, 0x100004000ull);
	CHECK_U64(n[1].size, 0x2000);
	CHECK_U64(n[2].offset, 0x200000000ull);
	CHECK_U64(n[2].size, 0x100000000ull);
	/* more nodes than room: counted, not written */
	CHECK_EQ(hwtel_nfb_find(blob, n, 1), 3);
}

/* one telemetry node under /firmware/mi_bus0 of cells @ac + @sc (< 0: none) */
static int one(int ac, int sc, const uint32_t *reg, int nreg, struct hwtel_nfb_node *n)
{
	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(ac, sc);
	node("pcie_telemetry@0", TLM, reg, nreg);
	fdt_end_node(blob);
	finish();
	return hwtel_nfb_find(blob, n, 1);
}

#define TLM0 "/firmware/mi_bus0/pcie_telemetry@0: "

/*
 * reg is read with the parent MI bus' #address-cells and #size-cells (the
 * NDK firmware declares <1> and <1>), never guessed from its length.
 */
TEST(nfb_fdt_parent_cells)
{
	static const uint32_t r8[] = { 0x20000, 0x10000 };
	static const uint32_t r12[] = { 0x8000, 0x0, 0x10000 };
	static const uint32_t r16[] = { 0x0, 0x40000, 0x0, 0x10000 };
	static const uint32_t r4[] = { 0x20000 };
	static const uint32_t end_max[] = { 0xffffffff, 0xffff0000, 0x0, 0xffff };
	static const uint32_t end_2_64[] = { 0xffffffff, 0xffff0000, 0x0, 0x10000 };
	static const uint32_t wrap[] = { 0xffffffff, 0xffff0000, 0x1, 0x0 };
	struct hwtel_nfb_node n[4];

	/* the same 12 bytes under 2 + 1 and 1 + 2 cells; 1 + 1; 2 + 2 */
	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(2, 1);
	node("pcie_telemetry@800000000000", TLM, r12, 3);
	fdt_end_node(blob);
	bus("mi_bus1", MI, "PCI0,BAR2");
	cells(1, 2);
	node("pcie_telemetry@8000", TLM, r12, 3);
	fdt_end_node(blob);
	bus("mi_bus2", MI, "PCI1,BAR0");
	cells(1, 1);
	node("pcie_telemetry@20000", TLM, r8, 2);
	fdt_end_node(blob);
	bus("mi_bus3", MI, "PCI1,BAR4");
	cells(2, 2);
	node("pcie_telemetry@40000", TLM, r16, 4);
	fdt_end_node(blob);
	finish();
	CHECK_EQ(hwtel_nfb_find(blob, n, 4), 4);
	CHECK_STR(hwtel_last_error(), "");
	CHECK_U64(n[0].offset, 0x800000000000ull);
	CHECK_U64(n[0].size, 0x10000);
	CHECK_U64(n[1].offset, 0x8000);
	CHECK_U64(n[1].size, 0x10000);
	CHECK_U64(n[2].offset, 0x20000);
	CHECK_U64(n[2].size, 0x10000);
	CHECK_U64(n[3].offset, 0x40000);
	CHECK_U64(n[3].size, 0x10000);

	/* no cells on the bus: libfdt's (and the DT spec's) defaults 2 and 1 */
	CHECK_EQ(one(-1, -1, r12, 3, n), 1);
	CHECK_U64(n[0].offset, 0x800000000000ull);
	CHECK_U64(n[0].size, 0x10000);
	CHECK_EQ(one(-1, -1, r8, 2, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg is 8 bytes, but one <offset size> is 12 under "
		  "/firmware/mi_bus0 (#address-cells absent: 2, #size-cells absent: 1)");
	CHECK_EQ(one(1, -1, r8, 2, n), 1);
	CHECK_U64(n[0].offset, 0x20000);

	/* 16 bytes under 1 + 1: two <offset size> entries, refused */
	CHECK_EQ(one(1, 1, r16, 4, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg holds 2 <offset size> entries under "
		  "/firmware/mi_bus0 (#address-cells = <1>, #size-cells = <1>); "
		  "a telemetry block has one window");
	/* 8 and 12 bytes under 2 + 2, 4 under 1 + 1 */
	CHECK_EQ(one(2, 2, r8, 2, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg is 8 bytes, but one <offset size> is 16 under "
		  "/firmware/mi_bus0 (#address-cells = <2>, #size-cells = <2>)");
	CHECK_EQ(one(2, 2, r12, 3, n), -EINVAL);
	CHECK_EQ(one(1, 1, r4, 1, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg is 4 bytes, but one <offset size> is 8 under "
		  "/firmware/mi_bus0 (#address-cells = <1>, #size-cells = <1>)");
	CHECK_EQ(one(1, 1, r4, 0, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "no reg; one <offset size> is 8 bytes under "
		  "/firmware/mi_bus0 (#address-cells = <1>, #size-cells = <1>)");

	/* cells other than 1 or 2 */
	CHECK_EQ(one(3, 1, r16, 4, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "the MI bus /firmware/mi_bus0 has #address-cells = <3>, "
		  "#size-cells = <1>; an offset and a size take 1 or 2 cells each");
	CHECK_EQ(one(1, 0, r4, 1, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "the MI bus /firmware/mi_bus0 has #address-cells = <1>, "
		  "#size-cells = <0>; an offset and a size take 1 or 2 cells each");
	/* past FDT_MAX_NCELLS: libfdt refuses the property itself */
	CHECK_EQ(one(1, 5, r4, 1, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "the MI bus /firmware/mi_bus0 has an invalid "
		  "#address-cells or #size-cells (FDT_ERR_BADNCELLS)");

	/* the end, offset + size, must fit in 64 bits: 2^64 - 1 does, 2^64 does not */
	CHECK_EQ(one(2, 2, end_max, 4, n), 1);
	CHECK_U64(n[0].offset, 0xffffffffffff0000ull);
	CHECK_U64(n[0].size, 0xffff);
	CHECK_EQ(one(2, 2, end_2_64, 4, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg offset 0xffffffffffff0000 + size 0x10000 "
		  "does not fit in 64 bits");
	CHECK_EQ(one(2, 2, wrap, 4, n), -EINVAL);
	CHECK_STR(hwtel_last_error(), TLM0 "reg offset 0xffffffffffff0000 + size 0x100000000 "
		  "does not fit in 64 bits");
}

TEST(nfb_fdt_refusals)
{
	static const uint32_t r8[] = { 0x20000, 0x10000 };
	struct hwtel_nfb_node n[2];
	const char *bad_res[] = { "PCI0,BAR6", "PCI0,BARx", "PCI0", "PCI0,BAR0 ", "pci0,bar0" };
	unsigned int i;

	/* parent is not an MI bus */
	begin();
	bus("dma", "netcope,dma", "PCI0,BAR0");
	node("pcie_telemetry@20000", TLM, r8, 2);
	fdt_end_node(blob);
	finish();
	CHECK_EQ(hwtel_nfb_find(blob, n, 2), -EINVAL);
	CHECK(strstr(hwtel_last_error(), "parent is not a netcope,bus,mi node") != NULL);

	for (i = 0; i < sizeof(bad_res) / sizeof(bad_res[0]); i++) {
		begin();
		bus("mi_bus0", MI, bad_res[i]);
		node("pcie_telemetry@20000", TLM, r8, 2);
		fdt_end_node(blob);
		finish();
		CHECK_EQ(hwtel_nfb_find(blob, n, 2), -EINVAL);
		CHECK(strstr(hwtel_last_error(), "resource \"PCI<i>,BAR<b>\"") != NULL);
	}

	/* a bad reg: nfb_fdt_parent_cells */

	/* no telemetry node at all */
	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	fdt_end_node(blob);
	finish();
	CHECK_EQ(hwtel_nfb_find(blob, n, 2), 0);
	CHECK_EQ(hwtel_nfb_find("not a device tree", n, 2), -EINVAL);
}

TEST(nfb_read_fdt_file)
{
	static const uint32_t r8[] = { 0x8000, 0x1000 };
	char path[] = "/tmp/hwtel-nfb-XXXXXX";
	struct hwtel_nfb_node n[1];
	void *fdt;
	size_t len;
	int fd;

	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(1, 1);
	node("pcie_telemetry@8000", TLM, r8, 2);
	fdt_end_node(blob);
	finish();
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, blob, fdt_totalsize(blob)), (long long)fdt_totalsize(blob));
	close(fd);
	CHECK_EQ(hwtel_nfb_read_fdt(path, &fdt, &len), 0);
	CHECK_EQ(len, fdt_totalsize(blob));
	CHECK_EQ(hwtel_nfb_find(fdt, n, 1), 1);
	CHECK_U64(n[0].offset, 0x8000);
	free(fdt);

	/* a truncated blob is refused */
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK_EQ(write(fd, blob, 100), 100);
	close(fd);
	CHECK_EQ(hwtel_nfb_read_fdt(path, &fdt, &len), -EINVAL);
	CHECK(fdt == NULL);
	CHECK(strstr(hwtel_last_error(), "no valid flattened device tree") != NULL);
	unlink(path);
	CHECK_EQ(hwtel_nfb_read_fdt("/nonexistent/nfb", &fdt, &len), -ENOENT);
}

TEST(nfb_pmu_name)
{
	char name[128];

	CHECK_EQ(hwtel_nfb_pmu_name("0000:03:00.0", 0, 0x20000, name, sizeof(name)), 0);
	CHECK_STR(name, "ndk_pcie_tlm_0000_03_00_0_bar0_20000");
	CHECK_EQ(hwtel_nfb_pmu_name("10000:e1:1f.7", 5, 0x100000000ull, name, sizeof(name)), 0);
	CHECK_STR(name, "ndk_pcie_tlm_10000_e1_1f_7_bar5_100000000");
	CHECK_EQ(hwtel_nfb_pmu_name("0000:03:20.0", 0, 0, name, sizeof(name)), -EINVAL);
	CHECK_EQ(hwtel_nfb_pmu_name("0000:03:00.0x", 0, 0, name, sizeof(name)), -EINVAL);
	CHECK_EQ(hwtel_nfb_pmu_name("03:00.0", 0, 0, name, sizeof(name)), -EINVAL);
	/* a regular file is no card */
	CHECK_EQ(hwtel_nfb_card_pci("/etc/hostname", name, sizeof(name)), -EINVAL);
}

/* a card FDT of two nodes (PCI0 and PCI1) in a temporary file */
static void card_file(char *path)
{
	static const uint32_t r8[] = { 0x20000, 0x10000 };
	static const uint32_t r16[] = { 0x0, 0x8000, 0x0, 0x4000 };
	int fd;

	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(1, 1);
	node("pcie_telemetry@20000", TLM, r8, 2);
	fdt_end_node(blob);
	bus("mi_bus1", MI, "PCI1,BAR2");
	cells(2, 2);
	node("pcie_telemetry@8000", TLM, r16, 4);
	fdt_end_node(blob);
	finish();
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, blob, fdt_totalsize(blob)), (long long)fdt_totalsize(blob));
	close(fd);
}

static char out[4096], err[4096];

/* hwtel ARGS... in a child: exit status, stdout in out, stderr in err */
static int run(const char *sysroot, const char *const *args)
{
	int po[2], pe[2], st, argc = 0;
	ssize_t n;
	size_t o = 0, e = 0;
	pid_t pid;

	fflush(stdout);
	if (pipe(po) || pipe(pe))
		return -1;
	pid = fork();
	if (pid == 0) {
		char *argv[32];

		dup2(po[1], 1);
		dup2(pe[1], 2);
		while (args[argc])
			argv[argc] = (char *)args[argc], argc++;
		argv[argc] = NULL;
		hwtel_set_sysfs_root(sysroot);
		st = hwtel_main(argc, argv);
		fflush(stdout);
		_exit(st);
	}
	close(po[1]);
	close(pe[1]);
	while (o < sizeof(out) - 1 && (n = read(po[0], out + o, sizeof(out) - 1 - o)) > 0)
		o += (size_t)n;
	out[o] = '\0';
	while (e < sizeof(err) - 1 && (n = read(pe[0], err + e, sizeof(err) - 1 - e)) > 0)
		e += (size_t)n;
	err[e] = '\0';
	close(po[0]);
	close(pe[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define A(...) ((const char *const[]){ "hwtel", "nfb", __VA_ARGS__, NULL })

TEST(nfb_cli)
{
	char path[] = "/tmp/hwtel-nfb-XXXXXX";

	card_file(path);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "--pci", "0000:03:00.0")), 0);
	CHECK_STR(out, "0 /firmware/mi_bus0/pcie_telemetry@20000 PCI0,BAR0 0x20000 0x10000 "
		       "0000:03:00.0 ndk_pcie_tlm_0000_03_00_0_bar0_20000 -\n"
		       "1 /firmware/mi_bus1/pcie_telemetry@8000 PCI1,BAR2 0x8000 0x4000 - - -\n");
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "--pci", "0000:03:00.0",
					"--pci", "1=0000:04:00.0", "-i", "1")), 0);
	CHECK_STR(out, "1 /firmware/mi_bus1/pcie_telemetry@8000 PCI1,BAR2 0x8000 0x4000 "
		       "0000:04:00.0 ndk_pcie_tlm_0000_04_00_0_bar2_8000 -\n");
	/* attach needs to know PCI1: refused before any request */
	CHECK_EQ(run("fixtures/none", A("attach", "--fdt", path, "--pci", "0000:03:00.0",
					"-i", "1")), HWTEL_EXIT_USAGE);
	CHECK(strstr(err, "PCI1 is not known: give --pci 1=DOMAIN:BUS:DEV.FN") != NULL);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "-i", "2")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(err, "no telemetry node 2") != NULL);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "--pci", "0000:03:00")),
		 HWTEL_EXIT_USAGE);
	CHECK(strstr(err, "'0000:03:00' is not DOMAIN:BUS:DEV.FN") != NULL);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "--pci", "16=0000:03:00.0")),
		 HWTEL_EXIT_USAGE);
	CHECK_EQ(run("fixtures/none", A("frob")), HWTEL_EXIT_USAGE);
	CHECK(strstr(err, "unknown nfb command 'frob'") != NULL);
	CHECK_EQ(run("fixtures/none", A("list", "--bogus")), HWTEL_EXIT_USAGE);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", "/nonexistent/fdt")), HWTEL_EXIT_NOPMU);
	CHECK(strstr(err, "cannot open /nonexistent/fdt") != NULL);
	CHECK_EQ(run("fixtures/none", A("--help")), 0);
	CHECK(strstr(out, "usage: hwtel nfb list|attach|detach") != NULL);
	unlink(path);
}

/* a reg that does not match its bus' cells: exit 1, the node and cells named */
TEST(nfb_cli_bad_reg)
{
	static const uint32_t r16[] = { 0x0, 0x8000, 0x0, 0x4000 };
	char path[] = "/tmp/hwtel-nfb-XXXXXX";
	int fd;

	begin();
	bus("mi_bus0", MI, "PCI0,BAR0");
	cells(1, 1);
	node("pcie_telemetry@8000", TLM, r16, 4);
	fdt_end_node(blob);
	finish();
	fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, blob, fdt_totalsize(blob)), (long long)fdt_totalsize(blob));
	close(fd);
	CHECK_EQ(run("fixtures/none", A("list", "--fdt", path, "--pci", "0000:03:00.0")),
		 HWTEL_EXIT_FAIL);
	CHECK_STR(out, "");
	CHECK_STR(err, "hwtel nfb: error: /firmware/mi_bus0/pcie_telemetry@8000: reg holds 2 "
		       "<offset size> entries under /firmware/mi_bus0 (#address-cells = <1>, "
		       "#size-cells = <1>); a telemetry block has one window\n");
	unlink(path);
}

/* /dev/null (1:3) with a fake sysfs parent: the card's PCI function */
TEST(nfb_card_pci)
{
	char root[] = "/tmp/hwtel-sys-XXXXXX", dir[300], lnk[320], addr[64];

	CHECK(mkdtemp(root) != NULL);
	snprintf(dir, sizeof(dir), "%s/dev", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/dev/char", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/dev/char/1:3", root);
	mkdir(dir, 0755);
	snprintf(lnk, sizeof(lnk), "%s/device", dir);
	CHECK_EQ(symlink("../../../devices/pci0000:00/0000:00:01.0/0000:03:00.0", lnk), 0);
	hwtel_set_sysfs_root(root);
	CHECK_EQ(hwtel_nfb_card_pci("/dev/null", addr, sizeof(addr)), 0);
	CHECK_STR(addr, "0000:03:00.0");
	unlink(lnk);
	CHECK_EQ(symlink("../../../devices/virtual/misc/null", lnk), 0);
	CHECK_EQ(hwtel_nfb_card_pci("/dev/null", addr, sizeof(addr)), -ENODEV);
	CHECK(strstr(hwtel_last_error(), "is not a PCI function") != NULL);
	unlink(lnk);
	CHECK_EQ(hwtel_nfb_card_pci("/dev/null", addr, sizeof(addr)), -ENODEV);
	hwtel_set_sysfs_root(NULL);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/dev/char", root);
	rmdir(dir);
	snprintf(dir, sizeof(dir), "%s/dev", root);
	rmdir(dir);
	rmdir(root);
}
