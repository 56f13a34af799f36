// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ssize_t procfs_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		n = -errno;
	close(fd);
	buf[got] = 0;
	return n < 0 ? n : (ssize_t)got;
}

void procfs_stat_comm(const char *stat, char *comm, size_t len)
{
	/* the name may hold anything, ')' too: up to the last one */
	const char *open = strchr(stat, '('), *close = strrchr(stat, ')');

	if (len)
		comm[0] = 0;
	if (len && open && close && open < close)
		snprintf(comm, len, "%.*s", (int)(close - open - 1), open + 1);
}
