// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Strings the probe could not read (issue 12): which mappings allow reading them again later,
 * how far a string may be read, the pieces read from a live process (this one), and how the
 * model shows and counts what was recovered or lost. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "output/store.h"
#include "collect/strrecover.h"

#include <zlib.h>

static void test_allowed(void **state)
{
	(void)state;
	assert_true(strrecover_allowed("r--p"));  /* .rodata, a read-only file mapping */
	assert_true(strrecover_allowed("r-xp"));  /* code */
	assert_false(strrecover_allowed("rw-p")); /* could have changed since the call */
	assert_false(strrecover_allowed("rwxp"));
	assert_false(strrecover_allowed("r--s")); /* another mapping may write it */
	assert_false(strrecover_allowed("---p")); /* unreadable */
	assert_false(strrecover_allowed("--xp"));
	assert_false(strrecover_allowed("r-"));
	assert_false(strrecover_allowed(NULL));
}

static const char maps[] = "1000-3000 r--p 00000000 08:01 10 /usr/bin/app\n"
			   "3000-4000 r-xp 00002000 08:01 10 /usr/bin/app\n"
			   "4000-5000 rw-p 00003000 08:01 10 /usr/bin/app\n"
			   "6000-7000 r--p 00000000 00:00 0 \n"
			   "8000-9000 r--s 00000000 00:05 7 /memfd:x (deleted)\n"
			   "9000-a000 rw-p 00000000 00:00 0 [heap]\n";

static void test_span(void **state)
{
	bool w;

	(void)state;
	/* read-only mappings one after the other: the string may run on through them */
	assert_int_equal(strrecover_span(maps, 0x1000, 0x10000, &w), 0x3000);
	assert_true(w); /* up to the writable one */
	assert_int_equal(strrecover_span(maps, 0x2ff0, 0x100, &w), 0x100);
	assert_false(w);
	assert_int_equal(strrecover_span(maps, 0x2ff0, 0x10000, NULL), 0x1010);
	/* writable: never read again */
	assert_int_equal(strrecover_span(maps, 0x4010, 16, &w), 0);
	assert_true(w);
	assert_int_equal(strrecover_span(maps, 0x9000, 16, &w), 0);
	assert_true(w);
	/* a gap ends it: 0x6000 begins after one */
	assert_int_equal(strrecover_span(maps, 0x6800, 0x10000, &w), 0x800);
	/* shared, or nothing mapped there */
	assert_int_equal(strrecover_span(maps, 0x8000, 16, &w), 0);
	assert_false(w);
	assert_int_equal(strrecover_span(maps, 0x5800, 16, &w), 0);
	assert_false(w);
	assert_int_equal(strrecover_span(maps, 0x100000, 16, &w), 0);
	assert_int_equal(strrecover_span("", 0x1000, 16, &w), 0);
}

/* a faulted piece as the probe sends it */
static struct tp_str_event *faulted(const void *addr, uint32_t off, uint32_t want, uint32_t bytes)
{
	struct tp_str_event *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->hdr.type = EV_API_STR;
	e->hdr.pid = (uint32_t)getpid();
	e->call_id = 7;
	e->offset = off;
	e->last = API_STR_END | API_STR_FAULT;
	e->fault.addr = (uint64_t)(uintptr_t)addr;
	e->fault.want = want;
	e->fault.bytes = bytes;
	return e;
}

static const char rodata_msg[] = "a message in .rodata";

