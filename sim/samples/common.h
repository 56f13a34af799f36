/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* What every sample app uses: a check that names the failed call and exits. */
#ifndef SIM_SAMPLES_COMMON_H
#define SIM_SAMPLES_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "tops/tops_runtime_api.h"

#define CHECK(call)                                                                        \
	do {                                                                               \
		topsError_t err_ = (call);                                                 \
		if (err_ != topsSuccess) {                                                 \
			fprintf(stderr, "%s:%d: %s: %s (%s)\n", __FILE__, __LINE__, #call, \
				topsGetErrorName(err_), topsGetErrorString(err_));         \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

#define DIM3(a, b, c) ((dim3){ (a), (b), (c) })

#endif
