// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
#include "gcu/region.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_S 1000000000ull
/* a writer that reserved a slot and never filled it (it crashed) is skipped after this long */
#define STUCK_SLOT_NS (200ull * 1000 * 1000)

uint64_t gcu_host_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static uint64_t rate_num(const struct gcu_region_hdr *h)
{
	return h->tick_hz; /* ticks per 1e9 ns before drift */
}

uint64_t gcu_host_to_ticks(const struct gcu_region_hdr *h, uint64_t host_ns)
{
	unsigned __int128 t = (unsigned __int128)host_ns * rate_num(h) *
			      (uint64_t)((int64_t)NS_PER_S + h->drift_ppb);

	return h->tick_origin + (uint64_t)(t / ((unsigned __int128)NS_PER_S * NS_PER_S));
}

uint64_t gcu_ticks_to_host(const struct gcu_region_hdr *h, uint64_t ticks)
{
	unsigned __int128 t;

	if (ticks <= h->tick_origin)
		return 0;
	t = (unsigned __int128)(ticks - h->tick_origin) * NS_PER_S * NS_PER_S;
	/* round up: waiting until this host time means the device has reached ticks */
	return (uint64_t)((t +
			   (unsigned __int128)rate_num(h) *
				   (uint64_t)((int64_t)NS_PER_S + h->drift_ppb) -
			   1) /
			  ((unsigned __int128)rate_num(h) *
			   (uint64_t)((int64_t)NS_PER_S + h->drift_ppb)));
}

uint64_t gcu_ns_to_ticks(const struct gcu_region_hdr *h, uint64_t ns)
{
	return (uint64_t)((unsigned __int128)ns * h->tick_hz / NS_PER_S);
}

#define KERNEL_DRIVER_DIR "/dev"

static bool is_device_node(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISCHR(st.st_mode);
}

const char *gcu_driver_dir(void)
{
	const char *d = getenv(GCU_RO_DIR_ENV);

	if (d && *d)
		return d;
	return is_device_node(KERNEL_DRIVER_DIR "/gcu0") ? KERNEL_DRIVER_DIR : GCU_RO_DIR_DEFAULT;
}

int gcu_driver_device_count(void)
{
	const char *v = getenv(GCU_RO_COUNT_ENV);
	char *end;
	long n;

	if ((!v || !*v) && !strcmp(gcu_driver_dir(), KERNEL_DRIVER_DIR)) {
		char path[64];

		for (n = 0; n < GCU_RO_MAX_DEVICES; n++) {
			snprintf(path, sizeof(path), KERNEL_DRIVER_DIR "/gcu%ld", n);
			if (!is_device_node(path))
				break;
		}
		return n ? (int)n : -ENODEV;
	}
	if (!v || !*v)
		return 2;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > GCU_RO_MAX_DEVICES)
		return -EINVAL;
	return (int)n;
}

int gcu_region_path(const char *dir, int device, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/gcu%d", dir, device);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 10);
	return errno || *end ? def : x;
}

static int64_t env_i64(const char *name, int64_t def)
{
	const char *v = getenv(name);
	char *end;
	long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno || *end ? def : x;
}

/* the environment may set the clock, for tests */
static void init_header(struct gcu_region_hdr *h, int device)
{
	gcu_region_init(h, device, env_u64("TOPS_SIM_TICK_HZ", gcu_default_tick_hz(device)),
			env_i64("TOPS_SIM_CLOCK_DRIFT_PPB", gcu_default_drift_ppb(device)));
}

static int mkdir_shared(const char *dir)
{
	if (mkdir(dir, 01777) == 0) {
		chmod(dir, 01777); /* whatever the umask: every user's apps share the driver */
		return 0;
	}
	return errno == EEXIST ? 0 : -errno;
}

/* create the region under a temporary name and link it into place, so that nobody ever sees a
 * half-initialised region; EEXIST when another process was first */
