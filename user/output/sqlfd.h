/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * SQLite on descriptors, never on a path another user could race: the VFS "topsprof-fd" is the
 * default one but for names that start with /proc/self/fd/N (see sqlfd.c): a file in a
 * directory held open (/proc/self/fd/N/name) is reached through that descriptor, and a database
 * read through descriptor N (/proc/self/fd/N) is read from a dup of it, immutable, with no
 * journal, WAL or lock looked for beside it.
 */
#ifndef TOPSPROF_SQLFD_H
#define TOPSPROF_SQLFD_H

#include <sqlite3.h>
#include <stddef.h>

/* the VFS's name, registered on first use; NULL when SQLite has no default VFS */
const char *sqlfd_vfs(void);
/* the URI to read the database of descriptor fd by, read-only, through the VFS */
void sqlfd_uri(char *out, size_t len, int fd);

#endif
