//! Repeated experiments: N seeds per side derived from the scenario's seed, the runs spread over
//! threads (each run depends only on its scenario and seed, so the thread count never changes a
//! byte), and the table of every headline figure with its spread, its 95% interval and, for A/B,
//! the change with its interval and Welch's p-value.

use crate::error::Invalid;
use crate::experiment::scenario::{Experiment, Side};
use crate::report::Report;
use crate::stats::{Summary, Welch};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// SplitMix64's increment (the golden ratio in 64 bits) and finalizer, Steele, Lea & Flood,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014.
const GOLDEN_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seeds of `n` repeats of a scenario whose seed is `seed`: the first is `seed` itself (so
/// repeat 1 is the single run), repeat i ≥ 1 uses the top 53 bits of `splitmix64(seed + i·γ)`,
/// the i-th output of a SplitMix64 stream started at `seed` (53 bits: every derived seed is exact
/// as a JS number, so the page and JSON readers see the seed that ran). Both sides use the same
/// list.
pub fn seeds(seed: u64, n: u32) -> Vec<u64> {
    (0..n as u64)
        .map(|i| {
            if i == 0 {
                seed
            } else {
                splitmix64(seed.wrapping_add(i.wrapping_mul(GOLDEN_GAMMA))) >> 11
            }
        })
        .collect()
}

/// Worker threads for a batch of runs: every core natively (`available_parallelism`), one in wasm
/// (the page spreads runs over Web Workers instead).
pub fn default_threads() -> usize {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }
    #[cfg(target_arch = "wasm32")]
    {
        1
    }
}

/// `f` over `jobs` on up to `threads` threads, results in job order. Threads take the next job
/// from a shared counter, so the order runs finish in never reaches the results.
pub fn parallel_map<T: Sync, R: Send>(
    jobs: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    #[cfg(target_arch = "wasm32")]
    let _ = threads;
    #[cfg(not(target_arch = "wasm32"))]
    if threads.min(jobs.len()) > 1 {
        let threads = threads.min(jobs.len());
        use std::sync::Mutex;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let next = AtomicUsize::new(0);
        let out: Mutex<Vec<Option<R>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
        std::thread::scope(|s| {
            for _ in 0..threads {
                s.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let r = f(job);
                        if let Ok(mut o) = out.lock() {
                            o[i] = Some(r);
                        }
                    }
                });
            }
        });
        return out
            .into_inner()
            .unwrap_or_default()
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect();
    }
    jobs.iter().map(f).collect()
}

/// One run of a batch: the experiment (seed already set) and its side.
pub type Job = (Experiment, Side);

/// The runs of `exp` for `sides`, `exp.repeats` seeds each: seed-major (seed 0 A, seed 0 B, …).
pub fn jobs(exp: &Experiment, sides: &[Side]) -> Vec<Job> {
    seeds(exp.seed, exp.repeats.max(1))
        .into_iter()
        .flat_map(|seed| {
            sides.iter().map(move |&side| {
                let mut e = exp.clone();
                e.seed = seed;
                e.repeats = 1;
                (e, side)
            })
        })
        .collect()
}

/// Runs every job on `threads` threads. The first error (in job order) wins.
pub fn run_jobs(jobs: &[Job], threads: usize) -> Result<Vec<Report>, Invalid> {
    parallel_map(jobs, threads, |(e, side)| {
        crate::experiment::run::run(e, *side)
    })
    .into_iter()
    .collect()
}

/// The reports of `exp.repeats` runs of each side in `sides`, one Vec per side.
pub fn run_sides(
    exp: &Experiment,
    sides: &[Side],
    threads: usize,
) -> Result<Vec<Vec<Report>>, Invalid> {
    exp.validate()?;
    let reports = run_jobs(&jobs(exp, sides), threads)?;
    let k = sides.len();
    Ok((0..k)
        .map(|s| reports.iter().skip(s).step_by(k).cloned().collect())
        .collect())
}

/// How a figure's change is expressed: % of A's mean, or percentage points for figures that are
/// themselves percentages (contention, profile shares).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeltaUnit {
    Pct,
    Points,
}

/// B − A of one figure.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FigureDelta {
    pub unit: DeltaUnit,
    /// mean(B) − mean(A) in `unit` (% of mean(A), 0 when it is 0; or points).
    pub change: f64,
    /// 95% interval of `change` (Welch; for % the interval of the difference over mean(A)).
    pub ci95: [f64; 2],
    /// Welch's two-sided p-value (1 when `identical`: one run tests nothing).
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// The interval excludes 0. Says nothing about better or worse. Never with `identical`.
    pub significant: bool,
    /// Every seed gave the same value on each side: the runs do not depend on the seed, so the
    /// change is one run's, with no interval (`ci95` is the change itself) and no test.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identical: bool,
}

