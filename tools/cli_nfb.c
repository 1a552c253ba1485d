// SPDX-License-Identifier: GPL-2.0
/*
 * hwtel nfb: attach the PCIE_TELEMETRY_MI blocks of an NDK card to the
 * ndk_pcie_tlm driver, from the card's device tree, see hwtel(1).
 *
 *   hwtel nfb list|attach|detach [-d /dev/nfbN] [--fdt FILE]
 *                                [--pci [I=]DOMAIN:BUS:DEV.FN]... [-i N]
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libhwtel/hwtel.h>
#include <libhwtel/nfb.h>

#include "cli.h"

struct nfb_opts {
	const char *dev, *fdt;
	const char *pci[HWTEL_NFB_MAX_PCI];
	bool have_index;
	unsigned int index;
};

static void nfb_usage(FILE *f)
{
	fputs("usage: hwtel nfb list|attach|detach [-d /dev/nfbN] [--fdt FILE]\n"
	      "                  [--pci [I=]DOMAIN:BUS:DEV.FN]... [-i N]\n"
	      "\n"
	      "Find the PCIE_TELEMETRY_MI blocks (\"cesnet,ofm,pcie_telemetry_mi\") in an NDK\n"
	      "card's device tree and attach them to the ndk_pcie_tlm driver by PCI function,\n"
	      "BAR and window (attach and detach need CAP_SYS_ADMIN).\n"
	      "\n"
	      "  -d, --device DEV   the card (default /dev/nfb0): its FDT and, through its\n"
	      "                     sysfs parent, the PCI function that PCI0 means\n"
	      "      --fdt FILE     read the FDT from FILE instead of the card\n"
	      "      --pci [I=]ADDR PCI function that PCI<I> of the FDT means (I default 0)\n"
	      "  -i, --index N      only telemetry node N (in FDT order)\n", f);
}

static int nfb_error(const char *fmt, const char *arg)
{
	fputs("hwtel nfb: error: ", stderr);
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	nfb_usage(stderr);
	return HWTEL_EXIT_USAGE;
}

static int nfb_fail(int err)
{
	const char *msg = hwtel_last_error();

	fprintf(stderr, "hwtel nfb: error: %s\n", msg && *msg ? msg : strerror(-err));
	return hwtel_exit_status(err);
}

/*
 * Whether the kernel is locked down: securityfs' lockdown file marks the
 * level in force with brackets, "[none]" when it is not.
 */
static bool locked_down(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/security/lockdown", "re");
	bool ret;

	if (!f)
		return false;
	ret = fgets(buf, sizeof(buf), f) && strchr(buf, '[') && !strstr(buf, "[none]");
	fclose(f);
	return ret;
}

/*
 * ENODEV: no such function, or one whose driver is not nfb (nor another
 * that the module parameter pci_drivers names); sysfs tells which
 */
static const char *attach_nodev(const char *pci)
{
	static char why[256];
	char path[128], link[256];
	const char *drv;
	ssize_t n;

	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", pci);
	if (access(path, F_OK))
		return "no such PCI function";
	snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/driver", pci);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return "the function has no driver: ATTACH takes only functions nfb has bound (load nfb; module parameter pci_drivers of ndk_pcie_tlm names others)";
	link[n] = '\0';
	drv = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	snprintf(why, sizeof(why),
		 "the function is bound to %.64s, not nfb: ATTACH takes only functions nfb has bound (module parameter pci_drivers of ndk_pcie_tlm names others)",
		 drv);
	return why;
}

