//! Behaviour of the engine: invariants over long runs, determinism, and the seed-000 mechanism.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::{Report, Run, run};

fn exp(machine: &str, workload: &str, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = machine.into();
    e.workload.name = workload.into();
    e.seconds = seconds;
    e
}

fn custom(e: &mut Experiment, sockets: u32, cores: u32, nodes: u32) {
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(sockets);
    e.machine.overrides.cores_per_socket = Some(cores);
    e.machine.overrides.nodes_per_socket = Some(nodes);
}

fn pct(r: &Report, sym: &str) -> f64 {
    r.symbol_percent(sym)
}

/// Runs in slices, checking run-queue invariants and CPU-time conservation after every slice.
fn run_checked(e: &Experiment) -> Report {
    let mut r = Run::new(e, Side::A).unwrap();
    loop {
        let done = r.step(20_000);
        r.engine().check_invariants().unwrap();
        r.flush();
        r.engine().check_cpu_time().unwrap();
        if done {
            break;
        }
    }
    let runtime = r.engine().task_runtime();
    let never: Vec<usize> = (0..runtime.len()).filter(|&t| runtime[t] == 0).collect();
    assert!(
        never.is_empty(),
        "{}: tasks that never ran: {never:?}",
        e.workload.name
    );
    r.report()
}

#[test]
fn invariants_hold_for_every_workload() {
    for (w, knobs) in [
        ("oltp", vec![]),
        ("hackbench", vec![("groups", 4), ("fds", 8)]),
        ("schbench", vec![]),
        ("spin", vec![("threads", 96)]),
        ("atomics", vec![("threads", 96)]),
    ] {
        let mut e = exp("custom", w, 0.05);
        custom(&mut e, 2, 16, 2);
        for (k, v) in knobs {
            e.workload.knobs.insert(k.into(), v.into());
        }
        e.b = vec![];
        let r = run_checked(&e);
        assert!(r.throughput_per_sec > 0.0, "{w}: no throughput");
        let total: f64 = r.profile.iter().map(|p| p.percent).sum();
        assert!((total - 100.0).abs() < 1e-6, "{w}: profile sums to {total}");
    }
}

#[test]
fn invariants_hold_with_every_balance_patch() {
    for p in [
        "skip-not-due",
        "serialize-after-swb",
        "serialize-newidle",
        "skew-tick",
        "snc3-distance-fix",
    ] {
        let mut e = exp("gnr-2s-96c-snc3", "oltp", 0.02);
        e.a = vec![p.into()];
        run_checked(&e);
    }
}

#[test]
fn same_seed_same_report_other_seed_other_report() {
    let mut e = exp("custom", "oltp", 0.05);
    custom(&mut e, 2, 16, 2);
    let a = serde_json::to_string(&run(&e, Side::A).unwrap()).unwrap();
    let b = serde_json::to_string(&run(&e, Side::A).unwrap()).unwrap();
    assert_eq!(a, b);
    e.seed = 2;
    let c = serde_json::to_string(&run(&e, Side::A).unwrap()).unwrap();
    assert_ne!(a, c);
}

#[test]
fn prefix_cmpxchg_on_every_serialize_visit_and_only_when_due_with_skip_not_due() {
    let e = exp("gnr-2s-96c-snc3", "oltp", 0.05);
    let a = run(&e, Side::A).unwrap();
    let c = |r: &Report, k: &str| r.counters[k];
    assert!(c(&a, "sd_serialize_level_visits") > 0);
    // equal but for the CPUs still queued on the line when the run ends (at most one per CPU)
    let in_flight = |r: &Report, visits: u64| visits - c(r, "sched_balance_running_cmpxchg");
    assert!(in_flight(&a, c(&a, "sd_serialize_level_visits")) <= 384);
    let mut e2 = e.clone();
    e2.a = vec!["skip-not-due".into()];
    let b = run(&e2, Side::A).unwrap();
    assert!(in_flight(&b, c(&b, "sd_serialize_level_visits_due")) <= 384);
    assert!(c(&b, "sd_serialize_level_visits_due") * 10 < c(&b, "sd_serialize_level_visits"));
}

