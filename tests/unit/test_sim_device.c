// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The simulated device: cost model, scheduling (stream order, engine contention), the device
 * clock, and the driver readout (ring, overflow, names, versions, who may read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "driver/writer.h"
#include "sim_env.h"
#include "rt/internal.h"

static void test_costs(void **state)
{
	topsKernelInfo k = { "k()", 10000, 56600, 3, 8 };

	(void)state;
	assert_int_equal(model_copy_ns(GCU_COPY_HTOD, 4000000), 1500 + 332000);
	assert_int_equal(model_copy_ns(GCU_COPY_DTOH, 0), 1500);
	assert_true(model_copy_ns(GCU_COPY_DTOD, 1 << 20) < model_copy_ns(GCU_COPY_HTOD, 1 << 20));
	assert_int_equal(model_memset_ns(1000000), 800 + 10000);
	/* the manual's scalar_add: 10 us + 1e6 elements * 56.6 ns */
	assert_int_equal(model_kernel_ns(&k, 1000000, false), 56610000);
	assert_int_equal(model_kernel_ns(&k, 1000000, true), 56610000 + 2830500);
	/* deterministic */
	assert_int_equal(model_kernel_ns(&k, 12345, false), model_kernel_ns(&k, 12345, false));
	/* a kernel's DTE moves never outlast half of it */
	assert_int_equal(model_dte_ns(GCU_ENGINE_CDTE, 1000, 1000000), 40);
	assert_int_equal(model_dte_ns(GCU_ENGINE_SDTE, 1000, 1000000), 60);
	assert_int_equal(model_dte_ns(GCU_ENGINE_SDTE, 1ull << 40, 1000), 500);
}

static void test_schedule(void **state)
{
	uint64_t engine[GCU_ENGINE_COUNT] = { 0 }, s1 = 0, s2 = 0, s3 = 0;
	struct model_slot a, b, c, d, e;

	(void)state;
	/* idle device: starts at submission */
	a = model_schedule(&engine[GCU_ENGINE_COMPUTE], &s1, 1000, 500);
	assert_int_equal(a.start, 1000);
	assert_int_equal(a.end, 1500);
	/* same stream: after the previous command, even if submitted earlier */
	b = model_schedule(&engine[GCU_ENGINE_ODTE], &s1, 1100, 100);
	assert_int_equal(b.start, 1500);
	assert_int_equal(b.end, 1600);
	/* another stream, the busy engine: waits for the engine */
	c = model_schedule(&engine[GCU_ENGINE_COMPUTE], &s2, 1200, 300);
	assert_int_equal(c.start, 1500);
	assert_int_equal(c.end, 1800);
	/* another stream, a free engine: runs alongside */
	d = model_schedule(&engine[GCU_ENGINE_CDTE], &s3, 1300, 50);
	assert_int_equal(d.start, 1300);
	/* submitted after everything is done: starts at submission */
	e = model_schedule(&engine[GCU_ENGINE_COMPUTE], &s2, 5000, 10);
	assert_int_equal(e.start, 5000);
	assert_int_equal(s1, 1600);
	assert_int_equal(s2, 5010);
	assert_int_equal(engine[GCU_ENGINE_COMPUTE], 5010);
}

static void test_clock(void **state)
{
	struct gcu_region_hdr h = { .tick_hz = 1500000000ull,
				    .drift_ppb = 20000,
				    .tick_origin = 1ull << 33 };
	uint64_t one_s = 1000000000ull;

	(void)state;
	assert_int_equal(gcu_host_to_ticks(&h, 0), 1ull << 33);
	/* one host second is 1.5e9 ticks plus 20 ppm */
	assert_int_equal(gcu_host_to_ticks(&h, one_s) - gcu_host_to_ticks(&h, 0), 1500030000ull);
	h.drift_ppb = -12000;
	assert_int_equal(gcu_host_to_ticks(&h, 10 * one_s) - gcu_host_to_ticks(&h, 0),
			 14999820000ull);
	/* durations use the nominal rate */
	assert_int_equal(gcu_ns_to_ticks(&h, 13440), 20160);
	/* back to host time: the first host ns at which the device has reached the ticks */
	for (uint64_t t = 123; t < 100 * one_s; t = t * 7 + 13) {
		uint64_t ticks = gcu_host_to_ticks(&h, t), back = gcu_ticks_to_host(&h, ticks);

		assert_true(back <= t);
		assert_true(gcu_host_to_ticks(&h, back) >= ticks);
		assert_true(back == 0 || gcu_host_to_ticks(&h, back - 1) < ticks);
	}
	assert_int_equal(gcu_ticks_to_host(&h, 5), 0);
}

static struct gcu_record rec(uint64_t launch)
{
	struct gcu_record r = { .kind = GCU_REC_KERNEL, .launch_id = launch, .bytes = launch * 3 };

	return r;
}

static void test_ring_and_overflow(void **state)
{
	struct gcu_ro_dev *dev;
	struct gcu_region w;
	struct gcu_record *out = calloc(GCU_RING_CAPACITY, sizeof(*out));
	char err[256];
	int n;

	(void)state;
	assert_int_equal(gcu_ro_open(0, &dev, err, sizeof(err)), 0);
	assert_int_equal(gcu_region_open(sim_env_dir, 0, &w, err, sizeof(err)), 0);
	/* reading needs the device claimed */
	assert_int_equal(gcu_ro_read(dev, out, 1), -EPERM);
	assert_int_equal(gcu_ro_enable(dev, GCU_ACT_OPERATOR), 0);
	assert_int_equal(gcu_enabled(&w), GCU_ACT_OPERATOR);
	for (uint64_t i = 1; i <= GCU_RING_CAPACITY + 7; i++)
		gcu_ring_push(&w, &(struct gcu_record){
					  .kind = GCU_REC_KERNEL, .launch_id = i, .bytes = i * 3 });
	assert_int_equal(gcu_ro_overflow(dev), 7);
	n = gcu_ro_read(dev, out, GCU_RING_CAPACITY);
	assert_int_equal(n, GCU_RING_CAPACITY);
	for (int i = 0; i < n; i++) {
		assert_int_equal(out[i].launch_id, (uint64_t)i + 1);
		assert_int_equal(out[i].bytes, ((uint64_t)i + 1) * 3);
	}
	assert_int_equal(gcu_ro_read(dev, out, 10), 0);
	/* room again once read */
	assert_int_equal(
		gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = 99 }),
		0);
	assert_int_equal(gcu_ro_read(dev, out, 10), 1);
	assert_int_equal(out[0].launch_id, 99);

	/* a writer that reserved a slot and died: skipped after a while, and counted */
	__atomic_fetch_add(&w.hdr->head, 1, __ATOMIC_SEQ_CST);
	{
		struct gcu_record r = rec(100);

		/* written behind the dead slot */
		gcu_ring_push(&w, &r);
	}
	assert_int_equal(gcu_ro_read(dev, out, 10), 0);
	usleep(250 * 1000);
	assert_int_equal(gcu_ro_read(dev, out, 10), 1);
	assert_int_equal(out[0].launch_id, 100);
	assert_int_equal(gcu_ro_overflow(dev), 8);

	/* re-enabling starts afresh: old records and counters are gone */
	gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = 7 });
	assert_int_equal(gcu_ro_enable(dev, 0), 0);
	assert_int_equal(gcu_enabled(&w), 0);
	assert_int_equal(gcu_ro_enable(dev, GCU_ACT_MEMCPY), 0);
	assert_int_equal(gcu_ro_read(dev, out, 10), 0);
	assert_int_equal(gcu_ro_overflow(dev), 0);
	gcu_ro_close(dev);
	assert_int_equal(gcu_enabled(&w), 0); /* closing releases the device */
	gcu_region_close(&w);
	free(out);
}

