// SPDX-License-Identifier: GPL-2.0
/*
 * Attach of a PCIE_TELEMETRY_MI block that sits in a window of a PCI BAR,
 * named by PCI function, BAR, offset and size (the NDK card case: CESNET's
 * nfb driver owns the function and maps its BARs; the block is described
 * by the card's own device tree, which no OF device is made of).
 *
 * The window is mapped with pci_iomap_range() and read with plain
 * readl(): the BAR region is not requested (nfb holds it) and the function
 * is not enabled, its driver is not touched. An attached window holds a
 * runtime PM reference on the function, so it is not suspended under the
 * reads. Mapping a BAR is refused under kernel lockdown
 * (LOCKDOWN_PCI_ACCESS), as the PCI core refuses its sysfs resource
 * files. The PMU's parent is the PCI device and its name is derived from
 * the PCI address, BAR and offset, so it is the same on every boot of the
 * same card in the same slot.
 *
 * An attached instance ends by a DETACH, by module unload, and when the
 * function goes away: removal of the PCI device (hot unplug, sysfs remove,
 * an FPGA reload that re-enumerates the card) or the unbinding of its
 * driver, which may reset or reprogram the card. Both are seen through a
 * notifier on the PCI bus before the driver's remove runs, so no register
 * is read after the function's driver let it go.
 *
 * Only a function bound to nfb is accepted (module parameter pci_drivers
 * names others), checked under the function's device lock, which the
 * driver core holds around an unbind and its notifier.
 *
 * Locking: pci_lock_rescan_remove() (held by the PCI core around removal,
 * taken first by attach) -> the function's device lock -> ndk_tlm_pci_lock
 * -> the PMU's own locks.
 *
 * nfb's own extension point, nfb_driver_register()/nfb_driver_unregister()
 * with attach and detach callbacks per card, is not used (read in ndk-sw
 * v6.30.3; Documentation/admin-guide/perf/ndk-pcie-telemetry.rst has the
 * details). Its struct nfb_driver_ops is passed by value, is declared only
 * in nfb's private header, and changed size in v6.23.0, so no declaration
 * of it fits every nfb. The callbacks hand over a struct nfb_device * whose
 * PCI function and FDT are reachable only through its private members (the
 * FDT pointer's offset changed in v6.22.0, v6.22.4 and v6.28.6); nfb
 * exports no accessor, and the helpers its own drivers use to find and map
 * a component are not exported. Its detach runs in the PCI remove of the
 * card, after the bus notifier above has already ended the instance, so it
 * would add only the automatic attach, which hwtel nfb attach run by udev
 * already gives.
 */

#define pr_fmt(fmt) "ndk_pcie_tlm: " fmt

#include <linux/device.h>
#include <linux/io.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/netlink.h>
#include <linux/notifier.h>
#include <linux/pci.h>
#include <linux/pm_runtime.h>
#include <linux/security.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <uapi/linux/ndk_pcie_tlm.h>

#include "ndk_pcie_tlm.h"

/* the registers up to the last endpoint's STFIFO register */
#define TLM_PCI_MIN_SIZE	0x100

struct ndk_tlm_pci {
	struct list_head node;
	struct pci_dev *pdev;		/* referenced */
	void __iomem *base;
	struct ndk_tlm *tlm;
};

static LIST_HEAD(ndk_tlm_pci_list);
static DEFINE_MUTEX(ndk_tlm_pci_lock);
static bool ndk_tlm_pci_closing;

/*
 * Only functions that nfb has bound: nfb's own ID table says which devices
 * are NDK cards (several vendors), and its being bound says the card is in
 * use as one. Other drivers can be named at load, deliberately.
 */
static char *pci_drivers = "nfb";
module_param(pci_drivers, charp, 0444);
MODULE_PARM_DESC(pci_drivers,
		 "PCI drivers whose functions ATTACH accepts, comma-separated (default nfb)");

/* @pdev's driver is one of pci_drivers; called under its device lock */
static bool ndk_tlm_pci_driver_ok(struct pci_dev *pdev)
{
	const char *drv, *s = pci_drivers;
	size_t n;

	device_lock_assert(&pdev->dev);
	if (!pdev->dev.driver)
		return false;
	drv = pdev->dev.driver->name;
	n = strlen(drv);
	while (s) {
		if (!strncmp(s, drv, n) && (s[n] == ',' || !s[n]))
			return true;
		s = strchr(s, ',');
		if (s)
			s++;
	}
	return false;
}

static void ndk_tlm_pci_end(struct ndk_tlm_pci *p)
{
	lockdep_assert_held(&ndk_tlm_pci_lock);
	list_del(&p->node);
	ndk_tlm_destroy(p->tlm);
	pci_iounmap(p->pdev, p->base);
	pm_runtime_put(&p->pdev->dev);
	pci_dev_put(p->pdev);
	kfree(p);
}