/// Counters of the `sched_balance_running` cmpxchg on a 64-CPU, 4-node machine for 0.3 s.
fn sbr_counts(workload: &str, patches: &[&str]) -> (u64, u64) {
    let mut e = exp("custom", workload, 0.3);
    custom(&mut e, 2, 16, 2);
    e.a = patches.iter().map(|s| s.to_string()).collect();
    let r = run(&e, Side::A).unwrap();
    let due = r.counters["sd_serialize_level_visits_due"];
    (r.counters["sched_balance_running_cmpxchg"], due)
}

/// Every due visit of an SD_SERIALIZE level tries the flag with `skip-not-due`; after
/// should_we_balance (`serialize-after-swb`) only the CPU chosen to balance does, a small fraction.
#[test]
fn serialize_after_swb_tries_the_flag_only_after_should_we_balance() {
    let (cmpxchg, due) = sbr_counts("schbench", &["skip-not-due"]);
    assert!(due > 100, "the scenario must reach due NUMA levels: {due}");
    // equal but for the CPUs still queued on the line when the run ends (at most one per CPU)
    assert!(cmpxchg <= due && due - cmpxchg <= 64, "{cmpxchg} vs {due}");
    let (cmpxchg, due) = sbr_counts("schbench", &["serialize-after-swb"]);
    assert!(
        due > 100 && cmpxchg * 5 < due,
        "{cmpxchg} vs {due} due visits"
    );
}

/// Newidle balancing never touches the flag unless `serialize-newidle` makes it.
#[test]
fn serialize_newidle_makes_newidle_balancing_take_the_flag() {
    let (cmpxchg, due) = sbr_counts("hackbench", &["skip-not-due"]);
    assert!(
        cmpxchg <= due,
        "periodic balancing only: {cmpxchg} vs {due}"
    );
    let (cmpxchg, due) = sbr_counts("hackbench", &["skip-not-due", "serialize-newidle"]);
    assert!(
        cmpxchg > due + 500,
        "newidle adds tries: {cmpxchg} vs {due}"
    );
}

