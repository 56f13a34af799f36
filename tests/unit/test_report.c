// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The text report and the CSV export, column by column, from a model built the way a live run
 * builds it (API calls, GCU records on two devices, topstx ranges). Users' scripts read these
 * outputs by position and by header, so a moved, renamed or reordered column must fail here,
 * not only in the end-to-end tests. Every expected number is computed by hand from the inputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcu/correlate.h"
#include "model/model.h"
#include "output/report.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define PID  4242u
#define PFX  "==4242=="

/* the host's clock at tick 0 of both devices */
#define HOST0 1000000ull

/* the manual's kernels; scalar_add runs on both devices */
#define SCALAR "scalar_add(float*, float*, float*, unsigned long)"
#define VECTOR "vector_add(float*, float*, float*, unsigned long)"
/* a C++ literal operator: a kernel name with quotes in it */
#define LITERAL "operator\"\" _kb(unsigned long long)"
/* a topstx range named with a comma and quotes */
#define LOAD   "load, \"data\""

#define HTOD   "[Memcpy HtoD 4.00MB]"
#define DTOH   "[Memcpy DtoH 4.00MB]"
#define CDTE   "[Memcpy_cdte 16.38KB]"
#define SDTE   "[Memcpy_sdte 8.19KB]"
#define MEMSET "[Memset 999B]"

/* --- the model -------------------------------------------------------------------------------- */

static uint64_t next_call_id = 1;

/* one API call as the probes deliver it: its message first, then the call when it returns */
static void api_call(struct model *m, const char *fn, uint64_t start_ns, uint64_t dur_ns,
		     const char *msg)
{
	struct tp_api_event e;

	assert_true(api_find(fn) >= 0);
	memset(&e, 0, sizeof(e));
	e.hdr.type = EV_API_CALL;
	e.hdr.pid = PID;
	e.hdr.tid = PID;
	e.hdr.ts_ns = start_ns + dur_ns;
	e.start_ns = start_ns;
	e.call_id = next_call_id++;
	e.fn = (uint32_t)api_find(fn);
	if (msg) {
		struct tp_str_event *s = calloc(1, sizeof(*s));

		assert_non_null(s);
		assert_true(strlen(msg) <= sizeof(s->data));
		s->hdr.type = EV_API_STR;
		s->call_id = e.call_id;
		s->len = (uint16_t)strlen(msg);
		s->last = API_STR_END;
		memcpy(s->data, msg, s->len);
		model_add_str(m, s);
		free(s);
	}
	model_add_call(m, &e);
}

/* a topstx range: pushed at start_ns, ended when the pop returns dur_ns later */
static void tx_range(struct model *m, const char *name, uint64_t start_ns, uint64_t dur_ns)
{
	api_call(m, "topstxRangePushA", start_ns, 100, name);
	api_call(m, "topstxRangePop", start_ns + dur_ns - 100, 100, NULL);
}

/* a device as the GCU source opens it: one clock-sync pair, so ticks map at the nominal rate */
static void device(struct model *m, int dev, uint64_t tick_hz)
{
	m->dev[dev].present = true;
	m->dev[dev].tick_hz = tick_hz;
	model_add_sync(m, dev, HOST0, 0);
}

static void gcu(struct model *m, struct gcu_record r, const char *name)
{
	r.pid = PID;
	r.tid = PID;
	model_add_gcu(m, &r, name);
}

/* the live run's order (user/app/present.c, finish_model): own records, statistics from the calls
 * and ranges paired, records put on the host clock, then joined to their calls */
static void finish(struct model *m)
{
	model_keep_own_gcu(m);
	model_finish(m, true, NULL);
	gcu_align(m);
	gcu_join(m);
}

/*
 * Device 0 ticks at 1 GHz (host = HOST0 + ticks), device 1 at 2 GHz (host = HOST0 + ticks / 2).
 * Host times from HOST0, with the GCU trace's relative starts:
 *   0.00ns    warm_up()           13.44us  dev 0, launch 1, stream 0
 *   20.00us   HtoD 4 MB           300us    dev 0, launch 2, stream 0
 *   400.00us  HtoD 4 MB           400us    dev 0, launch 3, stream 1
 *   1.00ms    scalar_add          56.61ms  dev 0, launch 4, stream 1
 *   1.00ms    scalar_add          16.61ms  dev 1, launch 8, stream 2 (same start: launch order)
 *   1.10ms    CDTE 16384 B        1us      dev 0, launch 4 (scalar_add's own move)
 *   20.00ms   operator"" _kb      2ms      dev 1, launch 9, stream 2
 *   20.50ms   SDTE 8192 B         1us      dev 1, launch 9
 *   58.00ms   vector_add          8.55ms   dev 0, launch 5, stream 1
 *   67.00ms   DtoH 4 MB           250us    dev 0, launch 6, stream 1
 *   67.30ms   memset 999 B        500ns    dev 0, launch 7, stream 0
 * GCU accumulated: 84.74ms in 11 records (device 0: 66.12ms in 8; device 1: 18.61ms in 3).
 * Runtime (1.16ms in 10 calls): topsStreamSynchronize 100, 600, 200us; topsMemcpyAsync 50,
 * 70us; topsLaunchKernel 10, 20, 30us; topsMalloc 60us (the same total as the launches: the
 * name breaks the tie); topsFree 20us.
 * Topstx (14us in 3 ranges): "step" 1 and 3us, LOAD 10us; a mark "checked".
 * The profiled span is 100ms.
 */
