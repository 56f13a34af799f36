/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The profile file (--export-profile / --import-profile): the whole finished model, so that an
 * import prints exactly what the run printed.
 *
 *   header, 32 bytes, little-endian:
 *     "TOPSPROF" | u16 major | u16 minor | u32 flags | u64 payload bytes | u32 crc32(payload)
 *     | u32 compressed bytes                     (2.0: the last three fields 0)
 *   sections { u32 tag | u32 0 | u64 length | bytes }, each made of fixed-width integers and
 *     strings (u32 length, bytes); unknown tags are skipped, so a newer minor version stays
 *     readable. The calls are sections of 65536 calls at most, appended to each other, and so
 *     are the GCU records (GOPS: 65536 records a section, since 2.0's writer of 2026-12; a reader
 *     of any 1.x or 2.0 appends each GOPS section's records to the last's).
 *   1.x: the payload, every section one after the other, is one zlib stream.
 *   2.0: each section is a block { u32 tag | u32 0 | u64 length | u64 compressed length } and
 *     its bytes as a zlib stream (adler32-checked), the last block "END " (length 0): a block is
 *     written as it is encoded (the writer holds one section, not the file), and one not wanted
 *     is passed over unread (a summary skips the calls: a 10-million-call file is summarized
 *     in a fraction of a second).
 *
 * Reading treats the file as hostile: every length is checked against what is left, the sizes
 * are bounded, the checksums must match; a bad file is one error, never a crash.
 */
#ifndef TOPSPROF_STORE_H
#define TOPSPROF_STORE_H

#include <stddef.h>
#include <stdio.h>

#include "model/model.h"

#define STORE_MAGIC "TOPSPROF"
/* 1.2: STRS, the topstx strings the probe could not read; 2.0: blocks (below); 2.1: CEND, where
 * the CPU stacks topsprof unwound end. 1.x still reads */
#define STORE_MAJOR 2
#define STORE_MINOR 1

/* 0, or -1 (the file's error state tells) */
int store_write_profile(FILE *f, const struct model *m);
/* the same as a 1.2 file, as topsprof wrote it before 2.0 (the tests of the 1.x reader) */
int store_write_profile_v1(FILE *f, const struct model *m);
/* a profile file is no larger (its payload is 4 GiB at most, compressed) */
#define STORE_MAX_FILE (1ull << 32)
/* 0, or -1 with the reason in err (the file not named). The file is read and inflated as it is
 * decoded: what is held is the model, not the file. With m->summary_only the calls are skipped
 * (the statistics are the file's) */
int store_read_profile(const char *path, struct model *m, char *err, size_t errlen);
/* the same through a descriptor of a regular file (read from its start) */
int store_read_profile_fd(int fd, struct model *m, char *err, size_t errlen);
/* the same from memory (the fuzz targets' entries): a whole file, or its payload only */
int store_parse_profile(const unsigned char *data, size_t len, struct model *m, char *err,
			size_t errlen);
int store_decode_payload(const unsigned char *data, size_t len, struct model *m, char *err,
			 size_t errlen);

/* the sections of what the samplers collected (CPU stacks, utilization, kernel callstacks), for
 * the raw data to carry: malloc'd into *out; 0 or -ENOMEM. Decoding adds them to m: 0, or -1
 * with the reason in err */
int store_encode_samples(const struct model *m, unsigned char **out, size_t *len);
int store_decode_samples(const unsigned char *p, size_t n, struct model *m, char *err,
			 size_t errlen);

#endif
