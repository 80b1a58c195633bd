//! /proc/schedstat v17 (src/schedstat.rs, src/sched/schedstat.rs): over the measured window the
//! counters add up to the report's counters, counted where the kernel counts them, and the text
//! has the kernel's layout.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::report::schedstat::{diff, run_with_schedstat};
use schedplay::run;

fn exp(machine: &str, workload: &str, seconds: f64, warmup: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = machine.into();
    e.workload.name = workload.into();
    e.seconds = seconds;
    e.warmup = warmup;
    e
}

fn check_totals(e: &Experiment) {
    let (r, st) = run_with_schedstat(e, Side::A).unwrap();
    let c = |n: &str| r.counters[n];
    let s = &st.stat;
    let cpu = |f: fn(&schedplay::sched::CpuStat) -> u64| s.cpus.iter().map(f).sum::<u64>();
    let dom = |f: &dyn Fn(&schedplay::sched::DomainStat) -> u64| {
        s.domains.iter().flatten().map(f).sum::<u64>()
    };
    let lb = |i: usize, f: fn(&schedplay::sched::LbStat) -> u64| dom(&|d| f(&d.lb[i]));
    // try_to_wake_up: ttwu_count on the waker's rq; local or in exactly one domain remote
    assert!(cpu(|x| x.ttwu_count) > 0);
    assert_eq!(cpu(|x| x.ttwu_count), c("wakeups"));
    assert_eq!(
        cpu(|x| x.ttwu_local) + dom(&|d| d.ttwu_wake_remote),
        cpu(|x| x.ttwu_count)
    );
    // sched_balance_rq: lb_count per idle type = the balance calls
    assert_eq!(
        lb(0, |l| l.lb_count) + lb(1, |l| l.lb_count),
        c("sched_balance_rq_calls")
    );
    assert_eq!(lb(2, |l| l.lb_count), c("newidle_balance_calls"));
    // every task moved by balancing is an lb_gained (active balance: detach_one_task, CPU_IDLE)
    let gained: u64 = (0..3).map(|i| lb(i, |l| l.lb_gained)).sum();
    assert_eq!(gained, c("lb_migrations"));
    assert_eq!(dom(&|d| d.alb_pushed), c("active_balance_moves"));
    for i in 0..3 {
        let ended = lb(i, |l| l.lb_balanced) + lb(i, |l| l.lb_failed);
        assert!(ended <= lb(i, |l| l.lb_count), "idle type {i}");
        assert!(lb(i, |l| l.lb_nobusyg) + lb(i, |l| l.lb_nobusyq) <= lb(i, |l| l.lb_balanced));
        assert!(lb(i, |l| l.lb_hot_gained) <= lb(i, |l| l.lb_gained));
    }
    // __schedule: a switch to a task is a timeslice; every switch is inside a counted schedule()
    assert!(cpu(|x| x.pcount) <= cpu(|x| x.nr_switches));
    // vmstat's cs is rq->nr_switches summed, and its per-CPU rate is that over CPUs and seconds
    assert!(c("context_switches") > 0);
    assert_eq!(c("context_switches"), cpu(|x| x.nr_switches));
    let rate = c("context_switches") as f64 / r.measured_seconds() / r.machine.cpus as f64;
    assert!((r.context_switches_per_cpu_sec - rate).abs() <= 1e-9 * rate.max(1.0));
    assert!(cpu(|x| x.sched_goidle) <= cpu(|x| x.sched_count));
    assert!(cpu(|x| x.nr_switches) <= 2 * cpu(|x| x.sched_count));
    // the text: version 17, a cpu line of 9 fields and domain lines of name, mask and 45 fields
    let mut lines = st.proc_text.lines();
    assert_eq!(lines.next(), Some("version 17"));
    assert!(lines.next().unwrap().starts_with("timestamp "));
    for l in lines {
        let f: Vec<&str> = l.split(' ').collect();
        if l.starts_with("cpu") {
            assert_eq!(f.len(), 10, "{l}");
        } else {
            assert!(l.starts_with("domain"), "{l}");
            assert_eq!(f.len(), 48, "{l}");
        }
    }
    // counting only watches
    assert_eq!(run(e, Side::A).unwrap().report_hash, r.report_hash);
}

#[test]
fn totals_equal_the_reports_counters_over_the_measured_window() {
    check_totals(&exp("gnr-2s-96c-snc3", "oltp", 0.06, 0.02));
    check_totals(&exp("milan-2s", "hackbench", 0.03, 0.0));
}

#[test]
fn compare_gives_the_per_domain_diff() {
    let e = exp("milan-2s", "oltp", 0.03, 0.0);
    let (_, a) = run_with_schedstat(&e, Side::A).unwrap();
    let (_, b) = run_with_schedstat(&e, Side::A).unwrap();
    let d = diff(&a, &b);
    assert!(
        d.contains("## domain MC") && d.contains("ttwu_count"),
        "{d}"
    );
    // the same run on both sides changes nothing
    let rows: Vec<&str> = d
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert!(rows.len() > 5);
    assert!(rows.iter().all(|l| l.ends_with("+0.00")), "{d}");
}

/// The page's table (`Sim::schedstat` -> `schedstat_diff`): the summary a finished run gives is the
/// CLI's, and the diff's rows are the text's rows with every zero-on-both field kept.
#[test]
fn the_pages_summary_and_diff_are_the_clis() {
    use schedplay::report::schedstat::{diff_sections, summary};
    let mut e = exp("milan-2s", "hackbench", 0.03, 0.01);
    e.b = vec!["skip-not-due".into()];
    let (_, a) = run_with_schedstat(&e, Side::A).unwrap();
    let (_, b) = run_with_schedstat(&e, Side::B).unwrap();
    // what the page's worker reads from its finished Sim
    let mut r = schedplay::Run::new(&e, Side::B).unwrap();
    while !r.step(1 << 20) {}
    let eng = r.engine();
    let page_b = summary(&eng.schedstat_measured(), &eng.sd);
    assert_eq!(page_b, b.summary());
    let secs = diff_sections(&a.summary(), &page_b);
    assert_eq!(secs[0].domain, None);
    assert_eq!(secs.len(), 1 + b.domains.len());
    let text = diff(&a, &b);
    let mut want = Vec::new();
    for s in &secs {
        if let Some(d) = &s.domain {
            want.push(format!("## domain {d}"));
        }
        assert!(s.domain.is_none() || s.rows.len() == 45, "{:?}", s.domain);
        for row in s.rows.iter().filter(|x| x.a != 0 || x.b != 0) {
            want.push(format!("{} {} {} {}", row.name, row.a, row.b, row.change));
        }
    }
    let got: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("# "))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(got, want);
    // A and B are different runs: some field tells them apart, and its change is B against A
    let moved = secs
        .iter()
        .flat_map(|s| &s.rows)
        .find(|x| x.a != x.b && x.a != 0);
    let m = moved.expect("A and B differ in some field");
    let pct = (m.b as f64 - m.a as f64) * 100.0 / m.a as f64;
    assert_eq!(m.change, format!("{pct:+.2}"), "{m:?}");
}