static void build(struct model *m)
{
	static const struct {
		const char *fn;
		uint64_t dur_ns;
	} calls[] = {
		{ "topsMalloc", 60000 },
		{ "topsMemcpyAsync", 50000 },
		{ "topsLaunchKernel", 10000 },
		{ "topsLaunchKernel", 20000 },
		{ "topsLaunchKernel", 30000 },
		{ "topsMemcpyAsync", 70000 },
		{ "topsStreamSynchronize", 100000 },
		{ "topsStreamSynchronize", 600000 },
		{ "topsStreamSynchronize", 200000 },
		{ "topsFree", 20000 },
	};

	model_init(m);
	m->root_pid = PID;
	m->span_start_ns = 500000;
	m->span_end_ns = 100500000;
	m->gcu_activities = GCU_ACT_OPERATOR | GCU_ACT_MEMCPY | GCU_ACT_CDTE | GCU_ACT_SDTE;
	device(m, 0, 1000000000);
	device(m, 1, 2000000000);
	/* device 1 first: the reports sort, they do not keep the order records arrive in */
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_KERNEL,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 1,
				 .stream_id = 2,
				 .launch_id = 8,
				 .name_id = 1,
				 .start_ticks = 2000000,
				 .end_ticks = 35220000 },
	    SCALAR);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_KERNEL,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 1,
				 .stream_id = 2,
				 .launch_id = 9,
				 .name_id = 2,
				 .start_ticks = 40000000,
				 .end_ticks = 44000000 },
	    LITERAL);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_DTE,
				 .engine = GCU_ENGINE_SDTE,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 1,
				 .stream_id = 2,
				 .launch_id = 9,
				 .name_id = 2,
				 .start_ticks = 41000000,
				 .end_ticks = 41002000,
				 .bytes = 8192 },
	    LITERAL);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_KERNEL,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 0,
				 .stream_id = 0,
				 .launch_id = 1,
				 .name_id = 1,
				 .start_ticks = 0,
				 .end_ticks = 13440 },
	    "warm_up()");
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_MEMCPY,
				 .engine = GCU_ENGINE_ODTE,
				 .copy_kind = GCU_COPY_HTOD,
				 .device = 0,
				 .stream_id = 0,
				 .launch_id = 2,
				 .start_ticks = 20000,
				 .end_ticks = 320000,
				 .bytes = 4000000 },
	    NULL);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_MEMCPY,
				 .engine = GCU_ENGINE_ODTE,
				 .copy_kind = GCU_COPY_HTOD,
				 .device = 0,
				 .stream_id = 1,
				 .launch_id = 3,
				 .start_ticks = 400000,
				 .end_ticks = 800000,
				 .bytes = 4000000 },
	    NULL);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_KERNEL,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 0,
				 .stream_id = 1,
				 .launch_id = 4,
				 .name_id = 2,
				 .start_ticks = 1000000,
				 .end_ticks = 57610000 },
	    SCALAR);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_DTE,
				 .engine = GCU_ENGINE_CDTE,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 0,
				 .stream_id = 1,
				 .launch_id = 4,
				 .name_id = 2,
				 .start_ticks = 1100000,
				 .end_ticks = 1101000,
				 .bytes = 16384 },
	    SCALAR);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_KERNEL,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 0,
				 .stream_id = 1,
				 .launch_id = 5,
				 .name_id = 3,
				 .start_ticks = 58000000,
				 .end_ticks = 66550000 },
	    VECTOR);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_MEMCPY,
				 .engine = GCU_ENGINE_ODTE,
				 .copy_kind = GCU_COPY_DTOH,
				 .device = 0,
				 .stream_id = 1,
				 .launch_id = 6,
				 .start_ticks = 67000000,
				 .end_ticks = 67250000,
				 .bytes = 4000000 },
	    NULL);
	gcu(m,
	    (struct gcu_record){ .kind = GCU_REC_MEMSET,
				 .engine = GCU_ENGINE_ODTE,
				 .copy_kind = GCU_COPY_NONE,
				 .device = 0,
				 .stream_id = 0,
				 .launch_id = 7,
				 .start_ticks = 67300000,
				 .end_ticks = 67300500,
				 .bytes = 999 },
	    NULL);
	for (size_t i = 0; i < N(calls); i++)
		api_call(m, calls[i].fn, HOST0 + i * 1000000, calls[i].dur_ns, NULL);
	tx_range(m, "step", 20000000, 1000);
	tx_range(m, "step", 21000000, 3000);
	tx_range(m, LOAD, 22000000, 10000);
	api_call(m, "topstxMark", 23000000, 100, "checked");
	finish(m);
}

static int setup(void **state)
{
	struct model *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	build(m);
	*state = m;
	return 0;
}

static int teardown(void **state)
{
	model_free(*state);
	free(*state);
	return 0;
}

/* --- what the reports must say ---------------------------------------------------------------- */

struct want_row {
	const char *pct, *time, *calls, *avg, *min, *max, *name;
};

/* by total time, longest first; equal times by name */
static const struct want_row gcu_all[] = {
	{ "86.41", "73.22ms", "2", "36.61ms", "16.61ms", "56.61ms", SCALAR },
	{ "10.09", "8.55ms", "1", "8.55ms", "8.55ms", "8.55ms", VECTOR },
	{ "2.36", "2.00ms", "1", "2.00ms", "2.00ms", "2.00ms", LITERAL },
	{ "0.83", "700.00us", "2", "350.00us", "300.00us", "400.00us", HTOD },
	{ "0.30", "250.00us", "1", "250.00us", "250.00us", "250.00us", DTOH },
	{ "0.02", "13.44us", "1", "13.44us", "13.44us", "13.44us", "warm_up()" },
	{ "0.00", "1.00us", "1", "1.00us", "1.00us", "1.00us", CDTE },
	{ "0.00", "1.00us", "1", "1.00us", "1.00us", "1.00us", SDTE },
	{ "0.00", "500.00ns", "1", "500.00ns", "500.00ns", "500.00ns", MEMSET },
};
#define GCU_ALL_TOTALS PFX "     Accumulate Time 84.74ms, Total Calls 11"

