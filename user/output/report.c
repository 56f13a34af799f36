// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Reports: each section is first built as a table of rows (name, calls, total, min, max), then
 * printed as the manual's text or as CSV, so that both always say the same. */
#include "output/report.h"
#include "lib/format.h"
#include "lib/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TRUNC_MARK "...[truncated]"

struct row {
	const char *name;
	char *owned; /* name storage when built here */
	uint64_t count, total_ns, min_ns, max_ns;
};

struct table {
	struct row *rows;
	size_t n, cap;
	uint64_t total_ns, calls;
};

static int by_time(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns > y->total_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* a new row; NULL when out of memory */
static struct row *table_put(struct table *t, const char *name, char *owned)
{
	if (!grow_array((void **)&t->rows, &t->cap, t->n, sizeof(*t->rows)))
		return NULL;
	t->rows[t->n] = (struct row){ name, owned, 0, 0, UINT64_MAX, 0 };
	return &t->rows[t->n++];
}

/* count one duration under name; owned is taken over (or freed) */
static void table_add(struct table *t, const char *name, char *owned, uint64_t d)
{
	size_t k;

	for (k = 0; k < t->n && strcmp(t->rows[k].name, name); k++)
		;
	if (k < t->n) {
		free(owned);
	} else if (!table_put(t, name, owned)) {
		free(owned);
		return;
	}
	t->rows[k].count++;
	t->rows[k].total_ns += d;
	if (d < t->rows[k].min_ns)
		t->rows[k].min_ns = d;
	if (d > t->rows[k].max_ns)
		t->rows[k].max_ns = d;
}

static void table_sort(struct table *t)
{
	t->total_ns = t->calls = 0;
	for (size_t i = 0; i < t->n; i++) {
		t->total_ns += t->rows[i].total_ns;
		t->calls += t->rows[i].count;
	}
	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), by_time);
}

static void table_free(struct table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].owned);
	free(t->rows);
	memset(t, 0, sizeof(*t));
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

const char *report_op_type(const struct gcu_op *op)
{
	switch (op->rec.kind) {
	case GCU_REC_KERNEL:
		return "Operator";
	case GCU_REC_DTE:
		return op->rec.engine == GCU_ENGINE_CDTE ? "Memcpy_cdte" : "Memcpy_sdte";
	default:
		return "Memcpy";
	}
}

/* the GCU section of one device (dev >= 0) or of all */
static void table_gcu(struct table *t, const struct model *m, int dev)
{
	for (size_t i = 0; i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[i];
		char buf[128];
		const char *label;

		if (dev >= 0 && op->rec.device != (uint32_t)dev)
			continue;
		label = report_op_label(op, buf, sizeof(buf));
		if (label == buf) {
			char *copy = strdup(buf);

			if (copy)
				table_add(t, copy, copy, op->end_ns - op->start_ns);
		} else {
			table_add(t, label, NULL, op->end_ns - op->start_ns);
		}
	}
	table_sort(t);
}

static void table_runtime(struct table *t, const struct model *m)
{
	for (unsigned f = 0; f < api_table_len; f++) {
		const struct fn_stat *s = &m->stats[f];
		struct row *r;

		if (!s->count || api_table[f].domain != DOM_RUNTIME)
			continue;
		r = table_put(t, api_table[f].name, NULL);
		if (r)
			*r = (struct row){ r->name,	NULL,	   s->count,
					   s->total_ns, s->min_ns, s->max_ns };
	}
	table_sort(t);
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

static void table_topstx(struct table *t, const struct model *m)
{
	for (size_t i = 0; i < m->nranges; i++) {
		const struct tx_range *r = &m->ranges[i];
		char *label = range_label(r->domain, r->name, r->truncated);

		if (label)
			table_add(t, label, label, r->end_ns - r->start_ns);
	}
	table_sort(t);
}

/* --- text ------------------------------------------------------------------------------------- */

/* The widths of the summary's columns after Time(%): the manual's (9, 7, 9, 9, 9), widened like
 * nvprof's to the longest value plus a blank, so that no two columns ever touch, at any size;
 * every section of a summary shares them, as it shares the header */
struct cols {
	int time, calls, avg, min, max;
};

static void widen(int *w, size_t len)
{
	if ((int)len + 1 > *w)
		*w = (int)len + 1;
}

static void widen_to(struct cols *c, const struct table *t)
{
	char s[FMT_TIME_LEN];

	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];

		widen(&c->time, strlen(fmt_time(s, (double)r->total_ns)));
		widen(&c->calls,
		      (size_t)snprintf(s, sizeof(s), "%llu", (unsigned long long)r->count));
		widen(&c->avg, strlen(fmt_time(s, (double)r->total_ns / (double)r->count)));
		widen(&c->min, strlen(fmt_time(s, (double)r->min_ns)));
		widen(&c->max, strlen(fmt_time(s, (double)r->max_ns)));
	}
}

