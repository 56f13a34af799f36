// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The runtime registry (runtime.h, apitable.h) and discovery (discover.h) on the simulator's
 * files: every registered row once in api_table, its library's facts filled in; a launched
 * program's libraries found as ld.so would, --runtime-lib taken with its companions beside it,
 * an attached process's mapped or would-be libraries seen through /proc/PID/root. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "helpers.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "target/discover.h"
#include "target/elfinfo.h"
#include "target/runtime/runtime.h"

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

static const struct runtime *runtime_named(const char *name)
{
	for (unsigned r = 0; r < runtime_count(); r++)
		if (!strcmp(runtime_get(r)->name, name))
			return runtime_get(r);
	return NULL;
}

/* the found_lib of a soname, or NULL */
static const struct found_lib *lib_of(const struct discovery *d, const char *soname)
{
	for (unsigned i = 0; i < d->n; i++)
		if (!strcmp(d->libs[i].lib->soname, soname))
			return &d->libs[i];
	return NULL;
}

static const char *path_of(const struct discovery *d, const char *soname)
{
	const struct found_lib *f = lib_of(d, soname);

	assert_non_null(f);
	return f->t.path;
}

/* discover() under capture: returns its result, the text it printed in *out */
static int discover_quiet(struct discovery *d, const struct discover_req *q, const char **out)
{
	int rc;

	capture_start();
	rc = discover(d, q);
	*out = capture_end();
	return rc;
}

/* -- the registry ------------------------------------------------------------------------------ */

static void test_registry(void **state)
{
	const struct runtime *tops = runtime_named("tops");
	unsigned rows = 0;

	(void)state;
	assert_true(runtime_count() >= 1);
	assert_null(runtime_get(runtime_count()));
	assert_non_null(tops);
	assert_string_equal(tops->dirs, "/opt/tops/lib");
	/* the runtime proper first, then its companion */
	assert_true(tops->nlibs >= 2);
	assert_string_equal(tops->libs[0].soname, "libtopsrt.so.1");
	assert_int_equal(tops->libs[0].domain, DOM_RUNTIME);
	assert_string_equal(tops->libs[1].soname, "libtopstx.so.1");
	assert_int_equal(tops->libs[1].domain, DOM_TOPSTX);
	/* a probe symbol that tells a copy is one the library really defines */
	assert_true(elf_defines(sim("lib/libtopsrt.so.1"), tops->libs[0].probe_symbol));
	assert_true(elf_defines(sim("lib/libtopstx.so.1"), tops->libs[1].probe_symbol));
	assert_true(elf_defines(sim("bin/simpleElemwiseAdd_static"), tops->libs[0].probe_symbol));

	/* every row of every library of every runtime, once, with its library's facts */
	for (unsigned r = 0; r < runtime_count(); r++) {
		const struct runtime *rt = runtime_get(r);

		assert_non_null(rt->name);
		assert_non_null(rt->what);
		for (unsigned l = 0; l < rt->nlibs; l++) {
			const struct runtime_lib *lib = &rt->libs[l];

			for (unsigned f = 0; f < lib->nfns; f++) {
				const struct api_fn *want = &lib->fns[f];
				int i = api_find(want->name), copies = 0;

				if (i < 0)
					fail_msg("%s of %s is not in api_table", want->name,
						 lib->soname);
				for (unsigned k = 0; k < api_table_len; k++)
					copies += !strcmp(api_table[k].name, want->name);
				assert_int_equal(copies, 1);
				assert_int_equal(api_table[i].category, want->category);
				assert_int_equal(api_table[i].capture, want->capture);
				assert_int_equal(api_table[i].size_arg, want->size_arg);
				assert_int_equal(api_table[i].stream_arg, want->stream_arg);
				assert_int_equal(api_table[i].kind_fixed, want->kind_fixed);
				assert_int_equal(api_table[i].tx, want->tx);
				assert_int_equal(api_table[i].id_arg, want->id_arg);
				assert_int_equal(api_table[i].domain, lib->domain);
				assert_ptr_equal(api_table[i].lib, lib);
				rows++;
			}
		}
	}
	/* and nothing else */
	assert_int_equal(api_table_len, rows);
	assert_true(api_table_len <= API_MAX_FNS);
	for (unsigned i = 0; i < api_table_len; i++)
		assert_int_equal(api_find(api_table[i].name), (int)i);
	assert_int_equal(api_find("topsNoSuchFunction"), -1);
	assert_int_equal(api_find(""), -1);
}

