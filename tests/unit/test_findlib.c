// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Symbols, dependencies and the runtime search, on the simulator's real files (SIM_DIR) and on
 * a synthetic ld.so.cache under a fake root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target/runtime/apitable.h"
#include "target/elfinfo.h"
#include "target/findlib.h"
#include "collect/tracer.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* every offset found points at its function: in the CET build, at an endbr64 */
static void test_offsets(void **state)
{
	const char *names[64];
	uint64_t offs[64];
	int n = 0;
	unsigned char insn[4];
	int fd;

	(void)state;
	for (unsigned f = 0; f < api_table_len; f++)
		if (api_table[f].domain == DOM_RUNTIME)
			names[n++] = api_table[f].name;
	assert_int_equal(elf_func_offsets(sim("lib-cet/libtopsrt.so.1"), names, n, offs), n);
	fd = open(sim("lib-cet/libtopsrt.so.1"), O_RDONLY);
	assert_true(fd >= 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(pread(fd, insn, 4, (off_t)offs[i]), 4);
		if (memcmp(insn, "\xf3\x0f\x1e\xfa", 4))
			fail_msg("%s at 0x%llx is not an endbr64", names[i],
				 (unsigned long long)offs[i]);
		assert_int_equal(probe_offset(sim("lib-cet/libtopsrt.so.1"), offs[i]), offs[i] + 4);
	}
	close(fd);
	/* the plain build: probed where the function begins */
	assert_int_equal(elf_func_offsets(sim("lib/libtopsrt.so.1"), names, n, offs), n);
	for (int i = 0; i < n; i++)
		assert_int_equal(probe_offset(sim("lib/libtopsrt.so.1"), offs[i]), offs[i]);
	/* not there, and not an ELF file */
	names[0] = "noSuchFunction";
	assert_int_equal(elf_func_offsets(sim("lib/libtopsrt.so.1"), names, 1, offs), 0);
	assert_int_equal(offs[0], 0);
	assert_true(elf_func_offsets(sim("bin/ctypes_app.py"), names, 1, offs) < 0);
}

/* the table is the API: every function of the libraries is traced, and nothing else */
static void test_table_matches_libraries(void **state)
{
	const char *names[1];
	uint64_t off;

	(void)state;
	for (unsigned f = 0; f < api_table_len; f++) {
		const char *lib = api_table[f].domain == DOM_RUNTIME ? "lib/libtopsrt.so.1"
								     : "lib/libtopstx.so.1";

		names[0] = api_table[f].name;
		if (elf_func_offsets(sim(lib), names, 1, &off) != 1)
			fail_msg("%s is not in %s", api_table[f].name, lib);
		assert_int_equal(api_find(api_table[f].name), (int)f);
	}
	assert_int_equal(api_find("topsNoSuch"), -1);
	assert_true(api_table_len < 256);
	/* and every function the libraries export is in the table */
	for (int l = 0; l < 2; l++) {
		char cmd[8300], name[256];
		FILE *p;
		int n = 0;

		snprintf(
			cmd, sizeof(cmd),
			"nm -D --defined-only %s | awk '$2 == \"T\" { sub(/@.*/, \"\", $3); print $3 }'",
			sim(l ? "lib/libtopstx.so.1" : "lib/libtopsrt.so.1"));
		p = popen(cmd, "r");
		assert_non_null(p);
		while (fscanf(p, "%255s", name) == 1) {
			if (api_find(name) < 0)
				fail_msg("%s is exported but not traced", name);
			n++;
		}
		assert_int_equal(pclose(p), 0);
		assert_true(n > 10);
	}
}

static void test_deps(void **state)
{
	struct elf_deps d;
	bool rt = false;

	(void)state;
	assert_int_equal(elf_read_deps(sim("bin/simpleElemwiseAdd"), &d), 0);
	for (int i = 0; i < d.nneeded; i++)
		rt |= !strcmp(d.needed[i], "libtopsrt.so.1");
	assert_true(rt);
	assert_non_null(d.runpath);
	assert_string_equal(d.runpath, "$ORIGIN/../lib");
	assert_non_null(d.interp);
	elf_free_deps(&d);
	assert_true(elf_defines(sim("bin/simpleElemwiseAdd_static"), "topsLaunchKernel"));
	assert_false(elf_defines(sim("bin/simpleElemwiseAdd"), "topsLaunchKernel"));
	assert_int_equal(elf_read_deps(sim("bin/ctypes_app.py"), &d), -ENOEXEC);
}

static void targets(struct findlib_target t[2])
{
	t[0] = (struct findlib_target){ .soname = "libtopsrt.so.1",
					.probe_symbol = "topsLaunchKernel",
					.vendor_dirs = "/opt/tops/lib" };
	t[1] = (struct findlib_target){ .soname = "libtopstx.so.1",
					.probe_symbol = "topstxRangePush",
					.vendor_dirs = "/opt/tops/lib" };
}

