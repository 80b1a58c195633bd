//! `/proc/schedstat` (version 17) as text, and the A/B per-domain diff `perf sched stats diff`
//! gives (`run --schedstat`, `compare --schedstat`; docs/SCHEMA.md). The counters themselves are
//! counted by the engine (`sched/schedstat.rs`); this file only prints them.

use crate::error::Invalid;
use crate::machine::domains::SchedDomains;
use crate::sched::{DomainStat, Schedstat};
use crate::{Experiment, Report, Run, Side};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The schedstat format version printed (Documentation/scheduler/sched-stats.rst, v6.18).
pub const SCHEDSTAT_VERSION: u32 = 17;

/// A cpumask as `%*pb` prints it: hex, 32 bits per comma-separated word, highest word first.
pub fn mask_hex(cpus: &[u32], nr_cpus: usize) -> String {
    let words = nr_cpus.div_ceil(32).max(1);
    let mut w = vec![0u32; words];
    for &c in cpus {
        w[c as usize / 32] |= 1 << (c % 32);
    }
    let mut s = String::new();
    for (i, x) in w.iter().rev().enumerate() {
        if i == 0 {
            let digits = (nr_cpus - 32 * (words - 1)).div_ceil(4).max(1);
            let _ = write!(s, "{x:0digits$x}");
        } else {
            let _ = write!(s, ",{x:08x}");
        }
    }
    s
}

/// The counters as `/proc/schedstat` prints them: `version`, `timestamp` (jiffies), then per CPU
/// its `cpu<N>` line and one `domain<N> <name> <mask>` line per domain.
pub fn proc_schedstat(st: &Schedstat, sd: &SchedDomains, jiffies: u64) -> String {
    let n = st.cpus.len();
    let mut s = format!("version {SCHEDSTAT_VERSION}\ntimestamp {jiffies}\n");
    for (c, cs) in st.cpus.iter().enumerate() {
        let _ = writeln!(
            s,
            "cpu{c} {} 0 {} {} {} {} {} {} {}",
            cs.yld_count,
            cs.sched_count,
            cs.sched_goidle,
            cs.ttwu_count,
            cs.ttwu_local,
            cs.rq_cpu_time,
            cs.run_delay,
            cs.pcount
        );
        for (l, ds) in st.domains[c].iter().enumerate() {
            let d = &sd.domains[sd.per_cpu[c][l] as usize];
            let fields: Vec<String> = ds.fields().iter().map(|v| v.to_string()).collect();
            let _ = writeln!(
                s,
                "domain{l} {} {} {}",
                d.name,
                mask_hex(&d.cpus, n),
                fields.join(" ")
            );
        }
    }
    s
}

/// Per domain name (lowest level first), every field summed over the CPUs that have it: what
/// `perf sched stats report` shows per domain once the per-CPU lines are added up.
pub fn per_domain(st: &Schedstat, sd: &SchedDomains) -> Vec<(String, Vec<u64>)> {
    let mut out: Vec<(String, Vec<u64>)> = Vec::new();
    for c in 0..st.cpus.len() {
        for (l, ds) in st.domains[c].iter().enumerate() {
            let name = sd.domains[sd.per_cpu[c][l] as usize].name;
            let f = ds.fields();
            match out.iter_mut().find(|(n, _)| n == name) {
                Some((_, v)) => v.iter_mut().zip(&f).for_each(|(a, b)| *a += b),
                None => out.push((name.to_string(), f)),
            }
        }
    }
    out
}

/// The CPU fields summed over all CPUs, with their names.
pub fn cpu_totals(st: &Schedstat) -> Vec<(&'static str, u64)> {
    let sum = |f: &dyn Fn(&crate::sched::CpuStat) -> u64| st.cpus.iter().map(f).sum::<u64>();
    vec![
        ("yld_count", sum(&|c| c.yld_count)),
        ("sched_count", sum(&|c| c.sched_count)),
        ("sched_goidle", sum(&|c| c.sched_goidle)),
        ("ttwu_count", sum(&|c| c.ttwu_count)),
        ("ttwu_local", sum(&|c| c.ttwu_local)),
        ("rq_cpu_time", sum(&|c| c.rq_cpu_time)),
        ("run_delay", sum(&|c| c.run_delay)),
        ("pcount", sum(&|c| c.pcount)),
        ("nr_switches", sum(&|c| c.nr_switches)),
    ]
}

fn pct(a: u64, b: u64) -> String {
    if a == 0 {
        if b == 0 { "0.00".into() } else { "new".into() }
    } else {
        format!("{:+.2}", (b as f64 - a as f64) * 100.0 / a as f64)
    }
}

/// The summary report of one run: CPU totals, then per domain the fields that are not zero.
pub fn report_text(st: &Schedstat, sd: &SchedDomains) -> String {
    let mut s = String::from("# perf sched stats report (all CPUs summed)\n");
    for (name, v) in cpu_totals(st) {
        let _ = writeln!(s, "{name:<34} {v:>14}");
    }
    let names = DomainStat::field_names();
    for (dom, v) in per_domain(st, sd) {
        let _ = writeln!(s, "\n## domain {dom}");
        for (n, x) in names.iter().zip(&v) {
            if *x != 0 {
                let _ = writeln!(s, "{n:<34} {x:>14}");
            }
        }
    }
    s
}

/// `perf sched stats diff`: per field A, B and the change, CPU totals then per domain (domains
/// matched by name; a field zero on both sides is left out). The figures are `diff_sections`'.
pub fn diff(a: &SchedstatRun, b: &SchedstatRun) -> String {
    let mut s = String::from("# perf sched stats diff (all CPUs summed): A, B, change %\n");
    for sec in diff_sections(&a.summary(), &b.summary()) {
        if let Some(dom) = &sec.domain {
            let _ = writeln!(s, "\n## domain {dom}");
        }
        for r in sec.rows.iter().filter(|r| r.a != 0 || r.b != 0) {
            let _ = writeln!(s, "{:<34} {:>14} {:>14} {:>9}", r.name, r.a, r.b, r.change);
        }
    }
    s
}

