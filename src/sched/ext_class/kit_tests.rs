//! The kfuncs, helpers and map types scx_bpfland needs, each seen from outside through the
//! project's `kit` fixture (tests/bpf/kit.bpf.c) run by the engine: a CPU set built with
//! `bpf_loop` into a `bpf_cpumask` kept as a kptr decides where tasks run, task local storage
//! counts per task, a BPF timer ticks in simulated time, `.kconfig` and per-CPU ksyms read the
//! simulated kernel. Then what is still refused, each by name.

use super::tests::{engine, run_checked};
use super::*;
use crate::sched::ext::core::SCX_OPS_BUILTIN_IDLE_PER_NODE;

const KIT: &[u8] = include_bytes!("../../../tests/bpf/kit.bpf.o");

fn bss_u64(x: &ExtClass, name: &str) -> u64 {
    let b = x.sched.obj.read_global(name).expect(name);
    let mut v = [0u8; 8];
    v[..b.len().min(8)].copy_from_slice(&b[..b.len().min(8)]);
    u64::from_le_bytes(v)
}

#[test]
fn kit_runs_tasks_only_on_the_cpus_of_its_bpf_loop_built_kptr_cpumask() {
    let mut e = engine(2, KIT, &[]);
    run_checked(&mut e, 30_000_000);
    e.flush_accounting();
    let x = e.ext_class().unwrap();
    assert!(x.sched.enabled(), "{:?}", x.sched.k.exit);
    let n = e.cpus.len() as u64;
    // bpf_loop set every even CPU; the open-coded iterator counted them as bpf_cpumask_weight did
    assert_eq!(bss_u64(x, "nr_allowed"), n.div_ceil(2));
    // bpf_loop stops at the first non-zero return: callbacks 0..=3
    assert_eq!(bss_u64(x, "loop_ret"), 4);
    assert_eq!(bss_u64(x, "misplaced"), 0);
    assert!(bss_u64(x, "idle_seen") > 0, "the idle cpumask was read");
    // placement as the engine saw it: user time on even CPUs only
    let user = |c: usize| e.metrics.cpu_sym[c][Sym::User as usize];
    let odd: u64 = (1..e.cpus.len()).step_by(2).map(user).sum();
    let even: u64 = (0..e.cpus.len()).step_by(2).map(user).sum();
    assert_eq!(odd, 0, "no task ran on an odd CPU");
    assert!(even > 0);
    // the kptr holds one live bpf_cpumask the program made
    assert_eq!(x.sched.k.masks.refs.len(), 1);
}

#[test]
fn kit_counts_each_tasks_enqueues_and_runs_in_task_local_storage() {
    let mut e = engine(2, KIT, &[]);
    run_checked(&mut e, 20_000_000);
    let x = e.ext_class().unwrap();
    let s = &x.sched;
    let m = s.obj.map("task_ctx_stor").unwrap();
    // ops.init_task made one value per task (BPF_LOCAL_STORAGE_GET_F_CREATE)
    assert_eq!(m.storage_len(), e.tasks.len());
    let (mut enq, mut runs) = (0, 0);
    for t in 0..s.k.tasks.len() {
        let a = m
            .storage_addr(s.task_addr(t))
            .expect("each task has its value");
        enq += s.obj.mem.load(a, 8).unwrap();
        runs += s.obj.mem.load(a + 8, 8).unwrap();
    }
    assert_eq!(enq, bss_u64(x, "enq_total"));
    assert_eq!(enq, s.k.op_calls["enqueue"]);
    assert_eq!(runs, s.k.op_calls["running"]);
    assert!(runs > 0);
}

#[test]
fn kit_timer_fires_every_simulated_millisecond() {
    let mut e = engine(1, KIT, &[]);
    run_checked(&mut e, 20_000_000);
    let x = e.ext_class().unwrap();
    let fired = bss_u64(x, "timer_fires");
    // armed at 1 ms by ops.init (time 0), re-armed 1 ms later by each callback: 1..=20 ms
    assert_eq!(fired, 20, "{:?}", x.sched.k.op_calls);
    assert_eq!(x.sched.k.timers.fired, fired);
}

#[test]
fn kit_reads_the_kconfig_version_and_per_cpu_sd_llc_id() {
    let e = engine(2, KIT, &[]);
    let x = e.ext_class().unwrap();
    assert_eq!(
        bss_u64(x, "kernel_version"),
        0x06_12_00,
        "KERNEL_VERSION(6, 18, 0)"
    );
    assert_eq!(bss_u64(x, "llc_of_cpu0") as i64, 0);
    // sd_llc_id is the first CPU of the LLC (update_top_cache_domain)
    let last = e.cpus.len() - 1;
    let llc = e.topo.cpus[last].llc;
    let first = e.topo.cpus.iter().position(|c| c.llc == llc).unwrap();
    assert_eq!(bss_u64(x, "llc_of_last") as i64, first as i64);
    assert!(
        first > 0,
        "the 2-socket machine's last CPU is in another LLC"
    );
}

#[test]
fn global_idle_mask_with_per_node_tracking_ejects_the_scheduler_with_the_kernels_error() {
    let flags = ("ops.flags", SCX_OPS_BUILTIN_IDLE_PER_NODE);
    let mut e = engine(2, KIT, &[flags]);
    run_checked(&mut e, 10_000_000);
    let x = e.ext_class().unwrap();
    let exit = x.sched.k.exit.as_ref().expect("ejected");
    assert!(
        exit.msg.contains("SCX_OPS_BUILTIN_IDLE_PER_NODE"),
        "{exit:?}"
    );
    assert!(x.switched_back);
    assert!(
        e.task_events().iter().sum::<u64>() > 0,
        "the run went on on fair"
    );
}

#[test]
fn what_is_still_unsupported_is_refused_at_load_by_name() {
    for (obj, want) in [
        (
            &include_bytes!("../../../tests/bpf/refuse_fentry.bpf.o")[..],
            "traces pick_next_task_fair (fentry)",
        ),
        (
            &include_bytes!("../../../tests/bpf/refuse_ksym.bpf.o")[..],
            "typed ksym runqueues is not provided",
        ),
        (
            &include_bytes!("../../../tests/bpf/refuse_ringbuf.bpf.o")[..],
            "type 27 (ringbuf) is not supported",
        ),
    ] {
        let err = ScxSched::open(obj, Config { nr_cpus: 4 })
            .err()
            .expect(want);
        assert!(err.0.contains(want), "{err}");
    }
}

#[test]
fn what_user_space_sets_before_load_is_checked_by_name() {
    let mut s = ScxSched::open(KIT, Config { nr_cpus: 4 }).unwrap();
    let e = s.set_option("ops.nope", 1).unwrap_err();
    assert!(e.contains("no data member 'nope'"), "{e}");
    let e = s.set_option("ops.timeout_ms", 40_000).unwrap_err();
    assert!(e.contains("above 30000"), "{e}");
    s.set_option("ops.timeout_ms", 5000).unwrap();
    assert_eq!(s.k.timeout_ns, 5_000_000_000);
    s.set_option("ops.flags", SCX_OPS_BUILTIN_IDLE_PER_NODE)
        .unwrap();
    assert!(s.k.per_node_idle);
    let e = s.set_option("no_such_global", 1).unwrap_err();
    assert!(e.contains("no_such_global"), "{e}");
}
