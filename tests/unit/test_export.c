// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The exporters (export.h) on a small finished model: every output named and opened before the
 * run, then written whole in its place, each the same as its writer makes; the profile and the
 * vpd read back; folded stacks refused for a profile without them; no file replaced without
 * force; %p in a name is topsprof's pid. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"

#include <cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/chrome.h"
#include "output/export.h"
#include "output/store.h"
#include "output/vpd.h"

#define APP_PID 4242

static char dir[64];

static const char *at(const char *name)
{
	static char path[8][PATH_MAX];
	static int next;
	char *p = path[next++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

/* a whole file, NUL-terminated, in a static buffer; NULL when it cannot be read */
static const char *slurp(const char *path, size_t *len)
{
	static char buf[1 << 20];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* the file at path holds exactly what expect wrote */
static void check_same(const char *path, void (*expect)(FILE *f, const void *arg), const void *arg)
{
	char *want = NULL;
	size_t want_len = 0, len;
	FILE *mem = open_memstream(&want, &want_len);
	const char *got;

	assert_non_null(mem);
	expect(mem, arg);
	assert_int_equal(fclose(mem), 0);
	got = slurp(path, &len);
	assert_non_null(got);
	assert_true(len > 0);
	assert_int_equal(len, want_len);
	assert_memory_equal(got, want, len);
	free(want);
}

static struct tp_api_event call(const char *fn, uint64_t id, uint64_t start, uint64_t end)
{
	struct tp_api_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = EV_API_CALL;
	e.hdr.pid = APP_PID;
	e.hdr.tid = APP_PID;
	e.hdr.ts_ns = end;
	e.start_ns = start;
	e.call_id = id;
	e.fn = (uint32_t)api_find(fn);
	assert_true(api_find(fn) >= 0);
	return e;
}

/* one process, a few runtime calls; CPU stacks when cpu */
static void make_model(struct model *m, bool cpu)
{
	static const char *const fns[] = { "topsMalloc", "topsMemcpy", "topsLaunchKernel",
					   "topsLaunchKernel", "topsDeviceSynchronize" };
	struct tp_proc_event p = { .hdr = { .type = EV_PROC_FORK, .pid = APP_PID, .tid = APP_PID },
				   .ppid = 1,
				   .comm = "app" };

	model_init(m);
	m->root_pid = APP_PID;
	model_add_proc_event(m, &p);
	for (unsigned i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		struct tp_api_event e =
			call(fns[i], i + 1, 1000000 * (i + 1), 1000000 * (i + 1) + 500);

		model_add_call(m, &e);
	}
	m->span_start_ns = 1000000;
	m->span_end_ns = 9000000;
	if (cpu) {
		m->cpu.sampled = true;
		m->cpu.hz = 99;
		assert_int_equal(cpu_profile_add(&m->cpu, APP_PID, "app", "main;work", 5, false),
				 0);
		assert_int_equal(cpu_profile_add(&m->cpu, APP_PID, "app", "main;idle", 2, false),
				 0);
		cpu_profile_finish(&m->cpu);
	}
	model_finish(m, true, NULL);
}

/* path_of: the PATH of each option, NULL for those not asked for */
struct paths {
	const char *csv, *chrome, *profile, *folded, *vpd;
};

static const char *path_of(void *ctx, const char *option)
{
	const struct paths *p = ctx;

	if (!strcmp(option, "export-csv"))
		return p->csv;
	if (!strcmp(option, "export-chrome-trace"))
		return p->chrome;
	if (!strcmp(option, "export-profile"))
		return p->profile;
	if (!strcmp(option, "export-folded"))
		return p->folded;
	if (!strcmp(option, "export-visual-profiler"))
		return p->vpd;
	fail_msg("an exporter this test does not know: %s", option);
	return NULL;
}

/* the index of option's exporter; fails the test when there is none */
static unsigned exporter_index(const char *option)
{
	for (unsigned i = 0; i < nexporters; i++)
		if (!strcmp(exporters[i].option, option))
			return i;
	fail_msg("no exporter for --%s", option);
	return 0;
}

/* each test in a directory of its own */
static int setup(void **state)
{
	(void)state;
	return test_dir_make(dir, "test_export");
}

static int teardown(void **state)
{
	(void)state;
	return test_dir_remove(dir);
}

/* the names in d, sorted, one per line */
static const char *listing(const char *d)
{
	static char out[4096];
	struct dirent **names;
	int n = scandir(d, &names, NULL, alphasort);
	size_t used = 0;

	assert_true(n >= 0);
	out[0] = '\0';
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && used < sizeof(out))
			used += (size_t)snprintf(out + used, sizeof(out) - used, "%s\n",
						 names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return out;
}

/* -- the table --------------------------------------------------------------------------------- */

static void test_table(void **state)
{
	static const char *const options[] = { "export-csv", "export-chrome-trace",
					       "export-profile", "export-folded",
					       "export-visual-profiler" };

	(void)state;
	assert_true(nexporters <= EXPORTERS_MAX);
	assert_int_equal(nexporters, sizeof(options) / sizeof(options[0]));
	for (unsigned i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		unsigned k = exporter_index(options[i]);
		const struct exporter *x = &exporters[k];

		/* a directory has a directory's writer, a file a file's */
		assert_int_equal(x->dir, !strcmp(options[i], "export-visual-profiler"));
		assert_true(x->dir ? x->write_dir && !x->write : x->write && !x->write_dir);
		for (unsigned j = 0; j < nexporters; j++)
			assert_true(j == k || strcmp(exporters[j].option, options[i]));
	}
	/* the summary and the folded stacks need no call streamed; the rest are traces */
	assert_false(exporters[exporter_index("export-csv")].every_call);
	assert_false(exporters[exporter_index("export-folded")].every_call);
	assert_true(exporters[exporter_index("export-chrome-trace")].every_call);
	assert_true(exporters[exporter_index("export-profile")].every_call);
	assert_true(exporters[exporter_index("export-visual-profiler")].every_call);
}

/* -- every output ------------------------------------------------------------------------------ */

static const struct report_opts ro = { .pid = APP_PID };

static void expect_csv(FILE *f, const void *m)
{
	report_csv_summary(f, m, &ro);
}

static void expect_gcu_trace(FILE *f, const void *m)
{
	report_csv_gcu_trace(f, m);
}

static void expect_chrome(FILE *f, const void *m)
{
	chrome_write(f, m);
}

static void expect_folded(FILE *f, const void *m)
{
	assert_int_equal(cpu_profile_write_folded(f, &((const struct model *)m)->cpu), 0);
}

static void test_write_all(void **state)
{
	struct paths p = { at("p.csv"), at("p.json"), at("p.tpf"), at("p.folded"), at("vpd") };
	struct export_in in = { .ro = &ro, .command = "app --run" };
	struct model m, back;
	struct exports e;
	cJSON *json, *events;
	const char *text, *out;
	char err[512], host[256], vpd[PATH_MAX];
	int x_events = 0, rc;

	(void)state;
	make_model(&m, true);
	in.m = &m;
	capture_start();
	rc = exports_prepare(&e, path_of, &p, false);
	out = capture_end();
	assert_int_equal(rc, 0);
	assert_string_equal(out, "");
	for (unsigned i = 0; i < nexporters; i++)
		assert_true(e.t[i].open);
	/* named and opened, nothing written yet */
	assert_string_equal(listing(dir), "vpd\n");
	capture_start();
	rc = exports_write(&e, &in);
	out = capture_end();
	if (rc)
		fail_msg("%s", out);
	assert_string_equal(out, "");
	exports_close(&e);
	for (unsigned i = 0; i < nexporters; i++)
		assert_false(e.t[i].open);
	/* each in its place, nothing else left beside them */
	assert_string_equal(listing(dir), "p.csv\np.folded\np.json\np.tpf\nvpd\n");

	/* the CSV is the summary report's, header first */
	text = slurp(p.csv, NULL);
	assert_non_null(text);
	assert_true(!strncmp(text, "Type,Time(%),Time,Calls,Avg,Min,Max,Name\r\n", 42));
	assert_non_null(strstr(text, "topsLaunchKernel"));
	check_same(p.csv, expect_csv, &m);

	/* the trace is JSON with a slice per call */
	check_same(p.chrome, expect_chrome, &m);
	json = cJSON_Parse(slurp(p.chrome, NULL));
	assert_non_null(json);
	events = cJSON_GetObjectItemCaseSensitive(json, "traceEvents");
	assert_true(cJSON_IsArray(events));
	for (cJSON *ev = events->child; ev; ev = ev->next) {
		cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");

		x_events += cJSON_IsString(ph) && !strcmp(ph->valuestring, "X");
	}
	assert_int_equal(x_events, (int)m.ncalls);
	cJSON_Delete(json);

	/* the folded stacks, as flamegraph.pl reads them */
	check_same(p.folded, expect_folded, &m);
	assert_string_equal(slurp(p.folded, NULL), "app;main;idle 2\napp;main;work 5\n");

	/* the profile reads back as the model it was */
	model_init(&back);
	assert_int_equal(store_read_profile(p.profile, &back, err, sizeof(err)), 0);
	assert_int_equal(back.root_pid, APP_PID);
	assert_int_equal(back.ncalls, m.ncalls);
	for (size_t i = 0; i < m.ncalls; i++) {
		assert_int_equal(model_call(&back, i).fn, model_call(&m, i).fn);
		assert_int_equal(model_call(&back, i).start_ns, model_call(&m, i).start_ns);
	}
	assert_int_equal(back.cpu.n, 2);
	assert_int_equal(back.cpu.samples, m.cpu.samples);
	model_free(&back);

	/* one vpd for the one process, named by host (and rank) and pid, reading back */
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	host[sizeof(host) - 1] = '\0';
	text = listing(p.vpd);
	assert_int_equal(lines(text), 1);
	if (!vpd_rank()[0]) {
		snprintf(vpd, sizeof(vpd), "%s-%d.vpd\n", host, APP_PID);
		assert_string_equal(text, vpd);
	}
	snprintf(vpd, sizeof(vpd), "%s/%.*s", p.vpd, (int)strcspn(text, "\n"), text);
	model_init(&back);
	assert_int_equal(vpd_import(vpd, &back, err, sizeof(err)), 0);
	assert_int_equal(back.root_pid, APP_PID);
	assert_int_equal(back.ncalls, m.ncalls);
	model_free(&back);
	model_free(&m);
}

/* a vpd of more calls than its writer puts in one statement (128), not a multiple of it: each
 * call is read back, in order, as it was */
static void test_vpd_calls(void **state)
{
	static const char *const fns[] = { "topsMalloc", "topsMemcpy", "topsLaunchKernel" };
	struct paths p = { .vpd = at("v") };
	struct export_in in = { .ro = &ro, .command = "app" };
	struct model m, back;
	struct exports e;
	char err[512], vpd[PATH_MAX];
	const char *text;
	const unsigned n = 128 * 2 + 7;

	(void)state;
	model_init(&m);
	m.root_pid = APP_PID;
	for (unsigned i = 0; i < n; i++) {
		struct tp_api_event c = call(fns[i % 3], i + 1, 1000 * (i + 1), 1000 * (i + 1) + i);

		c.hdr.tid = APP_PID + i % 2;
		c.ret = (int64_t)i;
		model_add_call(&m, &c);
	}
	m.span_start_ns = 1000;
	m.span_end_ns = 1000 * (n + 2);
	model_finish(&m, true, NULL);
	in.m = &m;
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	text = listing(p.vpd);
	snprintf(vpd, sizeof(vpd), "%s/%.*s", p.vpd, (int)strcspn(text, "\n"), text);
	model_init(&back);
	assert_int_equal(vpd_import(vpd, &back, err, sizeof(err)), 0);
	assert_int_equal(back.ncalls, n);
	for (unsigned i = 0; i < n; i++) {
		struct api_call want = model_call(&m, i), got = model_call(&back, i);

		assert_int_equal(got.fn, want.fn);
		/* the vpd's times are of the epoch: the same apart */
		assert_int_equal(got.start_ns - model_call(&back, 0).start_ns,
				 want.start_ns - model_call(&m, 0).start_ns);
		assert_int_equal(got.end_ns - got.start_ns, want.end_ns - want.start_ns);
		assert_int_equal(got.tid, want.tid);
		assert_int_equal(got.ret, want.ret);
	}
	model_free(&back);
	model_free(&m);
}

/* -- a vpd written while the calls are read (exports_stream) ----------------------------------- */

#define STREAM_PIDS  11	   /* more than the stream writes (8): the rest from the model */
#define STREAM_CALLS 20000 /* past a batch of the stream's (8192 rows) */

/* calls of STREAM_PIDS processes in runs of 3, every 5th with a message; a GCU record of each
 * process pointing at one of its calls. With e: streamed as they are kept */
static void stream_model(struct model *m, struct exports *e)
{
	static const char *const fns[] = { "topsMalloc", "topsMemcpy", "topsLaunchKernel" };
	size_t last[STREAM_PIDS];

	model_init(m);
	m->root_pid = APP_PID;
	m->dev[0].present = true;
	if (e)
		exports_stream(e, m);
	for (unsigned i = 0; i < STREAM_CALLS; i++) {
		struct tp_api_event c = call(fns[i % 3], i + 1, 1000 * (i + 1), 1000 * (i + 1) + i);
		unsigned p = i / 3 % STREAM_PIDS;
		char msg[32], *str[2] = { NULL, NULL };
		uint32_t len[2] = { 0, 0 };
		bool trunc[2] = { false, false };

		c.hdr.pid = APP_PID + p;
		c.hdr.tid = APP_PID + p + i % 2;
		c.ret = (int64_t)i - 7;
		if (i % 5 == 0) {
			len[0] = (uint32_t)snprintf(msg, sizeof(msg), "message %u", i);
			str[0] = msg;
		}
		assert_int_equal(model_add_call_strs(m, &c, str, len, trunc), 1);
		last[p] = i;
	}
	for (unsigned p = 0; p < STREAM_PIDS; p++) {
		struct gcu_record r = { .pid = APP_PID + p,
					.tid = APP_PID + p,
					.kind = GCU_REC_KERNEL,
					.launch_id = p + 1 };

		model_add_gcu(m, &r, "k(int*)");
		m->ops[m->nops - 1].call = (int32_t)last[p];
		m->ops[m->nops - 1].start_ns = 1000 * (last[p] + 1) + 10;
		m->ops[m->nops - 1].end_ns = 1000 * (last[p] + 1) + 20;
	}
	m->span_start_ns = 1000;
	m->span_end_ns = 1000 * (STREAM_CALLS + 2);
	model_finish(m, true, NULL);
}

/* every table of every vpd of d as text, the times less the file's epoch offset */
static char *vpd_dump(const char *d)
{
	static const char *const tables[] = { "meta",	"process",	"dev",	 "api_call",
					      "gcu_op", "topstx_range", "memcpy" };
	char *text = NULL, path[PATH_MAX], list[4096];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	assert_non_null(out);
	snprintf(list, sizeof(list), "%s", listing(d));
	for (char *name = strtok(list, "\n"); name; name = strtok(NULL, "\n")) {
		sqlite3 *db;
		sqlite3_stmt *st;
		long long off;

		snprintf(path, sizeof(path), "%s/%s", d, name);
		assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
		assert_int_equal(sqlite3_prepare_v2(db,
						    "SELECT value FROM meta WHERE key = "
						    "'monotonic_to_epoch_ns'",
						    -1, &st, NULL),
				 0);
		assert_int_equal(sqlite3_step(st), SQLITE_ROW);
		off = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		fprintf(out, "%s\n", name);
		for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
			char sql[128];

			snprintf(sql, sizeof(sql), "SELECT * FROM %s ORDER BY %s", tables[t],
				 t ? "id" : "key");
			assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), 0);
			while (sqlite3_step(st) == SQLITE_ROW) {
				const char *key = (const char *)sqlite3_column_text(st, 0);

				fprintf(out, "%s:", tables[t]);
				for (int c = 0; c < sqlite3_column_count(st); c++) {
					bool time =
						strstr(sqlite3_column_name(st, c), "timestamp") ||
						(!t && c && strstr(key, "timestamp"));

					if (!t && c && !strcmp(key, "monotonic_to_epoch_ns"))
						fprintf(out, " -");
					else if (time)
						fprintf(out, " %lld",
							sqlite3_column_int64(st, c) - off);
					else
						fprintf(out, " %s",
							sqlite3_column_text(st, c)
								? (const char *)sqlite3_column_text(
									  st, c)
								: "NULL");
				}
				fputc('\n', out);
			}
			sqlite3_finalize(st);
		}
		sqlite3_close(db);
	}
	assert_int_equal(fclose(out), 0);
	return text;
}

