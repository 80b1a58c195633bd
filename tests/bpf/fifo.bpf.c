/* SPDX-License-Identifier: MIT */
/* fifo: a global FIFO, as scx_simple's default mode. Idle CPUs found on wakeup get the task
 * directly in their local DSQ; everything else goes through one shared user DSQ. */
#include "scx_min.h"

#define SHARED_DSQ 0

char _license[] SEC("license") = "Dual MIT/GPL";

const volatile u64 slice_ns = SCX_SLICE_DFL; /* .rodata option, set before load */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, u32);
	__type(value, u64);
	__uint(max_entries, 2); /* [direct to local, through the shared DSQ] */
} stats SEC(".maps");

u64 last_enq_ns; /* .bss: read back by the host */
int exit_kind;
s64 exit_code;

static void stat_inc(u32 idx)
{
	u64 *cnt = bpf_map_lookup_elem(&stats, &idx);
	if (cnt)
		(*cnt)++;
}

SEC("struct_ops/fifo_select_cpu")
s32 fifo_select_cpu(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, (s32)ctx[1], ctx[2], &is_idle);

	if (is_idle) {
		stat_inc(0);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	}
	return cpu;
}

SEC("struct_ops/fifo_enqueue")
void fifo_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	stat_inc(1);
	if (ksym_exists(scx_bpf_now)) /* a weak kfunc: 0 on a kernel without it */
		last_enq_ns = scx_bpf_now();
	scx_bpf_dsq_insert(p, SHARED_DSQ, slice_ns, ctx[1]);
}

SEC("struct_ops/fifo_dispatch")
void fifo_dispatch(u64 *ctx)
{
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

SEC("struct_ops.s/fifo_init")
s32 fifo_init(u64 *ctx)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC("struct_ops/fifo_exit")
void fifo_exit(u64 *ctx)
{
	struct scx_exit_info *ei = (void *)ctx[0];

	if (__builtin_preserve_field_info(ei->exit_code, 2 /* FIELD_EXISTS */))
		exit_code = ei->exit_code;
	/* The first exit wins, as UEI_RECORD's cmpxchg makes it. */
	__sync_val_compare_and_swap(&exit_kind, 0, ei->kind);
}

SEC(".struct_ops.link")
struct sched_ext_ops fifo_ops = {
	.select_cpu = (void *)fifo_select_cpu,
	.enqueue = (void *)fifo_enqueue,
	.dispatch = (void *)fifo_dispatch,
	.init = (void *)fifo_init,
	.exit = (void *)fifo_exit,
	.name = "fifo",
};
