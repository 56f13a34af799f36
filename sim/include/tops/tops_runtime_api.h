/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * TopsRT: the GCU runtime API (libtopsrt.so), HIP-like. This is the simulated runtime's header:
 * the same names and signatures as the vendor's, plus the kernel registration entry that a
 * compiler would generate calls to (__topsRegisterKernel).
 */
#ifndef TOPS_RUNTIME_API_H
#define TOPS_RUNTIME_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum topsError_t {
	topsSuccess = 0,
	topsErrorInvalidValue = 1,
	topsErrorOutOfMemory = 2,
	topsErrorNotInitialized = 3,
	topsErrorInvalidDevicePointer = 17,
	topsErrorInvalidMemcpyDirection = 21,
	topsErrorInvalidConfiguration = 9,
	topsErrorInvalidDeviceFunction = 98,
	topsErrorNoDevice = 100,
	topsErrorInvalidDevice = 101,
	topsErrorInvalidImage = 200,
	topsErrorFileNotFound = 301,
	topsErrorNotFound = 500,
	topsErrorInvalidResourceHandle = 400,
	topsErrorNotReady = 600,
	topsErrorLaunchFailure = 719,
	topsErrorNotSupported = 801,
	topsErrorUnknown = 999,
} topsError_t;

typedef enum topsMemcpyKind {
	topsMemcpyHostToHost = 0,
	topsMemcpyHostToDevice = 1,
	topsMemcpyDeviceToHost = 2,
	topsMemcpyDeviceToDevice = 3,
	topsMemcpyDefault = 4,
} topsMemcpyKind;

typedef struct dim3 {
	uint32_t x, y, z;
} dim3;

typedef struct topsStream_st *topsStream_t;
typedef struct topsEvent_st *topsEvent_t;
typedef struct topsModule_st *topsModule_t;
typedef struct topsFunction_st *topsFunction_t;
typedef void *topsDeviceptr_t;

#define topsStreamDefault      0x0
#define topsStreamNonBlocking  0x1
#define topsEventDefault       0x0
#define topsEventBlockingSync  0x1
#define topsEventDisableTiming 0x2
#define topsHostMallocDefault  0x0

typedef struct topsDeviceProp_t {
	char name[256];
	size_t totalGlobalMem;
	size_t sharedMemPerBlock;
	int maxThreadsPerBlock;
	int maxThreadsDim[3];
	int maxGridSize[3];
	int clockRate; /* kHz */
	int multiProcessorCount;
	int major;
	int minor;
	int pciDomainID;
	int pciBusID;
	int pciDeviceID;
	int asyncEngineCount;
} topsDeviceProp_t;

/* errors */
topsError_t topsGetLastError(void);
topsError_t topsPeekAtLastError(void);
const char *topsGetErrorName(topsError_t error);
const char *topsGetErrorString(topsError_t error);

/* devices */
topsError_t topsGetDeviceCount(int *count);
topsError_t topsSetDevice(int device);
topsError_t topsGetDevice(int *device);
topsError_t topsGetDeviceProperties(topsDeviceProp_t *prop, int device);
topsError_t topsDeviceSynchronize(void);

/* memory */
topsError_t topsMalloc(void **ptr, size_t size);
topsError_t topsFree(void *ptr);
topsError_t topsHostMalloc(void **ptr, size_t size, unsigned int flags);
topsError_t topsHostFree(void *ptr);
topsError_t topsMemcpy(void *dst, const void *src, size_t sizeBytes, topsMemcpyKind kind);
topsError_t topsMemcpyAsync(void *dst, const void *src, size_t sizeBytes, topsMemcpyKind kind,
			    topsStream_t stream);
topsError_t topsMemcpyHtoD(topsDeviceptr_t dst, void *src, size_t sizeBytes);
topsError_t topsMemcpyDtoH(void *dst, topsDeviceptr_t src, size_t sizeBytes);
topsError_t topsMemcpyDtoD(topsDeviceptr_t dst, topsDeviceptr_t src, size_t sizeBytes);
topsError_t topsMemcpyHtoDAsync(topsDeviceptr_t dst, void *src, size_t sizeBytes,
				topsStream_t stream);
topsError_t topsMemcpyDtoHAsync(void *dst, topsDeviceptr_t src, size_t sizeBytes,
				topsStream_t stream);
topsError_t topsMemcpyDtoDAsync(topsDeviceptr_t dst, topsDeviceptr_t src, size_t sizeBytes,
				topsStream_t stream);
topsError_t topsMemset(void *dst, int value, size_t sizeBytes);
topsError_t topsMemsetAsync(void *dst, int value, size_t sizeBytes, topsStream_t stream);

/* streams */
topsError_t topsStreamCreate(topsStream_t *stream);
topsError_t topsStreamCreateWithFlags(topsStream_t *stream, unsigned int flags);
topsError_t topsStreamDestroy(topsStream_t stream);
topsError_t topsStreamSynchronize(topsStream_t stream);
topsError_t topsStreamQuery(topsStream_t stream);
topsError_t topsStreamWaitEvent(topsStream_t stream, topsEvent_t event, unsigned int flags);

/* events */
topsError_t topsEventCreate(topsEvent_t *event);
topsError_t topsEventCreateWithFlags(topsEvent_t *event, unsigned int flags);
topsError_t topsEventRecord(topsEvent_t event, topsStream_t stream);
topsError_t topsEventSynchronize(topsEvent_t event);
topsError_t topsEventQuery(topsEvent_t event);
topsError_t topsEventElapsedTime(float *ms, topsEvent_t start, topsEvent_t stop);
topsError_t topsEventDestroy(topsEvent_t event);

/* kernels */
topsError_t topsLaunchKernel(const void *function_address, dim3 numBlocks, dim3 dimBlocks,
			     void **args, size_t sharedMemBytes, topsStream_t stream);
topsError_t topsModuleLoad(topsModule_t *module, const char *fname);
topsError_t topsModuleUnload(topsModule_t module);
topsError_t topsModuleGetFunction(topsFunction_t *function, topsModule_t module, const char *kname);
topsError_t topsModuleLaunchKernel(topsFunction_t f, unsigned int gridDimX, unsigned int gridDimY,
				   unsigned int gridDimZ, unsigned int blockDimX,
				   unsigned int blockDimY, unsigned int blockDimZ,
				   unsigned int sharedMemBytes, topsStream_t stream,
				   void **kernelParams, void **extra);

/*
 * Kernel registration, as compiler-generated start-up code does it. A kernel's host function
 * is its identity for topsLaunchKernel; in the simulator it is also its implementation: the
 * runtime runs it on the host with the launch's arguments, while the device model charges
 * base_ns + elements * ps_per_elem / 1000 of device time, elements being the unsigned long
 * argument number elems_arg (or grid * block threads when elems_arg < 0).
 */
typedef void (*topsKernelFn)(void **args, dim3 grid, dim3 block);

typedef struct topsKernelInfo {
	const char *name; /* demangled device name, e.g. "vector_add(float*, float*, ...)" */
	uint64_t base_ns;
	uint64_t ps_per_elem;
	int elems_arg;
	uint32_t dte_bytes_per_elem; /* data moved inside the kernel (CDTE/SDTE records) */
} topsKernelInfo;

topsError_t __topsRegisterKernel(topsKernelFn function, const topsKernelInfo *info);

#ifdef __cplusplus
}
#endif

#endif
