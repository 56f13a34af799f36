// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* CPU call stacks, from address to report: ELF function symbols (.symtab, .dynsym,
 * .gnu_debugdata), C++ demangling, /proc/PID/maps, kallsyms, the frame symbolizer, the profile
 * with its functions and folded text; on synthetic tables, fixtures built for the purpose and real
 * files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target/elfinfo.h"
#include "model/cpustacks.h"
#include "symbols/ksyms.h"
#include "symbols/symbolize.h"
#include "symbols/proccache.h"
#include "symbols/procmaps.h"
#include "symbols/symtab.h"
#include "symbols/stackname.h"
#include "events.h"

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
	struct symtab t = {
		.syms = syms,
		.nsyms = 3,
		.segs = { .v = { { .vaddr = 0x1000, .offset = 0, .filesz = 0x1800 },
				 { .vaddr = 0x3000, .offset = 0x2000, .filesz = 0x1000 } },
			  .n = 2 }
	};
	uint64_t d = 99;

	assert_null(symtab_find(&t, 0xfff, &d));
	assert_string_equal(symtab_find(&t, 0x1000, &d), "sized");
	assert_int_equal(d, 0);
	assert_string_equal(symtab_find(&t, 0x100f, &d), "sized");
	assert_int_equal(d, 0xf);
	assert_null(symtab_find(&t, 0x1010, &d)); /* past its end, before the next */
	assert_string_equal(symtab_find(&t, 0x27ff, &d), "sizeless");
	assert_int_equal(d, 0x7ff);
	assert_null(symtab_find(&t, 0x2800, &d)); /* past its segment: not its */
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
	assert_true(t->segs.n >= 2);
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

static void test_build_id_debug_file(void **state)
{
	(void)state;
	const char *names[] = { "hot_function", "local_helper", "main" };
	struct symtab *t;

	/* stripped: without its debug file, none of them */
	setenv("TOPSPROF_DEBUG_DIR", FIX("no-such-dir"), 1);
	assert_int_equal(symtab_load(FIX("symfix.stripped"), &t), 0);
	assert_false(t->has_symtab);
	assert_false(t->has_debugfile);
	for (int i = 0; i < 3; i++) {
		uint64_t off, vaddr;

		assert_int_equal(elf_func_offsets(FIX("symfix"), &names[i], 1, &off), 1);
		assert_true(symtab_offset_to_vaddr(t, off, &vaddr));
		assert_null(symtab_find(t, vaddr + 1, NULL));
	}
	symtab_free(t);
	/* with it, found by build-id: every name, at the stripped file's addresses */
	setenv("TOPSPROF_DEBUG_DIR", FIX("debug"), 1);
	assert_int_equal(symtab_load(FIX("symfix.stripped"), &t), 0);
	assert_true(t->has_debugfile);
	symtab_free(t);
	check_names(FIX("symfix.stripped"), FIX("symfix"), names, names, 3);
	unsetenv("TOPSPROF_DEBUG_DIR");
}

/* the process cache: a live process read whole, gone ones remembered by number; many of them
 * found again through the index */
