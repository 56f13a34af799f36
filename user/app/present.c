// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* What a finished profile is shown as: the analysis, the printed report and warnings, the
 * exports; the same for a live run and an imported one. */
#include "app/present.h"
#include "gcu/correlate.h"
#include "lib/log.h"
#include "model/domain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *option_path(void *ctx, const char *option)
{
	const struct cli *cli = ctx;
	const struct opt_def *d = cli_find(option, strlen(option));

	return d && cli->given[d->id] ? cli->text[d->id] : NULL;
}

int prepare_exports(const struct cli *cli, struct exports *e)
{
	if (cli->given[OPT_EXPORT_FOLDED] && !cli->given[OPT_CPU_PROFILING_CALLSTACK] &&
	    !cli->given[OPT_IMPORT_PROFILE] && !cli->given[OPT_IMPORT_RAWDATA]) {
		memset(e, 0, sizeof(*e));
		pr_error("--export-folded: needs --cpu-profiling-callstack");
		return 1;
	}
	return exports_prepare(e, option_path, (void *)cli, cli->given[OPT_FORCE_OVERWRITE]);
}

bool needs_every_call(const struct cli *cli)
{
	if (cli->given[OPT_EXPORT_RAWDATA] || cli->given[OPT_PRINT_GCU_TRACE])
		return true;
	for (unsigned i = 0; i < nexporters; i++)
		if (exporters[i].every_call && option_path((void *)cli, exporters[i].option))
			return true;
	return false;
}

static void warn_losses(const struct model *m)
{
	uint32_t pid = m->root_pid;

	if (m->lost_calls + m->lost_strings)
		out_print(stderr,
			  "==%u== warning: %llu events lost (%llu calls, %llu string pieces): the "
			  "ring buffer was full; raise --buffer-size (now %llu bytes)\n",
			  pid, (unsigned long long)(m->lost_calls + m->lost_strings),
			  (unsigned long long)m->lost_calls, (unsigned long long)m->lost_strings,
			  (unsigned long long)m->buffer_size);
	if (m->lost_unreadable)
		out_print(stderr,
			  "==%u== warning: %llu topstx strings could not be read: not in memory "
			  "when passed, and not safe to read again later (writable memory, the "
			  "process had ended, or its page did not come in time); shown as "
			  "[unreadable string at 0x...]\n",
			  pid, (unsigned long long)m->lost_unreadable);
	if (m->str_faulted_in + m->str_recovered)
		pr_debug("topstx strings in pages the application had not touched: %llu faulted in "
			 "by the probe, %llu read again from the process",
			 (unsigned long long)m->str_faulted_in,
			 (unsigned long long)m->str_recovered);
	if (m->lost_depth)
		out_print(stderr,
			  "==%u== warning: %llu calls nested deeper than %d were not traced\n", pid,
			  (unsigned long long)m->lost_depth, API_MAX_DEPTH);
	if (m->lost_stats)
		out_print(stderr, "==%u== warning: %llu calls lost to a full statistics map\n", pid,
			  (unsigned long long)m->lost_stats);
	for (int d = 0; d < GCU_RO_MAX_DEVICES; d++)
		if (m->dev[d].overflow)
			out_print(
				stderr,
				"==%u== warning: GCU %d dropped %llu profiler records (its ring was "
				"full)\n",
				pid, d, (unsigned long long)m->dev[d].overflow);
	if (m->gcu_joined && (m->unjoined_records || m->unjoined_calls))
		out_print(stderr,
			  "==%u== warning: %llu GCU records and %llu API calls could not be joined "
			  "to each other\n",
			  pid, (unsigned long long)m->unjoined_records,
			  (unsigned long long)m->unjoined_calls);
	if (m->lost_proc_events + m->lost_pids)
		out_print(stderr,
			  "==%u== warning: %llu process events lost, %llu processes not followed\n",
			  pid, (unsigned long long)m->lost_proc_events,
			  (unsigned long long)m->lost_pids);
	if (m->cpu.lost_samples + m->cpu.lost_stacks)
		out_print(
			stderr,
			"==%u== warning: CPU sampling lost %llu samples (a count map, stack table "
			"or ring buffer was full) and the kernel stacks of %llu (the stack map was "
			"full, or its slot taken)\n",
			pid, (unsigned long long)m->cpu.lost_samples,
			(unsigned long long)m->cpu.lost_stacks);
	if (m->kernel.lost_entries + m->kernel.lost_stacks + m->kernel.lost_threads)
		out_print(stderr,
			  "==%u== warning: kernel callstacks lost %llu calls (the entry map was "
			  "full), %llu waits or their stacks (a map was full, or a stack's slot "
			  "taken) and %llu threads' calls (no room for the thread)\n",
			  pid, (unsigned long long)m->kernel.lost_entries,
			  (unsigned long long)m->kernel.lost_stacks,
			  (unsigned long long)m->kernel.lost_threads);
	if (m->kernel.untold)
		out_print(
			stderr,
			"==%u== warning: kernel callstacks could not tell whether %llu futex waits "
			"were on the driver's memory (the kernel did not wait for the process's "
			"memory map lock); they are counted as not in the driver\n",
			pid, (unsigned long long)m->kernel.untold);
}