/* "DDDD:BB:DD.F" exactly as pci_name() prints it (lspci -D, sysfs) */
static int ndk_tlm_pci_parse(const char *addr, u32 *domain, u32 *bus,
			     u32 *slot, u32 *fn)
{
	char canon[NDK_PCIE_TLM_PCI_ADDR_MAX];

	if (sscanf(addr, "%x:%x:%x.%x", domain, bus, slot, fn) != 4 ||
	    *bus > 0xff || *slot > 0x1f || *fn > 7)
		return -EINVAL;
	snprintf(canon, sizeof(canon), "%04x:%02x:%02x.%x", *domain, *bus,
		 *slot, *fn);
	return strcmp(canon, addr) ? -EINVAL : 0;
}

int ndk_tlm_pci_attach(const char *addr, u32 bar, u64 offset, u64 size,
		       char *name, size_t name_size,
		       struct netlink_ext_ack *extack)
{
	u32 domain, busnr, slot, fn;
	struct ndk_tlm_win win = { };
	struct hwtel_io io = { };
	struct pci_dev *pdev;
	struct ndk_tlm_pci *p;
	resource_size_t len;
	u16 cmd;
	int ret;

	if (ndk_tlm_pci_parse(addr, &domain, &busnr, &slot, &fn)) {
		NL_SET_ERR_MSG_MOD(extack, "pci-addr must be DOMAIN:BUS:DEV.FN (hex)");
		return -EINVAL;
	}
	if (bar >= PCI_STD_NUM_BARS) {
		NL_SET_ERR_MSG_MOD(extack, "BAR index must be 0..5");
		return -ENXIO;
	}
	if (!IS_ALIGNED(offset, 4) || !IS_ALIGNED(size, 4)) {
		NL_SET_ERR_MSG_MOD(extack, "window offset and size must be multiples of 4");
		return -EINVAL;
	}
	if (size < TLM_PCI_MIN_SIZE) {
		NL_SET_ERR_MSG_MOD(extack, "window smaller than the register file (0x100 bytes)");
		return -EINVAL;
	}
	ret = security_locked_down(LOCKDOWN_PCI_ACCESS);
	if (ret) {
		NL_SET_ERR_MSG_MOD(extack, "kernel lockdown forbids mapping a PCI BAR");
		return ret;
	}

	pci_lock_rescan_remove();
	pdev = pci_get_domain_bus_and_slot(domain, busnr, PCI_DEVFN(slot, fn));
	if (!pdev) {
		pci_unlock_rescan_remove();
		NL_SET_ERR_MSG_MOD(extack, "no such PCI function");
		return -ENODEV;
	}
	/*
	 * The device lock keeps the driver bound until the instance is on the
	 * list: an unbind that follows finds it there from its notifier, which
	 * runs under the same lock.
	 */
	device_lock(&pdev->dev);
	mutex_lock(&ndk_tlm_pci_lock);
	if (ndk_tlm_pci_closing) {
		ret = -ENODEV;
		goto put;
	}
	if (!ndk_tlm_pci_driver_ok(pdev)) {
		NL_SET_ERR_MSG_MOD(extack, "the PCI function is not bound to nfb");
		ret = -ENODEV;
		goto put;
	}
	pci_read_config_word(pdev, PCI_COMMAND, &cmd);
	if (!(cmd & PCI_COMMAND_MEMORY)) {
		NL_SET_ERR_MSG_MOD(extack, "memory decoding of the PCI function is off");
		ret = -EIO;
		goto put;
	}
	len = pci_resource_len(pdev, bar);
	if (!len || !(pci_resource_flags(pdev, bar) & IORESOURCE_MEM) ||
	    (pci_resource_flags(pdev, bar) & IORESOURCE_UNSET)) {
		NL_SET_ERR_MSG_MOD(extack, "no memory BAR of that index on the function");
		ret = -ENXIO;
		goto put;
	}
	if (offset >= len || size > len - offset) {
		NL_SET_ERR_MSG_MOD(extack, "window ends past the end of the BAR");
		ret = -ERANGE;
		goto put;
	}
	list_for_each_entry(p, &ndk_tlm_pci_list, node) {
		if (p->pdev == pdev && p->tlm->win.bar == bar &&
		    offset < p->tlm->win.offset + p->tlm->win.size &&
		    p->tlm->win.offset < offset + size) {
			NL_SET_ERR_MSG_MOD(extack, "window overlaps one already attached");
			ret = -EEXIST;
			goto put;
		}
	}

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p) {
		ret = -ENOMEM;
		goto put;
	}
	ret = pm_runtime_resume_and_get(&pdev->dev);
	if (ret < 0) {
		NL_SET_ERR_MSG_MOD(extack, "cannot resume the PCI function");
		goto free;
	}
	p->pdev = pdev;
	/* no pci_request_region(): the function's driver owns the BAR */
	p->base = pci_iomap_range(pdev, bar, offset, size);
	if (!p->base) {
		NL_SET_ERR_MSG_MOD(extack, "cannot map the window");
		ret = -ENOMEM;
		goto rpm;
	}
	io.base = p->base;
	strscpy(win.pci, pci_name(pdev), sizeof(win.pci));
	win.bar = bar;
	win.offset = offset;
	win.size = size;
	/* perf event names allow no ':' or '.': 0000:03:00.0 -> 0000_03_00_0 */
	snprintf(name, name_size, "ndk_pcie_tlm_%04x_%02x_%02x_%x_bar%u_%llx",
		 pci_domain_nr(pdev->bus), pdev->bus->number,
		 PCI_SLOT(pdev->devfn), PCI_FUNC(pdev->devfn), bar,
		 (unsigned long long)offset);
	p->tlm = ndk_tlm_create(&pdev->dev, &io,
				pci_resource_start(pdev, bar) + offset, size,
				name, &win);
	if (IS_ERR(p->tlm)) {
		ret = PTR_ERR(p->tlm);
		if (ret == -ENODEV) {
			/* the window holds no usable block: dmesg says why */
			NL_SET_ERR_MSG_MOD(extack, "no usable block (see the kernel log)");
			ret = -EPROTO;
		} else if (ret == -EIO) {
			NL_SET_ERR_MSG_MOD(extack, "STATUS.BUSY stayed set after SNAPSHOT");
			ret = -ETIMEDOUT;
		}
		goto unmap;
	}
	list_add_tail(&p->node, &ndk_tlm_pci_list);
	mutex_unlock(&ndk_tlm_pci_lock);
	device_unlock(&pdev->dev);
	pci_unlock_rescan_remove();
	return 0;

