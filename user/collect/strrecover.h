/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Strings the API probe could not read (a page the application had not touched yet, and no
 * sleepable uprobes to fault it in; see API_STR_FAULT), read again from the process while it
 * runs, through process_vm_readv, from private memory it cannot write (its .rodata, a read-only
 * file mapping): what the application passed, but for a page of a file that it never touched,
 * which reads as the file is when read, changed if the file was changed on disk since. A string
 * in writable memory, of a process that is gone, or at an unmapped address is not recovered:
 * the faulted piece stands, and the string is counted as unreadable. */
#ifndef TOPSPROF_STRRECOVER_H
#define TOPSPROF_STRRECOVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"

/* whether a mapping with these permissions (the maps file's "r-xp") keeps what the application
 * passed until topsprof reads it: readable, and not writable */
bool strrecover_allowed(const char *perms);

/* in the text of a /proc/PID/maps, how many bytes from addr on lie in allowed mappings that
 * follow each other without a gap, max at most; 0 when the mapping at addr is not allowed or
 * none holds it. *writable (may be NULL) tells whether a writable mapping stopped it. */
uint64_t strrecover_span(const char *maps, uint64_t addr, uint64_t max, bool *writable);

/* The string a faulted piece e stands for, read from process e->hdr.pid now: the pieces that
 * replace e (marked API_STR_RECOVERED; *out malloc'd) and their count; 0 when it cannot be
 * recovered (*out NULL). The process is held by its /proc directory from before its maps are
 * read to after its memory is: a process gone meanwhile, its pid reused, or one that started
 * after e->hdr.ts_ns (when the probe sent e; 0: not known) is not read from. Its maps are kept a
 * short while (100 ms) for the next faulted string, read again when one lies in none of them.
 * Its memory is read by a thread of strrecover's own, waited for 50 ms at most: a page whose fault
 * does not complete (FUSE, NFS, userfaultfd) makes the string unreadable, never holds up the
 * caller longer; while that read still waits, no other is tried (0 at once). */
size_t strrecover_pieces(const struct tp_str_event *e, struct tp_str_event **out);

/* what strrecover_pieces keeps (not shared between threads: one thread reads the events),
 * closed and freed; the reading thread stays (its buffer too while a read of it waits) */
void strrecover_forget(void);

#endif