static const struct want_row gcu_dev0[] = {
	{ "85.61", "56.61ms", "1", "56.61ms", "56.61ms", "56.61ms", SCALAR },
	{ "12.93", "8.55ms", "1", "8.55ms", "8.55ms", "8.55ms", VECTOR },
	{ "1.06", "700.00us", "2", "350.00us", "300.00us", "400.00us", HTOD },
	{ "0.38", "250.00us", "1", "250.00us", "250.00us", "250.00us", DTOH },
	{ "0.02", "13.44us", "1", "13.44us", "13.44us", "13.44us", "warm_up()" },
	{ "0.00", "1.00us", "1", "1.00us", "1.00us", "1.00us", CDTE },
	{ "0.00", "500.00ns", "1", "500.00ns", "500.00ns", "500.00ns", MEMSET },
};
#define GCU_DEV0_TOTALS PFX "     Accumulate Time 66.12ms, Total Calls 8"

static const struct want_row gcu_dev1[] = {
	{ "89.25", "16.61ms", "1", "16.61ms", "16.61ms", "16.61ms", SCALAR },
	{ "10.75", "2.00ms", "1", "2.00ms", "2.00ms", "2.00ms", LITERAL },
	{ "0.01", "1.00us", "1", "1.00us", "1.00us", "1.00us", SDTE },
};
#define GCU_DEV1_TOTALS PFX "     Accumulate Time 18.61ms, Total Calls 3"

static const struct want_row runtime[] = {
	{ "77.59", "900.00us", "3", "300.00us", "100.00us", "600.00us", "topsStreamSynchronize" },
	{ "10.34", "120.00us", "2", "60.00us", "50.00us", "70.00us", "topsMemcpyAsync" },
	{ "5.17", "60.00us", "3", "20.00us", "10.00us", "30.00us", "topsLaunchKernel" },
	{ "5.17", "60.00us", "1", "60.00us", "60.00us", "60.00us", "topsMalloc" },
	{ "1.72", "20.00us", "1", "20.00us", "20.00us", "20.00us", "topsFree" },
};
#define RUNTIME_TOTALS PFX "     Accumulate Time 1.16ms, Total Calls 10"

static const struct want_row topstx[] = {
	{ "71.43", "10.00us", "1", "10.00us", "10.00us", "10.00us", LOAD },
	{ "28.57", "4.00us", "2", "2.00us", "1.00us", "3.00us", "step" },
};
#define TOPSTX_TOTALS PFX "     Accumulate Time 14.00us, Total Calls 3"

#define TOTAL_TIME    PFX "     Total Time 100.00ms"

/* the GCU trace, in time order: CSV's columns (the text shows Start, Duration and Name) */
struct want_trace {
	const char *type, *start, *dur, *launch, *dev, *stream, *name;
};

static const struct want_trace trace[] = {
	{ "Operator", "0.00ns", "13.44us", "1", "0", "0", "warm_up()" },
	{ "Memcpy", "20.00us", "300.00us", "2", "0", "0", HTOD },
	{ "Memcpy", "400.00us", "400.00us", "3", "0", "1", HTOD },
	{ "Operator", "1.00ms", "56.61ms", "4", "0", "1", SCALAR },
	{ "Operator", "1.00ms", "16.61ms", "8", "1", "2", SCALAR },
	{ "Memcpy_cdte", "1.10ms", "1.00us", "4", "0", "1", CDTE },
	{ "Operator", "20.00ms", "2.00ms", "9", "1", "2", LITERAL },
	{ "Memcpy_sdte", "20.50ms", "1.00us", "9", "1", "2", SDTE },
	{ "Operator", "58.00ms", "8.55ms", "5", "0", "1", VECTOR },
	{ "Memcpy", "67.00ms", "250.00us", "6", "0", "1", DTOH },
	{ "Memcpy", "67.30ms", "500.00ns", "7", "0", "0", MEMSET },
};

/* --- capturing and reading the output --------------------------------------------------------- */

enum what {
	SUMMARY,
	TRACE,
	CSV_SUMMARY,
	CSV_TRACE
};

static struct report_opts opts(bool api_only, bool gcu_only, bool per_gcu)
{
	return (struct report_opts){
		.pid = PID, .api_only = api_only, .gcu_only = gcu_only, .per_gcu = per_gcu
	};
}

