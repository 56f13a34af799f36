// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/outfile.h"
#include "lib/infile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TMP_TRIES 64

uint64_t outfile_random(void)
{
	static uint64_t counter;
	uint64_t v;
	struct timespec ts;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) == (ssize_t)sizeof(v))
		return v;
	/* no entropy yet (early boot): unpredictable enough with O_EXCL behind it */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	v = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 40) ^
	    ++counter * 0x9e3779b97f4a7c15ull;
	return v;
}

static int set_err(char *err, size_t errlen, const char *path, int e)
{
	named_errf(err, errlen, path, ": %s", strerror(e));
	errno = e;
	return -1;
}

/* a new file of a random name for base in dirfd, never following or reusing anything there */
static int create_tmp(int dirfd, const char *base, char *tmp, size_t len)
{
	for (int i = 0; i < TMP_TRIES; i++) {
		int fd;

		snprintf(tmp, len, ".%.200s.%016llx.tmp", base,
			 (unsigned long long)outfile_random());
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	errno = EEXIST;
	return -1;
}

/* whether openat said that this file system (or kernel) has no O_TMPFILE */
static bool no_tmpfile(int e)
{
	return e == EOPNOTSUPP || e == EISDIR || e == EINVAL;
}

/* a new file without a name in dirfd (O_TMPFILE): gone with the process unless linked */
static int open_unnamed(int dirfd)
{
	return openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
}

/* whether files can be created in dirfd for real: as root, access() says yes on a read-only
 * mount, so one is created (without a name where the file system can) and removed */
static int probe_writable(int dirfd)
{
	char tmp[NAME_MAX + 1];
	int fd = open_unnamed(dirfd);

	if (fd >= 0 || !no_tmpfile(errno)) {
		if (fd >= 0)
			close(fd);
		return fd >= 0 ? 0 : -1;
	}
	fd = create_tmp(dirfd, "topsprof-probe", tmp, sizeof(tmp));
	if (fd < 0)
		return -1;
	close(fd);
	unlinkat(dirfd, tmp, 0);
	return 0;
}

/* the directory part of path into dir, the last component into name */
static int split(const char *path, char *dir, size_t dirlen, char *name, size_t namelen)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;

	if (strlen(base) >= namelen || strlen(path) >= dirlen)
		return -ENAMETOOLONG;
	if (!slash)
		snprintf(dir, dirlen, ".");
	else if (slash == path)
		snprintf(dir, dirlen, "/");
	else
		snprintf(dir, dirlen, "%.*s", (int)(slash - path), path);
	snprintf(name, namelen, "%s", base);
	return 0;
}

static bool is_dir_name(const char *name)
{
	return !*name || !strcmp(name, ".") || !strcmp(name, "..");
}

/* name in dirfd: a directory is refused, a file that exists too unless force */
static int check_name(int dirfd, const char *name, const char *path, bool force, char *err,
		      size_t errlen)
{
	struct stat st;

	if (is_dir_name(name) ||
	    (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))) {
		named_errf(err, errlen, path, ": is a directory");
		errno = EISDIR;
		return -1;
	}
	if (!fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		if (!force) {
			named_errf(err, errlen, path,
				   ": exists (use --force-overwrite to replace it)");
			errno = EEXIST;
			return -1;
		}
	} else if (errno != ENOENT) {
		return set_err(err, errlen, path, errno);
	}
	return 0;
}

int outtarget_file(struct outtarget *t, const char *path, bool force, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int fd;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->force = force;
	if (strlen(path) >= sizeof(t->path) ||
	    split(path, dir, sizeof(dir), t->name, sizeof(t->name)))
		return set_err(err, errlen, path, ENAMETOOLONG);
	snprintf(t->path, sizeof(t->path), "%s", path);
	if (is_dir_name(t->name))
		return set_err(err, errlen, path, EISDIR);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return set_err(err, errlen, path, errno);
	if (check_name(fd, t->name, path, force, err, errlen) ||
	    (probe_writable(fd) && set_err(err, errlen, path, errno))) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	t->fd = fd;
	t->open = true;
	return 0;
}

