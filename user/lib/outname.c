// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "lib/outname.h"
#include "lib/infile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(char *out, size_t len, size_t *used, const char *s, size_t n)
{
	if (*used + n >= len)
		return -1;
	memcpy(out + *used, s, n);
	*used += n;
	out[*used] = '\0';
	return 0;
}

int outname_expand(const char *pattern, pid_t pid, char *out, size_t len, char *err, size_t errlen)
{
	size_t used = 0;
	char buf[256];

	if (!len)
		return -1;
	out[0] = '\0';
	for (const char *p = pattern; *p; p++) {
		const char *s = buf;
		size_t n;

		if (*p != '%') {
			s = p;
			n = 1;
		} else if (p[1] == '%') {
			s = "%";
			n = 1;
			p++;
		} else if (p[1] == 'p') {
			n = (size_t)snprintf(buf, sizeof(buf), "%d", (int)pid);
			p++;
		} else if (p[1] == 'h') {
			if (gethostname(buf, sizeof(buf)))
				snprintf(buf, sizeof(buf), "localhost");
			buf[sizeof(buf) - 1] = '\0';
			n = strlen(buf);
			p++;
		} else if (p[1] == 'q' && p[2] == '{' && strchr(p + 3, '}')) {
			const char *end = strchr(p + 3, '}');

			snprintf(buf, sizeof(buf), "%.*s", (int)(end - p - 3), p + 3);
			s = getenv(buf);
			if (!s) {
				quoted_errf(err, errlen, pattern,
					    ": environment variable %s is not set", buf);
				return -1;
			}
			n = strlen(s);
			p = end;
		} else {
			quoted_errf(err, errlen, pattern,
				    ": unknown '%%%c' (known: %%p, %%h, %%q{NAME}, %%%%)",
				    p[1] ? p[1] : ' ');
			return -1;
		}
		if (put(out, len, &used, s, n)) {
			quoted_errf(err, errlen, pattern, ": the name is too long");
			return -1;
		}
	}
	return 0;
}
