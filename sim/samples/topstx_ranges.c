// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* topstx: nested ranges in two custom domains and the default one, start/end ranges, marks,
 * categories, payloads, with GCU work inside the ranges.
 * usage: topstx_ranges [message-bytes]: also push one range whose message is that long
 * ("long:" and then the letters a-z over and over). */
#include <string.h>

#include "common.h"
#include "topstx/topstx.h"

static void fill(void **args, dim3 grid, dim3 block)
{
	float *p = *(float **)args[0];
	unsigned long n = *(unsigned long *)args[1];

	(void)grid;
	(void)block;
	for (unsigned long i = 0; i < n; i++)
		p[i] = 1.0f;
}

__attribute__((constructor)) static void register_kernels(void)
{
	static const topsKernelInfo k = { "fill(float*, unsigned long)", 5000, 100, 1, 4 };

	CHECK(__topsRegisterKernel(fill, &k));
}

static topstxEventAttributes_t attr(const char *msg, uint32_t category)
{
	topstxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = TOPSTX_VERSION;
	a.size = sizeof(a);
	a.category = category;
	a.messageType = TOPSTX_MESSAGE_TYPE_ASCII;
	a.message.str = msg;
	return a;
}

static void long_range(size_t bytes)
{
	char *msg = malloc(bytes + 1);

	if (!msg)
		exit(1);
	memcpy(msg, "long:", bytes < 5 ? bytes : 5);
	for (size_t i = 5; i < bytes; i++)
		msg[i] = (char)('a' + (i - 5) % 26);
	msg[bytes] = '\0';
	if (topstxRangePushA(msg) != 0 || topstxRangePop() != 0)
		exit(1);
	free(msg);
}

int main(int argc, char **argv)
{
	topstxDomainHandle_t pre = topstxDomainCreate("Preprocess");
	topstxDomainHandle_t train = topstxDomainCreate("Training");
	topstxEventAttributes_t a;
	unsigned long n = 1 << 16;
	float *d, *h = malloc(n * sizeof(float));
	void *args[] = { &d, &n };
	topstxRangeId_t whole;
	int bad = 0;

	if (!pre || !train || !h)
		return 1;
	if (argc > 1)
		long_range(strtoul(argv[1], NULL, 10));
	topstxDomainNameCategory(train, 1, "forward");
	topstxDomainNameCategory(train, 2, "backward");

	a = attr("whole run", 0);
	whole = topstxRangeStart(&a);
	CHECK(topsMalloc((void **)&d, n * sizeof(float)));

	a = attr("load data", 0);
	if (topstxDomainRangePush(pre, &a) != 0)
		return 1;
	a = attr("decode", 0);
	a.payloadType = TOPSTX_PAYLOAD_TYPE_UNSIGNED_INT64;
	a.payload.ullValue = 42;
	if (topstxDomainRangePush(pre, &a) != 1) /* nested */
		return 1;
	topstxDomainRangePop(pre);
	topstxDomainRangePop(pre);

	for (int step = 0; step < 3; step++) {
		a = attr("step", 0);
		a.payloadType = TOPSTX_PAYLOAD_TYPE_INT64;
		a.payload.llValue = step;
		topstxDomainRangePush(train, &a);
		a = attr("forward pass", 1);
		topstxDomainRangePush(train, &a);
		CHECK(topsLaunchKernel((const void *)fill, DIM3(1, 1, 1), DIM3(1, 1, 1), args, 0,
				       NULL));
		CHECK(topsDeviceSynchronize());
		topstxDomainRangePop(train);
		a = attr("backward pass", 2);
		a.payloadType = TOPSTX_PAYLOAD_TYPE_STRING;
		a.payload.str = "grad";
		topstxDomainRangePush(train, &a);
		topstxDomainRangePop(train);
		topstxDomainRangePop(train);
		a = attr("step done", 0);
		a.payloadType = TOPSTX_PAYLOAD_TYPE_DOUBLE;
		a.payload.dValue = 0.5 * step;
		topstxDomainMark(train, &a);
	}

	if (topstxRangePushA("copy back") != 0)
		return 1;
	if (topstxRangePushA(NULL) != -1) /* refused: opens nothing */
		return 1;
	CHECK(topsMemcpy(h, d, n * sizeof(float), topsMemcpyDeviceToHost));
	topstxRangePop();
	a = attr("checked", 0);
	topstxMark(&a);
	topstxRangeEnd(whole);

	for (unsigned long i = 0; i < n; i++)
		bad += h[i] != 1.0f;
	CHECK(topsFree(d));
	free(h);
	topstxDomainDestroy(pre);
	topstxDomainDestroy(train);
	if (bad || topstxRangePop() != -1) /* nothing left open */
		return 1;
	printf("topstx_ranges: PASSED\n");
	return 0;
}
