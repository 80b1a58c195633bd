//! `schedplay presets`: the machines, workloads and patches, one line each.

use schedplay::machine::presets;
use schedplay::{patches, workload};
use std::process::ExitCode;

pub(crate) fn main() -> ExitCode {
    println!("machines:");
    for name in presets::PRESETS {
        if let Some(m) = presets::preset(name) {
            let cpus = m.sockets * m.cores_per_socket * m.smt;
            println!("  {name:<18} {cpus:>5} CPUs  {}", m.description);
        }
    }
    println!("workloads:");
    for w in workload::WORKLOADS {
        let knobs: Vec<&str> = w.knobs.iter().map(|k| k.name).collect();
        println!(
            "  {:<18} {} (knobs: {}; unit: {})",
            w.name,
            w.description,
            knobs.join(", "),
            w.unit
        );
    }
    println!("patches:");
    for p in patches::PATCHES {
        println!("  {:<28} {} [{}]", p.name, p.description, p.commit);
    }
    ExitCode::SUCCESS
}
