// SPDX-License-Identifier: GPL-2.0
/* gcusim: the simulated GCU's kernel-mode driver. /dev/gcu0..N-1 (module parameter devices),
 * each with the driver's region (user/gcu/region.h: the device clock, the profiler's record ring
 * and name table) laid out as the user-space device lays out its own, which the runtime and
 * profilers map through the node; ioctls (gcusim_ioctl.h) for the device's facts, the commands
 * (queued on the device's engines and recorded) and their kernels' names, device memory
 * (counted across processes), and
 * the runtime's blocking waits, which sleep here as a GCU runtime sleeps in its driver. The layout, the queue and the records are the
 * user-space device's own code (user/gcu/layout.c, sim/driver/submit.c and writer.c), compiled
 * in (device_k.c). */
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "gcu/region.h"
#include "../driver/submit.h"
#include "../driver/writer.h"
#include "gcusim_ioctl.h"

static int devices = 2;
module_param(devices, int, 0444);
MODULE_PARM_DESC(devices, "how many GCUs (/dev/gcu0..N-1), 1 to 16");

static unsigned long mem_mb = 16384;
module_param(mem_mb, ulong, 0444);
MODULE_PARM_DESC(mem_mb, "each GCU's memory, in MB");

struct gcusim_dev {
	struct miscdevice misc;
	char name[16];
	int id;
	void *region; /* vmalloc_user: mapped whole into user space */
	u64 size;
	struct gcu_region r; /* its view, for the command queue */
	atomic64_t mem_used;
};

/* an open file of a device: its process's queue on the device's engines (as the user-space
 * device keeps one per process) */
struct gcusim_file {
	struct gcusim_dev *d;
	struct mutex lock;
	u64 engine_free[GCU_ENGINE_COUNT];
	u64 mem_held; /* device memory it took: given back at close */
};

static struct gcusim_dev *gcus;
static int ngcus;

/* the host clock of the shared queue code (user/gcu/region.h): CLOCK_MONOTONIC */
uint64_t gcu_host_ns(void)
{
	return ktime_get_ns();
}

static struct gcusim_dev *gcusim_of(struct file *f)
{
	return ((struct gcusim_file *)f->private_data)->d;
}

static int gcusim_open(struct inode *inode, struct file *f)
{
	struct gcusim_dev *d = container_of(f->private_data, struct gcusim_dev, misc);
	struct gcusim_file *gf = kzalloc(sizeof(*gf), GFP_KERNEL);

	if (!gf)
		return -ENOMEM;
	gf->d = d;
	mutex_init(&gf->lock);
	f->private_data = gf;
	return 0;
}

static int gcusim_release(struct inode *inode, struct file *f)
{
	struct gcusim_file *gf = f->private_data;

	atomic64_sub(gf->mem_held, &gf->d->mem_used);
	kfree(gf);
	return 0;
}

static noinline long gcusim_name(struct gcusim_dev *d, void __user *arg)
{
	struct gcusim_name n;
	char *name;
	long len;

	if (copy_from_user(&n, arg, sizeof(n)))
		return -EFAULT;
	name = kmalloc(GCU_NAME_MAX + 1, GFP_KERNEL);
	if (!name)
		return -ENOMEM;
	len = strncpy_from_user(name, u64_to_user_ptr(n.name), GCU_NAME_MAX + 1);
	if (len < 0) {
		kfree(name);
		return len;
	}
	name[min_t(long, len, GCU_NAME_MAX)] = '\0';
	n.id = gcu_names_add(&d->r, name);
	kfree(name);
	return copy_to_user(arg, &n, sizeof(n)) ? -EFAULT : 0;
}

static noinline long gcusim_mem(struct gcusim_file *gf, void __user *arg)
{
	struct gcusim_dev *d = gf->d;
	u64 total = (u64)mem_mb << 20;
	struct gcusim_mem m;
	long err = 0;

	if (copy_from_user(&m, arg, sizeof(m)))
		return -EFAULT;
	mutex_lock(&gf->lock);
	if (m.op == GCUSIM_MEM_ALLOC) {
		if (m.bytes > total || atomic64_add_return(m.bytes, &d->mem_used) > total) {
			if (m.bytes <= total)
				atomic64_sub(m.bytes, &d->mem_used);
			err = -ENOMEM;
		} else {
			gf->mem_held += m.bytes;
		}
	} else if (m.op == GCUSIM_MEM_FREE && m.bytes <= gf->mem_held) {
		gf->mem_held -= m.bytes;
		atomic64_sub(m.bytes, &d->mem_used);
	} else {
		err = -EINVAL;
	}
	mutex_unlock(&gf->lock);
	return err;
}

