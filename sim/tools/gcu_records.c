// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* gcu-records: the driver's own record reader. Enables activities on every GCU, runs a command,
 * and prints each profiler record the devices write while it runs, one line each.
 * usage: gcu-records [-a operator,memcpy,cdte,sdte|all] [-o FILE] command [args...]
 * Records go to FILE (default: standard output, line by line, shared with the command's). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gcu_readout.h"

static const char *const kinds[] = { "?", "kernel", "memcpy", "memset", "dte" };
static const char *const engines[] = { "compute", "odte", "cdte", "sdte" };
static const char *const copies[] = { "HtoH", "HtoD", "DtoH", "DtoD" };

static unsigned parse_activities(const char *s)
{
	static const struct {
		const char *name;
		unsigned bit;
	} t[] = { { "operator", GCU_ACT_OPERATOR },
		  { "memcpy", GCU_ACT_MEMCPY },
		  { "cdte", GCU_ACT_CDTE },
		  { "sdte", GCU_ACT_SDTE },
		  { "all", GCU_ACT_OPERATOR | GCU_ACT_MEMCPY | GCU_ACT_CDTE | GCU_ACT_SDTE } };
	unsigned m = 0;
	char *copy = strdup(s), *save = NULL;

	for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(t) / sizeof(t[0]) && strcmp(w, t[i].name); i++)
			;
		if (i == sizeof(t) / sizeof(t[0])) {
			fprintf(stderr, "gcu-records: unknown activity '%s'\n", w);
			exit(2);
		}
		m |= t[i].bit;
	}
	free(copy);
	return m;
}

static FILE *out;

static int drain(struct gcu_ro_dev *d)
{
	struct gcu_record r[256];
	uint64_t hz = gcu_ro_tick_hz(d);
	int n, total = 0;

	while ((n = gcu_ro_read(d, r, 256)) > 0) {
		for (int i = 0; i < n; i++) {
			const char *name = r[i].name_id ? gcu_ro_name(d, r[i].name_id) : NULL;
			uint64_t dur = (r[i].end_ticks - r[i].start_ticks) * 1000000000ull / hz;

			fprintf(out,
				"dev=%u pid=%u tid=%u kind=%s engine=%s stream=%u launch=%llu start=%llu "
				"dur_ns=%llu bytes=%llu copy=%s name=%s\n",
				r[i].device, r[i].pid, r[i].tid,
				r[i].kind < 5 ? kinds[r[i].kind] : "?",
				r[i].engine < 4 ? engines[r[i].engine] : "?", r[i].stream_id,
				(unsigned long long)r[i].launch_id,
				(unsigned long long)r[i].start_ticks, (unsigned long long)dur,
				(unsigned long long)r[i].bytes,
				r[i].copy_kind < 4 ? copies[r[i].copy_kind] : "-",
				name ? name : "-");
		}
		total += n;
	}
	return n < 0 ? n : total;
}

int main(int argc, char **argv)
{
	struct gcu_ro_dev *dev[GCU_RO_MAX_DEVICES];
	unsigned act = GCU_ACT_OPERATOR | GCU_ACT_MEMCPY;
	int ndev = gcu_ro_device_count(), status = 0, c, done = 0;
	struct timespec tick = { 0, 2 * 1000 * 1000 };
	char err[512];
	pid_t pid;

	out = stdout;
	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt(argc, argv, "+a:o:")) != -1) {
		if (c == 'a') {
			act = parse_activities(optarg);
		} else if (c == 'o') {
			out = fopen(optarg, "w");
			if (!out) {
				perror(optarg);
				return 1;
			}
		} else {
			fprintf(stderr, "usage: gcu-records [-a activities] [-o file] command "
					"[args...]\n");
			return 2;
		}
	}
	if (optind >= argc || ndev < 0) {
		fprintf(stderr,
			ndev < 0 ? "gcu-records: bad %s\n"
				 : "usage: gcu-records [-a activities] command [args...]\n",
			GCU_RO_COUNT_ENV);
		return 2;
	}
	for (int i = 0; i < ndev; i++) {
		int rc = gcu_ro_open(i, &dev[i], err, sizeof(err));

		if (!rc)
			rc = gcu_ro_enable(dev[i], act);
		if (rc) {
			fprintf(stderr, "gcu-records: GCU %d: %s\n", i,
				rc == -EBUSY ? "another profiler is reading it" : err);
			return 1;
		}
	}
	pid = fork();
	if (pid == 0) {
		execvp(argv[optind], &argv[optind]);
		fprintf(stderr, "gcu-records: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	while (!done) {
		done = waitpid(pid, &status, WNOHANG) == pid;
		for (int i = 0; i < ndev; i++)
			drain(dev[i]);
		if (!done)
			nanosleep(&tick, NULL);
	}
	for (int i = 0; i < ndev; i++) {
		drain(dev[i]);
		fprintf(out, "dev=%d overflow=%llu\n", i,
			(unsigned long long)gcu_ro_overflow(dev[i]));
		gcu_ro_close(dev[i]);
	}
	if (fclose(out)) {
		perror("gcu-records: writing the records");
		return 1;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