static void test_names(void **state)
{
	struct gcu_ro_dev *dev;
	struct gcu_region w;
	char err[256], longname[3000];
	uint32_t a, b, c;

	(void)state;
	assert_int_equal(gcu_region_open(sim_env_dir, 1, &w, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_open(1, &dev, err, sizeof(err)), 0);
	a = gcu_names_add(&w, "vector_add(float*, float*, float*, unsigned long)");
	b = gcu_names_add(&w, "warm_up()");
	c = gcu_names_add(&w, "vector_add(float*, float*, float*, unsigned long)");
	assert_true(a != 0 && b != 0 && a != b);
	assert_int_equal(a, c); /* one id per name, whichever process adds it */
	assert_string_equal(gcu_ro_name(dev, a),
			    "vector_add(float*, float*, float*, unsigned long)");
	assert_string_equal(gcu_ro_name(dev, b), "warm_up()");
	assert_null(gcu_ro_name(dev, 0));
	assert_null(gcu_ro_name(dev, 5000));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(strlen(gcu_ro_name(dev, gcu_names_add(&w, longname))), GCU_NAME_MAX);
	/* the table is every user's to write: a name whose end was taken away comes back as
	 * long as its entry says, one whose entry points past the heap not at all */
	w.heap[w.names[b - 1].offset + w.names[b - 1].len] = 'x';
	assert_string_equal(gcu_ro_name(dev, b), "warm_up()");
	w.names[b - 1].offset = w.heap_size - 2;
	assert_null(gcu_ro_name(dev, b));
	w.names[b - 1].offset = UINT32_MAX;
	assert_null(gcu_ro_name(dev, b));
	gcu_ro_close(dev);
	gcu_region_close(&w);
}

static void test_devices_and_versions(void **state)
{
	struct gcu_ro_dev *dev;
	struct gcu_region_hdr h;
	char err[256], path[128];
	int fd;

	(void)state;
	assert_int_equal(gcu_ro_device_count(), 2);
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "no GCU 2"));
	setenv(GCU_RO_COUNT_ENV, "3", 1);
	assert_int_equal(gcu_ro_device_count(), 3);
	setenv(GCU_RO_COUNT_ENV, "many", 1);
	assert_int_equal(gcu_ro_device_count(), -EINVAL);
	assert_int_equal(gcu_ro_open(0, &dev, err, sizeof(err)), -EINVAL);
	setenv(GCU_RO_COUNT_ENV, "3", 1);

	/* a newer major version is refused with a clear error; a newer minor one is fine */
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_device_id(dev), 2);
	assert_int_equal(gcu_ro_tick_hz(dev), 1550000000ull);
	gcu_ro_close(dev);
	snprintf(path, sizeof(path), "%s/gcu2", sim_env_dir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	h.version_minor = 9;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), 0);
	gcu_ro_close(dev);
	h.version_major = GCU_RO_VERSION_MAJOR + 1;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "readout layout version 3.9, this reader knows 2.x"));
	/* an older layout is laid out anew */
	h.version_major = GCU_RO_VERSION_MAJOR - 1;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	close(fd);
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), 0);
	gcu_ro_close(dev);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(h.version_major, GCU_RO_VERSION_MAJOR);
	h.magic = 0;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(gcu_ro_open(2, &dev, err, sizeof(err)), -EPROTO);
	assert_non_null(strstr(err, "is not a GCU readout region"));
	close(fd);
	unsetenv(GCU_RO_COUNT_ENV);
}

