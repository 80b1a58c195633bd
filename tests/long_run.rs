//! Long-run invariants over at least 10^8 simulated events (release build; run by scripts/test.sh
//! with `--ignored`): no task lost or duplicated, CPU time conserved, cache-line counters consistent.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::Run;
use schedplay::experiment::scenario::{Experiment, Side};

const TARGET_EVENTS: u64 = 100_000_000;

fn scenario(machine: &str, workload: &str, patches: &[&str]) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = machine.into();
    e.workload.name = workload.into();
    e.a = patches.iter().map(|p| p.to_string()).collect();
    e.seconds = 60.0;
    e
}

#[test]
#[ignore = "long: run with --ignored in release (scripts/test.sh does)"]
fn invariants_over_1e8_events() {
    let scenarios = [
        scenario("gnr-2s-snc3", "oltp", &[]),
        scenario(
            "milan-2s",
            "oltp",
            &["cache-aware", "cas-skip-many-threads"],
        ),
        scenario(
            "gnr-2s-96c-snc3",
            "hackbench",
            &["skip-not-due", "skew-tick"],
        ),
        scenario(
            "spr-2s-snc4",
            "schbench",
            &["serialize-after-swb", "serialize-newidle"],
        ),
    ];
    let mut total = 0u64;
    for e in scenarios.iter().cycle() {
        let mut run = Run::new(e, Side::A).unwrap();
        let budget = TARGET_EVENTS / 4;
        let mut checked_at = 0;
        loop {
            let done = run.step(200_000);
            run.engine().check_invariants().unwrap();
            run.flush();
            let eng = run.engine();
            eng.check_cpu_time().unwrap();
            for (i, l) in eng.lines.lines.iter().enumerate() {
                let s = &eng.lines.stats(i);
                assert!(
                    s.hitm_local + s.hitm_remote <= s.loads + s.atomics,
                    "{}: HITM exceeds loads",
                    l.name
                );
                let fields: u64 = (eng.lines.fields(i).iter())
                    .map(|f| f.loads + f.stores + f.atomics)
                    .sum();
                assert_eq!(
                    fields,
                    s.loads + s.stores + s.atomics,
                    "{}: per-offset counts",
                    l.name
                );
            }
            if done || eng.events - checked_at >= budget {
                checked_at = eng.events;
                break;
            }
        }
        let r = run.report();
        assert!(r.throughput_per_sec > 0.0);
        total += checked_at;
        println!(
            "{} {} on {}: {} events, {:.3} simulated s",
            e.workload.name,
            e.a.join(","),
            e.machine.preset,
            checked_at,
            r.sim_seconds
        );
        if total >= TARGET_EVENTS {
            break;
        }
    }
    println!("total simulated events checked: {total}");
    assert!(total >= TARGET_EVENTS);
}
