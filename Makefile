# SPDX-License-Identifier: GPL-2.0
#
# hwtel top-level Makefile. See README.rst.
#
#   make                      modules for KDIR (default: the lab's 6.1 kernel),
#                             hardware flavour (no model seam; HWTEL_LAB=1 for
#                             the lab flavour, as lab-modules builds)
#   make KDIR=/lib/modules/$(uname -r)/build && make modules_install
#   make install DESTDIR=D    tool, library, header, man page, udev, systemd
#   make dkms-source DESTDIR=D  the DKMS source tree in D/usr/src/hwtel-VERSION
#   make deb                  Debian packages into build/deb/ (lintian clean)
#   make deb-install-test     those packages unpacked with dpkg --root, checked, purged
#   make check-packages       those packages installed here (root), DKMS, lab, purged
#   make check-hwflavour      hardware flavour for 6.1/6.12 has no seam (nm/modinfo)
#   make check-dkms           the real dkms builds the DKMS sources for 6.1/6.12
#   make arm64                cross-build modules (both flavours), tool and selftests for arm64
#   make check-arm64          those, then the whole DDR suite in the arm64 guest (ARM64_TESTS)
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
# Flavour: empty for hardware (what is installed), 1 for the lab (model
# seam, models, -sim ids). Each flavour builds in its own directory.
HWTEL_LAB  ?=
MOD_OUT     = $(O)/kmod$(if $(HWTEL_LAB),,-hw)/$(KVER)
VERSION    := $(shell sed -n 's/^\#define HWTEL_VERSION "\(.*\)"/\1/p' include/libhwtel/hwtel.h)
# Our O is not the kernel's: pass the kernel its own output directory, which
# Debian's headers name in their Makefile since 6.13 (empty before).
KDIR_O      = $(shell sed -n 's/^KBUILD_OUTPUT=//p' $(KDIR)/Makefile 2>/dev/null)
# Every lab kernel available now (scripts/labkernel --list: 6.1, 6.12,
# 6.12-rt, newest, and debug once it is built); override to pick some.
LAB_SERIES ?= $(shell scripts/labkernel --list)

export O

.PHONY: all modules modules_install clean deps lab-modules sparse checkpatch nl-policy \
	tools unit vmtest check demo bench linux-src fuzz stress install \
	install-tools install-data \
	dkms-source deb deb-install-test check-packages check-hwflavour check-dkms arm64 check-arm64

all: modules

deps:
	scripts/install-deps

# Out-of-tree builds for several kernels from one source tree: each kernel
# builds in its own mirror of the sources (symlinks), so objects never mix.
modules:
	@test -n "$(KVER)" || { echo "KDIR=$(KDIR) is not a kernel build tree; run 'make deps' or set KDIR" >&2; exit 1; }
	@mkdir -p $(MOD_OUT)
	@cp -rsf $(srctree)/Kbuild $(srctree)/drivers $(srctree)/include $(MOD_OUT)/
	$(MAKE) -C $(KDIR) M=$(MOD_OUT) O=$(KDIR_O) HWTEL_LAB=$(HWTEL_LAB) modules

modules_install: modules
	$(MAKE) -C $(KDIR) M=$(MOD_OUT) O=$(KDIR_O) HWTEL_LAB=$(HWTEL_LAB) modules_install
	depmod -a $(KVER)

# Userspace install (debian/rules uses it). Udev rules, systemd units and
# Grafana dashboards are whatever data/udev/*.rules,
# data/systemd/*.{service,timer} and data/grafana/*.json hold.
prefix     ?= /usr/local
libdir     ?= $(prefix)/lib
# Where this system's udev and systemd look (bookworm: /lib/..., later /usr/lib/...).
udevdir    ?= $(or $(shell pkg-config --variable=udevdir udev 2>/dev/null),/lib/udev)/rules.d
unitdir    ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),/lib/systemd/system)
install: install-tools install-data

install-tools:
	$(MAKE) -C tools install DESTDIR=$(DESTDIR) PREFIX=$(prefix) LIBDIR=$(libdir)

