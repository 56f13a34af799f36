// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* genevents N RAWFILE [kernels]: a synthetic raw data file of N API calls, written by the
 * product's own writer (output/rawdata.c), so the format stays true; scripts/bench/scale.sh
 * turns it into a profile with topsprof --import-rawdata --export-profile and times the imports
 * and exports. With "kernels", each topsLaunchKernel has its GCU kernel record too (device 0, a
 * tick a nanosecond, the kernel running after the call), which --print-gcu-trace prints.
 *
 * The calls are what a training loop makes: per step a few launches on two streams, copies,
 * a memset, a stream synchronize, on four threads of one process; every 1000 calls a topstx
 * range (push with a message, pop), so strings and ranges are part of the load. */
#include "lib/outfile.h"
#include "output/rawdata.h"
#include "target/runtime/apitable.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PID 4242

static int fn(const char *name)
{
	int f = api_find(name);

	if (f < 0) {
		fprintf(stderr, "genevents: this build has no %s\n", name);
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	static const char *const mix[] = { "topsLaunchKernel", "topsMemcpyAsync",
					   "topsLaunchKernel", "topsMemsetAsync",
					   "topsLaunchKernel", "topsStreamSynchronize",
					   "topsMemcpyHtoD",   "topsGetLastError" };
	int fns[sizeof(mix) / sizeof(mix[0])], push = fn("topstxRangePushA"),
					       pop = fn("topstxRangePop");
	struct raw_settings rs = { .stats_mode = false };
	struct raw_writer *w;
	struct outtarget t;
	struct model m;
	char err[512];
	unsigned long long n;
	uint64_t ts = 1000000000ull, id = 1, launch = 0;
	bool kernels;

	if ((argc != 3 && (argc != 4 || strcmp(argv[3], "kernels"))) ||
	    !(n = strtoull(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: genevents N RAWFILE [kernels]\n");
		return 2;
	}
	kernels = argc == 4;
	for (size_t i = 0; i < sizeof(mix) / sizeof(mix[0]); i++)
		fns[i] = fn(mix[i]);
	if (outtarget_file(&t, argv[2], false, err, sizeof(err)) ||
	    raw_open(&w, &t, err, sizeof(err))) {
		fprintf(stderr, "genevents: %s\n", err);
		return 1;
	}
	model_init(&m);
	m.root_pid = PID;
	m.header = strdup("NOTE: synthetic profile of genevents (scripts/bench)");
	m.span_start_ns = ts;
	if (kernels) {
		m.dev[0].present = true;
		m.dev[0].tick_hz = 1000000000ull;
		model_add_sync(&m, 0, ts, ts); /* ticks are host nanoseconds */
		m.gcu_activities = GCU_ACT_OPERATOR;
	}
	raw_note(w, "header", m.header);
	for (unsigned long long i = 0; i < n; i++) {
		struct tp_api_event e = { .hdr = { .type = EV_API_CALL, .pid = PID } };
		unsigned k = (unsigned)(i % 8), tid = PID + (unsigned)(i % 4);
		uint64_t dur = 800 + (i * 2654435761u) % 5000;

		e.call_id = id++;
		e.hdr.tid = tid;
		if (i % 1000 == 998 || i % 1000 == 999) {
			bool is_push = i % 1000 == 998;

			tid = PID + (unsigned)(i / 1000 %
					       4); /* a range is pushed and popped by one thread */
			e.hdr.tid = tid;

			e.fn = (uint32_t)(is_push ? push : pop);
			if (is_push) {
				struct tp_str_event s = {
					.hdr = { .type = EV_API_STR, .pid = PID, .tid = tid },
					.call_id = e.call_id,
					.len = 4,
					.last = API_STR_END
				};

				memcpy(s.data, "step", 4);
				raw_event(w, &s, sizeof(s));
			}
		} else {
			e.fn = (uint32_t)fns[k];
			e.args[0] = 0x7f0000001000ull + (i % 64) * 0x100;
			e.args[1] = 4096;
			e.args[2] = 0x5500000000ull + (i % 2) * 0x40;
		}
		e.start_ns = ts;
		e.hdr.ts_ns = ts + dur;
		if (kernels && e.fn == (uint32_t)fns[0]) {
			static const char *const names[] = { "gemm_f16", "softmax_f32", "layernorm",
							     "allreduce_ring" };
			struct gcu_record r = {
				.kind = GCU_REC_KERNEL,
				.engine = GCU_ENGINE_COMPUTE,
				.copy_kind = GCU_COPY_NONE,
				.pid = PID,
				.stream_id = 0, /* the launches name no stream: the default one */
				.launch_id = ++launch,
				.name_id = (uint32_t)(i / 2 % 4) + 1,
				.tid = tid,
				.start_ticks = ts + dur + 100,
				.end_ticks = ts + dur + 100 + dur * 4
			};

			/* a kernel function (args[0], by i % 64) has one name */
			model_add_gcu(&m, &r, names[i / 2 % 4]);
		}
		ts += dur + 200;
		raw_event(w, &e, sizeof(e));
	}
	m.span_end_ns = ts;
	if (kernels)
		model_add_sync(&m, 0, ts, ts);
	if (raw_finish(w, &m, &rs, err, sizeof(err))) {
		fprintf(stderr, "genevents: %s\n", err);
		return 1;
	}
	model_free(&m);
	outtarget_close(&t);
	return 0;
}
