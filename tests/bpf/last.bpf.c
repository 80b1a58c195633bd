/* SPDX-License-Identifier: MIT */
/* last: a global FIFO that sets SCX_OPS_ENQ_LAST. A task whose slice ends with nothing else to
 * run on its CPU comes to ops.enqueue with SCX_ENQ_LAST (without the flag the kernel keeps it
 * running and never asks); it goes back to that CPU's local DSQ and the CPU is kicked, the
 * follow-up scheduling event the flag asks for. ops.enqueue also counts every task it sees by
 * pid, so a test can tell which tasks the scheduler was given (SCX_OPS_SWITCH_PARTIAL). */
#include "scx_min.h"

#define SHARED_DSQ 0
#define SCX_ENQ_LAST (1ULL << 41) /* ext_internal.h enum scx_enq_flags */
#define SCX_OPS_ENQ_LAST (1ULL << 1) /* ext_internal.h enum scx_ops_flags */
#define NR_PIDS 64

char _license[] SEC("license") = "Dual MIT/GPL";

const volatile u64 slice_ns = 1000000; /* 1 ms: slices end often in a short run */

/* Read back by the host. */
u64 enq_total, enq_last, enq_by_pid[NR_PIDS];

SEC("struct_ops/last_select_cpu")
s32 last_select_cpu(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, (s32)ctx[1], ctx[2], &is_idle);

	if (is_idle)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	return cpu;
}

SEC("struct_ops/last_enqueue")
void last_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	u64 enq_flags = ctx[1];
	u32 pid = p->pid;

	enq_total++;
	if (pid < NR_PIDS)
		enq_by_pid[pid]++;
	if (enq_flags & SCX_ENQ_LAST) {
		enq_last++;
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, enq_flags);
		scx_bpf_kick_cpu(bpf_get_smp_processor_id(), 0);
		return;
	}
	scx_bpf_dsq_insert(p, SHARED_DSQ, slice_ns, enq_flags);
}

SEC("struct_ops/last_dispatch")
void last_dispatch(u64 *ctx)
{
	scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

SEC("struct_ops.s/last_init")
s32 last_init(u64 *ctx)
{
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops last_ops = {
	.select_cpu = (void *)last_select_cpu,
	.enqueue = (void *)last_enqueue,
	.dispatch = (void *)last_dispatch,
	.init = (void *)last_init,
	.flags = SCX_OPS_ENQ_LAST,
	.name = "last",
};