int outtarget_dir(struct outtarget *t, const char *dir, bool force, char *err, size_t errlen)
{
	int fd;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	t->force = force;
	if (strlen(dir) >= sizeof(t->path))
		return set_err(err, errlen, dir, ENAMETOOLONG);
	snprintf(t->path, sizeof(t->path), "%s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* made here, then opened relative to its parent without following a link put in
		 * its place meanwhile */
		char parent[PATH_MAX], name[NAME_MAX + 1];
		int pfd;

		if (split(dir, parent, sizeof(parent), name, sizeof(name)) || is_dir_name(name))
			return set_err(err, errlen, dir, ENOENT);
		pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			return set_err(err, errlen, dir, errno);
		if (mkdirat(pfd, name, 0777) && errno != EEXIST) {
			int e = errno;

			close(pfd);
			return set_err(err, errlen, dir, e);
		}
		fd = openat(pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && errno == ELOOP)
			errno = ENOTDIR;
		if (fd < 0) {
			int e = errno;

			close(pfd);
			return set_err(err, errlen, dir, e);
		}
		close(pfd);
	}
	if (fd < 0)
		return set_err(err, errlen, dir, errno);
	if (probe_writable(fd)) {
		int e = errno;

		close(fd);
		return set_err(err, errlen, dir, e);
	}
	t->fd = fd;
	t->open = true;
	return 0;
}

void outtarget_close(struct outtarget *t)
{
	if (t->open)
		close(t->fd);
	t->open = false;
	t->fd = -1;
}

int outtarget_exposed(const struct outtarget *t, char *msg, size_t len)
{
	char dir[PATH_MAX], name[NAME_MAX + 1], who[300];
	struct stat st;

	if (!t->open || fstat(t->fd, &st))
		return -1;
	if (st.st_uid != geteuid()) {
		struct passwd *pw = getpwuid(st.st_uid);

		if (pw)
			snprintf(who, sizeof(who), "user %s", pw->pw_name);
		else
			snprintf(who, sizeof(who), "user %u", (unsigned)st.st_uid);
	} else if ((st.st_mode & S_ISVTX) || !(st.st_mode & (S_IWGRP | S_IWOTH))) {
		/* the sticky bit: only a file's owner (and the directory's) may rename it */
		return 0;
	} else if (st.st_mode & S_IWOTH) {
		snprintf(who, sizeof(who), "others");
	} else {
		struct group *gr = getgrgid(st.st_gid);

		if (gr)
			snprintf(who, sizeof(who), "group %s", gr->gr_name);
		else
			snprintf(who, sizeof(who), "group %u", (unsigned)st.st_gid);
	}
	/* the directory as given: the output's, or the one its file goes in */
	if (t->name[0] && !split(t->path, dir, sizeof(dir), name, sizeof(name)))
		named_errf(msg, len, dir,
			   " is writable by %s: they can replace the file once written", who);
	else
		named_errf(msg, len, t->path,
			   " is writable by %s: they can replace the file once written", who);
	return 1;
}

/* --- the file ------------------------------------------------------------------------------ */

