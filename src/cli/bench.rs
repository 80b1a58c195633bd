//! `schedplay bench`: simulated seconds per wall second, events per second and peak resident memory
//! of the reference scenarios, each measured in its own process (wall time is the CLI's business,
//! never the engine's).

use clap::Args;
use schedplay::experiment::scenario::{Experiment, Side};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The reference scenarios as (name, experiment); the name is what `--only` takes.
fn scenarios(seconds: f64) -> Vec<(&'static str, Experiment)> {
    let mut gnr = Experiment::default();
    gnr.machine.preset = "gnr-2s-snc3".into();
    gnr.seconds = seconds;
    let mut milan = Experiment::default();
    milan.machine.preset = "milan-2s".into();
    milan.a = vec!["cache-aware".into()];
    milan.seconds = seconds;
    let mut spin = Experiment::default();
    spin.machine.preset = "custom".into();
    spin.machine.overrides.sockets = Some(8);
    spin.machine.overrides.cores_per_socket = Some(256);
    spin.machine.overrides.nodes_per_socket = Some(2);
    spin.workload.name = "spin".into();
    spin.seconds = seconds;
    vec![
        ("gnr-2s-snc3/oltp", gnr),
        ("milan-2s/oltp+cache-aware", milan),
        ("custom-4096/spin", spin),
    ]
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

const RUNS: usize = 3;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Simulated seconds per scenario (0.001..=60).
    #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
    pub(crate) seconds: f64,
    /// Run only this scenario (used by the table mode to measure each in its own process).
    #[arg(long)]
    pub(crate) only: Option<String>,
}

pub(crate) fn main(args: BenchArgs) -> ExitCode {
    let (seconds, only) = (args.seconds, args.only.as_deref());
    // Refuse a bad --seconds with its field error before any process is started.
    if let Some(Err(err)) = scenarios(seconds).first().map(|(_, e)| e.validate()) {
        eprintln!("error: {err}");
        return ExitCode::from(2);
    }
    if let Some(name) = only {
        let Some((_, e)) = scenarios(seconds).into_iter().find(|(n, _)| *n == name) else {
            eprintln!("error: only: unknown scenario {name:?}");
            return ExitCode::from(2);
        };
        let t0 = Instant::now();
        let r = match schedplay::run(&e, Side::A) {
            Ok(r) => r,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(2);
            }
        };
        let wall = t0.elapsed().as_secs_f64();
        println!(
            "{name} {} {} {:.6} {} {}",
            e.seconds,
            r.events,
            wall,
            peak_rss_kib(),
            r.machine.cpus
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "{:<28} {:>6} {:>10} {:>12} {:>14} {:>12}   (median of {RUNS} processes)",
        "scenario", "CPUs", "sim s", "sim s/wall s", "events/s", "peak RSS"
    );
    let exe = std::env::current_exe().unwrap_or_else(|_| "schedplay".into());
    for (name, _) in scenarios(seconds) {
        // The median of RUNS processes: single runs on a shared 2-core VM vary by ±30%.
        let mut runs = Vec::new();
        for _ in 0..RUNS {
            let out = Command::new(&exe)
                .args(["bench", "--seconds", &seconds.to_string(), "--only", name])
                .output();
            let line = match out {
                Ok(o) if o.status.success() => {
                    String::from_utf8_lossy(&o.stdout).trim().to_string()
                }
                Ok(o) => {
                    eprintln!("{name}: {}", String::from_utf8_lossy(&o.stderr));
                    return ExitCode::FAILURE;
                }
                Err(e) => {
                    eprintln!("{name}: {e}");
                    return ExitCode::FAILURE;
                }
            };
            let f: Vec<f64> = line
                .split_whitespace()
                .skip(1)
                .map(|x| x.parse().unwrap_or(0.0))
                .collect();
            runs.push(f);
        }
        runs.sort_by(|a, b| a[2].total_cmp(&b[2]));
        let f = &runs[RUNS / 2];
        let (sim, events, wall, rss, cpus) = (f[0], f[1], f[2], f[3], f[4]);
        println!(
            "{name:<28} {cpus:>6} {sim:>10.3} {:>12.3} {:>14.0} {:>9.1} MiB",
            sim / wall,
            events / wall,
            rss / 1024.0
        );
    }
    ExitCode::SUCCESS
}
