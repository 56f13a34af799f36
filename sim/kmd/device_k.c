// SPDX-License-Identifier: GPL-2.0
/* the device model the user-space device runs, compiled into the driver: the region's layout,
 * the command queue, the record ring and name table's writer */
#include "gcu/layout.c"
#include "../driver/submit.c"
#include "../driver/writer.c"
