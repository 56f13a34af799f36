// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/chrome.h"
#include "output/report.h"

#include <stdlib.h>
#include <string.h>

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

struct writer {
	FILE *out;
	uint64_t base; /* ns: time 0 of the trace */
	bool first;
};

static void begin(struct writer *w)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = false;
}

static double us(const struct writer *w, uint64_t ns)
{
	return ns >= w->base ? (double)(ns - w->base) / 1e3 : 0.0;
}

static void meta(struct writer *w, const char *what, uint64_t pid, int64_t tid, const char *name)
{
	begin(w);
	fprintf(w->out, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%llu,", what,
		(unsigned long long)pid);
	if (tid >= 0)
		fprintf(w->out, "\"tid\":%lld,", (long long)tid);
	fputs("\"args\":{\"name\":", w->out);
	json_str(w->out, name);
	fputs("}}", w->out);
}

static void slice(struct writer *w, const char *cat, const char *name, uint64_t pid, uint64_t tid,
		  uint64_t start, uint64_t end)
{
	begin(w);
	fprintf(w->out, "{\"ph\":\"X\",\"cat\":\"%s\",\"name\":", cat);
	json_str(w->out, name);
	fprintf(w->out, ",\"pid\":%llu,\"tid\":%llu,\"ts\":%.3f,\"dur\":%.3f",
		(unsigned long long)pid, (unsigned long long)tid, us(w, start),
		end > start ? (double)(end - start) / 1e3 : 0);
}

static uint64_t first_time(const struct model *m)
{
	uint64_t t = m->span_start_ns ? m->span_start_ns : UINT64_MAX;

	for (size_t i = 0; i < m->ncalls; i++)
		if (calls_start_ns(&m->calls, i) < t)
			t = calls_start_ns(&m->calls, i);
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i].start_ns < t)
			t = m->ops[i].start_ns;
	return t == UINT64_MAX ? 0 : t;
}

struct edge {
	uint64_t t;
	int delta;
};

static int by_time(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->delta - y->delta; /* an end before a start at the same time */
}

/* a counter per device: how many of its commands run at each moment */
static void busy_counters(struct writer *w, const struct model *m)
{
	struct edge *e = malloc((2 * m->nops + 1) * sizeof(*e));

	for (int d = 0; e && d < GCU_RO_MAX_DEVICES; d++) {
		size_t n = 0;
		int level = 0;

		for (size_t i = 0; i < m->nops; i++) {
			if (m->ops[i].rec.device != (uint32_t)d ||
			    m->ops[i].rec.kind == GCU_REC_DTE)
				continue;
			e[n++] = (struct edge){ m->ops[i].start_ns, 1 };
			e[n++] = (struct edge){ m->ops[i].end_ns, -1 };
		}
		qsort(e, n, sizeof(*e), by_time);
		for (size_t i = 0; i < n; i++) {
			level += e[i].delta;
			if (i + 1 < n && e[i + 1].t == e[i].t)
				continue; /* one value per moment */
			begin(w);
			fprintf(w->out,
				"{\"ph\":\"C\",\"name\":\"commands running\",\"pid\":%llu,"
				"\"ts\":%.3f,\"args\":{\"commands\":%d}}",
				(unsigned long long)CHROME_GCU_PID(d), us(w, e[i].t), level);
		}
	}
	free(e);
}

/* the utilization series: CPU % and memory as counters of their process (the host's apart) */
static void util_counters(struct writer *w, const struct util_profile *u)
{
	for (size_t i = 0; i < u->n; i++) {
		const struct util_series *s = &u->s[i];
		uint64_t pid = s->pid == UTIL_HOST_PID ? CHROME_HOST_PID : s->pid;

		if (s->pid == UTIL_HOST_PID && s->n)
			meta(w, "process_name", pid, -1, "host");
		for (size_t k = 0; k < s->n; k++) {
			const struct util_point *p = &s->v[k];

			if (u->cpu) {
				begin(w);
				fprintf(w->out,
					"{\"ph\":\"C\",\"name\":\"CPU %%\",\"pid\":%llu,"
					"\"ts\":%.3f,\"args\":{\"%s\":%.2f}}",
					(unsigned long long)pid, us(w, p->t_ns),
					s->pid == UTIL_HOST_PID ? "all CPUs" : "of one CPU",
					p->cpu);
			}
			if (!u->mem)
				continue;
			begin(w);
			fprintf(w->out,
				"{\"ph\":\"C\",\"name\":\"memory (MB)\",\"pid\":%llu,"
				"\"ts\":%.3f,\"args\":{",
				(unsigned long long)pid, us(w, p->t_ns));
			if (s->pid == UTIL_HOST_PID)
				fprintf(w->out, "\"in use\":%.3f}}", (double)p->rss / 1e6);
			else
				fprintf(w->out, "\"rss\":%.3f,\"vsz\":%.3f}}", (double)p->rss / 1e6,
					(double)p->vsz / 1e6);
		}
	}
}

