// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/vpd.h"
#include "lib/grow.h"
#include "lib/infile.h"
#include "lib/outfile.h"
#include "output/report.h"
#include "output/sqlfd.h"
#include "output/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char schema[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE process(id INTEGER PRIMARY KEY, host TEXT, rank TEXT, pid INTEGER,"
	" ppid INTEGER, comm TEXT, command TEXT);"
	"CREATE TABLE dev(id INTEGER PRIMARY KEY, row_name TEXT, node TEXT, category TEXT,"
	" device INTEGER, process_id INTEGER);"
	"CREATE TABLE gcu_op(id INTEGER PRIMARY KEY, name TEXT, start_timestamp INTEGER,"
	" end_timestamp INTEGER, device INTEGER, stream INTEGER, launch_id INTEGER,"
	" duration INTEGER, view_id TEXT, type TEXT, bytes INTEGER, copy_kind INTEGER,"
	" engine INTEGER, kind INTEGER, process_id INTEGER, tid INTEGER, api_call_id INTEGER,"
	" dev_id INTEGER);"
	"CREATE TABLE api_call(id INTEGER PRIMARY KEY, name TEXT, start_timestamp INTEGER,"
	" end_timestamp INTEGER, duration INTEGER, domain TEXT, category TEXT,"
	" process_id INTEGER, tid INTEGER, ret INTEGER, message TEXT);"
	"CREATE TABLE topstx_range(id INTEGER PRIMARY KEY, domain TEXT, name TEXT,"
	" start_timestamp INTEGER, end_timestamp INTEGER, duration INTEGER, process_id INTEGER,"
	" tid INTEGER, truncated INTEGER);"
	"CREATE TABLE topstx_mark(id INTEGER PRIMARY KEY, domain TEXT, name TEXT, count INTEGER,"
	" process_id INTEGER);"
	"CREATE TABLE memcpy(id INTEGER PRIMARY KEY, gcu_op_id INTEGER, direction TEXT,"
	" bytes INTEGER);"
	"CREATE TABLE stack(id INTEGER PRIMARY KEY, process_id INTEGER, frames TEXT,"
	" count INTEGER, truncated INTEGER, comm TEXT, kind TEXT, pid INTEGER, entry TEXT,"
	" driver INTEGER, total_ns INTEGER, max_ns INTEGER);"
	"CREATE TABLE kernel_entry(id INTEGER PRIMARY KEY, name TEXT, driver INTEGER,"
	" calls INTEGER, total_ns INTEGER, max_ns INTEGER, process_id INTEGER);"
	"CREATE TABLE sample(id INTEGER PRIMARY KEY, timestamp INTEGER, process_id INTEGER,"
	" tid INTEGER, stack_id INTEGER);"
	"CREATE TABLE counter(id INTEGER PRIMARY KEY, name TEXT, timestamp INTEGER,"
	" process_id INTEGER, value REAL);";

static const char *const dev_rows[][2] = {
	{ "GCU Kernels", "kernel" },
	{ "GCU Memcpy", "memcpy" },
	{ "GCU Memcpy_cdte", "cdte" },
	{ "GCU Memcpy_sdte", "sdte" },
};

const char *vpd_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
					    "SLURM_PROCID", "RANK" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return v;
	}
	return "";
}

/* whether the data start as an SQLite database does */
static bool is_sqlite(const unsigned char *data, size_t len)
{
	return len >= 16 && !memcmp(data, "SQLite format 3", 16);
}

void vpd_host(char *host, size_t len)
{
	if (gethostname(host, len))
		snprintf(host, len, "localhost");
	host[len - 1] = '\0';
}

static int64_t epoch_offset(void)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return ((int64_t)real.tv_sec - mono.tv_sec) * 1000000000ll +
	       ((int64_t)real.tv_nsec - mono.tv_nsec);
}

/* --- writing ------------------------------------------------------------------------------- */

struct writer {
	sqlite3 *db;
	char *err;
	size_t errlen;
	int rc;
};

static void fail_db(struct writer *w, const char *what)
{
	if (!w->rc)
		snprintf(w->err, w->errlen, "%s: %s", what, sqlite3_errmsg(w->db));
	w->rc = -1;
}