/* a destroyed stream's handle may come back: only the runtime's destroy call says so */
static void test_destroys_stream(void **state)
{
	int destroy = api_find("topsStreamDestroy");
	unsigned listed = 0, marked = 0;

	(void)state;
	assert_true(destroy >= 0);
	assert_true(api_table[destroy].destroys_stream);
	assert_false(api_table[api_find("topsStreamCreate")].destroys_stream);
	assert_false(api_table[api_find("topsEventDestroy")].destroys_stream);
	assert_false(api_table[api_find("topstxDomainDestroy")].destroys_stream);
	for (unsigned r = 0; r < runtime_count(); r++)
		for (const char *const *n = runtime_get(r)->stream_destroy; n && *n; n++) {
			assert_true(api_find(*n) >= 0);
			assert_true(api_table[api_find(*n)].destroys_stream);
			listed++;
		}
	for (unsigned i = 0; i < api_table_len; i++)
		marked += api_table[i].destroys_stream;
	assert_int_equal(marked, listed);
	assert_int_equal(marked, 1);
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(api_domain_name(DOM_RUNTIME), "runtime");
	assert_string_equal(api_domain_name(DOM_TOPSTX), "topstx");
	assert_string_equal(api_category_name(CAT_LAUNCH), "launch");
	assert_string_equal(api_category_name(CAT_MEMCPY), "memcpy");
	assert_string_equal(api_category_name(CAT_MEMSET), "memset");
	assert_string_equal(api_category_name(CAT_SYNC), "sync");
	assert_string_equal(api_category_name(CAT_ALLOC), "alloc");
	assert_string_equal(api_category_name(CAT_OTHER), "other");
	assert_string_equal(api_category_name((enum api_category)(CAT_OTHER + 1)), "?");
}

/* -- discovery of a launched program ----------------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	/* the search must be the program's own, not this shell's */
	unsetenv("LD_LIBRARY_PATH");
	/* a hung child fails the test instead of hanging it */
	alarm(60);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	return 0;
}

/* every runtime's libraries are listed, in table order, with their facts */
static void check_listed(const struct discovery *d)
{
	unsigned k = 0;

	for (unsigned r = 0; r < runtime_count(); r++)
		for (unsigned l = 0; l < runtime_get(r)->nlibs; l++, k++) {
			assert_true(k < d->n);
			assert_ptr_equal(d->libs[k].rt, runtime_get(r));
			assert_ptr_equal(d->libs[k].lib, &runtime_get(r)->libs[l]);
			assert_string_equal(d->libs[k].t.soname, runtime_get(r)->libs[l].soname);
		}
	assert_int_equal(d->n, k);
}

static void test_launch(void **state)
{
	struct discover_req q = { .mode = DISCOVER_LAUNCH, .want_runtime = true };
	struct discovery d;
	const char *out;

	(void)state;
	/* a dependency through RUNPATH $ORIGIN/../lib; topstx where a dlopen would find it */
	q.argv0 = sim("bin/simpleElemwiseAdd");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(out, "");
	check_listed(&d);
	assert_string_equal(d.exe, sim("bin/simpleElemwiseAdd"));
	assert_true(ends_with(path_of(&d, "libtopsrt.so.1"), "/bin/../lib/libtopsrt.so.1"));
	assert_false(lib_of(&d, "libtopsrt.so.1")->t.in_executable);
	assert_true(ends_with(path_of(&d, "libtopstx.so.1"), "/bin/../lib/libtopstx.so.1"));

	/* linked in: the executable is the file to probe */
	q.argv0 = sim("bin/simpleElemwiseAdd_static");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	check_listed(&d);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("bin/simpleElemwiseAdd_static"));
	assert_true(lib_of(&d, "libtopsrt.so.1")->t.in_executable);

	/* dlopen()ed by name later: found by the search the loader would make */
	q.argv0 = sim("bin/dlopen_app");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_true(ends_with(path_of(&d, "libtopsrt.so.1"), "/bin/../lib/libtopsrt.so.1"));
	/* the environment's LD_LIBRARY_PATH is the program's: it comes before RUNPATH */
	setenv("LD_LIBRARY_PATH", sim("lib-cet"), 1);
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	unsetenv("LD_LIBRARY_PATH");
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib-cet/libtopsrt.so.1"));

	/* found in PATH when argv0 has no slash */
	q.argv0 = "true";
	q.want_runtime = false;
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_true(ends_with(d.exe, "/true"));
}