void chrome_write(FILE *out, const struct model *m)
{
	struct writer w = { out, first_time(m), true };
	bool streams[GCU_RO_MAX_DEVICES][64] = { { false } };
	char buf[128];

	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	for (size_t i = 0; i < m->nprocs; i++) {
		snprintf(buf, sizeof(buf), "%s (pid %u)", m->procs[i].comm, m->procs[i].pid);
		meta(&w, "process_name", m->procs[i].pid, -1, buf);
	}
	if (!m->nprocs && m->root_pid) {
		snprintf(buf, sizeof(buf), "pid %u", m->root_pid);
		meta(&w, "process_name", m->root_pid, -1, buf);
	}
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++) {
		if (!m->dev[d].present)
			continue;
		snprintf(buf, sizeof(buf), "GCU %d", d);
		meta(&w, "process_name", CHROME_GCU_PID(d), -1, buf);
	}
	for (size_t i = 0; i < m->ncalls; i++) {
		struct api_call call, *c = &call;
		const struct api_fn *f;

		calls_get(&m->calls, i, c);
		f = &api_table[c->fn];
		slice(&w, api_domain_name(f->domain), f->name, c->pid, c->tid, c->start_ns,
		      c->end_ns);
		fprintf(out, ",\"args\":{\"ret\":%lld,\"category\":\"%s\"}}", (long long)c->ret,
			api_category_name(f->category));
	}
	for (size_t i = 0; i < m->nranges; i++) {
		const struct tx_range *r = &m->ranges[i];

		slice(&w, "topstx.range", r->name, r->pid, r->tid, r->start_ns, r->end_ns);
		fputs(",\"args\":{\"domain\":", out);
		json_str(out, r->domain ? r->domain : "default");
		fputs("}}", out);
	}
	for (size_t i = 0; i < m->nops; i++) {
		const struct gcu_op *op = &m->ops[i];
		uint32_t d = op->rec.device, s = op->rec.stream_id, pid, tid;

		if (d < GCU_RO_MAX_DEVICES && s < 64 && !streams[d][s]) {
			streams[d][s] = true;
			snprintf(buf, sizeof(buf), s ? "stream %u" : "default stream", s);
			meta(&w, "thread_name", CHROME_GCU_PID(d), s, buf);
		}
		slice(&w, report_op_type(op), report_op_label(op, buf, sizeof(buf)),
		      CHROME_GCU_PID(d), s, op->start_ns, op->end_ns);
		fprintf(out, ",\"args\":{\"launch\":%llu,\"pid\":%u,\"bytes\":%llu}}",
			(unsigned long long)op->rec.launch_id, op->rec.pid,
			(unsigned long long)op->rec.bytes);
		if (op->call < 0 || op->rec.kind == GCU_REC_DTE)
			continue;
		/* an arrow from the call to what it caused on the device */
		calls_thread(&m->calls, (size_t)op->call, &pid, &tid);
		begin(&w);
		fprintf(out,
			"{\"ph\":\"s\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu,\"pid\":%u,"
			"\"tid\":%u,\"ts\":%.3f}",
			i + 1, pid, tid, us(&w, calls_start_ns(&m->calls, (size_t)op->call)));
		begin(&w);
		fprintf(out,
			"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"launch\",\"name\":\"launch\",\"id\":%zu,"
			"\"pid\":%llu,\"tid\":%u,\"ts\":%.3f}",
			i + 1, (unsigned long long)CHROME_GCU_PID(d), s, us(&w, op->start_ns));
	}
	busy_counters(&w, m);
	util_counters(&w, &m->util);
	fputs("\n]}\n", out);
}
