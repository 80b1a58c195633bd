//! The stories' results shipped with the page (`schedplay precompute`): what the page's story Run
//! and its load-curve panel compute, run natively once per build so that a story opens with its
//! results at once. The page shows them only while its form is the story's own experiment (the
//! entry's `link` is `encode_link` of it), labelled as computed by this build; Run recomputes them.
//!
//! The plan is every distinct run (experiment, side) of every story: the story's A and B as the
//! page's Run starts them, then the runs of its curve's points as the curve panel plans them with
//! its defaults (`curve::point_jobs`). A run the plan already holds (the curve's point at the
//! story's own value, when the knob is already set) runs once. The runs shard and merge as a grid's
//! points do (`grid::Shard`, `grid::merge_texts`); `assemble` turns the lines into the file.

use crate::error::{FieldError, Invalid};
use crate::experiment::curve::{self, Curve, CurveLine};
use crate::experiment::grid::{self, Shard};
use crate::experiment::link::encode_link;
use crate::experiment::repeat;
use crate::experiment::run::Run;
use crate::experiment::scenario::{Experiment, Side};
use crate::experiment::stories::{Story, stories};
use crate::experiment::validation;
use crate::report::schedstat::SchedstatSummary;
use crate::report::{Delta, Report, fnv1a};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Where the page loads the file from (relative to its `www/`) and the repository keeps it.
pub const FILE: &str = "www/precomputed/stories.json";

/// The command that writes `FILE` (the test's message names it).
pub const COMMAND: &str = "schedplay precompute > www/precomputed/stories.json";

/// The shipped report keeps the cache lines with most HITMs, this many (the c2c table's top; the
/// full list is several MB per report: 4,000-9,000 lines on these machines). Every other figure of
/// the report is kept whole.
pub const CACHELINES_KEPT: usize = 200;

/// One run of the plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlannedRun {
    pub experiment: Experiment,
    #[serde(serialize_with = "side_name")]
    pub side: Side,
}

fn side_name<S: serde::Serializer>(s: &Side, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(side_str(*s))
}

fn side_str(s: Side) -> &'static str {
    if s == Side::A { "a" } else { "b" }
}

/// One JSON line of `precompute --shard`: a run of the plan, its report and schedstat summary.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunLine {
    /// FNV-1a of the plan's canonical JSON (`merge` refuses lines of another plan).
    pub grid: String,
    pub index: usize,
    pub points: usize,
    pub link: String,
    pub side: String,
    pub report: Report,
    pub schedstat: SchedstatSummary,
}

/// A story's curve as the page's panel runs it with its defaults: the story's knob and values,
/// the watched symbol the story names.
pub fn story_curve(s: &Story) -> Option<Curve> {
    s.curve.as_ref().map(|c| Curve {
        base: s.experiment.clone(),
        knob: c.knob.into(),
        values: c.values.clone(),
        symbol: s.symbol.into(),
    })
}

/// The runs of a story's point: A and B of its experiment, as the page's Run starts them (every
/// repeat's seed, seed-major).
fn point_runs(s: &Story) -> Vec<repeat::Job> {
    repeat::jobs(&s.experiment, &[Side::A, Side::B])
}

/// The runs of a story's curve, point by point (`curve::point_jobs`).
fn curve_runs(s: &Story) -> Result<Vec<Vec<repeat::Job>>, Invalid> {
    match story_curve(s) {
        None => Ok(vec![]),
        Some(c) => Ok(c.points()?.iter().map(curve::point_jobs).collect()),
    }
}

fn same_run(x: &repeat::Job, y: &repeat::Job) -> bool {
    x.1 == y.1 && serde_json::to_string(&x.0).ok() == serde_json::to_string(&y.0).ok()
}

/// Every distinct run of every story, in story order (point, then curve points).
pub fn plan() -> Result<Vec<PlannedRun>, Invalid> {
    let mut out: Vec<repeat::Job> = Vec::new();
    for s in stories() {
        let mut runs = point_runs(&s);
        runs.extend(curve_runs(&s)?.into_iter().flatten());
        for r in runs {
            if !out.iter().any(|o| same_run(o, &r)) {
                out.push(r);
            }
        }
    }
    Ok(out
        .into_iter()
        .map(|(experiment, side)| PlannedRun { experiment, side })
        .collect())
}

/// The plan's fingerprint.
pub fn plan_hash(plan: &[PlannedRun]) -> String {
    fnv1a(&serde_json::to_string(plan).unwrap_or_default())
}

/// One side run to the end as the page's worker runs it (`wasm::Sim`): the report, then the
/// schedstat summary of the measured window.
pub fn run_side(e: &Experiment, side: Side) -> Result<(Report, SchedstatSummary), Invalid> {
    let mut r = Run::new(e, side)?;
    while !r.step(1 << 20) {}
    let report = r.report();
    let eng = r.engine();
    let st = crate::report::schedstat::summary(&eng.schedstat_measured(), &eng.sd);
    Ok((report, st))
}

