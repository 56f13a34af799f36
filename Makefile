# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The one build of topsprof: BPF objects and skeletons, the topsprof binary, the simulated GCU,
# the tests. `make V=1` shows full commands; `make SAN=1 ...` builds with ASan/UBSan into its own
# directory; `make install PREFIX=/usr DESTDIR=/tmp/pkg`.

VERSION := 0.1.0

OUTPUT ?= build$(if $(SAN),-san)
CC ?= cc
CLANG ?= clang
LLVM_STRIP ?= llvm-strip
BPFTOOL ?= bpftool
CLANG_FORMAT ?= clang-format
PREFIX ?= /usr/local
DESTDIR ?=
ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

ifeq ($(V),1)
Q :=
msg =
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
MAKEFLAGS += --no-print-directory
endif

# The README commands (test, demo, bench) install what a fresh machine lacks, before anything.
ifneq ($(filter test demo bench,$(MAKECMDGOALS)),)
DEPS_STATUS := $(shell scripts/install-deps.sh >&2; echo $$?)
ifneq ($(DEPS_STATUS),0)
$(error scripts/install-deps.sh failed: see the lines above)
endif
endif

CFLAGS ?= -O2 -g
CFLAGS += -std=gnu11 -Wall -Wextra -Werror -MMD -MP -D_GNU_SOURCE
CPPFLAGS += -Iinclude -Iuser -I$(OUTPUT)/skel $(shell pkg-config --cflags libcjson 2>/dev/null)
CPPFLAGS += -DTOPSPROF_VERSION='"$(VERSION)"'
ifneq ($(SAN),)
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS += $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
endif
# libbpf is linked statically so that a copied binary runs on hosts with another libbpf
LDLIBS := -Wl,-Bstatic -lbpf -Wl,-Bdynamic -ldw -lelf -lz -llzma -lstdc++ -lcjson -lsqlite3 -lm

# BPF programs: CO-RE against the committed vmlinux.h of the architecture; system include dirs
# added after ours so that clang -target bpf finds asm/ headers the way the host compiler does
# (the programs include none but libbpf's: the host's serve any target architecture)
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
bpf_cflags = -g -O2 -target bpf -D__TARGET_ARCH_$(1) -Wall -Werror -MMD -MP \
	-Ivmlinux/$(1) -Iinclude -Ibpf $(CLANG_BPF_SYS_INCLUDES)
BPF_CFLAGS := $(call bpf_cflags,$(ARCH))
# by object: kernel.bpf.c exchanges atomically (a full barrier, BPF_XCHG: Linux 5.12+)
BPF_CFLAGS_kernel := -mcpu=v3

BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(OUTPUT)/bpf/%.bpf.o)
BPF_ARM64_OBJS := $(BPF_SRCS:bpf/%.bpf.c=$(OUTPUT)/bpf-arm64/%.bpf.o)
SKELS := $(BPF_SRCS:bpf/%.bpf.c=$(OUTPUT)/skel/%.skel.h)