/* several readers at once, each with every record; a dead reader's slot is taken over */
static void test_readers(void **state)
{
	struct gcu_ro_dev *a, *b, *extra[GCU_MAX_READERS];
	struct gcu_record out[8];
	struct gcu_region w;
	char err[256];
	pid_t child;
	int n = 0;

	(void)state;
	assert_int_equal(gcu_region_open(sim_env_dir, 0, &w, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_open(0, &a, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_open(0, &b, err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_enable(a, GCU_ACT_OPERATOR), 0);
	assert_int_equal(gcu_ro_enable(b, GCU_ACT_MEMCPY), 0);
	assert_int_equal(gcu_enabled(&w), GCU_ACT_OPERATOR | GCU_ACT_MEMCPY);
	/* each gets what it asked for */
	gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = 1 });
	gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_MEMCPY, .launch_id = 2 });
	assert_int_equal(gcu_ro_read(a, out, 8), 1);
	assert_int_equal(out[0].launch_id, 1);
	assert_int_equal(gcu_ro_read(b, out, 8), 1);
	assert_int_equal(out[0].launch_id, 2);
	/* the ring fills up to the slowest reader */
	for (uint64_t i = 0; i < GCU_RING_CAPACITY; i++)
		gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = i });
	assert_int_equal(gcu_ro_read(a, out, 8), 8);
	assert_int_equal(
		gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = 9 }),
		-ENOSPC);
	assert_int_equal(gcu_ro_overflow(a), 1);
	assert_int_equal(gcu_ro_overflow(b), 1);
	assert_int_equal(gcu_ro_read(b, out, 1), 0); /* kernels only: b reads past them */
	assert_int_equal(
		gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_KERNEL, .launch_id = 9 }),
		0);
	/* a reader quiet for over a second is not waited for; lapped, it goes on from the oldest
	 * record left and counts what it missed */
	{
		struct gcu_reader_slot *bs = &w.hdr->readers[1];
		uint64_t lost0 = gcu_ro_overflow(b);

		assert_int_equal(bs->pid, (uint32_t)getpid());
		bs->alive_ns -= 2000000000ull;
		assert_int_equal(gcu_ro_read(a, out, 8), 8); /* a keeps up */
		while (gcu_ro_read(a, out, 8) > 0)
			;
		for (uint64_t i = 0; i < GCU_RING_CAPACITY + 10; i++) {
			assert_int_equal(
				gcu_ring_push(&w, &(struct gcu_record){ .kind = GCU_REC_MEMCPY,
									.launch_id = i }),
				0);
			if (i % 1000 == 0)
				while (gcu_ro_read(a, out, 8) > 0)
					;
		}
		/* b finds itself lapped: what it gets is the newest ring's worth */
		assert_int_equal(gcu_ro_read(b, out, 1), 1);
		assert_int_equal(out[0].launch_id, 10);
		assert_true(gcu_ro_overflow(b) > lost0);
	}
	/* eight at most: a ninth is refused while they live */
	for (int i = 0; i < GCU_MAX_READERS - 2; i++) {
		assert_int_equal(gcu_ro_open(0, &extra[i], err, sizeof(err)), 0);
		assert_int_equal(gcu_ro_enable(extra[i], GCU_ACT_OPERATOR), 0);
		n++;
	}
	assert_int_equal(gcu_ro_open(0, &extra[n], err, sizeof(err)), 0);
	assert_int_equal(gcu_ro_enable(extra[n], GCU_ACT_OPERATOR), -EBUSY);
	/* a reader whose process is gone leaves its slot to the next */
	child = fork();
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	w.hdr->readers[7].pid = (uint32_t)child;
	assert_int_equal(gcu_ro_enable(extra[n], GCU_ACT_OPERATOR), 0);
	for (int i = 0; i <= n; i++)
		gcu_ro_close(extra[i]);
	gcu_ro_close(a);
	assert_int_equal(gcu_enabled(&w), GCU_ACT_MEMCPY);
	gcu_ro_close(b);
	assert_int_equal(gcu_enabled(&w), 0);
	gcu_region_close(&w);
}

static int setup(void **state)
{
	(void)state;
	return sim_env_setup(NULL);
}

static int teardown(void **state)
{
	(void)state;
	return sim_env_teardown();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_costs),	cmocka_unit_test(test_schedule),
		cmocka_unit_test(test_clock),	cmocka_unit_test(test_ring_and_overflow),
		cmocka_unit_test(test_names),	cmocka_unit_test(test_devices_and_versions),
		cmocka_unit_test(test_readers),
	};

	return cmocka_run_group_tests_name("sim_device", tests, setup, teardown);
}
