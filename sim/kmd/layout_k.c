// SPDX-License-Identifier: GPL-2.0
/* the driver region's layout, the same code the user-space device runs */
#include "gcu/layout.c"
