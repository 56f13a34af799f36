// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The symbolizer: ELF function symbols (.symtab, .dynsym, .gnu_debugdata), C++ demangling, and
 * /proc/PID/maps, on synthetic tables, on fixtures built for the purpose and on real files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfinfo.h"
#include "procmaps.h"
#include "symtab.h"

#define FIX(name) FIXTURE_DIR "/" name

static void test_demangle(void **state)
{
	(void)state;
	char *s = sym_demangle("_ZN2ns6Widget7computeEi");

	assert_string_equal(s, "ns::Widget::compute(int)");
	free(s);
	s = sym_demangle("malloc");
	assert_string_equal(s, "malloc");
	free(s);
	s = sym_demangle("_Znot_a_real_name!"); /* not demangleable: kept as it is */
	assert_string_equal(s, "_Znot_a_real_name!");
	free(s);
}

/* lookups on a table made by hand: sized, zero-size, gaps, below the first */
static void test_find_synthetic(void **state)
{
	(void)state;
	struct sym syms[] = {
		{ .addr = 0x1000, .size = 0x10, .name = "sized" },
		{ .addr = 0x2000, .size = 0, .name = "sizeless" },
		{ .addr = 0x3000, .size = 0x100, .name = "last" },
	};
	struct symtab t = { .syms = syms, .nsyms = 3 };
	uint64_t d = 99;

	assert_null(symtab_find(&t, 0xfff, &d));
	assert_string_equal(symtab_find(&t, 0x1000, &d), "sized");
	assert_int_equal(d, 0);
	assert_string_equal(symtab_find(&t, 0x100f, &d), "sized");
	assert_int_equal(d, 0xf);
	assert_null(symtab_find(&t, 0x1010, &d)); /* past its end, before the next */
	assert_string_equal(symtab_find(&t, 0x2fff, &d), "sizeless");
	assert_int_equal(d, 0xfff);
	assert_string_equal(symtab_find(&t, 0x30ff, &d), "last");
	assert_null(symtab_find(&t, 0x3100, &d));
	t.nsyms = 0;
	assert_null(symtab_find(&t, 0x1000, &d));
}

/* the function named at file offset off of path, through the load segments */
static const char *name_at(const struct symtab *t, uint64_t off, uint64_t *delta)
{
	uint64_t v;

	if (!symtab_offset_to_vaddr(t, off, &v))
		return NULL;
	return symtab_find(t, v, delta);
}

static void check_names(const char *path, const char *defined_in, const char *const *names,
			const char *const *want, int n)
{
	uint64_t offs[8], d;
	struct symtab *t;

	assert_true(n <= 8);
	assert_int_equal(elf_func_offsets(defined_in, names, n, offs), n);
	assert_int_equal(symtab_load(path, &t), 0);
	for (int i = 0; i < n; i++) {
		const char *got = name_at(t, offs[i], &d);

		assert_non_null(got);
		assert_string_equal(got, want[i]);
		assert_int_equal(d, 0);
		got = name_at(t, offs[i] + 1, &d);
		assert_string_equal(got, want[i]);
		assert_int_equal(d, 1);
	}
	symtab_free(t);
}

static void test_pie(void **state)
{
	(void)state;
	const char *names[] = { "hot_function", "local_helper", "main", "sizeless_asm" };
	struct symtab *t;

	check_names(FIX("symfix"), FIX("symfix"), names, names, 4);
	assert_int_equal(symtab_load(FIX("symfix"), &t), 0);
	assert_true(t->has_symtab);
	assert_false(t->has_debugdata);
	assert_true(t->nsegs >= 2);
	symtab_free(t);
}

/* stripped, its local functions only in .gnu_debugdata: they still resolve */
static void test_minidebuginfo(void **state)
{
	(void)state;
	const char *names[] = { "hot_function", "local_helper", "main" };
	struct symtab *t;
	uint64_t off;

	check_names(FIX("symfix.mini"), FIX("symfix"), names, names, 3);
	assert_int_equal(symtab_load(FIX("symfix.mini"), &t), 0);
	assert_false(t->has_symtab);
	assert_true(t->has_debugdata);
	symtab_free(t);
	/* nothing of it is left in the file itself */
	assert_int_equal(elf_func_offsets(FIX("symfix.mini"), names, 1, &off), 0);
	/* a corrupt section is reported, not taken for an empty one */
	assert_int_equal(symtab_load(FIX("symfix.baddd"), &t), -EBADMSG);
	assert_null(t);
}