static void header(FILE *out, uint32_t pid, const struct cols *c)
{
	fprintf(out, "==%u==%13s%*s%*s%*s%*s%*s  Name\n", pid, "Time(%)", c->time, "Time", c->calls,
		"Calls", c->avg, "Avg", c->min, "Min", c->max, "Max");
}

static void print_rows(FILE *out, uint32_t pid, const struct table *t, const struct cols *c)
{
	char s[4][FMT_TIME_LEN];

	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];

		fprintf(out, "==%u==%12.2f%%%*s%*llu%*s%*s%*s %s\n", pid,
			t->total_ns ? 100.0 * (double)r->total_ns / (double)t->total_ns : 0.0,
			c->time, fmt_time(s[0], (double)r->total_ns), c->calls,
			(unsigned long long)r->count, c->avg,
			fmt_time(s[1], (double)r->total_ns / (double)r->count), c->min,
			fmt_time(s[2], (double)r->min_ns), c->max,
			fmt_time(s[3], (double)r->max_ns), r->name);
	}
	fprintf(out, "==%u==     Accumulate Time %s, Total Calls %llu\n", pid,
		fmt_time(s[0], (double)t->total_ns), (unsigned long long)t->calls);
}

static void gcu_section(FILE *out, const struct model *m, uint32_t pid, int dev,
			const struct table *t, const struct cols *c)
{
	char s[FMT_TIME_LEN];

	if (dev < 0)
		fprintf(out, "==%u== GCU activities:\n", pid);
	else
		fprintf(out, "==%u== GCU activities, device %d:\n", pid, dev);
	if (!t->n) {
		fprintf(out, "==%u==     does not contain gcu kernel data.\n", pid);
	} else {
		print_rows(out, pid, t, c);
		fprintf(out, "==%u==     Total Time %s\n", pid,
			fmt_time(s, (double)(m->span_end_ns - m->span_start_ns)));
	}
	fprintf(out, "==%u==\n\n", pid);
}

static void runtime_section(FILE *out, uint32_t pid, const struct table *t, const struct cols *c)
{
	fprintf(out, "==%u== RUNTIME activities:\n", pid);
	if (!t->n)
		fprintf(out, "==%u==     does not contain runtime api data.\n", pid);
	else
		print_rows(out, pid, t, c);
	fprintf(out, "==%u==\n", pid);
}

static void topstx_section(FILE *out, const struct model *m, uint32_t pid, const struct table *t,
			   const struct cols *c)
{
	fprintf(out, "\n==%u== TOPSTX activities:\n", pid);
	if (!t->n && !m->nmarks)
		fprintf(out, "==%u==     does not contain topstx data.\n", pid);
	if (t->n)
		print_rows(out, pid, t, c);
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
}

#define CPU_TOP_FUNCTIONS 20

/* sampled call stacks: the functions by samples at the top of the stack (self) and anywhere in
 * it (total) */
