//! How sure is each number: a one-at-a-time screen of an A/B experiment over the plausible ranges
//! of the screened assumptions (`assumptions::ROWS`). Point 0 runs the table's values; points
//! 2i+1 and 2i+2 set assumption i to the low and the high end of its range (the others at their
//! values), same seeds: 2k+1 compares. For each headline figure it gives the band over the points
//! and the assumptions ranked by how far either end moves the figure from the base (a tornado).
//!
//! Points are cut into shards and joined as grid points are (`grid::Shard`, `grid::merge_texts`):
//! one JSON line per point, the merged lines are the bytes of the unsharded screen.
//!
//! One at a time, so the band is the envelope of single changes: it leaves out interactions
//! between assumptions (two ends together may move a figure further than either alone).

use crate::assumptions::{self, Row};
use crate::error::{FieldError, Invalid};
use crate::experiment::grid::{self, Shard};
use crate::experiment::repeat::{self, Table};
use crate::experiment::scenario::{Experiment, Side};
use crate::report::{Report, fnv1a};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// One assumption of a screen with its range on the experiment's machine.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Range {
    pub name: String,
    pub value: u64,
    pub low: u64,
    pub high: u64,
    pub unit: String,
}

/// A screen: the experiment at the table's values and the ranges it varies.
#[derive(Clone, Debug, Serialize)]
pub struct Screen {
    pub base: Experiment,
    pub ranges: Vec<Range>,
}

/// One JSON line: a point of the screen and its table (`grid` is the screen's fingerprint, so
/// lines of different screens never merge).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ScreenLine {
    pub grid: String,
    pub index: usize,
    pub points: usize,
    /// The assumption this point moves (absent: the base point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assumption: Option<String>,
    /// "base", "low" or "high".
    pub end: String,
    /// The assumption's value at this point (0 for the base point).
    pub value: u64,
    pub table: Table,
}

/// The headline figures of a point: (key, label, value).
pub const HEADLINES: [(&str, &str); 3] = [
    ("throughput_pct", "throughput change B vs A (%)"),
    ("a_contention_pct", "contention of A (% non-idle)"),
    ("b_contention_pct", "contention of B (% non-idle)"),
];

fn headline(t: &Table, key: &str) -> f64 {
    let f = |k: &str| t.figure(k);
    match key {
        "throughput_pct" => f("throughput")
            .and_then(|x| x.delta.as_ref())
            .map_or(0.0, |d| d.change),
        "a_contention_pct" => f("contention_pct").map_or(0.0, |x| x.a.mean),
        _ => f("contention_pct")
            .and_then(|x| x.b.as_ref())
            .map_or(0.0, |b| b.mean),
    }
}

impl Screen {
    /// Every screened assumption over its range on `exp`'s machine (`only`: these names, in the
    /// table's order; empty: all). The experiment must not set assumptions itself.
    pub fn new(exp: &Experiment, only: &[String]) -> Result<Screen, Invalid> {
        exp.validate()?;
        let mut errs = Vec::new();
        if !exp.assume.is_empty() {
            errs.push(FieldError::new(
                "assume",
                "a sensitivity screen varies the assumptions itself: leave --assume out",
            ));
        }
        for n in only {
            if assumptions::row(n).is_none() {
                errs.push(assumptions::unknown(n));
            }
        }
        if !errs.is_empty() {
            return Err(Invalid(errs));
        }
        let lat = exp.machine_spec()?.latency;
        let rows: Vec<&Row> = assumptions::ROWS
            .iter()
            .filter(|r| only.is_empty() || only.iter().any(|n| n == r.name))
            .collect();
        let ranges = rows
            .iter()
            .map(|r| {
                let (low, high) = r.range(&lat);
                Range {
                    name: r.name.into(),
                    value: r.value,
                    low,
                    high,
                    unit: r.unit.into(),
                }
            })
            .collect();
        Ok(Screen {
            base: exp.clone(),
            ranges,
        })
    }

    /// The screen's fingerprint (its canonical JSON).
    pub fn hash(&self) -> String {
        fnv1a(&serde_json::to_string(self).unwrap_or_default())
    }

    /// Every point: (assumption index or none, end, value, experiment).
    fn points(&self) -> Vec<(Option<usize>, &'static str, u64, Experiment)> {
        let mut out = vec![(None, "base", 0, self.base.clone())];
        for (i, r) in self.ranges.iter().enumerate() {
            for (end, v) in [("low", r.low), ("high", r.high)] {
                let mut e = self.base.clone();
                e.assume.insert(r.name.clone(), v);
                out.push((Some(i), end, v, e));
            }
        }
        out
    }