static void test_find(void **state)
{
	struct findlib_ctx c = { .root = "" };
	struct findlib_target t[2];

	(void)state;
	/* a dependency through RUNPATH $ORIGIN/../lib; topstx is not needed but would be found */
	targets(t);
	assert_int_equal(findlib_find(&c, sim("bin/simpleElemwiseAdd"), t, 2), 2);
	assert_true(ends_with(t[0].path, "/bin/../lib/libtopsrt.so.1"));
	assert_false(t[0].in_executable);
	assert_true(ends_with(t[1].path, "/bin/../lib/libtopstx.so.1"));
	/* linked in */
	targets(t);
	assert_true(findlib_find(&c, sim("bin/simpleElemwiseAdd_static"), t, 2) >= 1);
	assert_true(t[0].in_executable);
	assert_string_equal(t[0].path, sim("bin/simpleElemwiseAdd_static"));
	/* dlopen()ed later: where dlopen by name would look; LD_LIBRARY_PATH comes before RUNPATH */
	targets(t);
	assert_true(findlib_find(&c, sim("bin/dlopen_app"), t, 2) >= 1);
	assert_true(ends_with(t[0].path, "/bin/../lib/libtopsrt.so.1"));
	c.ld_library_path = sim("lib-cet");
	targets(t);
	assert_true(findlib_find(&c, sim("bin/dlopen_app"), t, 2) >= 1);
	assert_string_equal(t[0].path, sim("lib-cet/libtopsrt.so.1"));
	/* nowhere: the places looked at are named */
	c.ld_library_path = NULL;
	targets(t);
	assert_int_equal(findlib_find(&c, "/bin/true", t, 1), 0);
	assert_string_equal(t[0].path, "");
	assert_non_null(strstr(c.looked, "/etc/ld.so.cache"));
	assert_non_null(strstr(c.looked, "/usr/lib/x86_64-linux-gnu"));
}

static void put_u32(FILE *f, uint32_t v)
{
	fwrite(&v, 4, 1, f);
}

/* a root holding an ld.so.cache that maps libtopsrt.so.1 to /opt/x/libtopsrt.so.1 */
static void test_ldcache(void **state)
{
	char root[] = "/tmp/topsprof-root.XXXXXX", path[4096], out[4096], cmd[9000];
	const char *key = "libtopsrt.so.1", *val = "/opt/x/libtopsrt.so.1";
	uint32_t hdr_len = 48, entries = 24, k_off, v_off;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/etc", root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/opt/x", root);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && cp %s %s/", path, sim("lib/libtopsrt.so.1"),
		 path);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", root);
	f = fopen(path, "wb");
	assert_non_null(f);
	k_off = hdr_len + entries;
	v_off = k_off + (uint32_t)strlen(key) + 1;
	fwrite("glibc-ld.so.cache1.1", 20, 1, f);
	put_u32(f, 1);					       /* nlibs */
	put_u32(f, (uint32_t)(strlen(key) + strlen(val) + 2)); /* len_strings */
	put_u32(f, 0);					       /* flags, padding */
	put_u32(f, 0);					       /* extension offset */
	put_u32(f, 0);
	put_u32(f, 0);
	put_u32(f, 0);
	put_u32(f, 0x0303); /* ELF libc6, x86-64 */
	put_u32(f, k_off);
	put_u32(f, v_off);
	put_u32(f, 0);
	put_u32(f, 0);
	put_u32(f, 0);
	fwrite(key, strlen(key) + 1, 1, f);
	fwrite(val, strlen(val) + 1, 1, f);
	fclose(f);
	assert_int_equal(findlib_ldcache(root, key, out, sizeof(out)), 0);
	assert_string_equal(out, val);
	assert_int_equal(findlib_ldcache(root, "libnothere.so", out, sizeof(out)), -ENOENT);
	assert_true(findlib_ldcache("/nonexistent-root", key, out, sizeof(out)) < 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	assert_int_equal(system(cmd), 0);
}

static void test_resolve_exe(void **state)
{
	char out[4096];

	(void)state;
	assert_int_equal(
		findlib_resolve_exe("true", "/nonexistent:/bin:/usr/bin", out, sizeof(out)), 0);
	assert_true(ends_with(out, "/true"));
	assert_int_equal(findlib_resolve_exe("no-such-program-x", "/bin", out, sizeof(out)),
			 -ENOENT);
	assert_int_equal(findlib_resolve_exe("/bin/true", NULL, out, sizeof(out)), 0);
	assert_string_equal(out, "/bin/true");
	assert_true(findlib_resolve_exe("./no-such", NULL, out, sizeof(out)) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offsets), cmocka_unit_test(test_table_matches_libraries),
		cmocka_unit_test(test_deps),	cmocka_unit_test(test_find),
		cmocka_unit_test(test_ldcache), cmocka_unit_test(test_resolve_exe),
	};

	return cmocka_run_group_tests_name("findlib", tests, NULL, NULL);
}