static void exec(struct writer *w, const char *sql)
{
	if (!w->rc && sqlite3_exec(w->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		fail_db(w, "sqlite");
}

static sqlite3_stmt *prepare(struct writer *w, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (!w->rc && sqlite3_prepare_v2(w->db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_db(w, "sqlite prepare");
	return st;
}

/* bind the arguments by the letters of types (i: int64, t: text or NULL) and step */
static void row(struct writer *w, sqlite3_stmt *st, const char *types, ...)
{
	va_list ap;
	int i = 1;

	if (w->rc || !st)
		return;
	sqlite3_reset(st);
	va_start(ap, types);
	for (const char *t = types; *t; t++, i++) {
		if (*t == 'i') {
			sqlite3_bind_int64(st, i, va_arg(ap, int64_t));
		} else if (*t == 't') {
			const char *s = va_arg(ap, const char *);

			if (s)
				/* the strings outlive the step, which copies them */
				sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
			else
				sqlite3_bind_null(st, i);
		}
	}
	va_end(ap);
	if (sqlite3_step(st) != SQLITE_DONE)
		fail_db(w, "sqlite insert");
}

/* a counter row: name, timestamp, value */
static void row_real(struct writer *w, sqlite3_stmt *st, const char *name, int64_t t, double v)
{
	if (w->rc || !st)
		return;
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, t);
	sqlite3_bind_double(st, 3, v);
	if (sqlite3_step(st) != SQLITE_DONE)
		fail_db(w, "sqlite insert");
}

/* api_call, the table of millions of rows, API_BATCH rows a statement: a statement's own cost
 * (reset, step, halt) then goes once for all of them (10M calls, with the ids and the 64 KiB
 * pages below: 14.3 s of CPU time -> 8.6 s at 32 rows, 3% less again at 128). The row
 * ids SQLite gives (NULL: one more than the last) are 1, 2, ... as the caller counts, without the
 * search an id given would take. */
#define API_BATCH  128
#define API_INSERT "INSERT INTO api_call VALUES"
#define API_VALUES "(NULL,?,?,?,?,?,?,1,?,?,?)"
#define API_PARAMS 9

struct api_row {
	const char *name, *domain, *category, *message; /* static, or the model's */
	int64_t start, end, tid, ret;
};

struct api_rows {
	sqlite3_stmt *one, *many; /* a row; API_BATCH rows */
	struct api_row rows[API_BATCH];
	int n;
};

static sqlite3_stmt *api_rows_prepare(struct writer *w)
{
	char sql[sizeof(API_INSERT) + API_BATCH * sizeof(API_VALUES)] = API_INSERT;
	size_t len = strlen(sql);

	for (int i = 0; i < API_BATCH; i++)
		len += (size_t)snprintf(sql + len, sizeof(sql) - len, "%s" API_VALUES,
					i ? "," : "");
	return prepare(w, sql);
}

static void api_rows_bind(sqlite3_stmt *st, int base, const struct api_row *r)
{
	sqlite3_bind_text(st, base + 1, r->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, base + 2, r->start);
	sqlite3_bind_int64(st, base + 3, r->end);
	sqlite3_bind_int64(st, base + 4, r->end - r->start);
	sqlite3_bind_text(st, base + 5, r->domain, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, base + 6, r->category, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, base + 7, r->tid);
	sqlite3_bind_int64(st, base + 8, r->ret);
	if (r->message)
		sqlite3_bind_text(st, base + 9, r->message, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, base + 9);
}

/* the rows kept, in order: in one statement when there are API_BATCH, else one by one */
static void api_rows_flush(struct writer *w, struct api_rows *b)
{
	bool all = b->n == API_BATCH;

	for (int i = 0; !w->rc && b->one && b->many && i < b->n; i++) {
		sqlite3_stmt *st = all ? b->many : b->one;

		if (!all || !i)
			sqlite3_reset(st);
		api_rows_bind(st, all ? i * API_PARAMS : 0, &b->rows[i]);
		if ((!all || i == b->n - 1) && sqlite3_step(st) != SQLITE_DONE)
			fail_db(w, "sqlite insert");
	}
	b->n = 0;
}

static void meta(struct writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void meta(struct writer *w, sqlite3_stmt *st, const char *key, const char *fmt, ...)
{
	char v[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	row(w, st, "tt", key, v);
}

static const char *proc_comm(const struct model *m, uint32_t pid, uint32_t *ppid)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		if (m->procs[i].pid == pid) {
			*ppid = m->procs[i].ppid;
			return m->procs[i].comm;
		}
	}
	*ppid = 0;
	return "";
}

static size_t profiled_pids(const struct model *m, uint32_t *out, size_t max);

/* the processes that have files of their own */
struct owners {
	uint32_t pids[1024];
	size_t n;
};

/* whether a stack of process pid goes in the file of process file_pid: its own, or the started
 * process's when it has none */
static bool in_file(const struct model *m, const struct owners *o, uint32_t pid, uint32_t file_pid)
{
	if (pid == file_pid)
		return true;
	if (file_pid != m->root_pid)
		return false;
	for (size_t i = 0; i < o->n; i++)
		if (o->pids[i] == pid)
			return false;
	return true;
}

/* the process's sampled stacks (counted in the kernel: stack rows with counts, no sample rows) */
static void write_cpu(struct writer *w, const struct model *m, const struct owners *o, uint32_t pid)
{
	const struct cpu_profile *p = &m->cpu;
	sqlite3_stmt *st;

	if (!p->sampled)
		return;
	st = prepare(w, "INSERT INTO meta VALUES(?,?)");
	meta(w, st, "cpu_sampling_hz", "%u", p->hz);
	meta(w, st, "cpu_samples", "%llu", (unsigned long long)p->samples);
	meta(w, st, "cpu_truncated_samples", "%llu", (unsigned long long)p->truncated_samples);
	meta(w, st, "cpu_lost_samples", "%llu", (unsigned long long)p->lost_samples);
	meta(w, st, "cpu_lost_stacks", "%llu", (unsigned long long)p->lost_stacks);
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO stack(process_id, frames, count, truncated, comm, kind, pid)"
			" VALUES(1,?,?,?,?,'cpu',?)");
	for (size_t i = 0; i < p->n; i++)
		if (in_file(m, o, p->v[i].pid, pid))
			row(w, st, "tiiti", p->v[i].frames, (int64_t)p->v[i].count,
			    (int64_t)p->v[i].truncated, p->v[i].comm, (int64_t)p->v[i].pid);
	sqlite3_finalize(st);
}

/* the kernel stacks (of processes without a file: in the started process's), and the entry
 * points with the settings in the started process's */
static void write_kernel(struct writer *w, const struct model *m, const struct owners *o,
			 uint32_t pid)
{
	const struct kernel_profile *p = &m->kernel;
	sqlite3_stmt *st;

	if (!p->collected)
		return;
	if (pid == m->root_pid) {
		st = prepare(w, "INSERT INTO meta VALUES(?,?)");
		meta(w, st, "kernel_mechanism", "%s", p->mechanism ? p->mechanism : "");
		meta(w, st, "kernel_filter", "%s", p->filter ? p->filter : "");
		meta(w, st, "kernel_lost_entries", "%llu", (unsigned long long)p->lost_entries);
		meta(w, st, "kernel_lost_stacks", "%llu", (unsigned long long)p->lost_stacks);
		meta(w, st, "kernel_lost_threads", "%llu", (unsigned long long)p->lost_threads);
		meta(w, st, "kernel_untold_waits", "%llu", (unsigned long long)p->untold);
		sqlite3_finalize(st);
		st = prepare(w, "INSERT INTO kernel_entry VALUES(NULL,?,?,?,?,?,1)");
		for (size_t i = 0; i < p->ne; i++)
			row(w, st, "tiiii", p->e[i].name, (int64_t)p->e[i].driver,
			    (int64_t)p->e[i].calls, (int64_t)p->e[i].total_ns,
			    (int64_t)p->e[i].max_ns);
		sqlite3_finalize(st);
	}
	st = prepare(w, "INSERT INTO stack(process_id, frames, count, truncated, comm, kind, pid,"
			" entry, driver, total_ns, max_ns) VALUES(1,?,?,0,?,?,?,?,?,?,?)");
	for (size_t i = 0; i < p->ns; i++) {
		const struct kernel_stack *k = &p->s[i];

		if (in_file(m, o, k->pid, pid))
			row(w, st, "tittitiii", k->frames, (int64_t)k->count, k->comm,
			    k->offcpu ? "kernel-wait" : "kernel-call", (int64_t)k->pid, k->entry,
			    (int64_t)k->driver, (int64_t)k->total_ns, (int64_t)k->max_ns);
	}
	sqlite3_finalize(st);
}

/* the process's utilization series as counter rows; the host's in the started process's file */
static void write_util(struct writer *w, const struct model *m, uint32_t pid, int64_t off)
{
	const struct util_profile *u = &m->util;
	sqlite3_stmt *st;

	if (!u->cpu && !u->mem)
		return;
	st = prepare(w, "INSERT INTO meta VALUES(?,?)");
	meta(w, st, "utilization", "%d", (u->cpu ? 1 : 0) | (u->mem ? 2 : 0));
	meta(w, st, "utilization_hz", "%u", u->hz);
	meta(w, st, "cpus", "%u", u->ncpus);
	meta(w, st, "memory_total", "%llu", (unsigned long long)u->mem_total);
	meta(w, st, "utilization_missed", "%llu", (unsigned long long)u->missed);
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO counter(name, timestamp, process_id, value) VALUES(?,?,1,?)");
	for (size_t i = 0; i < u->n; i++) {
		const struct util_series *s = &u->s[i];
		bool host = s->pid == UTIL_HOST_PID;

		if (host ? pid != m->root_pid : s->pid != pid)
			continue;
		for (size_t k = 0; k < s->n; k++) {
			int64_t t = (int64_t)s->v[k].t_ns + off;

			if (u->cpu)
				row_real(w, st, host ? "host_cpu_percent" : "cpu_percent", t,
					 s->v[k].cpu);
			if (u->mem)
				row_real(w, st, host ? "host_memory_in_use_bytes" : "rss_bytes", t,
					 (double)s->v[k].rss);
			if (u->mem && !host)
				row_real(w, st, "vsz_bytes", t, (double)s->v[k].vsz);
		}
	}
	sqlite3_finalize(st);
}

/* a call a GCU record points at, and its row in the file (0: another process's) */
struct call_ref {
	size_t call;
	int64_t row;
};

static int by_call(const void *a, const void *b)
{
	size_t x = ((const struct call_ref *)a)->call, y = ((const struct call_ref *)b)->call;

	return x < y ? -1 : x > y;
}

/* the calls the GCU records of pid point at, sorted and each once (not a row for every call:
 * 8 bytes a call at 10M calls is 80 MB), with their rows in pid's file: its calls are its rows
 * 1, 2, ... in the order they were kept */
static struct call_ref *call_refs(const struct model *m, uint32_t pid, size_t *n)
{
	struct call_ref *r = malloc((m->nops + 1) * sizeof(*r));
	size_t k = 0, ref = 0;
	int64_t row = 0;

	*n = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < m->nops; i++)
		if (m->ops[i].rec.pid == pid && m->ops[i].call >= 0)
			r[k++] = (struct call_ref){ (size_t)m->ops[i].call, 0 };
	qsort(r, k, sizeof(*r), by_call);
	for (size_t i = 0; i < k; i++)
		if (!*n || r[*n - 1].call != r[i].call)
			r[(*n)++] = r[i];
	for (size_t i = 0; ref < *n && i < m->ncalls; i++) {
		uint32_t cpid, ctid;

		calls_thread(&m->calls, i, &cpid, &ctid);
		if (cpid != pid)
			continue;
		++row;
		while (ref < *n && r[ref].call < i)
			ref++;
		if (ref < *n && r[ref].call == i)
			r[ref].row = row;
	}
	return r;
}

static int64_t call_row(const struct call_ref *refs, size_t nrefs, int64_t call)
{
	struct call_ref key = { (size_t)call, 0 }, *hit;

	if (call < 0)
		return 0;
	hit = bsearch(&key, refs, nrefs, sizeof(*refs), by_call);
	return hit ? hit->row : 0;
}

/* a new database for name in t's directory, written in a private directory (outfile.h) */
static int db_create(struct outfile *o, struct writer *w, const struct outtarget *t,
		     const char *name)
{
	const char *vfs;

	if (outfile_create_private(o, t, name, w->err, w->errlen))
		return -1;
	vfs = sqlfd_vfs();
	/* o->db names the file outfile_create_private made (O_EXCL, in its private directory, as
	 * /proc/self/fd/N/name): SQLite opens that one, creates none (no SQLITE_OPEN_CREATE) and
	 * follows no link. URIs: a merge attaches its members by one (sqlfd_uri) */
	if (!vfs || sqlite3_open_v2(o->db, &w->db,
				    SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_URI |
					    SQLITE_OPEN_NOMUTEX, /* one thread at a time uses it */
				    vfs) != SQLITE_OK) {
		named_errf(w->err, w->errlen, o->path, ": %s",
			   w->db ? sqlite3_errmsg(w->db) : "cannot open");
		sqlite3_close(w->db);
		w->db = NULL;
		outfile_abort(o);
		return -1;
	}
	/* 64 KiB pages: fewer of them to balance and write than at 4 KiB (10M calls: about 10%
	 * less time) */
	exec(w, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
	return 0;
}

/* the database closed and put in place, or thrown away when anything failed */
static int db_commit(struct outfile *o, struct writer *w)
{
	if (sqlite3_close(w->db) != SQLITE_OK && !w->rc) {
		snprintf(w->err, w->errlen, "closing the database failed");
		w->rc = -1;
	}
	w->db = NULL;
	if (w->rc) {
		char reason[512];

		snprintf(reason, sizeof(reason), "%s", w->err);
		named_errf(w->err, w->errlen, o->path, ": %s", reason);
		outfile_abort(o);
		return -1;
	}
	return outfile_commit(o, w->err, w->errlen);
}

static void vpd_name(char *out, size_t len, const struct vpd_identity *id, uint32_t pid)
{
	if (*id->rank)
		snprintf(out, len, "%s-rank%s-%u.vpd", id->host, id->rank, pid);
	else
		snprintf(out, len, "%s-%u.vpd", id->host, pid);
}

/* the vpd of one process being written: its database, in a transaction from file_open to
 * file_close, and the api_call rows not inserted yet */
struct vpd_file {
	uint32_t pid;
	struct outfile o;
	struct writer w;
	struct api_rows b;
	char err[512];
};

/* pid's file made, its tables created and a transaction begun; 0, or -1 with the reason in
 * f->err when there is no file (else a failure is said by file_close) */
static int file_open(struct vpd_file *f, const struct outtarget *dir, const struct vpd_identity *id,
		     uint32_t pid)
{
	char name[NAME_MAX + 1];

	f->pid = pid;
	f->w = (struct writer){ NULL, f->err, sizeof(f->err), 0 };
	f->b.n = 0;
	f->b.one = f->b.many = NULL;
	vpd_name(name, sizeof(name), id, pid);
	if (db_create(&f->o, &f->w, dir, name))
		return -1;
	exec(&f->w, schema);
	exec(&f->w, "BEGIN");
	f->b.one = prepare(&f->w, API_INSERT API_VALUES);
	f->b.many = api_rows_prepare(&f->w);
	return 0;
}

static void file_abort(struct vpd_file *f)
{
	sqlite3_finalize(f->b.one);
	sqlite3_finalize(f->b.many);
	sqlite3_close(f->w.db);
	f->w.db = NULL;
	outfile_abort(&f->o);
}

/* call c's row, message msg (the model's: it outlives the file), times of the epoch */
static struct api_row api_row_of(const struct api_call *c, const char *msg, int64_t off)
{
	const struct api_fn *fn = &api_table[c->fn];

	return (struct api_row){ fn->name,
				 api_domain_name(fn->domain),
				 api_category_name(fn->category),
				 msg,
				 (int64_t)c->start_ns + off,
				 (int64_t)c->end_ns + off,
				 (int64_t)c->tid,
				 c->ret };
}

static void file_call(struct vpd_file *f, const struct api_row *r)
{
	f->b.rows[f->b.n++] = *r;
	if (f->b.n == API_BATCH)
		api_rows_flush(&f->w, &f->b);
}

/* the rows of f's process's calls, from the model */
static void file_calls(struct vpd_file *f, const struct model *m, int64_t off)
{
	for (size_t i = 0; i < m->ncalls && !f->w.rc; i++) {
		struct api_call c;
		uint32_t cpid, ctid;
		struct api_row r;

		calls_thread(&m->calls, i, &cpid, &ctid);
		if (cpid != f->pid)
			continue;
		calls_get(&m->calls, i, &c);
		r = api_row_of(&c, c.str[0], off);
		file_call(f, &r);
	}
}

/* the rest of f's process's file after its calls: its process, devices, GCU records, ranges,
 * stacks, counters and marks; committed and put in place. 0, or -1 with the reason in f->err */
static int file_close(struct vpd_file *f, const struct model *m, const struct vpd_identity *id,
		      const struct owners *o, int64_t off)
{
	struct writer *w = &f->w;
	uint32_t pid = f->pid, ppid;
	size_t nrefs;
	struct call_ref *refs = call_refs(m, pid, &nrefs);
	int64_t dev_row[GCU_RO_MAX_DEVICES], n = 0;
	const char *comm = proc_comm(m, pid, &ppid);
	sqlite3_stmt *st;
	char buf[128];

	api_rows_flush(w, &f->b);
	sqlite3_finalize(f->b.one);
	sqlite3_finalize(f->b.many);
	f->b.one = f->b.many = NULL;
	if (!refs && !w->rc) {
		snprintf(w->err, w->errlen, "out of memory");
		w->rc = -1;
	}
	st = prepare(w, "INSERT INTO meta VALUES(?,?)");
	meta(w, st, "format", "%s", VPD_FORMAT);
	meta(w, st, "version", "%d", VPD_VERSION);
	meta(w, st, "host", "%s", id->host);
	meta(w, st, "rank", "%s", id->rank);
	meta(w, st, "pid", "%u", pid);
	meta(w, st, "root_pid", "%u", m->root_pid);
	meta(w, st, "command", "%s", id->command);
	meta(w, st, "header", "%s", pid == m->root_pid && m->header ? m->header : "");
	meta(w, st, "span_start_timestamp", "%lld", (long long)(m->span_start_ns + off));
	meta(w, st, "span_end_timestamp", "%lld", (long long)(m->span_end_ns + off));
	meta(w, st, "monotonic_to_epoch_ns", "%lld", (long long)off);
	meta(w, st, "gcu_activities", "%u", m->gcu_activities);
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO process VALUES(1,?,?,?,?,?,?)");
	row(w, st, "ttiitt", id->host, id->rank, (int64_t)pid, (int64_t)ppid, comm, id->command);
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO dev VALUES(?,?,?,?,?,1)");
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++) {
		dev_row[d] = 0;
		if (!m->dev[d].present)
			continue;
		snprintf(buf, sizeof(buf), "GCU%d", d);
		dev_row[d] = n + 1;
		for (size_t k = 0; k < sizeof(dev_rows) / sizeof(dev_rows[0]); k++)
			row(w, st, "ittti", ++n, dev_rows[k][0], buf, dev_rows[k][1], (int64_t)d);
	}
	sqlite3_finalize(st);
	st = prepare(w, "INSERT INTO gcu_op VALUES(NULL,?,?,?,?,?,?,?,?,?,?,?,?,?,1,?,?,?)");
	{
		sqlite3_stmt *mc = prepare(w, "INSERT INTO memcpy VALUES(NULL,?,?,?)");
		static const char *const dir[] = { "HtoH", "HtoD", "DtoH", "DtoD" };

		n = 0;
		for (size_t i = 0; i < m->nops; i++) {
			const struct gcu_op *op = &m->ops[i];
			uint32_t d = op->rec.device;
			int64_t dev = d < GCU_RO_MAX_DEVICES ? dev_row[d] : 0;
			int64_t sub = op->rec.kind == GCU_REC_KERNEL ? 0
				      : op->rec.kind == GCU_REC_DTE
					      ? (op->rec.engine == GCU_ENGINE_CDTE ? 2 : 3)
					      : 1;
			char view[64], name[128];

			if (op->rec.pid != pid)
				continue;
			snprintf(view, sizeof(view), "dev:%lld,user:1", (long long)(dev + sub));
			++n;
			row(w, st, "tiiiiiittiiiiiii", report_op_label(op, name, sizeof(name)),
			    (int64_t)op->start_ns + off, (int64_t)op->end_ns + off, (int64_t)d,
			    (int64_t)op->rec.stream_id, (int64_t)op->rec.launch_id,
			    (int64_t)(op->end_ns - op->start_ns), view, report_op_type(op),
			    (int64_t)op->rec.bytes, (int64_t)op->rec.copy_kind,
			    (int64_t)op->rec.engine, (int64_t)op->rec.kind, (int64_t)op->rec.tid,
			    call_row(refs, nrefs, op->call), dev + sub);
			if (op->rec.kind == GCU_REC_MEMCPY)
				row(w, mc, "iti", n,
				    op->rec.copy_kind < 4 ? dir[op->rec.copy_kind] : "?",
				    (int64_t)op->rec.bytes);
		}
		sqlite3_finalize(mc);
	}
	sqlite3_finalize(st);

	st = prepare(w, "INSERT INTO topstx_range VALUES(NULL,?,?,?,?,?,1,?,?)");
	for (size_t i = 0; i < m->nranges; i++) {
		const struct tx_range *r = &m->ranges[i];

		if (r->pid == pid)
			row(w, st, "ttiiiii", r->domain, r->name, (int64_t)r->start_ns + off,
			    (int64_t)r->end_ns + off, (int64_t)(r->end_ns - r->start_ns),
			    (int64_t)r->tid, (int64_t)r->truncated);
	}
	sqlite3_finalize(st);
	write_cpu(w, m, o, pid);
	write_kernel(w, m, o, pid);
	write_util(w, m, pid, off);
	/* marks are counted for the whole run: in the file of the process that was started */
	st = prepare(w, "INSERT INTO topstx_mark VALUES(NULL,?,?,?,1)");
	for (size_t i = 0; pid == m->root_pid && i < m->nmarks; i++)
		row(w, st, "tti", m->marks[i].domain, m->marks[i].name, (int64_t)m->marks[i].count);
	sqlite3_finalize(st);
	exec(w, "COMMIT");
	free(refs);
	return db_commit(&f->o, w);
}

/* every process the profile saw */
static size_t profiled_pids(const struct model *m, uint32_t *out, size_t max)
{
	size_t n = 0;

#define ADD(p)                                              \
	do {                                                \
		uint32_t p_ = (p);                          \
		size_t k_;                                  \
		for (k_ = 0; k_ < n && out[k_] != p_; k_++) \
			;                                   \
		if (k_ == n && n < max && p_)               \
			out[n++] = p_;                      \
	} while (0)
	ADD(m->root_pid);
	for (size_t i = 0; i < m->nprocs; i++)
		ADD(m->procs[i].pid);
	for (size_t i = 0; i < m->ncalls; i++) {
		uint32_t cpid, ctid;

		calls_thread(&m->calls, i, &cpid, &ctid);
		ADD(cpid);
	}
	for (size_t i = 0; i < m->nops; i++)
		ADD(m->ops[i].rec.pid);
#undef ADD
	return n;
}

/* --- the api_call rows written while an import reads the calls ----------------------------- */

/* Rows go to the writer's thread in batches of STREAM_ROWS, at most STREAM_SLOTS of them queued
 * (the memory it takes: 4 x 8192 x 72 bytes); the first STREAM_FILES processes' rows are
 * written so, the others' by vpd_export (from the model, as without a stream) */
#define STREAM_ROWS  8192
#define STREAM_SLOTS 4
#define STREAM_FILES 8

struct stream_row {
	uint32_t pid;
	struct api_row r;
};

struct vpd_stream {
	const struct outtarget *dir;
	struct vpd_identity id;
	char host[256];
	int64_t off;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t filled, emptied;
	/* the producer fills slot head % STREAM_SLOTS (cur rows so far) and counts head up;
	 * the thread writes slot tail % STREAM_SLOTS and counts tail up */
	struct stream_row (*slot)[STREAM_ROWS];
	size_t nrows[STREAM_SLOTS], cur;
	uint64_t head, tail;
	bool running, ended, aborted;
	/* the thread's, read once it has ended */
	struct vpd_file files[STREAM_FILES];
	size_t nfiles;
	uint64_t rows;
	bool failed;
	char err[512];
};

static struct vpd_file *stream_file(struct vpd_stream *s, uint32_t pid)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].pid == pid)
			return &s->files[i];
	return NULL;
}