    /// The experiment of every point, in point order.
    pub fn point_experiments(&self) -> Vec<Experiment> {
        self.points().into_iter().map(|p| p.3).collect()
    }

    pub fn nr_points(&self) -> usize {
        1 + 2 * self.ranges.len()
    }

    /// Every run of the points `points` (indices, ascending), in the order `run` makes them and
    /// `lines_of` reads their reports: per point, per seed (`repeat::seeds`), side A then side B.
    pub fn runs_of(&self, points: &[usize]) -> Vec<(usize, repeat::Job)> {
        let all = self.point_experiments();
        points
            .iter()
            .filter_map(|&i| all.get(i).map(|e| (i, e)))
            .flat_map(|(i, e)| {
                repeat::jobs(e, &[Side::A, Side::B])
                    .into_iter()
                    .map(move |j| (i, j))
            })
            .collect()
    }

    /// Every run of the screen (all its points), as `runs_of`: what the page hands its workers.
    pub fn runs(&self) -> Vec<(usize, repeat::Job)> {
        self.runs_of(&(0..self.nr_points()).collect::<Vec<_>>())
    }

    /// The lines of the points `points` (indices, ascending) from the reports of their runs, in
    /// `runs_of` order. Too few or too many reports is an error naming `reports`.
    pub fn lines_of(
        &self,
        points: &[usize],
        reports: &[Report],
    ) -> Result<Vec<ScreenLine>, Invalid> {
        let per = 2 * self.base.repeats.max(1) as usize;
        let total = self.nr_points();
        if reports.len() != per * points.len() || points.iter().any(|&i| i >= total) {
            return Err(FieldError::new(
                "reports",
                format!(
                    "{} reports for {} points of {} runs each: give every run's report, in plan order",
                    reports.len(),
                    points.len(),
                    per
                ),
            )
            .into());
        }
        let all = self.points();
        let hash = self.hash();
        Ok(points
            .iter()
            .zip(reports.chunks(per))
            .map(|(&i, rs)| {
                let (r, end, v, _) = &all[i];
                let a: Vec<_> = rs.iter().step_by(2).cloned().collect();
                let b: Vec<_> = rs.iter().skip(1).step_by(2).cloned().collect();
                ScreenLine {
                    grid: hash.clone(),
                    index: i,
                    points: total,
                    assumption: r.map(|r| self.ranges[r].name.clone()),
                    end: end.to_string(),
                    value: *v,
                    table: Table::new(&a, Some(&b)),
                }
            })
            .collect())
    }

    /// The bands and tornados from the reports of every run of the screen (`runs` order): what
    /// `schedplay sensitivity` prints for the same scenario, by the same arithmetic.
    pub fn summary_of(&self, reports: &[Report]) -> Result<Summary, Invalid> {
        let all: Vec<usize> = (0..self.nr_points()).collect();
        Ok(summarize(&self.lines_of(&all, reports)?))
    }

    /// The lines of `shard`'s points: all their runs in one pool of `threads`, in point order.
    pub fn run(&self, shard: Shard, threads: usize) -> Result<Vec<ScreenLine>, Invalid> {
        let mine: Vec<usize> = (0..self.nr_points()).filter(|i| shard.has(*i)).collect();
        let jobs: Vec<repeat::Job> = self.runs_of(&mine).into_iter().map(|(_, j)| j).collect();
        let reports = repeat::run_jobs(&jobs, threads)?;
        self.lines_of(&mine, &reports)
    }
}

/// One JSON line per point.
pub fn to_lines(lines: &[ScreenLine]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", serde_json::to_string(l).unwrap_or_default());
    }
    s
}

/// Joins the lines of shards (each `(file name, its text)`) as `grid::merge` does: one screen,
/// every point once, in point order; the merged text is the unsharded screen's bytes.
pub fn merge(files: &[(String, String)]) -> Result<(Vec<ScreenLine>, String), Invalid> {
    let mut errs = Vec::new();
    let mut lines = Vec::new();
    let mut text = String::new();
    for (at, t) in grid::merge_texts(files)? {
        match serde_json::from_str::<ScreenLine>(&t) {
            Ok(l) => lines.push(l),
            Err(e) => errs.push(FieldError::new("merge", format!("{at}: {e}"))),
        }
        text.push_str(&t);
        text.push('\n');
    }
    if errs.is_empty() {
        Ok((lines, text))
    } else {
        Err(Invalid(errs))
    }
}

/// One assumption's effect on one headline: the figure at its low and high end.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Bar {
    pub assumption: String,
    pub low_value: u64,
    pub high_value: u64,
    pub at_low: f64,
    pub at_high: f64,
    /// The larger distance of either end from the base figure (what the ranking sorts by).
    pub swing: f64,
}

