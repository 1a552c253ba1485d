/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SSDT of the lab's ACPI DSS (DDR controller) PMUs: one device per variant,
 * each with one memory resource over guest RAM that the kernel command line
 * reserves (memmap=), so the driver maps it with ioremap() and the test
 * plants register values in it. scripts/vmrun --acpi-ddr builds it with iasl
 * and passes it with -acpitable; the addresses must match the ones in
 * scripts/vmrun and selftests/ddr/acpi.sh (see
 * Documentation/dev-tools/hwtel-lab.rst, "ACPI discovery").
 */
DefinitionBlock ("", "SSDT", 2, "HWTEL", "DDRPMU", 0x00000001)
{
	Scope (\_SB)
	{
		Device (DSS0)	/* CN10K */
		{
			Name (_HID, "MRVL000A")
			Name (_UID, 0)
			Name (_CRS, ResourceTemplate ()
			{
				Memory32Fixed (ReadWrite, 0x38000000, 0x00030000)
			})
		}

		Device (DSS1)	/* CN20K */
		{
			Name (_HID, "MRVL000B")
			Name (_UID, 1)
			Name (_CRS, ResourceTemplate ()
			{
				Memory32Fixed (ReadWrite, 0x38040000, 0x00030000)
			})
		}

		Device (DSS2)	/* Odyssey */
		{
			Name (_HID, "MRVL000C")
			Name (_UID, 2)
			Name (_CRS, ResourceTemplate ()
			{
				Memory32Fixed (ReadWrite, 0x38080000, 0x00030000)
			})
		}
	}
}
