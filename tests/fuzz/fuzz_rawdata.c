// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: raw data (--import-rawdata) is hostile input. The importer reads a file:
 * each input is handed to it as an in-memory one. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "output/rawdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct raw_settings s;
	struct model m;
	char path[64], err[256];

	if (fd < 0)
		fd = memfd_create("rawdata", 0);
	if (fd < 0 || ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	model_init(&m);
	raw_import(path, &m, &s, err, sizeof(err));
	model_free(&m);
	return 0;
}