/// One headline figure over the screen.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Headline {
    pub key: String,
    pub label: String,
    /// At the table's values.
    pub base: f64,
    /// The lowest and highest value over every point (one at a time).
    pub band: [f64; 2],
    /// Every assumption, the largest swing first (ties by name).
    pub tornado: Vec<Bar>,
}

/// What a screen says: each headline's band and tornado.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub machine: String,
    pub workload: String,
    pub a_patches: Vec<String>,
    pub b_patches: Vec<String>,
    pub seeds: Vec<u64>,
    pub sim_seconds: f64,
    pub points: usize,
    pub headlines: Vec<Headline>,
}

/// The bands and tornados of a complete screen's lines (in point order).
pub fn summarize(lines: &[ScreenLine]) -> Summary {
    let base = &lines[0].table;
    let headlines = HEADLINES
        .iter()
        .map(|&(key, label)| {
            let b = headline(base, key);
            let all: Vec<f64> = lines.iter().map(|l| headline(&l.table, key)).collect();
            let band = [
                all.iter().copied().fold(b, f64::min),
                all.iter().copied().fold(b, f64::max),
            ];
            let mut tornado: Vec<Bar> = lines[1..]
                .chunks(2)
                .filter_map(|p| {
                    let [lo, hi] = p else { return None };
                    let (at_low, at_high) = (headline(&lo.table, key), headline(&hi.table, key));
                    Some(Bar {
                        assumption: lo.assumption.clone().unwrap_or_default(),
                        low_value: lo.value,
                        high_value: hi.value,
                        at_low,
                        at_high,
                        swing: (at_low - b).abs().max((at_high - b).abs()),
                    })
                })
                .collect();
            tornado.sort_by(|x, y| {
                y.swing
                    .total_cmp(&x.swing)
                    .then(x.assumption.cmp(&y.assumption))
            });
            Headline {
                key: key.into(),
                label: label.into(),
                base: b,
                band,
                tornado,
            }
        })
        .collect();
    Summary {
        machine: base.machine.clone(),
        workload: base.workload.clone(),
        a_patches: base.a_patches.clone(),
        b_patches: base.b_patches.clone().unwrap_or_default(),
        seeds: base.seeds.clone(),
        sim_seconds: base.sim_seconds,
        points: lines.len(),
        headlines,
    }
}

/// The summary as text: each headline's band, then its tornado (rows that move it, largest
/// first; the rest are counted).
pub fn to_text(s: &Summary, top: usize) -> String {
    let mut o = String::new();
    let list = |p: &[String]| {
        if p.is_empty() {
            "(none)".to_string()
        } else {
            p.join(",")
        }
    };
    let _ = writeln!(
        o,
        "Sensitivity: {} {}, A: {}, B: {}, {} s, seed {:?}\n{} points: the table's values, then each assumption at the low and the high end of its range (one at a time)\n",
        s.machine,
        s.workload,
        list(&s.a_patches),
        list(&s.b_patches),
        s.sim_seconds,
        s.seeds,
        s.points
    );
    let _ = writeln!(
        o,
        "{:<34} {:>12} {:>24}",
        "figure", "at values", "band over the ranges"
    );
    for h in &s.headlines {
        let _ = writeln!(
            o,
            "{:<34} {:>12.2} {:>24}",
            h.label,
            h.base,
            format!("[{:.2}, {:.2}]", h.band[0], h.band[1])
        );
    }
    for h in &s.headlines {
        let _ = writeln!(o, "\n{} (at the table's values {:.2})", h.label, h.base);
        let _ = writeln!(
            o,
            "{:>4}  {:<20} {:>22} {:>22} {:>8}",
            "rank", "assumption", "low end → figure", "high end → figure", "swing"
        );
        let moving: Vec<&Bar> = h.tornado.iter().filter(|b| b.swing > 0.0).collect();
        for (i, b) in moving.iter().take(top).enumerate() {
            let _ = writeln!(
                o,
                "{:>4}  {:<20} {:>22} {:>22} {:>8.2}",
                i + 1,
                b.assumption,
                format!("{} → {:.2}", b.low_value, b.at_low),
                format!("{} → {:.2}", b.high_value, b.at_high),
                b.swing
            );
        }
        let rest = h.tornado.len() - moving.len().min(top);
        if rest > 0 {
            let _ = writeln!(
                o,
                "      ({rest} more: {} move it by less, {} not at all)",
                moving.len().saturating_sub(top),
                h.tornado.len() - moving.len()
            );
        }
    }
    o
}

#[cfg(test)]
mod tests;