static void test_pieces(void **state)
{
	struct tp_str_event *e, *p;
	size_t n;
	char *rw = strdup("a message in the heap"), *big;

	(void)state;
	/* read-only: recovered, as one piece marked so */
	e = faulted(rodata_msg, 0, 4096, 0);
	n = strrecover_pieces(e, &p);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].len, strlen(rodata_msg));
	assert_memory_equal(p[0].data, rodata_msg, strlen(rodata_msg));
	assert_int_equal(p[0].last, API_STR_END | API_STR_RECOVERED);
	assert_int_equal(p[0].call_id, 7);
	free(p);
	/* from where the probe stopped, to the limit: cut, the string goes on */
	e->fault.addr += 2;
	e->offset = 2;
	e->fault.want = 7;
	n = strrecover_pieces(e, &p);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].offset, 2);
	assert_int_equal(p[0].len, 7);
	assert_memory_equal(p[0].data, "message", 7);
	assert_int_equal(p[0].last, API_STR_CUT | API_STR_RECOVERED);
	free(p);
	/* bytes payloads: exactly what was left; cut when the payload is longer than the limit */
	e->fault.bytes = 100;
	e->fault.want = 5;
	n = strrecover_pieces(e, &p);
	assert_int_equal(n, 1);
	assert_int_equal(p[0].len, 5);
	assert_int_equal(p[0].last, API_STR_CUT | API_STR_RECOVERED);
	free(p);
	free(e);
	/* writable memory: not recovered */
	e = faulted(rw, 0, 4096, 0);
	assert_int_equal(strrecover_pieces(e, &p), 0);
	assert_null(p);
	free(e);
	free(rw);
	/* the attributes themselves: not recovered */
	e = faulted(rodata_msg, 0, 4096, 0);
	e->last |= API_STR_ATTR;
	assert_int_equal(strrecover_pieces(e, &p), 0);
	free(e);
	/* nothing mapped there, or a process gone */
	e = faulted((void *)16, 0, 4096, 0);
	assert_int_equal(strrecover_pieces(e, &p), 0);
	free(e);
	e = faulted(rodata_msg, 0, 4096, 0);
	e->hdr.pid = 0x7ffffff0;
	assert_int_equal(strrecover_pieces(e, &p), 0);
	free(e);
	/* a long string in a read-only mapping: pieces of API_STR_CHUNK - 1 bytes */
	big = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(big != MAP_FAILED);
	memset(big, 'x', 10000);
	assert_int_equal(mprotect(big, 3 * 4096, PROT_READ), 0);
	e = faulted(big, 0, 20000, 0);
	n = strrecover_pieces(e, &p);
	assert_int_equal(n, 3);
	assert_int_equal(p[0].len + p[1].len + p[2].len, 10000);
	assert_int_equal(p[1].offset, API_STR_CHUNK - 1);
	assert_int_equal(p[0].last, API_STR_RECOVERED);
	assert_int_equal(p[2].last, API_STR_END | API_STR_RECOVERED);
	free(p);
	free(e);
	munmap(big, 3 * 4096);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a copy of this process that waits until killed; with want > 0, under that pid (clone3's
 * set_tid: root only), else -1 */
static pid_t child(pid_t want)
{
	struct clone_args args;
	pid_t parent = getpid(), pid;

	memset(&args, 0, sizeof(args));
	args.exit_signal = SIGCHLD;
	if (want > 0) {
		args.set_tid = (uint64_t)(uintptr_t)&want;
		args.set_tid_size = 1;
	}
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		/* not left behind by a failed test */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		for (;;)
			pause();
	}
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The process is the one that made the call: read from it through its /proc directory, held from
 * its maps to after the read; one under the same pid that started after the call is not read. */
static void test_pid(void **state)
{
	struct tp_str_event *e, *p;
	uint64_t before;
	pid_t a, b;

	(void)state;
	strrecover_forget();
	a = child(0);
	assert_true(a > 0);
	/* a copy of this process: .rodata at the same address */
	e = faulted(rodata_msg, 0, 4096, 0);
	e->hdr.pid = (uint32_t)a;
	e->hdr.ts_ns = mono_ns();
	assert_int_equal(strrecover_pieces(e, &p), 1);
	assert_memory_equal(p[0].data, rodata_msg, strlen(rodata_msg));
	assert_int_equal(p[0].hdr.ts_ns, 0);
	free(p);
	/* a process that started after the call is another one (clock ticks are 10 ms) */
	e->hdr.ts_ns = mono_ns() - 10000000000ull;
	assert_int_equal(strrecover_pieces(e, &p), 0);
	assert_null(p);
	/* kept, then gone: not read */
	e->hdr.ts_ns = mono_ns();
	assert_int_equal(strrecover_pieces(e, &p), 1);
	free(p);
	reap(a);
	assert_int_equal(strrecover_pieces(e, &p), 0);
	/* kept, gone, and its pid another process's since the call: not read */
	a = child(0);
	assert_true(a > 0);
	e->hdr.pid = (uint32_t)a;
	e->hdr.ts_ns = mono_ns(); /* a call after it started */
	assert_int_equal(strrecover_pieces(e, &p), 1);
	free(p);
	before = mono_ns();
	reap(a);
	usleep(30 * 1000);
	b = child(a);
	if (b < 0) {
		printf("pid reuse not tried: clone3 set_tid: %s\n", strerror(errno));
	} else {
		assert_int_equal(b, a);
		e->hdr.ts_ns = before;
		assert_int_equal(strrecover_pieces(e, &p), 0);
		/* what that process itself would pass is read */
		e->hdr.ts_ns = mono_ns();
		assert_int_equal(strrecover_pieces(e, &p), 1);
		free(p);
		reap(b);
	}
	free(e);
	strrecover_forget();
}