/* the stream writes through here, so the first failure's errno is kept for the message */
static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
	struct outfile *o = cookie;
	size_t done = 0;

	while (done < size) {
		ssize_t n = write(o->fd, buf + done, size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!o->write_errno)
				o->write_errno = n < 0 ? errno : EIO;
			errno = o->write_errno;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int cookie_close(void *cookie)
{
	struct outfile *o = cookie;
	int rc = o->fd >= 0 ? close(o->fd) : 0;

	o->fd = -1;
	return rc;
}

static void init(struct outfile *o, const struct outtarget *t, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->fd = o->own_dirfd = o->pfd = -1;
	o->dirfd = t->fd;
	o->force = t->force;
	snprintf(o->name, sizeof(o->name), "%s", name ? name : t->name);
	if (name)
		snprintf(o->path, sizeof(o->path), "%s/%s", t->path, name);
	else
		snprintf(o->path, sizeof(o->path), "%s", t->path);
}

int outfile_create(struct outfile *o, const struct outtarget *t, const char *name, char *err,
		   size_t errlen)
{
	static const cookie_io_functions_t io = { .write = cookie_write, .close = cookie_close };

	init(o, t, name);
	if (!t->open)
		return set_err(err, errlen, o->path, EBADF);
	if (check_name(o->dirfd, o->name, o->path, o->force, err, errlen))
		return -1;
	/* without a name, so that nothing is left if topsprof dies; else a random name */
	o->fd = open_unnamed(o->dirfd);
	o->unnamed = o->fd >= 0;
	if (o->fd < 0 && no_tmpfile(errno))
		o->fd = create_tmp(o->dirfd, o->name, o->tmp, sizeof(o->tmp));
	if (o->fd < 0)
		return set_err(err, errlen, o->path, errno);
	o->f = fopencookie(o, "w", io);
	if (!o->f) {
		int e = errno;

		outfile_abort(o);
		return set_err(err, errlen, o->path, e);
	}
	setvbuf(o->f, NULL, _IOFBF, 1 << 16);
	return 0;
}

/* the private directory and what the writer left in it go */
static void remove_private(struct outfile *o)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if (o->pfd < 0)
		return;
	fd = dup(o->pfd);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(o->pfd, de->d_name, 0);
	if (d)
		closedir(d);
	else if (fd >= 0)
		close(fd);
	close(o->pfd);
	o->pfd = -1;
	unlinkat(o->dirfd, o->pdir, AT_REMOVEDIR);
}