/* a batch into the files (a process's opened at its first row, while there is room) */
static void stream_write(struct vpd_stream *s, const struct stream_row *r, size_t n)
{
	struct vpd_file *f = NULL;

	for (size_t i = 0; i < n && !s->failed; i++) {
		if (!f || f->pid != r[i].pid) {
			f = stream_file(s, r[i].pid);
			if (!f && s->nfiles < STREAM_FILES) {
				f = &s->files[s->nfiles];
				if (file_open(f, s->dir, &s->id, r[i].pid)) {
					snprintf(s->err, sizeof(s->err), "%s", f->err);
					s->failed = true;
					break;
				}
				s->nfiles++;
			}
			if (!f)
				continue; /* written by vpd_export */
		}
		file_call(f, &r[i].r);
		s->rows++;
	}
}

static void *stream_main(void *arg)
{
	struct vpd_stream *s = arg;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->tail == s->head && !s->ended)
			pthread_cond_wait(&s->filled, &s->lock);
		if (s->tail == s->head)
			break;
		if (!s->aborted) {
			size_t k = s->tail % STREAM_SLOTS;

			pthread_mutex_unlock(&s->lock);
			stream_write(s, s->slot[k], s->nrows[k]);
			pthread_mutex_lock(&s->lock);
		}
		s->tail++;
		pthread_cond_signal(&s->emptied);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

