// SPDX-License-Identifier: GPL-2.0
/* hwtel: reports of the hwtel PMUs. Also installed as nfb-pcie-telemetry. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

int main(int argc, char **argv)
{
	int ret = hwtel_main(argc, argv);

	/*
	 * Output that never reached its file is a failure, not exit 0:
	 * "hwtel list > /dev/full" must say so (stdio buffers until here).
	 */
	if (fflush(stdout) == EOF || ferror(stdout) || fclose(stdout) == EOF) {
		fprintf(stderr, "hwtel: error: cannot write the output: %s\n",
			strerror(errno ? errno : EIO));
		return ret ? ret : HWTEL_EXIT_FAIL;
	}
	return ret;
}
