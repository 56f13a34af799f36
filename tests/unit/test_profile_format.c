// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The profile file, format 2.0 (blocks) and 1.x (one zlib stream): round trips of calls in
 * several CALL blocks in their order with their strings, and of GCU records in several GOPS
 * blocks, the calls skipped when only a summary
 * is asked for (the statistics still whole), 1.2 files still read, and a truncated or corrupt
 * file refused with one error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/model.h"
#include "output/store.h"

#define NCALLS 70000 /* more than a CALL block holds (65536) */
#define NOPS   70000 /* more than a GOPS block holds (65536) */

/* a finished model of NCALLS runtime calls (every 1000th with a string) and a topstx range */
static void build(struct model *m)
{
	model_init(m);
	m->root_pid = 7;
	m->header = strdup("a header");
	for (uint64_t i = 0; i < NCALLS; i++) {
		struct tp_api_event e;

		memset(&e, 0, sizeof(e));
		e.hdr.type = EV_API_CALL;
		e.hdr.pid = 7;
		e.hdr.tid = 7 + (uint32_t)(i % 3);
		e.call_id = i + 1;
		e.start_ns = 1000 * i;
		e.hdr.ts_ns = 1000 * i + 10 + i % 89;
		e.fn = (uint32_t)api_find(i % 2 ? "topsMalloc" : "topsModuleLoad");
		e.args[0] = i;
		e.ret = -(int64_t)(i % 5);
		if (i % 1000 == 0 && i % 2 == 0) {
			struct tp_str_event *s = calloc(1, sizeof(*s));

			s->hdr.type = EV_API_STR;
			s->call_id = e.call_id;
			s->len = (uint16_t)snprintf(s->data, sizeof(s->data), "module %llu",
						    (unsigned long long)i);
			s->last = API_STR_END;
			model_add_str(m, s);
			free(s);
		}
		model_add_call(m, &e);
	}
	/* GCU kernel records (no GCU activity collected: none joins a call) */
	m->dev[0].present = true;
	m->dev[0].tick_hz = 1000000000ull;
	for (uint64_t i = 0; i < NOPS; i++) {
		static const char *const names[] = { "gemm", "softmax", "layernorm" };
		struct gcu_record r = { .kind = GCU_REC_KERNEL,
					.copy_kind = GCU_COPY_NONE,
					.pid = 7,
					.tid = 7 + (uint32_t)(i % 3),
					.stream_id = (uint32_t)(i % 2),
					.launch_id = i + 1,
					.name_id = (uint32_t)(i % 3) + 1,
					.start_ticks = 500 * i,
					.end_ticks = 500 * i + 100 + i % 7,
					.bytes = i };

		model_add_gcu(m, &r, names[i % 3]);
		m->ops[m->nops - 1].start_ns = 1000 * i + 3;
		m->ops[m->nops - 1].end_ns = 1000 * i + 300;
	}
	model_finish(m, true, NULL);
}

/* m written as a file in memory, by the 2.0 writer (v1: the 1.2 one) */
static unsigned char *to_file(const struct model *m, bool v1, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	assert_non_null(f);
	assert_int_equal(v1 ? store_write_profile_v1(f, m) : store_write_profile(f, m), 0);
	assert_int_equal(fclose(f), 0);
	return (unsigned char *)buf;
}

static void same_calls(const struct model *a, const struct model *b)
{
	assert_int_equal(a->ncalls, b->ncalls);
	for (size_t i = 0; i < a->ncalls; i++) {
		struct api_call xc = model_call(a, i), yc = model_call(b, i), *x = &xc, *y = &yc;

		assert_int_equal(x->call_id, y->call_id);
		assert_int_equal(x->fn, y->fn);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->end_ns, y->end_ns);
		assert_int_equal(x->ret, y->ret);
		assert_memory_equal(x->args, y->args, sizeof(x->args));
		assert_int_equal(!x->str[0], !y->str[0]);
		if (x->str[0])
			assert_string_equal(x->str[0], y->str[0]);
	}
	assert_memory_equal(a->stats, b->stats, sizeof(a->stats));
	assert_string_equal(a->header, b->header);
	/* the GCU records, in their order, from several GOPS blocks */
	assert_int_equal(a->nops, b->nops);
	for (size_t i = 0; i < a->nops; i++) {
		const struct gcu_op *x = &a->ops[i], *y = &b->ops[i];

		assert_int_equal(x->rec.launch_id, y->rec.launch_id);
		assert_int_equal(x->rec.tid, y->rec.tid);
		assert_int_equal(x->rec.stream_id, y->rec.stream_id);
		assert_int_equal(x->rec.name_id, y->rec.name_id);
		assert_int_equal(x->rec.start_ticks, y->rec.start_ticks);
		assert_int_equal(x->rec.end_ticks, y->rec.end_ticks);
		assert_int_equal(x->rec.bytes, y->rec.bytes);
		assert_int_equal(x->start_ns, y->start_ns);
		assert_int_equal(x->end_ns, y->end_ns);
		assert_int_equal(x->call, y->call);
		assert_string_equal(x->name, y->name);
	}
}

