// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* sqlfloor N FILE: SQLite alone, the floor under the vpd export of scripts/bench/scale.sh. N rows
 * such as the vpd's api_call rows of genevents' calls (the same functions, in turn, with their
 * domain and category; times of the epoch; four threads; no message) inserted into a new
 * database FILE the way topsprof's writer does (output/vpd.c: 64 KiB pages, no journal, one
 * transaction, 128 rows a statement, the row ids SQLite gives) and nothing else: no raw data read,
 * no model, no other table. FILE must not exist. */
#include "target/runtime/apitable.h"

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BATCH 128

static const char *const mix[] = { "topsLaunchKernel", "topsMemcpyAsync",  "topsLaunchKernel",
				   "topsMemsetAsync",  "topsLaunchKernel", "topsStreamSynchronize",
				   "topsMemcpyHtoD",   "topsGetLastError" };

static void check(sqlite3 *db, int rc, const char *what)
{
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		fprintf(stderr, "sqlfloor: %s: %s\n", what, sqlite3_errmsg(db));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const struct api_fn *fns[sizeof(mix) / sizeof(mix[0])];
	char sql[64 + BATCH * 32] = "INSERT INTO api_call VALUES";
	long long n = argc == 3 ? atoll(argv[1]) : 0, base = (long long)time(NULL) * 1000000000ll;
	sqlite3_stmt *many, *one;
	sqlite3 *db;
	int fd;

	if (n <= 0) {
		fprintf(stderr, "usage: sqlfloor N FILE\n");
		return 2;
	}
	for (size_t k = 0; k < sizeof(mix) / sizeof(mix[0]); k++) {
		int f = api_find(mix[k]);

		if (f < 0) {
			fprintf(stderr, "sqlfloor: this build has no %s\n", mix[k]);
			return 1;
		}
		fns[k] = &api_table[f];
	}
	for (int i = 0; i < BATCH; i++)
		strcat(sql, i ? ",(NULL,?,?,?,?,?,?,1,?,?,?)" : "(NULL,?,?,?,?,?,?,1,?,?,?)");
	fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd) ||
	    sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK) {
		fprintf(stderr, "sqlfloor: %s: %s\n", argv[2],
			fd < 0 ? strerror(errno) : "cannot open");
		return 1;
	}
	check(db,
	      sqlite3_exec(
		      db,
		      "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
		      "CREATE TABLE api_call(id INTEGER PRIMARY KEY, name TEXT,"
		      " start_timestamp INTEGER, end_timestamp INTEGER, duration INTEGER,"
		      " domain TEXT, category TEXT, process_id INTEGER, tid INTEGER, ret INTEGER,"
		      " message TEXT); BEGIN",
		      NULL, NULL, NULL),
	      "schema");
	check(db, sqlite3_prepare_v2(db, sql, -1, &many, NULL), "prepare");
	check(db,
	      sqlite3_prepare_v2(db, "INSERT INTO api_call VALUES(NULL,?,?,?,?,?,?,1,?,?,?)", -1,
				 &one, NULL),
	      "prepare");
	for (long long i = 0; i < n;) {
		long long rows = n - i >= BATCH ? BATCH : 1;
		sqlite3_stmt *st = rows == BATCH ? many : one;

		sqlite3_reset(st);
		for (int r = 0; r < rows; r++, i++) {
			const struct api_fn *f = fns[i % (sizeof(mix) / sizeof(mix[0]))];
			long long start = base + i * 1000, dur = 800 + i % 5000;
			int p = r * 9;

			sqlite3_bind_text(st, p + 1, f->name, -1, SQLITE_STATIC);
			sqlite3_bind_int64(st, p + 2, start);
			sqlite3_bind_int64(st, p + 3, start + dur);
			sqlite3_bind_int64(st, p + 4, dur);
			sqlite3_bind_text(st, p + 5, api_domain_name(f->domain), -1, SQLITE_STATIC);
			sqlite3_bind_text(st, p + 6, api_category_name(f->category), -1,
					  SQLITE_STATIC);
			sqlite3_bind_int64(st, p + 7, 4242 + i % 4);
			sqlite3_bind_int64(st, p + 8, 0);
			sqlite3_bind_null(st, p + 9);
		}
		check(db, sqlite3_step(st), "insert");
	}
	sqlite3_finalize(many);
	sqlite3_finalize(one);
	check(db, sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), "commit");
	check(db, sqlite3_close(db), "close");
	return 0;
}