static void test_vpd_stream(void **state)
{
	struct paths streamed = { .vpd = at("streamed") }, whole = { .vpd = at("whole") };
	struct export_in in = { .ro = &ro, .command = "app" };
	struct model m, n;
	struct exports e;
	char *a, *b;
	uint64_t rows;
	size_t files;

	(void)state;
	assert_int_equal(exports_prepare(&e, path_of, &streamed, false), 0);
	stream_model(&m, &e);
	assert_non_null(e.vpd);
	in.m = &m;
	assert_int_equal(exports_write(&e, &in), 0);
	/* 8 processes' calls written by the stream (8 in every 11 runs of 3), the others' not */
	rows = vpd_stream_rows(e.vpd, &files);
	assert_int_equal(files, 8);
	assert_true(rows > STREAM_CALLS / 11 * 8 - 24 && rows < STREAM_CALLS / 11 * 8 + 24);
	exports_close(&e);
	model_free(&m);

	assert_int_equal(exports_prepare(&e, path_of, &whole, false), 0);
	stream_model(&n, NULL);
	in.m = &n;
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	model_free(&n);

	a = vpd_dump(streamed.vpd);
	b = vpd_dump(whole.vpd);
	assert_int_equal(strlen(a), strlen(b));
	assert_string_equal(a, b);
	/* what the comparison covers: every process, messages, the records' calls */
	assert_non_null(strstr(a, "message 19995"));
	{
		const char *l = listing(streamed.vpd);
		unsigned files = 0;

		for (; *l; l++)
			files += *l == '\n';
		assert_int_equal(files, STREAM_PIDS);
	}
	/* each record's call is a row of its file (api_call_id, 17th, not 0) */
	for (const char *g = strstr(a, "gcu_op:"); g; g = strstr(g + 1, "gcu_op:")) {
		const char *f = g;

		for (int k = 0; k < 17; k++)
			f = strchr(f + 1, ' ');
		assert_true(f && atoi(f + 1) > 0);
	}
	free(a);
	free(b);
}

