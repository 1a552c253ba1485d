// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * NDK card support: the card FDT (libfdt), its PCIE_TELEMETRY_MI nodes,
 * their PCI function, BAR and window, and the driver's ATTACH/DETACH.
 */
#include <errno.h>
#include <fcntl.h>
#include <libfdt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <libhwtel/nfb.h>

#include "internal.h"

#define TLM_COMPAT	"cesnet,ofm,pcie_telemetry_mi"
#define MI_BUS_COMPAT	"netcope,bus,mi"

int hwtel_nfb_read_fdt(const char *path, void **blob, size_t *len)
{
	char *buf;
	size_t n = 0;
	int fd, ret;

	hwtel_clear_error();
	*blob = NULL;
	*len = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return hwtel_err(-errno, "cannot open %s: %s", path, strerror(errno));
	buf = malloc(HWTEL_NFB_FDT_MAX);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	/* /dev/nfbN gives the whole FDT to one read(); a file may need more */
	while (n < HWTEL_NFB_FDT_MAX) {
		ssize_t r = read(fd, buf + n, HWTEL_NFB_FDT_MAX - n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			ret = hwtel_err(-errno, "cannot read %s: %s", path, strerror(errno));
			goto fail;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	fd = -1;
	if (n < sizeof(struct fdt_header) || fdt_check_header(buf) ||
	    fdt_totalsize(buf) > n) {
		ret = hwtel_err(-EINVAL, "%s holds no valid flattened device tree (%zu bytes read)",
				path, n);
		goto fail;
	}
	*blob = buf;
	*len = n;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
}

static uint64_t be_cells(const uint8_t *p, int cells)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 4 * cells; i++)
		v = v << 8 | p[i];
	return v;
}

/* "#address-cells = <1>", or "#address-cells absent: 2" (libfdt's default) */
static void cell_text(const void *fdt, int parent, const char *name, int n,
		      char *buf, size_t size)
{
	if (fdt_getprop(fdt, parent, name, NULL))
		snprintf(buf, size, "%s = <%d>", name, n);
	else
		snprintf(buf, size, "%s absent: %d", name, n);
}

/*
 * reg of telemetry node @node (@path) under the MI bus @parent: one
 * <offset size> entry of the parent's #address-cells and #size-cells cells
 * (libfdt's defaults 2 and 1 where the bus has none; the NDK firmware
 * declares 1 and 1). Each is 1 or 2 cells. A reg of several entries is
 * refused, not cut to its first: a telemetry block has one window, and a
 * 2 + 2 cell reg under a 1 + 1 cell bus would otherwise read as a wrong
 * window. The end, offset + size, fits in 64 bits.
 */
static int parse_reg(const void *fdt, int node, int parent, const char *path,
		     uint64_t *off, uint64_t *size)
{
	char bus[256], a[40], z[40], cells[96];
	const void *reg;
	int ac, sc, len, entry;

	if (fdt_get_path(fdt, parent, bus, sizeof(bus)) < 0)
		snprintf(bus, sizeof(bus), "?");
	ac = fdt_address_cells(fdt, parent);
	sc = fdt_size_cells(fdt, parent);
	if (ac < 0 || sc < 0)
		return hwtel_err(-EINVAL, "%s: the MI bus %s has an invalid #address-cells or #size-cells (%s)",
				 path, bus, fdt_strerror(ac < 0 ? ac : sc));
	cell_text(fdt, parent, "#address-cells", ac, a, sizeof(a));
	cell_text(fdt, parent, "#size-cells", sc, z, sizeof(z));
	snprintf(cells, sizeof(cells), "%s, %s", a, z);
	if (ac < 1 || ac > 2 || sc < 1 || sc > 2)
		return hwtel_err(-EINVAL, "%s: the MI bus %s has %s; an offset and a size take 1 or 2 cells each",
				 path, bus, cells);
	entry = 4 * (ac + sc);
	reg = fdt_getprop(fdt, node, "reg", &len);
	if (!reg)
		return hwtel_err(-EINVAL, "%s: no reg; one <offset size> is %d bytes under %s (%s)",
				 path, entry, bus, cells);
	if (len > entry && len % entry == 0)
		return hwtel_err(-EINVAL, "%s: reg holds %d <offset size> entries under %s (%s); a telemetry block has one window",
				 path, len / entry, bus, cells);
	if (len != entry)
		return hwtel_err(-EINVAL, "%s: reg is %d bytes, but one <offset size> is %d under %s (%s)",
				 path, len, entry, bus, cells);
	*off = be_cells(reg, ac);
	*size = be_cells((const uint8_t *)reg + 4 * ac, sc);
	if (*size > UINT64_MAX - *off)
		return hwtel_err(-EINVAL, "%s: reg offset 0x%llx + size 0x%llx does not fit in 64 bits",
				 path, (unsigned long long)*off, (unsigned long long)*size);
	return 0;
}

/* resource = "PCI<i>,BAR<b>" */
static int parse_resource(const char *s, int len, unsigned int *pci, unsigned int *bar)
{
	unsigned int i, b;
	int n = -1;

	if (len < 1 || s[len - 1] != '\0')
		return -EINVAL;
	if (sscanf(s, "PCI%u,BAR%u%n", &i, &b, &n) != 2 || n != len - 1 ||
	    i >= HWTEL_NFB_MAX_PCI || b > 5)
		return -EINVAL;
	*pci = i;
	*bar = b;
	return 0;
}