static void test_launch_no_runtime(void **state)
{
	struct discover_req q = { .mode = DISCOVER_LAUNCH, .argv0 = "/bin/true" };
	char dir[] = "/tmp/test_target.XXXXXX", cmd[PATH_MAX];
	struct discovery d;
	const char *out;

	(void)state;
	/* not asked for: a run without the runtime */
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(out, "");
	check_listed(&d);
	for (unsigned i = 0; i < d.n; i++) {
		assert_string_equal(d.libs[i].t.path, "");
		assert_false(d.libs[i].t.in_executable);
	}
	/* asked for: one error line that names the runtime, the program and the way out */
	q.want_runtime = true;
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	assert_true(starts_with(out, "topsprof: error: cannot find the GCU runtime (libtopsrt.so"));
	assert_non_null(strstr(out, "'/bin/true'"));
	assert_non_null(strstr(out, "/etc/ld.so.cache"));
	assert_non_null(strstr(out, "--runtime-lib PATH"));
	assert_null(strstr(out, "libtopstx"));
	/* a sampler runs too: said in one warning, and the run goes on without the runtime */
	q.runtime_optional = true;
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_int_equal(lines(out), 1);
	assert_true(starts_with(out, "topsprof: warning: cannot find the GCU runtime"));
	assert_non_null(strstr(out, "its calls are not traced"));
	assert_non_null(strstr(out, "--runtime-lib PATH"));
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), "");
	q.runtime_optional = false;
	/* topstx alone (found where a dlopen would look) is not the runtime */
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/'", sim("lib/libtopstx.so.1"), dir);
	assert_int_equal(system(cmd), 0);
	setenv("LD_LIBRARY_PATH", dir, 1);
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	q.want_runtime = false;
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	unsetenv("LD_LIBRARY_PATH");
	snprintf(cmd, sizeof(cmd), "%s/libtopstx.so.1", dir);
	assert_string_equal(path_of(&d, "libtopstx.so.1"), cmd);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), "");
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_launch_missing_program(void **state)
{
	struct discover_req q = { .mode = DISCOVER_LAUNCH, .argv0 = "no-such-program-tpx" };
	struct discovery d;
	const char *out;

	(void)state;
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	assert_string_equal(
		out, "topsprof: error: cannot run 'no-such-program-tpx': not found (looked in "
		     "PATH)\n");
	q.argv0 = "/nonexistent-dir/program";
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	assert_true(starts_with(out, "topsprof: error: cannot run '/nonexistent-dir/program': "));
}

/* --runtime-lib: the file given is the runtime; its companions are taken from beside it only
 * when not found otherwise, and only when there */