/// The `cas-*` toggles change code inside cache-aware scheduling only: without `cache-aware` the
/// report is the baseline's, field for field, but for the patch list and the hash.
#[test]
fn cas_toggles_without_cache_aware_change_nothing() {
    let mut e = exp("custom", "hackbench", 0.05);
    custom(&mut e, 2, 8, 2);
    e.workload.knobs.insert("mode".into(), "thread".into());
    let comparable = |patches: &[&str]| {
        let mut e = e.clone();
        e.a = patches.iter().map(|s| s.to_string()).collect();
        let mut v = serde_json::to_value(run(&e, Side::A).unwrap()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("patches");
        o.remove("report_hash");
        v
    };
    let base = comparable(&[]);
    for p in [
        "cas-skip-many-threads",
        "cas-nr-running-avg-own-line",
        "cas-write-if-changed",
    ] {
        assert!(base == comparable(&[p]), "{p} changed the report");
    }
    let all = [
        "cas-skip-many-threads",
        "cas-nr-running-avg-own-line",
        "cas-write-if-changed",
    ];
    assert!(base == comparable(&all));
    assert!(
        base != comparable(&["cache-aware"]),
        "cache-aware must show"
    );
}

#[test]
fn seed_000_sched_balance_running_contention_and_its_fix() {
    let mut e = exp("gnr-2s-96c-snc3", "oltp", 0.2);
    e.b = vec!["skip-not-due".into()];
    let a = run(&e, Side::A).unwrap();
    let b = run(&e, Side::B).unwrap();
    let (sa, sb) = (
        pct(&a, "sched_balance_domains"),
        pct(&b, "sched_balance_domains"),
    );
    // The lower bounds (A >= 5%, B < 1%, gain >= 4%). The model overshoots the seed's
    // 7.8% / +8% (docs/MODEL.md, calibration): the upper bounds are not asserted.
    assert!(sa >= 5.0, "A spends {sa:.2}% in sched_balance_domains");
    assert!(sb < 1.0, "B spends {sb:.2}%");
    let gain = (b.throughput_per_sec / a.throughput_per_sec - 1.0) * 100.0;
    // (the 4% held with the timer client at 80% busy; with sysbench and InnoDB's threads
    // on the box at its throughput peak the CPUs are saturated and the gain is about 3%)
    assert!(gain >= 1.5, "B's throughput gain {gain:.2}%");
    let line = a
        .cachelines
        .iter()
        .find(|l| l.name == "sched_balance_running")
        .unwrap();
    assert!(line.hitm_remote > 0 && line.avg_stall_ns > 1000.0);
}

#[test]
fn contention_grows_with_cpus_and_skew_tick_lowers_it() {
    let mut small = exp("custom", "oltp", 0.1);
    custom(&mut small, 2, 16, 2);
    let s = pct(&run(&small, Side::A).unwrap(), "sched_balance_domains");
    let big = exp("gnr-2s-96c-snc3", "oltp", 0.1);
    let l = pct(&run(&big, Side::A).unwrap(), "sched_balance_domains");
    assert!(s * 3.0 < l, "64 CPUs {s:.2}% vs 384 CPUs {l:.2}%");
    let mut skew = big.clone();
    skew.a = vec!["skew-tick".into()];
    let k = pct(&run(&skew, Side::A).unwrap(), "sched_balance_domains");
    assert!(k < l / 2.0, "skew-tick {k:.2}% vs {l:.2}%");
}

fn mm_hitm(r: &Report) -> u64 {
    r.cachelines
        .iter()
        .filter(|l| l.name.starts_with("mm_struct(mysqld)"))
        .map(|l| l.hitm_local + l.hitm_remote)
        .sum()
}

#[test]
fn seed_002_mm_struct_false_sharing_and_its_fixes() {
    let run_b = |b: &[&str]| {
        let mut e = exp("milan-2s", "oltp", 0.1);
        e.a = b.iter().map(|s| s.to_string()).collect();
        run(&e, Side::A).unwrap()
    };
    let a = run_b(&["cache-aware"]);
    let b = run_b(&["cache-aware", "cas-skip-many-threads"]);
    let fixed = run_b(&[
        "cache-aware",
        "cas-skip-many-threads",
        "cas-nr-running-avg-own-line",
        "cas-write-if-changed",
    ]);
    assert!(
        mm_hitm(&b) > 10 * mm_hitm(&a),
        "B's mm line HITM {} vs A {}",
        mm_hitm(&b),
        mm_hitm(&a)
    );
    // (user time grows with the SMT co-run of docs/MODEL.md §21 while the mm line's stalls do
    // not, so the kernel's share of non-idle cycles is lower than before it: 1.15% -> 0.92%)
    assert!(
        pct(&b, "account_mm_sched") > 0.5 && pct(&b, "exceed_llc_nr") > 0.1,
        "{:?}",
        b.profile
    );
    assert!(b.throughput_per_sec < a.throughput_per_sec);
    assert!(
        mm_hitm(&b) > 10 * mm_hitm(&fixed),
        "fixed: {} vs B {}",
        mm_hitm(&fixed),
        mm_hitm(&b)
    );
    // fix 2: a store of -1 over -1 only when two CPUs race between the test and the store;
    // without it, almost every store is one (with the placement prices of docs/MODEL.md §21 the
    // races are more frequent: 1,426 against 133,081 in 0.1 s, 93x fewer)
    assert!(
        fixed.counters["mm_sched_cpu_stores_of_unchanged_value"] * 50
            < b.counters["mm_sched_cpu_stores_of_unchanged_value"]
    );
    assert!(
        b.counters["mm_sched_cpu_stores_of_unchanged_value"] * 10
            > b.counters["mm_sched_cpu_stores"] * 9
    );
    // fix 1: nr_running_avg on its own line, which sees almost no HITM
    let own = fixed
        .cachelines
        .iter()
        .find(|l| l.name == "mm_struct(mysqld)+0x40")
        .expect("own line");
    // (its writer, task_cache_work, stores once an epoch: 126 HITMs in 0.1 s with sysbench on the
    // box, against B's hundreds of thousands on the shared line)
    assert!((own.hitm_local + own.hitm_remote) * 100 < mm_hitm(&b));
}

#[test]
fn cache_aware_invariants_hold() {
    let mut e = exp("custom", "hackbench", 0.05);
    custom(&mut e, 2, 16, 2);
    e.workload.knobs.insert("mode".into(), "thread".into());
    e.a = vec!["cache-aware".into(), "cas-skip-many-threads".into()];
    run_checked(&e);
}

mod golden;

#[test]
fn golden_report_hash() {
    let r = run(&golden::experiment(), Side::B).unwrap();
    assert_eq!(
        r.report_hash,
        golden::HASH.trim(),
        "the model changed: if on purpose, write {} to tests/golden/hash.txt",
        r.report_hash
    );
}

/// Both sides at once on two threads (compare, sweep) give the reports of one side after the other.
#[test]
fn run_ab_on_two_threads_equals_the_sides_run_one_by_one() {
    let mut e = exp("gnr-2s-96c-snc3", "oltp", 0.02);
    e.b = vec!["skip-not-due".into()];
    let (a, b) = schedplay::run_ab(&e);
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.report_hash, run(&e, Side::A).unwrap().report_hash);
    assert_eq!(b.report_hash, run(&e, Side::B).unwrap().report_hash);
    assert_ne!(
        a.report_hash, b.report_hash,
        "A and B differ, so a swap would show"
    );
}

