//! The golden scenario whose report hash must be identical natively, in Node and in Chromium.

use schedplay::experiment::scenario::Experiment;

/// Expected `report_hash` of `experiment()`, side B. Update it (and say why in the commit) only
/// when the model changes on purpose.
pub const HASH: &str = include_str!("hash.txt");

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