/* an import that fails after its stream began: none of its files is left */
static void test_vpd_stream_abort(void **state)
{
	struct paths p = { .vpd = at("aborted") };
	struct model m;
	struct exports e;

	(void)state;
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	stream_model(&m, &e);
	exports_close(&e);
	model_free(&m);
	assert_string_equal(listing(p.vpd), "");
}

/* --print-gcu-trace: the CSV is the trace; only what is asked for is written */
static void test_gcu_trace_csv(void **state)
{
	struct paths p = { .csv = at("trace.csv") };
	struct export_in in = { .ro = &ro, .gcu_trace = true };
	struct model m;
	struct exports e;

	(void)state;
	make_model(&m, false);
	in.m = &m;
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	for (unsigned i = 0; i < nexporters; i++)
		assert_int_equal(e.t[i].open, i == exporter_index("export-csv"));
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	assert_true(!strncmp(slurp(p.csv, NULL), "Type,Start,Duration,", 20));
	check_same(p.csv, expect_gcu_trace, &m);
	model_free(&m);
}

/* a profile without CPU stacks cannot be folded: said, counted, nothing written; the rest is */
static void test_folded_refused(void **state)
{
	struct paths p = { .csv = at("r.csv"), .folded = at("r.folded") };
	struct export_in in = { .ro = &ro };
	struct model m;
	struct exports e;
	const char *out;
	int rc;

	(void)state;
	make_model(&m, false);
	in.m = &m;
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	capture_start();
	rc = exports_write(&e, &in);
	out = capture_end();
	assert_int_equal(rc, 1);
	exports_close(&e);
	assert_string_equal(out, "topsprof: error: --export-folded: the profile has no CPU call "
				 "stacks\n");
	assert_int_equal(access(p.folded, F_OK), -1);
	check_same(p.csv, expect_csv, &m);
	model_free(&m);
}

