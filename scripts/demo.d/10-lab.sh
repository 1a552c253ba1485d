#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The lab itself: which kernel, and the modules of this tree it can load.
echo "Lab kernel: $(uname -r) on $(nproc) CPUs"
echo "hwtel modules staged for this kernel:"
ls "/lib/modules/$(uname -r)/extra/" | sed 's/^/  /'
