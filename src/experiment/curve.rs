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
use crate::workload;
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
        self.check_knob()?;
        let mut errs = Vec::new();
        for (i, v) in self.values.iter().enumerate() {
            if self.values[..i].contains(v) {
                errs.push(FieldError::new(
                    "values",
                    format!("{v} is given twice: each value once"),
                ));
            }
        }
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
        let mine: Vec<(usize, Experiment)> = points
            .into_iter()
            .enumerate()
            .filter(|(i, _)| shard.has(*i))
            .collect();
        let jobs: Vec<repeat::Job> = mine.iter().flat_map(|(_, e)| point_jobs(e)).collect();
        let reports = repeat::run_jobs(&jobs, threads)?;
        let per = 2 * self.base.repeats.max(1) as usize;
        Ok(mine
            .iter()
            .zip(reports.chunks(per))
            .map(|((i, e), rs)| {
                let a: Vec<Report> = rs.iter().step_by(2).cloned().collect();
                let b: Vec<Report> = rs.iter().skip(1).step_by(2).cloned().collect();
                self.line(*i, e, &a, &b)
            })
            .collect())
    }

    /// Point `index`'s line from the reports of its runs (`point_jobs`: A's and B's of every
    /// repeat, same seeds in the same order). The page builds its lines here too, from the runs
    /// of its workers, so they are the CLI's to the bit.
    pub fn line(&self, index: usize, e: &Experiment, a: &[Report], b: &[Report]) -> CurveLine {
        let (fa, fb) = (
            SideFigures::of(a, &self.symbol),
            SideFigures::of(b, &self.symbol),
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
            grid: self.hash(),
            index,
            points: self.values.len(),
            knob: self.knob.clone(),
            value: self.values.get(index).copied().unwrap_or_default(),
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
    }

    /// The knob a curve varies is an integer knob of the base's workload (field `knob`).
    fn check_knob(&self) -> Result<(), FieldError> {
        let name = &self.base.workload.name;
        let ints: Vec<&str> = workload::info(name)
            .map(|w| {
                w.knobs
                    .iter()
                    .filter(|k| k.kind == "int")
                    .map(|k| k.name)
                    .collect()
            })
            .unwrap_or_default();
        if ints.contains(&self.knob.as_str()) {
            return Ok(());
        }
        Err(FieldError::new(
            "knob",
            if ints.is_empty() {
                format!("the {name} workload has no integer knob to vary")
            } else {
                format!(
                    "{:?} is not an integer knob of {name}: allowed {}",
                    self.knob,
                    ints.join(", ")
                )
            },
        ))
    }
}

/// The runs of one point, in the order `Curve::line` and `Curve::run` read their reports:
/// seed-major, A then B.
pub fn point_jobs(point: &Experiment) -> Vec<repeat::Job> {
    repeat::jobs(point, &[Side::A, Side::B])
}

/// A list of knob values as typed ("384, 768 1536"): whole numbers, separated by commas or
/// spaces; every bad entry is reported (field `values`).
pub fn parse_values(text: &str) -> Result<Vec<u64>, Invalid> {
    let mut errs = Vec::new();
    let values: Vec<u64> = text
        .split([',', ' ', '\t', '\n'])
        .filter(|t| !t.is_empty())
        .filter_map(|t| {
            t.parse()
                .map_err(|_| {
                    errs.push(FieldError::new(
                        "values",
                        format!("{t:?} is not a whole number"),
                    ))
                })
                .ok()
        })
        .collect();
    if errs.is_empty() {
        Ok(values)
    } else {
        Err(Invalid(errs))
    }
}