/* a file that is there is kept without force, before anything runs and after */
static void test_no_overwrite(void **state)
{
	struct paths p = { .csv = at("o.csv"), .chrome = at("o.json") };
	struct export_in in = { .ro = &ro };
	struct model m;
	struct exports e;
	const char *out;
	FILE *f;
	int rc;

	(void)state;
	make_model(&m, false);
	in.m = &m;
	f = fopen(p.chrome, "w");
	assert_non_null(f);
	fputs("someone's\n", f);
	assert_int_equal(fclose(f), 0);
	capture_start();
	rc = exports_prepare(&e, path_of, &p, false);
	out = capture_end();
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-chrome-trace: ", 40));
	assert_non_null(strstr(out, "exists"));
	/* nothing stays open, not even the CSV prepared before it */
	for (unsigned i = 0; i < nexporters; i++)
		assert_false(e.t[i].open);
	assert_string_equal(slurp(p.chrome, NULL), "someone's\n");
	assert_int_equal(access(p.csv, F_OK), -1);

	/* with force: replaced */
	assert_int_equal(exports_prepare(&e, path_of, &p, true), 0);
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	check_same(p.chrome, expect_chrome, &m);
	check_same(p.csv, expect_csv, &m);

	/* one that appears after the outputs were prepared: kept too, and counted */
	p.chrome = NULL;
	p.csv = at("late.csv");
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	f = fopen(p.csv, "w");
	assert_non_null(f);
	fputs("late\n", f);
	assert_int_equal(fclose(f), 0);
	capture_start();
	rc = exports_write(&e, &in);
	out = capture_end();
	assert_int_equal(rc, 1);
	exports_close(&e);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-csv: ", 31));
	assert_string_equal(slurp(p.csv, NULL), "late\n");

	/* a directory's files too: a vpd that is there already is kept, said and counted */
	p = (struct paths){ .vpd = at("v") };
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	assert_int_equal(exports_prepare(&e, path_of, &p, false), 0);
	capture_start();
	rc = exports_write(&e, &in);
	out = capture_end();
	exports_close(&e);
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-visual-profiler: ", 43));
	assert_non_null(strstr(out, "exists"));
	assert_int_equal(exports_prepare(&e, path_of, &p, true), 0);
	assert_int_equal(exports_write(&e, &in), 0);
	exports_close(&e);
	model_free(&m);
}