struct vpd_stream *vpd_stream_start(const struct outtarget *dir)
{
	struct vpd_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->slot = malloc(STREAM_SLOTS * sizeof(*s->slot));
	vpd_host(s->host, sizeof(s->host));
	s->id = (struct vpd_identity){ s->host, vpd_rank(), "" };
	s->dir = dir;
	s->off = epoch_offset();
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->filled, NULL);
	pthread_cond_init(&s->emptied, NULL);
	/* the VFS registered here, before the thread can use it */
	if (s->slot && sqlfd_vfs())
		s->running = !pthread_create(&s->thread, NULL, stream_main, s);
	if (!s->running) {
		vpd_stream_free(s);
		return NULL;
	}
	return s;
}

/* the slot filled handed to the thread; back once a slot is free */
static void stream_publish(struct vpd_stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->nrows[s->head % STREAM_SLOTS] = s->cur;
	s->head++;
	pthread_cond_signal(&s->filled);
	while (s->head - s->tail == STREAM_SLOTS)
		pthread_cond_wait(&s->emptied, &s->lock);
	pthread_mutex_unlock(&s->lock);
	s->cur = 0;
}

void vpd_stream_call(void *ctx, const struct model *m, const struct api_call *c, size_t i)
{
	struct vpd_stream *s = ctx;
	const char *msg = NULL;

	if (c->str[0]) { /* the model's copy, which outlives the row; c's is the caller's */
		struct api_call kept;

		calls_get(&m->calls, i, &kept);
		msg = kept.str[0];
	}
	s->slot[s->head % STREAM_SLOTS][s->cur++] =
		(struct stream_row){ c->pid, api_row_of(c, msg, s->off) };
	if (s->cur == STREAM_ROWS)
		stream_publish(s);
}

/* the rows kept written and the thread ended (once); abort: what it has not written yet is
 * thrown away */