/* --query-trace with an application: the domains, and the custom ones it created */
static void query_trace(const struct model *m)
{
	const char **names = calloc(m->ncalls + 1, sizeof(*names));
	size_t n = 0;

	for (size_t i = 0; names && i < m->ncalls; i++) {
		struct api_call call = model_call(m, i), *c = &call;
		size_t k;

		if (api_table[c->fn].tx != TX_DOMAIN_NEW || !c->str[0])
			continue;
		for (k = 0; k < n && strcmp(names[k], c->str[0]); k++)
			;
		if (k == n)
			names[n++] = c->str[0];
	}
	trace_domain_print_query(stdout, names, n);
	free(names);
}

/* what the print options ask for, from a finished model: the same for a live run and an
 * imported profile */
int print_outputs(const struct cli *cli, const struct model *m, const struct exports *e)
{
	struct report_opts ro = { .pid = m->root_pid,
				  .api_only = cli->given[OPT_PRINT_API_SUMMARY],
				  .gcu_only = cli->given[OPT_PRINT_GCU_SUMMARY],
				  .per_gcu = cli->given[OPT_PRINT_SUMMARY_PER_GCU] };
	/* the GCU trace replaces the summary, unless a summary is asked for too */
	bool summary = !cli->given[OPT_PRINT_GCU_TRACE] || cli->given[OPT_PRINT_SUMMARY] ||
		       cli->given[OPT_PRINT_API_SUMMARY] || cli->given[OPT_PRINT_GCU_SUMMARY] ||
		       cli->given[OPT_PRINT_SUMMARY_PER_GCU];

	char command[4096];

	if (m->ncalls) { /* the memory budget: HOW-IT-WORKS, "Memory per event" */
		size_t b = calls_bytes(&m->calls);

		pr_debug("%zu calls kept, %.1f MB, %.1f bytes a call", m->ncalls, (double)b / 1e6,
			 (double)b / (double)m->ncalls);
	}
	cli_command_line(cli, command, sizeof(command));
	if (cli->given[OPT_QUERY_TRACE]) {
		query_trace(m);
	} else {
		/* streamed: a GCU trace of millions of records is not held whole */
		FILE *f = out_stream(cli->given[OPT_QUIET]);

		if (f) {
			report_progress(f, m->process_s);
			if (cli->given[OPT_PRINT_GCU_TRACE])
				report_gcu_trace(f, m, ro.pid);
			if (summary)
				report_summary(f, m, &ro);
			fclose(f);
		}
	}
	warn_losses(m);
	return exports_write(e, &(struct export_in){ .m = m,
						     .ro = &ro,
						     .gcu_trace = cli->given[OPT_PRINT_GCU_TRACE],
						     .command = command });
}

/* the analysis after collection, the same for a live run and replayed raw data */
void finish_model(struct model *m, bool stats_mode, const char *include_domains)
{
	if (!m->system_wide)
		model_keep_own_gcu(m);
	model_finish(m, !stats_mode, include_domains);
	gcu_align(m);
	if (!stats_mode && !m->summary_only)
		gcu_join(m); /* not without the calls: only a summary, which shows no join */
	if (m->calls_not_kept)
		pr_debug("%llu calls not kept (only a summary is asked for): their statistics were "
			 "added up as they streamed",
			 (unsigned long long)m->calls_not_kept);
	if (m->gcu_joined)
		pr_debug("joined %llu of %zu GCU records to API calls; %llu calls without a record",
			 (unsigned long long)m->joined, m->nops,
			 (unsigned long long)m->unjoined_calls);
}
