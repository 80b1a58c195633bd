//! The ext class seam driven by the engine: the project's fixtures (tests/bpf) run every task of
//! a workload, the structural invariants hold with the tasks in DSQs, and a scheduler that fails
//! hands its tasks back to the fair class and the run goes on.

use super::*;
use crate::experiment::scenario::{Experiment, Side};

const FIFO: &[u8] = include_bytes!("../../../tests/bpf/fifo.bpf.o");
const BAD: &[u8] = include_bytes!("../../../tests/bpf/bad.bpf.o");

/// A `sockets` × 4-core custom machine running hackbench under the BPF scheduler `bpf` with
/// `.rodata` options `opts`.
pub(super) fn engine(sockets: u32, bpf: &[u8], opts: &[(&str, u64)]) -> Engine {
    // 2 groups of 2 × 4 tasks: few enough that every one runs within the first milliseconds
    let knobs = [("groups", "2"), ("fds", "4")];
    engine_with(sockets, "hackbench", &knobs, bpf, opts)
}

/// A `sockets` × 4-core custom machine running `workload` (with `knobs`) under the BPF
/// scheduler `bpf` with options `opts`.
pub(super) fn engine_with(
    sockets: u32,
    workload: &str,
    knobs: &[(&str, &str)],
    bpf: &[u8],
    opts: &[(&str, u64)],
) -> Engine {
    let mut x = Experiment::default();
    x.machine.preset = "custom".into();
    x.machine.overrides.sockets = Some(sockets);
    x.machine.overrides.cores_per_socket = Some(4);
    x.workload.name = workload.into();
    for (k, v) in knobs {
        x.workload.knobs.insert(k.to_string(), (*v).into());
    }
    let spec = x.run_spec(Side::A).unwrap();
    let n = spec.topo.nr_cpus();
    let wl = crate::workload::build(&spec.workload, &spec.knobs, n, &spec.assume).unwrap();
    let o = ScxObject {
        bytes: bpf.to_vec(),
        options: opts.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
    };
    Engine::new_with_scx(
        spec.topo,
        spec.patches,
        spec.hz,
        1,
        wl,
        10_000_000,
        spec.assume,
        Some(&o),
    )
    .unwrap()
}

/// Runs to `until` ns in 1 ms steps, checking the invariants at every step.
pub(super) fn run_checked(e: &mut Engine, until: u64) {
    let mut t = 0;
    while t < until {
        t += 1_000_000;
        e.run_until(t, u64::MAX);
        e.check_invariants().unwrap();
    }
}

#[test]
fn fifo_runs_every_hackbench_task_with_the_fair_balancers_off() {
    let mut e = engine(2, FIFO, &[]);
    assert!(e.scx_on(), "{:?}", e.ext_class().unwrap().sched.k.exit);
    run_checked(&mut e, 50_000_000);
    let x = e.ext_class().unwrap();
    assert!(x.sched.enabled(), "{:?}", x.sched.k.exit);
    let ran = e.tasks.iter().filter(|t| t.sum_exec > 0).count();
    assert_eq!(
        ran,
        e.tasks.len(),
        "every task ran: {:?}",
        x.sched.k.op_calls
    );
    assert!(e.task_events().iter().sum::<u64>() > 0, "work completed");
    let calls = &x.sched.k.op_calls;
    for op in ["select_cpu", "enqueue", "dispatch"] {
        assert!(calls.get(op).copied().unwrap_or(0) > 0, "ops.{op} called");
    }
    // fifo's ops.enqueue inserts every task it gets into its shared DSQ 0, and select_cpu
    // inserts into a local DSQ only the tasks it direct-dispatches; each DSQ 0 task reaches a
    // local DSQ only by ops.dispatch's move, so local inserts ≥ DSQ 0's (less those still there)
    let d = &x.sched.k.dispatched;
    assert_eq!(d.get(&0).copied().unwrap_or(0), calls["enqueue"]);
    let local: u64 = (d.iter())
        .filter(|(id, _)| **id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON)
        .map(|(_, n)| n)
        .sum();
    let still = x.sched.k.user[&0].nr() as u64;
    assert!(local >= calls["enqueue"] - still, "{d:?}");
    // the fair class's balancers did not run
    assert_eq!(e.metrics.total(Sym::SchedBalanceDomains), 0);
    assert_eq!(e.metrics.total(Sym::SchedBalanceNewidle), 0);
    // the shared DSQ's line and the idle mask are in the cache-line model
    let names: Vec<String> = (0..e.lines.lines.len())
        .map(|l| e.lines.lines[l].name.clone())
        .collect();
    assert!(names.iter().any(|n| n == "idle_masks"), "{names:?}");
    assert!(
        names.iter().any(|n| n.starts_with("scx_dispatch_q")),
        "{names:?}"
    );
}

#[test]
fn an_erroring_scheduler_hands_its_tasks_back_to_fair_and_the_run_goes_on() {
    // bad.bpf.c mode 4: scx_bpf_error from ops.enqueue, the first time a task is enqueued
    let mut e = engine(1, BAD, &[("mode", 4)]);
    assert!(!e.scx_on(), "the error ended it during scx_enable");
    let ei = e.ext_class().unwrap().sched.k.exit.clone().unwrap();
    assert_eq!(ei.reason, "scx_bpf_error");
    assert!(ei.msg.contains("mode 4"), "{}", ei.msg);
    run_checked(&mut e, 30_000_000);
    assert!(
        e.tasks.iter().all(|t| t.sum_exec > 0),
        "every task ran on fair"
    );
    assert!(e.task_events().iter().sum::<u64>() > 0);
}

#[test]
fn an_endless_loop_is_ejected_mid_run_and_fair_takes_over() {
    // mode 1: ops.enqueue loops until the instruction budget ends it
    let mut e = engine(1, BAD, &[("mode", 1)]);
    run_checked(&mut e, 30_000_000);
    let ei = e.ext_class().unwrap().sched.k.exit.clone().unwrap();
    assert!(ei.msg.contains("ops.enqueue"), "{}", ei.msg);
    assert!(!e.scx_on());
    assert!(
        e.tasks.iter().all(|t| t.sum_exec > 0),
        "every task ran on fair"
    );
}

#[test]
fn unknown_global_option_is_refused_by_name() {
    let mut x = Experiment::default();
    x.workload.name = "spin".into();
    let spec = x.run_spec(Side::A).unwrap();
    let n = spec.topo.nr_cpus();
    let wl = crate::workload::build(&spec.workload, &spec.knobs, n, &spec.assume).unwrap();
    let o = ScxObject {
        bytes: FIFO.to_vec(),
        options: vec![("no_such_option".into(), 1)],
    };
    let err = Engine::new_with_scx(
        spec.topo,
        spec.patches,
        250,
        1,
        wl,
        10_000_000,
        spec.assume,
        Some(&o),
    )
    .err()
    .unwrap();
    assert!(err.contains("no_such_option"), "{err}");
}

#[test]
fn a_partial_switch_scheduler_is_refused_by_name() {
    let mut s = ScxSched::open(FIFO, Config { nr_cpus: 2 }).unwrap();
    assert!(check_supported(&s).is_ok(), "fifo switches every task");
    let flags = s.ops.data.get_mut("flags").expect("fifo's ops has flags");
    flags[0] |= SCX_OPS_SWITCH_PARTIAL as u8;
    let err = check_supported(&s).unwrap_err();
    assert!(err.contains("SCX_OPS_SWITCH_PARTIAL"), "{err}");
}
