// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* The collectors driven together (collection.h) on this kernel, probing the simulator's runtime
 * as discovered for its simpleElemwiseAdd: only the always-wanted ones open, the process
 * collector first (its tracker and map shared), their descriptors watched, calls of a followed
 * child collected only while collecting, and everything released by close, also after a failed
 * open (ASan sees a leak). Needs root (BPF); skips loudly without it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "helpers.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collect/collection.h"
#include "collect/proctree.h"
#include "collect/umulti.h"
#include "lib/log.h"
#include "model/domain.h"
#include "sim_env.h"

static struct discovery found;
static bool can_bpf;

/* what a run asking for the API calls only would want */
static struct collect_settings settings(bool collecting)
{
	return (struct collect_settings){
		.launched = true,
		.collecting = collecting,
		.trace_domains = TRACE_DEFAULT,
		.max_str_bytes = 4096,
		.buffer_size = 8u << 20,
		.found = &found,
	};
}

static int setup(void **state)
{
	struct discover_req q = { .mode = DISCOVER_LAUNCH, .want_runtime = true };

	(void)state;
	libbpf_set_print(log_libbpf);
	/* loading BPF is root's here: without it every test says it skipped */
	can_bpf = !geteuid();
	if (!can_bpf)
		fprintf(stderr, "SKIP collection: not root, BPF cannot be loaded\n");
	q.argv0 = sim("bin/simpleElemwiseAdd");
	if (discover(&found, &q))
		return -1;
	/* the app's simulated device, private to this test */
	alarm(120);
	return sim_env_setup(NULL);
}

static int teardown(void **state)
{
	(void)state;
	alarm(0);
	return sim_env_teardown();
}

/* the descriptors an epoll set watches, from its fdinfo */
static int watched(int ep)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ep);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "tfd:", 4);
	fclose(f);
	return n;
}

static uint32_t map_id(int fd)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);

	assert_int_equal(bpf_obj_get_info_by_fd(fd, &info, &len), 0);
	return info.id;
}

static void test_open_close(void **state)
{
	struct collect_settings s = settings(true);
	struct epoll_event ev = { .events = EPOLLIN };
	struct collection c;
	struct model m;
	int ep, rc, map_fd;

	(void)state;
	if (!can_bpf)
		skip();
	model_init(&m);
	rc = collection_open(&c, &s, &m, NULL, NULL);
	if (rc) {
		collection_close(&c);
		fail_msg("collection_open failed");
	}
	/* the process and API collectors only: nothing else asked for */
	assert_true(c.open[0]);
	assert_true(c.open[1]);
	for (unsigned i = 2; i < COLLECTORS_MAX; i++)
		assert_false(c.open[i]);
	/* the map of the processes followed was made first, and the process collector's object
	 * was loaded with it (the collectors open at once) */
	assert_non_null(c.env.pt);
	assert_true(c.env.pid_map_fd > 2);
	assert_int_equal(map_id(c.env.pid_map_fd), map_id(proctree_map_fd(c.env.pt)));
	assert_ptr_equal(c.env.m, &m);
	assert_ptr_equal(c.env.set, &s);
	assert_true(c.env.collecting);

	/* one descriptor each: the tracker's and the API ring's */
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	collection_watch(&c, ep, 7);
	assert_int_equal(watched(ep), 2);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, proctree_epoll_fd(c.env.pt), &ev), -1);
	assert_int_equal(errno, EEXIST);
	close(ep);

	/* every operation on what is open, with nothing to collect */
	collection_begin(&c);
	collection_set_collecting(&c, false);
	assert_false(c.env.collecting);
	collection_set_collecting(&c, true);
	assert_true(c.env.collecting);
	collection_poll(&c);
	collection_clear(&c);
	collection_finish(&c);
	collection_report(&c);
	assert_int_equal(m.ncalls, 0);
	assert_int_equal(model_lost_total(&m), 0);

	map_fd = c.env.pid_map_fd;
	collection_close(&c);
	for (unsigned i = 0; i < COLLECTORS_MAX; i++)
		assert_false(c.open[i]);
	assert_null(c.env.pt);
	assert_int_equal(c.env.pid_map_fd, -1);
	assert_int_equal(fcntl(map_fd, F_GETFD), -1);
	/* twice is nothing */
	collection_close(&c);
	model_free(&m);
}

/* simpleElemwiseAdd as a child of this process (followed), to its end; polled as a run does, and
 * once more after its end, or only the process tracker (scoped probes hold a new process until
 * topsprof hears of it) */
static pid_t run_app(struct collection *c, int ep, bool poll)
{
	struct epoll_event ev;
	struct timespec t0, t;
	int status = 0, out;
	pid_t pid = fork(), done = 0;

	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		out = open("/dev/null", O_WRONLY);
		dup2(out, 1);
		execl(sim("bin/simpleElemwiseAdd"), "simpleElemwiseAdd", (char *)NULL);
		_exit(127);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		if (epoll_wait(ep, &ev, 1, 10) > 0)
			assert_int_equal(ev.data.u32, 7);
		if (poll)
			collection_poll(c);
		else /* the processes only: a new one is held until its probes are in */
			proctree_poll(c->env.pt, 0);
		done = waitpid(pid, &status, WNOHANG);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (!done && t.tv_sec - t0.tv_sec < 30);
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("simpleElemwiseAdd did not end");
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (poll)
		collection_poll(c);
	return pid;
}

static size_t launches(const struct model *m)
{
	int fn = api_find("topsLaunchKernel");
	size_t n = 0;

	for (size_t i = 0; i < m->ncalls; i++)
		n += model_call(m, i).fn == (uint32_t)fn &&
		     model_call(m, i).pid != (uint32_t)getpid();
	return n;
}

