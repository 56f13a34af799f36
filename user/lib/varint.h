/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* LEB128 integers (7 bits a byte, low first, the high bit: more follows) and zigzag for signed
 * ones (0, -1, 1, -2 ... as 0, 1, 2, 3), for packed records of mostly small numbers and
 * deltas. A reader checks every byte against the end: a cut or overlong number is an error. */
#ifndef TOPSPROF_VARINT_H
#define TOPSPROF_VARINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VARINT_MAX 10 /* bytes of a uint64_t, at most */

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* v at p (room for VARINT_MAX bytes); the bytes written */
static inline size_t varint_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* a number from *p, before end; false (nothing taken) when cut or longer than a uint64_t */
static inline bool varint_get(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	const unsigned char *q = *p;
	uint64_t r = 0;

	for (unsigned shift = 0; q < end && shift < 64; shift += 7) {
		unsigned char b = *q++;

		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (shift == 63 && b > 1)
				return false;
			*v = r;
			*p = q;
			return true;
		}
	}
	return false;
}

#endif
