/* SPDX-License-Identifier: MIT */
/* kit: a scheduler that uses what scx_bpfland needs beyond the basics, each in a way a test can
 * see from outside. Only even CPUs run tasks: init builds that set as a bpf_cpumask with
 * bpf_loop, keeps it as a __kptr (bpf_kptr_xchg) and counts it with an open-coded iterator;
 * select_cpu picks an idle CPU in it (scx_bpf_pick_idle_cpu) and reads the idle cpumask; tasks
 * that find none wait in a shared DSQ that only even CPUs consume. Task local storage counts
 * each task's enqueues and runs; a BPF timer ticks every millisecond; the .kconfig version and
 * the per-CPU sd_llc_id (bpf_per_cpu_ptr) are read back at init. */
#include "scx_kit.h"

char _license[] SEC("license") = "Dual MIT/GPL";

#define SHARED_DSQ 0
#define TIMER_NS 1000000ULL

extern unsigned int LINUX_KERNEL_VERSION __kconfig;
extern const int sd_llc_id __ksym;

struct task_ctx {
	u64 enqueues;
	u64 runs;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_ctx);
} task_ctx_stor SEC(".maps");

struct timer_elem {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct timer_elem);
} ticker SEC(".maps");

/* The even CPUs, owned by the program (a kptr in a private data section). */
struct bpf_cpumask __kptr *allowed SEC(".data.kit");

/* Read back by the host. */
u64 nr_allowed, loop_ret, timer_fires, misplaced, idle_seen, enq_total, run_total;
u64 kernel_version;
s64 llc_of_cpu0, llc_of_last;
u32 nr_cpus;

struct fill_ctx {
	struct bpf_cpumask *mask;
};

static long set_even(u32 i, struct fill_ctx *c)
{
	if (i % 2 == 0)
		bpf_cpumask_set_cpu(i, c->mask);
	return 0;
}

static long stop_at_three(u32 i, void *unused)
{
	return i == 3;
}

static long tick(void *map, u32 *key, struct timer_elem *e)
{
	timer_fires++;
	bpf_timer_start(&e->timer, TIMER_NS, 0);
	return 0;
}

static const struct cpumask *even(void)
{
	return (const struct cpumask *)allowed;
}

SEC("struct_ops/kit_select_cpu")
s32 kit_select_cpu(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	s32 prev = (s32)ctx[1], cpu;
	const struct cpumask *mask = even(), *idle;

	if (!mask)
		return prev;
	idle = scx_bpf_get_idle_cpumask();
	if (bpf_cpumask_intersects(mask, idle))
		idle_seen++;
	scx_bpf_put_idle_cpumask(idle);
	cpu = scx_bpf_pick_idle_cpu(mask, 0);
	if (cpu >= 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, SCX_SLICE_DFL, 0);
		return cpu;
	}
	return bpf_cpumask_test_cpu(prev, mask) ? prev : (s32)bpf_cpumask_first(mask);
}

SEC("struct_ops/kit_enqueue")
void kit_enqueue(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	struct task_ctx *t = bpf_task_storage_get(&task_ctx_stor, p, NULL, 0);

	if (t)
		t->enqueues++;
	enq_total++;
	scx_bpf_dsq_insert(p, SHARED_DSQ, SCX_SLICE_DFL, ctx[1]);
}

SEC("struct_ops/kit_dispatch")
void kit_dispatch(u64 *ctx)
{
	s32 cpu = (s32)ctx[0];
	const struct cpumask *mask = even();

	if (mask && bpf_cpumask_test_cpu(cpu, mask))
		scx_bpf_dsq_move_to_local(SHARED_DSQ);
}

SEC("struct_ops/kit_running")
void kit_running(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];
	struct task_ctx *t = bpf_task_storage_get(&task_ctx_stor, p, NULL, 0);
	const struct cpumask *mask = even();

	if (t)
		t->runs++;
	run_total++;
	if (!mask || !bpf_cpumask_test_cpu(bpf_get_smp_processor_id(), mask))
		misplaced++;
}

SEC("struct_ops.s/kit_init_task")
s32 kit_init_task(u64 *ctx)
{
	struct task_struct *p = (void *)ctx[0];

	if (!bpf_task_storage_get(&task_ctx_stor, p, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE))
		return -12; /* -ENOMEM */
	return 0;
}

SEC("struct_ops.s/kit_init")
s32 kit_init(u64 *ctx)
{
	struct fill_ctx c;
	struct bpf_cpumask *old;
	struct bpf_iter_num it;
	struct timer_elem *e;
	const int *llc;
	u32 key = 0;
	int *v;

	nr_cpus = scx_bpf_nr_cpu_ids();
	kernel_version = LINUX_KERNEL_VERSION;
	llc = bpf_per_cpu_ptr(&sd_llc_id, 0);
	llc_of_cpu0 = llc ? *llc : -1;
	llc = bpf_per_cpu_ptr(&sd_llc_id, nr_cpus - 1);
	llc_of_last = llc ? *llc : -1;

	c.mask = bpf_cpumask_create();
	if (!c.mask)
		return -12;
	bpf_loop(nr_cpus, set_even, &c, 0);
	loop_ret = bpf_loop(100, stop_at_three, NULL, 0);
	old = bpf_kptr_xchg(&allowed, c.mask);
	if (old)
		bpf_cpumask_release(old);

	bpf_rcu_read_lock();
	bpf_iter_num_new(&it, 0, nr_cpus);
	while ((v = bpf_iter_num_next(&it)))
		if (even() && bpf_cpumask_test_cpu(*v, even()))
			nr_allowed++;
	bpf_iter_num_destroy(&it);
	if (even() && nr_allowed != bpf_cpumask_weight(even()))
		scx_bpf_error("the iterator and bpf_cpumask_weight disagree");
	bpf_rcu_read_unlock();

	e = bpf_map_lookup_elem(&ticker, &key);
	if (!e)
		return -2;
	bpf_timer_init(&e->timer, &ticker, CLOCK_MONOTONIC);
	bpf_timer_set_callback(&e->timer, tick);
	bpf_timer_start(&e->timer, TIMER_NS, 0);
	return scx_bpf_create_dsq(SHARED_DSQ, -1);
}

SEC(".struct_ops.link")
struct sched_ext_ops kit_ops = {
	.select_cpu = (void *)kit_select_cpu,
	.enqueue = (void *)kit_enqueue,
	.dispatch = (void *)kit_dispatch,
	.running = (void *)kit_running,
	.init_task = (void *)kit_init_task,
	.init = (void *)kit_init,
	.name = "kit",
};
