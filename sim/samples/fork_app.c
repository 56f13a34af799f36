// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* A parent that forks children which use the GCU: one runs work itself, one execs
 * simpleElemwiseAdd; then the parent uses the GCU too. Exits non-zero if any of them failed.
 * usage: fork_app [children] */
#include <limits.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static void twice(void **args, dim3 grid, dim3 block)
{
	int *p = *(int **)args[0];
	unsigned long n = *(unsigned long *)args[1];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		p[i] *= 2;
}

__attribute__((constructor)) static void register_kernels(void)
{
	static const topsKernelInfo k = { "twice(int*, unsigned long)", 4000, 100, 1, 4 };

	CHECK(__topsRegisterKernel(twice, &k));
}

static int gcu_work(int seed)
{
	unsigned long n = 8192;
	int *h = malloc(n * sizeof(int)), *d;
	void *args[] = { &d, &n };
	int bad = 0;

	for (unsigned long i = 0; i < n; i++)
		h[i] = seed + (int)i;
	CHECK(topsMalloc((void **)&d, n * sizeof(int)));
	CHECK(topsMemcpy(d, h, n * sizeof(int), topsMemcpyHostToDevice));
	CHECK(topsLaunchKernel((const void *)twice, DIM3(1, 1, 1), DIM3(32, 1, 1), args, 0, NULL));
	CHECK(topsMemcpy(h, d, n * sizeof(int), topsMemcpyDeviceToHost));
	CHECK(topsFree(d));
	for (unsigned long i = 0; i < n; i++)
		bad += h[i] != 2 * (seed + (int)i);
	free(h);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	int children = argc > 1 ? atoi(argv[1]) : 2, failed = 0, status;
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (len <= 0)
		return 1;
	exe[len] = '\0';
	*strrchr(exe, '/') = '\0';
	snprintf(path, sizeof(path), "%s/simpleElemwiseAdd", exe);
	for (int c = 0; c < children; c++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			if (c % 2) {
				execl(path, "simpleElemwiseAdd", (char *)NULL);
				_exit(127);
			}
			_exit(gcu_work(100 * (c + 1)));
		}
	}
	failed += gcu_work(7);
	while (wait(&status) > 0)
		failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	if (failed) {
		fprintf(stderr, "fork_app: %d failed\n", failed);
		return 1;
	}
	printf("fork_app: PASSED (%d children)\n", children);
	return 0;
}
