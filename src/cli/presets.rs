//! `schedplay presets`: the machines, workloads and patches, one line each.

use schedplay::machine::presets;
use schedplay::{kernels, patches, workload};
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
    println!("kernels (--kernel; toggles add to what a release merged):");
    for k in kernels::KERNELS {
        println!("  {:<28} {}", k.name, k.source);
        if k.changes.is_empty() {
            println!("      (the base: no changes)");
        }
        for c in k.changes {
            println!("      {} {}: {}", c.commit, c.title, c.model);
        }
        for e in patches::PATCHES {
            if let Some(why) = kernels::not_on(k, e.name) {
                println!("      (not a toggle here) {}: {why}", e.name);
            }
        }
    }
    println!(
        "sched features (--features NAME,NO_NAME; /sys/kernel/debug/sched/features per release, * = the model switches it):"
    );
    for r in schedplay::sched_features::RELEASES {
        println!("  {:<28} {}", r.release, r.source);
        for row in schedplay::sched_features::rows(r.release).unwrap_or_default() {
            let shown = if row.default {
                row.name.to_string()
            } else {
                format!("NO_{}", row.name)
            };
            match row.path {
                Some(p) => println!("    * {shown:<26} {p}"),
                None => println!(
                    "      {shown:<26} (not switchable: {})",
                    row.refused.unwrap_or_default()
                ),
            }
        }
    }
    println!("kernel knobs (--set KEY=VALUE; from 7.2, cache-aware scheduling as merged):");
    for k in schedplay::llc_balancing::KNOBS {
        println!(
            "  {:<38} {}..={} (default {}): {}",
            k.key, k.min, k.max, k.default, k.description
        );
    }
    println!("patches:");
    for p in patches::PATCHES {
        println!("  {:<28} {} [{}]", p.name, p.description, p.commit);
    }
    ExitCode::SUCCESS
}
