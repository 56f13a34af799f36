// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "report.h"
#include "format.h"

#include <stdlib.h>
#include <string.h>

#define TRUNC_MARK "...[truncated]"

struct row {
	const char *name;
	char *owned; /* name storage when built here */
	uint64_t count, total_ns, min_ns, max_ns;
};

static int by_time(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void header(FILE *out, uint32_t pid)
{
	fprintf(out, "==%u==%13s%9s%7s%9s%9s%9s  Name\n", pid, "Time(%)", "Time", "Calls", "Avg",
		"Min", "Max");
}

/* rows sorted by time, then the manual's totals line */
static void print_rows(FILE *out, uint32_t pid, struct row *rows, size_t n)
{
	char t[4][FMT_TIME_LEN];
	uint64_t total = 0, calls = 0;

	qsort(rows, n, sizeof(*rows), by_time);
	for (size_t i = 0; i < n; i++) {
		total += rows[i].total_ns;
		calls += rows[i].count;
	}
	for (size_t i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(out, "==%u==%12.2f%%%9s%7llu%9s%9s%9s %s\n", pid,
			total ? 100.0 * (double)r->total_ns / (double)total : 0.0,
			fmt_time(t[0], (double)r->total_ns), (unsigned long long)r->count,
			fmt_time(t[1], (double)r->total_ns / (double)r->count),
			fmt_time(t[2], (double)r->min_ns), fmt_time(t[3], (double)r->max_ns),
			r->name);
	}
	fprintf(out, "==%u==     Accumulate Time %s, Total Calls %llu\n", pid,
		fmt_time(t[0], (double)total), (unsigned long long)calls);
}

static void runtime_section(FILE *out, const struct model *m, uint32_t pid)
{
	struct row rows[256];
	size_t n = 0;

	fprintf(out, "==%u== RUNTIME activities:\n", pid);
	for (unsigned f = 0; f < api_table_len; f++) {
		const struct fn_stat *s = &m->stats[f];

		if (!s->count || api_table[f].domain != DOM_RUNTIME)
			continue;
		rows[n++] = (struct row){ api_table[f].name, NULL,	s->count,
					  s->total_ns,	     s->min_ns, s->max_ns };
	}
	if (!n)
		fprintf(out, "==%u==     does not contain runtime api data.\n", pid);
	else
		print_rows(out, pid, rows, n);
	fprintf(out, "==%u==\n", pid);
}

static char *range_label(const char *domain, const char *name, bool truncated)
{
	size_t len = (domain ? strlen(domain) + 2 : 0) + strlen(name) + sizeof(TRUNC_MARK);
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s%s%s%s", domain ? domain : "", domain ? "::" : "", name,
			 truncated ? TRUNC_MARK : "");
	return s;
}

static void topstx_section(FILE *out, const struct model *m, uint32_t pid)
{
	struct row *rows = calloc(m->nranges + 1, sizeof(*rows));
	size_t n = 0;

	fprintf(out, "\n==%u== TOPSTX activities:\n", pid);
	for (size_t i = 0; rows && i < m->nranges; i++) {
		const struct tx_range *r = &m->ranges[i];
		char *label = range_label(r->domain, r->name, r->truncated);
		uint64_t d = r->end_ns - r->start_ns;
		size_t k;

		if (!label)
			continue;
		for (k = 0; k < n && strcmp(rows[k].name, label); k++)
			;
		if (k == n) {
			rows[n++] = (struct row){ label, label, 0, 0, d, d };
		} else {
			free(label);
		}
		rows[k].count++;
		rows[k].total_ns += d;
		if (d < rows[k].min_ns)
			rows[k].min_ns = d;
		if (d > rows[k].max_ns)
			rows[k].max_ns = d;
	}
	if (!n && !m->nmarks)
		fprintf(out, "==%u==     does not contain topstx data.\n", pid);
	if (n)
		print_rows(out, pid, rows, n);
	for (size_t i = 0; i < m->nmarks; i++) {
		char *label = range_label(m->marks[i].domain, m->marks[i].name, false);

		fprintf(out, "==%u==     Mark %s: %llu\n", pid, label ? label : "?",
			(unsigned long long)m->marks[i].count);
		free(label);
	}
	if (m->tx_open)
		fprintf(out, "==%u==     %llu ranges were still open when profiling ended\n", pid,
			(unsigned long long)m->tx_open);
	fprintf(out, "==%u==\n", pid);
	for (size_t i = 0; i < n; i++)
		free(rows[i].owned);
	free(rows);
}

const char *report_op_label(const struct gcu_op *op, char *buf, size_t len)
{
	static const char *const dir[] = { "HtoH", "HtoD", "DtoH", "DtoD" };
	char size[32];

	fmt_bytes(size, sizeof(size), op->rec.bytes);
	switch (op->rec.kind) {
	case GCU_REC_KERNEL:
		if (op->name)
			return op->name;
		snprintf(buf, len, "[kernel name %u]", op->rec.name_id);
		break;
	case GCU_REC_MEMCPY:
		snprintf(buf, len, "[Memcpy %s %s]",
			 op->rec.copy_kind < 4 ? dir[op->rec.copy_kind] : "?", size);
		break;
	case GCU_REC_MEMSET:
		snprintf(buf, len, "[Memset %s]", size);
		break;
	default:
		snprintf(buf, len, "[Memcpy_%s %s]",
			 op->rec.engine == GCU_ENGINE_CDTE ? "cdte" : "sdte", size);
		break;
	}
	return buf;
}

