// SPDX-License-Identifier: GPL-2.0
/* hwtel: reports of the hwtel PMUs. Also installed as nfb-pcie-telemetry. */
#include "cli.h"

int main(int argc, char **argv)
{
	/*
	 * hwtel_finish(): output that never reached its file is a failure,
	 * not exit 0 ("hwtel list > /dev/full"); after Ctrl-C, SIGINT.
	 */
	return hwtel_finish(hwtel_main(argc, argv));
}
