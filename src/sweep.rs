//! The scaling sweep: one experiment on machines of growing CPU count (2 sockets, SMT2, the base
//! preset's hardware figures and nodes per socket), A and B at each size: where does contention
//! start to bite.

use crate::Delta;
use crate::error::Invalid;
use crate::scenario::Experiment;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepPoint {
    pub cpus: u32,
    pub a_throughput: f64,
    pub b_throughput: f64,
    pub a_contention_pct: f64,
    pub b_contention_pct: f64,
    pub throughput_pct: f64,
    pub events: u64,
}

/// The experiment resized to `cpus` CPUs (2 sockets × cores × SMT2); workload knobs that default to
/// the CPU count follow it.
pub fn resized(exp: &Experiment, cpus: u32) -> Experiment {
    let mut e = exp.clone();
    let o = &mut e.machine.overrides;
    o.sockets = Some(2);
    o.smt = Some(2);
    o.cores_per_socket = Some((cpus / 4).max(1));
    o.cores_per_llc = None;
    e
}

pub fn point(exp: &Experiment, cpus: u32) -> Result<SweepPoint, Invalid> {
    let e = resized(exp, cpus);
    let (a, b) = crate::run_ab(&e);
    let (a, b) = (a?, b?);
    Ok(SweepPoint {
        cpus,
        a_throughput: a.throughput_per_sec,
        b_throughput: b.throughput_per_sec,
        a_contention_pct: a.contention_pct,
        b_contention_pct: b.contention_pct,
        throughput_pct: Delta::between(&a, &b).throughput_pct,
        events: a.events + b.events,
    })
}
