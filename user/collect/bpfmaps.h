/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Reading BPF maps the way topsprof's counters are kept; releasing links. */
#ifndef TOPSPROF_BPFMAPS_H
#define TOPSPROF_BPFMAPS_H

#include <stddef.h>
#include <stdint.h>

/* the sum over CPUs of a per-CPU array's __u64 at key; 0 or -errno */
int percpu_u64_sum(int map_fd, uint32_t key, uint64_t *sum);
/* set a per-CPU array's __u64 at key to 0 on every CPU; 0 or -errno */
int percpu_u64_zero(int map_fd, uint32_t key);
/* delete every key of a hash map (keys of key_size bytes); 0 or -ENOMEM */
int bpf_map_clear(int map_fd, size_t key_size);

struct bpf_link;

/* Destroy links and close link descriptors, concurrently: each release of a uprobe link waits
 * for a grace period of the kernel's (60-90 ms on our VMs). The uprobe_multi links' waits overlap
 * (four links: one wait, 0.43 s -> 0.33 s for a whole run here); single uprobes' releases the
 * kernel mostly serializes (56 functions: 12.4 s -> 9.5 s). */
void bpf_release_links(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds);
/* the same, always here, whatever bpf_release_in_background said */
void bpf_release_now(struct bpf_link **links, size_t nlinks, const int *fds, size_t nfds);

/* From now on, a release of more than RELEASE_FOREGROUND_MAX links (single uprobes: about 0.1 s
 * each here, serialized by the kernel) is left to a child process that outlives topsprof: it
 * keeps the BPF and perf event descriptors only (no output, pipe, terminal or lock of the run's),
 * releases them and ends, while topsprof goes on at once. For the end of a run, when topsprof is
 * about to exit; only when no other thread runs (else the release is here). */
#define RELEASE_FOREGROUND_MAX 16
void bpf_release_in_background(void);
/* the pid of the last child a release was left to, or 0 */
int bpf_release_background_pid(void);

/* Links let go while the run goes on, or at its end (the scoped probes of a process that ended,
 * or of one still running when topsprof closes): handed, with
 * the caller's copies closed at once, to a child process that releases them as they come, with
 * their grace periods overlapping, and outlives topsprof until it is done (topsprof-detach, as
 * above; its own session, no descriptor but its socket). bpf_releaser_open starts it: early,
 * while topsprof is small, since the child shares the pages topsprof had then, and while no
 * other thread runs (-EDEADLK else); 0 or -errno.
 * Without it (NULL), or once it ended early, bpf_release_later releases them here and now.
 * bpf_releaser_close hands over what is left and lets it end: the child's pid (0: none). */
struct bpf_releaser;
int bpf_releaser_open(struct bpf_releaser **out);
void bpf_release_later(struct bpf_releaser *r, const int *fds, size_t n);
int bpf_releaser_close(struct bpf_releaser *r);

#endif
