// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *infile_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "of an unknown kind";
}

int infile_openat(int dirfd, const char *name, struct stat *st_out, char *err, size_t errlen)
{
	struct stat st, opened;
	char proc[64];
	int pfd, fd, flags, saved;

	/* O_PATH: the name resolved, nothing opened for real (no FIFO waited on, no driver) */
	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC);
	if (pfd < 0) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if (fstat(pfd, &st)) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(pfd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "not a regular file (%s)", infile_kind(st.st_mode));
		close(pfd);
		return -1;
	}
	/* that inode, not the name again; O_NONBLOCK and O_NOCTTY all the same */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT) /* no /proc: by name, checked to be the same inode below */
		fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	saved = errno;
	close(pfd);
	if (fd < 0) {
		snprintf(err, errlen, "%s", strerror(saved));
		return -1;
	}
	if (fstat(fd, &opened) || !S_ISREG(opened.st_mode) || opened.st_dev != st.st_dev ||
	    opened.st_ino != st.st_ino) {
		snprintf(err, errlen, "replaced while it was being opened");
		close(fd);
		return -1;
	}
	/* reads of a regular file block as usual from here on */
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (st_out)
		*st_out = opened;
	return fd;
}

int infile_open(const char *path, struct stat *st, char *err, size_t errlen)
{
	return infile_openat(AT_FDCWD, path, st, err, errlen);
}

FILE *infile_fopen(const char *path, char *err, size_t errlen)
{
	int fd = infile_open(path, NULL, err, errlen);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "rb");
	if (!f) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

int infile_read_fd(int fd, size_t max, unsigned char **data, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	unsigned char *buf = NULL;
	size_t cap, used = 0;

	*data = NULL;
	*len = 0;
	if (fstat(fd, &st)) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(err, errlen, "larger than %zu bytes", max);
		return -1;
	}
	/* the size is a hint: the file may grow or shrink while it is read */
	cap = (size_t)st.st_size + 1;
	for (;;) {
		ssize_t got;

		if (!buf || used == cap) {
			size_t ncap = buf ? (cap > max / 2 ? max + 1 : cap * 2) : cap;
			unsigned char *nb;

			if (buf && used > max) {
				snprintf(err, errlen, "larger than %zu bytes", max);
				free(buf);
				return -1;
			}
			nb = realloc(buf, ncap + 1);
			if (!nb) {
				snprintf(err, errlen, "out of memory");
				free(buf);
				return -1;
			}
			buf = nb;
			cap = ncap;
		}
		got = pread(fd, buf + used, cap - used, (off_t)used);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snprintf(err, errlen, "%s", strerror(errno));
			free(buf);
			return -1;
		}
		if (!got)
			break;
		used += (size_t)got;
	}
	if (used > max) {
		snprintf(err, errlen, "larger than %zu bytes", max);
		free(buf);
		return -1;
	}
	buf[used] = '\0';
	*data = buf;
	*len = used;
	return 0;
}

int infile_read(const char *path, size_t max, unsigned char **data, size_t *len, char *err,
		size_t errlen)
{
	int fd = infile_open(path, NULL, err, errlen), rc;

	*data = NULL;
	*len = 0;
	if (fd < 0)
		return -1;
	rc = infile_read_fd(fd, max, data, len, err, errlen);
	close(fd);
	return rc;
}

/* how many bytes of s, from its start, fit in n without cutting a UTF-8 character */
static size_t utf8_head(const char *s, size_t n)
{
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

/* err = pre, name, post, then the text of fmt; the name's middle gives way first */
static void vnamed(char *err, size_t errlen, const char *pre, const char *name, const char *post,
		   const char *fmt, va_list ap)
{
	size_t nlen = strlen(name), plen = strlen(pre) + strlen(post), tlen, room, head, tail;
	va_list again;
	char *at = err;
	int n;

	if (!errlen)
		return;
	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, again);
	va_end(again);
	/* the text after the name, with what goes around it, always whole when it fits */
	tlen = (n > 0 ? (size_t)n : 0) + plen;
	if (nlen + tlen < errlen) {
		head = nlen;
		tail = 0;
	} else {
		/* the name's room: what the rest leaves; its middle becomes "...", its end (a
		 * file's own name) keeps the larger part */
		room = errlen - 1 > tlen ? errlen - 1 - tlen : 0;
		if (room > nlen)
			room = nlen;
		head = room > 3 ? utf8_head(name, (room - 3) / 3) : 0;
		tail = room > 3 ? room - 3 - head : 0;
		while (tail && ((unsigned char)name[nlen - tail] & 0xc0) == 0x80)
			tail--;
	}
	at += snprintf(at, errlen, "%s", pre);
	if (at >= err + errlen) /* pre alone does not fit: cut there */
		return;
	if (head > (size_t)(err + errlen - 1 - at))
		head = (size_t)(err + errlen - 1 - at);
	memcpy(at, name, head);
	at += head;
	if (head < nlen) {
		size_t left = (size_t)(err + errlen - 1 - at), dots = left < 3 ? left : 3;

		memcpy(at, "...", dots);
		at += dots;
		left -= dots;
		if (tail > left)
			tail = left;
		memcpy(at, name + nlen - tail, tail);
		at += tail;
	}
	*at = '\0';
	at += snprintf(at, (size_t)(err + errlen - at), "%s", post);
	if (at >= err + errlen)
		return;
	vsnprintf(at, (size_t)(err + errlen - at), fmt, ap);
}

void vnamed_errf(char *err, size_t errlen, const char *name, const char *fmt, va_list ap)
{
	vnamed(err, errlen, "", name, "", fmt, ap);
}

void named_errf(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnamed(err, errlen, "", name, "", fmt, ap);
	va_end(ap);
}

void quoted_errf(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vnamed(err, errlen, "'", name, "'", fmt, ap);
	va_end(ap);
}