/* one GCU block: dev < 0 for every device */
static void gcu_section(FILE *out, const struct model *m, uint32_t pid, int dev)
{
	struct row *rows = calloc(m->nops + 1, sizeof(*rows));
	char t[FMT_TIME_LEN];
	size_t n = 0;

	if (dev < 0)
		fprintf(out, "==%u== GCU activities:\n", pid);
	else
		fprintf(out, "==%u== GCU activities, device %d:\n", pid, dev);
	for (size_t i = 0; rows && i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[i];
		char buf[128];
		const char *label;
		uint64_t d = op->end_ns - op->start_ns;
		size_t k;

		if (dev >= 0 && op->rec.device != (uint32_t)dev)
			continue;
		label = report_op_label(op, buf, sizeof(buf));
		for (k = 0; k < n && strcmp(rows[k].name, label); k++)
			;
		if (k == n) {
			rows[n].owned = label == buf ? strdup(buf) : NULL;
			rows[n].name = rows[n].owned ? rows[n].owned : label;
			rows[n].min_ns = d;
			n++;
		}
		rows[k].count++;
		rows[k].total_ns += d;
		if (d < rows[k].min_ns)
			rows[k].min_ns = d;
		if (d > rows[k].max_ns)
			rows[k].max_ns = d;
	}
	if (!n) {
		fprintf(out, "==%u==     does not contain gcu kernel data.\n", pid);
	} else {
		print_rows(out, pid, rows, n);
		fprintf(out, "==%u==     Total Time %s\n", pid,
			fmt_time(t, (double)(m->span_end_ns - m->span_start_ns)));
	}
	fprintf(out, "==%u==\n\n", pid);
	for (size_t i = 0; i < n; i++)
		free(rows[i].owned);
	free(rows);
}

void report_summary(FILE *out, const struct model *m, const struct report_opts *o)
{
	uint32_t pid = o->pid;

	header(out, pid);
	if (!o->api_only) {
		if (!o->per_gcu) {
			gcu_section(out, m, pid, -1);
		} else {
			bool any = false;

			for (int d = 0; d < GCU_RO_MAX_DEVICES; d++) {
				if (!m->dev[d].present)
					continue;
				gcu_section(out, m, pid, d);
				any = true;
			}
			if (!any)
				gcu_section(out, m, pid, -1);
		}
		if (o->gcu_only)
			return;
		fprintf(out, "==%u== CPU activities:\n", pid);
		fprintf(out, "==%u==     does not contain cpu kernel data.\n\n", pid);
	}
	runtime_section(out, m, pid);
	topstx_section(out, m, pid);
}

static const struct model *sort_model;

static int by_start(const void *a, const void *b)
{
	const struct gcu_op *x = &sort_model->ops[*(const size_t *)a];
	const struct gcu_op *y = &sort_model->ops[*(const size_t *)b];

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->rec.launch_id < y->rec.launch_id ? -1 : x->rec.launch_id > y->rec.launch_id;
}

void report_gcu_trace(FILE *out, const struct model *m, uint32_t pid)
{
	size_t *idx = malloc((m->nops + 1) * sizeof(*idx));
	char t[3][FMT_TIME_LEN], buf[128];
	uint64_t total = 0, first;

	fprintf(out, "==%u==%11s%11s%33s Name\n", pid, "Start", "Duration", "Node Name");
	fprintf(out, "==%u== GCU trace:\n", pid);
	if (!idx || !m->nops) {
		fprintf(out, "==%u==     does not contain gcu kernel data.\n", pid);
		free(idx);
		return;
	}
	for (size_t i = 0; i < m->nops; i++)
		idx[i] = i;
	sort_model = m;
	qsort(idx, m->nops, sizeof(*idx), by_start);
	first = m->ops[idx[0]].start_ns;
	for (size_t i = 0; i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[idx[i]];
		uint64_t d = op->end_ns - op->start_ns;

		total += d;
		fprintf(out, "==%u==%11s%11s%33s %s\n", pid,
			fmt_time(t[0], (double)(op->start_ns - first)), fmt_time(t[1], (double)d),
			"", report_op_label(op, buf, sizeof(buf)));
	}
	fprintf(out, "==%u==     Accumulate Time %s, Total Calls %zu\n", pid,
		fmt_time(t[0], (double)total), m->nops);
	fprintf(out, "==%u==     Total Time %s\n", pid,
		fmt_time(t[2], (double)(m->span_end_ns - m->span_start_ns)));
	free(idx);
}

void report_progress(FILE *out, double seconds)
{
	fprintf(out,
		"process profile data[==========================================] 100%% %.3fs\n",
		seconds);
}