unmap:
	pci_iounmap(pdev, p->base);
rpm:
	pm_runtime_put(&pdev->dev);
free:
	kfree(p);
put:
	mutex_unlock(&ndk_tlm_pci_lock);
	device_unlock(&pdev->dev);
	pci_dev_put(pdev);
	pci_unlock_rescan_remove();
	return ret;
}

int ndk_tlm_pci_detach(const char *name, struct netlink_ext_ack *extack)
{
	struct ndk_tlm_pci *p;
	int ret = -ENODEV;

	mutex_lock(&ndk_tlm_pci_lock);
	list_for_each_entry(p, &ndk_tlm_pci_list, node) {
		if (!strcmp(p->tlm->name, name)) {
			dev_info(&p->pdev->dev, "%s: detached\n", p->tlm->name);
			ndk_tlm_pci_end(p);
			ret = 0;
			break;
		}
	}
	mutex_unlock(&ndk_tlm_pci_lock);
	if (ret)
		NL_SET_ERR_MSG_MOD(extack, "no instance of that name was attached by PCI address");
	return ret;
}

/* the function or its driver goes away: end what is attached to it */
static int ndk_tlm_pci_notify(struct notifier_block *nb, unsigned long action,
			      void *data)
{
	struct pci_dev *pdev = to_pci_dev(data);
	struct ndk_tlm_pci *p, *tmp;

	if (action != BUS_NOTIFY_DEL_DEVICE &&
	    action != BUS_NOTIFY_UNBIND_DRIVER)
		return NOTIFY_DONE;
	mutex_lock(&ndk_tlm_pci_lock);
	list_for_each_entry_safe(p, tmp, &ndk_tlm_pci_list, node) {
		if (p->pdev != pdev)
			continue;
		dev_info(&pdev->dev, "%s: detached, the PCI function %s\n",
			 p->tlm->name, action == BUS_NOTIFY_DEL_DEVICE ?
			 "is removed" : "loses its driver");
		ndk_tlm_pci_end(p);
	}
	mutex_unlock(&ndk_tlm_pci_lock);
	return NOTIFY_OK;
}

static struct notifier_block ndk_tlm_pci_nb = {
	.notifier_call = ndk_tlm_pci_notify,
};

int ndk_tlm_pci_init(void)
{
	return bus_register_notifier(&pci_bus_type, &ndk_tlm_pci_nb);
}

void ndk_tlm_pci_exit(void)
{
	struct ndk_tlm_pci *p, *tmp;

	bus_unregister_notifier(&pci_bus_type, &ndk_tlm_pci_nb);
	mutex_lock(&ndk_tlm_pci_lock);
	ndk_tlm_pci_closing = true;
	list_for_each_entry_safe(p, tmp, &ndk_tlm_pci_list, node)
		ndk_tlm_pci_end(p);
	mutex_unlock(&ndk_tlm_pci_lock);
}