static void stream_end(struct vpd_stream *s, bool abort)
{
	if (!s->running)
		return;
	if (s->cur && !abort)
		stream_publish(s);
	pthread_mutex_lock(&s->lock);
	s->ended = true;
	s->aborted = abort;
	pthread_cond_signal(&s->filled);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->running = false;
}

void vpd_stream_free(struct vpd_stream *s)
{
	if (!s)
		return;
	stream_end(s, true);
	for (size_t i = 0; i < s->nfiles; i++)
		if (s->files[i].w.db)
			file_abort(&s->files[i]);
	pthread_cond_destroy(&s->filled);
	pthread_cond_destroy(&s->emptied);
	pthread_mutex_destroy(&s->lock);
	free(s->slot);
	free(s);
}

uint64_t vpd_stream_rows(const struct vpd_stream *s, size_t *files)
{
	*files = s->nfiles;
	return s->rows;
}

int vpd_export(const struct outtarget *dir, const struct model *m, const struct vpd_identity *id,
	       struct vpd_stream *s, char *err, size_t errlen)
{
	struct owners *o = malloc(sizeof(*o));
	int64_t off = s ? s->off : epoch_offset();
	int n = 0;

	if (s)
		stream_end(s, false);
	if (!o || (s && s->failed)) {
		snprintf(err, errlen, "%s", o ? s->err : "out of memory");
		free(o);
		return -1;
	}
	o->n = profiled_pids(m, o->pids, sizeof(o->pids) / sizeof(o->pids[0]));
	for (size_t i = 0; i < o->n; i++) {
		struct vpd_file one, *f = s ? stream_file(s, o->pids[i]) : NULL;

		if (!f) {
			f = &one;
			if (file_open(f, dir, id, o->pids[i])) {
				snprintf(err, errlen, "%s", f->err);
				n = -1;
				break;
			}
			file_calls(f, m, off);
		}
		if (file_close(f, m, id, o, off)) {
			snprintf(err, errlen, "%s", f->err);
			n = -1;
			break;
		}
		n++;
	}
	free(o);
	return n;
}

/* --- reading ------------------------------------------------------------------------------- */

/* the tables every import reads, and those a merge copies too */
static const char *const import_tables[] = {
	"meta", "process", "api_call", "gcu_op", "topstx_range", "topstx_mark", NULL,
};
static const char *const merge_tables[] = {
	"dev", "memcpy", "stack", "kernel_entry", "counter", NULL,
};

/* the first of tables that schema of db lacks in *missing, NULL when it has them all; -1 when
 * the schema cannot be read (SQLite's reason in db) */