static void cpu_section(FILE *out, const struct model *m, uint32_t pid)
{
	const struct cpu_profile *p = &m->cpu;
	struct cpu_fn *fns = NULL;
	char t[2][FMT_TIME_LEN];
	int self_w = 9, total_w = 9;
	size_t n = 0;

	fprintf(out, "==%u== CPU activities:\n", pid);
	if (!p->sampled || !p->samples) {
		fprintf(out, "==%u==     %s.\n\n", pid,
			p->sampled ? "no CPU samples of the profiled processes"
				   : "does not contain cpu kernel data");
		return;
	}
	if (cpu_profile_functions(p, &fns, &n)) {
		fprintf(out, "==%u==     out of memory\n\n", pid);
		return;
	}
	fprintf(out, "==%u==     %llu samples at %u Hz\n", pid, (unsigned long long)p->samples,
		p->hz);
	/* the time columns widened as the summary's are (hours of samples on many threads) */
	for (size_t i = 0; i < n && i < CPU_TOP_FUNCTIONS; i++) {
		widen(&self_w, strlen(fmt_time(t[0], (double)fns[i].self * 1e9 / p->hz)));
		widen(&total_w, strlen(fmt_time(t[0], (double)fns[i].total * 1e9 / p->hz)));
	}
	fprintf(out, "==%u==%13s%*s%10s%*s  Function\n", pid, "Self(%)", self_w, "Self", "Total(%)",
		total_w, "Total");
	for (size_t i = 0; i < n && i < CPU_TOP_FUNCTIONS; i++)
		fprintf(out, "==%u==%12.2f%%%*s%9.2f%%%*s %s\n", pid,
			100.0 * (double)fns[i].self / (double)p->samples, self_w,
			fmt_time(t[0], (double)fns[i].self * 1e9 / p->hz),
			100.0 * (double)fns[i].total / (double)p->samples, total_w,
			fmt_time(t[1], (double)fns[i].total * 1e9 / p->hz), fns[i].name);
	if (n > CPU_TOP_FUNCTIONS)
		fprintf(out, "==%u==     (%zu more functions: --export-folded has every stack)\n",
			pid, n - CPU_TOP_FUNCTIONS);
	if (p->unwound) {
		uint64_t cut = 0;

		for (int e = 0; e < STACK_END__COUNT; e++)
			cut += e == STACK_END_ENTRY ? 0 : p->ends[e];
		/* every reason a stack was cut, when any was */
		if (cut)
			fprintf(out,
				"==%u==     %.2f%% of the samples have user stacks cut short:\n",
				pid, 100.0 * (double)cut / (double)p->samples);
		for (int e = 0; cut && e < STACK_END__COUNT; e++)
			if (e != STACK_END_ENTRY && p->ends[e])
				fprintf(out, "==%u==       %.2f%% %s\n", pid,
					100.0 * (double)p->ends[e] / (double)p->samples,
					stack_end_name((enum stack_end)e));
	} else if (p->truncated_samples * 10 > p->samples) {
		fprintf(out,
			"==%u==     %.0f%% of the samples have user stacks that stop short of a "
			"thread's entry: frame pointers may be missing (-fno-omit-frame-pointer)\n",
			pid, 100.0 * (double)p->truncated_samples / (double)p->samples);
	}
	fprintf(out, "==%u==\n\n", pid);
	cpu_fns_free(fns, n);
}

static void util_head(FILE *out, uint32_t pid, const char *what, const struct util_profile *u)
{
	struct util_summary longest = { 0 }, sum;
	char t[FMT_TIME_LEN];

	for (size_t i = 0; i < u->n; i++) {
		util_summarize(&u->s[i], &sum);
		if (sum.samples > longest.samples)
			longest = sum;
	}
	fprintf(out, "==%u== %s utilization:\n", pid, what);
	fprintf(out, "==%u==     %zu samples at %u Hz over %s", pid, longest.samples, u->hz,
		fmt_time(t, (double)(longest.last_ns - longest.first_ns)));
	if (u->hz > 10 && u->n && u->s[0].pid == UTIL_HOST_PID)
		fprintf(out, " (the host's: %zu, /proc/stat counts in 10 ms ticks)", u->s[0].n);
	if (u->missed)
		fprintf(out, ", %llu sampling periods missed", (unsigned long long)u->missed);
	fputc('\n', out);
}

static void util_label(char *buf, size_t len, const struct util_series *s)
{
	if (s->pid == UTIL_HOST_PID)
		snprintf(buf, len, "host");
	else
		snprintf(buf, len, "%u %s", s->pid, s->comm);
}