/// The presets of the E-core servers, Turin, Turin Dense and the 8-socket box keep every engine
/// invariant in a short OLTP run (one client per CPU by default), with and without CLS.
#[test]
fn invariants_hold_on_the_new_presets() {
    for name in NEW_PRESETS {
        let e = exp(name, "oltp", 0.01);
        let r = run_checked(&e);
        assert!(r.throughput_per_sec > 0.0, "{name}");
    }
}

const NEW_PRESETS: &[&str] = &[
    "srf-2s",
    "cwf-2s",
    "turin-2s",
    "turin-dense-2s",
    "clx-8s",
    "genoa-vm-16",
];

/// The c2c fields of the `nohz` lines of a run: (line name, field name, accesses).
fn nohz_fields(r: &Report) -> Vec<(String, String, u64)> {
    r.cachelines
        .iter()
        .filter(|l| l.name.starts_with("nohz"))
        .flat_map(|l| {
            l.offsets.iter().map(|o| {
                (
                    l.name.clone(),
                    o.field.clone(),
                    o.loads + o.stores + o.atomics,
                )
            })
        })
        .collect()
}

/// `nohz-no-nr-cpus` takes `nohz.nr_cpus` out of the struct (and of the c2c table); the mask's bits
/// take their own line either way, reached through a pointer only with CPUMASK_OFFSTACK.
#[test]
fn nohz_layouts_and_nohz_no_nr_cpus() {
    let mut e = exp("custom", "oltp", 0.05);
    custom(&mut e, 2, 16, 2);
    e.workload.knobs.insert("clients".into(), 32.into());
    let fields = |patches: &[&str], offstack: u32| {
        let mut e = e.clone();
        e.machine.overrides.cpumask_offstack = Some(offstack);
        e.a = patches.iter().map(|s| s.to_string()).collect();
        nohz_fields(&run(&e, Side::A).unwrap())
    };
    let has = |f: &[(String, String, u64)], line: &str, field: &str| {
        f.iter()
            .any(|(l, x, n)| l.starts_with(line) && x == field && *n > 0)
    };
    let base = fields(&[], 1);
    assert!(has(&base, "nohz", "nohz.nr_cpus"), "{base:?}");
    assert!(
        has(&base, "nohz", "nohz.idle_cpus_mask (pointer)"),
        "{base:?}"
    );
    assert!(
        has(&base, "nohz.idle_cpus_mask bits 0-63", "bits"),
        "{base:?}"
    );
    let inline = fields(&[], 0);
    assert!(has(&inline, "nohz+0x400", "nohz.nr_cpus"), "{inline:?}");
    assert!(!inline.iter().any(|(_, x, _)| x.contains("pointer")));
    let patched = fields(&["nohz-no-nr-cpus"], 1);
    assert!(
        !patched.iter().any(|(_, x, _)| x == "nohz.nr_cpus"),
        "{patched:?}"
    );
    assert!(has(&patched, "nohz", "nohz.next_balance"), "{patched:?}");
}