/// The lines of `shard`'s runs of the plan, on `threads` threads, in plan order.
pub fn run(shard: Shard, threads: usize) -> Result<Vec<RunLine>, Invalid> {
    let plan = plan()?;
    let hash = plan_hash(&plan);
    let mine: Vec<(usize, &PlannedRun)> = plan
        .iter()
        .enumerate()
        .filter(|(i, _)| shard.has(*i))
        .collect();
    let results = repeat::parallel_map(&mine, threads, |(_, p)| run_side(&p.experiment, p.side));
    mine.iter()
        .zip(results)
        .map(|((i, p), r)| {
            let (report, schedstat) = r?;
            Ok(RunLine {
                grid: hash.clone(),
                index: *i,
                points: plan.len(),
                link: encode_link(&p.experiment),
                side: side_str(p.side).into(),
                report,
                schedstat,
            })
        })
        .collect()
}

/// One JSON line per run (what `precompute --shard` prints).
pub fn to_lines(lines: &[RunLine]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", serde_json::to_string(l).unwrap_or_default());
    }
    s
}

/// One side of a story's shipped point.
#[derive(Clone, Debug, Serialize)]
pub struct ShippedSide {
    pub report_hash: String,
    /// The report, its cache lines cut to the `CACHELINES_KEPT` with most HITMs.
    pub report: Report,
    /// How many cache lines the full report has.
    pub cachelines_total: usize,
    pub schedstat: SchedstatSummary,
}

/// One point of a story's shipped curve: the page's curve line and its runs' report hashes.
#[derive(Clone, Debug, Serialize)]
pub struct ShippedCurvePoint {
    pub value: u64,
    pub a_hashes: Vec<String>,
    pub b_hashes: Vec<String>,
    pub line: CurveLine,
}

/// A story's shipped curve.
#[derive(Clone, Debug, Serialize)]
pub struct ShippedCurve {
    pub curve: Curve,
    pub reported: u64,
    pub points: Vec<ShippedCurvePoint>,
}

/// A story's shipped results: what the page's Run shows (both sides' first-seed reports and
/// schedstat, the engine's Δ and the story's checks) and its curve.
#[derive(Clone, Debug, Serialize)]
pub struct ShippedStory {
    pub name: String,
    /// `encode_link` of the story's experiment: the page shows the entry only while its form's
    /// link is this.
    pub link: String,
    /// The report hashes of every repeat's run of each side (the first is the cards').
    pub a_hashes: Vec<String>,
    pub b_hashes: Vec<String>,
    pub a: ShippedSide,
    pub b: ShippedSide,
    pub compare: Delta,
    pub checks: Vec<validation::Check>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curve: Option<ShippedCurve>,
}

/// The shipped file.
#[derive(Clone, Debug, Serialize)]
pub struct Shipped {
    /// What wrote it (to regenerate after an engine or story change).
    pub command: &'static str,
    pub plan: String,
    pub stories: Vec<ShippedStory>,
}

/// The report as shipped: the cache lines with most HITMs (ties in the report's order), in the
/// report's order.
pub fn trimmed(r: &Report) -> Report {
    let hitm = |i: usize| r.cachelines[i].hitm_local + r.cachelines[i].hitm_remote;
    let mut order: Vec<usize> = (0..r.cachelines.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(hitm(i)));
    let mut keep: Vec<usize> = order.into_iter().take(CACHELINES_KEPT).collect();
    keep.sort_unstable();
    let mut t = r.clone();
    t.cachelines = keep.iter().map(|&i| r.cachelines[i].clone()).collect();
    t
}

