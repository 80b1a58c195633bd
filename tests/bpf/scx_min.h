/* SPDX-License-Identifier: MIT */
/* scx_min.h: the least a sched_ext scheduler needs, written for schedplay's fixtures.
 * Self-contained: no vmlinux.h, no libbpf headers. Kernel types list only the fields the
 * fixtures use; preserve_access_index makes every access a CO-RE relocation, resolved by the
 * loader against the simulator's own layout (as libbpf resolves it against kernel BTF).
 * Names and values are v6.18's (include/linux/sched/ext.h, kernel/sched/ext_internal.h). */
#ifndef SCX_MIN_H
#define SCX_MIN_H

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;
typedef _Bool bool;
#define true 1
#define false 0
#define NULL ((void *)0)

#define SEC(n) __attribute__((section(n), used))
#define __ksym __attribute__((section(".ksyms")))
#define __weak __attribute__((weak))
#define __core __attribute__((preserve_access_index))
#define __noinline __attribute__((noinline))
#define __uint(name, val) int (*name)[val]
#define __type(name, val) typeof(val) *name
#define ksym_exists(sym) (!!(sym)) /* libbpf's bpf_ksym_exists() */
#define READ_ONCE(x) (*(volatile typeof(x) *)&(x))

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6

/* 64-bit enum values are spelled as macros: clang-14 truncates ENUM64 in BTF. */
#define SCX_DSQ_FLAG_BUILTIN (1ULL << 63)
#define SCX_DSQ_GLOBAL (SCX_DSQ_FLAG_BUILTIN | 1)
#define SCX_DSQ_LOCAL (SCX_DSQ_FLAG_BUILTIN | 2)
#define SCX_DSQ_LOCAL_ON (SCX_DSQ_FLAG_BUILTIN | (1ULL << 62))

enum scx_public_consts { SCX_OPS_NAME_LEN = 128, SCX_SLICE_DFL = 20000000 };
enum scx_enq_flags { SCX_ENQ_WAKEUP = 1, SCX_ENQ_HEAD = 16 };
enum scx_kick_flags { SCX_KICK_IDLE = 1, SCX_KICK_PREEMPT = 2 };

struct sched_ext_entity {
	u32 flags;
	u32 weight;
	u64 slice;
	u64 dsq_vtime;
} __core;

struct task_struct {
	int pid;
	struct sched_ext_entity scx;
} __core;

struct scx_exit_info {
	int kind;
	s64 exit_code;
} __core;

struct scx_init_task_args {
	bool fork;
} __core;

/* The struct_ops type: the loader matches members to the host's by name. */
struct sched_ext_ops {
	s32 (*select_cpu)(struct task_struct *p, s32 prev_cpu, u64 wake_flags);
	void (*enqueue)(struct task_struct *p, u64 enq_flags);
	void (*dispatch)(s32 cpu, struct task_struct *prev);
	void (*running)(struct task_struct *p);
	void (*stopping)(struct task_struct *p, bool runnable);
	void (*enable)(struct task_struct *p);
	s32 (*init_task)(struct task_struct *p, struct scx_init_task_args *args);
	s32 (*init)(void);
	void (*exit)(struct scx_exit_info *info);
	u64 flags;
	u32 timeout_ms;
	char name[128];
};

/* v6.18 kfuncs (kernel/sched/ext.c, ext_idle.c). */
s32 scx_bpf_select_cpu_dfl(struct task_struct *p, s32 prev_cpu, u64 wake_flags, bool *is_idle) __ksym;
void scx_bpf_dsq_insert(struct task_struct *p, u64 dsq_id, u64 slice, u64 enq_flags) __ksym;
void scx_bpf_dsq_insert_vtime(struct task_struct *p, u64 dsq_id, u64 slice, u64 vtime,
			      u64 enq_flags) __ksym;
bool scx_bpf_dsq_move_to_local(u64 dsq_id) __ksym;
s32 scx_bpf_create_dsq(u64 dsq_id, s32 node) __ksym;
s32 scx_bpf_dsq_nr_queued(u64 dsq_id) __ksym;
s32 scx_bpf_task_cpu(const struct task_struct *p) __ksym;
void scx_bpf_kick_cpu(s32 cpu, u64 flags) __ksym;
u32 scx_bpf_nr_cpu_ids(void) __ksym;
void scx_bpf_error_bstr(char *fmt, u64 *data, u32 data__sz) __ksym;
u64 scx_bpf_now(void) __ksym __weak;

/* Helpers by their uapi numbers (include/uapi/linux/bpf.h). */
static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value, u64 flags) = (void *)2;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u32 (*bpf_get_smp_processor_id)(void) = (void *)8;

/* scx_bpf_error("fmt") without arguments, as scx's macro expands it. */
#define scx_bpf_error(fmt)                                         \
	({                                                         \
		static char ___fmt[] = fmt;                        \
		scx_bpf_error_bstr(___fmt, NULL, 0);               \
	})

#endif
