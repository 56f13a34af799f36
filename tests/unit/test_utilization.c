// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Utilization: the /proc parsers on real and damaged text, the series and their summary, a live
 * sampler of the host started, stopped and started again, and the profile file carrying the
 * series, the CPU stacks and the kernel callstacks through an export and an import, and refusing
 * damaged sections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "lib/procfs.h"
#include "output/store.h"
#include "collect/usampler.h"
#include "model/utilization.h"

static void test_parse_stat(void **state)
{
	uint64_t busy = 0, total = 0;

	(void)state;
	/* user nice system idle iowait irq softirq steal guest guest_nice */
	assert_int_equal(
		usampler_parse_stat("cpu  10 2 3 100 5 1 1 1 4 0\ncpu0 1 2 3 4\n", &busy, &total),
		0);
	assert_int_equal(busy, 10 + 2 + 3 + 1 + 1 + 1);
	assert_int_equal(total, busy + 100 + 5);
	/* an old kernel's four fields */
	assert_int_equal(usampler_parse_stat("cpu 1 2 3 4\n", &busy, &total), 0);
	assert_int_equal(busy, 6);
	assert_int_equal(total, 10);
	assert_int_equal(usampler_parse_stat("intr 1 2 3\n", &busy, &total), -EINVAL);
	assert_int_equal(usampler_parse_stat("cpu 1 2\n", &busy, &total), -EINVAL);
	assert_int_equal(usampler_parse_stat("", &busy, &total), -EINVAL);
}

static void test_parse_meminfo(void **state)
{
	const char *text = "MemTotal:       24000000 kB\nMemFree:  100 kB\n"
			   "MemAvailable:   20000000 kB\nBuffers: 1 kB\n";
	uint64_t total = 0, avail = 0;

	(void)state;
	assert_int_equal(usampler_parse_meminfo(text, &total, &avail), 0);
	assert_int_equal(total, 24000000ull * 1024);
	assert_int_equal(avail, 20000000ull * 1024);
	/* MemAvailable missing, or larger than the total */
	assert_int_equal(usampler_parse_meminfo("MemTotal: 5 kB\n", &total, &avail), -EINVAL);
	assert_int_equal(
		usampler_parse_meminfo("MemTotal: 5 kB\nMemAvailable: 6 kB\n", &total, &avail),
		-EINVAL);
	/* a key that only starts like one */
	assert_int_equal(
		usampler_parse_meminfo("MemTotalX: 5 kB\nMemAvailable: 1 kB\n", &total, &avail),
		-EINVAL);
	char buf[8192];

	assert_true(procfs_read("/proc/meminfo", buf, sizeof(buf)) > 0);
	assert_int_equal(usampler_parse_meminfo(buf, &total, &avail), 0);
	assert_true(total > avail && avail > 0);
}

static void test_parse_statm(void **state)
{
	uint64_t vsz = 0, rss = 0;
	char buf[256];

	(void)state;
	assert_int_equal(usampler_parse_statm("100 25 3 1 0 20 0\n", 4096, &vsz, &rss), 0);
	assert_int_equal(vsz, 100 * 4096);
	assert_int_equal(rss, 25 * 4096);
	assert_int_equal(usampler_parse_statm("10 20 0\n", 4096, &vsz, &rss), -EINVAL);
	assert_int_equal(usampler_parse_statm("x\n", 4096, &vsz, &rss), -EINVAL);
	assert_true(procfs_read("/proc/self/statm", buf, sizeof(buf)) > 0);
	assert_int_equal(usampler_parse_statm(buf, 4096, &vsz, &rss), 0);
	assert_true(vsz >= rss && rss > 0);
}

static void test_parse_pidstat(void **state)
{
	uint64_t start = 0;
	uint32_t threads = 0;
	char buf[1024], comm[16];

	(void)state;
	/* a name with spaces and parentheses: the fields are counted from its last ')' */
	assert_int_equal(
		usampler_parse_pidstat("42 (a) (b c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 "
				       "0 0 20 0 5 0 123456 1000 50 18446744073709551615",
				       &start, &threads),
		0);
	assert_int_equal(threads, 5);
	assert_int_equal(start, 123456);
	procfs_stat_comm("42 (a) (b c)) S 1 42", comm, sizeof(comm));
	assert_string_equal(comm, "a) (b c)");
	procfs_stat_comm("42 (a very long name indeed) S 1", comm, 8);
	assert_string_equal(comm, "a very ");
	procfs_stat_comm("42 x S 1", comm, sizeof(comm));
	assert_string_equal(comm, "");
	assert_int_equal(usampler_parse_pidstat("42 (x S 1", &start, &threads), -EINVAL);
	assert_int_equal(usampler_parse_pidstat("42 (x) S 1 2 3", &start, &threads), -EINVAL);
	assert_true(procfs_read("/proc/self/stat", buf, sizeof(buf)) > 0);
	assert_int_equal(usampler_parse_pidstat(buf, &start, &threads), 0);
	assert_int_equal(threads, 1);
	assert_true(start > 0);
}