/// One run's counters summed over CPUs, as the page gets them (`Sim::schedstat`): the CPU totals
/// (`cpu_totals`) and per domain name every field (`per_domain`), with the field names.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SchedstatSummary {
    pub version: u32,
    pub cpu: Vec<(String, u64)>,
    /// `DomainStat::field_names()`, the order of every domain's `fields`.
    pub field_names: Vec<String>,
    pub domains: Vec<SummaryDomain>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryDomain {
    pub name: String,
    pub fields: Vec<u64>,
}

/// The summary of counters `st` on domains `sd`.
pub fn summary(st: &Schedstat, sd: &SchedDomains) -> SchedstatSummary {
    SchedstatSummary {
        version: SCHEDSTAT_VERSION,
        cpu: cpu_totals(st)
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
        field_names: DomainStat::field_names(),
        domains: per_domain(st, sd)
            .into_iter()
            .map(|(name, fields)| SummaryDomain { name, fields })
            .collect(),
    }
}

/// One row of the diff: a field of A and B and the change in % (`+12.34`, `+0.00` when equal,
/// `0.00` when both are 0, `new` when A is 0 and B is not).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    pub name: String,
    pub a: u64,
    pub b: u64,
    pub change: String,
}

/// The CPU totals (`domain: None`) or one domain of the diff; every field, zero ones included
/// (the text leaves out the rows zero on both sides).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffSection {
    pub domain: Option<String>,
    pub rows: Vec<DiffRow>,
}

/// `perf sched stats diff` of two summaries: CPU totals, then the domains of A in order and those
/// only B has (matched by name; a domain one side lacks counts 0 there).
pub fn diff_sections(a: &SchedstatSummary, b: &SchedstatSummary) -> Vec<DiffSection> {
    let row = |n: &str, x: u64, y: u64| DiffRow {
        name: n.to_string(),
        a: x,
        b: y,
        change: pct(x, y),
    };
    let mut out = vec![DiffSection {
        domain: None,
        rows: a
            .cpu
            .iter()
            .map(|(n, x)| {
                let y = b.cpu.iter().find(|(m, _)| m == n).map_or(0, |p| p.1);
                row(n, *x, y)
            })
            .collect(),
    }];
    let mut doms: Vec<&String> = a.domains.iter().map(|d| &d.name).collect();
    for d in &b.domains {
        if !doms.contains(&&d.name) {
            doms.push(&d.name);
        }
    }
    let names = DomainStat::field_names();
    let zero = vec![0u64; names.len()];
    let of = |s: &'_ SchedstatSummary, dom: &str| -> Vec<u64> {
        s.domains
            .iter()
            .find(|d| d.name == dom)
            .map_or(zero.clone(), |d| d.fields.clone())
    };
    for dom in doms {
        let (va, vb) = (of(a, dom), of(b, dom));
        out.push(DiffSection {
            domain: Some(dom.clone()),
            rows: names
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    row(
                        n,
                        va.get(i).copied().unwrap_or(0),
                        vb.get(i).copied().unwrap_or(0),
                    )
                })
                .collect(),
        });
    }
    out
}

/// One run's counters over its measured window, with what printing them needs from its domains.
#[derive(Clone, Debug)]
pub struct SchedstatRun {
    pub stat: Schedstat,
    /// `/proc/schedstat` text.
    pub proc_text: String,
    /// The summary (`report`).
    pub report_text: String,
    /// `per_domain`.
    pub domains: Vec<(String, Vec<u64>)>,
}

impl SchedstatRun {
    /// The run's `SchedstatSummary` (its CPU totals and `domains`).
    pub fn summary(&self) -> SchedstatSummary {
        SchedstatSummary {
            version: SCHEDSTAT_VERSION,
            cpu: cpu_totals(&self.stat)
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect(),
            field_names: DomainStat::field_names(),
            domains: self
                .domains
                .iter()
                .map(|(name, fields)| SummaryDomain {
                    name: name.clone(),
                    fields: fields.clone(),
                })
                .collect(),
        }
    }
}

/// Runs one side to the end and reads its counters (the report is the same as `run`'s).
pub fn run_with_schedstat(exp: &Experiment, side: Side) -> Result<(Report, SchedstatRun), Invalid> {
    let mut r = Run::new(exp, side)?;
    while !r.step(1 << 20) {}
    let report = r.report();
    let e = r.engine();
    let stat = e.schedstat_measured();
    let run = SchedstatRun {
        proc_text: proc_schedstat(&stat, &e.sd, e.jiffies()),
        report_text: report_text(&stat, &e.sd),
        domains: per_domain(&stat, &e.sd),
        stat,
    };
    Ok((report, run))
}

type SideResult = Result<(Report, SchedstatRun), Invalid>;

/// Both sides (natively on two threads, as `run_ab`).
pub fn run_ab_with_schedstat(exp: &Experiment) -> (SideResult, SideResult) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::scope(|s| {
            let b = s.spawn(|| run_with_schedstat(exp, Side::B));
            let a = run_with_schedstat(exp, Side::A);
            (a, b.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        (
            run_with_schedstat(exp, Side::A),
            run_with_schedstat(exp, Side::B),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_print_as_the_kernel_prints_them() {
        assert_eq!(mask_hex(&[0, 1, 2, 3], 8), "0f");
        assert_eq!(mask_hex(&[0, 33], 40), "02,00000001");
        assert_eq!(mask_hex(&[0], 1), "1");
    }
}