/* the maps are kept a while, read again when a string lies in none of the kept ones */
static void test_maps_kept(void **state)
{
	struct tp_str_event *e, *p;
	char *page;

	(void)state;
	strrecover_forget();
	e = faulted(rodata_msg, 0, 4096, 0);
	assert_int_equal(strrecover_pieces(e, &p), 1);
	free(p);
	/* mapped after the maps were kept */
	page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(page != MAP_FAILED);
	strcpy(page, "mapped later");
	assert_int_equal(mprotect(page, 4096, PROT_READ), 0);
	e->fault.addr = (uint64_t)(uintptr_t)page;
	assert_int_equal(strrecover_pieces(e, &p), 1);
	assert_int_equal(p[0].len, strlen("mapped later"));
	assert_memory_equal(p[0].data, "mapped later", p[0].len);
	free(p);
	/* writable since: the kept maps would still say read-only, for 100 ms at most; read again
	 * once they are out of date */
	assert_int_equal(mprotect(page, 4096, PROT_READ | PROT_WRITE), 0);
	usleep(150 * 1000);
	assert_int_equal(strrecover_pieces(e, &p), 0);
	munmap(page, 4096);
	free(e);
	strrecover_forget();
}

/* A page whose fault does not complete (a userfaultfd region, as a FUSE or NFS file could be):
 * the read is waited for 50 ms, then the string is not recovered; while that read still waits,
 * no other is tried; once the fault is resolved, reads go on. Needs userfaultfd for faults the
 * kernel takes (root). */
static void test_deadline(void **state)
{
	struct uffdio_api api = { .api = UFFD_API };
	static char page[4096] __attribute__((aligned(4096))) = "came at last";
	struct uffdio_register reg;
	struct uffdio_copy copy;
	struct tp_str_event *e, *r, *p;
	uint64_t t0;
	size_t n = 0;
	char *region;
	int uffd;

	(void)state;
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		printf("the blocking read not tried: userfaultfd: %s\n", strerror(errno));
		if (uffd >= 0)
			close(uffd);
		skip();
	}
	strrecover_forget();
	region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(region != MAP_FAILED);
	memset(&reg, 0, sizeof(reg));
	reg.range.start = (uint64_t)(uintptr_t)region;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	assert_int_equal(ioctl(uffd, UFFDIO_REGISTER, &reg), 0);
	assert_int_equal(mprotect(region, 4096, PROT_READ), 0);
	/* its fault waits for this thread, which waits for the read: 50 ms, then not recovered */
	e = faulted(region, 0, 4096, 0);
	t0 = mono_ns();
	assert_int_equal(strrecover_pieces(e, &p), 0);
	assert_null(p);
	assert_in_range(mono_ns() - t0, 40000000ull, 1000000000ull);
	/* that read still waits: .rodata is not read either */
	r = faulted(rodata_msg, 0, 4096, 0);
	assert_int_equal(strrecover_pieces(r, &p), 0);
	/* the fault resolved: the waiting read returns, the next are made */
	memset(&copy, 0, sizeof(copy));
	copy.dst = reg.range.start;
	copy.src = (uint64_t)(uintptr_t)page;
	copy.len = 4096;
	assert_int_equal(ioctl(uffd, UFFDIO_COPY, &copy), 0);
	for (int i = 0; i < 100 && !n; i++) {
		n = strrecover_pieces(r, &p);
		if (!n)
			usleep(10 * 1000);
	}
	assert_int_equal(n, 1);
	assert_memory_equal(p[0].data, rodata_msg, strlen(rodata_msg));
	free(p);
	assert_int_equal(strrecover_pieces(e, &p), 1);
	assert_int_equal(p[0].len, strlen(page));
	assert_memory_equal(p[0].data, page, p[0].len);
	free(p);
	free(r);
	free(e);
	munmap(region, 4096);
	close(uffd);
	strrecover_forget();
}

static struct tp_api_event mark(uint64_t id)
{
	struct tp_api_event e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = EV_API_CALL;
	e.hdr.pid = e.hdr.tid = 1;
	e.call_id = id;
	e.fn = (uint32_t)api_find("topstxMark");
	return e;
}