static void util_section(FILE *out, const struct model *m, uint32_t pid)
{
	const struct util_profile *u = &m->util;
	char b[4][32], label[48];
	struct util_summary sum;
	size_t points = 0;

	for (size_t i = 0; i < u->n; i++)
		points += u->s[i].n;
	if (!points) {
		if (u->cpu || u->mem)
			fprintf(out, "==%u== Utilization:\n==%u==     no samples.\n\n", pid, pid);
		return;
	}
	if (u->cpu) {
		util_head(out, pid, "CPU", u);
		fprintf(out, "==%u==     a process's share is of one CPU, the host's of all %u\n",
			pid, u->ncpus);
		fprintf(out, "==%u==%13s%10s  Process\n", pid, "Avg", "Max");
		for (size_t i = 0; i < u->n; i++) {
			util_summarize(&u->s[i], &sum);
			util_label(label, sizeof(label), &u->s[i]);
			fprintf(out, "==%u==%12.2f%%%9.2f%%  %s\n", pid, sum.cpu_avg, sum.cpu_max,
				label);
		}
		fprintf(out, "==%u==\n\n", pid);
	}
	if (u->mem) {
		util_head(out, pid, "Memory", u);
		fprintf(out, "==%u==     the host's is memory in use, of %s\n", pid,
			fmt_bytes(b[0], sizeof(b[0]), u->mem_total));
		fprintf(out, "==%u==%13s%11s%11s%11s  Process\n", pid, "Avg RSS", "Max RSS",
			"Avg VSZ", "Max VSZ");
		for (size_t i = 0; i < u->n; i++) {
			bool host = u->s[i].pid == UTIL_HOST_PID;

			util_summarize(&u->s[i], &sum);
			util_label(label, sizeof(label), &u->s[i]);
			fprintf(out, "==%u==%13s%11s%11s%11s  %s\n", pid,
				fmt_bytes(b[0], sizeof(b[0]), (uint64_t)sum.rss_avg),
				fmt_bytes(b[1], sizeof(b[1]), sum.rss_max),
				host ? "-" : fmt_bytes(b[2], sizeof(b[2]), (uint64_t)sum.vsz_avg),
				host ? "-" : fmt_bytes(b[3], sizeof(b[3]), sum.vsz_max), label);
		}
		fprintf(out, "==%u==\n\n", pid);
	}
}

#define KERNEL_TOP_ENTRIES 20
#define KERNEL_TOP_STACKS  10
#define KERNEL_MAX_FRAMES  24

/* a stack's frames, innermost first, one per line */
static void kernel_frames(FILE *out, uint32_t pid, const char *frames)
{
	const char *end = frames + strlen(frames), *p = end;
	int shown = 0, all = 1;

	for (const char *c = frames; *c; c++)
		all += *c == ';';
	while (p > frames && shown < KERNEL_MAX_FRAMES) {
		const char *start = p;
		size_t len;

		while (start > frames && start[-1] != ';')
			start--;
		len = (size_t)(p - start);
		if (len > 4 && !strncmp(p - 4, "_[k]", 4))
			fprintf(out, "==%u==           %.*s\n", pid, (int)(len - 4), start);
		else
			fprintf(out, "==%u==           %.*s (user)\n", pid, (int)len, start);
		shown++;
		p = start > frames ? start - 1 : frames;
	}
	if (all > shown)
		fprintf(out, "==%u==           ... %d more\n", pid, all - shown);
}

