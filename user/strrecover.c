// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "strrecover.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

/* Private and not writable: a writable mapping may have changed since the call; a shared one
 * (even read-only here) may be written through another mapping of the same memory or file. */
bool strrecover_allowed(const char *perms)
{
	return perms && strlen(perms) >= 4 && perms[0] == 'r' && perms[1] != 'w' && perms[3] == 'p';
}

uint64_t strrecover_span(const char *maps, uint64_t addr, uint64_t max, bool *writable)
{
	uint64_t span = 0, at = addr;

	if (writable)
		*writable = false;
	for (const char *line = maps; line && *line && span < max;) {
		uint64_t start, end;
		char perms[5];

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &start, &end, perms) == 3 &&
		    start <= at && at < end) {
			if (!strrecover_allowed(perms)) {
				if (writable)
					*writable = perms[1] == 'w';
				break;
			}
			span += end - at;
			at = end; /* the next must begin right here */
		} else if (span) {
			break; /* a gap: the string cannot go on past it */
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return span < max ? span : max;
}

static char *read_maps(int pid)
{
	char path[64], *text = NULL;
	size_t cap = 0, n = 0, got;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return NULL;
	do {
		if (cap - n < 4096) {
			char *t = realloc(text, cap + 65536);

			if (!t) {
				free(text);
				fclose(f);
				return NULL;
			}
			text = t;
			cap += 65536;
		}
		got = fread(text + n, 1, cap - n - 1, f);
		n += got;
	} while (got);
	fclose(f);
	text[n] = '\0';
	return text;
}

/* the bytes at addr, len of them at most, into buf: how many could be read */
static size_t read_mem(int pid, uint64_t addr, char *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	return got > 0 ? (size_t)got : 0;
}

size_t strrecover_pieces(const struct tp_str_event *e, struct tp_str_event **out)
{
	const struct tp_str_fault *f = &e->fault;
	const uint32_t chunk = API_STR_CHUNK - 1;
	int pid = (int)e->hdr.pid;
	/* a string that fills the limit is cut if it goes on: one byte more tells */
	uint64_t max = f->bytes ? f->want : (uint64_t)f->want + 1, span, len;
	struct tp_str_event *p;
	bool writable, cut;
	char *maps, *buf;
	size_t got, n;

	*out = NULL;
	/* the attributes themselves: their message pointer would have to be trusted too */
	if ((e->last & API_STR_ATTR) || !f->want || f->want > (1u << 20))
		return 0;
	maps = read_maps(pid);
	if (!maps) {
		pr_debug("string at 0x%" PRIx64
			 " of process %d not read again: the process is gone",
			 (uint64_t)f->addr, pid);
		return 0;
	}
	span = strrecover_span(maps, f->addr, max, &writable);
	free(maps);
	if (!span) {
		pr_debug("string at 0x%" PRIx64 " of process %d not read again: %s",
			 (uint64_t)f->addr, pid,
			 writable ? "writable memory" : "not in a private read-only mapping");
		return 0;
	}
	buf = malloc(span);
	if (!buf)
		return 0;
	got = read_mem(pid, f->addr, buf, span);
	if (f->bytes) {
		len = f->want;
		cut = f->bytes > e->offset + f->want;
		if (got < len)
			goto fail; /* the payload has a hole */
	} else {
		char *nul = memchr(buf, '\0', got);

		len = nul ? (uint64_t)(nul - buf) : f->want;
		cut = !nul;
		if (!nul && got <= f->want)
			goto fail; /* it goes on where it cannot be read, or safely */
	}
	n = len ? (size_t)((len + chunk - 1) / chunk) : 1;
	p = calloc(n, sizeof(*p));
	if (!p)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		uint64_t off = (uint64_t)i * chunk;

		p[i].hdr = e->hdr;
		p[i].call_id = e->call_id;
		p[i].offset = e->offset + (uint32_t)off;
		p[i].len = (uint16_t)(len - off < chunk ? len - off : chunk);
		p[i].index = e->index;
		p[i].last = API_STR_RECOVERED;
		if (i == n - 1)
			p[i].last |= cut ? API_STR_CUT : API_STR_END;
		memcpy(p[i].data, buf + off, p[i].len);
	}
	free(buf);
	*out = p;
	return n;
fail:
	pr_debug("string at 0x%" PRIx64 " of process %d could not be read again", (uint64_t)f->addr,
		 pid);
	free(buf);
	return 0;
}
