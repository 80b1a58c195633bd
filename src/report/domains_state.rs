//! `run --domains-state`: each sched domain's run-time fields at the end of the run, as
//! `grep . /sys/kernel/debug/sched/domains/cpu*/domain*/*` lists them on a box (`max_newidle_lb_cost`
//! is a v6.18 debugfs file; `balance_interval`, `last_balance`, `nr_balance_failed` and, from 6.19,
//! `newidle_call` / `newidle_success` / `newidle_ratio` are the `struct sched_domain` fields people
//! post from drgn or crash, printed the same way). The engine holds the values
//! (`sched::DomainRuntime`); this file runs a side and prints them.

use crate::error::Invalid;
use crate::sched::DomainRuntime;
use crate::{Experiment, Report, Run, Side};
use std::fmt::Write as _;

/// Runs one side to the end; its report (the same as `run`'s) and its domains' fields then.
pub fn run_with_domains_state(
    exp: &Experiment,
    side: Side,
) -> Result<(Report, Vec<DomainRuntime>), Invalid> {
    let mut r = Run::new(exp, side)?;
    while !r.step(1 << 20) {}
    let report = r.report();
    Ok((report, r.engine().domains_state()))
}

/// The fields as `grep .` prints debugfs files: `/sys/kernel/debug/sched/domains/cpuN/domainM/
/// FILE:VALUE`, files in name order; `last_balance` relative to jiffies at the end.
pub fn text(rows: &[DomainRuntime]) -> String {
    let mut s = String::new();
    for d in rows {
        let dir = format!(
            "/sys/kernel/debug/sched/domains/cpu{}/domain{}",
            d.cpu, d.domain
        );
        let mut files: Vec<(&str, String)> = vec![
            ("balance_interval", d.balance_interval.to_string()),
            (
                "last_balance",
                format!("{:+} (jiffies from now)", d.last_balance),
            ),
            ("max_newidle_lb_cost", d.max_newidle_lb_cost.to_string()),
            ("name", d.name.to_string()),
            ("nr_balance_failed", d.nr_balance_failed.to_string()),
        ];
        for (file, v) in [
            ("newidle_call", d.newidle_call),
            ("newidle_ratio", d.newidle_ratio),
            ("newidle_success", d.newidle_success),
        ] {
            if let Some(v) = v {
                files.push((file, v.to_string()));
            }
        }
        files.sort_by_key(|f| f.0);
        for (file, v) in files {
            let _ = writeln!(s, "{dir}/{file}:{v}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(kernel: &str) -> Experiment {
        let mut e = Experiment::default();
        e.machine.preset = "genoa-vm-16".into();
        e.workload.name = "schbench".into();
        e.kernel = kernel.into();
        e.seconds = 0.05;
        e
    }

    /// Every CPU has its domains (MC and PKG on genoa-vm-16); the newidle fields exist from 6.19
    /// and move off sd_init's 512/256 as newidle balancing runs; last_balance is not in the
    /// future; a CPU that balanced newly idle has a measured max_newidle_lb_cost.
    #[test]
    fn every_domain_is_listed_with_the_release_fields() {
        let (_, rows) = run_with_domains_state(&exp("6.18"), Side::A).unwrap();
        assert_eq!(rows.len(), 16 * 2);
        assert!(rows.iter().all(|d| d.newidle_call.is_none()));
        assert!(rows.iter().all(|d| d.last_balance <= 0));
        assert!(rows.iter().any(|d| d.max_newidle_lb_cost > 0));
        assert_eq!((rows[0].name, rows[1].name), ("MC", "PKG"));
        let (_, rows) = run_with_domains_state(&exp("6.19"), Side::A).unwrap();
        assert!(rows.iter().all(|d| d.newidle_call.is_some()));
        assert!(
            rows.iter()
                .any(|d| (d.newidle_call, d.newidle_success) != (Some(512), Some(256)))
        );
        let t = text(&rows);
        assert!(
            t.contains("/sys/kernel/debug/sched/domains/cpu0/domain1/name:PKG\n"),
            "{t}"
        );
        assert!(t.contains("cpu15/domain0/newidle_ratio:"), "{t}");
    }
}
