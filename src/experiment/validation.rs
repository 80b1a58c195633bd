//! How close is the model? Every published figure the project is calibrated or checked against,
//! as data (`ROWS`, each with its source), and what the model gives for it: `schedplay validate`,
//! the page's table and the generated table in docs/MODEL.md.
//!
//! A row *holds* when the model's figure (the mean over the repeats) lies in the row's tolerance
//! band, and *misses* otherwise. Misses are reported, not hidden: the model is known to overshoot
//! seed 000 and to undershoot seed 002 (docs/MODEL.md, Calibration results).

use crate::error::Invalid;
use crate::experiment::repeat;
use crate::experiment::repeat::Job;
use crate::experiment::scenario::{Experiment, Side};
pub use crate::experiment::steady::Warmup;
use crate::machine::hardware::LatencyClass;
use crate::machine::topology::Topology;
use crate::report::Report;
use crate::stats::Summary;
use serde::Serialize;
use std::fmt::Write as _;

/// What a row compares.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    /// Share of non-idle cycles in a symbol on one side, %.
    Share(Side, &'static str),
    /// Throughput change B vs A, %.
    ThroughputPct,
    /// The one-way cache-line transfer the model prices between CPU 0 and the first CPU of this
    /// class (`Topology::xfer_ns`, what `schedplay topology` lists), ns.
    Latency(LatencyClass),
}

/// One published figure.
#[derive(Clone, Debug)]
pub struct Row {
    pub id: &'static str,
    /// Machine preset the model runs.
    pub machine: &'static str,
    pub workload: &'static str,
    /// The workload's knobs (key, value) where they differ from its defaults: how the reporters
    /// drove it (docs/MODEL.md §18).
    pub knobs: &'static [(&'static str, &'static str)],
    /// Patches of A and B (runs only).
    pub a: &'static [&'static str],
    pub b: &'static [&'static str],
    pub figure: Figure,
    /// What is measured, for people.
    pub what: &'static str,
    /// The figure as published.
    pub published: &'static str,
    /// The band the model's figure must fall in to hold.
    pub tolerance: [f64; 2],
    /// Where the published figure and the band come from.
    pub source: &'static str,
}

mod rows;
pub use rows::ROWS;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Holds,
    Misses,
}

/// What a row checks: the model's behaviour (a run: a profile share, a throughput change) or one
/// of its inputs (a hardware figure the model is given, such as a transfer latency). The headline
/// counts them apart: an input that holds says nothing about the behaviour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Behaviour,
    Input,
}

impl Figure {
    pub fn kind(&self) -> Kind {
        match self {
            Figure::Latency(_) => Kind::Input,
            _ => Kind::Behaviour,
        }
    }
}

/// One row of the table: the published figure next to the model's.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub id: String,
    pub kind: Kind,
    pub machine: String,
    pub workload: String,
    pub what: String,
    /// The command that reproduces the model's figure.
    pub command: String,
    pub published: String,
    /// The model's figure (mean over the repeats for runs).
    pub model: f64,
    /// 95% interval of the model's figure (runs with more than one repeat), else null.
    pub model_ci95: Option<[f64; 2]>,
    /// The repeats' seeds gave identical runs (a workload whose runs do not depend on the seed):
    /// the figure is one run's and `model_ci95` is null.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub identical_runs: bool,
    pub tolerance: [f64; 2],
    pub status: Status,
    pub source: String,
    /// With `--bands`: the model's figure over the assumptions' ranges (`bands.rs`); never read
    /// by `status`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub band: Option<bands::Band>,
    /// A row that misses: why, one line from docs/MODEL.md (`why.rs`); absent when it holds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// How the runs of `validate` are made.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    pub seconds: f64,
    /// The warm-up excluded from each run's figures (`validate` default: `auto`, the steady state).
    pub warmup: Warmup,
    pub repeats: u32,
    pub seed: u64,
    pub threads: usize,
}