static void test_series_summary(void **state)
{
	struct util_profile u = { 0 };
	struct util_series *s, *h;
	struct util_summary sum;

	(void)state;
	h = util_series_get(&u, UTIL_HOST_PID, "host");
	s = util_series_get(&u, 42, "app");
	assert_non_null(h);
	assert_non_null(s);
	assert_ptr_equal(util_series_get(&u, 42, "other"), &u.s[1]);
	assert_string_equal(u.s[1].comm, "app");
	for (int i = 0; i < 4; i++) {
		struct util_point p = { .t_ns = 1000 + (uint64_t)i * 10,
					.cpu = 50.0 * i,
					.rss = 100 * (uint64_t)(i + 1),
					.vsz = 1000 };

		assert_int_equal(util_add(&u.s[1], &p), 0);
	}
	util_summarize(&u.s[1], &sum);
	assert_int_equal(sum.samples, 4);
	assert_true(sum.cpu_avg > 74.99 && sum.cpu_avg < 75.01);
	assert_true(sum.cpu_max > 149.99 && sum.cpu_max < 150.01);
	assert_int_equal(sum.rss_max, 400);
	assert_true(sum.rss_avg > 249.9 && sum.rss_avg < 250.1);
	assert_int_equal(sum.vsz_max, 1000);
	assert_int_equal(sum.first_ns, 1000);
	assert_int_equal(sum.last_ns, 1030);
	util_summarize(&u.s[0], &sum);
	assert_int_equal(sum.samples, 0);
	util_profile_clear(&u);
	assert_int_equal(u.n, 2);
	assert_int_equal(u.s[1].n, 0);
	util_profile_free(&u);
}

static void ticks(struct usampler *s, int n)
{
	for (int i = 0; i < n; i++) {
		struct pollfd pfd = { usampler_fd(s), POLLIN, 0 };

		assert_int_equal(poll(&pfd, 1, 1000), 1);
		usampler_poll(s);
	}
}

/* a live sampler of the host at 10 Hz: a point per period, shares and memory within bounds; none
 * while stopped; started again, a fresh interval */
static void test_sampler_live(void **state)
{
	struct usampler_opts o = {
		.cpu = true, .mem = true, .collecting = true, .hz = 10, .pid_map_fd = -1
	};
	struct util_profile u = { 0 };
	struct util_summary sum;
	struct usampler *s;

	(void)state;
	assert_int_equal(usampler_open(&s, &o, &u), 0);
	assert_int_equal(u.hz, 10);
	assert_true(u.ncpus >= 1);
	assert_int_equal(u.n, 1); /* the host's series comes first, and alone without a map */
	assert_int_equal(u.s[0].pid, UTIL_HOST_PID);
	ticks(s, 5);
	assert_int_equal(u.n, 1);
	assert_int_equal(u.s[0].n, 5);
	util_summarize(&u.s[0], &sum);
	assert_true(sum.cpu_max <= 100.0);
	assert_true(sum.rss_max > 0 && sum.rss_max <= u.mem_total);
	assert_true(sum.last_ns - sum.first_ns >= 350000000ull);
	usampler_set_collecting(s, false);
	ticks(s, 2);
	assert_int_equal(u.s[0].n, 5);
	usampler_set_collecting(s, true);
	ticks(s, 2);
	assert_int_equal(u.s[0].n, 7);
	/* the first point after the restart is a period after it, not after the stop */
	assert_true(u.s[0].v[5].t_ns - u.s[0].v[4].t_ns >= 250000000ull);
	usampler_close(s);
	util_profile_free(&u);
}

static void roundtrip(const struct model *in, struct model *out)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(store_write_profile(f, in), 0);
	assert_int_equal(fclose(f), 0);
	model_init(out);
	assert_int_equal(store_parse_profile((unsigned char *)buf, len, out, err, sizeof(err)), 0);
	free(buf);
}

