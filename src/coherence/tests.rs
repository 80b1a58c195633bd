use super::*;
use crate::machine::presets::preset;
use crate::machine::topology::Topology;

/// The default locked-RMW hit cost (`Assumptions::locked_hit_ns`).
fn locked() -> u64 {
    Assumptions::default().locked_hit_ns
}

#[test]
fn simultaneous_atomics_are_served_fifo_k_transfers_for_the_kth() {
    let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
    let mut c = Coherence::new(&t);
    let l = c.add_line("sched_balance_running", &[(0, "sched_balance_running")]);
    c.access(&t, l, 0, Op::Store, 0, 0); // CPU 0 owns it
    let stall0 = c.stats(l).stall_ns;
    // CPUs 1..=4 (same LLC as CPU 0) hit it at the same instant.
    let xfer = t.xfer_ns(0, 1) as u64 + locked();
    let done: Vec<u64> = (1..=4)
        .map(|cpu| c.access(&t, l, cpu, Op::Atomic, 0, 1000).done)
        .collect();
    // each waits for the one before it and for the hold window after that one's RMW
    let kth = |k: u64| 1000 + k * xfer + (k - 1) * DEFAULT_RMW_HOLD_NS;
    assert_eq!(done, (1..=4).map(kth).collect::<Vec<_>>());
    let s = &c.stats(l);
    assert_eq!((s.atomics, s.hitm_local, s.hitm_remote), (4, 4, 0));
    assert_eq!(
        s.stall_ns - stall0,
        (1..=4).map(|k| kth(k) - 1000).sum::<u64>()
    );
}

/// The group-by-group nearest and farthest sharer equal a sharer-by-sharer search, on
/// machines whose LLCs are smaller than, equal to, and larger than a node.
#[test]
fn sharer_bounds_by_group_equal_the_bounds_over_every_sharer() {
    let mut rng = crate::sim::rng::SimRng::new(9);
    for (name, llc_spans_nodes) in [
        ("gnr-2s-snc3", false),
        ("milan-2s", false),
        ("custom", true),
    ] {
        let mut spec = preset(name).unwrap();
        if llc_spans_nodes {
            spec.nodes_per_socket = 2;
            spec.cores_per_llc = spec.cores_per_socket;
        }
        let t = Topology::new(spec).unwrap();
        let n = t.nr_cpus();
        let mut c = Coherence::new(&t);
        let l = c.add_line("x", &[(0, "a")]);
        for round in 0..200 {
            c.hot[l].clear_holders(&mut c.held, l);
            let k = rng.below(n as u64);
            for _ in 0..rng.below(1 + k) {
                let s = rng.below(n as u64) as u32;
                c.hot[l].add_sharer(&mut c.held, l, s, c.groups.of_cpu[s as usize]);
            }
            let cpu = rng.below(n as u64) as usize;
            let each: Vec<u32> = (0..n)
                .filter(|&s| s != cpu && c.held.has(l, s as u32))
                .map(|s| t.xfer_ns(s, cpu))
                .collect();
            let want = each
                .iter()
                .min()
                .map(|&lo| (lo, *each.iter().max().unwrap()));
            let got = c.groups.sharer_xfer_bounds(&c.hot[l], &c.held, l, cpu);
            assert_eq!(got, want, "{name} round {round} cpu {cpu}");
        }
    }
}

/// What an access reads of a line (`Hot`) is one host cache line, and nothing but it: the records of
/// consecutive lines are consecutive cache lines.
#[test]
fn a_clean_miss_reads_one_cache_line_of_the_line() {
    use std::mem::{align_of, size_of};
    assert_eq!(align_of::<Hot>(), 64);
    assert_eq!(size_of::<Hot>(), 64);
}

/// N readers of a shared line at one instant are served together, in about one shared-load
/// latency, not N transfers; the next store waits for them and invalidates every copy.
#[test]
fn simultaneous_loads_of_a_shared_line_are_served_concurrently() {
    let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
    let mut c = Coherence::new(&t);
    let l = c.add_line("x", &[(0, "a")]);
    c.access(&t, l, 0, Op::Store, 0, 0);
    // the first read is a HITM; CPUs 2..=9 (same LLC) read once it is shared
    let first = c.access(&t, l, 1, Op::Load, 0, 100);
    assert!(first.hitm);
    let same_llc = t.xfer_ns(0, 1) as u64;
    assert_eq!(first.done, 100 + same_llc);
    let done: Vec<u64> = (2..=9)
        .map(|cpu| c.access(&t, l, cpu, Op::Load, 0, 100).done)
        .collect();
    assert!(done.iter().all(|&d| d == first.done + same_llc), "{done:?}");
    assert_eq!(c.lines[l].stats.hitm_local, 1);
    // a store by CPU 0 waits for those copies, then invalidates them (same LLC: one transfer)
    let s = c.access(&t, l, 0, Op::Store, 0, 150);
    assert_eq!(s.visible, first.done + 2 * same_llc + HIT_NS);
    assert_eq!(c.hot[l].nr_sharers, 0);
}