impl Row {
    fn experiment(&self, s: &Settings) -> Result<Experiment, Invalid> {
        let mut e = Experiment::default();
        e.machine.preset = self.machine.into();
        e.workload.name = self.workload.into();
        for (k, v) in self.knobs {
            let v = v
                .parse::<u64>()
                .map_or_else(|_| serde_json::Value::from(*v), serde_json::Value::from);
            e.workload.knobs.insert(k.to_string(), v);
        }
        e.seconds = s.seconds;
        e.seed = s.seed;
        e.repeats = s.repeats;
        e.a = self.a.iter().map(|x| x.to_string()).collect();
        e.b = self.b.iter().map(|x| x.to_string()).collect();
        e.validate()?;
        s.warmup.apply(&mut e)?;
        e.validate()?;
        Ok(e)
    }

    fn command(&self, s: &Settings) -> String {
        match self.figure {
            Figure::Latency(_) => format!("schedplay topology --machine {}", self.machine),
            _ => format!(
                "schedplay compare --machine {} --workload {}{} --a '{}' --b '{}' --seconds {} --warmup {} --seed {} --repeat {}",
                self.machine,
                self.workload,
                self.knobs
                    .iter()
                    .map(|(k, v)| format!(" --set {k}={v}"))
                    .collect::<String>(),
                self.a.join(","),
                self.b.join(","),
                s.seconds,
                s.warmup,
                s.seed,
                s.repeats
            ),
        }
    }

    /// The row's outcome for the model's figure `model` (and its interval).
    pub fn outcome(&self, s: &Settings, model: f64, ci: Ci) -> Outcome {
        let [lo, hi] = self.tolerance;
        let holds = model >= lo && model <= hi;
        let (ci, identical_runs) = match ci {
            Ci::Interval(i) => (Some(i), false),
            Ci::OneRun => (None, false),
            Ci::IdenticalRuns => (None, true),
        };
        Outcome {
            id: self.id.into(),
            kind: self.figure.kind(),
            machine: self.machine.into(),
            workload: self.workload.into(),
            what: self.what.into(),
            command: self.command(s),
            published: self.published.into(),
            model,
            model_ci95: ci,
            identical_runs,
            tolerance: self.tolerance,
            status: if holds { Status::Holds } else { Status::Misses },
            source: self.source.into(),
            band: None,
            why: (!holds).then(|| why::why(self.id, self.figure.kind() == Kind::Input).into()),
        }
    }
}

/// The model's latency for a class on a preset: CPU 0 to the first CPU of that class.
fn latency(machine: &str, class: LatencyClass) -> Result<f64, Invalid> {
    let spec = crate::machine::presets::preset(machine).ok_or_else(|| {
        Invalid::from(crate::error::FieldError::new(
            "machine",
            format!("unknown machine {machine:?}"),
        ))
    })?;
    let topo = Topology::new(spec)?;
    Ok((0..topo.nr_cpus())
        .find(|&b| topo.class(0, b) == class)
        .map_or(f64::NAN, |b| topo.xfer_ns(0, b) as f64))
}

/// The runs the rows need: the distinct experiments (each with `s.repeats`) and every run of them
/// (`repeat::jobs`, experiment after experiment). The page runs the jobs on its workers.
pub fn plan(rows: &[Row], s: &Settings) -> Result<(Vec<Experiment>, Vec<Job>), Invalid> {
    let mut exps: Vec<Experiment> = Vec::new();
    for r in rows {
        if !matches!(r.figure, Figure::Latency(_)) {
            let e = r.experiment(s)?;
            if !exps.contains(&e) {
                exps.push(e);
            }
        }
    }
    let sides = [Side::A, Side::B];
    let jobs = exps.iter().flat_map(|e| repeat::jobs(e, &sides)).collect();
    Ok((exps, jobs))
}

/// What is known of a model figure's spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ci {
    /// The 95% interval over more than one repeat.
    Interval([f64; 2]),
    /// One run (or an input row): no interval.
    OneRun,
    /// Several seeds, identical runs: one run's figure, no interval (never a zero-width one).
    IdenticalRuns,
}