/* how many blocks of a 2.0 file carry tag (4 characters) */
static int blocks(const unsigned char *file, size_t len, const char *tag)
{
	size_t at = 32; /* the header */
	int n = 0;

	while (at + 24 <= len) {
		uint64_t zlen = 0;

		for (int i = 0; i < 8; i++)
			zlen |= (uint64_t)file[at + 16 + (size_t)i] << (8 * i);
		n += !memcmp(file + at, tag, 4);
		at += 24 + zlen;
	}
	return n;
}

static void test_round_trip(void **state)
{
	struct model m, back;
	char err[256];

	(void)state;
	build(&m);
	for (int v1 = 0; v1 < 2; v1++) {
		size_t len;
		unsigned char *file = to_file(&m, v1, &len);

		assert_int_equal(file[8], v1 ? 1 : 2);
		if (!v1) { /* a block holds a part: a reader holds no more */
			assert_int_equal(blocks(file, len, "CALL"), 2);
			assert_int_equal(blocks(file, len, "GOPS"), 2);
		}
		model_init(&back);
		assert_int_equal(store_parse_profile(file, len, &back, err, sizeof(err)), 0);
		same_calls(&m, &back);
		model_free(&back);
		/* only a summary: no call is read, the statistics are whole */
		model_init(&back);
		back.summary_only = true;
		assert_int_equal(store_parse_profile(file, len, &back, err, sizeof(err)), 0);
		assert_int_equal(back.ncalls, 0);
		assert_memory_equal(back.stats, m.stats, sizeof(m.stats));
		model_free(&back);
		free(file);
	}
	model_free(&m);
}

/* through a descriptor, as --import-profile reads it */
static void test_file(void **state)
{
	char path[] = "/tmp/test_profile_format.XXXXXX", err[256];
	struct model m, back;
	unsigned char *file;
	size_t len;
	int fd;

	(void)state;
	build(&m);
	file = to_file(&m, false, &len);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, file, len), (ssize_t)len);
	close(fd);
	model_init(&back);
	assert_int_equal(store_read_profile(path, &back, err, sizeof(err)), 0);
	same_calls(&m, &back);
	model_free(&back);
	unlink(path);
	free(file);
	model_free(&m);
}

/* every cut and a flipped byte in the calls: one error, never a crash or a success */
static void test_bad(void **state)
{
	struct model m, back;
	char err[256];

	(void)state;
	build(&m);
	for (int v1 = 0; v1 < 2; v1++) {
		size_t len;
		unsigned char *file = to_file(&m, v1, &len);

		for (size_t cut = 0; cut < len; cut += cut < 200 ? 1 : len / 50) {
			model_init(&back);
			err[0] = '\0';
			assert_int_equal(store_parse_profile(file, cut, &back, err, sizeof(err)),
					 -1);
			assert_true(err[0] != '\0');
			assert_null(strchr(err, '\n'));
			model_free(&back);
		}
		model_init(&back);
		assert_int_equal(store_parse_profile(file, len - 1, &back, err, sizeof(err)), -1);
		assert_true(!strncmp(err, "truncated", 9));
		model_free(&back);
		/* a byte in the middle of the file (the calls' data) */
		file[len / 2] ^= 0x5a;
		model_init(&back);
		assert_int_equal(store_parse_profile(file, len, &back, err, sizeof(err)), -1);
		assert_true(!strncmp(err, "corrupt", 7));
		model_free(&back);
		free(file);
	}
	model_free(&m);
}

/* kernel callstacks' counters, the one added in its own section (KCNT) too, in both writers */
static void test_kernel_counters(void **state)
{
	struct model m, back;
	char err[256];

	(void)state;
	model_init(&m);
	m.root_pid = 7;
	m.kernel.collected = true;
	m.kernel.mechanism = strdup("tracepoints");
	m.kernel.filter = strdup("current");
	m.kernel.lost_threads = 3;
	m.kernel.untold = 5;
	assert_int_equal(kernel_add_entry(&m.kernel, "ioctl", true, 2, 300, 200), 0);
	model_finish(&m, true, NULL);
	for (int v1 = 0; v1 < 2; v1++) {
		size_t len;
		unsigned char *file = to_file(&m, v1, &len);

		model_init(&back);
		assert_int_equal(store_parse_profile(file, len, &back, err, sizeof(err)), 0);
		assert_true(back.kernel.collected);
		assert_int_equal(back.kernel.lost_threads, 3);
		assert_int_equal(back.kernel.untold, 5);
		assert_int_equal(back.kernel.ne, 1);
		model_free(&back);
		free(file);
	}
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_file),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_kernel_counters),
	};

	return cmocka_run_group_tests_name("profile_format", tests, NULL, NULL);
}
