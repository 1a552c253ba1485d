# SPDX-License-Identifier: GPL-2.0
#
# hwtel top-level Makefile. See README.rst.
#
#   make                      modules for KDIR (default: the lab's 6.1 kernel)
#   make KDIR=/lib/modules/$(uname -r)/build && make modules_install
#   make tools                hwtel, libhwtel, pmdahwtel and the selftest binaries
#   make check                everything CI runs (build, lint, unit, VM suite)
#   make demo                 boot the lab and show the PMUs on their models
#   make bench                MMIO cost and tool overhead, as ratios
#   make fuzz FUZZ_S=N        both fuzzers, N s each, in the lab (FUZZ_KERNEL=6.12)
#   make stress               churn/hotplug/reload stress (STRESS_ROUNDS=10)

SHELL      := /bin/bash
srctree    := $(CURDIR)
O          ?= $(srctree)/build
LAB_KVER   := $(shell scripts/labkernel 6.1 2>/dev/null)
KDIR       ?= /lib/modules/$(LAB_KVER)/build
KVER        = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
MOD_OUT     = $(O)/kmod/$(KVER)
# Our O is not the kernel's: pass the kernel its own output directory, which
# Debian's headers name in their Makefile since 6.13 (empty before).
KDIR_O      = $(shell sed -n 's/^KBUILD_OUTPUT=//p' $(KDIR)/Makefile 2>/dev/null)
# Every lab kernel available now (scripts/labkernel --list: 6.1, 6.12,
# 6.12-rt, newest, and debug once it is built); override to pick some.
LAB_SERIES ?= $(shell scripts/labkernel --list)

export O

.PHONY: all modules modules_install clean deps lab-modules sparse checkpatch \
	tools unit vmtest check demo bench linux-src fuzz stress

all: modules

deps:
	scripts/install-deps

# Out-of-tree builds for several kernels from one source tree: each kernel
# builds in its own mirror of the sources (symlinks), so objects never mix.
modules:
	@test -n "$(KVER)" || { echo "KDIR=$(KDIR) is not a kernel build tree; run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p $(MOD_OUT)
	@cp -rsf $(srctree)/Kbuild $(srctree)/drivers $(srctree)/include $(MOD_OUT)/
	$(MAKE) -C $(KDIR) M=$(MOD_OUT) O=$(KDIR_O) modules

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(MOD_OUT) O=$(KDIR_O) modules_install
	depmod -a $(KVER)

# Every lab kernel, warnings as errors (W=1 adds the extra warnings). Each
# builds with its own compiler (scripts/kbuild: the newest kernel in its
# build root).
lab-modules:
	@for s in $(LAB_SERIES); do \
		k=$$(scripts/labkernel $$s) || exit 1; \
		r=$$(scripts/labkernel --root $$s) || exit 1; \
		echo "  KBUILD  $$s ($$k)"; \
		scripts/kbuild $$s W=1 KCFLAGS=-Werror || exit 1; \
		scripts/lab-stage $$k $(O)/kmod/$$k $$r || exit 1; \
	done

sparse:
	@for s in $(LAB_SERIES); do \
		k=$$(scripts/labkernel $$s) || exit 1; \
		echo "  SPARSE  $$s ($$k)"; \
		mkdir -p $(O); rm -f $(O)/sparse-$$k.log; \
		scripts/kbuild $$s C=2 > $(O)/sparse-$$k.log 2>&1 || \
			{ cat $(O)/sparse-$$k.log; exit 1; }; \
		if grep -q 'specified, but .* is not available or not up to date' \
				$(O)/sparse-$$k.log; then \
			if [ $$s = newest ]; then \
				echo "  SPARSE  $$k: skipped, the build root's sparse cannot parse these headers (W=1 only)"; \
				continue; fi; \
			echo "sparse: not run on $$k (sparse missing or too old)" >&2; exit 1; fi; \
		if grep -E '(warning|error):' $(O)/sparse-$$k.log; then \
			echo "sparse: findings on $$k" >&2; exit 1; fi; \
	done

linux-src:
	scripts/linux-src

checkpatch: linux-src
	scripts/run-checkpatch

tools: linux-src
	$(MAKE) -C tools
	$(MAKE) -C tools/pcp
	$(MAKE) -C selftests

unit: tools
	$(MAKE) -C tools unit

vmtest: lab-modules tools
	selftests/run_vm_tests

check:
	scripts/check

# The demo boots one kernel (HWTEL_DEMO_KERNEL, default 6.1): only that one
# is built.
demo: deps
	$(MAKE) lab-modules tools LAB_SERIES=$${HWTEL_DEMO_KERNEL:-6.1}
	scripts/demo

bench: lab-modules tools
	scripts/bench

# Fuzz and stress in one lab kernel (Documentation/dev-tools/hwtel-fuzz.rst).
# FUZZ_SEED=S replays a seed printed by an earlier run.
FUZZ_S        ?= 60
FUZZ_KERNEL   ?= 6.12
STRESS_ROUNDS ?= 10
FUZZ_ENV       = $(if $(FUZZ_SEED),HWTEL_FUZZ_SEED=$(FUZZ_SEED))

fuzz: lab-modules tools
	scripts/vmrun --kernel $(FUZZ_KERNEL) --timeout $$(( 2 * $(FUZZ_S) + 600 )) -- \
		env HWTEL_FUZZ_SECONDS=$(FUZZ_S) HWTEL_TEST_TIMEOUT=$$(( $(FUZZ_S) + 300 )) \
		$(FUZZ_ENV) selftests/run_in_vm fuzz/perf.sh fuzz/netlink.sh

stress: lab-modules tools
	scripts/vmrun --kernel $(FUZZ_KERNEL) --timeout $$(( 30 * $(STRESS_ROUNDS) + 600 )) -- \
		env HWTEL_STRESS_ROUNDS=$(STRESS_ROUNDS) \
		HWTEL_TEST_TIMEOUT=$$(( 30 * $(STRESS_ROUNDS) + 300 )) \
		$(FUZZ_ENV) selftests/run_in_vm fuzz/stress.sh

clean:
	rm -rf $(O)
	-$(MAKE) -C tools clean
	-$(MAKE) -C selftests clean