install-data:
	@set -e; for f in $(wildcard data/udev/*.rules); do \
		install -D -m 644 $$f $(DESTDIR)$(udevdir)/$${f##*/}; done
	@set -e; for f in $(wildcard data/systemd/*.service data/systemd/*.timer); do \
		install -D -m 644 $$f $(DESTDIR)$(unitdir)/$${f##*/}; done
	@set -e; for f in $(wildcard data/grafana/*.json); do \
		install -D -m 644 $$f $(DESTDIR)$(prefix)/share/hwtel/grafana/$${f##*/}; done

# The sources DKMS builds from (dkms.conf: hardware flavour, drivers/perf
# only; the models are not shipped).
DKMS_DIR    = $(DESTDIR)/usr/src/hwtel-$(VERSION)
dkms-source:
	install -d $(DKMS_DIR)/drivers/perf $(DKMS_DIR)/include/hwtel
	install -m 644 Kbuild $(DKMS_DIR)/
	sed 's/@VERSION@/$(VERSION)/' dkms.conf.in > $(DKMS_DIR)/dkms.conf
	install -m 644 drivers/perf/Kbuild drivers/perf/*.[ch] $(DKMS_DIR)/drivers/perf/
	install -m 644 $(filter-out include/hwtel/sim.h,$(wildcard include/hwtel/*.h)) \
		$(DKMS_DIR)/include/hwtel/
	cp -r include/uapi $(DKMS_DIR)/include/

# Debian packages from this tree (debian/), into $(O)/deb/.
deb:
	scripts/build-deb

# The packages of make deb really installed on this machine (root): DKMS
# builds for every lab kernel, a 6.1 and a 6.12 guest load the DKMS modules
# and run the PMUs' real-path tests with the installed tool, then a purge
# leaves the machine as it was (scripts/pkg-install-test).
check-packages: lab-modules tools
	scripts/pkg-install-test

# arm64 cross builds (scripts/arm64-lab): Debian's arm64 6.1 headers with the
# host's kbuild, the arm64 root as sysroot, W=1 and -Werror.
arm64: linux-src
	scripts/arm64-lab prepare
	scripts/arm64-lab build

# The arm64 guest's suite alone: the DDR tests by default (make check runs
# them too, in its lab stage beside the other kernels; see scripts/check).
ARM64_TESTS ?= selftests/ddr/
check-arm64: arm64
	scripts/check-hwflavour $(O)/kmod-hw/$$(scripts/labkernel arm64)/drivers/perf/*.ko
	$(MAKE) lab-modules LAB_SERIES=arm64
	selftests/run_vm_tests --kernel arm64 $(ARM64_TESTS)

# The hardware flavour for 6.1 and 6.12 carries no seam (nm/modinfo).
check-hwflavour:
	scripts/check-hwflavour

# The packages of make deb unpacked into a scratch root, checked, purged.
deb-install-test:
	scripts/deb-install-test

# The real dkms builds the DKMS sources for 6.1 and 6.12 (private trees).
check-dkms:
	scripts/check-dkms

# Every lab kernel, warnings as errors (W=1 adds the extra warnings). Each
# builds with its own compiler (scripts/kbuild: the newest kernel in its
# build root).
lab-modules:
	@for s in $(LAB_SERIES); do \
		k=$$(scripts/labkernel $$s) || exit 1; \
		r=$$(scripts/labkernel --root $$s) || exit 1; \
		echo "  KBUILD  $$s ($$k)"; \
		scripts/kbuild $$s -j2 W=1 KCFLAGS=-Werror || exit 1; \
		scripts/lab-stage $$k $(O)/kmod/$$k $$r || exit 1; \
	done

# Sparse builds in a directory of its own ($(O)/sparse), so it can run
# beside lab-modules (make check does).
sparse:
	@for s in $(LAB_SERIES); do \
		k=$$(scripts/labkernel $$s) || exit 1; \
		echo "  SPARSE  $$s ($$k)"; \
		mkdir -p $(O); rm -f $(O)/sparse-$$k.log; \
		O=$(O)/sparse scripts/kbuild $$s -j2 C=2 > $(O)/sparse-$$k.log 2>&1 || \
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
	scripts/nl-policy-gen --check

# the netlink request policies, from the YNL spec
nl-policy:
	scripts/nl-policy-gen

tools: linux-src
	$(MAKE) -C tools
	$(MAKE) -C tools/pcp
	$(MAKE) -C selftests

unit: tools
	$(MAKE) -C tools unit
	$(MAKE) -C tools tsan

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
