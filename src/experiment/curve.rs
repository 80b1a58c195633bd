//! The load curve: one A/B experiment at steady state over a workload knob's values (clients,
//! threads, groups), with, at each point, the figures that set the size of a balancing storm:
//! how often CPUs go idle, how many ticks raise SCHED_SOFTIRQ after it (f), and the
//! `sched_balance_running` cmpxchg rate (docs/MODEL.md §11 and Calibration). Points shard and
//! merge as a grid's do (`grid::Shard`, `grid::merge_texts`).

use crate::error::{FieldError, Invalid};
use crate::experiment::grid::Shard;
use crate::experiment::link::encode_link;
use crate::experiment::repeat;
use crate::experiment::scenario::{Experiment, Side};
use crate::report::{Report, fnv1a};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// At most this many points on one curve.
pub const MAX_POINTS: usize = 64;

/// A curve: the base experiment, the knob it varies and the values.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Curve {
    pub base: Experiment,
    pub knob: String,
    pub values: Vec<u64>,
    /// The profile symbol whose share is shown (a story's `symbol`).
    pub symbol: String,
}

/// The storm's figures of one side at one point, means over the repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideFigures {
    pub throughput: f64,
    /// The watched symbol's share of non-idle cycles, %.
    pub symbol_pct: f64,
    pub contention_pct: f64,
    pub idle_pct: f64,
    /// Idle entries per CPU per measured second.
    pub idle_entries_per_cpu_s: f64,
    /// SCHED_SOFTIRQs raised per tick (f: the share of ticks whose balance fell due).
    pub softirqs_per_tick: f64,
    /// `sched_balance_running` cmpxchg attempts per measured second.
    pub cmpxchg_per_s: f64,
}

/// One JSON line of a curve: a point, both sides' figures and B's throughput change.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CurveLine {
    /// FNV-1a of the curve's canonical JSON (`merge` refuses lines of another curve).
    pub grid: String,
    pub index: usize,
    pub points: usize,
    pub knob: String,
    pub value: u64,
    /// The point's share link: `schedplay compare --link` reruns it.
    pub link: String,
    pub a: SideFigures,
    pub b: SideFigures,
    /// B's throughput change, % of A's mean, with its 95% interval over the repeats (absent
    /// with one run: a single run has no interval).
    pub gain_pct: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gain_ci95: Option<[f64; 2]>,
}

fn counter(r: &Report, name: &str) -> f64 {
    r.counters.get(name).copied().unwrap_or(0) as f64
}

fn measured_s(r: &Report) -> f64 {
    (r.sim_seconds - r.warmup_s).max(f64::MIN_POSITIVE)
}

impl SideFigures {
    fn of(runs: &[Report], symbol: &str) -> SideFigures {
        let mean =
            |f: &dyn Fn(&Report) -> f64| runs.iter().map(f).sum::<f64>() / runs.len().max(1) as f64;
        SideFigures {
            throughput: mean(&|r| r.throughput_per_sec),
            symbol_pct: mean(&|r| r.symbol_percent(symbol)),
            contention_pct: mean(&|r| r.contention_pct),
            idle_pct: mean(&|r| r.idle_pct),
            idle_entries_per_cpu_s: mean(&|r| {
                counter(r, "idle_entries") / measured_s(r) / r.machine.cpus.max(1) as f64
            }),
            softirqs_per_tick: mean(&|r| {
                counter(r, "sched_softirqs") / counter(r, "ticks").max(1.0)
            }),
            cmpxchg_per_s: mean(&|r| counter(r, "sched_balance_running_cmpxchg") / measured_s(r)),
        }
    }
}

impl Curve {
    /// The curve's fingerprint (its canonical JSON).
    pub fn hash(&self) -> String {
        fnv1a(&serde_json::to_string(self).unwrap_or_default())
    }