/* calls of a followed process come in while collecting, and only then */
/* a collection of s into m, following this process (so its children: the apps it runs), its
 * descriptors in a new epoll set, begun as a run begins; the epoll set */
static int follow_self(struct collection *c, const struct collect_settings *s, struct model *m)
{
	int ep;

	if (collection_open(c, s, m, NULL, NULL)) {
		collection_close(c);
		fail_msg("collection_open failed");
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	collection_watch(c, ep, 7);
	assert_int_equal(proctree_add(c->env.pt, getpid()), 0);
	assert_int_equal(collection_follow(c, getpid()), 0);
	collection_begin(c);
	return ep;
}

static void test_collects(void **state)
{
	struct collect_settings s = settings(false);
	const struct proc_info *child = NULL;
	struct collection c;
	struct model m;
	pid_t pid;
	int ep;

	(void)state;
	if (!can_bpf)
		skip();
	model_init(&m);
	ep = follow_self(&c, &s, &m);
	assert_false(c.env.collecting);

	run_app(&c, ep, true);
	collection_finish(&c);
	assert_int_equal(launches(&m), 0);

	/* its three launches, read by the polls */
	collection_set_collecting(&c, true);
	run_app(&c, ep, true);
	assert_int_equal(launches(&m), 3);
	/* not polled: what is left is read at the finish */
	pid = run_app(&c, ep, false);
	assert_int_equal(launches(&m), 3);
	collection_finish(&c);
	assert_int_equal(launches(&m), 6);
	collection_report(&c);
	/* the child was followed to its end */
	for (size_t i = 0; i < m.nprocs; i++)
		if (m.procs[i].pid == (uint32_t)pid)
			child = &m.procs[i];
	assert_non_null(child);
	assert_true(child->exited);
	assert_int_equal(child->exit_code, 0);
	assert_string_equal(child->comm, "simpleElemwiseA");
	close(ep);
	collection_close(&c);
	model_free(&m);
}

/* statistics mode: the counts reach the model at the report; a clear forgets them */
static void test_stats_clear(void **state)
{
	struct collect_settings s = settings(true);
	int fn = api_find("topsLaunchKernel");
	struct collection c;
	struct model m, after;
	int ep;

	(void)state;
	if (!can_bpf)
		skip();
	s.stats_mode = true;
	model_init(&m);
	model_init(&after);
	ep = follow_self(&c, &s, &m);
	run_app(&c, ep, true);
	collection_finish(&c);
	/* no call streamed, nothing counted yet */
	assert_int_equal(launches(&m), 0);
	assert_int_equal(m.stats[fn].count, 0);
	collection_report(&c);
	/* the app launches three kernels */
	assert_int_equal(m.stats[fn].count, 3);
	/* cleared: a later report has none of them */
	collection_clear(&c);
	c.env.m = &after;
	collection_report(&c);
	assert_int_equal(after.stats[fn].count, 0);
	close(ep);
	collection_close(&c);
	model_free(&after);
	model_free(&m);
}

/* a failed open says why in one line; close releases what was opened (ASan: no leak) */
static void test_failed_open(void **state)
{
	struct collect_settings s = settings(true);
	struct discovery bad = found;
	struct collection c;
	struct model m;
	const char *text;
	int rc;

	(void)state;
	if (!can_bpf)
		skip();
	/* a file that has none of the runtime's functions */
	snprintf(bad.libs[0].t.path, sizeof(bad.libs[0].t.path), "/bin/true");
	s.found = &bad;
	model_init(&m);
	capture_start();
	rc = collection_open(&c, &s, &m, NULL, NULL);
	text = capture_end();
	assert_int_equal(rc, 1);
	assert_string_equal(text,
			    "topsprof: error: /bin/true has none of the GCU runtime's functions\n");
	/* the process collector got as far as opening, the API collector was being opened */
	assert_true(c.open[0]);
	assert_true(c.open[1]);
	collection_close(&c);
	for (unsigned i = 0; i < COLLECTORS_MAX; i++)
		assert_false(c.open[i]);
	assert_null(c.env.pt);
	model_free(&m);

	/* the API tracer's object refused (a ring buffer of 4 GB: 0 to the map): its
	 * handle is half-made, and the end of the run switching collection off must not reach it (it
	 * did, and topsprof crashed where the kernel refused the object: Debian's 5.10) */
	s = settings(true);
	s.buffer_size = 1ULL << 32;
	model_init(&m);
	capture_start();
	rc = collection_open(&c, &s, &m, NULL, NULL);
	text = capture_end();
	assert_int_equal(rc, 1);
	assert_non_null(strstr(text, "loading the API tracer BPF programs"));
	collection_set_collecting(&c, false);
	collection_close(&c);
	model_free(&m);
}

/* the kernel path: uprobe_multi links exactly when the kernel's BTF has their type (the scan of
 * the raw file agrees with libbpf's parse) */
static void test_umulti_detection(void **state)
{
	struct btf *vmlinux;
	bool want;

	(void)state;
	if (getenv("TOPSPROF_NO_UPROBE_MULTI"))
		skip();
	vmlinux = btf__load_vmlinux_btf();
	if (!vmlinux)
		skip();
	want = btf__find_by_name_kind(vmlinux, "bpf_uprobe_multi_link", BTF_KIND_STRUCT) > 0;
	btf__free(vmlinux);
	assert_int_equal(umulti_supported(), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_close),	 cmocka_unit_test(test_collects),
		cmocka_unit_test(test_stats_clear),	 cmocka_unit_test(test_failed_open),
		cmocka_unit_test(test_umulti_detection),
	};

	return cmocka_run_group_tests_name("collection", tests, setup, teardown);
}
