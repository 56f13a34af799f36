// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int outfile_check(const char *path, bool force, char *err, size_t errlen)
{
	struct stat st;

	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s: is a directory", path);
			return -1;
		}
		if (!force) {
			snprintf(err, errlen, "%s: exists (use --force-overwrite to replace it)",
				 path);
			return -1;
		}
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int outfile_open(struct outfile *o, const char *path, bool force, char *err, size_t errlen)
{
	int fd;

	memset(o, 0, sizeof(*o));
	o->force = force;
	if (outfile_check(path, force, err, errlen))
		return -1;
	if (snprintf(o->path, sizeof(o->path), "%s", path) >= (int)sizeof(o->path) ||
	    snprintf(o->tmp, sizeof(o->tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(o->tmp)) {
		snprintf(err, errlen, "%s: name too long", path);
		return -1;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		return -1;
	}
	return 0;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int rc = 0;

	if (fflush(o->f) || fsync(fileno(o->f)) || ferror(o->f)) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno ? errno : EIO));
		rc = -1;
	}
	if (fclose(o->f) && !rc) {
		snprintf(err, errlen, "%s: %s", o->path, strerror(errno));
		rc = -1;
	}
	o->f = NULL;
	/* without --force-overwrite, a file that appeared meanwhile (another rank?) is kept */
	if (!rc && (o->force ? rename(o->tmp, o->path)
			     : renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE))) {
		snprintf(err, errlen, "%s: %s", o->path,
			 errno == EEXIST ? "appeared while topsprof ran (use --force-overwrite to "
					   "replace it)"
					 : strerror(errno));
		rc = -1;
	}
	if (rc)
		unlink(o->tmp);
	return rc;
}

void outfile_abort(struct outfile *o)
{
	if (o->f)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
}
