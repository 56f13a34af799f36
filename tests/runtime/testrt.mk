# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
# The test-only second runtime (tests/runtime), included by the top Makefile for the e2e tests:
# libtestrt.so, an app that calls it, and a topsprof linked with testrt.c beside TopsRT.

TESTRT := $(OUTPUT)/tests/testrt
TESTRT_TARGETS := $(TESTRT)/libtestrt.so.1 $(TESTRT)/testrt_app $(TESTRT)/topsprof

$(TESTRT)/libtestrt.so.1: tests/runtime/libtestrt.c
	$(call msg,LINK-SO,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fPIC -shared -fvisibility=hidden -Wl,-soname,libtestrt.so.1 $< -o $@

$(TESTRT)/testrt_app: tests/runtime/testrt_app.c $(TESTRT)/libtestrt.so.1
	$(call msg,CC-APP,$@)
	$(Q)$(CC) -O2 -g -Wall -Werror $< $(TESTRT)/libtestrt.so.1 -Wl,-rpath,'$$ORIGIN' -o $@

$(TESTRT)/topsprof: tests/runtime/testrt.c $(USER_OBJS)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(filter-out -MMD -MP,$(CFLAGS)) $(LDFLAGS) $(USER_OBJS) $< \
		$(LDLIBS) -o $@
