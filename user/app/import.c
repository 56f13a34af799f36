// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topsprof --import-profile / --import-rawdata FILE: the report of a saved run, with any print
 * or export option; --visual-profiler-merge-from/-to: the vpd files of many runs in one. */
#include "app/run.h"
#include "app/present.h"
#include "lib/log.h"
#include "lib/monotime.h"
#include "output/rawdata.h"
#include "output/vpd.h"

#include <limits.h>
#include <stdio.h>

int cmd_import(const struct cli *cli)
{
	struct exports outs;
	struct model m;
	char err[512];
	const char *path = cli->text[OPT_IMPORT_PROFILE];
	int rc, failed;

	if (prepare_exports(cli, &outs))
		return 1;
	model_init(&m);
	/* only a summary asked for: the calls are not kept, their statistics are counted as they
	 * stream (raw data) or are the file's (a profile) */
	m.summary_only = !needs_every_call(cli) && !cli->given[OPT_QUERY_TRACE];
	exports_stream(&outs, &m);
	if (cli->given[OPT_IMPORT_RAWDATA]) {
		struct raw_settings rs;
		double t0 = mono_s();

		path = cli->text[OPT_IMPORT_RAWDATA];
		rc = raw_import(path, &m, &rs, err, sizeof(err));
		if (!rc) {
			finish_model(&m, rs.stats_mode, rs.has_include ? rs.include_domains : NULL);
			m.process_s = mono_s() - t0;
		}
	} else {
		rc = vpd_import_profile(path, &m, err, sizeof(err));
	}
	if (rc) {
		pr_error("--import-%s: %s: %s",
			 cli->given[OPT_IMPORT_RAWDATA] ? "rawdata" : "profile", path, err);
		exports_close(&outs); /* first: a stream's rows point into the model */
		model_free(&m);
		return 2;
	}
	if (m.header)
		out_print_quiet(cli->given[OPT_QUIET], "==%u==%s\n", m.root_pid, m.header);
	failed = print_outputs(cli, &m, &outs);
	exports_close(&outs);
	model_free(&m);
	return failed ? 1 : 0;
}

int cmd_merge(const struct cli *cli)
{
	char err[PATH_MAX + 512];
	struct outtarget t;
	int n;

	/* the output checked before any member is read */
	if (export_target(&t, "visual-profiler-merge-to", cli->text[OPT_VP_MERGE_TO], false,
			  cli->given[OPT_FORCE_OVERWRITE]))
		return 1;
	n = vpd_merge(cli->text[OPT_VP_MERGE_FROM], &t, err, sizeof(err));
	outtarget_close(&t);
	if (n < 0) {
		pr_error("--visual-profiler-merge-%s: %s", n == VPD_MERGE_OUTPUT ? "to" : "from",
			 err);
		return 1;
	}
	out_print_quiet(cli->given[OPT_QUIET], "==== Merged %d vpd files into %s\n", n, t.path);
	return 0;
}
