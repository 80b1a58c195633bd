/* SPDX-License-Identifier: MIT */
/* scx_kit.h: what the kit fixture needs beyond scx_min.h (task storage, timers, kptrs, cpumask
 * kfuncs, the numeric iterator, .kconfig and typed ksyms), written for schedplay's fixtures.
 * Names and values are v6.18's (include/uapi/linux/bpf.h, kernel/bpf/cpumask.c, ext_idle.c). */
#ifndef SCX_KIT_H
#define SCX_KIT_H
#include "scx_min.h"

#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_MAP_TYPE_TASK_STORAGE 29
#define BPF_F_NO_PREALLOC 1
#define BPF_LOCAL_STORAGE_GET_F_CREATE 1
#define CLOCK_MONOTONIC 1
#define __kptr __attribute__((btf_type_tag("kptr")))
#define __kconfig __attribute__((section(".kconfig")))
/* kernel/bpf/cpumask.c, kernel/bpf/bpf_iter.c and ext_idle.c (v6.18). */
struct cpumask;
struct bpf_cpumask;
struct bpf_iter_num { u64 __opaque[1]; } __attribute__((aligned(8)));
struct bpf_timer { u64 __opaque[2]; } __attribute__((aligned(8)));
struct bpf_cpumask *bpf_cpumask_create(void) __ksym;
void bpf_cpumask_release(struct bpf_cpumask *cpumask) __ksym;
void bpf_cpumask_set_cpu(u32 cpu, struct bpf_cpumask *cpumask) __ksym;
bool bpf_cpumask_test_cpu(u32 cpu, const struct cpumask *cpumask) __ksym;
u32 bpf_cpumask_first(const struct cpumask *cpumask) __ksym;
u32 bpf_cpumask_weight(const struct cpumask *cpumask) __ksym;
bool bpf_cpumask_intersects(const struct cpumask *src1, const struct cpumask *src2) __ksym;
int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __ksym;
int *bpf_iter_num_next(struct bpf_iter_num *it) __ksym;
void bpf_iter_num_destroy(struct bpf_iter_num *it) __ksym;
void bpf_rcu_read_lock(void) __ksym;
void bpf_rcu_read_unlock(void) __ksym;
const struct cpumask *scx_bpf_get_idle_cpumask(void) __ksym;
void scx_bpf_put_idle_cpumask(const struct cpumask *cpumask) __ksym;
s32 scx_bpf_pick_idle_cpu(const struct cpumask *cpus_allowed, u64 flags) __ksym;
s32 scx_bpf_cpu_node(s32 cpu) __ksym;

static void *(*bpf_per_cpu_ptr)(const void *percpu_ptr, u32 cpu) = (void *)153;
static void *(*bpf_task_storage_get)(void *map, struct task_struct *task, void *value,
				     u64 flags) = (void *)156;
static long (*bpf_task_storage_delete)(void *map, struct task_struct *task) = (void *)157;
static long (*bpf_timer_init)(struct bpf_timer *timer, void *map, u64 flags) = (void *)169;
static long (*bpf_timer_set_callback)(struct bpf_timer *timer, void *callback_fn) = (void *)170;
static long (*bpf_timer_start)(struct bpf_timer *timer, u64 nsecs, u64 flags) = (void *)171;
static long (*bpf_loop)(u32 nr_loops, void *callback_fn, void *callback_ctx, u64 flags) = (void *)181;
static void *(*bpf_kptr_xchg)(void *map_value, void *ptr) = (void *)194;

#endif
