/* SPDX-License-Identifier: MIT */
/* refuse_ksym: a (non-weak) typed ksym the simulated kernel does not describe (`runqueues`):
 * refused by name at load, as libbpf refuses an extern the kernel's BTF lacks. */
#include "scx_kit.h"

char _license[] SEC("license") = "Dual MIT/GPL";

struct rq;
extern const struct rq runqueues __ksym;
u64 rq_addr;

SEC("struct_ops.s/refuse_ksym_init")
s32 refuse_ksym_init(u64 *ctx)
{
	rq_addr = (u64)bpf_per_cpu_ptr(&runqueues, 0);
	return 0;
}

SEC(".struct_ops.link")
struct sched_ext_ops refuse_ksym_ops = {
	.init = (void *)refuse_ksym_init,
	.name = "refuse_ksym",
};
