// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* libFuzzer target: a profile file (--import-profile) is hostile input. FUZZ_PAYLOAD builds the
 * variant that skips the checksum and decompression, to reach the section decoders. */
#include <stddef.h>
#include <stdint.h>

#include "output/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model m;
	char err[256];

	model_init(&m);
#ifdef FUZZ_PAYLOAD
	store_decode_payload(data, size, &m, err, sizeof(err));
#else
	store_parse_profile(data, size, &m, err, sizeof(err));
#endif
	model_free(&m);
	return 0;
}