/// With `nohz-ilb-round-robin` the idle load balancer's work spreads over more CPUs than the
/// lowest-numbered idle one.
#[test]
fn nohz_ilb_round_robin_spreads_the_ilb_work() {
    let ilb_cpus = |patches: &[&str]| {
        let mut e = exp("custom", "oltp", 0.3);
        custom(&mut e, 2, 16, 2);
        // a half-idle box (the remote timer client, one connection per two CPUs): the ILB's regime
        e.workload.knobs.insert("clients".into(), 32.into());
        e.workload.knobs.insert("client".into(), "remote".into());
        e.a = patches.iter().map(|s| s.to_string()).collect();
        let mut r = Run::new(&e, Side::A).unwrap();
        while !r.step(1_000_000) {}
        r.flush();
        let m = &r.engine().metrics;
        let sym = schedplay::sched::Sym::NohzIdleBalance as usize;
        (
            m.counters[schedplay::sched::Counter::IlbKicks as usize],
            m.cpu_sym.iter().filter(|s| s[sym] > 0).count(),
        )
    };
    let (kicks, lowest) = ilb_cpus(&[]);
    let (kicks_rr, spread) = ilb_cpus(&["nohz-ilb-round-robin"]);
    let msg = format!(
        "ILB CPUs: {lowest} lowest-first, {spread} round robin ({kicks} / {kicks_rr} kicks)"
    );
    assert!(kicks > 100 && kicks_rr > 100, "{msg}");
    assert!(spread > 2 * lowest, "{msg}");
}

/// A warm-up changes no simulated event: the run, its series and its event count are those of the
/// same scenario without one. Only the headline figures are taken over the rest of the run, and
/// the measured window's CPU time is the rest of the run's CPU time.
#[test]
fn warmup_excludes_the_start_from_the_figures_only() {
    let mut e = exp("custom", "oltp", 0.2);
    custom(&mut e, 2, 8, 2);
    let whole = run(&e, Side::A).unwrap();
    e.warmup = 0.05;
    let warm = run(&e, Side::A).unwrap();
    assert_eq!(warm.events, whole.events);
    assert_eq!(warm.series.throughput, whole.series.throughput);
    assert_eq!(warm.series.contention_pct, whole.series.contention_pct);
    assert_eq!(warm.sim_seconds, whole.sim_seconds);
    assert_eq!(warm.warmup_s, 0.05);
    assert!(warm.schema >= 3, "warmup_s is a schema-3 field");
    // CPU time: the profile's ns over the measured window cover 0.15 s of 32 CPUs (with idle).
    let busy_ns = |r: &Report| r.profile.iter().map(|p| p.ns).sum::<u64>();
    assert!(busy_ns(&warm) < busy_ns(&whole));
    let ticks = |r: &Report| r.counters["ticks"];
    let t = ticks(&warm) as f64 / ticks(&whole) as f64;
    assert!((0.7..0.8).contains(&t), "ticks in the measured window: {t}");
    // throughput of the window: its completions over its 0.15 s, close to the series' mean there
    let from = schedplay::report::settled::first_measured(10_000_000, 50_000_000);
    let tail = &whole.series.throughput[from..];
    let mean = tail.iter().sum::<f64>() / tail.len() as f64;
    assert!(
        (warm.throughput_per_sec - mean).abs() < 1e-6 * mean,
        "{} vs {mean}",
        warm.throughput_per_sec
    );
    // and the JSON says so; without a warm-up the field is absent
    let j = serde_json::to_value(&warm).unwrap();
    assert_eq!(j["warmup_s"], 0.05);
    let j = serde_json::to_value(&whole).unwrap();
    assert!(j.get("warmup_s").is_none());
}