static void test_runtime_lib(void **state)
{
	struct discover_req q = { .mode = DISCOVER_LAUNCH, .want_runtime = true };
	char dir[] = "/tmp/test_target.XXXXXX", mine[PATH_MAX], cmd[2 * PATH_MAX], cwd[PATH_MAX];
	struct discovery d;
	const char *out;

	(void)state;
	/* lib-cet has no libtopstx: nothing beside it */
	q.argv0 = "/bin/true";
	q.runtime_lib = sim("lib-cet/libtopsrt.so.1");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(out, "");
	check_listed(&d);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib-cet/libtopsrt.so.1"));
	assert_string_equal(path_of(&d, "libtopstx.so.1"), "");
	/* lib has: taken from beside it */
	q.runtime_lib = sim("lib/libtopsrt.so.1");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib/libtopsrt.so.1"));
	assert_string_equal(path_of(&d, "libtopstx.so.1"), sim("lib/libtopstx.so.1"));
	/* a program's own libtopstx (RUNPATH) stays; the named runtime replaces its own */
	q.argv0 = sim("bin/simpleElemwiseAdd");
	q.runtime_lib = sim("lib-cet/libtopsrt.so.1");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib-cet/libtopsrt.so.1"));
	assert_true(ends_with(path_of(&d, "libtopstx.so.1"), "/bin/../lib/libtopstx.so.1"));
	/* a linked-in copy is no longer the one probed */
	q.argv0 = sim("bin/simpleElemwiseAdd_static");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib-cet/libtopsrt.so.1"));
	assert_false(lib_of(&d, "libtopsrt.so.1")->t.in_executable);
	/* a file of another name is the first runtime's library */
	assert_non_null(mkdtemp(dir));
	snprintf(mine, sizeof(mine), "%s/vendor-rt.so", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", sim("lib/libtopsrt.so.1"), mine);
	assert_int_equal(system(cmd), 0);
	q.argv0 = "/bin/true";
	q.runtime_lib = mine;
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(d.libs[0].t.path, mine);
	assert_string_equal(path_of(&d, "libtopstx.so.1"), "");
	/* with no directory part: beside it is the current directory */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(sim("lib")), 0);
	q.runtime_lib = "libtopsrt.so.1";
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), "libtopsrt.so.1");
	assert_string_equal(path_of(&d, "libtopstx.so.1"), "./libtopstx.so.1");
	assert_int_equal(chdir(cwd), 0);
	/* a file that is not there: one error line */
	snprintf(mine, sizeof(mine), "%s/missing.so", dir);
	q.runtime_lib = mine;
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	assert_true(starts_with(out, "topsprof: error: --runtime-lib: "));
	assert_non_null(strstr(out, "missing.so: No such file or directory"));
	/* the whole host with --runtime-lib: the file named, not a scan */
	q.mode = DISCOVER_HOST;
	q.runtime_lib = sim("lib/libtopsrt.so.1");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), sim("lib/libtopsrt.so.1"));
	assert_string_equal(path_of(&d, "libtopstx.so.1"), sim("lib/libtopstx.so.1"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* -- discovery of a running process ------------------------------------------------------------ */

/* the children a test started: a failed assertion leaves the test at once, its teardown ends
 * them (and they die with this process) */
static pid_t children[4];

static void started(pid_t pid)
{
	for (unsigned i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (!children[i]) {
			children[i] = pid;
			return;
		}
	fail_msg("too many children");
}

static void end_child(pid_t pid)
{
	int status;

	for (unsigned i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (children[i] == pid)
			children[i] = 0;
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* after every test: no child and no LD_LIBRARY_PATH of a test that failed is left */
static int end_children(void **state)
{
	(void)state;
	unsetenv("LD_LIBRARY_PATH");
	for (unsigned i = 0; i < sizeof(children) / sizeof(children[0]); i++)
		if (children[i])
			end_child(children[i]);
	return 0;
}

/* a child of this program that has file mapped (and this process not), blocked until killed */
static pid_t child_mapping(const char *file)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), p[2];
	struct stat st;
	void *map;
	pid_t pid;
	char c;

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		(void)!write(p[1], "r", 1);
		pause();
		_exit(0);
	}
	started(pid);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);
	close(p[0]);
	munmap(map, (size_t)st.st_size);
	return pid;
}

static void test_attach_mapped(void **state)
{
	struct discover_req q = { .mode = DISCOVER_ATTACH, .want_runtime = true };
	char real[PATH_MAX], want[PATH_MAX + 64], self[PATH_MAX];
	struct discovery d;
	const char *out;

	(void)state;
	assert_non_null(realpath(sim("lib-cet/libtopsrt.so.1"), real));
	assert_non_null(realpath("/proc/self/exe", self));
	q.pid = child_mapping(real);
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(out, "");
	check_listed(&d);
	/* the file it maps, as seen in its own mount namespace */
	snprintf(want, sizeof(want), "/proc/%d/root%s", (int)q.pid, real);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), want);
	assert_string_equal(d.exe, self);
	end_child(q.pid);
}

/* the runtime replaced on disk while the process runs: probed through the file it maps */
static void test_attach_deleted(void **state)
{
	struct discover_req q = { .mode = DISCOVER_ATTACH, .want_runtime = true };
	char dir[] = "/tmp/test_target.XXXXXX", copy[PATH_MAX], cmd[PATH_MAX * 2], want[64];
	const char *names[1] = { "topsLaunchKernel" }, *got;
	struct discovery d;
	const char *out;
	uint64_t off;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/libtopsrt.so.1", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", sim("lib-cet/libtopsrt.so.1"), copy);
	assert_int_equal(system(cmd), 0);
	q.pid = child_mapping(copy);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	got = path_of(&d, "libtopsrt.so.1");
	snprintf(want, sizeof(want), "/proc/%d/map_files/", (int)q.pid);
	if (strncmp(got, want, strlen(want)) || strstr(got, "deleted"))
		fail_msg("the deleted runtime as %s", got);
	/* a file its symbols are read from, as the probes will be */
	assert_int_equal(elf_func_offsets(got, names, 1, &off), 1);
	end_child(q.pid);
}

