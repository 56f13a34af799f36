// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The CFI unwinder on this test's own stack: a chain of functions built without frame pointers,
 * with a frame pointer register that holds a made-up value (as a no-frame-pointer binary's does),
 * unwound from a snapshot of the registers and a copy of the stack, as a CPU sample gives them;
 * a short copy, a file whose .eh_frame is garbage, an unmapped address, frame pointers where
 * there is no CFI (JIT code), and a uretprobe's trampoline put back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "symbols/procmaps.h"
#include "symbols/symbolize.h"
#include "symbols/unwind.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)

#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))

struct snapshot {
	uint64_t regs[UREG_N];
	uint8_t stack[CPU_USTACK_MAX];
	size_t len;
};

static struct snapshot snapbuf;

/* the stack from sp to its top (at most CPU_USTACK_MAX), byte by byte: it crosses other frames'
 * locals, which ASan would take for overflows */
__attribute__((no_sanitize_address, noinline)) static void copy_stack(struct snapshot *s)
{
	pthread_attr_t a;
	void *lo;
	size_t size;
	uint64_t top, sp = s->regs[UREG_SP];

	assert_int_equal(pthread_getattr_np(pthread_self(), &a), 0);
	assert_int_equal(pthread_attr_getstack(&a, &lo, &size), 0);
	pthread_attr_destroy(&a);
	top = (uint64_t)(uintptr_t)lo + size;
	s->len = top - sp < CPU_USTACK_MAX ? top - sp : CPU_USTACK_MAX;
	for (size_t i = 0; i < s->len; i++)
		s->stack[i] = ((volatile const uint8_t *)(uintptr_t)sp)[i];
}

/* the registers a sample would give, at a point inside this function */
NOFP void unw_snap(struct snapshot *s)
{
	uint64_t *r = s->regs;

	memset(r, 0, sizeof(s->regs));
	__asm__ volatile("movq %%rbx, 24(%0)\n\t"
			 "movq %%rbp, 48(%0)\n\t"
			 "movq %%rsp, 56(%0)\n\t"
			 "movq %%r12, 96(%0)\n\t"
			 "movq %%r13, 104(%0)\n\t"
			 "movq %%r14, 112(%0)\n\t"
			 "movq %%r15, 120(%0)\n\t"
			 "leaq 0(%%rip), %%rax\n\t"
			 "movq %%rax, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	copy_stack(s);
}

NOFP void unw_level3(struct snapshot *s)
{
	/* what a frame pointer walk would read as the caller: a double's bits */
	__asm__ volatile("movabsq $0x3ff7ffffffffffff, %%rbp" ::: "rbp");
	unw_snap(s);
	__asm__ volatile("" ::: "memory");
}

NOFP void unw_level2(struct snapshot *s)
{
	unw_level3(s);
	__asm__ volatile("" ::: "memory");
}

NOFP void unw_level1(struct snapshot *s)
{
	unw_level2(s);
	__asm__ volatile("" ::: "memory");
}

struct unwound {
	uint64_t ips[CPU_STACK_DEPTH];
	char names[CPU_STACK_DEPTH][256];
	size_t n;
	enum stack_end end;
};

static void unwind_named(const struct procmaps *maps, const struct unwind_input *in,
			 struct unwound *o)
{
	struct unwinder *u;
	struct symbolizer sym;

	assert_int_equal(unwinder_new(&u), 0);
	symbolizer_init(&sym, NULL);
	o->n = unwind_user(u, maps, in, o->ips, CPU_STACK_DEPTH, &o->end);
	for (size_t i = 0; i < o->n; i++)
		symbolize_user(&sym, maps, o->ips[i] - (i > 0), o->names[i], sizeof(o->names[i]));
	symbolizer_free(&sym);
	unwinder_free(u);
}

static void own_maps(struct procmaps *m)
{
	memset(m, 0, sizeof(*m));
	assert_int_equal(procmaps_read(m, getpid()), 0);
}

static void test_own_stack(void **state)
{
	struct unwind_input in = { snapbuf.regs, snapbuf.stack, 0, NULL };
	static struct unwound o;
	struct procmaps m;

	(void)state;
	own_maps(&m);
	unw_level1(&snapbuf);
	in.stack_len = snapbuf.len;
	unwind_named(&m, &in, &o);
	for (size_t i = 0; i < o.n; i++)
		printf("  #%zu %#llx %s\n", i, (unsigned long long)o.ips[i], o.names[i]);
	printf("  end: %s\n", stack_end_name(o.end));
	assert_true(o.n >= 6);
	assert_string_equal(o.names[0], "unw_snap");
	assert_string_equal(o.names[1], "unw_level3");
	assert_string_equal(o.names[2], "unw_level2");
	assert_string_equal(o.names[3], "unw_level1");
	assert_string_equal(o.names[4], "test_own_stack");
	/* through cmocka and the C library to the process's entry, whose CFI ends the stack */
	assert_int_equal(o.end, STACK_END_ENTRY);
	assert_string_equal(o.names[o.n - 1], "_start");
	for (size_t i = 0; i < o.n; i++)
		assert_null(strstr(o.names[i], "0x3ff7ffffffffffff"));
	procmaps_free(&m);
}

/* a copy too short for the callers' frames ends the stack there, with the reason */
static void test_short_copy(void **state)
{
	struct unwind_input in = { snapbuf.regs, snapbuf.stack, 0, NULL };
	static struct unwound o;
	struct procmaps m;

	(void)state;
	own_maps(&m);
	unw_level1(&snapbuf);
	in.stack_len = 24;
	unwind_named(&m, &in, &o);
	assert_true(o.n >= 1 && o.n <= 3);
	assert_string_equal(o.names[0], "unw_snap");
	assert_int_equal(o.end, STACK_END_STACK);
	in.stack_len = 0;
	unwind_named(&m, &in, &o);
	assert_int_equal(o.n, 1);
	assert_int_equal(o.end, STACK_END_STACK);
	procmaps_free(&m);
}

/* the test's own executable, copied with its .eh_frame and .eh_frame_hdr overwritten: the walk
 * stops short at the first frame in it (or goes on by frame pointers), never crashes, and names
 * no frame that is not there */
static void test_corrupt_eh_frame(void **state)
{
	char path[] = "/tmp/topsprof-unwind.XXXXXX", self[4096];
	struct unwind_input in = { snapbuf.regs, snapbuf.stack, 0, NULL };
	static struct unwound o, ok;
	struct procmaps m;
	ssize_t len;
	int fd, garbled = 0;
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t shstr;

	(void)state;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(len > 0);
	self[len] = 0;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	{
		FILE *src = fopen(self, "rb");
		char buf[65536];
		size_t k;

		assert_non_null(src);
		while ((k = fread(buf, 1, sizeof(buf), src)) > 0)
			assert_int_equal(write(fd, buf, k), (ssize_t)k);
		fclose(src);
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstr), 0);
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstr, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") || !strcmp(name, ".eh_frame_hdr") ||
		    !strcmp(name, ".debug_frame")) {
			uint8_t *junk = malloc(sh.sh_size);

			assert_non_null(junk);
			for (size_t i = 0; i < sh.sh_size; i++)
				junk[i] = (uint8_t)(i * 37 + 11);
			assert_int_equal(pwrite(fd, junk, sh.sh_size, (off_t)sh.sh_offset),
					 (ssize_t)sh.sh_size);
			free(junk);
			garbled++;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(garbled >= 2);

	own_maps(&m);
	unw_level1(&snapbuf);
	in.stack_len = snapbuf.len;
	unwind_named(&m, &in, &ok);
	for (size_t i = 0; i < m.n; i++)
		if (m.v[i].path && !strcmp(m.v[i].path, self)) {
			free(m.v[i].path);
			m.v[i].path = strdup(path);
		}
	unwind_named(&m, &in, &o);
	printf("  garbled CFI: %zu frames, %s\n", o.n, stack_end_name(o.end));
	assert_true(o.n >= 1);
	/* every frame it gives is a frame of the good walk, in the same place */
	for (size_t i = 0; i < o.n; i++) {
		if (i >= ok.n || o.ips[i] != ok.ips[i])
			printf("  frame %zu: %#llx, the good walk's %#llx\n", i,
			       (unsigned long long)o.ips[i],
			       (unsigned long long)(i < ok.n ? ok.ips[i] : 0));
		assert_true(i < ok.n);
		assert_int_equal(o.ips[i], ok.ips[i]);
	}
	procmaps_free(&m);
	unlink(path);
}

/* no mapping holds the address: no frame, and why */
static void test_unmapped(void **state)
{
	uint64_t regs[UREG_N] = { 0 }, ips[8];
	uint8_t stack[64] = { 0 };
	struct unwind_input in = { regs, stack, sizeof(stack), NULL };
	struct procmaps m = { 0 };
	struct unwinder *u;
	enum stack_end end;

	(void)state;
	assert_int_equal(unwinder_new(&u), 0);
	assert_int_equal(procmaps_parse(&m, "400000-401000 r-xp 00000000 00:00 0\n"), 0);
	regs[UREG_SP] = 0x7ff000;
	regs[UREG_PC] = 0x500000;
	assert_int_equal(unwind_user(u, &m, &in, ips, 8, &end), 0);
	assert_int_equal(end, STACK_END_UNMAPPED);
	regs[UREG_SP] = 0;
	assert_int_equal(unwind_user(u, &m, &in, ips, 8, &end), 0);
	assert_int_equal(end, STACK_END_NOREGS);
	procmaps_free(&m);
	unwinder_free(u);
}

/* code in an anonymous mapping (JIT) has no CFI: frame records, by the frame pointer, until it
 * is 0; a uretprobe's trampoline where a return address was is put back */
static void test_frame_pointers(void **state)
{
	const uint64_t base = 0x7ff000, tramp = 0x7fff0000;
	uint64_t regs[UREG_N] = { 0 }, ips[8], stack[16] = { 0 };
	struct kc_user_returns uret = { .tramp = tramp, .ret = { 0x400300 } };
	struct unwind_input in = { regs, (const uint8_t *)stack, sizeof(stack), NULL };
	struct procmaps m = { 0 };
	struct unwinder *u;
	enum stack_end end;
	size_t n;

	(void)state;
	assert_int_equal(unwinder_new(&u), 0);
	assert_int_equal(procmaps_parse(&m, "400000-401000 r-xp 00000000 00:00 0\n"), 0);
	regs[UREG_SP] = base;
	regs[UREG_PC] = 0x400100;
	regs[UREG_FP] = base + 16;
	stack[2] = base + 48; /* frame record at base + 16: caller's fp, return address */
	stack[3] = 0x400200;
	stack[6] = 0; /* at base + 48: the outermost, fp 0 */
	stack[7] = tramp;
	stack[8] = 0;
	n = unwind_user(u, &m, &in, ips, 8, &end);
	/* the trampoline is in no mapping of the process's (the kernel's xol page is not
	 * among them): the stack ends there */
	assert_int_equal(n, 2);
	assert_int_equal(ips[0], 0x400100);
	assert_int_equal(ips[1], 0x400200);
	assert_int_equal(end, STACK_END_UNMAPPED);
	in.uret = &uret;
	n = unwind_user(u, &m, &in, ips, 8, &end);
	assert_int_equal(n, 3);
	assert_int_equal(ips[2], 0x400300);
	assert_int_equal(end, STACK_END_ENTRY);
	/* a frame pointer below the stack pointer is no frame record */
	regs[UREG_FP] = base - 64;
	n = unwind_user(u, &m, &in, ips, 8, &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, STACK_END_NOCFI);
	/* a record past the copy */
	regs[UREG_FP] = base + sizeof(stack);
	n = unwind_user(u, &m, &in, ips, 8, &end);
	assert_int_equal(n, 1);
	assert_int_equal(end, STACK_END_STACK);
	/* deeper than asked */
	regs[UREG_FP] = base + 16;
	n = unwind_user(u, &m, &in, ips, 2, &end);
	assert_int_equal(n, 2);
	assert_int_equal(end, STACK_END_DEPTH);
	procmaps_free(&m);
	unwinder_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_stack),	 cmocka_unit_test(test_short_copy),
		cmocka_unit_test(test_corrupt_eh_frame), cmocka_unit_test(test_unmapped),
		cmocka_unit_test(test_frame_pointers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void)
{
	printf("test_unwind: SKIPPED: the snapshots are taken with x86-64 instructions\n");
	return 0;
}
#endif