/// What the tables print in place of an interval when the seeds gave identical runs.
pub const IDENTICAL_RUNS: &str = "the seeds gave identical runs: no interval";

/// One headline figure over the repeats.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Figure {
    /// Stable key (`throughput`, `contention_pct`, `latency_avg_ms`, `latency_p95_ms`,
    /// `wakeup_p50_us`, `wakeup_p99_us`, `profile:<symbol>`).
    pub key: String,
    /// Row label for people.
    pub label: String,
    pub a: Summary,
    /// Per-repeat values of A, in seed order.
    pub a_values: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b: Option<Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_values: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<FigureDelta>,
}

/// The table of a repeated run or A/B (`run|compare --repeat N --json`, docs/SCHEMA.md).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Table {
    pub repeats: u32,
    pub seeds: Vec<u64>,
    pub machine: String,
    pub cpus: usize,
    pub workload: String,
    pub sim_seconds: f64,
    pub warmup_s: f64,
    /// The release both sides ran (absent: 6.18, as in the report).
    #[serde(
        default = "crate::report::default_kernel",
        skip_serializing_if = "crate::report::is_default_kernel"
    )]
    pub kernel: String,
    pub a_patches: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_patches: Option<Vec<String>>,
    /// How many runs of each side flagged a series as not settled.
    pub a_not_settled: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub b_not_settled: Option<usize>,
    pub figures: Vec<Figure>,
}

/// Profile rows in the table: the symbols with the largest mean share on either side.
pub const TOP_SYMBOLS: usize = 5;

type Getter = fn(&Report) -> f64;

/// (key, label, value, change unit) of the fixed headline figures.
const HEADLINE: [(&str, &str, Getter, DeltaUnit); 6] = [
    (
        "throughput",
        "throughput (/s)",
        |r| r.throughput_per_sec,
        DeltaUnit::Pct,
    ),
    (
        "contention_pct",
        "contention (% non-idle)",
        |r| r.contention_pct,
        DeltaUnit::Points,
    ),
    (
        "latency_avg_ms",
        "latency avg (ms)",
        |r| r.latency_ms.avg,
        DeltaUnit::Pct,
    ),
    (
        "latency_p95_ms",
        "latency p95 (ms)",
        |r| r.latency_ms.p95,
        DeltaUnit::Pct,
    ),
    (
        "wakeup_p50_us",
        "wakeup p50 (µs)",
        |r| r.wakeup_latency_us.p50,
        DeltaUnit::Pct,
    ),
    (
        "wakeup_p99_us",
        "wakeup p99 (µs)",
        |r| r.wakeup_latency_us.p99,
        DeltaUnit::Pct,
    ),
];

fn delta(a: &[f64], b: &[f64], unit: DeltaUnit) -> FigureDelta {
    let w = Welch::between(a, b);
    let base = crate::stats::mean(a);
    let scale = match unit {
        DeltaUnit::Points => 1.0,
        DeltaUnit::Pct if base != 0.0 => 100.0 / base.abs(),
        DeltaUnit::Pct => 0.0,
    };
    let change = w.diff * scale;
    if crate::stats::all_identical(a) && crate::stats::all_identical(b) {
        // one run per side, repeated: no spread, so neither an interval nor a test
        return FigureDelta {
            unit,
            change,
            ci95: [change, change],
            p: 1.0,
            df: w.df,
            significant: false,
            identical: true,
        };
    }
    FigureDelta {
        unit,
        change,
        ci95: [w.ci95[0] * scale, w.ci95[1] * scale],
        p: w.p,
        df: w.df,
        significant: w.ci95[0] > 0.0 || w.ci95[1] < 0.0,
        identical: false,
    }
}

fn figure(key: String, label: String, a: Vec<f64>, b: Option<Vec<f64>>, unit: DeltaUnit) -> Figure {
    Figure {
        key,
        label,
        a: Summary::of(&a),
        b: b.as_deref().map(Summary::of),
        delta: b.as_deref().map(|b| delta(&a, b, unit)),
        a_values: a,
        b_values: b,
    }
}