/// The wakeup percentiles the cards show (p50/p95/p99, p95 since schema 4) are ordered, and the
/// comparison's changes of them are the ones `Delta::between` computes from the two reports.
#[test]
fn wakeup_percentiles_are_ordered_and_compared() {
    let mut e = exp("custom", "schbench", 0.1);
    custom(&mut e, 2, 8, 2);
    let a = run(&e, Side::A).unwrap();
    e.seed += 1;
    let b = run(&e, Side::A).unwrap();
    for r in [&a, &b] {
        let w = &r.wakeup_latency_us;
        assert!(w.p50 > 0.0, "schbench wakes its workers: {w:?}");
        assert!(
            w.p50 <= w.p90 && w.p90 <= w.p95 && w.p95 <= w.p99 && w.p99 <= w.max,
            "{w:?}"
        );
        assert_eq!(r.schema, schedplay::report::REPORT_SCHEMA);
    }
    let d = schedplay::Delta::between(&a, &b);
    let pct = |x: f64, y: f64| (y - x) * 100.0 / x;
    assert_eq!(
        d.wakeup_p95_pct,
        pct(a.wakeup_latency_us.p95, b.wakeup_latency_us.p95)
    );
    assert_eq!(
        d.wakeup_p99_pct,
        pct(a.wakeup_latency_us.p99, b.wakeup_latency_us.p99)
    );
}

/// The locality block adds up (docs/MODEL.md §21): its costs are the user time lost against a
/// warm, local run with idle siblings, and the user time is the work plus them, less the work
/// still in flight, to the ns, for every workload.
#[test]
fn locality_block_adds_up() {
    for w in ["oltp", "hackbench", "schbench", "spin", "atomics"] {
        let mut e = exp("custom", w, 0.05);
        custom(&mut e, 2, 8, 2);
        let l = run(&e, Side::A).unwrap().locality;
        assert_eq!(
            l.lost_ns,
            l.refill_ns + l.comm_ns + l.remote_mem_ns + l.smt_ns,
            "{w}"
        );
        assert_eq!(
            l.user_ns + l.in_flight_ns,
            l.work_ns + l.lost_ns,
            "{w}: {l:?}"
        );
        assert!(l.user_ns > 0, "{w}");
    }
}

/// A communicating pair (hackbench, one sender and one receiver, one message a round: a ping-pong)
/// wakes its partner with WF_SYNC (a socket write). Where an LLC holds more than one CPU,
/// wake_affine's sync rules keep the wakee in the waker's LLC, so no wakeup crosses an LLC.
/// Where every LLC is one core (2 sockets x 2 one-core LLCs) v6.18 does otherwise, and so does the
/// model: wake_wide() (fair.c:7307) compares the wakee_flips with a factor of sd_llc_size = 1, so
/// once each side has woken the other (both flips 1: slave >= factor, master >= slave x factor)
/// the pair counts as wide, want_affine is 0 (fair.c:8597), wake_affine is skipped, and
/// select_idle_sibling(p, prev_cpu, prev_cpu) gives the wakee its idle previous CPU. A pair the
/// load balancer once split stays split: its wakeups cross from the waker to the wakee's previous
/// CPU on the other socket, and none migrates the wakee (only the first wakeup of each side, with
/// no flips yet, can go through wake_affine).
#[test]
fn a_sync_pair_stays_in_the_wakers_llc_unless_one_core_llcs_make_it_wide() {
    let pair = |sockets: u32, cores: u32, per_llc: u32| {
        let mut e = exp("custom", "hackbench", 0.1);
        custom(&mut e, sockets, cores, 1);
        e.machine.overrides.smt = Some(1);
        e.machine.overrides.cores_per_llc = Some(per_llc);
        for (k, v) in [("groups", "1"), ("fds", "1"), ("loops", "1")] {
            e.workload.knobs.insert(k.into(), v.into());
        }
        run(&e, Side::A).unwrap()
    };
    for r in [pair(1, 4, 4), pair(2, 2, 2)] {
        let w = &r.locality.wakeups_by_class;
        let all: u64 = w.values().sum();
        assert!(all > 0);
        assert_eq!(w["node_near"] + w["node_far"] + w["socket"], 0, "{w:?}");
        let h = &r.locality.handoffs_by_class;
        assert_eq!(h["node_near"] + h["node_far"] + h["socket"], 0, "{h:?}");
    }
    let r = pair(2, 2, 1);
    let w = &r.locality.wakeups_by_class;
    assert!(r.counters["wakeup_migrations"] <= 2, "{:?}", r.counters);
    if r.counters["lb_migrations"] > 0 {
        assert!(w["node_near"] > 0, "the split pair wakes across: {w:?}");
    }
}

