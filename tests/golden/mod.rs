//! The golden scenario whose report hash must be identical natively, in Node and in Chromium.

use schedplay::experiment::scenario::Experiment;

/// Expected `report_hash` of `experiment()`, side B. Update it (and say why in the commit) only
/// when the model changes on purpose.
#[allow(dead_code)] // not every test binary that includes this module uses each item
pub const HASH: &str = include_str!("hash.txt");

#[allow(dead_code)]
pub fn experiment() -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(8);
    e.machine.overrides.nodes_per_socket = Some(2);
    e.seconds = 0.02;
    e.seed = 42;
    e.b = vec!["cache-aware".into(), "cas-skip-many-threads".into()];
    e
}

/// Expected `report_hash` of `scx_experiment()`, side B: the project's fifo fixture running the
/// tasks in the interpreter, natively and in wasm alike. Update it (and say why) only when the
/// model or the fixture changes on purpose.
#[allow(dead_code)]
pub const SCX_HASH: &str = include_str!("scx_hash.txt");

/// A small hackbench A/B whose side B runs under tests/bpf/fifo.bpf.o (sched_ext).
#[allow(dead_code)]
pub fn scx_experiment() -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(4);
    e.workload.name = "hackbench".into();
    e.seconds = 0.01;
    e.seed = 42;
    e.scx_b = Some(schedplay::experiment::scenario::scx::ScxChoice::from_bytes(
        "fifo.bpf.o",
        include_bytes!("../bpf/fifo.bpf.o"),
    ));
    e
}
