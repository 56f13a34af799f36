/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Input files, opened safely by a root process on a shared host. Every file topsprof reads on a
 * user's word (--import-profile, --import-rawdata, --import-activities, the members of
 * --visual-profiler-merge-from) goes through here:
 *  - the name is resolved once, with O_PATH: nothing is opened for real yet, so a FIFO nobody
 *    writes does not hang topsprof and no device's driver is called (a tape rewound, a watchdog
 *    armed);
 *  - what it resolved to is checked with fstat: anything but a regular file is refused with one
 *    reason that says what it is ("not a regular file (a FIFO)");
 *  - a regular file is opened for reading through /proc/self/fd/<fd>, that very inode, never by
 *    its name again (O_NONBLOCK and O_NOCTTY all the same); without /proc, by its name with
 *    O_NONBLOCK, and refused unless it is the inode checked;
 *  - then reads block as usual, and everything is read through that one descriptor.
 * Messages about a file put its name first and the reason after it: named_errf() cuts the name
 * in its middle, never the reason, when the whole does not fit.
 */
#ifndef TOPSPROF_INFILE_H
#define TOPSPROF_INFILE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* name (relative to the directory dirfd, or AT_FDCWD) opened for reading when it is a regular
 * file: a descriptor (O_CLOEXEC, blocking) and its stat in *st (NULL: not wanted); or -1 with
 * the reason in err, without the name ("not a regular file (a FIFO)", "No such file or
 * directory") */
int infile_openat(int dirfd, const char *name, struct stat *st, char *err, size_t errlen);
int infile_open(const char *path, struct stat *st, char *err, size_t errlen);
/* the same as a stream ("rb"), or NULL with the reason in err */
FILE *infile_fopen(const char *path, char *err, size_t errlen);

/* the whole file of fd from its start (pread: fd's offset is left alone), at most max bytes,
 * in a malloc'd buffer with a '\0' after it; 0, or -1 with the reason in err ("larger than N
 * bytes", an I/O error, "out of memory") */
int infile_read_fd(int fd, size_t max, unsigned char **data, size_t *len, char *err, size_t errlen);
/* infile_open and infile_read_fd together */
int infile_read(const char *path, size_t max, unsigned char **data, size_t *len, char *err,
		size_t errlen);

/* what a file of this mode is, for messages: "a FIFO", "a socket", "a directory", ... */
const char *infile_kind(mode_t mode);

/* err = name followed by the text of fmt, as snprintf would write it; but when the whole does
 * not fit in errlen, the middle of the name gives way to "...", never the text after it (it is
 * cut only when it alone does not fit). E.g. named_errf(err, errlen, path, ": %s",
 * strerror(errno)) for "PATH: reason". */
void named_errf(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void vnamed_errf(char *err, size_t errlen, const char *name, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));
/* the same for "'NAME' text": the name in quotes, e.g. quoted_errf(err, errlen, value, " is not
 * a size") */
void quoted_errf(char *err, size_t errlen, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