static void test_profile_roundtrip(void **state)
{
	struct model m, back;
	struct util_series *s;
	struct util_point p = { .t_ns = 123456789, .cpu = 87.5, .rss = 1 << 20, .vsz = 1 << 24 };

	(void)state;
	model_init(&m);
	m.header = strdup(" a run");
	m.cpu.sampled = true;
	m.cpu.hz = 99;
	assert_int_equal(cpu_profile_add(&m.cpu, 7, "app", "main;hot", 30, false), 0);
	assert_int_equal(cpu_profile_add(&m.cpu, 7, "app", "main;cold", 5, true), 0);
	cpu_profile_finish(&m.cpu);
	m.cpu.lost_samples = 3;
	m.cpu.lost_stacks = 2;
	m.util.cpu = m.util.mem = true;
	m.util.hz = 10;
	m.util.ncpus = 2;
	m.util.mem_total = 1ull << 34;
	m.util.missed = 4;
	assert_non_null(util_series_get(&m.util, UTIL_HOST_PID, "host"));
	s = util_series_get(&m.util, 7, "app");
	assert_int_equal(util_add(s, &p), 0);
	assert_int_equal(util_add(&m.util.s[0], &p), 0);

	m.kernel.collected = true;
	m.kernel.mechanism = strdup("tracepoints");
	m.kernel.filter = strdup("all");
	m.kernel.lost_stacks = 9;
	assert_int_equal(kernel_add_entry(&m.kernel, "futex", true, 4, 400, 200), 0);
	{
		struct kernel_stack k = { .pid = 7,
					  .comm = "app",
					  .entry = "futex",
					  .driver = true,
					  .offcpu = true,
					  .frames = "main;schedule_[k]",
					  .count = 4,
					  .total_ns = 400,
					  .max_ns = 200 };

		assert_int_equal(kernel_add_stack(&m.kernel, &k), 0);
		k.entry = NULL;
		k.driver = false;
		assert_int_equal(kernel_add_stack(&m.kernel, &k), 0);
	}
	kernel_profile_finish(&m.kernel);

	roundtrip(&m, &back);
	assert_true(back.kernel.collected);
	assert_string_equal(back.kernel.mechanism, "tracepoints");
	assert_string_equal(back.kernel.filter, "all");
	assert_int_equal(back.kernel.lost_stacks, 9);
	assert_int_equal(back.kernel.ne, 1);
	assert_int_equal(back.kernel.e[0].calls, 4);
	assert_int_equal(back.kernel.ns, 2);
	assert_string_equal(back.kernel.s[0].frames, "main;schedule_[k]");
	assert_true(back.kernel.s[0].entry == NULL || back.kernel.s[1].entry == NULL);
	assert_true(back.cpu.sampled);
	assert_int_equal(back.cpu.hz, 99);
	assert_int_equal(back.cpu.samples, 35);
	assert_int_equal(back.cpu.truncated_samples, 5);
	assert_int_equal(back.cpu.lost_samples, 3);
	assert_int_equal(back.cpu.lost_stacks, 2);
	assert_int_equal(back.cpu.n, 2);
	assert_string_equal(back.cpu.v[0].comm, "app");
	assert_true(back.util.cpu && back.util.mem);
	assert_int_equal(back.util.hz, 10);
	assert_int_equal(back.util.ncpus, 2);
	assert_int_equal(back.util.mem_total, 1ull << 34);
	assert_int_equal(back.util.missed, 4);
	assert_int_equal(back.util.n, 2);
	assert_int_equal(back.util.s[0].pid, UTIL_HOST_PID);
	assert_int_equal(back.util.s[1].pid, 7);
	assert_string_equal(back.util.s[1].comm, "app");
	assert_int_equal(back.util.s[1].n, 1);
	assert_memory_equal(&back.util.s[1].v[0], &p, sizeof(p));
	model_free(&back);

	/* the samplers' sections alone (as the raw data carries them), whole and damaged */
	{
		unsigned char *p;
		size_t len;
		char err[256];

		assert_int_equal(store_encode_samples(&m, &p, &len), 0);
		model_init(&back);
		assert_int_equal(store_decode_samples(p, len, &back, err, sizeof(err)), 0);
		assert_int_equal(back.util.n, 2);
		assert_int_equal(back.kernel.ns, 2);
		model_free(&back);
		for (size_t cut = 1; cut < len; cut += 7) {
			model_init(&back);
			/* a cut section: an error or what came before it, never a crash */
			store_decode_samples(p, len - cut, &back, err, sizeof(err));
			model_free(&back);
		}
		/* a header claiming more points than the bytes could hold */
		model_init(&back);
		for (size_t i = 0; i + 4 <= len; i++)
			if (!memcmp(p + i, "UTIL", 4)) {
				memset(p + i + 16 + 2 + 4 + 4 + 8 + 8 + 4 + 4 + 4, 0xff, 8);
				break;
			}
		assert_int_equal(store_decode_samples(p, len, &back, err, sizeof(err)), -1);
		model_free(&back);
		free(p);
	}

	/* without either option, neither section: an import shows no utilization */
	m.util.cpu = m.util.mem = false;
	m.cpu.sampled = false;
	m.kernel.collected = false;
	roundtrip(&m, &back);
	assert_false(back.cpu.sampled);
	assert_int_equal(back.util.n, 0);
	model_free(&back);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_stat),	  cmocka_unit_test(test_parse_meminfo),
		cmocka_unit_test(test_parse_statm),	  cmocka_unit_test(test_parse_pidstat),
		cmocka_unit_test(test_series_summary),	  cmocka_unit_test(test_sampler_live),
		cmocka_unit_test(test_profile_roundtrip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
