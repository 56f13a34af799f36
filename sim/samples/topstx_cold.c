// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topstx messages in pages the application has not touched yet when it calls: a probe cannot
 * read them without a page fault (issue 12). Each message is passed without being read first;
 * what was passed, and where, is printed after the calls, for the test to compare with the report:
 *   range 'cold rodata message'    topstxRangePushA, a literal in its own page of .rodata,
 *                                  unmapped (MADV_DONTNEED) as memory pressure would do
 *   range 'cold file message'      topstxRangePush, a fresh read-only private file mapping
 *   mark 'cold writable message'   topstxMark, a fresh writable private mapping of a memfd
 *                                  (could change after the call: never read again later)
 * usage: topstx_cold [DIR]: the message file is made in DIR (default /tmp), then removed. */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "topstx/topstx.h"

#define PAGE 4096

/* A page of its own. Never touching it is not enough: a fault on any other page of .rodata maps
 * every resident page of the file's folio, or of the 64 KiB fault-around window, at once; so it is
 * unmapped (MADV_DONTNEED: the file's content again at the next touch) just before the call. */
static const char cold_msg[PAGE] __attribute__((section(".rodata.cold_msgs"), aligned(PAGE))) =
	"cold rodata message";

static const char file_msg[] = "cold file message";
static const char writable_msg[] = "cold writable message";

static topstxEventAttributes_t attr(const char *msg)
{
	topstxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = TOPSTX_VERSION;
	a.size = sizeof(a);
	a.messageType = TOPSTX_MESSAGE_TYPE_ASCII;
	a.message.str = msg;
	return a;
}

/* a fresh mapping of fd: no page of it mapped until touched */
static const char *map(int fd, int prot)
{
	void *p = mmap(NULL, PAGE, prot, MAP_PRIVATE, fd, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return p;
}

static int message_file(const char *dir)
{
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/topstx_cold.XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0 || write(fd, file_msg, sizeof(file_msg)) != (ssize_t)sizeof(file_msg)) {
		perror(path);
		exit(1);
	}
	unlink(path);
	return fd;
}

int main(int argc, char **argv)
{
	int fd = message_file(argc > 1 ? argv[1] : "/tmp");
	int mfd = memfd_create("topstx_cold", 0);
	const char *file, *writable;
	topstxEventAttributes_t a;

	if (mfd < 0 || write(mfd, writable_msg, sizeof(writable_msg)) != sizeof(writable_msg)) {
		perror("memfd");
		return 1;
	}
	file = map(fd, PROT_READ);
	writable = map(mfd, PROT_READ | PROT_WRITE);

	/* nothing of .rodata is touched from here to the call */
	if (madvise((void *)cold_msg, PAGE, MADV_DONTNEED)) {
		perror("madvise");
		return 1;
	}
	if (topstxRangePushA(cold_msg) != 0 || topstxRangePop() != 0)
		return 1;
	a = attr(file);
	if (topstxRangePush(&a) != 0 || topstxRangePop() != 0)
		return 1;
	a = attr(writable);
	topstxMark(&a);
	/* topsprof, woken by a message it has to read itself, reads it while the process runs:
	 * one that has ended cannot be read */
	usleep(300 * 1000);

	printf("passed: range '%s' at %p\n", cold_msg, (const void *)cold_msg);
	printf("passed: range '%s' at %p\n", file, (const void *)file);
	printf("passed: mark '%s' at %p\n", writable, (const void *)writable);
	printf("topstx_cold: PASSED\n");
	return 0;
}
