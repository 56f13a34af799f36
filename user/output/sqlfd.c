// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/sqlfd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The VFS "topsprof-fd": the default one, but for names that start with /proc/self/fd/N.
 *  - /proc/self/fd/N/name (a file in the private directory a writer gets, outfile.h): SQLite
 *    would turn it into the directory's path and open that, which another user could race; the
 *    name is kept as given, so the kernel resolves it through the descriptor.
 *  - /proc/self/fd/N alone, read-only: a database read through our descriptor N (a dup of it),
 *    never opened by any name. The file is immutable to SQLite (SQLITE_IOCAP_IMMUTABLE, and
 *    immutable=1 in the URI): no lock, no journal or WAL looked for beside it. Anything else of
 *    that name (a journal, a WAL, a write) is refused, and said not to exist.
 * SQLite's own temporary files (a sort that outgrows its memory) are the default VFS's: a random
 * name in the temporary directory, created O_EXCL|O_NOFOLLOW and removed at once.
 */
static sqlite3_vfs *base_vfs;

struct fd_file {
	sqlite3_file base;
	int fd;
};

/* N of a name /proc/self/fd/N..., with *rest at what follows the digits; -1 if not such a name */
static int proc_fd(const char *name, const char **rest)
{
	long n = 0;
	const char *p;

	if (!name || strncmp(name, "/proc/self/fd/", 14) || name[14] < '0' || name[14] > '9')
		return -1;
	for (p = name + 14; *p >= '0' && *p <= '9' && n < INT_MAX / 10; p++)
		n = n * 10 + (*p - '0');
	*rest = p;
	return *p >= '0' && *p <= '9' ? -1 : (int)n;
}

static int fd_close(sqlite3_file *f)
{
	close(((struct fd_file *)f)->fd);
	return SQLITE_OK;
}

static int fd_read(sqlite3_file *f, void *buf, int amt, sqlite3_int64 off)
{
	int fd = ((struct fd_file *)f)->fd;
	size_t got = 0;

	while (got < (size_t)amt) {
		ssize_t n =
			pread(fd, (char *)buf + got, (size_t)amt - got, (off_t)off + (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return SQLITE_IOERR_READ;
		if (!n)
			break;
		got += (size_t)n;
	}
	if (got < (size_t)amt) {
		/* SQLite wants the rest zeroed */
		memset((char *)buf + got, 0, (size_t)amt - got);
		return SQLITE_IOERR_SHORT_READ;
	}
	return SQLITE_OK;
}

static int fd_write(sqlite3_file *f, const void *buf, int amt, sqlite3_int64 off)
{
	(void)f, (void)buf, (void)amt, (void)off;
	return SQLITE_READONLY;
}

static int fd_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	(void)f, (void)size;
	return SQLITE_READONLY;
}

static int fd_sync(sqlite3_file *f, int flags)
{
	(void)f, (void)flags;
	return SQLITE_OK;
}

static int fd_size(sqlite3_file *f, sqlite3_int64 *size)
{
	struct stat st;

	if (fstat(((struct fd_file *)f)->fd, &st))
		return SQLITE_IOERR_FSTAT;
	*size = st.st_size;
	return SQLITE_OK;
}

static int fd_lock(sqlite3_file *f, int level)
{
	(void)f, (void)level;
	return SQLITE_OK;
}

static int fd_reserved(sqlite3_file *f, int *out)
{
	(void)f;
	*out = 0;
	return SQLITE_OK;
}

static int fd_control(sqlite3_file *f, int op, void *arg)
{
	(void)f, (void)op, (void)arg;
	return SQLITE_NOTFOUND;
}

static int fd_sector(sqlite3_file *f)
{
	(void)f;
	return 4096;
}

static int fd_caps(sqlite3_file *f)
{
	(void)f;
	return SQLITE_IOCAP_IMMUTABLE;
}

static const sqlite3_io_methods fd_io = {
	.iVersion = 1,
	.xClose = fd_close,
	.xRead = fd_read,
	.xWrite = fd_write,
	.xTruncate = fd_truncate,
	.xSync = fd_sync,
	.xFileSize = fd_size,
	.xLock = fd_lock,
	.xUnlock = fd_lock,
	.xCheckReservedLock = fd_reserved,
	.xFileControl = fd_control,
	.xSectorSize = fd_sector,
	.xDeviceCharacteristics = fd_caps,
};

static int fd_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags, int *out)
{
	struct fd_file *p = (struct fd_file *)f;
	const char *rest;
	struct stat st;
	int n = proc_fd(name, &rest), fd;

	(void)vfs;
	if (n < 0 || *rest == '/')
		return base_vfs->xOpen(base_vfs, name, f, flags, out);
	f->pMethods = NULL;
	/* only the database itself, only read */
	if (*rest || !(flags & SQLITE_OPEN_MAIN_DB) || !(flags & SQLITE_OPEN_READONLY) ||
	    (flags & (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)))
		return SQLITE_CANTOPEN;
	fd = fcntl(n, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return SQLITE_CANTOPEN;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return SQLITE_CANTOPEN;
	}
	p->fd = fd;
	f->pMethods = &fd_io;
	if (out)
		*out = flags;
	return SQLITE_OK;
}

static int fd_access(sqlite3_vfs *vfs, const char *name, int flags, int *res)
{
	const char *rest;
	int n = proc_fd(name, &rest);

	(void)vfs;
	if (n < 0 || *rest == '/')
		return base_vfs->xAccess(base_vfs, name, flags, res);
	/* a journal or WAL of a database read through a descriptor: none, nothing looked up */
	*res = !*rest && flags != SQLITE_ACCESS_READWRITE;
	return SQLITE_OK;
}

static int fd_delete(sqlite3_vfs *vfs, const char *name, int sync)
{
	const char *rest;
	int n = proc_fd(name, &rest);

	(void)vfs;
	if (n < 0 || *rest == '/')
		return base_vfs->xDelete(base_vfs, name, sync);
	return SQLITE_IOERR_DELETE_NOENT;
}

static int fd_full_pathname(sqlite3_vfs *vfs, const char *name, int n, char *out)
{
	size_t len = strlen(name);

	(void)vfs;
	if (strncmp(name, "/proc/self/fd/", 14))
		return base_vfs->xFullPathname(base_vfs, name, n, out);
	if (len >= (size_t)n)
		return SQLITE_CANTOPEN;
	memcpy(out, name, len + 1);
	return SQLITE_OK;
}

const char *sqlfd_vfs(void)
{
	static sqlite3_vfs vfs;

	if (vfs.zName)
		return vfs.zName;
	base_vfs = sqlite3_vfs_find(NULL);
	if (!base_vfs)
		return NULL;
	vfs = *base_vfs;
	vfs.pNext = NULL;
	vfs.zName = "topsprof-fd";
	if (vfs.szOsFile < (int)sizeof(struct fd_file))
		vfs.szOsFile = (int)sizeof(struct fd_file);
	vfs.xOpen = fd_open;
	vfs.xAccess = fd_access;
	vfs.xDelete = fd_delete;
	vfs.xFullPathname = fd_full_pathname;
	if (sqlite3_vfs_register(&vfs, 0) != SQLITE_OK) {
		vfs.zName = NULL;
		return NULL;
	}
	return vfs.zName;
}

void sqlfd_uri(char *out, size_t len, int fd)
{
	snprintf(out, len, "file:/proc/self/fd/%d?mode=ro&immutable=1&vfs=topsprof-fd", fd);
}