/* a directory is not a file's place, nor a file a directory's */
static void test_wrong_kind(void **state)
{
	struct paths p = { .csv = dir };
	struct exports e;
	const char *out;
	FILE *f;
	int rc;

	(void)state;
	capture_start();
	rc = exports_prepare(&e, path_of, &p, true);
	out = capture_end();
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-csv: ", 31));
	p.csv = NULL;
	p.vpd = at("a-file");
	f = fopen(p.vpd, "w");
	assert_non_null(f);
	assert_int_equal(fclose(f), 0);
	capture_start();
	rc = exports_prepare(&e, path_of, &p, true);
	out = capture_end();
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-visual-profiler: ", 43));
	for (unsigned i = 0; i < nexporters; i++)
		assert_false(e.t[i].open);
}

/* names: %p is this process, %% a percent sign; an unknown one is an error */
static void test_pattern(void **state)
{
	struct outtarget t;
	char pattern[PATH_MAX], want[PATH_MAX];
	const char *out;
	int rc;

	(void)state;
	snprintf(pattern, sizeof(pattern), "%s/out-%%p-100%%%%.csv", dir);
	snprintf(want, sizeof(want), "%s/out-%d-100%%.csv", dir, (int)getpid());
	assert_int_equal(export_target(&t, "export-csv", pattern, false, false), 0);
	assert_true(t.open);
	assert_string_equal(t.path, want);
	outtarget_close(&t);
	/* a directory's name too */
	snprintf(pattern, sizeof(pattern), "%s/vpd-%%p", dir);
	snprintf(want, sizeof(want), "%s/vpd-%d", dir, (int)getpid());
	assert_int_equal(export_target(&t, "export-visual-profiler", pattern, true, false), 0);
	assert_string_equal(t.path, want);
	outtarget_close(&t);
	{
		struct stat st;

		assert_int_equal(stat(want, &st), 0);
		assert_true(S_ISDIR(st.st_mode));
	}
	/* unknown: one error line naming the option */
	snprintf(pattern, sizeof(pattern), "%s/out-%%z.csv", dir);
	capture_start();
	rc = export_target(&t, "export-csv", pattern, false, false);
	out = capture_end();
	assert_int_equal(rc, 1);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: error: --export-csv: ", 31));
	assert_non_null(strstr(out, "unknown '%z'"));
	assert_false(t.open);
	unsetenv("TEST_EXPORT_UNSET");
	snprintf(pattern, sizeof(pattern), "%s/out-%%q{TEST_EXPORT_UNSET}.csv", dir);
	capture_start();
	rc = export_target(&t, "export-csv", pattern, false, false);
	out = capture_end();
	assert_int_equal(rc, 1);
	assert_non_null(strstr(out, "TEST_EXPORT_UNSET is not set"));
}

