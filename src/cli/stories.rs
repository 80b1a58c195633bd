//! `schedplay stories`: the seed stories the page's buttons run, with their scenarios.

use schedplay::experiment::link::encode_link;
use schedplay::experiment::stories::stories;
use std::process::ExitCode;

pub(crate) fn main() -> ExitCode {
    for s in stories() {
        let e = &s.experiment;
        let knobs: Vec<String> = e
            .workload
            .knobs
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().map_or(v.to_string(), str::to_string)))
            .collect();
        println!("{}: {}", s.name, s.title);
        println!("  claim:    {}", s.claim);
        println!(
            "  scenario: {} on {}, kernel {}, {} s{}, A: [{}], B: [{}]{}",
            e.workload.name,
            e.machine.preset,
            e.kernel,
            e.seconds,
            if e.warmup > 0.0 {
                format!(" (warm-up {} s)", e.warmup)
            } else {
                String::new()
            },
            e.a.join(","),
            e.b.join(","),
            if knobs.is_empty() {
                String::new()
            } else {
                format!(", {}", knobs.join(" "))
            }
        );
        if let Some(c) = &s.curve {
            println!(
                "  curve:    {} = {} (the reported point: {})",
                c.knob,
                c.values
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                c.reported
            );
        }
        println!("  rows:     {}", s.rows.join(", "));
        println!("  run:      schedplay compare --story {}", s.name);
        println!("  link:     ?{}\n", encode_link(e));
    }
    ExitCode::SUCCESS
}