static void kernel_section(FILE *out, const struct model *m, uint32_t pid)
{
	const struct kernel_profile *p = &m->kernel;
	struct cols c = { 9, 7, 9, 0, 9 };
	char t[4][FMT_TIME_LEN];
	uint64_t total = 0;

	if (!p->collected)
		return;
	fprintf(out, "==%u== KERNEL activities:\n", pid);
	fprintf(out, "==%u==     through %s; filter %s\n", pid, p->mechanism ? p->mechanism : "?",
		p->filter ? p->filter : "current");
	if (!p->ne && !p->ns) {
		fprintf(out, "==%u==     no kernel activity of the processes the filter takes.\n\n",
			pid);
		return;
	}
	for (size_t i = 0; i < p->ne; i++)
		total += p->e[i].total_ns;
	/* its columns widened as the summary's are */
	for (size_t i = 0; i < p->ne && i < KERNEL_TOP_ENTRIES; i++) {
		const struct kernel_entry *e = &p->e[i];

		widen(&c.time, strlen(fmt_time(t[0], (double)e->total_ns)));
		widen(&c.calls,
		      (size_t)snprintf(t[0], sizeof(t[0]), "%llu", (unsigned long long)e->calls));
		widen(&c.avg,
		      strlen(fmt_time(t[0],
				      e->calls ? (double)e->total_ns / (double)e->calls : 0)));
		widen(&c.max, strlen(fmt_time(t[0], (double)e->max_ns)));
	}
	fprintf(out, "==%u==%13s%*s%*s%*s%*s  Name\n", pid, "Time(%)", c.time, "Time", c.calls,
		"Calls", c.avg, "Avg", c.max, "Max");
	for (size_t i = 0; i < p->ne && i < KERNEL_TOP_ENTRIES; i++) {
		const struct kernel_entry *e = &p->e[i];

		fprintf(out, "==%u==%12.2f%%%*s%*llu%*s%*s  %s%s\n", pid,
			total ? 100.0 * (double)e->total_ns / (double)total : 0.0, c.time,
			fmt_time(t[0], (double)e->total_ns), c.calls, (unsigned long long)e->calls,
			c.avg,
			fmt_time(t[1], e->calls ? (double)e->total_ns / (double)e->calls : 0),
			c.max, fmt_time(t[2], (double)e->max_ns), e->name,
			e->driver ? " (driver)" : "");
	}
	if (p->ne > KERNEL_TOP_ENTRIES)
		fprintf(out, "==%u==     (%zu more entry points)\n", pid,
			p->ne - KERNEL_TOP_ENTRIES);
	if (p->ns)
		fprintf(out, "==%u==     Top kernel stacks, by time:\n", pid);
	for (size_t i = 0; i < p->ns && i < KERNEL_TOP_STACKS; i++) {
		const struct kernel_stack *s = &p->s[i];

		fprintf(out, "==%u==     %zu) %s %s, %llu %s, max %s, %s%s%s%s (pid %u)\n", pid,
			i + 1, fmt_time(t[0], (double)s->total_ns),
			s->offcpu ? "off CPU" : "in the call", (unsigned long long)s->count,
			s->offcpu ? (s->count == 1 ? "wait" : "waits")
				  : (s->count == 1 ? "call" : "calls"),
			fmt_time(t[1], (double)s->max_ns), s->entry ? "in " : "",
			s->entry ? s->entry : "",
			s->driver  ? " (driver), "
			: s->entry ? ", "
				   : "",
			s->comm, s->pid);
		kernel_frames(out, pid, s->frames);
	}
	if (p->ns > KERNEL_TOP_STACKS)
		fprintf(out, "==%u==     (%zu more stacks)\n", pid, p->ns - KERNEL_TOP_STACKS);
	fprintf(out, "==%u==\n\n", pid);
}

/* the devices a per-GCU report has blocks for */
static bool any_device(const struct model *m)
{
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		if (m->dev[d].present)
			return true;
	return false;
}