/* why the driver refused an ATTACH (include/uapi/linux/ndk_pcie_tlm.h) */
static const char *attach_why(int err, const char *pci)
{
	switch (-err) {
	case EPERM:
		if (locked_down())
			return "the kernel is locked down (/sys/kernel/security/lockdown), which forbids mapping a PCI BAR";
		return "attaching needs CAP_SYS_ADMIN";
	case ENODEV:
		return attach_nodev(pci);
	case ENXIO:
		return "the function has no memory BAR of that index";
	case ERANGE:
		return "the window ends past the end of the BAR";
	case EINVAL:
		return "window offset or size not a multiple of 4, or smaller than 0x100 bytes";
	case EIO:
		return "memory decoding of the function is off (no driver has enabled it)";
	case EEXIST:
		return "the window overlaps one already attached";
	case EPROTO:
		return "no usable PCIE_TELEMETRY_MI block in the window (bad MAGIC, VERSION or layout; the kernel log says which)";
	case EBUSY:
		return "perf events of an earlier instance of this name are still open";
	case ETIMEDOUT:
		return "STATUS.BUSY stayed set after SNAPSHOT (the block never completed one)";
	case ENOENT:
		return hwtel_last_error();
	}
	return strerror(-err);
}

int hwtel_nfb_main(int argc, char **argv)
{
	enum { OPT_FDT = 256, OPT_PCI };
	static const struct option lopts[] = {
		{ "device", required_argument, NULL, 'd' },
		{ "fdt", required_argument, NULL, OPT_FDT },
		{ "pci", required_argument, NULL, OPT_PCI },
		{ "index", required_argument, NULL, 'i' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct hwtel_nfb_node *nodes = NULL;
	char card_pci[64] = "", name[128];
	struct nfb_opts o = { 0 };
	const char *what, *src;
	int c, n, i, ret, status = HWTEL_EXIT_OK;
	size_t len;
	void *fdt = NULL;
	char *end;

	if (argc < 2)
		return nfb_error("which of list, attach, detach?%s", "");
	what = argv[1];
	if (!strcmp(what, "-h") || !strcmp(what, "--help")) {
		nfb_usage(stdout);
		return HWTEL_EXIT_OK;
	}
	if (strcmp(what, "list") && strcmp(what, "attach") && strcmp(what, "detach"))
		return nfb_error("unknown nfb command '%s'", what);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc - 1, argv + 1, "+:d:i:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o.dev = optarg;
			break;
		case OPT_FDT:
			o.fdt = optarg;
			break;
		case OPT_PCI: {
			const char *eq = strchr(optarg, '=');
			unsigned long k = 0;

			if (eq) {
				errno = 0;
				k = strtoul(optarg, &end, 10);
				if (errno || end != eq || eq == optarg || k >= HWTEL_NFB_MAX_PCI)
					return nfb_error("--pci: bad endpoint index in '%s'", optarg);
				eq++;
			} else {
				eq = optarg;
			}
			if (hwtel_nfb_pmu_name(eq, 0, 0, name, sizeof(name)))
				return nfb_error("--pci: '%s' is not DOMAIN:BUS:DEV.FN", eq);
			o.pci[k] = eq;
			break;
		}
		case 'i': {
			unsigned long v;

			errno = 0;
			v = strtoul(optarg, &end, 0);
			if (errno || *end || !*optarg || optarg[0] == '-' || v >= HWTEL_NFB_MAX_NODES)
				return nfb_error("-i: invalid index '%s'", optarg);
			o.index = (unsigned int)v;
			o.have_index = true;
			break;
		}
		case 'h':
			nfb_usage(stdout);
			return HWTEL_EXIT_OK;
		case ':':
			return nfb_error("option '%s' needs an argument", argv[optind]);
		default:
			return nfb_error("unrecognized option '%s'", argv[optind]);
		}
	}
	if (optind + 1 < argc)
		return nfb_error("unrecognized arguments: %s", argv[optind + 1]);
	if (!o.dev && !o.fdt)
		o.dev = "/dev/nfb0";

	src = o.fdt ? o.fdt : o.dev;
	ret = hwtel_nfb_read_fdt(src, &fdt, &len);
	if (ret)
		return nfb_fail(ret);
	nodes = calloc(HWTEL_NFB_MAX_NODES, sizeof(*nodes));
	if (!nodes) {
		free(fdt);
		return nfb_fail(-ENOMEM);
	}
	n = hwtel_nfb_find(fdt, nodes, HWTEL_NFB_MAX_NODES);
	free(fdt);
	if (n < 0) {
		status = nfb_fail(n);
		goto out;
	}
	if (n > HWTEL_NFB_MAX_NODES)
		n = HWTEL_NFB_MAX_NODES;
	if (n == 0) {
		fprintf(stderr, "hwtel nfb: error: %s has no cesnet,ofm,pcie_telemetry_mi node\n", src);
		status = HWTEL_EXIT_NOPMU;
		goto out;
	}
	if (o.have_index && (int)o.index >= n) {
		fprintf(stderr, "hwtel nfb: error: no telemetry node %u: %s has %d\n",
			o.index, src, n);
		status = HWTEL_EXIT_NOPMU;
		goto out;
	}
	/* PCI0 without --pci: the card's sysfs parent */
	if (!o.pci[0] && o.dev) {
		ret = hwtel_nfb_card_pci(o.dev, card_pci, sizeof(card_pci));
		if (ret && strcmp(what, "list")) {
			status = nfb_fail(ret);
			goto out;
		}
		if (!ret)
			o.pci[0] = card_pci;
	}

	for (i = 0; i < n; i++) {
		const struct hwtel_nfb_node *nd = &nodes[i];
		const char *pci = o.pci[nd->pci];

		if (o.have_index && (unsigned int)i != o.index)
			continue;
		name[0] = '\0';
		if (pci)
			hwtel_nfb_pmu_name(pci, nd->bar, nd->offset, name, sizeof(name));
		if (!strcmp(what, "list")) {
			printf("%d %s PCI%u,BAR%u 0x%llx 0x%llx %s %s %s\n", i, nd->path, nd->pci,
			       nd->bar, (unsigned long long)nd->offset,
			       (unsigned long long)nd->size, pci ? pci : "-",
			       pci ? name : "-", pci && hwtel_nfb_attached(name) ? "attached" : "-");
			continue;
		}
		if (!pci) {
			fprintf(stderr, "hwtel nfb: error: %s: PCI%u is not known: give --pci %u=DOMAIN:BUS:DEV.FN\n",
				nd->path, nd->pci, nd->pci);
			status = HWTEL_EXIT_USAGE;
			continue;
		}
		if (!strcmp(what, "attach")) {
			char got[128];

			ret = hwtel_nfb_attach(pci, nd->bar, nd->offset, nd->size, got, sizeof(got));
			if (ret == -EEXIST && hwtel_nfb_attached(name)) {
				printf("%s: already attached\n", name);
				continue;
			}
			if (ret) {
				fprintf(stderr, "hwtel nfb: error: attach %s (%s BAR%u 0x%llx+0x%llx): %s\n",
					nd->path, pci, nd->bar, (unsigned long long)nd->offset,
					(unsigned long long)nd->size, attach_why(ret, pci));
				status = ret == -EPERM ? HWTEL_EXIT_PERM :
					 ret == -ENOENT ? HWTEL_EXIT_NOPMU : HWTEL_EXIT_FAIL;
				continue;
			}
			printf("%s: attached %s BAR%u 0x%llx+0x%llx\n", got, pci, nd->bar,
			       (unsigned long long)nd->offset, (unsigned long long)nd->size);
		} else {
			ret = hwtel_nfb_detach(name);
			if (ret) {
				const char *why = ret == -ENODEV ? "not attached" :
						  ret == -EPERM ? "detaching needs CAP_SYS_ADMIN" :
						  ret == -ENOENT ? hwtel_last_error() : strerror(-ret);

				fprintf(stderr, "hwtel nfb: error: detach %s: %s\n", name, why);
				status = ret == -EPERM ? HWTEL_EXIT_PERM : ret == -ENODEV ?
					 HWTEL_EXIT_NOPMU : HWTEL_EXIT_FAIL;
				continue;
			}
			printf("%s: detached\n", name);
		}
	}
out:
	free(nodes);
	return status;
}