/// The model's figure of a run row (`Share` or `ThroughputPct`) from the reports of its sides (the
/// same seeds in the same order), with its 95% interval when there is more than one repeat and
/// the repeats differ. `None` for an input row (it needs no run).
pub fn run_figure(row: &Row, a: &[Report], b: &[Report]) -> Option<(f64, Ci)> {
    let ci = |n: usize, identical: bool, lo: f64, hi: f64| {
        if n < 2 {
            Ci::OneRun
        } else if identical {
            Ci::IdenticalRuns
        } else {
            Ci::Interval([lo, hi])
        }
    };
    match row.figure {
        Figure::Latency(_) => None,
        Figure::Share(side, sym) => {
            let runs = if side == Side::A { a } else { b };
            let v: Vec<f64> = runs.iter().map(|x| x.symbol_percent(sym)).collect();
            let m = Summary::of(&v);
            Some((m.mean, ci(v.len(), m.identical, m.ci95[0], m.ci95[1])))
        }
        Figure::ThroughputPct => {
            let t = repeat::Table::new(a, Some(b));
            let d = t.figure("throughput").and_then(|f| f.delta.clone());
            Some(match d {
                Some(d) => (d.change, ci(a.len(), d.identical, d.ci95[0], d.ci95[1])),
                None => (f64::NAN, Ci::OneRun),
            })
        }
    }
}

impl Row {
    /// The published figure as a number: the first signed decimal of `published` ("+8%" -> 8,
    /// "~-10% (...)" -> -10), `None` when it states none ("gone from the profile").
    pub fn published_number(&self) -> Option<f64> {
        let p = self.published;
        let start = p.find(|c: char| c.is_ascii_digit())?;
        let neg = p[..start].ends_with('-');
        let end = p[start..]
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(p.len(), |i| start + i);
        let v: f64 = p[start..end].trim_end_matches('.').parse().ok()?;
        Some(if neg { -v } else { v })
    }
}

/// A story's row checked on the story's own run: the outcome and the published figure as a number.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    #[serde(flatten)]
    pub outcome: Outcome,
    pub published_value: Option<f64>,
}

/// The rows `ids` checked on one run of their experiment (the reports of A and B, every repeat):
/// what the page shows next to a story's results. Rows that need no run are left out.
pub fn check(ids: &[&str], e: &Experiment, a: &[Report], b: &[Report]) -> Vec<Check> {
    let s = Settings {
        seconds: e.seconds,
        warmup: Warmup::Seconds(e.warmup),
        repeats: a.len().max(1) as u32,
        seed: e.seed,
        threads: 1,
    };
    ids.iter()
        .filter_map(|id| row(id))
        .filter_map(|r| {
            let (m, ci) = run_figure(r, a, b)?;
            Some(Check {
                outcome: r.outcome(&s, m, ci),
                published_value: r.published_number(),
            })
        })
        .collect()
}

/// A row by id.
pub fn row(id: &str) -> Option<&'static Row> {
    ROWS.iter().find(|r| r.id == id)
}

/// The headline: behaviour checks and inputs counted apart ("3 of 6 behaviour checks hold, 14 of
/// 14 inputs hold").
pub fn headline(out: &[Outcome]) -> String {
    let count = |k: Kind| {
        let of: Vec<&Outcome> = out.iter().filter(|o| o.kind == k).collect();
        let holds = of.iter().filter(|o| o.status == Status::Holds).count();
        (holds, of.len())
    };
    let (bh, bn) = count(Kind::Behaviour);
    let (ih, inn) = count(Kind::Input);
    format!("{bh} of {bn} behaviour checks hold, {ih} of {inn} inputs hold")
}

/// The table from the reports of `plan`'s jobs, in job order.
pub fn evaluate(
    rows: &[Row],
    s: &Settings,
    exps: &[Experiment],
    reports: &[Report],
) -> Result<Vec<Outcome>, Invalid> {
    let per = 2 * s.repeats.max(1) as usize;
    if reports.len() != exps.len() * per {
        return Err(crate::error::FieldError::new(
            "reports",
            format!("{} reports for {} runs", reports.len(), exps.len() * per),
        )
        .into());
    }
    let side_runs = |e: &Experiment, side: Side| -> Vec<Report> {
        let i = exps.iter().position(|x| x == e).unwrap_or(0);
        reports[i * per..(i + 1) * per]
            .iter()
            .skip(if side == Side::A { 0 } else { 1 })
            .step_by(2)
            .cloned()
            .collect()
    };
    rows.iter()
        .map(|r| {
            Ok(match r.figure {
                Figure::Latency(class) => r.outcome(s, latency(r.machine, class)?, Ci::OneRun),
                _ => {
                    let e = r.experiment(s)?;
                    let (a, b) = (side_runs(&e, Side::A), side_runs(&e, Side::B));
                    let (m, ci) = run_figure(r, &a, &b).unwrap_or((f64::NAN, Ci::OneRun));
                    r.outcome(s, m, ci)
                }
            })
        })
        .collect()
}