/// The values a curve of `knob` takes when none are given: half, once, twice and four times the
/// knob's value in `base` (its default on this machine when the experiment leaves it out),
/// within the knob's range, each point one the experiment can run.
pub fn default_values(base: &Experiment, knob: &str) -> Result<Vec<u64>, Invalid> {
    let probe = Curve {
        base: base.clone(),
        knob: knob.into(),
        values: vec![],
        symbol: String::new(),
    };
    probe.check_knob()?;
    let cpus = base.machine_spec()?.nr_cpus();
    let info = workload::info(&base.workload.name);
    let (min, max) = info
        .and_then(|w| w.knobs.iter().find(|k| k.name == knob))
        .map_or((1, 1), |k| (k.min, k.max));
    let now = workload::int_value(&base.workload.name, &base.knobs(), knob, cpus).unwrap_or(min);
    let mut values: Vec<u64> = [now / 2, now, now.saturating_mul(2), now.saturating_mul(4)]
        .into_iter()
        .map(|v| v.clamp(min, max))
        .collect();
    values.dedup();
    let runnable = |v: u64| {
        let mut e = base.clone();
        e.workload.knobs.insert(knob.into(), v.into());
        e.validate().is_ok()
    };
    let kept: Vec<u64> = values
        .iter()
        .copied()
        .filter(|&v| v == now || runnable(v))
        .collect();
    Ok(kept)
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
    fn a_line_from_the_point_runs_is_the_run_line_and_defaults_halve_to_quadruple() {
        let mut c = small();
        c.base.repeats = 2;
        c.values = vec![16, 48];
        let lines = c.run(Shard::ALL, 2).unwrap();
        let points = c.points().unwrap();
        for (i, e) in points.iter().enumerate() {
            // the page's path: every run of point_jobs on its own, then Curve::line
            let reports: Vec<Report> = point_jobs(e)
                .iter()
                .map(|(x, side)| crate::experiment::run::run(x, *side).unwrap())
                .collect();
            let a: Vec<Report> = reports.iter().step_by(2).cloned().collect();
            let b: Vec<Report> = reports.iter().skip(1).step_by(2).cloned().collect();
            let line = serde_json::to_string(&c.line(i, e, &a, &b)).unwrap();
            assert_eq!(line, serde_json::to_string(&lines[i]).unwrap());
        }
        assert!(lines.iter().all(|l| l.gain_ci95.is_some()), "seeds differ");
        // clients left out: its default on 32 CPUs is 2 per CPU
        let d = default_values(&c.base, "clients").unwrap();
        assert_eq!(d, vec![32, 64, 128, 256]);
        let mut e = c.base.clone();
        e.workload.knobs.insert("clients".into(), 1.into());
        assert_eq!(default_values(&e, "clients").unwrap(), vec![1, 2, 4]);
        assert_eq!(parse_values("8, 16 32").unwrap(), vec![8, 16, 32]);
        let err = parse_values("8,x").unwrap_err().to_string();
        assert!(err.contains("\"x\" is not a whole number"), "{err}");
    }

    #[test]
    fn an_enum_knob_a_repeated_value_and_a_missing_knob_are_refused_by_field() {
        let mut c = small();
        c.knob = "client".into();
        let err = c.points().unwrap_err();
        assert_eq!(err.0[0].field, "knob");
        assert!(
            err.0[0].message.contains("allowed clients, ws_kib"),
            "{err}"
        );
        assert!(default_values(&c.base, "client").is_err());
        let mut c = small();
        c.values = vec![16, 32, 16];
        let err = c.points().unwrap_err().to_string();
        assert!(err.contains("16 is given twice"), "{err}");
    }

    #[test]
    fn every_story_curve_is_runnable_and_holds_its_reported_point() {
        for st in crate::experiment::stories::stories() {
            let Some(sc) = st.curve else { continue };
            let c = Curve {
                base: st.experiment.clone(),
                knob: sc.knob.into(),
                values: sc.values.clone(),
                symbol: st.symbol.into(),
            };
            assert_eq!(
                c.points().map(|p| p.len()).ok(),
                Some(sc.values.len()),
                "{}",
                st.name
            );
            assert!(sc.values.contains(&sc.reported), "{}", st.name);
            // the value the story runs: given, or its default on the story's machine
            let e = &st.experiment;
            let cpus = e.machine_spec().unwrap().nr_cpus();
            let runs = workload::int_value(&e.workload.name, &e.knobs(), sc.knob, cpus);
            assert_eq!(
                runs,
                Some(sc.reported),
                "{}: the story runs its reported point",
                st.name
            );
        }
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
