// SPDX-License-Identifier: GPL-2.0
/* hwtel: reports of the hwtel PMUs. Also installed as nfb-pcie-telemetry. */
#include "cli.h"

int main(int argc, char **argv)
{
	return hwtel_main(argc, argv);
}
