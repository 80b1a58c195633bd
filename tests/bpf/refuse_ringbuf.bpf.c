/* SPDX-License-Identifier: MIT */
/* refuse_ringbuf: a BPF_MAP_TYPE_RINGBUF map (scx schedulers use one to stream events to user
 * space, which the simulator does not run): refused by its type's name at load. */
#include "scx_kit.h"

char _license[] SEC("license") = "Dual MIT/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} events SEC(".maps");

SEC("struct_ops.s/refuse_ringbuf_init")
s32 refuse_ringbuf_init(u64 *ctx)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&events, &key) ? 0 : -2;
}

SEC(".struct_ops.link")
struct sched_ext_ops refuse_ringbuf_ops = {
	.init = (void *)refuse_ringbuf_init,
	.name = "refuse_ringbuf",
};