static void test_model(void **state)
{
	struct tp_str_event *s = calloc(1, sizeof(*s));
	struct tp_api_event e;
	struct model m;

	(void)state;
	model_init(&m);
	/* lost at once: named by its address, counted */
	s->call_id = 1;
	s->last = API_STR_END | API_STR_FAULT;
	s->fault.addr = 0x1234;
	model_add_str(&m, s);
	e = mark(1);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 0).str[0], "[unreadable string at 0x1234]");
	assert_false(model_call(&m, 0).truncated[0]);
	/* lost after a first piece: what came, then where it stopped */
	memset(s, 0, sizeof(*s));
	s->call_id = 2;
	s->len = 3;
	memcpy(s->data, "abc", 3);
	model_add_str(&m, s);
	s->offset = 3;
	s->len = 0;
	s->last = API_STR_END | API_STR_FAULT;
	s->fault.addr = 0x5000;
	model_add_str(&m, s);
	e = mark(2);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 1).str[0], "abc[unreadable string at 0x5000]");
	/* the attributes */
	memset(s, 0, sizeof(*s));
	s->call_id = 3;
	s->last = API_STR_END | API_STR_FAULT | API_STR_ATTR;
	s->fault.addr = 0x7000;
	model_add_str(&m, s);
	e = mark(3);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 2).str[0], "[unreadable attributes at 0x7000]");
	/* recovered: the string as passed, counted once, not as a loss */
	memset(s, 0, sizeof(*s));
	s->call_id = 4;
	s->len = 4;
	memcpy(s->data, "cold", 4);
	s->last = API_STR_RECOVERED;
	model_add_str(&m, s);
	s->offset = 4;
	s->len = 5;
	memcpy(s->data, " page", 5);
	s->last = API_STR_END | API_STR_RECOVERED;
	model_add_str(&m, s);
	e = mark(4);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 3).str[0], "cold page");
	/* a legitimately empty string is not a loss */
	memset(s, 0, sizeof(*s));
	s->call_id = 5;
	s->last = API_STR_END;
	model_add_str(&m, s);
	e = mark(5);
	model_add_call(&m, &e);
	assert_string_equal(model_call(&m, 4).str[0], "");
	assert_int_equal(m.lost_unreadable, 3);
	assert_int_equal(m.str_recovered, 1);
	assert_int_equal(model_lost_total(&m), 3);
	model_finish(&m, true, NULL);
	assert_int_equal(m.nmarks, 5);
	assert_string_equal(m.marks[0].name, "[unreadable string at 0x1234]");
	model_free(&m);
	free(s);
}

/* what topsprof counted of such strings goes with an exported profile, so that an import warns
 * the same; a profile before format 1.2 (no STRS section) reads as none */
static void test_profile(void **state)
{
	struct model m, back;
	char *buf = NULL, err[256] = "";
	unsigned char *payload, *at;
	size_t len = 0;
	uLongf plen;
	FILE *f;

	(void)state;
	model_init(&m);
	m.root_pid = 42;
	m.lost_unreadable = 3;
	m.str_recovered = 2;
	m.str_faulted_in = 5;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(store_write_profile(f, &m), 0);
	assert_int_equal(fclose(f), 0);
	model_init(&back);
	assert_int_equal(store_parse_profile((unsigned char *)buf, len, &back, err, sizeof(err)),
			 0);
	assert_int_equal(back.lost_unreadable, 3);
	assert_int_equal(back.str_recovered, 2);
	assert_int_equal(back.str_faulted_in, 5);
	assert_int_equal(model_lost_total(&back), 3);
	model_free(&back);
	/* the same payload without its STRS section: as a 1.1 file holds it */
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(store_write_profile_v1(f, &m), 0);
	assert_int_equal(fclose(f), 0);
	plen = 0;
	for (int i = 0; i < 8; i++) /* the header's payload size */
		plen |= (uLongf)(unsigned char)buf[16 + i] << (8 * i);
	payload = malloc(plen);
	assert_non_null(payload);
	assert_int_equal(uncompress(payload, &plen, (unsigned char *)buf + 32, len - 32), Z_OK);
	at = memmem(payload, plen, "STRS\0\0\0\0\x18\0\0\0\0\0\0\0", 16);
	assert_non_null(at);
	memmove(at, at + 16 + 24, plen - (size_t)(at - payload) - 16 - 24);
	model_init(&back);
	assert_int_equal(store_decode_payload(payload, plen - 16 - 24, &back, err, sizeof(err)), 0);
	assert_int_equal(back.root_pid, 42);
	assert_int_equal(back.lost_unreadable, 0);
	assert_int_equal(back.str_faulted_in, 0);
	model_free(&back);
	free(payload);
	free(buf);
	model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_allowed),	  cmocka_unit_test(test_span),
		cmocka_unit_test(test_pieces),	  cmocka_unit_test(test_pid),
		cmocka_unit_test(test_maps_kept), cmocka_unit_test(test_deadline),
		cmocka_unit_test(test_model),	  cmocka_unit_test(test_profile),
	};

	return cmocka_run_group_tests_name("strrecover", tests, NULL, NULL);
}