USER_SRCS := $(wildcard user/*/*.c user/*/*/*.c)
USER_OBJS := $(USER_SRCS:%.c=$(OUTPUT)/%.o)
LIB_OBJS := $(filter-out $(OUTPUT)/user/app/main.o,$(USER_OBJS))
TOPSPROF := $(OUTPUT)/topsprof

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(OUTPUT)/tests/%)

# what scripts/bench/run.sh runs besides topsprof and the sim; the e2e target builds them too,
# for the benchmark's smoke test (tests/e2e/test_bench.sh)
BENCH := $(OUTPUT)/bench
BENCH_BINS := $(BENCH)/bare $(BENCH)/apibench $(BENCH)/libinterpose.so $(BENCH)/genevents \
	      $(BENCH)/tpfloor $(BENCH)/sysloop $(BENCH)/sqlfloor

FORMAT_FILES = $(filter-out vmlinux/%,$(shell git ls-files '*.c' '*.h' 2>/dev/null))

.DELETE_ON_ERROR:
.SECONDARY:
.PHONY: all clean install test unit unit-san e2e e2e-san demo format format-check bench sim fuzz \
	bpf-arm64 vm-test vm-matrix

all: $(SKELS) $(TOPSPROF) sim

include sim/sim.mk
include tests/runtime/testrt.mk

$(OUTPUT) $(OUTPUT)/bpf $(OUTPUT)/bpf-arm64 $(OUTPUT)/skel $(OUTPUT)/tests \
		$(sort $(dir $(USER_OBJS))):
	$(Q)mkdir -p $@

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c vmlinux/$(ARCH)/vmlinux.h | $(OUTPUT)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(BPF_CFLAGS_$*) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

# the objects for arm64, which no machine here runs: proof that they build (no skeletons)
bpf-arm64: $(BPF_ARM64_OBJS)

$(OUTPUT)/bpf-arm64/%.bpf.o: bpf/%.bpf.c vmlinux/arm64/vmlinux.h | $(OUTPUT)/bpf-arm64
	$(call msg,BPF-A64,$@)
	$(Q)$(CLANG) $(call bpf_cflags,arm64) $(BPF_CFLAGS_$*) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(OUTPUT)/skel/%.skel.h: $(OUTPUT)/bpf/%.bpf.o | $(OUTPUT)/skel
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

# system call names by number, from the C library's kernel headers (linux-libc-dev)
SYSCALL_HDR ?= $(firstword $(wildcard /usr/include/$(shell $(CC) -dumpmachine)/asm/unistd_64.h \
	/usr/include/asm/unistd_64.h))
$(OUTPUT)/skel/syscall_names.h: $(SYSCALL_HDR) | $(OUTPUT)/skel
	$(call msg,GEN,$@)
	$(Q)awk '$$1 == "#define" && $$2 ~ /^__NR_/ && $$3 ~ /^[0-9]+$$/ \
		{ printf "\t[%s] = \"%s\",\n", $$3, substr($$2, 6) }' $< > $@

# user objects may include any skeleton: generate them all first
$(OUTPUT)/user/%.o: user/%.c | $(SKELS) $(OUTPUT)/skel/syscall_names.h $(sort $(dir $(USER_OBJS)))
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(TOPSPROF): $(USER_OBJS) | $(OUTPUT)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# unit tests link topsprof's objects and the simulator's (runtime, driver)
$(OUTPUT)/tests/%: tests/unit/%.c $(LIB_OBJS) $(SIM_TEST_OBJS) | $(OUTPUT)/tests
	$(call msg,CC-TEST,$@)
	$(Q)$(CC) $(CPPFLAGS) -Isim/include -Isim -DSIM_DIR='"$(abspath $(SIM_OUT))"' \
		-DFIXTURE_DIR='"$(abspath $(FIXTURES))"' $(CFLAGS) \
		-pthread $(LDFLAGS) $< $(LIB_OBJS) \
		$(SIM_TEST_OBJS) $(LDLIBS) -lcmocka -ldl -lm -o $@

# -- tests ---------------------------------------------------------------------------------------

# ELF files for the symbolizer's tests: a PIE, the same stripped with MiniDebugInfo and with a
# corrupt one, a C++ shared library
FIXTURES := $(OUTPUT)/tests/fixtures
SYM_FIXTURES := $(FIXTURES)/symfix $(FIXTURES)/symfix.mini $(FIXTURES)/symfix.baddd \
	$(FIXTURES)/libsymfix_cxx.so $(FIXTURES)/symfix.stripped

$(FIXTURES)/symfix: tests/unit/fixtures/symfix.c
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O1 -g -fPIE -pie $< -o $@

$(FIXTURES)/symfix.mini: $(FIXTURES)/symfix tests/unit/fixtures/mini-debuginfo.sh
	$(call msg,FIXTURE,$@)
	$(Q)tests/unit/fixtures/mini-debuginfo.sh $< $@

$(FIXTURES)/symfix.baddd: $(FIXTURES)/symfix
	$(call msg,FIXTURE,$@)
	$(Q)printf 'not an xz stream' >$@.dd
	$(Q)strip --strip-all -o $@ $<
	$(Q)objcopy --add-section .gnu_debugdata=$@.dd $@
	$(Q)rm -f $@.dd

# stripped, its symbols in a separate debug file that a debug directory keeps by build-id
$(FIXTURES)/symfix.stripped: $(FIXTURES)/symfix
	$(call msg,FIXTURE,$@)
	$(Q)strip --strip-all -o $@ $<
	$(Q)id=$$(readelf -n $< | sed -n 's/.*Build ID: *//p'); \
		test -n "$$id" && d=$(FIXTURES)/debug/.build-id/$$(echo $$id | cut -c1-2) && \
		mkdir -p $$d && objcopy --only-keep-debug $< $$d/$$(echo $$id | cut -c3-).debug

$(FIXTURES)/libsymfix_cxx.so: tests/unit/fixtures/symfix_cxx.cpp
	$(call msg,FIXTURE,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CXX) -O1 -g -fPIC -shared $< -o $@

# every stage's log, and the failing tests' own logs under LOG_DIR/<stage>/, for make test
TEST_LOGS ?= $(abspath $(OUTPUT))/test-logs

unit: $(UNIT_BINS) $(SYM_FIXTURES) sim
	$(Q)LOG_DIR=$(TEST_LOGS)/unit$(if $(SAN),-san) tests/unit/run.sh $(UNIT_BINS)

unit-san:
	$(Q)$(MAKE) SAN=1 TEST_LOGS=$(TEST_LOGS) unit

e2e: $(TOPSPROF) sim $(TESTRT_TARGETS) $(BENCH_BINS)
	$(Q)TOPSPROF=$(abspath $(TOPSPROF)) OUTPUT=$(abspath $(OUTPUT)) LOG_DIR=$(TEST_LOGS)/e2e \
		tests/e2e/run.sh

# the samplers and the files in and out, end to end, with topsprof built with ASan/UBSan (a leak
# or undefined behaviour fails the run); the sim apps are the plain build's
E2E_SAN_TESTS := test_cpu test_stacks_distro test_util test_kernel test_files
e2e-san: $(TOPSPROF) sim
	$(Q)$(MAKE) SAN=1 build-san/topsprof
	$(Q)TOPSPROF=$(abspath build-san/topsprof) OUTPUT=$(abspath $(OUTPUT)) \
		ASAN_OPTIONS=detect_leaks=1 LOG_DIR=$(TEST_LOGS)/e2e-san \
		tests/e2e/run.sh $(E2E_SAN_TESTS:%=tests/e2e/%.sh)

# -- fuzz targets: the importers, under libFuzzer with ASan/UBSan, a bounded time each ------------

FUZZ := $(OUTPUT)/fuzz
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -Iinclude -Iuser $(shell pkg-config --cflags libcjson 2>/dev/null)
# every runtime's table, as topsprof has them
FUZZ_PROFILE_SRCS := user/output/store.c user/model/model.c $(wildcard user/target/runtime/*.c) \
	user/lib/strlist.c user/model/cpustacks.c user/model/utilization.c user/model/kstacks.c \
	user/model/calls.c \
	user/lib/infile.c
FUZZ_BINS := $(FUZZ)/fuzz_profile $(FUZZ)/fuzz_profile_payload $(FUZZ)/fuzz_activities \
	$(FUZZ)/fuzz_rawdata $(FUZZ)/fuzz_vpd $(FUZZ)/fuzz_symtab $(FUZZ)/fuzz_procmaps

$(FUZZ)/fuzz_profile: tests/fuzz/fuzz_profile.c $(FUZZ_PROFILE_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lz -o $@

$(FUZZ)/fuzz_profile_payload: tests/fuzz/fuzz_profile.c $(FUZZ_PROFILE_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -DFUZZ_PAYLOAD $^ -lz -o $@

$(FUZZ)/fuzz_rawdata: tests/fuzz/fuzz_rawdata.c user/output/rawdata.c user/lib/outfile.c \
		$(FUZZ_PROFILE_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lz -o $@

$(FUZZ)/fuzz_vpd: tests/fuzz/fuzz_vpd.c user/output/vpd.c user/output/sqlfd.c user/lib/outfile.c \
		user/output/report.c user/lib/format.c $(FUZZ_PROFILE_SRCS)
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lsqlite3 -lz -lm -o $@

$(FUZZ)/fuzz_activities: tests/fuzz/fuzz_activities.c user/model/activity.c user/lib/strlist.c \
		user/lib/infile.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lcjson -o $@

$(FUZZ)/fuzz_symtab: tests/fuzz/fuzz_symtab.c user/symbols/symtab.c user/target/elfinfo.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -lelf -llzma -lstdc++ -o $@

$(FUZZ)/fuzz_procmaps: tests/fuzz/fuzz_procmaps.c user/symbols/procmaps.c
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $^ -o $@

fuzz: $(FUZZ_BINS) $(SYM_FIXTURES)
	$(Q)tests/fuzz/run.sh $(OUTPUT)

# every stage runs even when one fails; one summary at the end, non-zero when any failed
TEST_STAGES := format-check bpf-arm64 unit unit-san e2e e2e-san fuzz vm-test
test:
	$(Q)rm -rf $(TEST_LOGS)
	$(Q)LOG_DIR=$(TEST_LOGS) MAKE="$(MAKE)" tests/run-stages.sh $(TEST_STAGES)

# the kernel-side e2e tests inside QEMU VMs booting Debian's kernels (scripts/vm/): vm-test the
# 6.1 one, vm-matrix 5.10, 6.1 and 6.12; VM_KERNELS chooses, VM_TESTS the tests
VM_KERNELS ?= 6.1
vm-test: $(TOPSPROF) sim $(TESTRT_TARGETS)
	$(Q)scripts/install-deps.sh
	$(Q)LOG_DIR=$(TEST_LOGS)/vm scripts/vm/test.sh $(VM_KERNELS)

vm-matrix: VM_KERNELS = 5.10 6.1 6.12
vm-matrix: vm-test

format:
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check:
	$(Q)$(CLANG_FORMAT) --version | grep -q 'version 14\.' || \
		{ echo "format-check: needs clang-format 14 (have: $$($(CLANG_FORMAT) --version))"; exit 1; }
	$(Q)$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES)
	$(Q)scripts/check-layers.sh

# -- benchmarks ------------------------------------------------------------------------------------

$(BENCH)/bare.bpf.o: scripts/bench/bare.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BENCH)/bare.skel.h: $(BENCH)/bare.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name bare_bpf > $@

$(BENCH)/bare: scripts/bench/bare.c $(BENCH)/bare.skel.h $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BENCH) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(BENCH)/apibench: scripts/bench/apibench.c $(SIM_LIB)/libtopsrt.so
	$(call msg,CC,$@)
	$(Q)$(CC) $(SIM_APP_CFLAGS) $< -L$(SIM_LIB) -ltopsrt -Wl,-rpath,'$$ORIGIN/../sim/lib' -o $@

# the LD_PRELOAD interposer that timestamps each call: the baseline eBPF tracing replaces
$(BENCH)/libinterpose.so: scripts/bench/interpose.c
	$(call msg,LINK-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_APP_CFLAGS) -fPIC -shared $< -ldl -o $@

# a synthetic raw data file of N calls, for the 10M-event series (scripts/bench/scale.sh)
$(BENCH)/genevents: scripts/bench/genevents.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# SQLite alone inserting the rows of the vpd export in the 10M-event series
$(BENCH)/sqlfloor: scripts/bench/sqlfloor.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# the floor of kernel callstacks' tracepoints: empty programs there (scripts/bench/kcalls.sh)
$(BENCH)/tpfloor.bpf.o: scripts/bench/tpfloor.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(Q)$(LLVM_STRIP) -g $@

$(BENCH)/tpfloor.skel.h: $(BENCH)/tpfloor.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name tpfloor_bpf > $@

$(BENCH)/tpfloor: scripts/bench/tpfloor.c $(BENCH)/tpfloor.skel.h
	$(call msg,CC,$@)
	$(Q)$(CC) $(CPPFLAGS) -I$(BENCH) $(CFLAGS) $(LDFLAGS) $< $(LDLIBS) -o $@

$(BENCH)/sysloop: scripts/bench/sysloop.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $< -o $@


bench: all $(BENCH_BINS)
	$(Q)scripts/bench/run.sh $(OUTPUT)

# -- the main job: profile the manual's sample app on the simulated GCU ----------------------------

demo: all
	$(Q)$(TOPSPROF) --enable-activities operator $(SIM_BIN)/simpleElemwiseAdd

install: $(TOPSPROF)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX)/bin/topsprof)
	$(Q)install -D -m 0755 $(TOPSPROF) $(DESTDIR)$(PREFIX)/bin/topsprof

clean:
	$(Q)rm -rf build build-san

-include $(wildcard $(OUTPUT)/bpf/*.d $(OUTPUT)/bpf-arm64/*.d $(USER_OBJS:.o=.d) \
	$(OUTPUT)/tests/*.d)