/// `client=local`: sysbench is a process of its own on the box, one thread per connection that
/// wakes its mysqld thread with the request and blocks on the reply: every statement is two
/// handoffs, and transactions are counted on the mysqld threads only.
#[test]
fn oltp_local_client_is_a_process_of_its_own() {
    let mut e = exp("custom", "oltp", 0.05);
    custom(&mut e, 2, 8, 2);
    e.workload.knobs.insert("clients".into(), "16".into());
    e.workload.knobs.insert("client".into(), "local".into());
    let r = run_checked(&e);
    // 16 mysqld and 16 sysbench threads, and InnoDB's 13 (log pipeline, purge, page cleaners,
    // master, checkpointer)
    assert_eq!((r.tasks, r.counted_tasks), (32 + 13, 16));
    assert!(r.throughput_per_sec > 0.0);
    let handoffs: u64 = r.locality.handoffs_by_class.values().sum();
    // 20 statements per transaction, a request and a reply each
    let txns = r.throughput_per_sec * r.sim_seconds;
    assert!(
        handoffs as f64 >= txns * 40.0,
        "{handoffs} handoffs for {txns} transactions"
    );
    let wakeups: u64 = r.locality.wakeups_by_class.values().sum();
    assert!(wakeups as f64 >= txns * 40.0 && wakeups <= r.counters["wakeups"]);
    e.workload.knobs.insert("client".into(), "remote".into());
    let remote = run(&e, Side::A).unwrap();
    assert_eq!(remote.tasks, 16 + 13);
}

/// hackbench's repeats measure something: its children reach `poll()` in an order the seed draws
/// (the one run-to-run variation of the workload), so two seeds give two runs and one seed the
/// same run twice.
#[test]
fn hackbench_seeds_give_different_runs() {
    let mut e = exp("custom", "hackbench", 0.02);
    custom(&mut e, 2, 4, 1);
    for (k, v) in [("groups", "2"), ("fds", "4")] {
        e.workload.knobs.insert(k.into(), v.into());
    }
    let one = run(&e, Side::A).unwrap();
    assert_eq!(one.report_hash, run(&e, Side::A).unwrap().report_hash);
    e.seed += 1;
    let other = run(&e, Side::A).unwrap();
    assert_ne!(one.report_hash, other.report_hash);
    assert_ne!(one.throughput_per_sec, other.throughput_per_sec);
}

