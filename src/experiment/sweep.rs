//! The scaling sweep: one experiment on machines of growing CPU count (2 sockets, SMT2, the base
//! preset's hardware figures and nodes per socket), A and B at each size: where does contention
//! start to bite.

use crate::error::{FieldError, Invalid};
use crate::experiment::run::run_ab;
use crate::experiment::scenario::Experiment;
use crate::experiment::scenario::Side;
use crate::report::{Delta, Report};
use serde::{Deserialize, Serialize};

/// CPU counts of a sweep point: 2 sockets × cores × 2 SMT threads, so multiples of `CPUS_STEP`.
pub const CPUS_STEP: u32 = 4;
pub const MIN_CPUS: u32 = CPUS_STEP;
pub const MAX_CPUS: u32 = crate::machine::limits::MAX_CPUS as u32;
/// At most this many points in one list (`parse_cpu_list`, the page's sweep).
pub const MAX_POINTS: usize = 12;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepPoint {
    pub cpus: u32,
    pub a_throughput: f64,
    pub b_throughput: f64,
    pub a_contention_pct: f64,
    pub b_contention_pct: f64,
    pub throughput_pct: f64,
    pub events: u64,
    /// Runs per side when repeated (then the figures above are means over them and `events` the
    /// sum). Absent for one run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
    /// 95% interval of `throughput_pct` (Welch), when repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_pct_ci95: Option<[f64; 2]>,
    /// Welch's two-sided p-value of the throughput change, when repeated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_p: Option<f64>,
}

impl SweepPoint {
    /// The point of `cpus` CPUs from its A and B reports.
    pub fn new(cpus: u32, a: &Report, b: &Report) -> SweepPoint {
        SweepPoint {
            cpus,
            a_throughput: a.throughput_per_sec,
            b_throughput: b.throughput_per_sec,
            a_contention_pct: a.contention_pct,
            b_contention_pct: b.contention_pct,
            throughput_pct: Delta::between(a, b).throughput_pct,
            events: a.events + b.events,
            repeats: None,
            throughput_pct_ci95: None,
            throughput_p: None,
        }
    }

    /// The point from the repeated runs of A and B (same seeds); one run each is `new`.
    pub fn repeated(cpus: u32, a: &[Report], b: &[Report]) -> SweepPoint {
        if a.len() == 1 && b.len() == 1 {
            return SweepPoint::new(cpus, &a[0], &b[0]);
        }
        let t = crate::experiment::repeat::Table::new(a, Some(b));
        let mean = |k: &str, b: bool| {
            t.figure(k).map_or(0.0, |f| {
                if b {
                    f.b.as_ref().map_or(0.0, |s| s.mean)
                } else {
                    f.a.mean
                }
            })
        };
        let d = t.figure("throughput").and_then(|f| f.delta.clone());
        SweepPoint {
            cpus,
            a_throughput: mean("throughput", false),
            b_throughput: mean("throughput", true),
            a_contention_pct: mean("contention_pct", false),
            b_contention_pct: mean("contention_pct", true),
            throughput_pct: d.as_ref().map_or(0.0, |d| d.change),
            events: a.iter().chain(b).map(|r| r.events).sum(),
            repeats: Some(a.len() as u32),
            throughput_pct_ci95: d.as_ref().map(|d| d.ci95),
            throughput_p: d.map(|d| d.p),
        }
    }
}

/// Every point of a sweep, all runs (points × seeds × sides) spread over `threads` threads. Every
/// bad CPU count is reported before anything runs.
pub fn points(exp: &Experiment, cpus: &[u32], threads: usize) -> Result<Vec<SweepPoint>, Invalid> {
    let mut errs = Vec::new();
    let mut exps = Vec::new();
    for &n in cpus {
        match resized(exp, n).and_then(|e| e.validate().map(|_| e)) {
            Ok(e) => exps.push((n, e)),
            Err(inv) => errs.extend(inv.0),
        }
    }
    if !errs.is_empty() {
        return Err(Invalid(errs));
    }
    let sides = [Side::A, Side::B];
    let jobs: Vec<crate::experiment::repeat::Job> = exps
        .iter()
        .flat_map(|(_, e)| crate::experiment::repeat::jobs(e, &sides))
        .collect();
    let reports = crate::experiment::repeat::run_jobs(&jobs, threads)?;
    let per_point = 2 * exp.repeats.max(1) as usize;
    Ok(exps
        .iter()
        .zip(reports.chunks(per_point))
        .map(|((n, _), rs)| {
            let a: Vec<Report> = rs.iter().step_by(2).cloned().collect();
            let b: Vec<Report> = rs.iter().skip(1).step_by(2).cloned().collect();
            SweepPoint::repeated(*n, &a, &b)
        })
        .collect())
}

