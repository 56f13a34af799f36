// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Raw data names the functions of its events (version 3): a file written by a build whose API
 * table is in another order, or has other runtimes, is read by name; version 2 files by index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>
#include <zlib.h>

#include "events.h"
#include "model/model.h"
#include "output/rawdata.h"
#include "target/runtime/apitable.h"

/* the record types of user/output/rawdata.c, as a file has them */
enum {
	MAGIC = 1,
	EVENT = 3,
	END = 9,
	FN = 11
};

static char path[64];

static void put(gzFile gz, uint32_t type, const void *a, size_t alen, const void *b, size_t blen)
{
	uint32_t hdr[2] = { type, (uint32_t)(alen + blen) };

	assert_int_equal(gzwrite(gz, hdr, sizeof(hdr)), (int)sizeof(hdr));
	if (alen)
		assert_int_equal(gzwrite(gz, a, (unsigned)alen), (int)alen);
	if (blen)
		assert_int_equal(gzwrite(gz, b, (unsigned)blen), (int)blen);
}

static gzFile start(uint32_t version)
{
	char magic[12] = "TOPSRAW";
	gzFile gz;

	strcpy(path, "/tmp/test_rawdata.XXXXXX");
	close(mkstemp(path));
	gz = gzopen(path, "wb");
	assert_non_null(gz);
	memcpy(magic + 8, &version, 4);
	put(gz, MAGIC, magic, sizeof(magic), NULL, 0);
	return gz;
}

static void name_fn(gzFile gz, uint32_t idx, const char *name)
{
	put(gz, FN, &idx, sizeof(idx), name, strlen(name));
}

static void call(gzFile gz, uint32_t fn, uint64_t id)
{
	struct tp_api_event e = { .hdr = { .type = EV_API_CALL, .pid = 7, .tid = 7, .ts_ns = 2000 },
				  .call_id = id,
				  .start_ns = 1000,
				  .fn = fn };

	put(gz, EVENT, &e, sizeof(e), NULL, 0);
}

/* import the file written; its return value, the model in m */
static int finish(gzFile gz, struct model *m, char *err, size_t len)
{
	struct raw_settings rs;
	int rc;

	put(gz, END, NULL, 0, NULL, 0);
	assert_int_equal(gzclose(gz), Z_OK);
	model_init(m);
	rc = raw_import(path, m, &rs, err, len);
	unlink(path);
	return rc;
}

static const char *fn_name(const struct model *m, size_t i)
{
	return api_table[model_call(m, i).fn].name;
}

/* version 3: the file's indices mean its names, whatever this build's indices are */
static void test_by_name(void **state)
{
	int memcpy_fn = api_find("topsMemcpy"), malloc_fn = api_find("topsMalloc");
	char err[256];
	struct model m;
	gzFile gz;

	(void)state;
	assert_true(memcpy_fn > 1 && malloc_fn > 1);
	gz = start(3);
	name_fn(gz, 0, "topsMemcpy");
	name_fn(gz, 1, "topsMalloc");
	call(gz, 0, 1);
	call(gz, 1, 2);
	assert_int_equal(finish(gz, &m, err, sizeof(err)), 0);
	assert_int_equal(m.ncalls, 2);
	assert_string_equal(fn_name(&m, 0), "topsMemcpy");
	assert_string_equal(fn_name(&m, 1), "topsMalloc");
	model_free(&m);
	/* an index the file did not name is corrupt */
	gz = start(3);
	name_fn(gz, 0, "topsMemcpy");
	call(gz, 3, 1);
	assert_int_equal(finish(gz, &m, err, sizeof(err)), -1);
	model_free(&m);
}

/* a function another build traced and this one does not: said, not taken for another */
static void test_unknown_function(void **state)
{
	char err[256];
	struct model m;
	gzFile gz;

	(void)state;
	gz = start(3);
	name_fn(gz, 0, "topsMemcpy");
	name_fn(gz, 1, "cudaMalloc");
	call(gz, 0, 1);
	assert_int_equal(finish(gz, &m, err, sizeof(err)), 0); /* named, never called: fine */
	assert_int_equal(m.ncalls, 1);
	model_free(&m);
	gz = start(3);
	name_fn(gz, 1, "cudaMalloc");
	call(gz, 1, 1);
	assert_int_equal(finish(gz, &m, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "a function this topsprof does not trace"));
	model_free(&m);
}

