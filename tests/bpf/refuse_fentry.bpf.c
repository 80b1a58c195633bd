/* SPDX-License-Identifier: MIT */
/* refuse_fentry: an fentry program on a kernel function other than bpf_scx_reg. The simulator
 * runs only scx's attach probe (fentry/bpf_scx_reg); tracing another function is refused by
 * name at load. */
#include "scx_min.h"

char _license[] SEC("license") = "Dual MIT/GPL";

u64 seen;

SEC("fentry/pick_next_task_fair")
int trace_pick(void *ctx)
{
	seen++;
	return 0;
}

SEC(".struct_ops.link")
struct sched_ext_ops refuse_fentry_ops = {
	.name = "refuse_fentry",
};