/// The file from every line of the plan (`merge_texts`' output or one unsharded run's lines
/// printed and read back, so both give the same bytes).
pub fn assemble(texts: &[(String, String)]) -> Result<Shipped, Invalid> {
    let plan = plan()?;
    let hash = plan_hash(&plan);
    let mut lines: Vec<RunLine> = Vec::new();
    let mut errs = Vec::new();
    for (at, t) in texts {
        match serde_json::from_str::<RunLine>(t) {
            Ok(l) if l.grid != hash => errs.push(FieldError::new(
                "merge",
                format!("{at}: a line of plan {}, not of this build's plan {hash}: regenerate every shard", l.grid),
            )),
            Ok(l) => lines.push(l),
            Err(e) => errs.push(FieldError::new("merge", format!("{at}: {e}"))),
        }
    }
    if lines.len() != plan.len() && errs.is_empty() {
        errs.push(FieldError::new(
            "merge",
            format!("{} runs of {}", lines.len(), plan.len()),
        ));
    }
    if !errs.is_empty() {
        return Err(Invalid(errs));
    }
    let find = |job: &repeat::Job| -> &RunLine {
        let i = plan
            .iter()
            .position(|p| same_run(&(p.experiment.clone(), p.side), job))
            .expect("every story's run is in the plan");
        &lines[i]
    };
    let mut out = Vec::new();
    for s in stories() {
        let runs = point_runs(&s);
        let of = |side: Side| -> Vec<&RunLine> {
            runs.iter().filter(|j| j.1 == side).map(&find).collect()
        };
        let (la, lb) = (of(Side::A), of(Side::B));
        let reports =
            |ls: &[&RunLine]| -> Vec<Report> { ls.iter().map(|l| l.report.clone()).collect() };
        let (ra, rb) = (reports(&la), reports(&lb));
        let hashes =
            |rs: &[Report]| -> Vec<String> { rs.iter().map(|r| r.report_hash.clone()).collect() };
        let side = |l: &RunLine| ShippedSide {
            report_hash: l.report.report_hash.clone(),
            report: trimmed(&l.report),
            cachelines_total: l.report.cachelines.len(),
            schedstat: l.schedstat.clone(),
        };
        let curve = match story_curve(&s) {
            None => None,
            Some(c) => {
                let mut points = Vec::new();
                for (i, (e, jobs)) in c.points()?.iter().zip(curve_runs(&s)?).enumerate() {
                    let rs: Vec<Report> = jobs.iter().map(|j| find(j).report.clone()).collect();
                    let a: Vec<Report> = rs.iter().step_by(2).cloned().collect();
                    let b: Vec<Report> = rs.iter().skip(1).step_by(2).cloned().collect();
                    points.push(ShippedCurvePoint {
                        value: c.values[i],
                        a_hashes: hashes(&a),
                        b_hashes: hashes(&b),
                        line: c.line(i, e, &a, &b),
                    });
                }
                Some(ShippedCurve {
                    reported: s.curve.as_ref().map_or(0, |sc| sc.reported),
                    curve: c,
                    points,
                })
            }
        };
        out.push(ShippedStory {
            name: s.name.into(),
            link: encode_link(&s.experiment),
            a_hashes: hashes(&ra),
            b_hashes: hashes(&rb),
            a: side(la[0]),
            b: side(lb[0]),
            compare: Delta::between(&ra[0], &rb[0]),
            checks: validation::check(s.rows, &s.experiment, &ra, &rb),
            curve,
        });
    }
    Ok(Shipped {
        command: COMMAND,
        plan: hash,
        stories: out,
    })
}

/// The file's text (compact JSON, one line).
pub fn to_file(s: &Shipped) -> String {
    format!("{}\n", serde_json::to_string(s).unwrap_or_default())
}

/// The file from shard files (`(name, text)`): `grid::merge_texts` (every run once, in plan
/// order, overlaps and gaps named), then `assemble`.
pub fn merge(files: &[(String, String)]) -> Result<String, Invalid> {
    let texts = grid::merge_texts(files)?;
    Ok(to_file(&assemble(&texts)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every run a story's Run or its curve starts is in the plan, each exactly once (the curve's
    /// point at the story's own clients is the story's point; story 3's A is story 1's).
    #[test]
    fn the_plan_holds_every_story_run_once() {
        let plan = plan().unwrap();
        let jobs: Vec<repeat::Job> = plan
            .iter()
            .map(|p| (p.experiment.clone(), p.side))
            .collect();
        for (i, j) in jobs.iter().enumerate() {
            assert!(!jobs[..i].iter().any(|k| same_run(k, j)), "run {i} twice");
        }
        let mut wanted = 0;
        for s in stories() {
            let mut runs = point_runs(&s);
            runs.extend(curve_runs(&s).unwrap().into_iter().flatten());
            wanted += runs.len();
            for r in &runs {
                assert!(
                    jobs.iter().any(|j| same_run(j, r)),
                    "{}: a run missing",
                    s.name
                );
            }
        }
        assert!(jobs.len() < wanted, "shared runs run once");
    }

    /// The shipped report keeps the lines with most HITMs, in the report's order, and every other
    /// figure (its hash too).
    #[test]
    fn a_shipped_report_keeps_the_lines_with_most_hitm_in_order() {
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.overrides.sockets = Some(2);
        e.machine.overrides.cores_per_socket = Some(8);
        e.seconds = 0.01;
        let (r, _) = run_side(&e, Side::A).unwrap();
        assert!(r.cachelines.len() > CACHELINES_KEPT, "enough lines to cut");
        let t = trimmed(&r);
        assert_eq!(t.cachelines.len(), CACHELINES_KEPT);
        assert_eq!(t.report_hash, r.report_hash);
        let hitm = |c: &crate::report::CacheLineRow| c.hitm_local + c.hitm_remote;
        let least_kept = t.cachelines.iter().map(hitm).min().unwrap();
        let names: Vec<&str> = t.cachelines.iter().map(|c| c.name.as_str()).collect();
        let left: Vec<_> = (r.cachelines.iter())
            .filter(|c| !names.contains(&c.name.as_str()))
            .collect();
        assert!(left.iter().all(|c| hitm(c) <= least_kept));
        let order: Vec<&str> = (r.cachelines.iter())
            .map(|c| c.name.as_str())
            .filter(|n| names.contains(n))
            .collect();
        assert_eq!(order, names, "the report's order");
        assert_eq!(t.throughput_per_sec, r.throughput_per_sec);
    }
}
