/* SPDX-License-Identifier: MIT */
/* bad: a scheduler that misbehaves on request, for the ejection paths. `mode` (.rodata, set before
 * load) picks what ops.enqueue does wrong: 1 loops forever, 2 reads far outside the task, 3 calls
 * a kfunc the kernel lacks without checking, 4 reports scx_bpf_error, 5 queues on a DSQ that
 * dispatch never serves (a stall for the watchdog). 0 behaves as a global FIFO. */
#include "scx_min.h"

char _license[] SEC("license") = "Dual MIT/GPL";

const volatile u32 mode = 0;
const volatile u64 far = 1 << 20;
volatile u64 spins;

void scx_bpf_no_such_kfunc(u64 x) __ksym __weak;

SEC("struct_ops/bad_enqueue")
void bad_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	switch (mode) {
	case 1:
		for (;;)
			spins++;
	case 2:
		spins = *(volatile u64 *)((char *)p + far);
		break;
	case 3:
		scx_bpf_no_such_kfunc(1);
		break;
	case 4:
		scx_bpf_error("bad: mode 4 asked for an error");
		break;
	case 5:
		scx_bpf_dsq_insert(p, 1, SCX_SLICE_DFL, ctx[1]);
		return;
	}
	scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, SCX_SLICE_DFL, ctx[1]);
}

SEC("struct_ops.s/bad_init")
s32 bad_init(u64 *ctx)
{
	return scx_bpf_create_dsq(1, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops bad_ops = {
	.enqueue = (void *)bad_enqueue,
	.init = (void *)bad_init,
	.timeout_ms = 5000,
	.name = "bad",
};