    /// Every point's experiment, in value order; every bad point is reported.
    pub fn points(&self) -> Result<Vec<Experiment>, Invalid> {
        if self.values.is_empty() || self.values.len() > MAX_POINTS {
            return Err(FieldError::new(
                "values",
                format!(
                    "{} values: a curve needs 1..={MAX_POINTS}",
                    self.values.len()
                ),
            )
            .into());
        }
        let mut errs = Vec::new();
        let mut out = Vec::new();
        for (i, &v) in self.values.iter().enumerate() {
            let mut e = self.base.clone();
            e.workload.knobs.insert(self.knob.clone(), v.into());
            match e.validate() {
                Ok(_) => out.push(e),
                Err(inv) => errs.extend(inv.0.into_iter().map(|f| {
                    FieldError::new(
                        &f.field,
                        format!("point {i} ({}={v}): {}", self.knob, f.message),
                    )
                })),
            }
        }
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(Invalid(errs))
        }
    }

    /// The lines of `shard`'s points, all runs in one pool of `threads`, in point order.
    pub fn run(&self, shard: Shard, threads: usize) -> Result<Vec<CurveLine>, Invalid> {
        let points = self.points()?;
        let total = points.len();
        let mine: Vec<(usize, Experiment)> = points
            .into_iter()
            .enumerate()
            .filter(|(i, _)| shard.has(*i))
            .collect();
        let jobs: Vec<repeat::Job> = mine
            .iter()
            .flat_map(|(_, e)| repeat::jobs(e, &[Side::A, Side::B]))
            .collect();
        let reports = repeat::run_jobs(&jobs, threads)?;
        let per = 2 * self.base.repeats.max(1) as usize;
        let grid = self.hash();
        Ok(mine
            .iter()
            .zip(reports.chunks(per))
            .map(|((i, e), rs)| {
                let a: Vec<Report> = rs.iter().step_by(2).cloned().collect();
                let b: Vec<Report> = rs.iter().skip(1).step_by(2).cloned().collect();
                let (fa, fb) = (
                    SideFigures::of(&a, &self.symbol),
                    SideFigures::of(&b, &self.symbol),
                );
                let ta: Vec<f64> = a.iter().map(|r| r.throughput_per_sec).collect();
                let tb: Vec<f64> = b.iter().map(|r| r.throughput_per_sec).collect();
                // an interval only from runs that differ (identical seeds' runs have none)
                let w = stats::Welch::between(&ta, &tb);
                let gain_ci95 = (ta.len() > 1 && w.se > 0.0 && fa.throughput > 0.0).then(|| {
                    [
                        w.ci95[0] * 100.0 / fa.throughput,
                        w.ci95[1] * 100.0 / fa.throughput,
                    ]
                });
                CurveLine {
                    grid: grid.clone(),
                    index: *i,
                    points: total,
                    knob: self.knob.clone(),
                    value: self.values[*i],
                    link: encode_link(e),
                    gain_pct: if fa.throughput > 0.0 {
                        (fb.throughput / fa.throughput - 1.0) * 100.0
                    } else {
                        0.0
                    },
                    gain_ci95,
                    a: fa,
                    b: fb,
                }
            })
            .collect())
    }
}

/// One JSON line per point (what `curve --shard` prints).
pub fn to_lines(lines: &[CurveLine]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", serde_json::to_string(l).unwrap_or_default());
    }
    s
}

/// The curve as a text table, one row per point; `reported` marks the point a story's report
/// sits at.
pub fn to_text(lines: &[CurveLine], symbol: &str, reported: Option<u64>) -> String {
    let mut s = String::new();
    let Some(first) = lines.first() else {
        return s;
    };
    let _ = writeln!(
        s,
        "{:>8} | {:>12} {:>12} {:>16} | {:>13} | {:>6} {:>11} {:>5} {:>10}",
        first.knob,
        "A /s",
        "B /s",
        "B vs A",
        format!("{symbol} A→B"),
        "idle%",
        "idle/CPU/s",
        "f",
        "cmpxchg/s"
    );
    for l in lines {
        let gain = match l.gain_ci95 {
            Some([lo, hi]) => format!("{:+.2}% [{lo:+.1},{hi:+.1}]", l.gain_pct),
            None => format!("{:+.2}%", l.gain_pct),
        };
        let _ = writeln!(
            s,
            "{:>8} | {:>12.0} {:>12.0} {:>16} | {:>5.2}% → {:>4.2}% | {:>6.1} {:>11.0} {:>5.2} {:>10.0}{}",
            l.value,
            l.a.throughput,
            l.b.throughput,
            gain,
            l.a.symbol_pct,
            l.b.symbol_pct,
            l.a.idle_pct,
            l.a.idle_entries_per_cpu_s,
            l.a.softirqs_per_tick,
            l.a.cmpxchg_per_s,
            if reported == Some(l.value) {
                "   ← the report's setup"
            } else {
                ""
            }
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Curve {
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.overrides.sockets = Some(2);
        e.machine.overrides.cores_per_socket = Some(8);
        e.seconds = 0.02;
        e.b = vec!["skip-not-due".into()];
        e.workload.knobs.insert("client".into(), "remote".into());
        Curve {
            base: e,
            knob: "clients".into(),
            values: vec![16, 64, 128],
            symbol: "sched_balance_domains".into(),
        }
    }

    #[test]
    fn shards_merge_to_the_unsharded_lines() {
        let c = small();
        let all = to_lines(&c.run(Shard::ALL, 2).unwrap());
        let s0 = to_lines(&c.run(Shard { index: 0, count: 2 }, 1).unwrap());
        let s1 = to_lines(&c.run(Shard { index: 1, count: 2 }, 1).unwrap());
        let merged =
            crate::experiment::grid::merge_texts(&[("s1".into(), s1), ("s0".into(), s0)]).unwrap();
        let joined: String = merged.iter().map(|(_, t)| format!("{t}\n")).collect();
        assert_eq!(joined, all);
    }

    #[test]
    fn more_clients_keep_cpus_busier_and_a_bad_value_names_its_point() {
        let c = small();
        let lines = c.run(Shard::ALL, 2).unwrap();
        assert!(lines[0].a.idle_pct > lines[2].a.idle_pct, "{lines:?}");
        assert!(lines.iter().all(|l| l.gain_ci95.is_none()));
        let mut bad = small();
        bad.values = vec![16, 0];
        let err = bad.points().unwrap_err().to_string();
        assert!(err.contains("point 1 (clients=0)"), "{err}");
    }
}
