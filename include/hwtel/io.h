/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Register access for hwtel PMU drivers.
 *
 * This is the single seam between the drivers and the hardware models in
 * drivers/hwsim/. A device found through ACPI, OF or a plain platform
 * description has an MMIO resource, which the driver maps and accesses with
 * readl()/readq(). A model device carries a struct hwtel_sim_io as its
 * platform data instead; every register access is then forwarded to the model.
 * Nothing above these helpers knows which of the two it talks to.
 *
 * The seam exists only in the lab flavour (HWTEL_LAB, set by the top Kbuild
 * when the build is made with HWTEL_LAB=1, as ``make lab-modules`` does). A
 * build for installation leaves it out: the helpers below are then plain
 * readl()/readq() on the mapped window, platform data is never looked at and
 * no module is pinned. See Documentation/admin-guide/hwtel-install.rst.
 */
#ifndef _HWTEL_IO_H
#define _HWTEL_IO_H

#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/platform_device.h>
#include <linux/types.h>

#ifdef HWTEL_LAB

/**
 * struct hwtel_sim_io - register file of a hardware model
 * @owner: module implementing the model; pinned while it is in use
 * @read:  read @size (4 or 8) bytes at byte offset @off
 * @write: write @size (4 or 8) bytes at byte offset @off
 * @reads: optional, reads made through hwtel_readl()/hwtel_readq() per CPU,
 *         so that a driver's lab code can count the reads of one hold of a
 *         lock taken with interrupts off (make bench)
 */
struct hwtel_sim_io {
	struct module *owner;
	u64 (*read)(struct hwtel_sim_io *sim, u32 off, unsigned int size);
	void (*write)(struct hwtel_sim_io *sim, u32 off, u64 val,
		      unsigned int size);
	unsigned long __percpu *reads;
};

struct hwtel_io {
	void __iomem *base;
	struct hwtel_sim_io *sim;
};

static inline void hwtel_io_count(const struct hwtel_io *io)
{
	if (io->sim->reads)
		this_cpu_inc(*io->sim->reads);
}

/* Reads this CPU made through model devices like @io's, or 0 */
static inline unsigned long hwtel_io_reads(const struct hwtel_io *io)
{
	return io->sim && io->sim->reads ? this_cpu_read(*io->sim->reads) : 0;
}

static inline u32 hwtel_readl(const struct hwtel_io *io, u32 off)
{
	if (io->sim) {
		hwtel_io_count(io);
		return io->sim->read(io->sim, off, 4);
	}
	return readl(io->base + off);
}

static inline void hwtel_writel(const struct hwtel_io *io, u32 val, u32 off)
{
	if (io->sim)
		io->sim->write(io->sim, off, val, 4);
	else
		writel(val, io->base + off);
}

static inline u64 hwtel_readq(const struct hwtel_io *io, u32 off)
{
	if (io->sim) {
		hwtel_io_count(io);
		return io->sim->read(io->sim, off, 8);
	}
	return readq(io->base + off);
}

static inline void hwtel_writeq(const struct hwtel_io *io, u64 val, u32 off)
{
	if (io->sim)
		io->sim->write(io->sim, off, val, 8);
	else
		writeq(val, io->base + off);
}

/**
 * hwtel_io_map - find and map the register window of @pdev
 * @pdev: the platform device being probed
 * @io:   filled with the accessors to use
 *
 * Return: the MMIO resource (its start names the PMU) or an ERR_PTR.
 */
static inline struct resource *hwtel_io_map(struct platform_device *pdev,
					    struct hwtel_io *io)
{
	struct resource *res;

	io->sim = dev_get_platdata(&pdev->dev);
	if (io->sim) {
		res = platform_get_resource(pdev, IORESOURCE_MEM, 0);
		return res ? res : ERR_PTR(-ENODEV);
	}

	io->base = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(io->base))
		return ERR_CAST(io->base);
	return res;
}

/* Pin the model behind @io while an event uses it; no-op on hardware. */
static inline bool hwtel_io_get(const struct hwtel_io *io)
{
	return !io->sim || try_module_get(io->sim->owner);
}

static inline void hwtel_io_put(const struct hwtel_io *io)
{
	if (io->sim)
		module_put(io->sim->owner);
}

static inline void hwtel_io_unpin(void *owner)
{
	module_put(owner);
}

/*
 * Pin the model behind @io for as long as @dev stays bound: the model
 * cannot go (rmmod says it is in use) before the driver is unloaded.
 * No-op on hardware.
 */
static inline int hwtel_io_pin(struct device *dev, const struct hwtel_io *io)
{
	if (!io->sim)
		return 0;
	if (!try_module_get(io->sim->owner))
		return -ENODEV;
	return devm_add_action_or_reset(dev, hwtel_io_unpin, io->sim->owner);
}

#else /* !HWTEL_LAB: the hardware flavour */

struct hwtel_io {
	void __iomem *base;
};

static inline u32 hwtel_readl(const struct hwtel_io *io, u32 off)
{
	return readl(io->base + off);
}

static inline void hwtel_writel(const struct hwtel_io *io, u32 val, u32 off)
{
	writel(val, io->base + off);
}

static inline u64 hwtel_readq(const struct hwtel_io *io, u32 off)
{
	return readq(io->base + off);
}

static inline void hwtel_writeq(const struct hwtel_io *io, u64 val, u32 off)
{
	writeq(val, io->base + off);
}

static inline struct resource *hwtel_io_map(struct platform_device *pdev,
					    struct hwtel_io *io)
{
	struct resource *res;

	io->base = devm_platform_get_and_ioremap_resource(pdev, 0, &res);
	if (IS_ERR(io->base))
		return ERR_CAST(io->base);
	return res;
}

static inline bool hwtel_io_get(const struct hwtel_io *io)
{
	return true;
}

static inline void hwtel_io_put(const struct hwtel_io *io)
{
}

static inline int hwtel_io_pin(struct device *dev, const struct hwtel_io *io)
{
	return 0;
}

#endif /* HWTEL_LAB */

#endif /* _HWTEL_IO_H */
