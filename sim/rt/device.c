// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Devices: start-up, the current device, command submission with profiler records, waiting. */
#include "internal.h"
#include "../kmd/gcusim_ioctl.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct sim_rt sim;

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static __thread int current_ordinal;
static __thread topsError_t last_error;

#define DEFAULT_MEM_MB (16u * 1024)

static void complain(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void complain(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("libtopsrt: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* TOPS_VISIBLE_DEVICES="1,0": the application's devices 0 and 1 are GCUs 1 and 0 */
static int visible_devices(int count, int *phys)
{
	const char *v = getenv("TOPS_VISIBLE_DEVICES");
	int n = 0;

	if (!v) {
		for (int i = 0; i < count; i++)
			phys[i] = i;
		return count;
	}
	while (*v && n < GCU_RO_MAX_DEVICES) {
		char *end;
		long id = strtol(v, &end, 10);

		if (end == v || id < 0 || id >= count) /* like CUDA: stop at the first bad entry */
			break;
		for (int i = 0; i < n; i++)
			if (phys[i] == id)
				return n;
		phys[n++] = (int)id;
		v = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
	return n;
}

/* a child forked without exec: its own open files of the kernel driver's devices, so that its
 * memory and its queue are its own, as the user-space device's are, and what it holds goes back
 * when it ends (the inherited file is its parent's) */
static void reopen_in_child(void)
{
	char path[4096];

	for (int i = 0; i < sim.ndev; i++) {
		struct gcu_region *r = &sim.dev[i].region;
		int fd;

		if (!r->driver ||
		    gcu_region_path(gcu_driver_dir(), sim.dev[i].phys, path, sizeof(path)))
			continue;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue; /* the parent's, then */
		close(r->fd);
		r->fd = fd;
	}
}

static void init(void)
{
	int phys[GCU_RO_MAX_DEVICES], count = gcu_driver_device_count(), n;
	const char *meta = getenv("ENFLAME_GENERATE_PROFILE_META");
	const char *mem = getenv("TOPS_SIM_DEVICE_MEM_MB");
	uint64_t mem_mb = mem && atoll(mem) > 0 ? (uint64_t)atoll(mem) : DEFAULT_MEM_MB;
	char err[512];

	sim.profile_meta = meta && !strcmp(meta, "true");
	sim.next_stream_id = 1;
	if (count < 0) {
		complain("%s='%s' is not a device count", GCU_RO_COUNT_ENV,
			 getenv(GCU_RO_COUNT_ENV));
		sim.init_error = topsErrorNoDevice;
		return;
	}
	n = visible_devices(count, phys);
	if (n == 0) {
		sim.init_error = topsErrorNoDevice;
		return;
	}
	for (int i = 0; i < n; i++) {
		struct sim_device *d = &sim.dev[i];

		if (gcu_region_open(gcu_driver_dir(), phys[i], &d->region, err, sizeof(err))) {
			complain("GCU %d: %s", phys[i], err);
			sim.init_error = topsErrorNoDevice;
			return;
		}
		d->ordinal = i;
		d->phys = phys[i];
		pthread_mutex_init(&d->lock, NULL);
		d->default_stream.dev = d;
		d->mem_total = mem_mb << 20;
		if (d->region.driver) { /* the driver's size, for every process */
			struct gcusim_info info;

			if (!ioctl(d->region.fd, GCUSIM_IOC_INFO, &info))
				d->mem_total = info.mem_total;
		}
	}
	sim.ndev = n;
	if (sim.dev[0].region.driver)
		pthread_atfork(NULL, NULL, reopen_in_child);
}

topsError_t sim_init(void)
{
	pthread_once(&init_once, init);
	return sim.init_error;
}

int sim_current_ordinal(void)
{
	return current_ordinal;
}

struct sim_device *sim_current_device(void)
{
	return &sim.dev[current_ordinal];
}

topsError_t sim_set_current(int ordinal)
{
	if (ordinal < 0 || ordinal >= sim.ndev)
		return topsErrorInvalidDevice;
	current_ordinal = ordinal;
	return topsSuccess;
}

topsError_t sim_set_error(topsError_t e)
{
	if (e != topsSuccess)
		last_error = e;
	return e;
}

topsError_t sim_take_error(bool clear)
{
	topsError_t e = last_error;

	if (clear)
		last_error = topsSuccess;
	return e;
}

struct topsStream_st *sim_stream(topsStream_t s)
{
	if (!s)
		return &sim_current_device()->default_stream;
	return handle_has(H_STREAM, s) ? s : NULL;
}

uint64_t sim_device_now(struct sim_device *d)
{
	return gcu_host_to_ticks(d->region.hdr, gcu_host_ns());
}

/* the legacy default stream: it waits for every blocking stream, and they wait for it */
static uint64_t ready_locked(struct topsStream_st *s)
{
	struct sim_device *d = s->dev;
	uint64_t r = s->ready;

	if (s == &d->default_stream) {
		for (struct topsStream_st *o = d->streams; o; o = o->next)
			if (!(o->flags & topsStreamNonBlocking) && o->ready > r)
				r = o->ready;
	} else if (!(s->flags & topsStreamNonBlocking) && d->default_stream.ready > r) {
		r = d->default_stream.ready;
	}
	return r;
}

uint64_t sim_stream_done(struct topsStream_st *s)
{
	uint64_t r;

	pthread_mutex_lock(&s->dev->lock);
	r = ready_locked(s);
	pthread_mutex_unlock(&s->dev->lock);
	return r;
}

uint64_t sim_device_done(struct sim_device *d)
{
	uint64_t r;

	pthread_mutex_lock(&d->lock);
	r = d->default_stream.ready > d->orphan_ready ? d->default_stream.ready : d->orphan_ready;
	for (struct topsStream_st *o = d->streams; o; o = o->next)
		if (o->ready > r)
			r = o->ready;
	pthread_mutex_unlock(&d->lock);
	return r;
}

/* a kernel's name in the device's name table, added the first time it is recorded */
static uint32_t kernel_name_id(struct sim_device *d, struct sim_kernel *k)
{
	uint32_t *id = &k->name_id[d->phys];

	if (!__atomic_load_n(id, __ATOMIC_ACQUIRE)) {
		struct gcusim_name n = { .name = (uint64_t)(uintptr_t)k->info.name };

		/* through the kernel driver when there is one (into the same table) */
		if (!d->region.driver || ioctl(d->region.fd, GCUSIM_IOC_NAME, &n))
			n.id = gcu_names_add(&d->region, k->info.name);
		__atomic_store_n(id, n.id, __ATOMIC_RELEASE);
	}
	return __atomic_load_n(id, __ATOMIC_ACQUIRE);
}

uint64_t sim_submit(struct topsStream_st *s, const struct sim_cmd *c)
{
	struct sim_device *d = s->dev;
	const struct gcu_region_hdr *h = d->region.hdr;
	unsigned enabled = gcu_enabled(&d->region);
	bool dte = c->kernel && sim.profile_meta && (enabled & (GCU_ACT_CDTE | GCU_ACT_SDTE));
	uint64_t dur_ns = c->kernel ? model_kernel_ns(&c->kernel->info, c->elems, dte) : c->dur_ns;
	struct gcu_cmd g = {
		.kind = c->kind,
		.engine = c->engine,
		.copy_kind = c->kernel ? GCU_COPY_NONE : c->copy_kind,
		.stream_id = s->id,
		.dte = dte,
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)gettid(),
		.launch_id = __atomic_add_fetch(&sim.next_launch_id, 1, __ATOMIC_RELAXED),
		.bytes = c->bytes,
		.dur_ticks = gcu_ns_to_ticks(h, dur_ns),
		.submit_ticks = sim_device_now(d),
	};

	if (c->kernel && (enabled & (GCU_ACT_OPERATOR | GCU_ACT_CDTE | GCU_ACT_SDTE)))
		g.name_id = kernel_name_id(d, c->kernel);
	if (dte) {
		g.dte_bytes = c->elems * c->kernel->info.dte_bytes_per_elem;
		g.cdte_ticks =
			gcu_ns_to_ticks(h, model_dte_ns(GCU_ENGINE_CDTE, g.dte_bytes, dur_ns));
		g.sdte_ticks =
			gcu_ns_to_ticks(h, model_dte_ns(GCU_ENGINE_SDTE, g.dte_bytes, dur_ns));
	}
	pthread_mutex_lock(&d->lock);
	g.stream_ready = ready_locked(s);
	/* the kernel driver queues it (and records it); the user-space device here, as the
	 * driver does (the same code), also should the driver not take it */
	if (!d->region.driver || ioctl(d->region.fd, GCUSIM_IOC_SUBMIT, &g))
		gcu_device_submit(&d->region, d->engine_free, &g);
	s->ready = g.stream_ready;
	pthread_mutex_unlock(&d->lock);
	return g.stream_ready;
}

/* The driver puts the caller to sleep until the modeled end (as a GCU runtime sleeps in its
 * driver until the device signals completion): the kernel driver in its ioctl; the user-space
 * device with a futex wait on the device's shared mapping that nobody wakes, timing out at the
 * end. */
void sim_wait(struct sim_device *d, uint64_t ticks)
{
	uint64_t ns = gcu_ticks_to_host(d->region.hdr, ticks);

	/* the kernel driver (sim/kmd) sleeps in its ioctl; a signal ends the sleep, which goes
	 * on after the handler as a driver's wait does (should the ioctl fail otherwise, the
	 * futex below waits) */
	if (d->region.driver) {
		int rc;

		while ((rc = ioctl(d->region.fd, GCUSIM_IOC_WAIT, &ns)) && errno == EINTR)
			;
		if (!rc)
			return;
	}
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	uint32_t *word = &d->region.hdr->magic; /* never changes */
	struct timespec now;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > ts.tv_sec ||
		    (now.tv_sec == ts.tv_sec && now.tv_nsec >= ts.tv_nsec))
			return;
		/* an absolute CLOCK_MONOTONIC deadline; EINTR and spurious wakeups wait again */
		if (syscall(SYS_futex, word, FUTEX_WAIT_BITSET, *word, &ts, NULL,
			    FUTEX_BITSET_MATCH_ANY) &&
		    errno != ETIMEDOUT && errno != EINTR && errno != EAGAIN) {
			/* no futex (seccomp, say): sleep instead */
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			return;
		}
	}
}