static int create_region(const char *dir, const char *path, int device)
{
	char tmp[4096];
	struct gcu_region_hdr h;
	int fd, err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s/.gcu%d.XXXXXX", dir, device) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	init_header(&h, device);
	if (ftruncate(fd, (off_t)h.region_size) || pwrite(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    fchmod(fd, 0666))
		err = -errno;
	else if (link(tmp, path))
		err = -errno;
	close(fd);
	unlink(tmp);
	return err;
}

int gcu_region_open(const char *dir, int device, struct gcu_region *r, char *err, size_t errlen)
{
	char path[4096];
	struct gcu_region_hdr h;
	struct stat st;
	void *map;
	bool retried = false;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	r->slot = -1;
	r->fd = -1;
	if (device < 0 || device >= GCU_RO_MAX_DEVICES) {
		snprintf(err, errlen, "no GCU device %d", device);
		return -ENODEV;
	}
	rc = gcu_region_path(dir, device, path, sizeof(path));
	if (rc) {
		snprintf(err, errlen, "driver directory name too long: %s", dir);
		return rc;
	}
again:
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && strcmp(dir, KERNEL_DRIVER_DIR)) {
		rc = mkdir_shared(dir);
		if (!rc)
			rc = create_region(dir, path, device);
		if (rc && rc != -EEXIST) {
			snprintf(err, errlen, "creating %s: %s", path, strerror(-rc));
			return rc;
		}
		fd = open(path, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "opening %s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st) || pread(fd, &h, sizeof(h), 0) != sizeof(h) || h.magic != GCU_RO_MAGIC) {
		snprintf(err, errlen, "%s is not a GCU readout region", path);
		close(fd);
		return -EPROTO;
	}
	r->driver = S_ISCHR(st.st_mode);
	if (h.version_major < GCU_RO_VERSION_MAJOR && !retried && !r->driver) {
		/* left by an older driver: the driver of today lays it out anew */
		close(fd);
		unlink(path);
		retried = true;
		goto again;
	}
	if (h.version_major != GCU_RO_VERSION_MAJOR) {
		snprintf(err, errlen,
			 "%s has readout layout version %u.%u, this reader knows %u.x: update "
			 "topsprof to match the driver",
			 path, h.version_major, h.version_minor, GCU_RO_VERSION_MAJOR);
		close(fd);
		return -EPROTO;
	}
	if (!r->driver && (uint64_t)st.st_size < h.region_size) {
		snprintf(err, errlen, "%s is truncated (%lld of %llu bytes)", path,
			 (long long)st.st_size, (unsigned long long)h.region_size);
		close(fd);
		return -EPROTO;
	}
	if (h.region_size < gcu_region_layout_size() || h.ring_capacity != GCU_RING_CAPACITY ||
	    h.names_capacity != GCU_NAMES_CAPACITY || h.heap_size != GCU_HEAP_SIZE ||
	    h.ring_offset != 4096 ||
	    h.names_offset != h.ring_offset + GCU_RING_CAPACITY * sizeof(struct gcu_record) ||
	    h.heap_offset != h.names_offset + GCU_NAMES_CAPACITY * sizeof(struct gcu_name_entry)) {
		snprintf(err, errlen,
			 "%s has a layout this build does not know (ring of %u records, %u "
			 "names, %u heap bytes): another build of the driver made it",
			 path, h.ring_capacity, h.names_capacity, h.heap_size);
		close(fd);
		return -EPROTO;
	}
	map = mmap(NULL, h.region_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	rc = map == MAP_FAILED ? -errno : 0;
	if (rc || !r->driver)
		close(fd);
	if (rc) {
		r->driver = false;
		snprintf(err, errlen, "mapping %s: %s", path, strerror(-rc));
		return rc;
	}
	if (r->driver)
		r->fd = fd;
	gcu_region_view(r, map, &h);
	return 0;
}

void gcu_region_close(struct gcu_region *r)
{
	if (r->hdr)
		munmap(r->hdr, r->size);
	if (r->driver && r->fd >= 0)
		close(r->fd);
	memset(r, 0, sizeof(*r));
}

static bool alive(uint32_t pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* readers change their slots one at a time; a reader that died holding the lock is waited
 * out */
static void lock(struct gcu_region_hdr *h)
{
	uint64_t t0 = gcu_host_ns();

	while (__atomic_exchange_n(&h->lock, 1, __ATOMIC_ACQUIRE))
		if (gcu_host_ns() - t0 > STUCK_SLOT_NS * 5)
			break;
}

static void unlock(struct gcu_region_hdr *h)
{
	__atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE);
}

int gcu_reader_enable(struct gcu_region *r, unsigned activities)
{
	struct gcu_region_hdr *h = r->hdr;
	uint32_t self = (uint32_t)getpid(), all = 0;
	int rc = 0;

	lock(h);
	/* the slots of readers that are gone are free again */
	for (int i = 0; i < GCU_MAX_READERS; i++)
		if (h->readers[i].pid && !alive(h->readers[i].pid))
			__atomic_store_n(&h->readers[i].pid, 0, __ATOMIC_RELEASE);
	if (r->slot < 0 && activities) {
		for (int i = 0; i < GCU_MAX_READERS && r->slot < 0; i++)
			if (!h->readers[i].pid)
				r->slot = i;
		if (r->slot < 0) {
			rc = -EBUSY;
		} else {
			struct gcu_reader_slot *s = &h->readers[r->slot];

			/* what sits in the ring was written before: start afresh */
			s->enabled = 0;
			s->overflow = 0;
			s->written = 0;
			__atomic_store_n(&s->alive_ns, gcu_host_ns(), __ATOMIC_RELEASE);
			__atomic_store_n(&s->tail, __atomic_load_n(&h->head, __ATOMIC_ACQUIRE),
					 __ATOMIC_RELEASE);
			__atomic_store_n(&s->pid, self, __ATOMIC_RELEASE);
		}
	}
	if (!rc && r->slot >= 0) {
		struct gcu_reader_slot *s = &h->readers[r->slot];

		__atomic_store_n(&s->enabled, activities, __ATOMIC_RELEASE);
		if (!activities) {
			__atomic_store_n(&s->pid, 0, __ATOMIC_RELEASE);
			r->slot = -1;
		}
	}
	for (int i = 0; i < GCU_MAX_READERS; i++)
		if (h->readers[i].pid && alive(h->readers[i].pid))
			all |= h->readers[i].enabled;
	__atomic_store_n(&h->enabled, all, __ATOMIC_RELEASE);
	unlock(h);
	return rc;
}

/* the activity a record belongs to */
static unsigned record_activity(const struct gcu_record *rec)
{
	switch (rec->kind) {
	case GCU_REC_KERNEL:
		return GCU_ACT_OPERATOR;
	case GCU_REC_DTE:
		return rec->engine == GCU_ENGINE_CDTE ? GCU_ACT_CDTE : GCU_ACT_SDTE;
	default:
		return GCU_ACT_MEMCPY;
	}
}

int gcu_ring_pop(struct gcu_region *r, struct gcu_record *out, int max)
{
	struct gcu_region_hdr *h = r->hdr;
	struct gcu_reader_slot *s;
	uint64_t tail;
	int n = 0;

	if (r->slot < 0)
		return -EPERM;
	s = &h->readers[r->slot];
	__atomic_store_n(&s->alive_ns, gcu_host_ns(), __ATOMIC_RELAXED);
	tail = __atomic_load_n(&s->tail, __ATOMIC_RELAXED);
	while (n < max) {
		struct gcu_record *slot = &r->ring[tail % r->ring_capacity];
		uint64_t head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);

		if (tail == head)
			break;
		uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);

		if (seq > tail + 1) {
			/* lapped: this reader was quiet so long that writers stopped waiting for it;
			 * what they wrote over is lost, the oldest record left is where to go on */
			uint64_t oldest = head > r->ring_capacity ? head - r->ring_capacity : 0;

			if (oldest > tail) {
				__atomic_fetch_add(&s->overflow, oldest - tail, __ATOMIC_RELAXED);
				tail = oldest;
				continue;
			}
		}
		if (seq != tail + 1) {
			/* reserved, not yet written: wait, unless its writer died long ago */
			uint64_t now = gcu_host_ns();

			if (r->stuck_pos != tail + 1) {
				r->stuck_pos = tail + 1;
				r->stuck_since_ns = now;
				break;
			}
			if (now - r->stuck_since_ns < STUCK_SLOT_NS)
				break;
			__atomic_fetch_add(&s->overflow, 1, __ATOMIC_RELAXED);
			tail++;
			continue;
		}
		/* no writer reuses the slot before every reader's tail moves past it; another
		 * reader may want what this one does not */
		if (record_activity(slot) & __atomic_load_n(&s->enabled, __ATOMIC_RELAXED))
			out[n++] = *slot;
		tail++;
	}
	__atomic_store_n(&s->tail, tail, __ATOMIC_RELEASE);
	return n;
}

const char *gcu_names_copy(const struct gcu_region *r, uint32_t id, char *buf, size_t size)
{
	const struct gcu_name_entry *e;
	uint32_t off, len;

	if (!id || id > r->names_capacity || !size)
		return NULL;
	e = &r->names[id - 1];
	if (!__atomic_load_n(&e->committed, __ATOMIC_ACQUIRE))
		return NULL;
	off = __atomic_load_n(&e->offset, __ATOMIC_RELAXED);
	len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
	if (off >= r->heap_size || len > GCU_NAME_MAX || len >= r->heap_size - off)
		return NULL;
	if (len > size - 1)
		len = (uint32_t)(size - 1);
	memcpy(buf, r->heap + off, len);
	buf[len] = '\0';
	return buf;
}