impl Table {
    /// The table of side A's reports and, for an A/B, side B's (same seeds, same order).
    pub fn new(a: &[Report], b: Option<&[Report]>) -> Table {
        let first = &a[0];
        let vals = |rs: &[Report], g: &dyn Fn(&Report) -> f64| rs.iter().map(g).collect();
        let mut figures: Vec<Figure> = HEADLINE
            .iter()
            .map(|&(key, label, g, unit)| {
                let label = if key == "throughput" {
                    format!("{} (/s)", first.throughput_unit)
                } else {
                    label.to_string()
                };
                figure(key.into(), label, vals(a, &g), b.map(|b| vals(b, &g)), unit)
            })
            .collect();
        // The symbols with the largest mean share on either side, ties by name.
        let mut syms: Vec<&str> = a
            .iter()
            .chain(b.unwrap_or(&[]))
            .flat_map(|r| r.profile.iter().map(|p| p.symbol.as_str()))
            .collect();
        syms.sort_unstable();
        syms.dedup();
        let share = |rs: &[Report], s: &str| -> Vec<f64> {
            rs.iter().map(|r| r.symbol_percent(s)).collect()
        };
        let top = |s: &str| {
            let m = crate::stats::mean(&share(a, s));
            b.map_or(m, |b| m.max(crate::stats::mean(&share(b, s))))
        };
        let mut ranked: Vec<(f64, &str)> = syms.iter().map(|&s| (top(s), s)).collect();
        ranked.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(y.1)));
        for &(_, s) in ranked.iter().take(TOP_SYMBOLS) {
            figures.push(figure(
                format!("profile:{s}"),
                format!("{s} (%)"),
                share(a, s),
                b.map(|b| share(b, s)),
                DeltaUnit::Points,
            ));
        }
        let unsettled = |rs: &[Report]| rs.iter().filter(|r| !r.not_settled.is_empty()).count();
        Table {
            repeats: a.len() as u32,
            seeds: a.iter().map(|r| r.seed).collect(),
            machine: first.machine.name.clone(),
            cpus: first.machine.cpus,
            workload: first.workload.clone(),
            sim_seconds: first.sim_seconds,
            warmup_s: first.warmup_s,
            kernel: first.kernel.clone(),
            a_patches: first.patches.clone(),
            b_patches: b.map(|b| b[0].patches.clone()),
            a_not_settled: unsettled(a),
            b_not_settled: b.map(unsettled),
            figures,
        }
    }

    pub fn figure(&self, key: &str) -> Option<&Figure> {
        self.figures.iter().find(|f| f.key == key)
    }

    /// The mailing-list shape: `baseline(std%)  compare%(std%)`, as mmtests' compare tables and
    /// the hackbench / schbench tables posted to LKML print them, plus the change's 95% interval
    /// and Welch's p. Changes of percentage figures are in points (`pts`).
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let names = |p: &[String]| {
            if p.is_empty() {
                "(none)".to_string()
            } else {
                p.join(",")
            }
        };
        let _ = writeln!(
            s,
            "{} on {} ({} CPUs), kernel {}, {:.3} s simulated, warm-up {:.3} s, {} runs per side, seeds {}",
            self.workload,
            self.machine,
            self.cpus,
            self.kernel,
            self.sim_seconds,
            self.warmup_s,
            self.repeats,
            self.seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        );
        let warn = |s: &mut String, side: &str, n: usize| {
            if n > 0 {
                let _ = writeln!(
                    s,
                    "NOT SETTLED: {n} of {} runs of {side} still trend over the measured window (docs/MODEL.md, Steady state)",
                    self.repeats
                );
            }
        };
        warn(&mut s, "A", self.a_not_settled);
        if let Some(n) = self.b_not_settled {
            warn(&mut s, "B", n);
        }
        match &self.b_patches {
            None => {
                let _ = writeln!(s, "patches: {}\n", names(&self.a_patches));
                let _ = writeln!(
                    s,
                    "{:<32} {:>24} {:>30}",
                    "", "mean (std%)", "95% CI of the mean"
                );
                for f in &self.figures {
                    let ci = if f.a.identical {
                        IDENTICAL_RUNS.to_string()
                    } else {
                        format!("[{}, {}]", num(f.a.ci95[0]), num(f.a.ci95[1]))
                    };
                    let _ = writeln!(
                        s,
                        "{:<32} {:>14} ({:>6.2}%) {:>30}",
                        f.label,
                        num(f.a.mean),
                        f.a.cv_pct(),
                        ci
                    );
                }
            }
            Some(bp) => {
                let _ = writeln!(s, "A: {}\nB: {}\n", names(&self.a_patches), names(bp));
                let _ = writeln!(
                    s,
                    "{:<32} {:>24} {:>24} {:>24} {:>7}",
                    "", "A (std%)", "B change (std%)", "95% CI of the change", "p"
                );
                for f in &self.figures {
                    let (Some(b), Some(d)) = (&f.b, &f.delta) else {
                        continue;
                    };
                    let u = match d.unit {
                        DeltaUnit::Pct => "%",
                        DeltaUnit::Points => "pts",
                    };
                    let (ci, p) = if d.identical {
                        (IDENTICAL_RUNS.to_string(), String::new())
                    } else {
                        (
                            format!("[{:+.2}, {:+.2}]{u}", d.ci95[0], d.ci95[1]),
                            format!("{:>7.4}", d.p),
                        )
                    };
                    let _ = writeln!(
                        s,
                        "{:<32} {:>14} ({:>6.2}%) {:>+13.2}{u:<3} ({:>6.2}%) {:>24} {:>7}",
                        f.label,
                        num(f.a.mean),
                        f.a.cv_pct(),
                        d.change,
                        b.cv_pct(),
                        ci,
                        p
                    );
                }
                let _ = writeln!(
                    s,
                    "\n(std%: standard deviation over the runs as % of the mean. A change whose interval contains 0 is not distinguishable from noise at 95%; Welch's t-test, docs/MODEL.md.)"
                );
            }
        }
        s
    }
}

