/* SPDX-License-Identifier: GPL-2.0 */
/* the C library headers the shared layout code includes, as the kernel has them */
#include <linux/types.h>
