//! End to end: the project's scx_simple-like fixture (tests/bpf/fifo.bpf.c: idle CPUs found at
//! wakeup get the task in their local DSQ, everything else goes through one shared DSQ) runs
//! hackbench on a preset as side B against EEVDF on side A, through the same `Experiment` the CLI's
//! `compare --scx-b` and the page build. Behaviour, not figures: every task runs, work completes,
//! the engine's invariants hold with tasks in DSQs, the DSQ counts agree with what the scheduler
//! does, and the run is deterministic.

mod golden;

use schedplay::experiment::scenario::scx::ScxChoice;
use schedplay::{Delta, Experiment, Run, Side, run_ab};

const FIFO: &[u8] = include_bytes!("bpf/fifo.bpf.o");

fn experiment() -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "gnr-2s-96c-snc3".into();
    e.workload.name = "hackbench".into();
    e.seconds = 0.03;
    e.scx_b = Some(ScxChoice::from_bytes("fifo.bpf.o", FIFO));
    e
}

#[test]
fn fifo_against_eevdf_runs_every_task_and_its_dsq_counts_agree() {
    let exp = experiment();
    exp.check_ab().unwrap();
    let mut run = Run::new(&exp, Side::B).unwrap();
    while !run.step(20_000) {
        run.engine().check_invariants().unwrap();
    }
    let events = run.engine().task_events();
    let b = run.report();
    let x = b.scx.as_ref().expect("side B ran under sched_ext");
    assert_eq!(
        (x.ops_name.as_str(), x.file.as_str()),
        ("fifo", "fifo.bpf.o")
    );
    assert!(x.exit.is_none(), "fifo ran to the end: {:?}", x.exit);
    // all counted tasks (hackbench's receivers) completed work
    let working = events.iter().filter(|&&n| n > 0).count();
    assert!(b.counted_tasks > 0);
    assert!(
        working >= b.counted_tasks,
        "{working} of {} counted tasks worked",
        b.counted_tasks
    );
    assert!(b.throughput_per_sec > 0.0);
    // fifo's ops.enqueue puts every task it gets in its shared DSQ 0 and nothing in the global
    // DSQ; ops.dispatch moves them to local DSQs, select_cpu inserts there directly
    let calls = |op: &str| x.op_calls.get(op).copied().unwrap_or(0);
    assert!(calls("select_cpu") > 0 && calls("dispatch") > 0);
    assert_eq!(x.dispatched.get("0x0").copied(), Some(calls("enqueue")));
    assert_eq!(x.dispatched.get("global"), None);
    assert!(x.dispatched.get("local").copied().unwrap_or(0) > 0);
    assert!(x.insns > 0);
    // the shared DSQ's and the idle mask's lines are in the c2c table by kernel name
    let names: Vec<&str> = b.cachelines.iter().map(|c| c.name.as_str()).collect();
    assert!(
        names.iter().any(|n| n.starts_with("scx_dispatch_q[0x0]")),
        "{names:?}"
    );
    assert!(names.contains(&"idle_masks"), "{names:?}");
}

#[test]
fn an_ab_against_eevdf_is_deterministic_and_prints_its_delta() {
    let exp = experiment();
    let (a1, b1) = run_ab(&exp);
    let (a2, b2) = run_ab(&exp);
    let (a1, b1, a2, b2) = (a1.unwrap(), b1.unwrap(), a2.unwrap(), b2.unwrap());
    assert_eq!(a1.report_hash, a2.report_hash);
    assert_eq!(b1.report_hash, b2.report_hash);
    assert!(a1.scx.is_none() && b1.scx.is_some());
    assert_ne!(a1.report_hash, b1.report_hash);
    let text = Delta::between(&a1, &b1).to_text(&a1, &b1);
    assert!(
        text.contains("B: (none); sched_ext fifo (fifo.bpf.o)"),
        "{text}"
    );
}

#[test]
fn an_object_the_loader_refuses_is_a_field_error_naming_it() {
    let mut exp = experiment();
    exp.scx_b = Some(ScxChoice::from_bytes("junk.bpf.o", b"not an object"));
    let err = Run::new(&exp, Side::B).err().expect("refused");
    assert_eq!(err.0[0].field, "scx_b");
    assert!(
        err.0[0]
            .message
            .contains("junk.bpf.o: refused by the loader"),
        "{err:?}"
    );
}

#[test]
fn scx_golden_report_hash() {
    let r = schedplay::run(&golden::scx_experiment(), Side::B).unwrap();
    assert!(r.scx.is_some());
    assert_eq!(
        r.report_hash,
        golden::SCX_HASH.trim(),
        "if on purpose, write {} to tests/golden/scx_hash.txt",
        r.report_hash
    );
}