/// A figure with about six significant digits, without exponent for the usual ranges.
fn num(x: f64) -> String {
    let a = x.abs();
    if a >= 1e5 {
        format!("{x:.1}")
    } else if a >= 100.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_start_with_the_scenario_seed_and_are_fixed() {
        let s = seeds(1, 4);
        assert_eq!(s[0], 1);
        assert_eq!(s.len(), 4);
        assert_eq!(s, seeds(1, 4));
        assert_eq!(&seeds(1, 10)[..4], &s[..]);
        let mut d = seeds(7, 100);
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 100);
        // pinned: a change of derivation would silently change every repeated table
        assert_eq!(s[1], splitmix64(1u64.wrapping_add(GOLDEN_GAMMA)) >> 11);
        assert!(d.iter().all(|&x| x < 1 << 53 || x == 7));
        assert_eq!(splitmix64(0), 0);
        assert_eq!(splitmix64(GOLDEN_GAMMA), 0xe220_a839_7b1d_cdaf);
    }

    #[test]
    fn parallel_map_keeps_job_order() {
        let jobs: Vec<u64> = (0..50).collect();
        let serial = parallel_map(&jobs, 1, |&x| x * x);
        let par = parallel_map(&jobs, 4, |&x| x * x);
        assert_eq!(serial, par);
        assert_eq!(par[7], 49);
        assert!(parallel_map(&Vec::<u64>::new(), 4, |&x| x).is_empty());
    }

    #[test]
    fn a_delta_whose_interval_contains_zero_is_not_significant() {
        let d = delta(&[10.0, 11.0, 9.0], &[10.5, 9.5, 11.0], DeltaUnit::Pct);
        assert!(!d.significant && d.ci95[0] < 0.0 && d.ci95[1] > 0.0);
        let d = delta(&[10.0, 10.1, 9.9], &[12.0, 12.1, 11.9], DeltaUnit::Pct);
        assert!(d.significant);
        assert!((d.change - 20.0).abs() < 1e-9, "{}", d.change);
        let d = delta(&[1.0, 2.0], &[4.0, 5.0], DeltaUnit::Points);
        assert_eq!(d.change, 3.0);
    }

    #[test]
    fn seeds_that_gave_identical_runs_give_no_interval_and_no_test() {
        // a seed-free workload: every repeat the same, A and B apart
        let d = delta(&[10.0; 4], &[9.0; 4], DeltaUnit::Pct);
        assert!(d.identical && !d.significant);
        assert_eq!(d.p, 1.0, "never p = 0 from runs that measured nothing");
        assert!((d.change + 10.0).abs() < 1e-9);
        // one side with a spread is a real test
        let d = delta(&[10.0; 4], &[9.0, 9.5, 8.5, 9.2], DeltaUnit::Pct);
        assert!(!d.identical && d.p < 1.0 && d.ci95[0] < d.ci95[1]);
        let s = Summary::of(&[3.0, 3.0, 3.0]);
        assert!(s.identical);
        assert!(!Summary::of(&[3.0]).identical, "one run is not a repeat");
        assert!(!Summary::of(&[3.0, 3.5]).identical);
    }
}
