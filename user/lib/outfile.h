/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Output files, created safely by a root process on a shared host. Every file topsprof writes
 * goes through here:
 *  - the directory of an output is opened once (O_DIRECTORY) when the outputs are prepared,
 *    checked for real (a file is created and removed in it), and every later step is relative
 *    to that descriptor (openat, renameat2, unlinkat), never the path again;
 *  - the content goes to a file without a name (O_TMPFILE, mode 0666: the umask applies), so
 *    nothing is left behind if topsprof dies, even by SIGKILL; where the file system refuses
 *    O_TMPFILE, to a new temporary file with a random name, created with
 *    O_CREAT|O_EXCL|O_NOFOLLOW, so a planted symlink or file is never followed;
 *  - once complete it is flushed, synced and put into place: the nameless file linked (linkat)
 *    at its final name, the named one renamed with RENAME_NOREPLACE; a file that exists, or
 *    appeared meanwhile, is kept unless --force-overwrite (then the nameless file is linked at a
 *    random temporary name and renamed over it); on any failure the temporary file is removed,
 *    so no half file is left.
 * A writer that opens its file by name (SQLite) gets a private variant: a 0700 directory of a
 * random name inside the output's directory, named to it through /proc/self/fd/<fd>/, so no
 * component of that name can be swapped; the finished file is renamed out of it, and the
 * directory removed with whatever the writer left in it.
 */
#ifndef TOPSPROF_OUTFILE_H
#define TOPSPROF_OUTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* where an output goes: its directory, opened once */
struct outtarget {
	bool open;	     /* fd is ours to close */
	bool force;	     /* may replace a file that exists, even one that appeared meanwhile */
	int fd;		     /* the directory, O_DIRECTORY|O_CLOEXEC */
	char path[PATH_MAX]; /* the output as given (names expanded), for messages */
	char name[NAME_MAX + 1]; /* the file in fd; "" when the directory is the output */
};

/* the file path goes to: its directory opened and checked writable, path itself refused when it
 * exists (and !force) or is a directory; 0, or -1 with "PATH: reason" in err */
int outtarget_file(struct outtarget *t, const char *path, bool force, char *err, size_t errlen);
/* a directory that is the output (files of chosen names go in it), created when missing */
int outtarget_dir(struct outtarget *t, const char *dir, bool force, char *err, size_t errlen);
void outtarget_close(struct outtarget *t);
/* whether another user can replace a file once it is written in t's directory: the directory is
 * another user's, or writable by a group or by others without the sticky bit. 1 with "DIR is
 * writable by user NAME|group NAME|others: they can replace the file once written" in msg, 0
 * when nobody else can, -1 when the directory cannot be looked at */
int outtarget_exposed(const struct outtarget *t, char *msg, size_t len);

/* one file being written; not to be copied once created (its stream refers to it) */
struct outfile {
	FILE *f;	 /* write here (not with the private variant) */
	int fd;		 /* the temporary file */
	bool unnamed;	 /* fd has no name yet (O_TMPFILE): linked in place by the commit */
	int dirfd;	 /* the output's directory (a target's, or own_dirfd) */
	int own_dirfd;	 /* opened by outfile_open(path): closed with the file, else -1 */
	int pfd;	 /* the private directory, or -1 */
	int write_errno; /* the first write that failed, 0 when none did */
	bool force;
	char path[PATH_MAX + NAME_MAX + 2]; /* for messages */
	char name[NAME_MAX + 1];	    /* the final name, in dirfd */
	char tmp[NAME_MAX + 1];		    /* the temporary name, in dirfd (in pfd when private),
					     * "" when there is none */
	char pdir[32];			    /* the private directory's name, in dirfd */
	char db[64 + NAME_MAX];		    /* private: the name to give the writer */
};

/* a temporary file for name in t's directory (name NULL: t's own name); 0, or -1 with
 * "PATH: reason" in err */
int outfile_create(struct outfile *o, const struct outtarget *t, const char *name, char *err,
		   size_t errlen);
/* the same for a writer that opens the file itself, by the name in o->db (an empty file is
 * there already, of the mode the umask gives) */
int outfile_create_private(struct outfile *o, const struct outtarget *t, const char *name,
			   char *err, size_t errlen);
/* flush, sync, put into place; on failure the temporary file is removed. Write errors are said
 * as they were (e.g. "PATH: No space left on device") */
int outfile_commit(struct outfile *o, char *err, size_t errlen);
void outfile_abort(struct outfile *o);
/* the errno of the first write to o->f that failed, 0 when none did: a writer that failed
 * without one ran out of memory */
int outfile_write_error(const struct outfile *o);

/* for outputs opened once and written at once (--log-file, --export-activities): the target
 * and the file together */
int outfile_open(struct outfile *o, const char *path, bool force, char *err, size_t errlen);
/* outtarget_file's checks only */
int outfile_check(const char *path, bool force, char *err, size_t errlen);

/* 64 random bits, for names nobody can predict */
uint64_t outfile_random(void);

#endif