int outfile_create_private(struct outfile *o, const struct outtarget *t, const char *name,
			   char *err, size_t errlen)
{
	struct stat st;
	int i, e;

	init(o, t, name);
	if (!t->open)
		return set_err(err, errlen, o->path, EBADF);
	if (check_name(o->dirfd, o->name, o->path, o->force, err, errlen))
		return -1;
	for (i = 0;; i++) {
		if (i == TMP_TRIES)
			return set_err(err, errlen, o->path, EEXIST);
		snprintf(o->pdir, sizeof(o->pdir), ".topsprof-%016llx",
			 (unsigned long long)outfile_random());
		if (!mkdirat(o->dirfd, o->pdir, 0700))
			break;
		if (errno != EEXIST)
			return set_err(err, errlen, o->path, errno);
	}
	o->pfd = openat(o->dirfd, o->pdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* ours, and nobody else's to enter: a directory swapped in meanwhile is not used */
	if (o->pfd < 0 || fstat(o->pfd, &st) || st.st_uid != geteuid() || (st.st_mode & 077) ||
	    fchmod(o->pfd, 0700)) {
		e = o->pfd < 0 ? errno : EPERM;
		if (o->pfd >= 0)
			close(o->pfd);
		o->pfd = -1;
		unlinkat(o->dirfd, o->pdir, AT_REMOVEDIR);
		return set_err(err, errlen, o->path, e);
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s", o->name);
	o->fd = openat(o->pfd, o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (o->fd < 0) {
		e = errno;
		remove_private(o);
		return set_err(err, errlen, o->path, e);
	}
	snprintf(o->db, sizeof(o->db), "/proc/self/fd/%d/%s", o->pfd, o->tmp);
	return 0;
}

/* the nameless file linked at name in dirfd; EEXIST when name is taken, whatever it is */
static int link_unnamed(struct outfile *o, const char *name)
{
	char proc[64];

	/* as root (CAP_DAC_READ_SEARCH) */
	if (!linkat(o->fd, "", o->dirfd, name, AT_EMPTY_PATH))
		return 0;
	if (errno != ENOENT)
		return -1;
	/* without that capability: the same inode through /proc */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", o->fd);
	return linkat(AT_FDCWD, proc, o->dirfd, name, AT_SYMLINK_FOLLOW);
}

/* the temporary file (without a name, in dirfd, or in the private directory) into place; on
 * success o->tmp names nothing any more */
static int put_in_place(struct outfile *o)
{
	int src = o->pfd >= 0 ? o->pfd : o->dirfd;

	if (o->unnamed && !o->force) /* link() never replaces: the no-replace semantics */
		return link_unnamed(o, o->name);
	if (o->unnamed) {
		/* a random name first, then renamed over the final one */
		for (int i = 0;; i++) {
			if (i == TMP_TRIES) {
				errno = EEXIST;
				return -1;
			}
			snprintf(o->tmp, sizeof(o->tmp), ".%.200s.%016llx.tmp", o->name,
				 (unsigned long long)outfile_random());
			if (!link_unnamed(o, o->tmp))
				break;
			o->tmp[0] = '\0';
			if (errno != EEXIST)
				return -1;
		}
	}
	if (o->force) {
		if (renameat(src, o->tmp, o->dirfd, o->name))
			return -1;
	} else if (renameat2(src, o->tmp, o->dirfd, o->name, RENAME_NOREPLACE)) {
		if (errno != EINVAL && errno != ENOSYS)
			return -1;
		/* a file system without RENAME_NOREPLACE: link() refuses a name that exists too */
		if (linkat(src, o->tmp, o->dirfd, o->name, 0))
			return -1;
		unlinkat(src, o->tmp, 0);
	}
	o->tmp[0] = '\0';
	return 0;
}

/* the end of every file, put in place or not: closed, what still has a temporary name removed
 * (the nameless file goes with its descriptor), the private directory too */
static void release(struct outfile *o)
{
	if (o->f)
		fclose(o->f); /* closes o->fd */
	else if (o->fd >= 0)
		close(o->fd);
	o->f = NULL;
	o->fd = -1;
	if (o->tmp[0])
		unlinkat(o->pfd >= 0 ? o->pfd : o->dirfd, o->tmp, 0);
	o->tmp[0] = '\0';
	remove_private(o);
	if (o->own_dirfd >= 0)
		close(o->own_dirfd);
	o->own_dirfd = -1;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
	int e = 0;

	if (o->f && (fflush(o->f) || ferror(o->f)))
		e = o->write_errno ? o->write_errno : errno ? errno : EIO;
	else if (o->fd < 0)
		e = EBADF;
	/* on the disk before it has its name; the descriptor stays open (a nameless file is
	 * linked through it) */
	if (!e && fsync(o->fd))
		e = errno;
	if (!e && put_in_place(o))
		e = errno;
	if (e == EEXIST || e == ENOTEMPTY)
		named_errf(err, errlen, o->path,
			   ": appeared while topsprof ran (use --force-overwrite to replace it)");
	else if (e)
		named_errf(err, errlen, o->path, ": %s", strerror(e));
	release(o);
	errno = e;
	return e ? -1 : 0;
}

void outfile_abort(struct outfile *o)
{
	release(o);
}

int outfile_write_error(const struct outfile *o)
{
	return o->write_errno;
}

int outfile_open(struct outfile *o, const char *path, bool force, char *err, size_t errlen)
{
	struct outtarget t;

	memset(o, 0, sizeof(*o));
	o->fd = o->own_dirfd = o->pfd = -1;
	if (outtarget_file(&t, path, force, err, errlen))
		return -1;
	if (outfile_create(o, &t, NULL, err, errlen)) {
		outtarget_close(&t);
		return -1;
	}
	/* the file keeps the directory */
	o->own_dirfd = t.fd;
	return 0;
}

int outfile_check(const char *path, bool force, char *err, size_t errlen)
{
	struct outtarget t;

	if (outtarget_file(&t, path, force, err, errlen))
		return -1;
	outtarget_close(&t);
	return 0;
}