static int find_missing(sqlite3 *db, const char *schema, const char *const *tables,
			const char **missing)
{
	sqlite3_stmt *st = NULL;
	char *sql = sqlite3_mprintf("SELECT 1 FROM %Q.sqlite_master WHERE type = 'table' AND"
				    " name = ?",
				    schema);
	int rc = 0, s;

	*missing = NULL;
	if (!sql || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return -1;
	}
	for (; *tables && !*missing && !rc; tables++) {
		sqlite3_bind_text(st, 1, *tables, -1, SQLITE_STATIC);
		s = sqlite3_step(st);
		if (s == SQLITE_DONE)
			*missing = *tables;
		else if (s != SQLITE_ROW)
			rc = -1;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	return rc;
}

/* whether schema of db is a topsprof vpd an import reads (merge: one a merge takes); 0, or -1
 * with the reason in why. The one check of a vpd, for an import and a merge's member alike.
 * Tables are looked for before anything is read from them: a view of that name is not one */
static int check_vpd(sqlite3 *db, const char *schema, bool merge, char *why, size_t whylen)
{
	static const char *const meta_table[] = { "meta", NULL };
	sqlite3_stmt *st = NULL;
	const char *missing;
	char *sql = NULL;
	bool ours = false;
	long version = 0;

	if (find_missing(db, schema, meta_table, &missing)) {
		snprintf(why, whylen, "a damaged SQLite file: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (!missing)
		sql = sqlite3_mprintf("SELECT (SELECT value FROM %Q.meta WHERE key='format'),"
				      " (SELECT value FROM %Q.meta WHERE key='version')",
				      schema, schema);
	if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		const char *f = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);

		version = v ? atol(v) : 0;
		/* version 1 had no stacks nor counters: read as it is */
		ours = f && !strcmp(f, VPD_FORMAT) && version >= 1 && version <= VPD_VERSION;
		if (f && !strcmp(f, VPD_FORMAT) && !ours)
			snprintf(why, whylen, "vpd version %s, this topsprof reads 1 to %d",
				 v ? v : "?", VPD_VERSION);
		else if (!ours)
			snprintf(why, whylen, "an SQLite file, but not a topsprof vpd");
	} else {
		snprintf(why, whylen, "an SQLite file, but not a topsprof vpd");
	}
	sqlite3_finalize(st);
	sqlite3_free(sql);
	if (!ours)
		return -1;
	if (find_missing(db, schema, import_tables, &missing) ||
	    (!missing && merge && version == VPD_VERSION &&
	     find_missing(db, schema, merge_tables, &missing))) {
		snprintf(why, whylen, "a damaged SQLite file: %s", sqlite3_errmsg(db));
		return -1;
	}
	if (missing) {
		snprintf(why, whylen, "not a topsprof vpd file (no table %s)", missing);
		return -1;
	}
	if (merge && version != VPD_VERSION) {
		snprintf(why, whylen,
			 "vpd version %ld: merging takes version %d files (import it with "
			 "--import-profile and export it again)",
			 version, VPD_VERSION);
		return -1;
	}
	return 0;
}

/* whether the file of fd starts as an SQLite database does; else why not in why */
static bool fd_is_sqlite(int fd, char *why, size_t whylen)
{
	unsigned char head[16];

	if (pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
	    is_sqlite(head, sizeof(head)))
		return true;
	snprintf(why, whylen, "not an SQLite (vpd) file");
	return false;
}

/*
 * The vpd of fd (a regular file, opened once: infile.h) as a read-only database, read through
 * that descriptor (the VFS above): SQLite opens no file by any name, so the file checked cannot
 * be swapped for a FIFO, and no journal or WAL of anyone's making is looked for beside it. Only
 * what is read is in memory: SQLite's page cache, whatever the size of the file.
 */
static int open_ours(int fd, sqlite3 **db, char *err, size_t errlen)
{
	const char *vfs = sqlfd_vfs();
	char uri[96];

	*db = NULL;
	if (!fd_is_sqlite(fd, err, errlen))
		return -1;
	sqlfd_uri(uri, sizeof(uri), fd);
	if (!vfs ||
	    sqlite3_open_v2(uri, db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, vfs) != SQLITE_OK) {
		snprintf(err, errlen, "%s", *db ? sqlite3_errmsg(*db) : "out of memory");
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	if (check_vpd(*db, "main", false, err, errlen)) {
		sqlite3_close(*db);
		*db = NULL;
		return -1;
	}
	return 0;
}

static char *dup_col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

static int64_t meta_int(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return v;
}

static int read_rows(sqlite3 *db, const char *sql, struct model *m,
		     int (*each)(sqlite3_stmt *, struct model *))
{
	sqlite3_stmt *st = NULL;
	int rc = 0, s;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	while ((s = sqlite3_step(st)) == SQLITE_ROW && !rc)
		rc = each(st, m);
	if (s != SQLITE_DONE && s != SQLITE_ROW)
		rc = -1;
	sqlite3_finalize(st);
	return rc;
}

static int one_call(sqlite3_stmt *st, struct model *m)
{
	const char *name = (const char *)sqlite3_column_text(st, 0);
	int fn = name ? api_find(name) : -1;
	struct tp_api_event e;
	char *str[2] = { NULL, NULL };
	uint32_t len[2] = { 0, 0 };
	bool trunc[2] = { false, false };
	int rc;

	if (fn < 0)
		return -1;
	memset(&e, 0, sizeof(e));
	e.fn = (uint32_t)fn;
	e.start_ns = (uint64_t)sqlite3_column_int64(st, 1);
	e.hdr.ts_ns = (uint64_t)sqlite3_column_int64(st, 2);
	e.hdr.pid = (uint32_t)sqlite3_column_int64(st, 3);
	e.hdr.tid = (uint32_t)sqlite3_column_int64(st, 4);
	e.ret = sqlite3_column_int64(st, 5);
	/* the message as the file has it, its length left 0 as imports always had it */
	str[0] = (char *)sqlite3_column_text(st, 6);
	rc = model_add_call_strs(m, &e, str, len, trunc);
	return rc == 1 ? 0 : -1;
}

/* kernels are named by id in the model: one id per distinct name of the file */
static uint32_t import_name_id(const char *name)
{
	static char **names;
	static uint32_t n;

	if (!name) { /* forget the names of the last file */
		for (uint32_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		names = NULL;
		n = 0;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i + 1;
	if (n + 1 >= GCU_RO_MAX_NAME_ID) {
		return 0;
	} else {
		char **nn = realloc(names, (n + 1) * sizeof(*nn));

		if (!nn)
			return 0;
		names = nn;
		names[n] = strdup(name);
		return names[n] ? ++n : 0;
	}
}

static int one_op(sqlite3_stmt *st, struct model *m)
{
	struct gcu_record r;
	const char *name = (const char *)sqlite3_column_text(st, 0);
	int64_t call = sqlite3_column_int64(st, 11);
	size_t n;

	memset(&r, 0, sizeof(r));
	r.device = (uint32_t)sqlite3_column_int64(st, 3);
	r.stream_id = (uint32_t)sqlite3_column_int64(st, 4);
	r.launch_id = (uint64_t)sqlite3_column_int64(st, 5);
	r.bytes = (uint64_t)sqlite3_column_int64(st, 6);
	r.copy_kind = (uint8_t)sqlite3_column_int64(st, 7);
	r.engine = (uint8_t)sqlite3_column_int64(st, 8);
	r.kind = (uint16_t)sqlite3_column_int64(st, 9);
	r.pid = (uint32_t)sqlite3_column_int64(st, 10);
	r.tid = (uint32_t)sqlite3_column_int64(st, 12);
	if (r.device >= GCU_RO_MAX_DEVICES || r.kind < GCU_REC_KERNEL || r.kind > GCU_REC_DTE)
		return -1;
	/* kernels and DTE moves have names; the rest are named from their record */
	r.name_id = (r.kind == GCU_REC_KERNEL || r.kind == GCU_REC_DTE) && name
			    ? import_name_id(name)
			    : 0;
	n = m->nops;
	model_add_gcu(m, &r, r.name_id ? name : NULL);
	if (m->nops == n)
		return -1;
	m->ops[m->nops - 1].start_ns = (uint64_t)sqlite3_column_int64(st, 1);
	m->ops[m->nops - 1].end_ns = (uint64_t)sqlite3_column_int64(st, 2);
	m->ops[m->nops - 1].call = call > 0 && call <= INT32_MAX && (uint64_t)call <= m->ncalls
					   ? (int32_t)(call - 1)
					   : -1;
	m->dev[r.device].present = true;
	return 0;
}

static int one_range(sqlite3_stmt *st, struct model *m)
{
	struct tx_range *r;

	if (!grow_array((void **)&m->ranges, &m->ranges_cap, m->nranges, sizeof(*m->ranges)))
		return -1;
	r = &m->ranges[m->nranges++];
	r->domain = dup_col(st, 0);
	r->name = dup_col(st, 1);
	if (!r->name)
		r->name = strdup("");
	r->start_ns = (uint64_t)sqlite3_column_int64(st, 2);
	r->end_ns = (uint64_t)sqlite3_column_int64(st, 3);
	r->pid = (uint32_t)sqlite3_column_int64(st, 4);
	r->tid = (uint32_t)sqlite3_column_int64(st, 5);
	r->truncated = sqlite3_column_int64(st, 6) != 0;
	return 0;
}

static int one_mark(sqlite3_stmt *st, struct model *m)
{
	if (!grow_array((void **)&m->marks, &m->marks_cap, m->nmarks, sizeof(*m->marks)))
		return -1;
	m->marks[m->nmarks].domain = dup_col(st, 0);
	m->marks[m->nmarks].name = dup_col(st, 1);
	if (!m->marks[m->nmarks].name)
		m->marks[m->nmarks].name = strdup("");
	m->marks[m->nmarks].count = (uint64_t)sqlite3_column_int64(st, 2);
	m->nmarks++;
	return 0;
}

static int one_stack(sqlite3_stmt *st, struct model *m)
{
	const char *frames = (const char *)sqlite3_column_text(st, 2);
	const char *comm = (const char *)sqlite3_column_text(st, 3);
	int64_t count = sqlite3_column_int64(st, 1);
	bool truncated = sqlite3_column_int64(st, 4) != 0;

	if (!frames || count <= 0)
		return -1;
	return cpu_profile_add(&m->cpu, (uint32_t)sqlite3_column_int64(st, 0), comm ? comm : "",
			       frames, (uint64_t)count, truncated);
}

/* rows of one process in time order: the points of its series, or the host's */
static int one_counter(sqlite3_stmt *st, struct model *m)
{
	const char *name = (const char *)sqlite3_column_text(st, 2);
	int64_t t = sqlite3_column_int64(st, 1);
	double v = sqlite3_column_double(st, 3);
	bool host = name && !strncmp(name, "host_", 5);
	struct util_series *s;
	struct util_point *p;

	if (!name || t < 0 || !(v >= 0 && v <= 1e18))
		return -1;
	/* the rows come a series at a time (the host's first, made already): the last series, or
	 * a new one */
	if (host) {
		s = &m->util.s[0];
	} else {
		uint32_t pid = (uint32_t)sqlite3_column_int64(st, 0);
		const char *comm = (const char *)sqlite3_column_text(st, 4);

		s = &m->util.s[m->util.n - 1];
		if (m->util.n == 1 || s->pid != pid)
			s = util_series_add(&m->util, pid, comm ? comm : "");
		if (!s)
			return -1;
	}
	if (!s->n || s->v[s->n - 1].t_ns != (uint64_t)t) {
		struct util_point np = { .t_ns = (uint64_t)t };

		if (util_add(s, &np))
			return -1;
	}
	p = &s->v[s->n - 1];
	if (!strcmp(name, "cpu_percent") || !strcmp(name, "host_cpu_percent"))
		p->cpu = v;
	else if (!strcmp(name, "rss_bytes") || !strcmp(name, "host_memory_in_use_bytes"))
		p->rss = (uint64_t)v;
	else if (!strcmp(name, "vsz_bytes"))
		p->vsz = (uint64_t)v;
	return 0;
}

static int64_t col_count(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);

	return v < 0 ? -1 : v;
}

static int one_kernel_entry(sqlite3_stmt *st, struct model *m)
{
	const char *name = (const char *)sqlite3_column_text(st, 0);
	int64_t calls = col_count(st, 2), total = col_count(st, 3), max = col_count(st, 4);

	if (!name || calls < 0 || total < 0 || max < 0)
		return -1;
	return kernel_add_entry(&m->kernel, name, sqlite3_column_int64(st, 1) != 0, (uint64_t)calls,
				(uint64_t)total, (uint64_t)max);
}

static int one_kernel_stack(sqlite3_stmt *st, struct model *m)
{
	struct kernel_stack k = { 0 };
	const char *kind = (const char *)sqlite3_column_text(st, 4);
	int64_t count = col_count(st, 6), total = col_count(st, 7), max = col_count(st, 8);

	k.pid = (uint32_t)sqlite3_column_int64(st, 0);
	k.comm = (char *)sqlite3_column_text(st, 1);
	k.entry = (char *)sqlite3_column_text(st, 2);
	k.driver = sqlite3_column_int64(st, 3) != 0;
	k.offcpu = kind && !strcmp(kind, "kernel-wait");
	k.frames = (char *)sqlite3_column_text(st, 5);
	if (!k.frames || count < 0 || total < 0 || max < 0)
		return -1;
	k.count = (uint64_t)count;
	k.total_ns = (uint64_t)total;
	k.max_ns = (uint64_t)max;
	return kernel_add_stack(&m->kernel, &k);
}

/* a meta value, copied: 0, 1 when absent, -1 out of memory */
static int meta_text(sqlite3 *db, const char *key, char **out)
{
	sqlite3_stmt *st = NULL;
	int rc = 1;

	*out = NULL;
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key=?", -1, &st, NULL) ==
	    SQLITE_OK) {
		sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW) {
			*out = dup_col(st, 0);
			rc = *out ? 0 : -1;
		}
	}
	sqlite3_finalize(st);
	return rc;
}

/* the CPU stacks, kernel stacks and utilization series, with their settings */
static int import_cpu(sqlite3 *db, struct model *m)
{
	int64_t hz = meta_int(db, "cpu_sampling_hz"), util = meta_int(db, "utilization");
	char *text = NULL;
	int rc = 0;

	if (hz > 0 && hz <= 1000) {
		m->cpu.sampled = true;
		m->cpu.hz = (uint32_t)hz;
		m->cpu.lost_samples = (uint64_t)meta_int(db, "cpu_lost_samples");
		m->cpu.lost_stacks = (uint64_t)meta_int(db, "cpu_lost_stacks");
		rc = read_rows(db,
			       "SELECT pid, count, frames, comm, truncated FROM stack"
			       " WHERE kind = 'cpu' ORDER BY id",
			       m, one_stack);
		cpu_profile_finish(&m->cpu);
	}
	if (!rc && meta_text(db, "kernel_mechanism", &text) == 0) {
		m->kernel.collected = true;
		m->kernel.mechanism = text;
		if (meta_text(db, "kernel_filter", &m->kernel.filter) < 0)
			return -1;
		m->kernel.lost_entries = (uint64_t)meta_int(db, "kernel_lost_entries");
		m->kernel.lost_stacks = (uint64_t)meta_int(db, "kernel_lost_stacks");
		m->kernel.lost_threads = (uint64_t)meta_int(db, "kernel_lost_threads");
		m->kernel.untold = (uint64_t)meta_int(db, "kernel_untold_waits");
		rc = read_rows(db,
			       "SELECT name, driver, calls, total_ns, max_ns FROM kernel_entry"
			       " ORDER BY id",
			       m, one_kernel_entry);
		if (!rc)
			rc = read_rows(
				db,
				"SELECT pid, comm, entry, driver, kind, frames, count, total_ns,"
				" max_ns FROM stack WHERE kind LIKE 'kernel-%' ORDER BY id",
				m, one_kernel_stack);
		kernel_profile_finish(&m->kernel);
	}
	if (!rc && util & 3) {
		int64_t uhz = meta_int(db, "utilization_hz"), cpus = meta_int(db, "cpus");

		m->util.cpu = util & 1;
		m->util.mem = (util & 2) != 0;
		m->util.hz = uhz > 0 && uhz <= 1000 ? (uint32_t)uhz : 1;
		m->util.ncpus = cpus > 0 && cpus < 1 << 20 ? (uint32_t)cpus : 1;
		m->util.mem_total = (uint64_t)meta_int(db, "memory_total");
		m->util.missed = (uint64_t)meta_int(db, "utilization_missed");
		/* the host's series first, as a live run has it */
		if (!util_series_get(&m->util, UTIL_HOST_PID, "host"))
			return -1;
		rc = read_rows(db,
			       "SELECT p.pid, c.timestamp, c.name, c.value, p.comm FROM counter c"
			       " JOIN process p ON p.id = c.process_id"
			       /* a merged file has a host series per file: the first file's is
				* the one host series of the model */
			       " WHERE c.name NOT LIKE 'host\\_%' ESCAPE '\\' OR c.process_id ="
			       " (SELECT MIN(process_id) FROM counter WHERE name LIKE 'host\\_%'"
			       " ESCAPE '\\')"
			       " ORDER BY c.name LIKE 'host\\_%' ESCAPE '\\' DESC, c.process_id,"
			       " c.timestamp, c.id",
			       m, one_counter);
	}
	return rc;
}

/* the vpd of fd into a model */
static int import_fd(int fd, struct model *m, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st = NULL;
	int rc = 0;

	if (open_ours(fd, &db, err, errlen))
		return -1;
	m->root_pid = (uint32_t)meta_int(db, "root_pid");
	m->span_start_ns = (uint64_t)meta_int(db, "span_start_timestamp");
	m->span_end_ns = (uint64_t)meta_int(db, "span_end_timestamp");
	m->gcu_activities = (unsigned)meta_int(db, "gcu_activities");
	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key='header'", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW) {
		m->header = dup_col(st, 0);
		if (m->header && !*m->header) {
			free(m->header);
			m->header = NULL;
		}
	}
	sqlite3_finalize(st);
	rc = read_rows(db,
		       "SELECT a.name, a.start_timestamp, a.end_timestamp, p.pid, a.tid, a.ret,"
		       " a.message FROM api_call a JOIN process p ON p.id = a.process_id"
		       " ORDER BY a.id",
		       m, one_call);
	if (!rc)
		rc = read_rows(
			db,
			"SELECT g.name, g.start_timestamp, g.end_timestamp, g.device,"
			" g.stream, g.launch_id, g.bytes, g.copy_kind, g.engine, g.kind, p.pid,"
			" g.api_call_id, g.tid FROM gcu_op g"
			" JOIN process p ON p.id = g.process_id ORDER BY g.id",
			m, one_op);
	if (!rc)
		rc = read_rows(db,
			       "SELECT r.domain, r.name, r.start_timestamp, r.end_timestamp, p.pid,"
			       " r.tid, r.truncated FROM topstx_range r"
			       " JOIN process p ON p.id = r.process_id ORDER BY r.id",
			       m, one_range);
	if (!rc)
		rc = read_rows(db, "SELECT domain, name, count FROM topstx_mark ORDER BY id", m,
			       one_mark);
	if (!rc)
		rc = import_cpu(db, m);
	if (!rc) {
		/* the runtime statistics, from the calls */
		for (size_t i = 0; i < m->ncalls; i++) {
			struct api_call call = model_call(m, i), *c = &call;
			uint64_t d = c->end_ns - c->start_ns;
			struct api_stat one = { 1, d, d, d };

			if (api_table[c->fn].domain == DOM_RUNTIME)
				model_add_stat(m, c->fn, &one);
		}
	} else {
		snprintf(err, errlen, "a damaged vpd: %s", sqlite3_errmsg(db));
	}
	import_name_id(NULL);
	sqlite3_close(db);
	return rc;
}

