//! `schedplay bench`: simulated seconds per wall second, events per second, CPU nanoseconds per
//! simulated context switch and per simulated event, and peak resident memory of the reference
//! scenarios, each measured in its own process (wall and CPU time are the CLI's business, never
//! the engine's). The two per-unit costs do not move with the workload's intensity (more switches
//! per simulated second cost more wall time but the same nanoseconds per switch), so they compare
//! runs, seeds and versions of the engine where sim s / wall s cannot.

use clap::Args;
use schedplay::experiment::scenario::{Experiment, Side};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The reference scenarios as (name, experiment); the name is what `--only` takes.
fn scenarios(seconds: f64) -> Vec<(&'static str, Experiment)> {
    let mut gnr = Experiment::default();
    gnr.machine.preset = "gnr-2s-snc3".into();
    gnr.seconds = seconds;
    let mut gnr96 = Experiment::default();
    gnr96.machine.preset = "gnr-2s-96c-snc3".into();
    gnr96.seconds = seconds;
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
    let mut all = vec![
        ("gnr-2s-snc3/oltp", gnr),
        ("gnr-2s-96c-snc3/oltp", gnr96),
        ("milan-2s/oltp+cache-aware", milan),
        ("custom-4096/spin", spin),
    ];
    all.extend(story_scenarios(seconds));
    all
}

/// The scenarios the page's stories and curves run, side A (the unpatched side, where seed 000's
/// storm is): each story's own experiment at `seconds`, its warm-up kept where it fits in half the
/// run (the steady state is what curves and validation measure), and hackbench as seed 002's
/// validation row runs it (milan-2s, cache-aware).
fn story_scenarios(seconds: f64) -> Vec<(&'static str, Experiment)> {
    use schedplay::experiment::stories;
    let story = |name: &str| {
        let mut e = stories::find(name)
            .map(|s| s.experiment)
            .unwrap_or_default();
        e.seconds = seconds;
        e.warmup = e.warmup.min(seconds / 2.0);
        e
    };
    let mut hackbench = Experiment::default();
    hackbench.machine.preset = "milan-2s".into();
    hackbench.workload.name = "hackbench".into();
    hackbench.a = vec!["cache-aware".into()];
    hackbench.seconds = seconds;
    vec![
        (
            "story/sched-balance-running",
            story("sched-balance-running"),
        ),
        (
            "story/cache-aware-false-sharing",
            story("cache-aware-false-sharing"),
        ),
        ("milan-2s/hackbench+cache-aware", hackbench),
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

/// CPU time of this thread in ns (`/proc/thread-self/schedstat`'s first field: time on a CPU,
/// which excludes the time a loaded machine keeps the process waiting); `None` where the file is
/// missing (then the table uses wall time).
fn thread_cpu_ns() -> Option<u64> {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
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
        let (t0, c0) = (Instant::now(), thread_cpu_ns());
        let r = match schedplay::run(&e, Side::A) {
            Ok(r) => r,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::from(2);
            }
        };
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (c0, thread_cpu_ns()) {
            (Some(a), Some(b)) => b.saturating_sub(a) as f64 / 1e9,
            _ => wall,
        };
        // rq->nr_switches summed over the CPUs (the report's counter), warm-up included as
        // `events` is: both are the work the run did.
        let switches = r.counters.get("context_switches").copied().unwrap_or(0);
        println!(
            "{name} {} {} {:.6} {} {} {} {:.6}",
            e.seconds,
            r.events,
            wall,
            peak_rss_kib(),
            r.machine.cpus,
            switches,
            cpu
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "{:<32} {:>6} {:>10} {:>12} {:>14} {:>11} {:>11} {:>12}   (median of {RUNS} processes by CPU time)",
        "scenario",
        "CPUs",
        "sim s",
        "sim s/wall s",
        "events/s",
        "ns/switch",
        "ns/event",
        "peak RSS"
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
        runs.sort_by(|a, b| a[6].total_cmp(&b[6]));
        let f = &runs[RUNS / 2];
        let (sim, events, wall, rss, cpus, switches, cpu) =
            (f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
        println!(
            "{name:<32} {cpus:>6} {sim:>10.3} {:>12.3} {:>14.0} {:>11.0} {:>11.1} {:>9.1} MiB",
            sim / wall,
            events / wall,
            cpu * 1e9 / switches.max(1.0),
            cpu * 1e9 / events.max(1.0),
            rss / 1024.0
        );
    }
    ExitCode::SUCCESS
}