/* program run with one argument, once its exec is done */
static pid_t spawn(const char *program, const char *arg)
{
	char real[PATH_MAX], exe[PATH_MAX], link[64];
	struct timespec ms = { 0, 1000000 };
	ssize_t k;
	pid_t pid;

	assert_non_null(realpath(program, real));
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execl(real, program, arg, (char *)NULL);
		_exit(127);
	}
	started(pid);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 5000; i++) {
		k = readlink(link, exe, sizeof(exe) - 1);
		exe[k > 0 ? k : 0] = '\0';
		if (!strcmp(exe, real))
			return pid;
		nanosleep(&ms, NULL);
	}
	fail_msg("%s did not start", program);
	return -1;
}

/* a process that will dlopen() the runtime later: where its loader would find it */
static void test_attach_not_yet_mapped(void **state)
{
	struct discover_req q = { .mode = DISCOVER_ATTACH, .want_runtime = true };
	char real[PATH_MAX], want[PATH_MAX + 64];
	struct discovery d;
	const char *out;

	(void)state;
	assert_non_null(realpath(sim("bin/dlopen_app"), real));
	/* it sleeps a minute before loading anything */
	q.pid = spawn(real, "60000");
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(d.exe, real);
	snprintf(want, sizeof(want), "/proc/%d/root/", (int)q.pid);
	assert_true(starts_with(path_of(&d, "libtopsrt.so.1"), want));
	assert_true(ends_with(path_of(&d, "libtopsrt.so.1"), "/bin/../lib/libtopsrt.so.1"));
	assert_false(lib_of(&d, "libtopsrt.so.1")->t.in_executable);
	end_child(q.pid);
}

static void test_attach_missing(void **state)
{
	struct discover_req q = { .mode = DISCOVER_ATTACH };
	struct discovery d;
	const char *out;
	char want[128];
	int status;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	/* reaped: no such process any more */
	q.pid = pid;
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	snprintf(want, sizeof(want), "topsprof: error: --attach-pid %d: no such process\n",
		 (int)pid);
	assert_string_equal(out, want);
}

/* a process without the runtime: an error only when the runtime is needed */
static void test_attach_no_runtime(void **state)
{
	struct discover_req q = { .mode = DISCOVER_ATTACH };
	struct discovery d;
	const char *out;
	char want[64];
	pid_t pid;

	(void)state;
	/* sleep maps nothing of the runtime and needs none (this program has it linked in) */
	pid = spawn("/bin/sleep", "60");
	q.pid = pid;
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	assert_string_equal(path_of(&d, "libtopsrt.so.1"), "");
	q.want_runtime = true;
	assert_int_equal(discover_quiet(&d, &q, &out), 1);
	assert_int_equal(lines(out), 1);
	snprintf(want, sizeof(want), "that 'process %d' uses", (int)pid);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "its maps and its program's search path, /opt/tops/lib"));
	end_child(pid);
}

/* the whole host: the runtime a running process maps (never this one's own maps) */
static void test_host(void **state)
{
	struct discover_req q = { .mode = DISCOVER_HOST, .want_runtime = true };
	char real[PATH_MAX];
	struct discovery d;
	const char *out, *p;
	pid_t pid;

	(void)state;
	assert_non_null(realpath(sim("lib-cet/libtopsrt.so.1"), real));
	pid = child_mapping(real);
	assert_int_equal(discover_quiet(&d, &q, &out), 0);
	check_listed(&d);
	/* this one's, or another process's copy of the runtime: a mapped file either way */
	p = path_of(&d, "libtopsrt.so.1");
	assert_true(starts_with(p, "/proc/"));
	assert_non_null(strstr(p, "/root/"));
	assert_true(starts_with(strrchr(p, '/') + 1, "libtopsrt.so"));
	end_child(pid);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_registry, end_children),
		cmocka_unit_test_teardown(test_destroys_stream, end_children),
		cmocka_unit_test_teardown(test_names, end_children),
		cmocka_unit_test_teardown(test_launch, end_children),
		cmocka_unit_test_teardown(test_launch_no_runtime, end_children),
		cmocka_unit_test_teardown(test_launch_missing_program, end_children),
		cmocka_unit_test_teardown(test_runtime_lib, end_children),
		cmocka_unit_test_teardown(test_attach_mapped, end_children),
		cmocka_unit_test_teardown(test_attach_deleted, end_children),
		cmocka_unit_test_teardown(test_attach_not_yet_mapped, end_children),
		cmocka_unit_test_teardown(test_attach_missing, end_children),
		cmocka_unit_test_teardown(test_attach_no_runtime, end_children),
		cmocka_unit_test_teardown(test_host, end_children),
	};

	return cmocka_run_group_tests_name("target", tests, setup, teardown);
}