/* version 2 has no names: its indices are this build's */
static void test_version2_by_index(void **state)
{
	int fn = api_find("topsStreamSynchronize");
	char err[256];
	struct model m;
	gzFile gz;

	(void)state;
	gz = start(2);
	call(gz, (uint32_t)fn, 1);
	assert_int_equal(finish(gz, &m, err, sizeof(err)), 0);
	assert_int_equal(m.ncalls, 1);
	assert_string_equal(fn_name(&m, 0), "topsStreamSynchronize");
	model_free(&m);
}

/* what topsprof writes, it reads back: the names it wrote map to itself */
static void test_roundtrip(void **state)
{
	struct raw_settings rs = { .stats_mode = false };
	struct tp_api_event e = { .hdr = { .type = EV_API_CALL, .pid = 7, .tid = 7, .ts_ns = 9 },
				  .start_ns = 5,
				  .fn = (uint32_t)api_find("topsLaunchKernel") };
	char err[256], dir[] = "/tmp/test_rawdata.d.XXXXXX";
	struct outtarget t;
	struct raw_writer *w;
	struct model m;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.raw", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(raw_open(&w, &t, err, sizeof(err)), 0);
	raw_event(w, &e, sizeof(e));
	model_init(&m);
	assert_int_equal(raw_finish(w, &m, &rs, err, sizeof(err)), 0);
	model_free(&m);
	outtarget_close(&t);
	model_init(&m);
	assert_int_equal(raw_import(path, &m, &rs, err, sizeof(err)), 0);
	assert_int_equal(m.ncalls, 1);
	assert_string_equal(fn_name(&m, 0), "topsLaunchKernel");
	model_free(&m);
	unlink(path);
	rmdir(dir);
}

/* a file cut short anywhere past its first record is "truncated or corrupt", wherever the cut
 * falls (in a record's header, its body, or gzip's own stream); before it, not raw data at all */