/* a command queued on the device and recorded, by the code the user-space device runs */
static noinline long gcusim_submit(struct gcusim_file *gf, void __user *arg)
{
	struct gcu_cmd c;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (c.engine >= GCU_ENGINE_COUNT)
		return -EINVAL;
	c.pid = current->tgid;
	c.tid = current->pid;
	mutex_lock(&gf->lock);
	gcu_device_submit(&gf->d->r, gf->engine_free, &c);
	mutex_unlock(&gf->lock);
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

/* the device's command ends at CLOCK_MONOTONIC deadline: sleep until then */
static noinline long gcusim_wait(u64 deadline)
{
	ktime_t t = ns_to_ktime(deadline);

	while (ktime_get_ns() < deadline) {
		set_current_state(TASK_INTERRUPTIBLE);
		schedule_hrtimeout(&t, HRTIMER_MODE_ABS);
		if (signal_pending(current))
			return -EINTR;
	}
	return 0;
}

static noinline long gcusim_info(struct gcusim_dev *d, void __user *arg)
{
	const struct gcu_region_hdr *h = d->region;
	struct gcusim_info info = {
		.device = d->id,
		.devices = ngcus,
		.region_size = d->size,
		.tick_hz = h->tick_hz,
		.mem_total = (u64)mem_mb << 20,
		.mem_used = atomic64_read(&d->mem_used),
	};

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long gcusim_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	struct gcusim_dev *d = gcusim_of(f);
	u64 deadline;

	switch (cmd) {
	case GCUSIM_IOC_INFO:
		return gcusim_info(d, (void __user *)arg);
	case GCUSIM_IOC_SUBMIT:
		return gcusim_submit(f->private_data, (void __user *)arg);
	case GCUSIM_IOC_NAME:
		return gcusim_name(d, (void __user *)arg);
	case GCUSIM_IOC_MEM:
		return gcusim_mem(f->private_data, (void __user *)arg);
	case GCUSIM_IOC_WAIT:
		if (copy_from_user(&deadline, (void __user *)arg, sizeof(deadline)))
			return -EFAULT;
		if (deadline > KTIME_MAX)
			return -EINVAL;
		return gcusim_wait(deadline);
	default:
		return -ENOTTY;
	}
}

static int gcusim_mmap(struct file *f, struct vm_area_struct *vma)
{
	struct gcusim_dev *d = gcusim_of(f);

	if (vma->vm_pgoff || vma->vm_end - vma->vm_start > PAGE_ALIGN(d->size))
		return -EINVAL;
	return remap_vmalloc_range(vma, d->region, 0);
}

/* the region's bytes, for a reader that looks at its header before mapping it */
static ssize_t gcusim_read(struct file *f, char __user *buf, size_t len, loff_t *pos)
{
	struct gcusim_dev *d = gcusim_of(f);

	return simple_read_from_buffer(buf, len, pos, d->region, d->size);
}

static const struct file_operations gcusim_fops = {
	.owner = THIS_MODULE,
	.open = gcusim_open,
	.release = gcusim_release,
	.unlocked_ioctl = gcusim_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = gcusim_mmap,
	.read = gcusim_read,
	.llseek = default_llseek,
};

static void gcusim_remove(void)
{
	for (int i = 0; i < ngcus; i++)
		if (gcus[i].misc.name)
			misc_deregister(&gcus[i].misc);
	for (int i = 0; i < ngcus; i++)
		vfree(gcus[i].region);
	kfree(gcus);
	gcus = NULL;
	ngcus = 0;
}

static int __init gcusim_init(void)
{
	int err;

	if (devices < 1 || devices > GCU_RO_MAX_DEVICES || !mem_mb || mem_mb > (1ul << 30)) {
		pr_err("gcusim: devices=%d (1 to %d), mem_mb=%lu (1 to 2^30)\n", devices,
		       GCU_RO_MAX_DEVICES, mem_mb);
		return -EINVAL;
	}
	gcus = kcalloc(devices, sizeof(*gcus), GFP_KERNEL);
	if (!gcus)
		return -ENOMEM;
	/* every region made before any node appears: nothing opened is torn down by a later
	 * failure (the nodes are made last, and unmade before the regions go) */
	for (ngcus = 0; ngcus < devices; ngcus++) {
		struct gcusim_dev *d = &gcus[ngcus];

		d->id = ngcus;
		atomic64_set(&d->mem_used, 0);
		d->size = gcu_region_layout_size();
		d->region = vmalloc_user(PAGE_ALIGN(d->size));
		if (!d->region) {
			gcusim_remove();
			return -ENOMEM;
		}
		gcu_region_init(d->region, d->id, gcu_default_tick_hz(d->id),
				gcu_default_drift_ppb(d->id));
		gcu_region_view(&d->r, d->region, d->region); /* nobody has mapped it yet */
		snprintf(d->name, sizeof(d->name), "gcu%d", d->id);
		d->misc.minor = MISC_DYNAMIC_MINOR;
		d->misc.fops = &gcusim_fops;
		d->misc.mode = 0666; /* every user's applications use the GCUs */
	}
	for (int i = 0; i < ngcus; i++) {
		gcus[i].misc.name = gcus[i].name;
		err = misc_register(&gcus[i].misc);
		if (err) {
			gcus[i].misc.name = NULL;
			gcusim_remove();
			return err;
		}
	}
	pr_info("gcusim: %d GCUs, /dev/gcu0..%d\n", ngcus, ngcus - 1);
	return 0;
}

static void __exit gcusim_exit(void)
{
	gcusim_remove();
}

module_init(gcusim_init);
module_exit(gcusim_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("topsprof's simulated GCU kernel-mode driver");
