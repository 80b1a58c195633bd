//! `/proc/schedstat` (version 17) as text, and the A/B per-domain diff `perf sched stats diff`
//! gives (`run --schedstat`, `compare --schedstat`; docs/SCHEMA.md). The counters themselves are
//! counted by the engine (`sched/schedstat.rs`); this file only prints them.

use crate::error::Invalid;
use crate::machine::domains::SchedDomains;
use crate::sched::{DomainStat, Schedstat};
use crate::{Experiment, Report, Run, Side};
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
/// matched by name; a field zero on both sides is left out).
pub fn diff(a: &SchedstatRun, b: &SchedstatRun) -> String {
    let mut s = String::from("# perf sched stats diff (all CPUs summed): A, B, change %\n");
    let row = |s: &mut String, n: &str, x: u64, y: u64| {
        if x != 0 || y != 0 {
            let _ = writeln!(s, "{n:<34} {x:>14} {y:>14} {:>9}", pct(x, y));
        }
    };
    for ((n, x), (_, y)) in cpu_totals(&a.stat).into_iter().zip(cpu_totals(&b.stat)) {
        row(&mut s, n, x, y);
    }
    let names = DomainStat::field_names();
    let mut doms: Vec<&String> = a.domains.iter().map(|d| &d.0).collect();
    for (n, _) in &b.domains {
        if !doms.contains(&n) {
            doms.push(n);
        }
    }
    let zero = vec![0u64; names.len()];
    for dom in doms {
        let va = a
            .domains
            .iter()
            .find(|d| &d.0 == dom)
            .map_or(&zero, |d| &d.1);
        let vb = b
            .domains
            .iter()
            .find(|d| &d.0 == dom)
            .map_or(&zero, |d| &d.1);
        let _ = writeln!(s, "\n## domain {dom}");
        for (i, n) in names.iter().enumerate() {
            row(&mut s, n, va[i], vb[i]);
        }
    }
    s
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