/// The winner of a cmpxchg releases with a plain store: inside the hold window, before the next
/// queued request is served, it commits in place (no transfer); after it, the store needs the
/// line back and takes effect behind the requests queued before it.
#[test]
fn release_store_commits_in_place_only_while_the_line_is_still_held() {
    let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
    let xfer = t.xfer_ns(0, 1) as u64;
    const HOLD: u64 = 20;
    for (release_after, in_place) in [(HOLD - 5, true), (HOLD + 5, false)] {
        let mut c = Coherence::new(&t);
        c.set_rmw_hold_ns(HOLD);
        let l = c.add_line("flag", &[(0, "flag")]);
        c.access(&t, l, 0, Op::Store, 0, 0);
        let win = c.access(&t, l, 1, Op::Atomic, 0, 1000); // CPU 1 takes it
        let waiter = c.access(&t, l, 2, Op::Atomic, 0, 1000); // CPU 2 queues behind
        assert_eq!(waiter.done, win.done + HOLD + xfer + locked());
        let rel = c.access(&t, l, 1, Op::Store, 0, win.done + release_after);
        assert_eq!(
            rel.done,
            win.done + release_after + HIT_NS,
            "the store buffer"
        );
        if in_place {
            assert_eq!(rel.visible, rel.done, "committed before the hand-off");
        } else {
            assert_eq!(rel.visible, waiter.done + HOLD + xfer + HIT_NS);
        }
    }
}

#[test]
fn load_of_a_line_modified_elsewhere_is_a_hitm_and_then_shared() {
    let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
    let mut c = Coherence::new(&t);
    let l = c.add_line("x", &[(0, "a"), (8, "b")]);
    c.access(&t, l, 0, Op::Store, 0, 0);
    let a = c.access(&t, l, 128, Op::Load, 1, 100); // other socket
    assert!(a.hitm);
    assert_eq!(a.done, 100 + 412);
    assert_eq!(c.lines[l].stats.hitm_remote, 1);
    // now shared: a second load by the same CPU hits, CPU 0 too
    assert!(!c.access(&t, l, 128, Op::Load, 1, 600).hitm);
    assert_eq!(c.access(&t, l, 0, Op::Load, 0, 600).done, 601);
    assert_eq!(c.lines[l].fields[1].hitm, 1);
    // a store invalidates both and costs the farthest sharer's transfer; the CPU goes on
    let s = c.access(&t, l, 1, Op::Store, 0, 1000);
    assert_eq!((s.done, s.visible), (1000 + HIT_NS, 1000 + 412 + HIT_NS));
}

/// Which CPUs are still handing a line off, after any mix of hand-offs and of time passing, is
/// what a queue of (CPU, time) pairs says, through the renumbering at 2^16 hand-offs too.
#[test]
fn a_cpu_is_handing_off_while_one_of_its_hand_offs_is_pending() {
    let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
    let mut c = Coherence::new(&t);
    let l = c.add_line("x", &[(0, "a")]);
    let mut rng = crate::sim::rng::SimRng::new(3);
    // start just below the wrap, so the run renumbers a few times' worth of pushes later
    c.lines[l].handoffs_pushed = u16::MAX - 40;
    let mut reference: std::collections::VecDeque<(u32, u64)> = Default::default();
    let mut now = 0;
    for step in 0..150_000 {
        if rng.below(3) > 0 {
            // a hand-off from one of a few CPUs, sometimes earlier than the last one pushed
            let from = rng.below(6) as u32;
            let at = now + rng.below(400);
            c.lines[l].push_handoff(&mut c.hot[l], from, at, t.nr_cpus());
            reference.push_back((from, at));
        } else {
            now += rng.below(150);
            c.lines[l].forget_handoffs_before(&mut c.hot[l], now);
            while reference.front().is_some_and(|&(_, at)| at <= now) {
                reference.pop_front();
            }
        }
        for cpu in 0..8 {
            let want = reference.iter().any(|&(f, _)| f as usize == cpu);
            assert_eq!(
                c.lines[l].is_handing_off(cpu),
                want,
                "step {step}, CPU {cpu}"
            );
        }
    }
}
