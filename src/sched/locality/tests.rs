use super::*;
use crate::experiment::scenario::Experiment;
use crate::machine::presets::MACHINES;

/// `custom` (GNR SNC3 figures): 2 sockets × 4 cores, one node per socket, 2 cores per LLC,
/// SMT `smt`, running `threads` spinners.
fn engine(smt: u32, threads: u32) -> Engine {
    engine_of(2, 4, smt, threads)
}

fn engine_of(sockets: u32, cores: u32, smt: u32, threads: u32) -> Engine {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    let o = &mut e.machine.overrides;
    (o.sockets, o.cores_per_socket, o.nodes_per_socket) = (Some(sockets), Some(cores), Some(1));
    (o.cores_per_llc, o.smt) = (Some(2), Some(smt));
    e.workload.name = "spin".into();
    e.workload
        .knobs
        .insert("threads".into(), threads.to_string().into());
    super::test_engine(&e)
}

/// Task 0 with a 1 MiB working set started once on CPU 0 (home node 0, warm there), caches
/// otherwise empty.
fn warm_on_cpu0(smt: u32) -> Engine {
    let mut e = engine(smt, 1);
    e.loc = Locality::new(&e.topo, 1 << 20, 0);
    e.tasks[0].loc = TaskLoc::new();
    start(&mut e, 0);
    e
}

fn start(e: &mut Engine, c: usize) -> u64 {
    let ns = e.locality_start(c, 0);
    e.tasks[0].last_ran_cpu = c as u32;
    ns
}

/// 1 MiB = 16384 lines, REFILL_MLP 8; GNR SNC3 figures: LLC hit 33, DRAM 104 local / 452
/// other socket, c2c 105 (other LLC of the node) / 412 (other socket), 20 GB/s floor (52,429 ns).
#[test]
fn refill_costs_by_distance_class_by_hand() {
    let lines = 16384u64;
    assert_eq!(engine(2, 1).loc.fig, GNR_SNC3);
    // first start: first touch, the warm run's own start (no price)
    let mut e = engine(2, 1);
    e.loc = Locality::new(&e.topo, 1 << 20, 0);
    e.tasks[0].loc = TaskLoc::new();
    assert_eq!(start(&mut e, 0), 0);
    let cases: [(usize, u64, usize); 5] = [
        (0, 0, 0),               // same CPU: warm
        (8, 0, 1),               // SMT sibling: same L2
        (1, lines * 33 / 8, 2),  // same LLC, other core: L2 part from the LLC
        (2, lines * 105 / 8, 3), // other LLC of the node: cache to cache
        (4, lines * 412 / 8, 5), // other socket: cache to cache
    ];
    for (cpu, want, class) in cases {
        let mut e = warm_on_cpu0(2);
        assert_eq!(start(&mut e, cpu), want, "CPU {cpu}");
        assert_eq!(e.metrics.loc[stat::START + class], 1, "CPU {cpu}");
    }
    // evicted from the LLC by others' fills: from home memory on the other socket
    let mut e = warm_on_cpu0(2);
    e.loc.llc_fill[0] += 32 << 20;
    assert_eq!(start(&mut e, 4), lines * 452 / 8);
    // a warm burst costs its length: others filled 512 KiB since, 1 MiB + 512 KiB fit the L2
    let mut e = warm_on_cpu0(2);
    e.loc.l2_fill[0] += 1 << 19;
    e.loc.llc_fill[0] += 1 << 19;
    assert_eq!(start(&mut e, 0), 0);
    assert_eq!(e.metrics.loc[stat::COLD_STARTS], 0);
    // half evicted, back on the same core: the L2 keeps what others left room for
    let mut e = warm_on_cpu0(2);
    e.loc.l2_fill[0] += (2 << 20) - (1 << 19);
    assert_eq!(start(&mut e, 0), lines / 2 * 33 / 8);
    // the bandwidth floor: 4 KiB from the LLC is latency-bound, 64 lines × 33 / 8 = 264 ns,
    // but 4096 B at 20 GB/s take 205 ns, so latency rules; from a 1 GB/s core it would not
    let f = Figures {
        core_gbps: 1,
        ..GNR_SNC3
    };
    assert_eq!(refill_ns(&GNR_SNC3, 8, 4096, 0, 0, 0, 0), 264);
    assert_eq!(refill_ns(&f, 8, 4096, 0, 0, 0, 0), 4096);
}

/// The SNC3 classes on `gnr-2s-snc3` (CPU 0 on node 0): the nearer node 1 (CPU 43, SLIT 15)
/// at 105 ns and the farther node 2 (CPU 86, SLIT 17) at 132 ns per line.
#[test]
fn refill_from_the_near_and_far_snc_node() {
    for (cpu, ns, class) in [(43usize, 105u64, 3usize), (86, 132, 4)] {
        let mut e = Experiment::default();
        e.machine.preset = "gnr-2s-snc3".into();
        e.workload.name = "spin".into();
        e.workload.knobs.insert("threads".into(), "1".into());
        let mut e = super::test_engine(&e);
        e.loc = Locality::new(&e.topo, 1 << 20, 0);
        e.tasks[0].loc = TaskLoc::new();
        start(&mut e, 0);
        assert_eq!(start(&mut e, cpu), 16384 * ns / 8, "CPU {cpu}");
        assert_eq!(e.metrics.loc[stat::START + class], 1);
    }
}

