//! `serve`: memcached driven open-loop from another host (src/workload/serve.rs,
//! docs/MODEL.md §18c): arrivals that do not wait for replies, their NET_RX wakeups, and the
//! report's `serve` block.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::report::ServeReport;
use schedplay::{Run, run};

fn serve(rate: u64, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "genoa-vm-16".into();
    e.workload.name = "serve".into();
    e.workload.knobs.insert("rate".into(), rate.into());
    e.seconds = seconds;
    e
}

fn block(e: &Experiment) -> ServeReport {
    run(e, Side::A).unwrap().serve.expect("a serve block")
}

#[test]
fn under_capacity_every_request_is_answered_at_the_offered_rate() {
    let r = block(&serve(50_000, 0.2));
    assert!((r.achieved_per_sec / 50_000.0 - 1.0).abs() < 0.03, "{r:?}");
    assert_eq!(r.drops, 0);
    assert!(r.outstanding < 20, "{r:?}");
    // the link and a GET's CPU are the floor; moderation and wakeups come on top
    assert!(r.p50_us > 20.0 + 5.0, "{r:?}");
    assert!(r.p50_us <= r.p90_us && r.p90_us <= r.p99_us && r.p99_us <= r.p999_us);
}

#[test]
fn past_the_workers_capacity_requests_queue_and_the_achieved_rate_saturates() {
    // 4 workers at 5 µs a GET serve at most 800k/s
    let r = block(&serve(2_000_000, 0.05));
    assert!(r.achieved_per_sec < 900_000.0, "{r:?}");
    assert!(r.outstanding > 10_000, "{r:?}");
    let low = block(&serve(50_000, 0.05));
    assert!(r.p99_us > 10.0 * low.p99_us, "{r:?} vs {low:?}");
}

#[test]
fn the_arrivals_do_not_depend_on_the_server() {
    // the same seed sends the same requests whatever the server does with them: a slower
    // server (SETs cost more) answers the same requests later, never other ones
    let a = serve(100_000, 0.05);
    let mut b = a.clone();
    b.workload.knobs.insert("threads".into(), 1.into());
    let (ra, rb) = (run(&a, Side::A).unwrap(), run(&b, Side::A).unwrap());
    let (na, nb) = (ra.network.unwrap(), rb.network.unwrap());
    assert_eq!(na.packets, nb.packets, "the same requests reached the card");
    assert_ne!(ra.report_hash, rb.report_hash);
}

#[test]
fn every_request_goes_through_net_rx_and_the_run_keeps_the_invariants() {
    let e = serve(200_000, 0.02);
    let mut r = Run::new(&e, Side::A).unwrap();
    while !r.step(20_000) {
        r.engine().check_invariants().unwrap();
    }
    r.flush();
    r.engine().check_cpu_time().unwrap();
    let rep = r.report();
    let net = rep.network.unwrap();
    let s = rep.serve.unwrap();
    // ≈ 200k/s × 0.02 s = 4000 requests, each a packet on the card
    assert!((3600..4400).contains(&net.packets), "{net:?}");
    assert!(net.interrupts > 0 && net.interrupts <= net.packets);
    assert!(s.outstanding < 50, "{s:?}");
}

#[test]
fn the_same_seed_gives_the_same_report() {
    let e = serve(150_000, 0.03);
    assert_eq!(
        run(&e, Side::A).unwrap().report_hash,
        run(&e, Side::A).unwrap().report_hash
    );
}
