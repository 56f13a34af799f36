// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: the /proc/PID/maps parser, on any text. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/procmaps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct procmaps m;
	uint64_t off;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	if (!procmaps_parse(&m, text)) {
		for (size_t i = 0; i < m.n; i++) {
			procmaps_find(&m, m.v[i].start, &off);
			procmaps_find(&m, m.v[i].end - 1, &off);
			procmaps_find(&m, m.v[i].end, &off);
		}
		procmaps_free(&m);
	}
	free(text);
	return 0;
}