static void test_cxx_library(void **state)
{
	(void)state;
	const char *names[] = { "_ZN2ns6Widget7computeEi", "widget_entry" };
	const char *want[] = { "ns::Widget::compute(int)", "widget_entry" };

	check_names(FIX("libsymfix_cxx.so"), FIX("libsymfix_cxx.so"), names, want, 2);
}

static void test_not_elf(void **state)
{
	(void)state;
	struct symtab *t;

	assert_int_equal(symtab_load(FIX("../../../Makefile"), &t), -ENOEXEC);
	assert_int_equal(symtab_load(FIX("no-such-file"), &t), -ENOENT);
}

static void test_procmaps_parse(void **state)
{
	(void)state;
	const char *text =
		"7f0000001000-7f0000002000 r-xp 00001000 08:01 42 /usr/lib/libx.so\n"
		"7f0000000000-7f0000001000 r--p 00000000 08:01 42 /usr/lib/libx.so\n"
		"55550000a000-55550000c000 r-xp 00002000 08:01 7    /opt/app with space\n"
		"7fff00000000-7fff00002000 r-xp 00000000 00:00 0 [vdso]\n"
		"7ffe00000000-7ffe00001000 rwxp 00000000 00:00 0\n";
	struct procmaps m;
	const struct procmap *p;
	uint64_t off;

	assert_int_equal(procmaps_parse(&m, text), 0);
	assert_int_equal(m.n, 4); /* the one not executable is left out */
	p = procmaps_find(&m, 0x7f0000001010, &off);
	assert_non_null(p);
	assert_string_equal(p->path, "/usr/lib/libx.so");
	assert_int_equal(off, 0x1010);
	p = procmaps_find(&m, 0x55550000b000, &off);
	assert_string_equal(p->path, "/opt/app with space");
	assert_int_equal(off, 0x3000);
	assert_string_equal(procmaps_find(&m, 0x7fff00000001, &off)->path, "[vdso]");
	assert_null(procmaps_find(&m, 0x7ffe00000010, &off)->path); /* anonymous: JIT code */
	assert_null(procmaps_find(&m, 0x7f0000000010, &off));	    /* not executable */
	assert_null(procmaps_find(&m, 0x7f0000002000, &off));	    /* one past the end */
	assert_null(procmaps_find(&m, 0x1000, &off));
	procmaps_free(&m);
	assert_int_equal(procmaps_parse(&m, "zzz not a maps line\n"), -EINVAL);
	assert_int_equal(procmaps_parse(&m, "2000-1000 r-xp 0 08:01 1 /x\n"), -EINVAL);
}

__attribute__((noinline, noclone)) int symtab_test_marker(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

/* the path a sampled address takes: this process's maps, the file, its symbols */
static void test_own_process(void **state)
{
	(void)state;
	struct procmaps m;
	const struct procmap *p;
	struct symtab *t;
	uint64_t off, d;
	char exe[PATH_MAX];
	ssize_t n;

	assert_int_equal(symtab_test_marker(1), 2);
	assert_int_equal(procmaps_read(&m, getpid()), 0);
	p = procmaps_find(&m, (uint64_t)(uintptr_t)&symtab_test_marker + 2, &off);
	assert_non_null(p);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = 0;
	assert_string_equal(p->path, exe);
	assert_int_equal(symtab_load(p->path, &t), 0);
	assert_string_equal(name_at(t, off, &d), "symtab_test_marker");
	assert_int_equal(d, 2);
	symtab_free(t);

	/* libc: exported names only (Debian strips its .symtab); the alias without underscores */
	p = NULL;
	for (size_t i = 0; i < m.n; i++)
		if (m.v[i].path && strstr(m.v[i].path, "/libc.so.6"))
			p = &m.v[i];
	assert_non_null(p);
	{
		const char *names[] = { "getpid", "malloc" };

		check_names(p->path, p->path, names, names, 2);
	}
	procmaps_free(&m);
	assert_int_equal(procmaps_read(&m, INT32_MAX), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_find_synthetic),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_minidebuginfo),
		cmocka_unit_test(test_cxx_library),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_procmaps_parse),
		cmocka_unit_test(test_own_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