/* root writing where others can replace the file: warned once, and done */
static void test_exposed(void **state)
{
	char open_dir[128], path[PATH_MAX];
	struct outtarget t;
	const char *out;
	int rc;

	(void)state;
	if (geteuid())
		skip(); /* the warning is for root */
	snprintf(open_dir, sizeof(open_dir), "%s/shared", dir);
	assert_int_equal(mkdir(open_dir, 0700), 0);
	assert_int_equal(chmod(open_dir, 0777), 0);
	snprintf(path, sizeof(path), "%s/x.csv", open_dir);
	capture_start();
	rc = export_target(&t, "export-csv", path, false, false);
	out = capture_end();
	assert_int_equal(rc, 0);
	outtarget_close(&t);
	assert_int_equal(lines(out), 1);
	assert_true(!strncmp(out, "topsprof: warning: --export-csv: ", 33));
	assert_non_null(strstr(out, "others"));
	/* the sticky bit: nobody else can replace a file of root's */
	assert_int_equal(chmod(open_dir, 01777), 0);
	capture_start();
	rc = export_target(&t, "export-csv", path, false, false);
	out = capture_end();
	assert_int_equal(rc, 0);
	outtarget_close(&t);
	assert_string_equal(out, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_table, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_all, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vpd_calls, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vpd_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_vpd_stream_abort, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gcu_trace_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folded_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_overwrite, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wrong_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pattern, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exposed, setup, teardown),
	};

	return cmocka_run_group_tests_name("export", tests, NULL, NULL);
}