/// What a hackbench message costs the kernel goes through the cache-line model: c2c shows the
/// socket's lines, the skb and slab lines and the wait queue's by kernel name, with HITMs and
/// hand-offs, and the run is mostly kernel time (LKP's vmstat: 93% sys).
#[test]
fn hackbench_kernel_lines_show_in_c2c_and_the_run_is_mostly_sys() {
    let mut e = exp("custom", "hackbench", 0.02);
    custom(&mut e, 2, 4, 1);
    for (k, v) in [("groups", "2"), ("fds", "4")] {
        e.workload.knobs.insert(k.into(), v.into());
    }
    let r = run_checked(&e);
    for prefix in [
        "sock.sk_wmem_alloc (rx",
        "unix_sock.lock (rx",
        "sk_receive_queue (rx",
        "socket_wq (rx",
        "sk_buff (skbuff_cache) (cpu",
        "skb->head (kmalloc-cg-512) (cpu",
        "struct slab (skbuff_cache) (cpu",
    ] {
        let rows: Vec<_> = r
            .cachelines
            .iter()
            .filter(|l| l.name.starts_with(prefix))
            .collect();
        assert!(!rows.is_empty(), "no {prefix} line");
        let hitm: u64 = rows.iter().map(|l| l.hitm_local + l.hitm_remote).sum();
        let handoffs: u64 = rows
            .iter()
            .map(|l| l.handoffs_by_distance.iter().sum::<u64>())
            .sum();
        assert!(
            hitm > 0 && handoffs > 0,
            "{prefix}: hitm {hitm}, handoffs {handoffs}"
        );
    }
    for sym in [
        "unix_stream_sendmsg",
        "unix_stream_read_generic",
        "kmem_cache_free",
    ] {
        assert!(pct(&r, sym) > 1.0, "{sym}: {}%", pct(&r, sym));
    }
    let user = pct(&r, "[user]");
    assert!(user < 20.0, "user {user}% of the busy cycles");
    // a pipe has no slab objects per message
    e.workload.knobs.insert("transport".into(), "pipe".into());
    let p = run_checked(&e);
    assert!(p.cachelines.iter().any(
        |l| l.name.starts_with("pipe_inode_info.mutex (rx") && l.hitm_local + l.hitm_remote > 0
    ));
    assert!(
        !p.cachelines
            .iter()
            .any(|l| l.name.starts_with("struct slab"))
    );
    assert_eq!(pct(&p, "kmem_cache_free"), 0.0);
}

/// OLTP's TCP path (docs/MODEL.md §18d): c2c shows the sockets', the skbs' and the defer lists'
/// lines by name with their HITMs, on loopback and from the card, and the TCP functions are in the
/// profile; from the card, the ACK's remote frees reach the replying CPU's `struct slab`.
#[test]
fn oltp_tcp_lines_show_in_c2c_on_loopback_and_from_the_card() {
    // HITMs (loads and atomics that found the line Modified elsewhere) and ownership hand-offs
    // (a store's line taken from another CPU: the fclone a card's ACK freed)
    let moved = |r: &Report, prefix: &str| -> (u64, u64) {
        let rows = r.cachelines.iter().filter(|l| l.name.starts_with(prefix));
        rows.fold((0, 0), |(h, o), l| {
            (
                h + l.hitm_local + l.hitm_remote,
                o + l.handoffs_by_distance.iter().sum::<u64>(),
            )
        })
    };
    let hitm = |r: &Report, prefix: &str| moved(r, prefix).0;
    for client in ["local", "remote"] {
        let mut e = exp("custom", "oltp", 0.02);
        custom(&mut e, 2, 8, 2);
        e.workload.knobs.insert("client".into(), client.into());
        let r = run_checked(&e);
        for prefix in [
            "sock.sk_lock (mysqld conn",
            "sock.sk_receive_queue (mysqld conn",
            "socket_wq (mysqld conn",
            "skb_defer_node (cpu",
        ] {
            assert!(hitm(&r, prefix) > 0, "{client}: {prefix}");
        }
        let (_, fclone_handoffs) = moved(&r, "sk_buff (skbuff_fclone_cache) (cpu");
        assert!(fclone_handoffs > 0, "{client}");
        for sym in ["tcp_sendmsg", "tcp_recvmsg", "tcp_v4_rcv"] {
            assert!(pct(&r, sym) > 0.0, "{client}: {sym}");
        }
        if client == "remote" {
            assert!(hitm(&r, "sk_buff (napi_alloc_cache) (cpu") > 0);
            assert!(hitm(&r, "struct slab (skbuff_fclone_cache) (cpu") > 0);
            assert!(
                !r.cachelines
                    .iter()
                    .any(|l| l.name.contains("sysbench conn"))
            );
        } else {
            assert!(hitm(&r, "sock.sk_lock (sysbench conn") > 0);
        }
    }
}
