//! Kernel requests for a line are served in the order the line's serialization point sees them
//! (docs/MODEL.md §5b): arrival there after the request leg, ties by CPU number.

use super::*;
use crate::experiment::scenario::Experiment;

/// `gnr-2s-96c-snc3` (Intel: 2 sockets × 3 nodes) with one spinning task, run to 0.5 ms, when
/// the next event (a tick) is far enough away for the requests below to run undisturbed.
/// (`tso_tests.rs` drives the same engine.)
pub(super) fn engine() -> Engine {
    let mut x = Experiment::default();
    x.machine.preset = "gnr-2s-96c-snc3".into();
    x.workload.name = "spin".into();
    x.workload.knobs.insert("threads".into(), "1".into());
    let mut e = super::super::test_engine(&x);
    e.run_until(500_000, u64::MAX);
    e
}

/// CPU `c` issues a `lock cmpxchg` on `sched_balance_running` at `t` (its kernel entered).
fn cmpxchg(e: &mut Engine, c: usize, t: u64) {
    e.now = t;
    e.enter_kernel(c);
    e.kaccess(c, e.line_sbr, Op::Atomic, 0, Sym::SchedBalanceDomains);
}

/// The CPU that served the line last (its owner once every request has been served).
fn owner(e: &Engine) -> Option<u32> {
    e.lines.owner(e.line_sbr)
}

fn second_socket_cpu(e: &Engine) -> usize {
    (0..e.topo.nr_cpus())
        .find(|&c| e.topo.cpus[c].socket == 1)
        .unwrap()
}

/// A request from the home's socket issued 10 ns after one from the other socket still arrives
/// first (its leg is ~40 ns against ~206 ns) and is served first: the remote one gets the line last.
#[test]
fn a_request_from_the_homes_socket_is_served_before_an_earlier_remote_one() {
    let mut e = engine();
    let t0 = e.now + 100;
    let (remote, local) = (second_socket_cpu(&e), 5);
    assert_eq!(e.lines.home(e.line_sbr), 0);
    cmpxchg(&mut e, remote, t0);
    cmpxchg(&mut e, local, t0 + 10);
    e.run_until(t0 + 50_000, u64::MAX);
    assert_eq!(owner(&e), Some(remote as u32), "served in arrival order");
    // the local one waited only for its own transfer; the remote one for it, then the socket
    let stall = |c: usize| e.metrics.cpu_sym[c][Sym::SchedBalanceDomains as usize];
    assert!(
        stall(local) < stall(remote),
        "{} vs {}",
        stall(local),
        stall(remote)
    );
    assert!(stall(remote) >= stall(local) + e.topo.xfer_ns(local, remote) as u64 - 10);
}

/// Equal legs at the same nanosecond: the lower CPU number is served first, whatever the order
/// the requests were issued (queued) in.
#[test]
fn equal_arrivals_are_served_in_cpu_order() {
    for (first, second) in [(7, 9), (9, 7)] {
        let mut e = engine();
        let t0 = e.now + 100;
        // CPU 0 holds the line; 7 and 9 share an LLC with it (same leg)
        cmpxchg(&mut e, 0, t0);
        e.run_until(t0 + 10_000, u64::MAX);
        let t1 = e.now + 100;
        cmpxchg(&mut e, first, t1);
        cmpxchg(&mut e, second, t1);
        e.run_until(t1 + 10_000, u64::MAX);
        assert_eq!(owner(&e), Some(9), "issued {first} then {second}");
    }
}

/// Every CPU of both sockets requests the line at once: the storm drains one socket's
/// requesters in runs, so the line crosses the socket a handful of times, not at every other
/// hand-off as in event-insertion order.
#[test]
fn a_storm_from_both_sockets_crosses_the_socket_a_handful_of_times() {
    let mut e = engine();
    let t0 = e.now + 100;
    let n = e.topo.nr_cpus();
    // interleave the two sockets' CPUs in the issue order, the worst case for insertion order
    let half = n / 2;
    for i in 0..half {
        for c in [half + i, i] {
            if e.cpus[c].exec.mode != Mode::Kernel && e.cpus[c].rq.curr.is_none() {
                cmpxchg(&mut e, c, t0);
            }
        }
    }
    e.run_until(t0 + 2_000_000, u64::MAX);
    let s = &e.lines.stats(e.line_sbr);
    let handoffs: u64 = s.handoffs.iter().sum();
    assert!(handoffs as usize >= n - 10, "{handoffs} hand-offs");
    assert!(
        s.handoffs[3] <= 4,
        "{} of {handoffs} crossed the socket",
        s.handoffs[3]
    );
}
