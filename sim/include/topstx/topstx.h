/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * topstx: annotate a program's timeline with ranges, marks and domains (libtopstx.so), as NVTX
 * does for CUDA. Without a profiler the calls cost next to nothing; a profiler traces them.
 */
#ifndef TOPSTX_H
#define TOPSTX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TOPSTX_VERSION 1

typedef enum topstxMessageType_t {
	TOPSTX_MESSAGE_UNKNOWN = 0,
	TOPSTX_MESSAGE_TYPE_ASCII = 1,
	TOPSTX_MESSAGE_TYPE_REGISTERED = 2,
} topstxMessageType_t;

typedef enum topstxPayloadType_t {
	TOPSTX_PAYLOAD_UNKNOWN = 0,
	TOPSTX_PAYLOAD_TYPE_UNSIGNED_INT64 = 1,
	TOPSTX_PAYLOAD_TYPE_INT64 = 2,
	TOPSTX_PAYLOAD_TYPE_DOUBLE = 3,
	TOPSTX_PAYLOAD_TYPE_STRING = 4,
	TOPSTX_PAYLOAD_TYPE_BYTES = 5,
} topstxPayloadType_t;

typedef struct topstxEventAttributes_t {
	uint16_t version; /* TOPSTX_VERSION */
	uint16_t size;	  /* sizeof(topstxEventAttributes_t) */
	uint32_t category;
	int32_t messageType; /* topstxMessageType_t */
	union {
		const char *str;
	} message;
	int32_t payloadType;  /* topstxPayloadType_t */
	uint32_t payloadSize; /* TOPSTX_PAYLOAD_TYPE_BYTES: bytes at payload.bytes */
	union {
		uint64_t ullValue;
		int64_t llValue;
		double dValue;
		const char *str;
		const void *bytes;
	} payload;
} topstxEventAttributes_t;

typedef struct topstxDomainRegistration_st *topstxDomainHandle_t;
typedef uint64_t topstxRangeId_t;

/* the default domain; push/pop return the nesting level (0 for the outermost), or -1 */
int topstxRangePush(const topstxEventAttributes_t *attr);
int topstxRangePushA(const char *message);
int topstxRangePop(void);
topstxRangeId_t topstxRangeStart(const topstxEventAttributes_t *attr);
void topstxRangeEnd(topstxRangeId_t id);
void topstxMark(const topstxEventAttributes_t *attr);

/* custom domains */
topstxDomainHandle_t topstxDomainCreate(const char *name);
void topstxDomainDestroy(topstxDomainHandle_t domain);
void topstxDomainNameCategory(topstxDomainHandle_t domain, uint32_t category, const char *name);
int topstxDomainRangePush(topstxDomainHandle_t domain, const topstxEventAttributes_t *attr);
int topstxDomainRangePop(topstxDomainHandle_t domain);
topstxRangeId_t topstxDomainRangeStart(topstxDomainHandle_t domain,
				       const topstxEventAttributes_t *attr);
void topstxDomainRangeEnd(topstxDomainHandle_t domain, topstxRangeId_t id);
void topstxDomainMark(topstxDomainHandle_t domain, const topstxEventAttributes_t *attr);

#ifdef __cplusplus
}
#endif

#endif