static void test_proccache(void **state)
{
	struct proccache pc = { 0 };
	const struct cached_proc *p;
	char want[32];

	(void)state;
	proccache_capture(&pc, (uint32_t)getpid(), 1);
	for (uint32_t i = 0; i < 300; i++) /* beyond any pid_max: gone at once */
		proccache_capture(&pc, 0x7fff0000u + i, 1);
	assert_int_equal(pc.n, 301);
	p = proccache_find(&pc, (uint32_t)getpid());
	assert_non_null(p);
	assert_false(p->gone);
	assert_true(p->maps.n > 0);
	assert_string_equal(p->comm, "test_cpu_stacks");
	for (uint32_t i = 0; i < 300; i++) {
		p = proccache_find(&pc, 0x7fff0000u + i);
		assert_non_null(p);
		assert_true(p->gone);
		snprintf(want, sizeof(want), "%u", 0x7fff0000u + i);
		assert_string_equal(p->comm, want);
	}
	assert_null(proccache_find(&pc, 0x7ffe0000u));
	/* seen again: one entry each */
	proccache_capture(&pc, 0x7fff0000u, 2);
	assert_int_equal(pc.n, 301);
	/* a pid taken again by a new process (as if this one had been gone): read anew */
	p = proccache_find(&pc, (uint32_t)getpid());
	((struct cached_proc *)p)->gone = true;
	procmaps_free(&((struct cached_proc *)p)->maps);
	proccache_capture(&pc, (uint32_t)getpid(), 3);
	assert_int_equal(p->maps.n, 0); /* gone stays gone for the walk */
	proccache_renew(&pc, (uint32_t)getpid(), 4);
	assert_false(p->gone);
	assert_true(p->maps.n > 0);
	assert_int_equal(pc.n, 301);
	proccache_free(&pc);
	assert_null(proccache_find(&pc, (uint32_t)getpid()));
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
	p = procmaps_find(&m, 0x7fff00000001, &off);
	assert_non_null(p);
	assert_string_equal(p->path, "[vdso]");
	p = procmaps_find(&m, 0x7ffe00000010, &off);
	assert_non_null(p);
	assert_null(p->path);				      /* anonymous: JIT code */
	assert_null(procmaps_find(&m, 0x7f0000000010, &off)); /* not executable */
	assert_null(procmaps_find(&m, 0x7f0000002000, &off)); /* one past the end */
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

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* a new temporary file (path: a mkstemp template) holding text */
static void temp_file(char *path, const char *text)
{
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	write_file(path, text);
}

static void test_ksyms_synthetic(void **state)
{
	(void)state;
	char path[] = "/tmp/topsprof-ksyms.XXXXXX";
	const struct ksym *s;
	struct ksyms k;
	uint64_t d;

	temp_file(path, "ffffffff81000000 T _stext\n"
			"ffffffff81000000 T _text\n"
			"ffffffff81001000 T do_syscall_64\n"
			"ffffffff81001000 t __do_syscall_64\n"
			"ffffffff81002000 D some_data\n"
			"ffffffff81003000 W weak_fn\n"
			"ffffffffc0001000 t gcu_ioctl\t[enflame]\n"
			"ffffffffc0002000 T other_fn\t[other]\n");
	assert_int_equal(ksyms_load(&k, path), 0);
	assert_int_equal(k.n, 7); /* the data symbol is left out */
	assert_null(ksyms_find(&k, 0xffffffff80ffffff, &d));
	s = ksyms_find(&k, 0xffffffff81000010, &d);
	assert_string_equal(s->name, "_stext");
	assert_null(s->module);
	s = ksyms_find(&k, 0xffffffff81001abc, &d);
	assert_string_equal(s->name, "do_syscall_64"); /* the alias without underscores */
	assert_int_equal(d, 0xabc);
	assert_string_equal(ksyms_find(&k, 0xffffffff81002010, &d)->name, "do_syscall_64");
	assert_string_equal(ksyms_find(&k, 0xffffffff81003000, &d)->name, "weak_fn");
	s = ksyms_find(&k, 0xffffffffc0001100, &d);
	assert_string_equal(s->name, "gcu_ioctl");
	assert_string_equal(s->module, "enflame");
	assert_string_equal(ksyms_find(&k, 0xffffffffc0002000, &d)->module, "other");
	ksyms_free(&k);

	/* hidden addresses (kptr_restrict) are an error, not a table of zeros */
	write_file(path, "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n");
	assert_int_equal(ksyms_load(&k, path), -EPERM);
	write_file(path, "ffffffff81000000 T\n");
	assert_int_equal(ksyms_load(&k, path), -EINVAL);
	write_file(path, "ffffffff81000000 T f\t[unterminated\n");
	assert_int_equal(ksyms_load(&k, path), -EINVAL);
	unlink(path);
	assert_int_equal(ksyms_load(&k, path), -ENOENT);
}

/* this machine's kernel: a function's address from the table resolves to it */
static void test_ksyms_real(void **state)
{
	(void)state;
	const struct ksym *s;
	struct ksyms k;
	uint64_t d;
	int err = ksyms_load(&k, "/proc/kallsyms");

	if (err == -EPERM)
		skip(); /* not root: the kernel hides its addresses */
	assert_int_equal(err, 0);
	assert_true(k.n > 1000);
	for (size_t i = 0; i < k.n; i++) {
		if (strcmp(k.v[i].name, "schedule"))
			continue;
		s = ksyms_find(&k, k.v[i].addr + 4, &d);
		assert_string_equal(s->name, "schedule");
		assert_int_equal(d, 4);
		ksyms_free(&k);
		return;
	}
	fail_msg("schedule not in /proc/kallsyms");
}

/* frames of this process and of a synthetic kernel, named; what cannot be named says so */
static void test_symbolizer(void **state)
{
	(void)state;
	char path[] = "/tmp/topsprof-ksyms.XXXXXX", buf[128], want[128];
	const char *maps_text;
	struct symbolizer s;
	struct procmaps m;

	temp_file(path,
		  "ffffffff81001000 T do_syscall_64\nffffffffc0001000 t gcu_ioctl\t[enflame]\n");
	symbolizer_init(&s, path);
	assert_int_equal(procmaps_read(&m, getpid()), 0);
	assert_string_equal(symbolize_user(&s, &m, (uint64_t)(uintptr_t)&symtab_test_marker + 1,
					   buf, sizeof(buf)),
			    "symtab_test_marker");
	assert_string_equal(symbolize_user(&s, &m, 0x10, buf, sizeof(buf)), "[unknown] 0x10");
	assert_int_equal(s.nfiles, 1); /* the executable, read once */
	assert_string_equal(
		symbolize_user(&s, &m, (uint64_t)(uintptr_t)&test_symbolizer, buf, sizeof(buf)),
		"test_symbolizer");
	assert_int_equal(s.nfiles, 1);
	procmaps_free(&m);

	/* a file without symbols there (here: gone), and JIT code: file and offset, or address */
	maps_text = "7f0000001000-7f0000003000 r-xp 00004000 08:01 42 /gone/libjit.so\n"
		    "7f0000010000-7f0000011000 rwxp 00000000 00:00 0\n";
	assert_int_equal(procmaps_parse(&m, maps_text), 0);
	assert_string_equal(symbolize_user(&s, &m, 0x7f0000001010, buf, sizeof(buf)),
			    "[unknown] libjit.so+0x4010");
	assert_string_equal(symbolize_user(&s, &m, 0x7f0000010020, buf, sizeof(buf)),
			    "[unknown] 0x7f0000010020");
	procmaps_free(&m);

	assert_string_equal(symbolize_kernel(&s, 0xffffffff81001004, buf, sizeof(buf)),
			    "do_syscall_64");
	assert_string_equal(symbolize_kernel(&s, 0xffffffffc0001004, buf, sizeof(buf)),
			    "gcu_ioctl [enflame]");
	assert_string_equal(symbolize_kernel(&s, 0xffffffff80000000, buf, sizeof(buf)),
			    "[unknown] 0xffffffff80000000");
	/* truncated, never overrun */
	assert_int_equal(strlen(symbolize_kernel(&s, 0xffffffffc0001004, buf, 5)), 4);
	symbolizer_free(&s);

	/* no kallsyms: kernel frames are addresses */
	unlink(path);
	symbolizer_init(&s, path);
	snprintf(want, sizeof(want), "[unknown] 0x%llx", 0xffffffff81001004ull);
	assert_string_equal(symbolize_kernel(&s, 0xffffffff81001004, buf, sizeof(buf)), want);
	assert_int_equal(s.kerr, -ENOENT);
	symbolizer_free(&s);
}

/* the CPU profile: equal stacks merged, self and total (recursion counted once), folded text */
static void test_cpu_profile(void **state)
{
	(void)state;
	struct cpu_profile p = { .sampled = true, .hz = 100 };
	struct cpu_fn *fns;
	char *text = NULL, name[] = "a;b\nc";
	size_t n, len = 0;
	FILE *f;

	assert_int_equal(cpu_profile_add(&p, 2, "app", "main;f;g", 5, false), 0);
	assert_int_equal(cpu_profile_add(&p, 1, "app", "main;f", 3, false), 0);
	assert_int_equal(cpu_profile_add(&p, 2, "app", "main;f;g", 2, true),
			 0); /* another thread */
	assert_int_equal(cpu_profile_add(&p, 2, "app", "main;r;r;r", 4, false), 0);
	assert_int_equal(cpu_profile_add(&p, 2, "app", "main;f;do_sys_x_[k]", 1, false), 0);
	assert_int_equal(p.samples, 15);
	assert_int_equal(p.truncated_samples, 2);
	cpu_profile_finish(&p);
	assert_int_equal(p.n, 4);
	assert_int_equal(p.v[0].pid, 1);
	assert_string_equal(p.v[2].frames, "main;f;g");
	assert_int_equal(p.v[2].count, 7);

	assert_int_equal(cpu_profile_functions(&p, &fns, &n), 0);
	assert_int_equal(n, 5);
	assert_string_equal(fns[0].name, "g");
	assert_int_equal(fns[0].self, 7);
	assert_int_equal(fns[0].total, 7);
	assert_string_equal(fns[1].name, "r");
	assert_int_equal(fns[1].self, 4);
	assert_int_equal(fns[1].total, 4); /* three frames of one stack: counted once */
	assert_string_equal(fns[2].name, "f");
	assert_int_equal(fns[2].self, 3);
	assert_int_equal(fns[2].total, 11);
	assert_string_equal(fns[3].name, "do_sys_x_[k]");
	assert_string_equal(fns[4].name, "main");
	assert_int_equal(fns[4].self, 0);
	assert_int_equal(fns[4].total, 15);
	cpu_fns_free(fns, n);

	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(cpu_profile_write_folded(f, &p), 0);
	fclose(f);
	assert_string_equal(text, "app;main;f 3\n"
				  "app;main;f;do_sys_x_[k] 1\n"
				  "app;main;f;g 7\n"
				  "app;main;r;r;r 4\n");
	free(text);
	cpu_profile_free(&p);

	/* an empty profile has no functions */
	assert_int_equal(cpu_profile_functions(&p, &fns, &n), 0);
	assert_int_equal(n, 0);
	cpu_fns_free(fns, n);

	cpu_frame_sanitize(name);
	assert_string_equal(name, "a:b:c");
	assert_true(cpu_stack_looks_complete("_start", "/usr/bin/app"));
	assert_true(cpu_stack_looks_complete("start_thread", NULL));
	assert_true(cpu_stack_looks_complete("[unknown] libc.so.6+0x27249",
					     "/usr/lib/x86_64-linux-gnu/libc.so.6"));
	assert_false(cpu_stack_looks_complete("compute", "/usr/bin/app"));
	assert_false(cpu_stack_looks_complete("[unknown] 0x1234", NULL));
	/* the outermost frames alone are entries, not where a frame pointer walk stops near one */
	assert_true(cpu_frame_is_entry("_start"));
	assert_true(cpu_frame_is_entry("clone3"));
	assert_false(cpu_frame_is_entry("start_thread"));
	assert_false(cpu_frame_is_entry("__libc_start_main"));
	assert_false(cpu_frame_is_entry("_start_x"));
}

/* a user stack taken inside functions with uretprobes: the trampoline's frames get the callers
 * back, innermost first; nothing else moves */
static void test_put_back_returns(void **state)
{
	(void)state;
	const uint64_t T = 0x7fffffffe000ULL;
	uint64_t ips[8] = { 0x401000, 0x7f0000001234, T, 0x7f0000005678, T, 0x401500, 0 };
	struct kc_user_returns u = { .tramp = T, .ret = { 0x401111, 0x401222 } };

	assert_int_equal(stack_put_back_returns(ips, 8, &u), 2);
	assert_true(ips[2] == 0x401111 && ips[4] == 0x401222);
	assert_true(ips[0] == 0x401000 && ips[1] == 0x7f0000001234 && ips[3] == 0x7f0000005678 &&
		    ips[5] == 0x401500 && ips[6] == 0);
	/* more trampoline frames than returns known: the rest stay */
	uint64_t more[4] = { T, T, T, 0 };
	struct kc_user_returns one = { .tramp = T, .ret = { 0x401111, 0 } };

	assert_int_equal(stack_put_back_returns(more, 4, &one), 1);
	assert_true(more[0] == 0x401111 && more[1] == T && more[2] == T);
	/* no pending return (a kernel that puts them back itself, or no uprobes state): untouched */
	uint64_t same[3] = { 0x401000, T, 0 };
	struct kc_user_returns none = { 0 };

	assert_int_equal(stack_put_back_returns(same, 3, &none), 0);
	assert_true(same[1] == T);
}

/* kernel stacks that end at a kretprobe's trampoline (Linux before 5.14, KMD functions under
 * kprobes, one inside another): each goes on in the stack of the call it is inside, after that
 * stack's first frame, as deep as the stacks known; one without the trampoline is left alone */
static void test_stitch_kernel(void **state)
{
	(void)state;
	const uint64_t T = 0xffffffff81e68310ULL;
	/* null_handle_cmd, tail-called by null_queue_rq, called by blk_mq_try_issue_directly */
	uint64_t inner[8] = { 0xc0001100, T, 0 };
	uint64_t outer[CPU_STACK_DEPTH] = { 0xc0001000, 0x81001234, 0x81002345, 0 };
	const uint64_t *more[2] = { outer, NULL };

	assert_int_equal(stack_stitch_kernel(inner, 8, T, more, 2), 3);
	assert_true(inner[0] == 0xc0001100 && inner[1] == 0x81001234 && inner[2] == 0x81002345 &&
		    inner[3] == 0);
	/* three deep: the outer stack ends at the trampoline too, and goes on in the outermost */
	uint64_t deep[8] = { 0xc0001200, 0xc0001180, T, 0 };
	uint64_t mid[CPU_STACK_DEPTH] = { 0xc0001100, 0xc0001050, T, 0 };
	const uint64_t *chain[2] = { mid, outer };

	assert_int_equal(stack_stitch_kernel(deep, 8, T, chain, 2), 5);
	assert_true(deep[0] == 0xc0001200 && deep[1] == 0xc0001180 && deep[2] == 0xc0001050 &&
		    deep[3] == 0x81001234 && deep[4] == 0x81002345 && deep[5] == 0);
	/* no room for all: the outermost frames go */
	uint64_t small[3] = { 0xc0001100, T, 0 };
	uint64_t longer[CPU_STACK_DEPTH] = { 0xc0001000, 0x81001234, 0x81002345,
					     0x81003456, 0x81004567, 0 };
	const uint64_t *longmore[2] = { longer, NULL };

	assert_int_equal(stack_stitch_kernel(small, 3, T, longmore, 2), 3);
	assert_true(small[0] == 0xc0001100 && small[1] == 0x81001234 && small[2] == 0x81002345);
	/* no trampoline in it: untouched */
	uint64_t whole[4] = { 0xc0001100, 0x81001234, 0 };

	assert_int_equal(stack_stitch_kernel(whole, 4, T, more, 2), 2);
	assert_true(whole[1] == 0x81001234 && whole[2] == 0);
	/* no stack to go on in, or no trampoline known: as taken */
	uint64_t alone[4] = { 0xc0001100, T, 0 };
	const uint64_t *none[2] = { NULL, NULL };

	assert_int_equal(stack_stitch_kernel(alone, 4, T, none, 2), 2);
	assert_int_equal(stack_stitch_kernel(alone, 4, 0, more, 2), 2);
	assert_true(alone[1] == T);
}

/* kernel stacks through fentry/fexit: the trampolines go, and so does the second frame of the
 * function a trampoline called (its patched entry, then its body) */
static void test_trampoline_frames(void **state)
{
	(void)state;
	char path[] = "/tmp/topsprof-ksyms.XXXXXX";
	struct stackname out = { 0 };
	struct symbolizer s;

	temp_file(path, "ffffffff81001000 T do_syscall_64\n"
			"ffffffff81002000 T vfs_read\n"
			"ffffffff81003000 T schedule\n"
			"ffffffffc0001000 t brd_submit_bio\t[brd]\n"
			"ffffffffc0002000 t brd_do_bvec\t[brd]\n"
			"ffffffffc0100000 t bpf_trampoline_19327453651\t[bpf]\n"
			"ffffffffc0101000 t bpf_trampoline_19327453653\t[bpf]\n"
			"ffffffffc0102000 t bpf_prog_0123456789abcdef_kc_kmd_fentry\t[bpf]\n");
	symbolizer_init(&s, path);
	/* taken at brd_do_bvec's fentry, inside brd_submit_bio under fexit (leaf first) */
	const uint64_t at_entry[] = { 0xffffffffc0102040, 0xffffffffc0101080, 0xffffffffc0002009,
				      0xffffffffc0001100, 0xffffffffc0100090, 0xffffffffc0001009,
				      0xffffffff81002100, 0xffffffff81001100, 0 };

	assert_int_equal(stack_name_kernel(&s, at_entry, true, &out), 0);
	assert_string_equal(out.buf, "do_syscall_64_[k];vfs_read_[k];brd_submit_bio [brd]_[k];"
				     "brd_do_bvec [brd]_[k]");
	/* a wait inside the function under fexit: the trampoline in the middle only */
	const uint64_t waiting[] = { 0xffffffff81003010, 0xffffffffc0001100, 0xffffffffc0100090,
				     0xffffffffc0001009, 0xffffffff81001100, 0 };

	out.len = 0;
	assert_int_equal(stack_name_kernel(&s, waiting, false, &out), 0);
	assert_string_equal(out.buf, "do_syscall_64_[k];brd_submit_bio [brd]_[k];schedule_[k]");
	/* a trampoline being released, named for a program near it: the same */
	const uint64_t released[] = { 0xffffffff81003010, 0xffffffffc0001100, 0xffffffffc0102090,
				      0xffffffffc0001009, 0xffffffff81001100, 0 };

	out.len = 0;
	assert_int_equal(stack_name_kernel(&s, released, false, &out), 0);
	assert_string_equal(out.buf, "do_syscall_64_[k];brd_submit_bio [brd]_[k];schedule_[k]");
	/* recursion without a trampoline between stays */
	const uint64_t recursive[] = { 0xffffffffc0001100, 0xffffffffc0001200, 0 };

	out.len = 0;
	assert_int_equal(stack_name_kernel(&s, recursive, false, &out), 0);
	assert_string_equal(out.buf, "brd_submit_bio [brd]_[k];brd_submit_bio [brd]_[k]");
	symbolizer_free(&s);
	free(out.buf);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_find_synthetic),
		cmocka_unit_test(test_pie),
		cmocka_unit_test(test_minidebuginfo),
		cmocka_unit_test(test_build_id_debug_file),
		cmocka_unit_test(test_proccache),
		cmocka_unit_test(test_cxx_library),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_procmaps_parse),
		cmocka_unit_test(test_own_process),
		cmocka_unit_test(test_ksyms_synthetic),
		cmocka_unit_test(test_ksyms_real),
		cmocka_unit_test(test_symbolizer),
		cmocka_unit_test(test_cpu_profile),
		cmocka_unit_test(test_put_back_returns),
		cmocka_unit_test(test_stitch_kernel),
		cmocka_unit_test(test_trampoline_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