#[test]
fn handoff_is_priced_at_the_waker_distance() {
    for (w, want) in [(0u32, 0u64), (1, 2 * 81), (2, 2 * 105), (4, 2 * 412)] {
        let mut e = warm_on_cpu0(1);
        e.tasks[0].handoff = Some((w, 2));
        assert_eq!(start(&mut e, 0), want, "waker CPU {w}");
    }
}

/// A burst away from its home node is stretched by its memory-bound share × (remote/local − 1):
/// 30% of 100 µs × (452 − 104) / 104 = 100,385 ns (rounded up); at home, nothing.
#[test]
fn first_touch_home_and_remote_memory_stretch() {
    let mut e = warm_on_cpu0(1);
    e.loc.mem_pct = 30;
    assert_eq!(e.tasks[0].loc.home, 0);
    assert_eq!(e.locality_burst(1, 0, 100_000), 0);
    assert_eq!(e.locality_burst(4, 0, 100_000), 100_385);
    // the home stays where the memory was first touched
    start(&mut e, 4);
    assert_eq!(e.tasks[0].loc.home, 0);
    assert_eq!(e.metrics.loc[stat::REMOTE_MEM_NS], 100_385);
}

/// On 2 cores × SMT2, four spinners (both threads of each core busy) each progress at the SMT
/// share (615‰); two (one per core) run at full speed, and a warm burst costs its length.
#[test]
fn busy_siblings_progress_at_the_smt_share() {
    for (threads, share) in [(4u32, 615u64), (2, 1000)] {
        let mut e = engine_of(1, 2, 2, threads);
        e.run_until(200_000_000, u64::MAX);
        e.flush_accounting();
        let (left, smt_open, _) = e.locality_in_flight();
        let m = &e.metrics.loc;
        let user = e.metrics.total(Sym::User);
        let started = m[stat::BURST_NS] + m[stat::REFILL_NS] + m[stat::COMM_NS];
        let done = started - left;
        let lost = m[stat::SMT_NS] + smt_open;
        assert_eq!(user, done + lost);
        let per_mille = done * 1000 / user;
        assert!(
            per_mille.abs_diff(share) <= 1,
            "{threads}: {per_mille}‰ of {user} ns"
        );
        if threads == 2 {
            // only while an idle sibling runs its tick or idle-entry kernel work
            assert!(lost * 1000 < user, "{lost} of {user}");
            assert_eq!(m[stat::COLD_STARTS], 0);
        }
    }
}

#[test]
fn every_preset_has_figures() {
    for m in MACHINES {
        assert!(
            MACHINE_FIGURES.iter().any(|(n, _)| *n == m.name),
            "{} has no locality figures",
            m.name
        );
    }
    for (_, f) in MACHINE_FIGURES {
        assert!(f.mem_local_ns <= f.mem_node_ns && f.mem_node_ns <= f.mem_socket_ns);
        assert!(f.smt_share_permille >= 500 && f.smt_share_permille <= 1000);
    }
}

#[test]
fn rate_round_trip_is_exact() {
    for rem in [1u64, 7, 999, 100_000, 123_456_789] {
        for rate in [615u32, 610, 625, 1000] {
            let w = wall_for(rem, rate);
            assert_eq!(progress(w, rate, rem), rem);
            assert!(progress(w - 1, rate, rem) < rem);
        }
    }
}

/// The u64 path of `mul_div_ceil` gives what the 128-bit formula gives, on both sides of the
/// product overflowing u64.
#[test]
fn mul_div_ceil_is_the_128_bit_quotient_rounded_up() {
    let wide = |a: u64, b: u64, c: u64| ((a as u128 * b as u128).div_ceil(c as u128)) as u64;
    let mut rng = crate::sim::rng::SimRng::new(3);
    let mut overflowed = 0;
    for _ in 0..100_000 {
        // operands of random widths, so that some products overflow and some do not
        let a = rng.next_u64() >> rng.below(64);
        let b = rng.next_u64() >> rng.below(64);
        let c = (rng.next_u64() >> rng.below(64)).max(1);
        overflowed += u32::from(a.checked_mul(b).is_none());
        assert_eq!(
            super::mul_div_ceil(a, b, c),
            wide(a, b, c),
            "{a} × {b} / {c}"
        );
    }
    assert!(
        overflowed > 1000 && overflowed < 99_000,
        "{overflowed} overflowed"
    );
    assert_eq!(super::mul_div_ceil(u64::MAX, 2, u64::MAX), 2);
    assert_eq!(super::mul_div_ceil(7, 3, 2), 11);
}
