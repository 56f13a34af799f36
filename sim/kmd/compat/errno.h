/* SPDX-License-Identifier: GPL-2.0 */
/* the C library headers the shared device code includes, as the kernel has them */
#include <linux/errno.h>
