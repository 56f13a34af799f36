// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: a vpd given to --import-profile is hostile input (an SQLite file of anyone's
 * making). The importer opens a path: each input is handed to it as an in-memory file (a memfd,
 * a regular file to infile.h), which SQLite then reads through the importer's descriptor, as it
 * reads a file on disk (vpd.c's VFS). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/vpd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct model m;
	char path[64], err[256];

	if (fd < 0)
		fd = memfd_create("vpd", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	model_init(&m);
	vpd_import(path, &m, err, sizeof(err));
	model_free(&m);
	return 0;
}
