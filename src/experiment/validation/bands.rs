//! `validate --bands`: each row's figure over the plausible ranges of the screened assumptions
//! (the sensitivity screen of its experiment: the table's values, then each assumption at both
//! ends, one at a time, same seeds) and the assumption that moves it most, so a reader sees how
//! much of the distance to the published figure an assumption could explain. A band is shown
//! next to the verdict and never changes it: `status` is the point estimate's.
//!
//! Cost: a run row's experiment runs 2k+1 times (41 with the whole table) instead of once; an
//! input row (a transfer latency) needs no run: its band is the machine table's spread.

use super::{Figure, Outcome, Row, Settings, run_figure};
use crate::assumptions::{self, XFER_PCT};
use crate::error::Invalid;
use crate::experiment::repeat;
use crate::experiment::scenario::Side;
use crate::experiment::sensitivity::Screen;
use crate::machine::topology::Topology;
use serde::Serialize;

/// A row's figure over the assumptions' ranges.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Band {
    /// The lowest and highest model figure over the screen's points.
    pub lo: f64,
    pub hi: f64,
    /// The assumption whose ends move the figure most, and how far (the larger distance of its
    /// ends from the point estimate).
    pub dominant: String,
    pub swing: f64,
    /// The band meets the tolerance: some assumption at one end of its range would bring the
    /// figure into it (or keep it there). Information only: the verdict stays the point's.
    pub reaches_tolerance: bool,
}

fn band_of(model: f64, tolerance: [f64; 2], values: &[(String, f64, f64)]) -> Band {
    let mut lo = model;
    let mut hi = model;
    let (mut dominant, mut swing) = (String::new(), 0.0f64);
    for (name, l, h) in values {
        for v in [*l, *h] {
            if v.is_nan() {
                continue;
            }
            lo = lo.min(v);
            hi = hi.max(v);
            let d = (v - model).abs();
            if d > swing {
                (dominant, swing) = (name.clone(), d);
            }
        }
    }
    Band {
        lo,
        hi,
        dominant,
        swing,
        reaches_tolerance: lo <= tolerance[1] && hi >= tolerance[0],
    }
}

/// The outcomes of `validate` with each row's band (`only`: these assumptions; empty: all).
pub fn with_bands(
    rows: &[Row],
    s: &Settings,
    out: Vec<Outcome>,
    only: &[String],
) -> Result<Vec<Outcome>, Invalid> {
    // every distinct experiment's screen, all runs in one pool
    let mut screens: Vec<Screen> = Vec::new();
    for r in rows {
        if !matches!(r.figure, Figure::Latency(_)) {
            let e = r.experiment(s)?;
            if !screens.iter().any(|x| x.base == e) {
                screens.push(Screen::new(&e, only)?);
            }
        }
    }
    let sides = [Side::A, Side::B];
    let jobs: Vec<repeat::Job> = screens
        .iter()
        .flat_map(|sc| sc.point_experiments())
        .flat_map(|e| repeat::jobs(&e, &sides))
        .collect();
    let reports = repeat::run_jobs(&jobs, s.threads)?;
    let per = 2 * s.repeats.max(1) as usize;
    let mut at = 0;
    let mut by_screen: Vec<Vec<(Vec<_>, Vec<_>)>> = Vec::new();
    for sc in &screens {
        let mut pts = Vec::new();
        for _ in 0..sc.nr_points() {
            let rs = &reports[at..at + per];
            at += per;
            let a: Vec<_> = rs.iter().step_by(2).cloned().collect();
            let b: Vec<_> = rs.iter().skip(1).step_by(2).cloned().collect();
            pts.push((a, b));
        }
        by_screen.push(pts);
    }
    rows.iter()
        .zip(out)
        .map(|(r, mut o)| {
            let values: Vec<(String, f64, f64)> = match r.figure {
                Figure::Latency(class) => {
                    let mut spec = crate::machine::presets::preset(r.machine)
                        .ok_or_else(|| crate::error::FieldError::new("machine", r.machine))?;
                    let (lo, hi) =
                        assumptions::row(XFER_PCT).map_or((100, 100), |x| x.range(&spec.latency));
                    let base = spec.latency;
                    let mut at = |pct: u64| -> Result<f64, Invalid> {
                        spec.latency = base.scaled(pct);
                        let topo = Topology::new(spec.clone())?;
                        Ok((0..topo.nr_cpus())
                            .find(|&b| topo.class(0, b) == class)
                            .map_or(f64::NAN, |b| topo.xfer_ns(0, b) as f64))
                    };
                    vec![(XFER_PCT.to_string(), at(lo)?, at(hi)?)]
                }
                _ => {
                    let e = r.experiment(s)?;
                    let i = screens.iter().position(|x| x.base == e).unwrap_or(0);
                    let fig = |p: usize| {
                        let (a, b) = &by_screen[i][p];
                        run_figure(r, a, b).map_or(f64::NAN, |x| x.0)
                    };
                    screens[i]
                        .ranges
                        .iter()
                        .enumerate()
                        .map(|(k, rg)| (rg.name.clone(), fig(2 * k + 1), fig(2 * k + 2)))
                        .collect()
                }
            };
            o.band = Some(band_of(o.model, o.tolerance, &values));
            Ok(o)
        })
        .collect()
}

/// The band as a table cell: `lo .. hi (DOMINANT ±swing)`.
pub fn cell(o: &Outcome) -> String {
    match &o.band {
        Some(b) if b.dominant.is_empty() => {
            format!(
                "{} .. {} (nothing moves it)",
                super::fmt_num(b.lo),
                super::fmt_num(b.hi)
            )
        }
        Some(b) => format!(
            "{} .. {} ({} ±{})",
            super::fmt_num(b.lo),
            super::fmt_num(b.hi),
            b.dominant,
            super::fmt_num(b.swing)
        ),
        None => String::new(),
    }
}