int vpd_import(const char *path, struct model *m, char *err, size_t errlen)
{
	int fd = infile_open(path, NULL, err, errlen), rc;

	if (fd < 0)
		return -1;
	rc = import_fd(fd, m, err, errlen);
	close(fd);
	return rc;
}

int vpd_import_profile(const char *path, struct model *m, char *err, size_t errlen)
{
	unsigned char head[16];
	int fd, rc;

	/* opened once, told apart by its first bytes, read through the same descriptor */
	fd = infile_open(path, NULL, err, errlen);
	if (fd < 0)
		return -1;
	if (pread(fd, head, sizeof(head), 0) == (ssize_t)sizeof(head) &&
	    is_sqlite(head, sizeof(head))) {
		m->summary_only =
			false; /* a vpd's calls are read as they are (rows, not streamed) */
		rc = import_fd(fd, m, err, errlen);
		close(fd);
		return rc;
	}
	rc = store_read_profile_fd(fd, m, err, errlen);
	close(fd);
	return rc;
}

/* --- merging ------------------------------------------------------------------------------- */

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char merge_sql[] =
	"INSERT INTO main.process SELECT id+$p, host, rank, pid, ppid, comm, command"
	" FROM src.process;"
	"INSERT INTO main.dev SELECT id+$d, row_name, node, category, device, process_id+$p"
	" FROM src.dev;"
	"INSERT INTO main.api_call SELECT id+$a, name, start_timestamp, end_timestamp,"
	" duration, domain, category, process_id+$p, tid, ret, message FROM src.api_call;"
	"INSERT INTO main.gcu_op SELECT id+$g, name, start_timestamp, end_timestamp, device,"
	" stream, launch_id, duration, 'dev:'||(dev_id+$d)||',user:'||(process_id+$p), type,"
	" bytes, copy_kind, engine, kind, process_id+$p, tid,"
	" CASE WHEN api_call_id > 0 THEN api_call_id+$a ELSE 0 END, dev_id+$d FROM src.gcu_op;"
	"INSERT INTO main.memcpy SELECT NULL, gcu_op_id+$g, direction, bytes FROM src.memcpy;"
	"INSERT INTO main.topstx_range SELECT NULL, domain, name, start_timestamp,"
	" end_timestamp, duration, process_id+$p, tid, truncated FROM src.topstx_range;"
	"INSERT INTO main.topstx_mark SELECT NULL, domain, name, count, process_id+$p"
	" FROM src.topstx_mark;"
	"INSERT OR IGNORE INTO main.meta SELECT key, value FROM src.meta WHERE key IN"
	" ('cpu_sampling_hz', 'utilization', 'utilization_hz', 'cpus', 'memory_total',"
	" 'kernel_mechanism', 'kernel_filter');"
	"INSERT INTO main.stack SELECT NULL, process_id+$p, frames, count, truncated, comm,"
	" kind, pid, entry, driver, total_ns, max_ns FROM src.stack;"
	"INSERT INTO main.kernel_entry SELECT NULL, name, driver, calls, total_ns, max_ns,"
	" process_id+$p FROM src.kernel_entry;"
	"INSERT INTO main.counter SELECT NULL, name, timestamp, process_id+$p, value"
	" FROM src.counter;";

