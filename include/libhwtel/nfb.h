/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libhwtel: PCIE_TELEMETRY_MI blocks of an NDK (nfb) card, found in the
 * card's flattened device tree and attached to the ndk_pcie_tlm driver by
 * PCI function, BAR and window (Documentation/admin-guide/perf/
 * ndk-pcie-telemetry.rst, "NDK cards").
 */
#ifndef _LIBHWTEL_NFB_H
#define _LIBHWTEL_NFB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The nfb driver returns at most this much FDT from read() on /dev/nfbN */
#define HWTEL_NFB_FDT_MAX	65536
#define HWTEL_NFB_MAX_NODES	64
#define HWTEL_NFB_MAX_PCI	16

/* One telemetry node of a card FDT, in the order of the FDT */
struct hwtel_nfb_node {
	char path[256];		/* node path in the FDT */
	unsigned int pci;	/* i of the parent MI bus' resource "PCI<i>,BAR<b>" */
	unsigned int bar;	/* b */
	uint64_t offset;	/* reg: window in the BAR */
	uint64_t size;
};

/*
 * Read a card FDT from @path (/dev/nfbN or a file): at most
 * HWTEL_NFB_FDT_MAX bytes, checked with libfdt. *blob is malloc()ed.
 */
int hwtel_nfb_read_fdt(const char *path, void **blob, size_t *len);

/*
 * Every node compatible with "cesnet,ofm,pcie_telemetry_mi" of @fdt whose
 * parent is a "netcope,bus,mi" node. Returns the number found (at most
 * @max filled) or a negative errno (-EINVAL: a node without a usable
 * resource, or whose reg is not one <offset size> entry of the bus'
 * #address-cells and #size-cells, 1 or 2 each; the last error names it).
 */
int hwtel_nfb_find(const void *fdt, struct hwtel_nfb_node *out, int max);

/*
 * PCI address ("DDDD:BB:DD.F") of the function behind the character device
 * @dev (/dev/nfbN): the device's sysfs parent, /sys/dev/char/MAJ:MIN/device
 * (under hwtel_set_sysfs_root()).
 */
int hwtel_nfb_card_pci(const char *dev, char *addr, size_t size);

/* PMU name the driver gives a window attached by PCI address */
int hwtel_nfb_pmu_name(const char *pci_addr, unsigned int bar, uint64_t offset,
		       char *name, size_t size);

/* A PMU of that name is registered (in sysfs) */
bool hwtel_nfb_attached(const char *name);

/* Attach / detach through the driver's control plane (CAP_SYS_ADMIN) */
int hwtel_nfb_attach(const char *pci_addr, unsigned int bar, uint64_t offset,
		     uint64_t size, char *name, size_t name_size);
int hwtel_nfb_detach(const char *name);

/*
 * PMU name of telemetry node @index of the card @dev (/dev/nfbN): what
 * `nfb-pcie-telemetry -d DEV -i INDEX` names.
 */
int hwtel_nfb_resolve(const char *dev, unsigned int index, char *name, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* _LIBHWTEL_NFB_H */
