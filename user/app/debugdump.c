// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "app/debugdump.h"
#include "lib/log.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#ifndef TOPSPROF_VERSION
#define TOPSPROF_VERSION "0.0.0-dev"
#endif

/* --debug-dump: the raw state of the run and what topsprof did, in the current directory, for a
 * bug report: topsprof-debug-PID.{raw,txt}; when either name is taken (a file, a link, a
 * directory: anyone may put one there) and --force-overwrite is not given,
 * topsprof-debug-PID-RANDOM.{raw,txt}, so nobody can keep root's run from starting */
int debug_dump_prepare(bool force, bool raw_given, struct outtarget *raw_out, struct outtarget *txt)
{
	bool raw = !raw_given;
	char err[PATH_MAX + 256], path[PATH_MAX], suffix[24] = "", msg[PATH_MAX + 256];

	for (int tries = 0;; tries++) {
		int k, e;

		for (k = raw ? 0 : 1; k < 2; k++) {
			snprintf(path, sizeof(path), "topsprof-debug-%d%s.%s", (int)getpid(),
				 suffix, k ? "txt" : "raw");
			if (outtarget_file(k ? txt : raw_out, path, force, err, sizeof(err)))
				break;
		}
		if (k == 2)
			break;
		e = errno;
		if (k && raw)
			outtarget_close(raw_out);
		if (force || (e != EEXIST && e != EISDIR) || tries == 16) {
			pr_error("--debug-dump: %s", err);
			return -1;
		}
		snprintf(suffix, sizeof(suffix), "-%016llx", (unsigned long long)outfile_random());
	}
	if (suffix[0])
		pr_debug("--debug-dump: topsprof-debug-%d.%s is taken: writing %s%s%s",
			 (int)getpid(), raw ? "{raw,txt}" : "txt", raw ? raw_out->path : "",
			 raw ? " and " : "", txt->path);
	if (!geteuid() && outtarget_exposed(txt, msg, sizeof(msg)) > 0)
		pr_warn("--debug-dump: %s", msg);
	return 0;
}

/* --debug-dump: what topsprof did, beside the raw data */
void debug_dump_write(const struct outtarget *txt, const struct outtarget *raw,
		      const struct debug_facts *x)
{
	char err[PATH_MAX + 256];
	struct outfile o;
	FILE *f;

	if (outfile_create(&o, txt, NULL, err, sizeof(err))) {
		pr_warn("--debug-dump: %s", err);
		return;
	}
	f = o.f;
	fprintf(f, "topsprof %s\ncommand:", TOPSPROF_VERSION);
	for (int i = 0; i < x->cli->app_argc; i++)
		fprintf(f, " %s", x->cli->app_argv[i]);
	fprintf(f, "\nexecutable: %s\n", x->found->exe);
	for (unsigned i = 0; i < x->found->n; i++) {
		const struct found_lib *l = &x->found->libs[i];

		fprintf(f, "%s: %s%s\n", api_domain_name(l->lib->domain),
			l->t.path[0] ? l->t.path : "-", l->t.in_executable ? " (linked in)" : "");
	}
	fprintf(f, "mode: %s\nsession: %s\n", x->stats_mode ? "statistics" : "trace", x->session);
	fprintf(f, "calls: %zu\ngcu records: %zu\nprocesses: %zu\nranges: %zu\n", x->m->ncalls,
		x->m->nops, x->m->nprocs, x->m->nranges);
	fprintf(f, "lost: calls %llu, strings %llu, depth %llu, stats %llu, process events %llu\n",
		(unsigned long long)x->m->lost_calls, (unsigned long long)x->m->lost_strings,
		(unsigned long long)x->m->lost_depth, (unsigned long long)x->m->lost_stats,
		(unsigned long long)x->m->lost_proc_events);
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		if (x->m->dev[d].present)
			fprintf(f, "GCU %d: tick %llu Hz, %zu sync pairs, %llu dropped\n", d,
				(unsigned long long)x->m->dev[d].tick_hz, x->m->dev[d].npairs,
				(unsigned long long)x->m->dev[d].overflow);
	if (outfile_commit(&o, err, sizeof(err)))
		pr_warn("--debug-dump: %s", err);
	else
		pr_debug("--debug-dump: wrote %s and %s", txt->path, raw->path);
}
