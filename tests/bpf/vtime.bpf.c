/* SPDX-License-Identifier: MIT */
/* vtime: weighted virtual time over one shared DSQ, as scx_simple's weighted mode. A task's
 * vtime advances by its used slice scaled by 100 / weight; a sleeper is credited at most one
 * slice, so it cannot bank vtime while asleep. */
#include "scx_min.h"

#define SHARED_DSQ 0

char _license[] SEC("license") = "Dual MIT/GPL";

const volatile u64 slice_ns = SCX_SLICE_DFL;

u64 vtime_now;
u64 nr_running_calls;

static bool time_before(u64 a, u64 b)
{
	return (s64)(a - b) < 0;
}

/* Kept out of line: a bpf-to-bpf call into .text. */
static __noinline u64 scale_by_weight(u64 used, u32 weight)
{
	if (!weight)
		return used;
	return used * 100 / weight;
}

SEC("struct_ops/vtime_select_cpu")
s32 vtime_select_cpu(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, (s32)ctx[1], ctx[2], &is_idle);

	if (is_idle)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

SEC("struct_ops/vtime_enqueue")
void vtime_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	u64 vtime = p->scx.dsq_vtime;

	if (time_before(vtime, vtime_now - slice_ns))
		vtime = vtime_now - slice_ns;
	scx_bpf_dsq_insert_vtime(p, SHARED_DSQ, slice_ns, vtime, ctx[1]);
}

SEC("struct_ops/vtime_dispatch")
void vtime_dispatch(u64 *ctx)
{
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

SEC("struct_ops/vtime_running")
void vtime_running(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	__sync_fetch_and_add(&nr_running_calls, 1);
	if (time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
}

SEC("struct_ops/vtime_stopping")
void vtime_stopping(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	p->scx.dsq_vtime += scale_by_weight(slice_ns - p->scx.slice, p->scx.weight);
}

SEC("struct_ops/vtime_enable")
void vtime_enable(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	p->scx.dsq_vtime = vtime_now;
}

SEC("struct_ops.s/vtime_init")
s32 vtime_init(u64 *ctx)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops vtime_ops = {
	.select_cpu = (void *)vtime_select_cpu,
	.enqueue = (void *)vtime_enqueue,
	.dispatch = (void *)vtime_dispatch,
	.running = (void *)vtime_running,
	.stopping = (void *)vtime_stopping,
	.enable = (void *)vtime_enable,
	.init = (void *)vtime_init,
	.name = "vtime",
};