int hwtel_nfb_find(const void *fdt, struct hwtel_nfb_node *out, int max)
{
	int node, parent, len, ret, n = 0;

	hwtel_clear_error();
	if (fdt_check_header(fdt))
		return hwtel_err(-EINVAL, "not a flattened device tree");
	for (node = fdt_node_offset_by_compatible(fdt, -1, TLM_COMPAT); node >= 0;
	     node = fdt_node_offset_by_compatible(fdt, node, TLM_COMPAT)) {
		struct hwtel_nfb_node nd;
		const void *prop;

		memset(&nd, 0, sizeof(nd));
		if (fdt_get_path(fdt, node, nd.path, sizeof(nd.path)) < 0)
			snprintf(nd.path, sizeof(nd.path), "?");
		parent = fdt_parent_offset(fdt, node);
		if (parent < 0 || fdt_node_check_compatible(fdt, parent, MI_BUS_COMPAT))
			return hwtel_err(-EINVAL, "%s: parent is not a %s node", nd.path,
					 MI_BUS_COMPAT);
		prop = fdt_getprop(fdt, parent, "resource", &len);
		if (!prop || parse_resource(prop, len, &nd.pci, &nd.bar))
			return hwtel_err(-EINVAL, "%s: the MI bus has no resource \"PCI<i>,BAR<b>\"",
					 nd.path);
		ret = parse_reg(fdt, node, parent, nd.path, &nd.offset, &nd.size);
		if (ret)
			return ret;
		if (n < max)
			out[n] = nd;
		n++;
	}
	if (node != -FDT_ERR_NOTFOUND)
		return hwtel_err(-EINVAL, "device tree: %s", fdt_strerror(node));
	return n;
}

int hwtel_nfb_card_pci(const char *dev, char *addr, size_t size)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	struct stat st;
	ssize_t n;

	hwtel_clear_error();
	if (stat(dev, &st) < 0)
		return hwtel_err(-errno, "cannot stat %s: %s", dev, strerror(errno));
	if (!S_ISCHR(st.st_mode))
		return hwtel_err(-EINVAL, "%s is not a character device", dev);
	snprintf(link, sizeof(link), "%s/dev/char/%u:%u/device", hwtel_sysfs_root(),
		 major(st.st_rdev), minor(st.st_rdev));
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return hwtel_err(-ENODEV, "%s has no parent device (%s)", dev, link);
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if (hwtel_nfb_pmu_name(base, 0, 0, link, sizeof(link)))
		return hwtel_err(-ENODEV, "%s: parent %s is not a PCI function", dev, target);
	snprintf(addr, size, "%s", base);
	return 0;
}

int hwtel_nfb_pmu_name(const char *pci_addr, unsigned int bar, uint64_t offset,
		       char *name, size_t size)
{
	unsigned int d, b, s, f;

	hwtel_clear_error();
	char canon[32];

	/* exactly as the kernel prints it (pci_name()): 0000:03:00.0 */
	if (sscanf(pci_addr, "%x:%x:%x.%x", &d, &b, &s, &f) != 4 ||
	    b > 0xff || s > 0x1f || f > 7 ||
	    snprintf(canon, sizeof(canon), "%04x:%02x:%02x.%x", d, b, s, f) < 0 ||
	    strcmp(canon, pci_addr))
		return hwtel_err(-EINVAL, "'%s' is not a PCI address DOMAIN:BUS:DEV.FN", pci_addr);
	snprintf(name, size, "ndk_pcie_tlm_%04x_%02x_%02x_%x_bar%u_%llx", d, b, s, f, bar,
		 (unsigned long long)offset);
	return 0;
}

bool hwtel_nfb_attached(const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s", hwtel_sysfs_root(), name);
	return !access(path, F_OK);
}

int hwtel_nfb_attach(const char *pci_addr, unsigned int bar, uint64_t offset,
		     uint64_t size, char *name, size_t name_size)
{
	struct hwtel_nl *nl;
	int ret;

	hwtel_clear_error();
	ret = hwtel_nl_open(&nl);
	if (ret)
		return ret;
	ret = hwtel_nl_attach(nl, pci_addr, bar, offset, size, name, name_size);
	hwtel_nl_close(nl);
	return ret;
}

int hwtel_nfb_detach(const char *name)
{
	struct hwtel_nl *nl;
	int ret;

	hwtel_clear_error();
	ret = hwtel_nl_open(&nl);
	if (ret)
		return ret;
	ret = hwtel_nl_detach(nl, name);
	hwtel_nl_close(nl);
	return ret;
}

int hwtel_nfb_resolve(const char *dev, unsigned int index, char *name, size_t size)
{
	struct hwtel_nfb_node *nodes;
	char pci[64];
	void *fdt;
	size_t len;
	int n, ret;

	hwtel_clear_error();
	ret = hwtel_nfb_read_fdt(dev, &fdt, &len);
	if (ret)
		return ret;
	nodes = calloc(HWTEL_NFB_MAX_NODES, sizeof(*nodes));
	if (!nodes) {
		free(fdt);
		return -ENOMEM;
	}
	n = hwtel_nfb_find(fdt, nodes, HWTEL_NFB_MAX_NODES);
	free(fdt);
	if (n < 0) {
		ret = n;
		goto out;
	}
	if ((int)index >= n || index >= HWTEL_NFB_MAX_NODES) {
		ret = hwtel_err(-ENOENT, "%s: no telemetry node %u (%d in its device tree)",
				dev, index, n);
		goto out;
	}
	if (nodes[index].pci) {
		ret = hwtel_err(-ENOENT, "%s: node %s is on PCI%u, which only 'hwtel nfb attach --pci %u=ADDR' can name; give its PMU name with -d",
				dev, nodes[index].path, nodes[index].pci, nodes[index].pci);
		goto out;
	}
	ret = hwtel_nfb_card_pci(dev, pci, sizeof(pci));
	if (!ret)
		ret = hwtel_nfb_pmu_name(pci, nodes[index].bar, nodes[index].offset, name, size);
out:
	free(nodes);
	return ret;
}
