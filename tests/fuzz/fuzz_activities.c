// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: an activity tree (--import-activities) is hostile input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/activity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[512];
	unsigned mask;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	activity_import_json(text, &mask, err, sizeof(err));
	free(text);
	return 0;
}