static char *capture(enum what w, const struct model *m, const struct report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	switch (w) {
	case SUMMARY:
		report_summary(f, m, o);
		break;
	case TRACE:
		report_gcu_trace(f, m, o->pid);
		break;
	case CSV_SUMMARY:
		report_csv_summary(f, m, o);
		break;
	case CSV_TRACE:
		report_csv_gcu_trace(f, m);
		break;
	}
	assert_int_equal(fclose(f), 0);
	assert_non_null(buf);
	/* text only: no NUL inside */
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* a text report, line by line, read in order */
struct doc {
	char *buf;
	char **line;
	size_t n, at;
};

static void doc_open(struct doc *d, char *buf)
{
	size_t len = strlen(buf);

	memset(d, 0, sizeof(*d));
	d->buf = buf;
	/* every line ends with a newline, the last one too */
	assert_true(len > 0 && buf[len - 1] == '\n');
	for (char *p = buf; *p;) {
		char *nl = strchr(p, '\n');

		d->line = realloc(d->line, (d->n + 1) * sizeof(*d->line));
		assert_non_null(d->line);
		*nl = '\0';
		d->line[d->n++] = p;
		p = nl + 1;
	}
}

/* all read, nothing more said */
static void doc_close(struct doc *d)
{
	if (d->at != d->n)
		fail_msg("unexpected line %zu: '%s'", d->at + 1, d->line[d->at]);
	free(d->line);
	free(d->buf);
}

static const char *next_line(struct doc *d)
{
	if (d->at >= d->n)
		fail_msg("the report ends after %zu lines", d->n);
	return d->line[d->at++];
}

static void expect_line(struct doc *d, const char *want)
{
	assert_string_equal(next_line(d), want);
}

/* "56.61ms" in ns */
static double time_ns(const char *s)
{
	char *unit;
	double v = strtod(s, &unit);

	if (unit == s)
		fail_msg("not a time: '%s'", s);
	if (!strcmp(unit, "ns"))
		return v;
	if (!strcmp(unit, "us"))
		return v * 1e3;
	if (!strcmp(unit, "ms"))
		return v * 1e6;
	if (!strcmp(unit, "s"))
		return v * 1e9;
	fail_msg("not a time: '%s'", s);
	return 0;
}

/* where the titles of a header line end, and where the last one (the name's) begins */
struct cols {
	size_t end[6];
	size_t name;
};

static struct cols header_cols(const char *line, const char *const *titles, size_t n)
{
	const char *body = line + strlen(PFX);
	struct cols c = { .name = 0 };
	size_t at = 0;

	assert_true(n >= 2 && n - 1 <= N(c.end));
	for (size_t k = 0; k < n; k++) {
		const char *t = strstr(body + at, titles[k]);

		assert_non_null(t);
		/* each title stands apart, after a blank */
		assert_true(t > body + at && t[-1] == ' ');
		at = (size_t)(t - body) + strlen(titles[k]);
		if (k < n - 1)
			c.end[k] = at;
		else
			c.name = at - strlen(titles[k]);
	}
	assert_int_equal(at, strlen(body));
	return c;
}

/* a value right-aligned under its title: blanks after the column before, then the value, ending
 * where the title ends */
static void get_cell(const char *line, size_t from, size_t end, char *got, size_t len)
{
	const char *body = line + strlen(PFX);
	size_t k = from;

	if (strlen(body) < end)
		fail_msg("'%s' ends before column %zu", line, end);
	while (k < end && body[k] == ' ')
		k++;
	/* at least one blank parts it from the column before */
	if (k == from || k == end)
		fail_msg("'%s': no value right-aligned in columns %zu-%zu", line, from, end);
	for (size_t j = k; j < end; j++)
		if (body[j] == ' ')
			fail_msg("'%s': no value right-aligned in columns %zu-%zu", line, from,
				 end);
	assert_true(end - k < len);
	memcpy(got, body + k, end - k);
	got[end - k] = '\0';
}

/* --- the text summary ------------------------------------------------------------------------- */

static const char *const summary_titles[] = { "Time(%)", "Time", "Calls", "Avg",
					      "Min",	 "Max",	 "Name" };

/* the first line of every summary: as the manual prints it, as test_api.sh matches it */
static struct cols expect_summary_header(struct doc *d)
{
	const char *l = next_line(d);

	assert_string_equal(l,
			    PFX "      Time(%)     Time  Calls      Avg      Min      Max  Name");
	return header_cols(l, summary_titles, N(summary_titles));
}

/* a summary row as printed: Time(%), Time, Calls, Avg, Min, Max, then the name */
struct got_row {
	char cell[6][32];
	const char *name;
};

/* one row: every value right-aligned under its title, then one blank and the name (in the
 * manual's example the name starts one column before its title) */
static void read_row(struct doc *d, const struct cols *c, struct got_row *r)
{
	const char *l = next_line(d), *body = l + strlen(PFX);
	size_t from = 0;

	if (strncmp(l, PFX, strlen(PFX)))
		fail_msg("not a row: '%s'", l);
	for (size_t k = 0; k < 6; k++) {
		get_cell(l, from, c->end[k], r->cell[k], sizeof(r->cell[k]));
		from = c->end[k];
	}
	if (body[from] != ' ' || body[from + 1] == ' ' || !body[from + 1])
		fail_msg("'%s': not one blank, then the name", l);
	r->name = body + from + 1;
}

/* a section: its title, its rows, the line of its totals. What the rows must say of each other
 * first (as the end-to-end tests check it), then every value. */
static void expect_section(struct doc *d, const struct cols *c, const char *title,
			   const struct want_row *rows, size_t n, const char *totals)
{
	struct got_row *g = calloc(n, sizeof(*g));
	double pct = 0, ns = 0, prev = INFINITY, acc_ns;
	unsigned long long calls = 0, acc_calls;
	const char *l;
	char acc[32];

	assert_non_null(g);
	expect_line(d, title);
	for (size_t i = 0; i < n; i++)
		read_row(d, c, &g[i]);
	l = next_line(d);
	for (size_t i = 0; i < n; i++) {
		double t = time_ns(g[i].cell[1]), avg = time_ns(g[i].cell[3]);
		unsigned long long k = strtoull(g[i].cell[2], NULL, 10);
		size_t len = strlen(g[i].cell[0]);

		/* the longest total time first */
		if (t > prev)
			fail_msg("%s: %s (%s) after a shorter row", title, g[i].name, g[i].cell[1]);
		prev = t;
		/* Avg is Time over Calls, between Min and Max */
		assert_true(k > 0);
		if (fabs(avg * (double)k - t) > 0.01 * t)
			fail_msg("%s: %s: Avg %s of %s in %llu calls", title, g[i].name,
				 g[i].cell[3], g[i].cell[1], k);
		assert_true(time_ns(g[i].cell[4]) <= avg && avg <= time_ns(g[i].cell[5]));
		assert_true(len > 1 && g[i].cell[0][len - 1] == '%');
		pct += strtod(g[i].cell[0], NULL);
		ns += t;
		calls += k;
	}
	/* percentages of the section's own accumulated time */
	if (fabs(pct - 100) > 0.1)
		fail_msg("%s: percentages sum to %.2f", title, pct);
	/* the totals: of the rows above */
	if (sscanf(l, PFX "     Accumulate Time %31[^,], Total Calls %llu", acc, &acc_calls) != 2)
		fail_msg("%s: not the totals: '%s'", title, l);
	acc_ns = time_ns(acc);
	assert_true(fabs(acc_ns - ns) <= 0.01 * acc_ns);
	assert_int_equal(acc_calls, calls);
	/* the values for the inputs, computed by hand */
	for (size_t i = 0; i < n; i++) {
		const struct want_row *w = &rows[i];
		const char *want[6] = { w->pct, w->time, w->calls, w->avg, w->min, w->max };
		char pct_sign[16];

		snprintf(pct_sign, sizeof(pct_sign), "%s%%", w->pct);
		want[0] = pct_sign;
		assert_string_equal(g[i].name, w->name);
		for (size_t k = 0; k < 6; k++)
			assert_string_equal(g[i].cell[k], want[k]);
	}
	assert_string_equal(l, totals);
	free(g);
}

/* the GCU section of all devices, or of one */
static void expect_gcu(struct doc *d, const struct cols *c, int dev)
{
	if (dev < 0)
		expect_section(d, c, PFX " GCU activities:", gcu_all, N(gcu_all), GCU_ALL_TOTALS);
	else if (dev == 0)
		expect_section(d, c, PFX " GCU activities, device 0:", gcu_dev0, N(gcu_dev0),
			       GCU_DEV0_TOTALS);
	else
		expect_section(d, c, PFX " GCU activities, device 1:", gcu_dev1, N(gcu_dev1),
			       GCU_DEV1_TOTALS);
	/* the profiled span, a device's block too */
	expect_line(d, TOTAL_TIME);
	expect_line(d, PFX);
	expect_line(d, "");
}

/* no CPU sampling asked for */
static void expect_no_cpu(struct doc *d)
{
	expect_line(d, PFX " CPU activities:");
	expect_line(d, PFX "     does not contain cpu kernel data.");
	expect_line(d, "");
}

static void expect_runtime_topstx(struct doc *d, const struct cols *c)
{
	expect_section(d, c, PFX " RUNTIME activities:", runtime, N(runtime), RUNTIME_TOTALS);
	expect_line(d, PFX);
	expect_line(d, "");
	expect_section(d, c, PFX " TOPSTX activities:", topstx, N(topstx), TOPSTX_TOTALS);
	expect_line(d, PFX "     Mark checked: 1");
	expect_line(d, PFX);
}

static void test_summary(void **state)
{
	const struct model *m = *state;
	struct report_opts o = opts(false, false, false);
	struct doc d;
	struct cols c;

	/* the manual's order: GCU, CPU, RUNTIME, then TOPSTX */
	doc_open(&d, capture(SUMMARY, m, &o));
	c = expect_summary_header(&d);
	expect_gcu(&d, &c, -1);
	expect_no_cpu(&d);
	expect_runtime_topstx(&d, &c);
	doc_close(&d);
	/* the pid of the prefix is the one asked for */
	o.pid = 7;
	doc_open(&d, capture(SUMMARY, m, &o));
	while (d.at < d.n) {
		const char *l = next_line(&d);

		/* blank lines part the sections */
		if (*l && strncmp(l, "==7==", 5))
			fail_msg("line %zu without ==7==: '%s'", d.at, l);
	}
	doc_close(&d);
}

static void test_summary_per_gcu(void **state)
{
	const struct model *m = *state;
	struct report_opts o = opts(false, false, true);
	struct doc d;
	struct cols c;

	/* --print-summary-per-gcu: a block per device in device order, the rest as usual */
	doc_open(&d, capture(SUMMARY, m, &o));
	c = expect_summary_header(&d);
	expect_gcu(&d, &c, 0);
	expect_gcu(&d, &c, 1);
	expect_no_cpu(&d);
	expect_runtime_topstx(&d, &c);
	doc_close(&d);
	/* with --print-gcu-summary: the blocks alone */
	o.gcu_only = true;
	doc_open(&d, capture(SUMMARY, m, &o));
	c = expect_summary_header(&d);
	expect_gcu(&d, &c, 0);
	expect_gcu(&d, &c, 1);
	doc_close(&d);
}

static void test_summary_api_only(void **state)
{
	const struct model *m = *state;
	struct report_opts o = opts(true, false, false);
	struct doc d;
	struct cols c;

	/* --print-api-summary: the runtime and topstx sections, no GCU, no CPU */
	doc_open(&d, capture(SUMMARY, m, &o));
	c = expect_summary_header(&d);
	expect_runtime_topstx(&d, &c);
	doc_close(&d);
}

/* a long run's figures: 10^9 calls, 10^4 s and more in a row. The columns widen to the longest
 * value plus a blank, as nvprof's do, so that none touches the next and a script that splits on
 * blanks still reads every value */
static void test_summary_huge(void **state)
{
	static const struct {
		const char *fn;
		struct api_stat st;
		const char *cells[6];
	} rows[] = {
		{ "topsStreamSynchronize",
		  { 12345678, 25000000000000ull, 1000, 9000000000000ull },
		  { "71.43%", "25000.00s", "12345678", "2.03ms", "1.00us", "9000.00s" } },
		{ "topsLaunchKernel",
		  { 1000000000, 10000000000000ull, 1000, 5000 },
		  { "28.57%", "10000.00s", "1000000000", "10.00us", "1.00us", "5.00us" } },
		{ "topsMalloc",
		  { 3, 30000, 10000, 10000 },
		  { "0.00%", "30.00us", "3", "10.00us", "10.00us", "10.00us" } },
	};
	struct report_opts o = opts(true, false, false);
	struct model m;
	struct doc d;
	struct cols c;
	const char *l;

	(void)state;
	model_init(&m);
	m.root_pid = PID;
	for (size_t i = 0; i < N(rows); i++)
		model_add_stat(&m, (uint32_t)api_find(rows[i].fn), &rows[i].st);
	model_finish(&m, false, NULL);
	doc_open(&d, capture(SUMMARY, &m, &o));
	l = next_line(&d);
	c = header_cols(l, summary_titles, N(summary_titles));
	expect_line(&d, PFX " RUNTIME activities:");
	for (size_t i = 0; i < N(rows); i++) {
		struct got_row r;
		char *tok[16], *save = NULL, line[256];
		size_t n = 0;

		/* every value under its title, one blank at least before it */
		read_row(&d, &c, &r);
		for (size_t k = 0; k < 6; k++)
			assert_string_equal(r.cell[k], rows[i].cells[k]);
		assert_string_equal(r.name, rows[i].fn);
		/* and what a script splitting on blanks reads */
		snprintf(line, sizeof(line), "%s", d.line[d.at - 1]);
		for (char *t = strtok_r(line, " ", &save); t && n < N(tok);
		     t = strtok_r(NULL, " ", &save))
			tok[n++] = t;
		assert_int_equal(n, 8);
		assert_string_equal(tok[3], rows[i].cells[2]);
		assert_string_equal(tok[7], rows[i].fn);
	}
	expect_line(&d, PFX "     Accumulate Time 35000.00s, Total Calls 1012345681");
	expect_line(&d, PFX);
	expect_line(&d, "");
	expect_line(&d, PFX " TOPSTX activities:");
	expect_line(&d, PFX "     does not contain topstx data.");
	expect_line(&d, PFX);
	doc_close(&d);
	model_free(&m);
}

static void test_summary_gcu_only(void **state)
{
	const struct model *m = *state;
	struct report_opts o = opts(false, true, false);
	struct doc d;
	struct cols c;

	/* --print-gcu-summary: the GCU section of all devices and nothing after it */
	doc_open(&d, capture(SUMMARY, m, &o));
	c = expect_summary_header(&d);
	expect_gcu(&d, &c, -1);
	doc_close(&d);
}

/* --- the GCU trace ---------------------------------------------------------------------------- */

static const char *const trace_titles[] = { "Start", "Duration", "Node Name", "Name" };

static void test_gcu_trace(void **state)
{
	const struct model *m = *state;
	struct report_opts o = opts(false, false, false);
	char got[N(trace)][2][32], acc[32];
	const char *l, *name[N(trace)];
	double prev = 0, ns = 0;
	unsigned long long calls;
	struct doc d;
	struct cols c;

	doc_open(&d, capture(TRACE, m, &o));
	/* as the manual prints it, as test_gcu.sh matches it */
	l = next_line(&d);
	assert_string_equal(l, PFX "      Start   Duration                        Node Name Name");
	c = header_cols(l, trace_titles, N(trace_titles));
	expect_line(&d, PFX " GCU trace:");
	for (size_t i = 0; i < N(trace); i++) {
		const char *body;

		l = next_line(&d);
		body = l + strlen(PFX);
		if (strncmp(l, PFX, strlen(PFX)))
			fail_msg("not a row: '%s'", l);
		get_cell(l, 0, c.end[0], got[i][0], sizeof(got[i][0]));
		get_cell(l, c.end[0], c.end[1], got[i][1], sizeof(got[i][1]));
		/* no node names: blank up to the name, which starts under its title */
		for (size_t k = c.end[1]; k < c.name; k++)
			if (body[k] != ' ')
				fail_msg("'%s': the name not under its title", l);
		if (body[c.name] == ' ' || !body[c.name])
			fail_msg("'%s': the name not under its title", l);
		name[i] = body + c.name;
		/* in time order, from the first record */
		if (time_ns(got[i][0]) < prev || (i == 0 && time_ns(got[i][0]) != 0))
			fail_msg("'%s' out of time order", l);
		prev = time_ns(got[i][0]);
		ns += time_ns(got[i][1]);
	}
	l = next_line(&d);
	/* the totals: of the rows above */
	if (sscanf(l, PFX "     Accumulate Time %31[^,], Total Calls %llu", acc, &calls) != 2)
		fail_msg("not the totals: '%s'", l);
	assert_true(fabs(time_ns(acc) - ns) <= 0.01 * ns);
	assert_int_equal(calls, N(trace));
	for (size_t i = 0; i < N(trace); i++) {
		assert_string_equal(got[i][0], trace[i].start);
		assert_string_equal(got[i][1], trace[i].dur);
		assert_string_equal(name[i], trace[i].name);
	}
	assert_string_equal(l, GCU_ALL_TOTALS);
	expect_line(&d, TOTAL_TIME);
	doc_close(&d);
}

/* --- CSV -------------------------------------------------------------------------------------- */

/* RFC 4180 as a reader takes it: records end with CRLF, fields are split by commas, a quoted
 * field doubles its quotes */
struct csv {
	char **field; /* every field, record after record */
	size_t *nfields;
	size_t nrec, nf;
};

static void csv_parse(struct csv *c, const char *s)
{
	memset(c, 0, sizeof(*c));
	while (*s) {
		size_t n = 0;

		for (;;) {
			char *f = malloc(strlen(s) + 1);
			size_t len = 0;

			assert_non_null(f);
			if (*s == '"') {
				for (s++;; s++) {
					assert_true(*s != '\0');
					if (*s == '"' && s[1] != '"')
						break;
					if (*s == '"')
						s++;
					f[len++] = *s;
				}
				s++;
			} else {
				for (; *s && !strchr(",\"\r\n", *s); s++)
					f[len++] = *s;
			}
			f[len] = '\0';
			c->field = realloc(c->field, (c->nf + 1) * sizeof(*c->field));
			assert_non_null(c->field);
			c->field[c->nf++] = f;
			n++;
			if (*s != ',')
				break;
			s++;
		}
		/* a field ends at a comma or at the end of its record, a CRLF */
		if (strncmp(s, "\r\n", 2))
			fail_msg("record %zu: '%.20s' after a field", c->nrec + 1, s);
		s += 2;
		c->nfields = realloc(c->nfields, (c->nrec + 1) * sizeof(*c->nfields));
		assert_non_null(c->nfields);
		c->nfields[c->nrec++] = n;
	}
}

static void csv_free(struct csv *c)
{
	for (size_t i = 0; i < c->nf; i++)
		free(c->field[i]);
	free(c->field);
	free(c->nfields);
}

/* the records of a CSV, each with as many fields as the header, which is the one given */
static char **csv_expect_shape(struct csv *c, const char *const *header, size_t n)
{
	assert_true(c->nrec >= 1);
	for (size_t i = 0; i < c->nrec; i++)
		if (c->nfields[i] != n)
			fail_msg("record %zu has %zu fields, the header %zu", i + 1, c->nfields[i],
				 n);
	for (size_t k = 0; k < n; k++)
		assert_string_equal(c->field[k], header[k]);
	return c->field + n;
}

/* the first record as written, its CRLF too */
static void expect_csv_header(const char *buf, const char *want)
{
	const char *crlf = strstr(buf, "\r\n");
	char *got;

	assert_non_null(crlf);
	got = strndup(buf, (size_t)(crlf - buf) + 2);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static const char *const summary_header[] = { "Type", "Time(%)", "Time", "Calls",
					      "Avg",  "Min",	 "Max",	 "Name" };

struct csv_section {
	const char *type;
	const struct want_row *rows;
	size_t n;
};

static void expect_csv_summary(const struct model *m, const struct report_opts *o,
			       const struct csv_section *s, size_t ns)
{
	char *buf = capture(CSV_SUMMARY, m, o), **f, **rec;
	size_t rows = 0;
	struct csv c;

	/* the exact header row */
	expect_csv_header(buf, "Type,Time(%),Time,Calls,Avg,Min,Max,Name\r\n");
	csv_parse(&c, buf);
	f = csv_expect_shape(&c, summary_header, N(summary_header));
	/* a section's rows together, percentages summing to 100, as test_files.sh reads them */
	for (size_t i = 1; i < c.nrec;) {
		const char *type = f[(i - 1) * N(summary_header)];
		double pct = 0;

		for (; i < c.nrec && !strcmp(f[(i - 1) * N(summary_header)], type); i++)
			pct += strtod(f[(i - 1) * N(summary_header) + 1], NULL);
		if (fabs(pct - 100) > 0.1)
			fail_msg("%s: percentages sum to %.2f", type, pct);
		for (size_t j = i; j < c.nrec; j++)
			if (!strcmp(f[(j - 1) * N(summary_header)], type))
				fail_msg("%s: rows apart (record %zu)", type, j + 1);
	}
	/* the printed summary's rows, in its order, a Type for the section */
	rec = f;
	for (size_t i = 0; i < ns; i++) {
		for (size_t j = 0; j < s[i].n; j++, rec += N(summary_header), rows++) {
			const struct want_row *w = &s[i].rows[j];
			const char *want[] = { s[i].type, w->pct, w->time, w->calls,
					       w->avg,	  w->min, w->max,  w->name };

			assert_true(rows + 1 < c.nrec);
			for (size_t k = 0; k < N(want); k++)
				assert_string_equal(rec[k], want[k]);
		}
	}
	assert_int_equal(c.nrec, rows + 1);
	csv_free(&c);
	free(buf);
}

static void test_csv_summary(void **state)
{
	const struct model *m = *state;
	const struct csv_section all[] = {
		{ "GCU", gcu_all, N(gcu_all) },
		{ "RUNTIME", runtime, N(runtime) },
		{ "TOPSTX", topstx, N(topstx) },
	};
	const struct csv_section per_gcu[] = {
		{ "GCU0", gcu_dev0, N(gcu_dev0) },
		{ "GCU1", gcu_dev1, N(gcu_dev1) },
		{ "RUNTIME", runtime, N(runtime) },
		{ "TOPSTX", topstx, N(topstx) },
	};
	struct report_opts o = opts(false, false, false);
	char *buf;

	expect_csv_summary(m, &o, all, N(all));
	o = opts(false, false, true);
	expect_csv_summary(m, &o, per_gcu, N(per_gcu));
	o = opts(false, true, true);
	expect_csv_summary(m, &o, per_gcu, 2);
	o = opts(false, true, false);
	expect_csv_summary(m, &o, all, 1);
	o = opts(true, false, false);
	expect_csv_summary(m, &o, all + 1, 2);

	/* quoted only when needed: commas and quotes, quotes doubled */
	o = opts(false, false, false);
	buf = capture(CSV_SUMMARY, m, &o);
	assert_non_null(strstr(buf, "\r\nGCU,86.41,73.22ms,2,36.61ms,16.61ms,56.61ms,"
				    "\"scalar_add(float*, float*, float*, unsigned long)\"\r\n"));
	assert_non_null(strstr(buf, "\r\nGCU,2.36,2.00ms,1,2.00ms,2.00ms,2.00ms,"
				    "\"operator\"\"\"\" _kb(unsigned long long)\"\r\n"));
	assert_non_null(strstr(buf, "\r\nTOPSTX,71.43,10.00us,1,10.00us,10.00us,10.00us,"
				    "\"load, \"\"data\"\"\"\r\n"));
	assert_non_null(
		strstr(buf, "\r\nGCU,0.02,13.44us,1,13.44us,13.44us,13.44us,warm_up()\r\n"));
	assert_non_null(
		strstr(buf, "\r\nRUNTIME,1.72,20.00us,1,20.00us,20.00us,20.00us,topsFree\r\n"));
	free(buf);
}

static const char *const trace_header[] = { "Type",	"Start",    "Duration", "KernelId",
					    "DeviceId", "StreamId", "Name" };

static void test_csv_gcu_trace(void **state)
{
	const struct model *m = *state;
	char *buf = capture(CSV_TRACE, m, NULL), **f;
	struct csv c;

	expect_csv_header(buf, "Type,Start,Duration,KernelId,DeviceId,StreamId,Name\r\n");
	csv_parse(&c, buf);
	f = csv_expect_shape(&c, trace_header, N(trace_header));
	assert_int_equal(c.nrec, N(trace) + 1);
	for (size_t i = 0; i < N(trace); i++, f += N(trace_header)) {
		const char *want[] = { trace[i].type,	trace[i].start, trace[i].dur,
				       trace[i].launch, trace[i].dev,	trace[i].stream,
				       trace[i].name };

		for (size_t k = 0; k < N(want); k++)
			assert_string_equal(f[k], want[k]);
	}
	csv_free(&c);
	/* the names quoted as in the summary */
	assert_non_null(strstr(buf, "\r\nOperator,1.00ms,16.61ms,8,1,2,"
				    "\"scalar_add(float*, float*, float*, unsigned long)\"\r\n"));
	assert_non_null(strstr(buf, "\r\nOperator,20.00ms,2.00ms,9,1,2,"
				    "\"operator\"\"\"\" _kb(unsigned long long)\"\r\n"));
	assert_non_null(strstr(buf, "\r\nMemcpy,67.30ms,500.00ns,7,0,0,[Memset 999B]\r\n"));
	free(buf);
}

/* --- nothing collected ------------------------------------------------------------------------ */

static void test_empty(void **state)
{
	struct report_opts o = opts(false, false, false);
	struct model m;
	struct doc d;
	char *buf;

	(void)state;
	model_init(&m);
	m.root_pid = PID;
	finish(&m);
	doc_open(&d, capture(SUMMARY, &m, &o));
	expect_summary_header(&d);
	expect_line(&d, PFX " GCU activities:");
	expect_line(&d, PFX "     does not contain gcu kernel data.");
	expect_line(&d, PFX);
	expect_line(&d, "");
	expect_no_cpu(&d);
	expect_line(&d, PFX " RUNTIME activities:");
	expect_line(&d, PFX "     does not contain runtime api data.");
	expect_line(&d, PFX);
	expect_line(&d, "");
	expect_line(&d, PFX " TOPSTX activities:");
	expect_line(&d, PFX "     does not contain topstx data.");
	expect_line(&d, PFX);
	doc_close(&d);
	/* per GCU without a device: the one section of all */
	o = opts(false, true, true);
	doc_open(&d, capture(SUMMARY, &m, &o));
	expect_summary_header(&d);
	expect_line(&d, PFX " GCU activities:");
	expect_line(&d, PFX "     does not contain gcu kernel data.");
	expect_line(&d, PFX);
	expect_line(&d, "");
	doc_close(&d);
	doc_open(&d, capture(TRACE, &m, &o));
	expect_line(&d, PFX "      Start   Duration                        Node Name Name");
	expect_line(&d, PFX " GCU trace:");
	expect_line(&d, PFX "     does not contain gcu kernel data.");
	doc_close(&d);
	/* the CSVs: their header alone */
	o = opts(false, false, false);
	buf = capture(CSV_SUMMARY, &m, &o);
	assert_string_equal(buf, "Type,Time(%),Time,Calls,Avg,Min,Max,Name\r\n");
	free(buf);
	buf = capture(CSV_TRACE, &m, NULL);
	assert_string_equal(buf, "Type,Start,Duration,KernelId,DeviceId,StreamId,Name\r\n");
	free(buf);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_per_gcu, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_api_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_summary_gcu_only, setup, teardown),
		cmocka_unit_test(test_summary_huge),
		cmocka_unit_test_setup_teardown(test_gcu_trace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_summary, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_gcu_trace, setup, teardown),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests_name("report", tests, NULL, NULL);
}
