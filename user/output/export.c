// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "output/export.h"
#include "lib/log.h"
#include "lib/outname.h"
#include "output/chrome.h"
#include "output/store.h"
#include "output/vpd.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int write_csv(FILE *f, const struct export_in *x)
{
	if (x->gcu_trace)
		report_csv_gcu_trace(f, x->m);
	else
		report_csv_summary(f, x->m, x->ro);
	return 0;
}

static int write_chrome(FILE *f, const struct export_in *x)
{
	chrome_write(f, x->m);
	return 0;
}

static int write_profile(FILE *f, const struct export_in *x)
{
	return store_write_profile(f, x->m);
}

/* an imported profile recorded without --cpu-profiling-callstack */
static const char *no_cpu_stacks(const struct export_in *x)
{
	return x->m->cpu.sampled ? NULL : "the profile has no CPU call stacks";
}

static int write_folded(FILE *f, const struct export_in *x)
{
	return cpu_profile_write_folded(f, &x->m->cpu);
}

static int write_vpd(const struct outtarget *dir, const struct export_in *x, char *err,
		     size_t errlen)
{
	char host[256];
	struct vpd_identity id = { host, vpd_rank(), x->command };

	size_t files;
	uint64_t rows;
	int n;

	vpd_host(host, sizeof(host));
	n = vpd_export(dir, x->m, &id, x->vpd, err, errlen);
	if (n >= 0 && x->vpd) {
		rows = vpd_stream_rows(x->vpd, &files);
		pr_debug("vpd: %llu api_call rows of %zu processes written as the calls were read",
			 (unsigned long long)rows, files);
	}
	return n;
}

/* in the order they are written */
const struct exporter exporters[] = {
	{ .option = "export-csv", .write = write_csv },
	{ .option = "export-chrome-trace", .every_call = true, .write = write_chrome },
	{ .option = "export-profile", .every_call = true, .write = write_profile },
	{ .option = "export-folded", .refuse = no_cpu_stacks, .write = write_folded },
	{ .option = "export-visual-profiler",
	  .dir = true,
	  .every_call = true,
	  .write_dir = write_vpd },
};
const unsigned nexporters = sizeof(exporters) / sizeof(exporters[0]);
_Static_assert(sizeof(exporters) / sizeof(exporters[0]) <= EXPORTERS_MAX,
	       "EXPORTERS_MAX is too small");

int export_target(struct outtarget *t, const char *option, const char *pattern, bool dir,
		  bool force)
{
	char err[PATH_MAX + 256], path[PATH_MAX], msg[PATH_MAX + 256];

	if (outname_expand(pattern, getpid(), path, sizeof(path), err, sizeof(err)) ||
	    (dir ? outtarget_dir(t, path, force, err, sizeof(err))
		 : outtarget_file(t, path, force, err, sizeof(err)))) {
		pr_error("--%s: %s", option, err);
		return 1;
	}
	/* running as root, in a directory another user can change: said once, as they can
	 * replace the file once it is written (topsprof's own writes never follow their links) */
	if (!geteuid() && outtarget_exposed(t, msg, sizeof(msg)) > 0)
		pr_warn("--%s: %s", option, msg);
	return 0;
}

int exports_prepare(struct exports *e, const char *(*path_of)(void *ctx, const char *option),
		    void *ctx, bool force)
{
	memset(e, 0, sizeof(*e));
	for (unsigned i = 0; i < nexporters; i++) {
		const char *pattern = path_of(ctx, exporters[i].option);

		if (pattern && export_target(&e->t[i], exporters[i].option, pattern,
					     exporters[i].dir, force)) {
			exports_close(e);
			return 1;
		}
	}
	return 0;
}

/* a file format: written into its prepared place, atomically */
static int export_file(const struct exporter *x, const struct outtarget *t,
		       const struct export_in *in)
{
	struct outfile o;
	char err[PATH_MAX + 256];

	if (outfile_create(&o, t, NULL, err, sizeof(err))) {
		pr_error("--%s: %s", x->option, err);
		return 1;
	}
	/* a writer fails on a write error (said by the commit, e.g. a full disk) or for memory */
	if (x->write(o.f, in) && !outfile_write_error(&o)) {
		pr_error("--%s: %s: out of memory", x->option, t->path);
		outfile_abort(&o);
		return 1;
	}
	if (outfile_commit(&o, err, sizeof(err))) {
		pr_error("--%s: %s", x->option, err);
		return 1;
	}
	pr_debug("wrote %s", t->path);
	return 0;
}

void exports_stream(struct exports *e, struct model *m)
{
	for (unsigned i = 0; i < nexporters; i++) {
		if (exporters[i].write_dir != write_vpd || !e->t[i].open || e->vpd)
			continue;
		e->vpd = vpd_stream_start(&e->t[i]);
		if (e->vpd) {
			m->on_call = vpd_stream_call;
			m->on_call_ctx = e->vpd;
		}
	}
}

int exports_write(const struct exports *e, const struct export_in *given)
{
	struct export_in x = *given, *in = &x;
	int failed = 0;

	x.vpd = e->vpd;

	for (unsigned i = 0; i < nexporters; i++) {
		const struct exporter *x = &exporters[i];
		const char *why = x->refuse ? x->refuse(in) : NULL;
		char err[PATH_MAX + 256];

		if (!e->t[i].open)
			continue;
		if (why) {
			pr_error("--%s: %s", x->option, why);
			failed++;
		} else if (x->write) {
			failed += export_file(x, &e->t[i], in);
		} else if (x->write_dir(&e->t[i], in, err, sizeof(err)) < 0) {
			pr_error("--%s: %s", x->option, err);
			failed++;
		}
	}
	return failed;
}

void exports_close(struct exports *e)
{
	vpd_stream_free(e->vpd);
	e->vpd = NULL;
	for (unsigned i = 0; i < nexporters; i++)
		outtarget_close(&e->t[i]);
}