static int64_t max_id(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(id), 0) FROM main.%s", table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* whether the last error of the writer's database is about the output (a full disk, a write
 * that failed), not about the member read */
static bool output_error(sqlite3 *db)
{
	int e = sqlite3_extended_errcode(db);

	return (e & 0xff) == SQLITE_FULL || (e & 0xff) == SQLITE_READONLY ||
	       e == SQLITE_IOERR_WRITE || e == SQLITE_IOERR_FSYNC || e == SQLITE_IOERR_TRUNCATE ||
	       e == SQLITE_IOERR_NOMEM || (e & 0xff) == SQLITE_NOMEM;
}

/* one member, opened once as fd (infile.h): attached as schema src through the descriptor (the
 * VFS above: SQLite opens nothing by name), checked, and copied with its ids moved past the rows
 * already there; what was checked is what is merged. 0, or -1 with the reason in why and
 * *output set when it was about the output */
static int merge_one(struct writer *w, int fd, char *why, size_t whylen, bool *output)
{
	char sql[sizeof(merge_sql) + 256], uri[96], *q, *attach;
	int64_t p = max_id(w->db, "process"), d = max_id(w->db, "dev"),
		a = max_id(w->db, "api_call"), g = max_id(w->db, "gcu_op");
	const char *s;
	int rc;

	*output = false;
	if (!fd_is_sqlite(fd, why, whylen))
		return -1;
	sqlfd_uri(uri, sizeof(uri), fd);
	attach = sqlite3_mprintf("ATTACH %Q AS src", uri);
	if (!attach || sqlite3_exec(w->db, attach, NULL, NULL, NULL) != SQLITE_OK) {
		snprintf(why, whylen, "%s", attach ? sqlite3_errmsg(w->db) : "out of memory");
		sqlite3_free(attach);
		return -1;
	}
	sqlite3_free(attach);
	if (check_vpd(w->db, "src", true, why, whylen)) {
		sqlite3_exec(w->db, "DETACH src", NULL, NULL, NULL);
		return -1;
	}
	/* the offsets, put where the statements name them */
	q = sql;
	for (s = merge_sql; *s && q < sql + sizeof(sql) - 32; s++) {
		if (*s == '$' && strchr("pdag", s[1])) {
			int64_t v = s[1] == 'p' ? p : s[1] == 'd' ? d : s[1] == 'a' ? a : g;

			q += sprintf(q, "%lld", (long long)v);
			s++;
		} else {
			*q++ = *s;
		}
	}
	*q = '\0';
	rc = sqlite3_exec(w->db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(w->db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(w->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		*output = output_error(w->db);
		snprintf(why, whylen, "%s", sqlite3_errmsg(w->db));
	}
	if (!sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	if (sqlite3_exec(w->db, "DETACH src", NULL, NULL, NULL) != SQLITE_OK && rc == SQLITE_OK) {
		snprintf(why, whylen, "%s", sqlite3_errmsg(w->db));
		rc = SQLITE_ERROR;
	}
	return rc == SQLITE_OK ? 0 : -1;
}

/* err = "DIR/NAME: why", the path cut in its middle when too long, never the reason */
static void member_err(char *err, size_t errlen, const char *dir, const char *name, const char *why)
{
	char *path = NULL;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		path = NULL;
	named_errf(err, errlen, path ? path : name, ": %s", why);
	free(path);
}

int vpd_merge(const char *dir, const struct outtarget *out, char *err, size_t errlen)
{
	/* the directory opened once (a FIFO of that name is not waited on), its members opened in
	 * it by name (infile.h): never a path built again, however long */
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	DIR *dp = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	char **names = NULL, why[512];
	size_t n = 0, cap = 0;
	struct outfile o;
	struct writer w = { NULL, err, errlen, 0 };
	bool member_failed = false;
	int rc = -1;

	if (!dp) {
		named_errf(err, errlen, dir, ": %s", strerror(errno));
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	while ((de = readdir(dp))) {
		size_t len = strlen(de->d_name);

		if (len < 5 || strcmp(de->d_name + len - 4, ".vpd"))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*nn));

			if (!nn)
				goto oom;
			names = nn;
		}
		names[n] = strdup(de->d_name);
		if (!names[n])
			goto oom;
		n++;
	}
	if (!n) {
		named_errf(err, errlen, dir, ": no .vpd file");
		goto out;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	/* the output is a temporary until every member is in: a member that fails, however late,
	 * leaves nothing */
	if (db_create(&o, &w, out, NULL)) {
		rc = VPD_MERGE_OUTPUT;
		goto out;
	}
	exec(&w, schema);
	exec(&w, "BEGIN");
	{
		char *m =
			sqlite3_mprintf("INSERT INTO meta VALUES('format', %Q), ('version', '%d'),"
					" ('merged_files', '%d')",
					VPD_FORMAT, VPD_VERSION, (int)n);

		exec(&w, m);
		sqlite3_free(m);
	}
	exec(&w, "COMMIT");
	/* each member opened, checked and merged once, one at a time; an error names it */
	for (size_t i = 0; i < n && !w.rc; i++) {
		bool output = false;
		int fd = infile_openat(dirfd(dp), names[i], NULL, why, sizeof(why));

		if (fd < 0 || merge_one(&w, fd, why, sizeof(why), &output)) {
			if (output) { /* said with the output's name, below */
				snprintf(err, errlen, "%s", why);
				w.rc = -1;
			} else {
				member_err(err, errlen, dir, names[i], why);
				member_failed = true;
			}
		}
		if (fd >= 0)
			close(fd);
		if (member_failed)
			break;
	}
	if (member_failed) {
		sqlite3_close(w.db);
		outfile_abort(&o);
		goto out;
	}
	/* the merged span, and the first process as the one reports are named after */
	exec(&w, "INSERT INTO meta SELECT 'root_pid', pid FROM process ORDER BY id LIMIT 1;"
		 "INSERT INTO meta SELECT 'span_start_timestamp', MIN(t) FROM (SELECT"
		 " MIN(start_timestamp) t FROM gcu_op UNION ALL SELECT MIN(start_timestamp) FROM"
		 " api_call);"
		 "INSERT INTO meta SELECT 'span_end_timestamp', MAX(t) FROM (SELECT"
		 " MAX(end_timestamp) t FROM gcu_op UNION ALL SELECT MAX(end_timestamp) FROM"
		 " api_call);");
	/* anything else that failed was the output's: said with its name, nothing left */
	rc = db_commit(&o, &w) ? VPD_MERGE_OUTPUT : (int)n;
	goto out;
oom:
	named_errf(err, errlen, dir, ": out of memory");
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	closedir(dp);
	return rc;
}