/// A CPU count a sweep point can simulate exactly, or an error naming `cpus` and what is allowed.
pub fn check_cpus(cpus: u32) -> Result<u32, FieldError> {
    if cpus.is_multiple_of(CPUS_STEP) && (MIN_CPUS..=MAX_CPUS).contains(&cpus) {
        Ok(cpus)
    } else {
        Err(FieldError::new(
            "cpus",
            format!(
                "{cpus} is not allowed: a multiple of {CPUS_STEP} in {MIN_CPUS}..={MAX_CPUS} \
                 (2 sockets × cores × 2 SMT threads)"
            ),
        ))
    }
}

/// "64, 128,256" → [64, 128, 256]: CPU counts separated by commas or spaces, each checked by
/// `check_cpus`, sorted, duplicates dropped, at most `MAX_POINTS`. Every bad entry is reported.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, Invalid> {
    let mut errs = Vec::new();
    let mut cpus = Vec::new();
    let parts: Vec<&str> = text
        .split(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .filter(|p| !p.is_empty())
        .collect();
    if parts.is_empty() {
        errs.push(FieldError::new(
            "cpus",
            "give at least one CPU count, e.g. 64,128,256",
        ));
    }
    for p in parts {
        match p.parse::<u32>() {
            Ok(n) => match check_cpus(n) {
                Ok(n) => cpus.push(n),
                Err(e) => errs.push(e),
            },
            Err(_) => {
                let shown: String = p.chars().take(20).collect();
                errs.push(FieldError::new(
                    "cpus",
                    format!("{shown:?} is not a whole number"),
                ));
            }
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.len() > MAX_POINTS {
        errs.push(FieldError::new(
            "cpus",
            format!("{} points: at most {MAX_POINTS}", cpus.len()),
        ));
    }
    if errs.is_empty() {
        Ok(cpus)
    } else {
        Err(Invalid(errs))
    }
}

/// The experiment resized to `cpus` CPUs (2 sockets × cores × SMT2); workload knobs that default to
/// the CPU count follow it. A count that is not a multiple of 4 in range is refused (`cpus`).
pub fn resized(exp: &Experiment, cpus: u32) -> Result<Experiment, Invalid> {
    let cpus = check_cpus(cpus)?;
    let mut e = exp.clone();
    let o = &mut e.machine.overrides;
    o.sockets = Some(2);
    o.smt = Some(2);
    o.cores_per_socket = Some(cpus / CPUS_STEP);
    o.cores_per_llc = None;
    Ok(e)
}

pub fn point(exp: &Experiment, cpus: u32) -> Result<SweepPoint, Invalid> {
    let e = resized(exp, cpus)?;
    let (a, b) = run_ab(&e);
    Ok(SweepPoint::new(cpus, &a?, &b?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_representable_counts() {
        assert_eq!(check_cpus(16), Ok(16));
        assert_eq!(check_cpus(4096), Ok(4096));
        for bad in [0, 2, 18, 4100, 8192] {
            let e = check_cpus(bad).unwrap_err();
            assert_eq!(e.field, "cpus");
            assert!(e.message.contains("multiple of 4"), "{}", e.message);
        }
        let e = resized(&Experiment::default(), 18).unwrap_err();
        assert_eq!(e.0[0].field, "cpus");
        let r = resized(&Experiment::default(), 48).unwrap();
        assert_eq!(r.machine_spec().unwrap().cores_per_socket * 2 * 2, 48);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("128, 64,64 256").unwrap(),
            vec![64, 128, 256]
        );
        let e = parse_cpu_list("64,130,8192,x").unwrap_err();
        let msgs: Vec<&str> = e.0.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(e.0.len(), 3, "{msgs:?}");
        assert!(e.0.iter().all(|e| e.field == "cpus"));
        assert!(msgs[0].starts_with("130 is not allowed"), "{msgs:?}");
        assert!(parse_cpu_list(" ").is_err());
        let many: Vec<String> = (1..=13).map(|i| (i * 4).to_string()).collect();
        assert!(parse_cpu_list(&many.join(",")).is_err());
    }
}
