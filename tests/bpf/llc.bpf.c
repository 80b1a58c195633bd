/* SPDX-License-Identifier: MIT */
/* llc: one FIFO DSQ per last-level cache. A task is queued on the DSQ of the LLC of the CPU it
 * was last on; an idle CPU takes from its own LLC's DSQ first, then steals from the others in
 * order. The CPU → LLC map is .rodata the host writes before load, as scx schedulers take their
 * topology from user space. */
#include "scx_min.h"

#define MAX_CPUS 1024
#define MAX_LLCS 256

char _license[] SEC("license") = "Dual MIT/GPL";

const volatile u64 slice_ns; /* 0: the kernel's default, below */
/* scx's enum pattern: user space writes the kernel's value before load (SCX_ENUM_INIT). */
const volatile u64 __SCX_SLICE_DFL __weak;
#define SLICE (slice_ns ? slice_ns : __SCX_SLICE_DFL)
const volatile u32 nr_llcs = 1;
const volatile u32 cpu_llc[MAX_CPUS];

u64 nr_steals;

static u32 llc_of(s32 cpu)
{
	if (cpu < 0 || cpu >= MAX_CPUS)
		return 0;
	return cpu_llc[cpu];
}

SEC("struct_ops/llc_select_cpu")
s32 llc_select_cpu(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, (s32)ctx[1], ctx[2], &is_idle);

	if (is_idle)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SLICE, 0);
	return cpu;
}

SEC("struct_ops/llc_enqueue")
void llc_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	scx_bpf_dsq_insert(p, llc_of(scx_bpf_task_cpu(p)), SLICE, ctx[1]);
}

SEC("struct_ops/llc_dispatch")
void llc_dispatch(u64 *ctx)
{
	s32 cpu = (s32)ctx[0];
	u32 own = llc_of(cpu), i;

	if (scx_bpf_dsq_move_to_local(own))
		return;
	for (i = 1; i < nr_llcs && i < MAX_LLCS; i++) {
		u32 victim = (own + i) % nr_llcs;

		if (scx_bpf_dsq_move_to_local(victim)) {
			__sync_fetch_and_add(&nr_steals, 1);
			return;
		}
	}
}

SEC("struct_ops.s/llc_init")
s32 llc_init(u64 *ctx)
{
	u32 i;

	if (nr_llcs == 0 || nr_llcs > MAX_LLCS) {
		scx_bpf_error("nr_llcs out of range");
		return -22;
	}
	for (i = 0; i < nr_llcs && i < MAX_LLCS; i++) {
		s32 ret = scx_bpf_create_dsq(i, -1);

		if (ret)
			return ret;
	}
	return 0;
}

SEC(".struct_ops.link")
struct sched_ext_ops llc_ops = {
	.select_cpu = (void *)llc_select_cpu,
	.enqueue = (void *)llc_enqueue,
	.dispatch = (void *)llc_dispatch,
	.init = (void *)llc_init,
	.name = "llc",
};