/// Every row of `rows`: the runs (distinct experiments, every repeat and side) in one pool.
pub fn validate(rows: &[Row], s: &Settings) -> Result<Vec<Outcome>, Invalid> {
    let (exps, jobs) = plan(rows, s)?;
    let reports = repeat::run_jobs(&jobs, s.threads)?;
    evaluate(rows, s, &exps, &reports)
}

fn fmt_num(x: f64) -> String {
    if x.is_nan() {
        "n/a".into()
    } else if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

fn model_cell(o: &Outcome) -> String {
    match o.model_ci95 {
        Some([lo, hi]) => format!("{} [{}, {}]", fmt_num(o.model), fmt_num(lo), fmt_num(hi)),
        None if o.identical_runs => format!("{} ({})", fmt_num(o.model), repeat::IDENTICAL_RUNS),
        None => fmt_num(o.model),
    }
}

fn band(o: &Outcome) -> String {
    format!("{} .. {}", fmt_num(o.tolerance[0]), fmt_num(o.tolerance[1]))
}

fn status(o: &Outcome) -> &'static str {
    match o.status {
        Status::Holds => "holds",
        Status::Misses => "MISSES",
    }
}

/// The table as text: one line per row, then each row's command and source.
pub fn to_text(out: &[Outcome], s: &Settings) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "How close is the model? {} s simulated, warm-up {}, {} runs per side, seed {} (model: mean [95% CI])\n",
        s.seconds, s.warmup, s.repeats, s.seed
    );
    let bands = out.iter().any(|o| o.band.is_some());
    let _ = writeln!(
        t,
        "{:<20} {:<16} {:<10} {:<48} {:<40} {:<28} {:<16} status{}",
        "row",
        "machine",
        "workload",
        "figure",
        "published",
        "model",
        "tolerance",
        if bands {
            "   band over the assumptions' ranges (dominant ±swing)"
        } else {
            ""
        }
    );
    for o in out {
        let _ = writeln!(
            t,
            "{:<20} {:<16} {:<10} {:<48} {:<40} {:<28} {:<16} {:<6}{}",
            o.id,
            o.machine,
            o.workload,
            o.what,
            o.published,
            model_cell(o),
            band(o),
            status(o),
            if bands {
                format!("   {}", bands::cell(o))
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(t, "\n{}.\n", headline(out));
    for o in out {
        if let Some(w) = &o.why {
            let _ = writeln!(t, "{} misses: {w}", o.id);
        }
    }
    if out.iter().any(|o| o.why.is_some()) {
        let _ = writeln!(t);
    }
    for o in out {
        let _ = writeln!(t, "{}: {}\n    source: {}", o.id, o.command, o.source);
    }
    t
}

/// The table as markdown (docs/MODEL.md's generated table).
pub fn to_markdown(out: &[Outcome], s: &Settings) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Generated by `schedplay validate --markdown --seconds {} --warmup {} --repeat {}` (seed {}; model: mean [95% CI]).\n",
        s.seconds, s.warmup, s.repeats, s.seed
    );
    let bands = out.iter().any(|o| o.band.is_some());
    let _ = writeln!(
        t,
        "| row | machine | workload | figure | published | model | tolerance | status |{}\n|---|---|---|---|---|---|---|---|{}",
        if bands {
            " band over the ranges (dominant ±swing) |"
        } else {
            ""
        },
        if bands { "---|" } else { "" }
    );
    for o in out {
        let _ = writeln!(
            t,
            "| `{}` | `{}` | {} | {} | {} | {} | {} | **{}** |{}",
            o.id,
            o.machine,
            o.workload,
            o.what,
            o.published,
            model_cell(o),
            band(o),
            status(o),
            if bands {
                format!(" {} |", bands::cell(o))
            } else {
                String::new()
            }
        );
    }
    t
}

pub mod bands;
#[cfg(test)]
mod tests;
pub mod why;
