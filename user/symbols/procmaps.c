// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "symbols/procmaps.h"

#include "lib/bsearch.h"
#include "lib/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_line(struct procmaps *m, const char *line, size_t len)
{
	uint64_t start, end, pgoff, inode;
	char perms[5], dev[16];
	int used = 0;
	char *copy = strndup(line, len);
	const char *path;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	if (sscanf(copy, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %15s %" SCNu64 "%n", &start, &end,
		   perms, &pgoff, dev, &inode, &used) != 6 ||
	    end < start) {
		err = -EINVAL;
		goto out;
	}
	if (perms[2] != 'x')
		goto out;
	path = copy + used;
	while (*path == ' ' || *path == '\t')
		path++;
	if (!grow_array((void **)&m->v, &m->cap, m->n, sizeof(*m->v))) {
		err = -ENOMEM;
		goto out;
	}
	m->v[m->n] = (struct procmap){ .start = start, .end = end, .pgoff = pgoff };
	if (*path && !(m->v[m->n].path = strdup(path))) {
		err = -ENOMEM;
		goto out;
	}
	m->n++;
out:
	free(copy);
	return err;
}

static int cmp_start(const void *a, const void *b)
{
	const struct procmap *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

int procmaps_parse(struct procmaps *m, const char *text)
{
	memset(m, 0, sizeof(*m));
	while (*text) {
		const char *nl = strchr(text, '\n');
		size_t len = nl ? (size_t)(nl - text) : strlen(text);
		int err = len ? parse_line(m, text, len) : 0;

		if (err) {
			procmaps_free(m);
			return err;
		}
		text += len + (nl != NULL);
	}
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_start);
	return 0;
}

int procmaps_read(struct procmaps *m, int pid)
{
	char path[64];
	int fd;

	memset(m, 0, sizeof(*m));
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : procmaps_read_fd(m, fd);
}

int procmaps_read_fd(struct procmaps *m, int fd)
{
	char *text = NULL;
	size_t cap = 0, n = 0;
	FILE *f;
	int err;

	memset(m, 0, sizeof(*m));
	f = fdopen(fd, "r");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	for (;;) {
		size_t got;

		if (cap - n < 4096) {
			char *nt = realloc(text, cap + 65536);

			if (!nt) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = nt;
			cap += 65536;
		}
		got = fread(text + n, 1, cap - n - 1, f);
		n += got;
		if (!got)
			break;
	}
	err = ferror(f) ? -EIO : 0;
	fclose(f);
	text[n] = 0;
	if (!err)
		err = procmaps_parse(m, text);
	free(text);
	return err;
}

void procmaps_free(struct procmaps *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].path);
		free(m->v[i].open_path);
	}
	free(m->v);
	memset(m, 0, sizeof(*m));
}

const struct procmap *procmaps_find(const struct procmaps *m, uint64_t addr, uint64_t *off)
{
	size_t lo =
		count_at_or_below(m->v, m->n, sizeof(*m->v), offsetof(struct procmap, start), addr);
	const struct procmap *p;

	if (!lo || addr >= m->v[lo - 1].end)
		return NULL;
	p = &m->v[lo - 1];
	if (off)
		*off = addr - p->start + p->pgoff;
	return p;
}