void report_summary(FILE *out, const struct model *m, const struct report_opts *o)
{
	/* the tables first: the header's widths are theirs */
	struct table gcu[GCU_RO_MAX_DEVICES + 1] = { 0 }, rt = { 0 }, tx = { 0 };
	struct cols c = { 9, 7, 9, 9, 9 };
	bool per_gcu = o->per_gcu && any_device(m), gcu_only = o->gcu_only && !o->api_only;
	uint32_t pid = o->pid;

	for (int d = -1; d < GCU_RO_MAX_DEVICES && !o->api_only; d++)
		if (per_gcu ? d >= 0 && m->dev[d].present : d < 0) {
			table_gcu(&gcu[d + 1], m, d);
			widen_to(&c, &gcu[d + 1]);
		}
	if (!gcu_only) {
		table_runtime(&rt, m);
		table_topstx(&tx, m);
		widen_to(&c, &rt);
		widen_to(&c, &tx);
	}
	header(out, pid, &c);
	for (int d = -1; d < GCU_RO_MAX_DEVICES && !o->api_only; d++)
		if (per_gcu ? d >= 0 && m->dev[d].present : d < 0)
			gcu_section(out, m, pid, d, &gcu[d + 1], &c);
	if (!o->api_only && !gcu_only) {
		cpu_section(out, m, pid);
		util_section(out, m, pid);
		kernel_section(out, m, pid);
	}
	if (!gcu_only) {
		runtime_section(out, pid, &rt, &c);
		topstx_section(out, m, pid, &tx, &c);
	}
	for (int d = 0; d <= GCU_RO_MAX_DEVICES; d++)
		table_free(&gcu[d]);
	table_free(&rt);
	table_free(&tx);
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

/* the records in time order: an array of indices the caller frees */
static size_t *trace_order(const struct model *m)
{
	size_t *idx = malloc((m->nops + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < m->nops; i++)
		idx[i] = i;
	sort_model = m;
	qsort(idx, m->nops, sizeof(*idx), by_start);
	return idx;
}

void report_gcu_trace(FILE *out, const struct model *m, uint32_t pid)
{
	size_t *idx = trace_order(m);
	char t[3][FMT_TIME_LEN], buf[128];
	uint64_t total = 0, first;

	fprintf(out, "==%u==%11s%11s%33s Name\n", pid, "Start", "Duration", "Node Name");
	fprintf(out, "==%u== GCU trace:\n", pid);
	if (!idx || !m->nops) {
		fprintf(out, "==%u==     does not contain gcu kernel data.\n", pid);
		free(idx);
		return;
	}
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

/* --- CSV (RFC 4180) ----------------------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static void csv_rows(FILE *out, const char *type, const struct table *t)
{
	char s[4][FMT_TIME_LEN];

	for (size_t i = 0; i < t->n; i++) {
		const struct row *r = &t->rows[i];

		fprintf(out, "%s,%.2f,%s,%llu,%s,%s,%s,", type,
			t->total_ns ? 100.0 * (double)r->total_ns / (double)t->total_ns : 0.0,
			fmt_time(s[0], (double)r->total_ns), (unsigned long long)r->count,
			fmt_time(s[1], (double)r->total_ns / (double)r->count),
			fmt_time(s[2], (double)r->min_ns), fmt_time(s[3], (double)r->max_ns));
		csv_field(out, r->name);
		fputs("\r\n", out);
	}
}

void report_csv_summary(FILE *out, const struct model *m, const struct report_opts *o)
{
	struct table t = { 0 };

	fputs("Type,Time(%),Time,Calls,Avg,Min,Max,Name\r\n", out);
	if (!o->api_only) {
		if (o->per_gcu && any_device(m)) {
			for (int d = 0; d < GCU_RO_MAX_DEVICES; d++) {
				char type[16];

				if (!m->dev[d].present)
					continue;
				snprintf(type, sizeof(type), "GCU%d", d);
				table_gcu(&t, m, d);
				csv_rows(out, type, &t);
				table_free(&t);
			}
		} else {
			table_gcu(&t, m, -1);
			csv_rows(out, "GCU", &t);
			table_free(&t);
		}
		if (o->gcu_only)
			return;
	}
	table_runtime(&t, m);
	csv_rows(out, "RUNTIME", &t);
	table_free(&t);
	table_topstx(&t, m);
	csv_rows(out, "TOPSTX", &t);
	table_free(&t);
}

void report_csv_gcu_trace(FILE *out, const struct model *m)
{
	size_t *idx = trace_order(m);
	char t[2][FMT_TIME_LEN], buf[128];

	fputs("Type,Start,Duration,KernelId,DeviceId,StreamId,Name\r\n", out);
	for (size_t i = 0; idx && i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[idx[i]];

		fprintf(out, "%s,%s,%s,%llu,%u,%u,", report_op_type(op),
			fmt_time(t[0], (double)(op->start_ns - m->ops[idx[0]].start_ns)),
			fmt_time(t[1], (double)(op->end_ns - op->start_ns)),
			(unsigned long long)op->rec.launch_id, op->rec.device, op->rec.stream_id);
		csv_field(out, report_op_label(op, buf, sizeof(buf)));
		fputs("\r\n", out);
	}
	free(idx);
}
