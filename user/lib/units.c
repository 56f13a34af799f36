// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

struct unit {
	const char *suffix;
	uint64_t scale;
};

static const struct unit byte_units[] = {
	{ "", 1 },
	{ "b", 1 },
	{ "k", 1ull << 10 },
	{ "kb", 1ull << 10 },
	{ "kib", 1ull << 10 },
	{ "m", 1ull << 20 },
	{ "mb", 1ull << 20 },
	{ "mib", 1ull << 20 },
	{ "g", 1ull << 30 },
	{ "gb", 1ull << 30 },
	{ "gib", 1ull << 30 },
	{ NULL, 0 },
};

static const struct unit hz_units[] = { { "", 1 }, { "hz", 1 }, { NULL, 0 } };

/* parse leading decimal digits of s; *end points after them */
static int parse_digits(const char *s, uint64_t *out, const char **end)
{
	uint64_t v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	*end = p;
	return 0;
}

static int parse_scaled(const char *s, const struct unit *units, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (!s || parse_digits(s, &v, &end))
		return -1;
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcasecmp(end, u->suffix))
			continue;
		if (v > UINT64_MAX / u->scale)
			return -1;
		*out = v * u->scale;
		return 0;
	}
	return -1;
}

int parse_bytes(const char *s, uint64_t *out)
{
	return parse_scaled(s, byte_units, out);
}

int parse_hz(const char *s, uint64_t *out)
{
	return parse_scaled(s, hz_units, out);
}

int parse_uint(const char *s, uint64_t *out)
{
	static const struct unit none[] = { { "", 1 }, { NULL, 0 } };

	return parse_scaled(s, none, out);
}

int parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || !isfinite(v))
		return -1;
	if (!strcasecmp(end, "ms"))
		v /= 1000.0;
	else if (*end && strcasecmp(end, "s"))
		return -1;
	*out = v;
	return 0;
}
