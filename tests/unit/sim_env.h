/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* A private simulated driver for one test program: its own region directory, default clocks. */
#ifndef TESTS_SIM_ENV_H
#define TESTS_SIM_ENV_H

#include <stdio.h>
#include <stdlib.h>

#include "gcu_readout.h"

static char sim_env_dir[64];

/* device_count: NULL for the default */
static inline int sim_env_setup(const char *device_count)
{
	snprintf(sim_env_dir, sizeof(sim_env_dir), "/tmp/topsprof-sim.XXXXXX");
	if (!mkdtemp(sim_env_dir))
		return -1;
	setenv(GCU_RO_DIR_ENV, sim_env_dir, 1);
	if (device_count)
		setenv(GCU_RO_COUNT_ENV, device_count, 1);
	else
		unsetenv(GCU_RO_COUNT_ENV);
	unsetenv("TOPS_SIM_TICK_HZ");
	unsetenv("TOPS_SIM_CLOCK_DRIFT_PPB");
	return 0;
}

static inline int sim_env_teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sim_env_dir);
	return system(cmd) == 0 ? 0 : -1;
}

#endif