static void test_cut_anywhere(void **state)
{
	struct raw_settings rs;
	char err[256], cut[sizeof(path) + 8];
	unsigned char *whole;
	struct model m;
	gzFile gz;
	FILE *f;
	long len;

	(void)state;
	gz = start(3);
	name_fn(gz, 0, "topsMalloc");
	for (uint64_t i = 1; i <= 200; i++)
		call(gz, 0, i);
	put(gz, END, NULL, 0, NULL, 0);
	assert_int_equal(gzclose(gz), Z_OK);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	whole = malloc((size_t)len);
	assert_non_null(whole);
	assert_int_equal(fread(whole, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	unlink(path);
	snprintf(cut, sizeof(cut), "%s.cut", path);
	for (long at = 1; at < len; at++) {
		f = fopen(cut, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(whole, 1, (size_t)at, f), (size_t)at);
		fclose(f);
		model_init(&m);
		/* in the last bytes (gzip's trailer, CRC and size, and the end of its last
		 * block) every record may still be read whole: taken */
		if (!raw_import(cut, &m, &rs, err, sizeof(err)) && at < len - 16)
			fail_msg("cut at %ld of %ld: imported", at, len);
		else if (at < len - 16 && !strstr(err, "truncated or corrupt") &&
			 !strstr(err, "not topsprof raw data"))
			fail_msg("cut at %ld of %ld: '%s'", at, len, err);
		model_free(&m);
	}
	unlink(cut);
	free(whole);
}

/* version 4: the calls packed, each field back as it was written, in order with the strings and
 * process events between them (a call's string before the call); a packed record cut short or
 * with an overlong number is refused */
static void test_packed_calls(void **state)
{
	struct raw_settings rs = { .stats_mode = false };
	struct tp_api_event want[300];
	struct tp_proc_event fork = { .hdr = { .type = EV_PROC_FORK, .pid = 9, .tid = 9 },
				      .ppid = 7,
				      .comm = "child" };
	struct tp_str_event *str = calloc(1, sizeof(*str));
	char err[256], dir[] = "/tmp/test_rawdata.d.XXXXXX";
	struct outtarget t;
	struct raw_writer *w;
	struct model m;
	gzFile gz;

	(void)state;
	assert_non_null(str);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.raw", dir);
	assert_int_equal(outtarget_file(&t, path, false, err, sizeof(err)), 0);
	assert_int_equal(raw_open(&w, &t, err, sizeof(err)), 0);
	for (int i = 0; i < 300; i++) {
		struct tp_api_event *e = &want[i];

		memset(e, 0, sizeof(*e));
		e->hdr.type = EV_API_CALL;
		e->hdr.cpu = (uint32_t)i % 3;
		e->hdr.pid = i < 150 ? 7 : 9; /* deltas both ways */
		e->hdr.tid = 100000 - (uint32_t)i;
		e->call_id = (uint64_t)(i % 7) << 40 | (uint64_t)i;
		e->start_ns = 1000000000000ull - (uint64_t)i * 3;
		e->hdr.ts_ns = e->start_ns + (uint64_t)i * 11;
		e->fn = (uint32_t)api_find(i % 2 ? "topsLaunchKernel" : "topsModuleLoad");
		e->flags = (uint32_t)i;
		e->ret = i % 3 ? -(int64_t)i : INT64_MIN;
		e->args[i % API_REG_ARGS] = ~0ull - (uint64_t)i;
		e->stack[i % API_STACK_ARGS] = (uint64_t)i * 1000;
		if (i % 5 == 0)
			e->attr[i % API_ATTR_SIZE] = (uint8_t)i;
		if (i == 150)
			raw_event(w, &fork, sizeof(fork));
		if (i % 10 == 0) {
			str->hdr.type = EV_API_STR;
			str->call_id = e->call_id;
			str->len = (uint16_t)snprintf(str->data, sizeof(str->data), "s%d", i);
			str->last = API_STR_END;
			raw_event(w, str, sizeof(*str));
		}
		raw_event(w, e, sizeof(*e));
	}
	model_init(&m);
	assert_int_equal(raw_finish(w, &m, &rs, err, sizeof(err)), 0);
	model_free(&m);
	outtarget_close(&t);
	model_init(&m);
	assert_int_equal(raw_import(path, &m, &rs, err, sizeof(err)), 0);
	assert_int_equal(m.ncalls, 300);
	for (int i = 0; i < 300; i++) {
		struct api_call call = model_call(&m, i), *c = &call;
		char s[16];

		assert_int_equal(c->fn, want[i].fn);
		assert_int_equal(c->pid, want[i].hdr.pid);
		assert_int_equal(c->tid, want[i].hdr.tid);
		assert_int_equal(c->call_id, want[i].call_id);
		assert_int_equal(c->start_ns, want[i].start_ns);
		assert_int_equal(c->end_ns, want[i].hdr.ts_ns);
		assert_int_equal(c->flags, want[i].flags);
		assert_true(c->ret == want[i].ret);
		assert_memory_equal(c->args, want[i].args, sizeof(want[i].args));
		assert_memory_equal(c->args + API_REG_ARGS, want[i].stack, sizeof(want[i].stack));
		assert_memory_equal(c->attr, want[i].attr, sizeof(c->attr));
		snprintf(s, sizeof(s), "s%d", i);
		if (i % 10 == 0)
			assert_string_equal(c->str[0], s);
		else
			assert_null(c->str[0]);
	}
	assert_int_equal(m.nprocs, 1);
	model_free(&m);
	unlink(path);
	rmdir(dir);
	free(str);

	/* a packed record cut in a number, one with a number of 11 bytes, one cut in the
	 * attributes: refused */
	{
		static const unsigned char cut[] = { 1, 0, 2, 2, 2, 2, 2, 0, 0, 0x80 };
		static const unsigned char overlong[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
							  0x80, 0x80, 0x80, 0x80, 0x01 };
		static const unsigned char attr[] = { 1, 0, 2, 2, 2, 2, 2, 0, 0, 0, 1, 7 };
		const unsigned char *bad[] = { cut, overlong, attr };
		size_t len[] = { sizeof(cut), sizeof(overlong), sizeof(attr) };

		for (int k = 0; k < 3; k++) {
			gz = start(4);
			put(gz, 12, bad[k], len[k], NULL, 0);
			assert_int_equal(finish(gz, &m, err, sizeof(err)), -1);
			assert_string_equal(err, "corrupt: a bad record of type 12");
			model_free(&m);
		}
		/* the same record type in a version 3 file is not one */
		gz = start(3);
		put(gz, 12, attr, sizeof(attr) - 2, NULL, 0);
		assert_int_equal(finish(gz, &m, err, sizeof(err)), -1);
		model_free(&m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_name),		  cmocka_unit_test(test_unknown_function),
		cmocka_unit_test(test_version2_by_index), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_packed_calls),	  cmocka_unit_test(test_cut_anywhere),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
