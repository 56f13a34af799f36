# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The simulated GCU, included by the top Makefile: libtopsrt.so (plain, and a variant whose
# functions begin with endbr64), libtopsrt.a, libtopstx.so, a kernel module, sample apps, and
# gcu-records (the driver's record reader). Built as a vendor would: -O2, frame pointers, PIC,
# version scripts that export only the API.

SIM_OUT := $(OUTPUT)/sim
SIM_LIB := $(SIM_OUT)/lib
SIM_BIN := $(SIM_OUT)/bin
SIM_CFLAGS := -O2 -g -std=gnu11 -Wall -Wextra -Werror -MMD -MP -D_GNU_SOURCE -pthread \
	-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-shrink-wrap \
	-fno-optimize-sibling-calls -Isim/include -Iinclude -Iuser
SIM_PIC := $(SIM_CFLAGS) -fPIC -fvisibility=hidden
SIM_APP_CFLAGS := $(filter-out -MMD -MP,$(SIM_CFLAGS))
SIM_RPATH := -Wl,-rpath,'$$ORIGIN/../lib'

# the device writes the driver's region that topsprof reads: the region's mapping, the one
# definition of its layout, is topsprof's (user/gcu/region.c); the device's side is the sim's
SIM_RT_SRCS := $(wildcard sim/rt/*.c) sim/driver/writer.c sim/driver/submit.c user/gcu/region.c user/gcu/layout.c
# gcu-records reads as topsprof does
SIM_DRIVER_SRCS := user/gcu/region.c user/gcu/layout.c user/gcu/readout.c
SIM_RT_OBJS := $(SIM_RT_SRCS:%.c=$(SIM_OUT)/obj/%.o)
SIM_RT_CET_OBJS := $(SIM_RT_SRCS:%.c=$(SIM_OUT)/obj-cet/%.o)
SIM_TX_OBJS := $(SIM_OUT)/obj/sim/tx/topstx.o
SIM_DRIVER_OBJS := $(SIM_DRIVER_SRCS:%.c=$(SIM_OUT)/obj/%.o)

SIM_SAMPLES := simpleElemwiseAdd stress topstx_ranges topstx_cold fork_app cpu_hot
SIM_TARGETS := $(SIM_LIB)/libtopsrt.so $(SIM_LIB)/libtopsrt.a $(SIM_LIB)/libtopstx.so \
	$(SIM_OUT)/lib-cet/libtopsrt.so $(SIM_LIB)/libsample_kernels.so \
	$(SIM_SAMPLES:%=$(SIM_BIN)/%) $(SIM_BIN)/dlopen_app $(SIM_BIN)/simpleElemwiseAdd_static \
	$(SIM_BIN)/ctypes_app.py $(SIM_BIN)/gcu-records $(SIM_BIN)/cpu_hot_nofp

# the same sources compiled for the unit tests, with the tests' flags (ASan/UBSan under SAN=1);
# topsprof's own come from its objects
SIM_TEST_OBJS := $(patsubst %.c,$(OUTPUT)/simtest/%.o,$(filter-out user/%,$(SIM_RT_SRCS)))

sim: $(SIM_TARGETS)

$(SIM_OUT)/obj/%.o: %.c sim/sim.mk
	$(call msg,CC-SIM,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_PIC) -fcf-protection=none -c $< -o $@

$(SIM_OUT)/obj-cet/%.o: %.c sim/sim.mk
	$(call msg,CC-CET,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_PIC) -fcf-protection=full -c $< -o $@

$(OUTPUT)/simtest/%.o: %.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -Isim/include -Isim $(CFLAGS) -pthread -c $< -o $@

# a shared library and its development link: $(call sim_so,soname,objects,map,extra-libs)
define sim_so
	$(call msg,LINK-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -shared -pthread -Wl,-soname,$(1) -Wl,--version-script=$(3) -Wl,-z,defs \
		$(2) $(4) -o $@
	$(Q)ln -sf $(1) $(@D)/$(basename $(1))
endef

$(SIM_LIB)/libtopsrt.so.1: $(SIM_RT_OBJS) sim/rt/libtopsrt.map
	$(call sim_so,libtopsrt.so.1,$(SIM_RT_OBJS),sim/rt/libtopsrt.map,-ldl)

$(SIM_OUT)/lib-cet/libtopsrt.so.1: $(SIM_RT_CET_OBJS) sim/rt/libtopsrt.map
	$(call sim_so,libtopsrt.so.1,$(SIM_RT_CET_OBJS),sim/rt/libtopsrt.map,-ldl)

$(SIM_LIB)/libtopstx.so.1: $(SIM_TX_OBJS) sim/tx/libtopstx.map
	$(call sim_so,libtopstx.so.1,$(SIM_TX_OBJS),sim/tx/libtopstx.map,)

$(SIM_LIB)/%.so: $(SIM_LIB)/%.so.1
	@true
$(SIM_OUT)/lib-cet/libtopsrt.so: $(SIM_OUT)/lib-cet/libtopsrt.so.1
	@true

$(SIM_LIB)/libtopsrt.a: $(SIM_RT_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@
	$(Q)ar rcs $@ $^

$(SIM_LIB)/libsample_kernels.so: sim/samples/sample_kernels.c $(SIM_LIB)/libtopsrt.so
	$(call msg,LINK-SO,$@)
	$(Q)$(CC) $(SIM_APP_CFLAGS) -fPIC -shared $< -L$(SIM_LIB) -ltopsrt -Wl,-rpath,'$$ORIGIN' -o $@

$(SIM_BIN)/%: sim/samples/%.c sim/samples/common.h $(SIM_LIB)/libtopsrt.so $(SIM_LIB)/libtopstx.so
	$(call msg,CC-APP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_APP_CFLAGS) $< -L$(SIM_LIB) -Wl,--as-needed -ltopstx -ltopsrt -lm $(SIM_RPATH) -o $@

# built as profiled code should be, to give CPU sampling whole stacks
$(SIM_BIN)/cpu_hot: SIM_APP_CFLAGS += -fno-omit-frame-pointer

# the same built as distributions build their packages: no frame pointers anywhere
$(SIM_BIN)/cpu_hot_nofp: sim/samples/cpu_hot.c sim/samples/common.h $(SIM_LIB)/libtopsrt.so \
		$(SIM_LIB)/libtopstx.so
	$(call msg,CC-APP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer,$(SIM_APP_CFLAGS)) \
		-fomit-frame-pointer $< -L$(SIM_LIB) -Wl,--as-needed -ltopstx -ltopsrt -lm \
		$(SIM_RPATH) -o $@

# no link to the runtime: it is dlopen()ed by name at run time (found through RUNPATH)
$(SIM_BIN)/dlopen_app: sim/samples/dlopen_app.c $(SIM_LIB)/libtopsrt.so
	$(call msg,CC-APP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_APP_CFLAGS) $< -ldl -Wl,--enable-new-dtags $(SIM_RPATH) -o $@

# the runtime linked into the executable
$(SIM_BIN)/simpleElemwiseAdd_static: sim/samples/simpleElemwiseAdd.c $(SIM_LIB)/libtopsrt.a
	$(call msg,CC-APP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_APP_CFLAGS) $< $(SIM_LIB)/libtopsrt.a -ldl -lm -o $@

$(SIM_BIN)/ctypes_app.py: sim/samples/ctypes_app.py
	$(Q)mkdir -p $(@D)
	$(Q)install -m 0755 $< $@

$(SIM_BIN)/gcu-records: sim/tools/gcu_records.c $(SIM_DRIVER_OBJS)
	$(call msg,CC-APP,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(SIM_APP_CFLAGS) $< $(SIM_DRIVER_OBJS) -o $@

-include $(shell find $(SIM_OUT) $(OUTPUT)/simtest -name '*.d' 2>/dev/null)
