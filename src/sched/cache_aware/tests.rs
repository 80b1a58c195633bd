use super::*;
use crate::experiment::scenario::Experiment;
use crate::machine::presets::preset;

/// A 1-socket, 8-core, SMT2 machine (one LLC of 16 CPUs) running 16 spinners of one process,
/// with these patches and nothing run yet.
fn engine(patches: &[&str]) -> Engine {
    engine_llc(patches, None)
}

/// The same machine, its LLC cut to `cores_per_llc` cores when given.
fn engine_llc(patches: &[&str], cores_per_llc: Option<u32>) -> Engine {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(1);
    e.machine.overrides.cores_per_socket = Some(8);
    e.machine.overrides.nodes_per_socket = Some(1);
    e.machine.overrides.cores_per_llc = cores_per_llc;
    e.machine.overrides.smt = Some(2);
    e.workload.name = "spin".into();
    e.workload.knobs.insert("threads".into(), "16".into());
    e.a = patches.iter().map(|p| p.to_string()).collect();
    super::test_engine(&e)
}

#[test]
fn with_25_28_exceed_llc_nr_lifts_the_lb_veto() {
    // two LLCs of 4 cores (8 CPUs with SMT2): more than 4 running threads exceed one
    let two_llcs = |patches: &[&str], avg: u64| {
        let mut e = engine_llc(patches, Some(4));
        let (src, dst) = (0, e.llc_list[1][0] as usize);
        let cas = e.cas.as_mut().unwrap();
        cas.mms[0].mm_sched_cpu = src as i32;
        cas.mms[0].nr_running_avg = avg;
        assert_eq!(e.tasks[0].process, 0);
        e.tasks[0].preferred_llc = e.topo.cpus[src].llc as i32;
        e.llc_forbids_migration(0, src, dst)
    };
    // an idle preferred LLC keeps its task (llc_fits)
    assert!(two_llcs(&["cache-aware"], 5));
    assert!(two_llcs(&["cache-aware", "cas-skip-many-threads"], 4));
    // 5 · 2 > 8: get_migrate_hint() returns mig_allow
    assert!(!two_llcs(&["cache-aware", "cas-skip-many-threads"], 5));
}

/// Runs the cache-aware jobs queued on CPU `c` to the end (time follows the CPU's cursor).
fn drain(e: &mut Engine, c: usize) {
    while let Some(Job::CacheAware(mut job)) = e.cpus[c].exec.jobs.pop_front() {
        loop {
            e.settle_request(c);
            e.now = e.now.max(e.cpus[c].exec.cursor);
            match e.step_cache_aware(c, job) {
                Some(j) => job = j,
                None => {
                    e.settle_request(c);
                    break;
                }
            }
        }
    }
}

fn count(e: &Engine, c: Counter) -> u64 {
    e.metrics.counters[c as usize]
}

/// account_mm_sched() of task `t` on CPU `t` (its own CPU), run to the end.
fn account(e: &mut Engine, t: usize) {
    e.account_mm_sched(t, t, t as TaskId, 0, 1000);
    drain(e, t);
}

#[test]
fn with_25_28_every_account_mm_sched_stores_minus_one_and_fix_2_stores_only_a_change() {
    let mut b = engine(&["cache-aware", "cas-skip-many-threads"]);
    b.cas.as_mut().unwrap().mms[0].nr_running_avg = 9; // 9 · 2 > 16: exceed_llc_nr()
    for t in 0..6 {
        account(&mut b, t);
    }
    assert_eq!(count(&b, Counter::MmSchedCpuStores), 6);
    assert_eq!(count(&b, Counter::MmSchedCpuRedundantStores), 6);

    let mut fixed = engine(&[
        "cache-aware",
        "cas-skip-many-threads",
        "cas-write-if-changed",
    ]);
    let cas = fixed.cas.as_mut().unwrap();
    cas.mms[0].nr_running_avg = 9;
    cas.mms[0].mm_sched_cpu = 3;
    for t in 0..6 {
        account(&mut fixed, t);
    }
    assert_eq!(count(&fixed, Counter::MmSchedCpuStores), 1, "only 3 → -1");
    assert_eq!(count(&fixed, Counter::MmSchedCpuRedundantStores), 0);
    assert_eq!(fixed.cas.as_ref().unwrap().mms[0].mm_sched_cpu, -1);

    // without 25/28 (or below the threshold) nothing invalidates a fresh preference
    let mut a = engine(&["cache-aware"]);
    a.cas.as_mut().unwrap().mms[0].nr_running_avg = 9;
    a.cas.as_mut().unwrap().mms[0].mm_sched_cpu = 3;
    for t in 0..6 {
        account(&mut a, t);
    }
    assert_eq!(count(&a, Counter::MmSchedCpuStores), 0);
    assert_eq!(a.tasks[5].preferred_llc, 0);
}

#[test]
fn an_mm_epoch_ahead_of_the_rq_epoch_wraps_and_invalidates_as_in_v4() {
    let mut e = engine(&["cache-aware"]);
    let cas = e.cas.as_mut().unwrap();
    cas.mms[0].mm_sched_cpu = 3;
    cas.mms[0].mm_sched_epoch = 1; // this rq is still in epoch 0
    account(&mut e, 2);
    assert_eq!(count(&e, Counter::MmSchedCpuStores), 1);
    assert_eq!(e.cas.as_ref().unwrap().mms[0].mm_sched_cpu, -1);
}

#[test]
fn account_mm_sched_loads_pcpu_sched_first_then_the_epoch() {
    let mut e = engine(&["cache-aware"]);
    account(&mut e, 2);
    let line = e.cas.as_ref().unwrap().mms[0].line;
    let f = &e.lines.fields(line);
    assert_eq!(f[F_PCPU_SCHED].loads, 1);
    assert_eq!(f[F_EPOCH].loads, 1);
    assert_eq!(f[F_CPU].loads, 1, "mm_sched_cpu for the preferred LLC");
    assert_eq!(f[F_NR_RUNNING_AVG].loads, 0, "exceed_llc_nr() is 25/28's");
}

fn works_queued(e: &Engine, c: usize) -> usize {
    e.cpus[c]
        .exec
        .jobs
        .iter()
        .filter(|j| matches!(j, Job::CacheAware(CasJob::Work { .. })))
        .count()
}

/// Tick of CPU `c` running task `c` in epoch `epoch`: task_tick_cache() to the end.
fn tick(e: &mut Engine, c: usize, epoch: u64) {
    e.cas.as_mut().unwrap().rq[c].cpu_epoch = epoch;
    e.task_tick_cache(c, c as TaskId, 0);
    // run the tick's job (the last queued) only, leaving any queued work in place
    let Some(Job::CacheAware(mut job)) = e.cpus[c].exec.jobs.pop_back() else {
        panic!("no task_tick_cache job")
    };
    loop {
        e.settle_request(c);
        e.now = e.now.max(e.cpus[c].exec.cursor);
        match e.step_cache_aware(c, job) {
            Some(j) => job = j,
            None => {
                e.settle_request(c);
                break;
            }
        }
    }
}

#[test]
fn task_tick_cache_queues_one_work_per_epoch_and_the_flag_is_per_task() {
    let mut e = engine(&["cache-aware"]);
    // epoch 1: the first CPU publishes the epoch and queues its task's work; the next one
    // finds the epoch current
    tick(&mut e, 0, 1);
    tick(&mut e, 1, 1);
    assert_eq!((works_queued(&e, 0), works_queued(&e, 1)), (1, 0));
    assert_eq!(e.cas.as_ref().unwrap().mms[0].mm_sched_epoch, 1);
    // epoch 2 before task 0's work ran: task 0's work is still queued, so its tick cannot
    // publish; task 1's can (p->cache_work is per task)
    tick(&mut e, 0, 2);
    assert_eq!(e.cas.as_ref().unwrap().mms[0].mm_sched_epoch, 1);
    tick(&mut e, 1, 2);
    assert_eq!((works_queued(&e, 0), works_queued(&e, 1)), (1, 1));
    assert_eq!(e.cas.as_ref().unwrap().mms[0].mm_sched_epoch, 2);
}

fn cas() -> CacheAware {
    let t = Topology::new(preset("milan-2s").unwrap()).unwrap();
    let mut lines = Coherence::new(&t);
    CacheAware::new(
        &t,
        &mut lines,
        &["mysqld".to_string()],
        &[64],
        &[0],
        64,
        false,
        false,
        10, // HZ/100 at HZ=1000
    )
}

#[test]
fn occupancy_decays_by_half_per_epoch() {
    let mut c = cas();
    // 4 ms of this mm and 4 ms of others in epoch 0 on CPU 3
    c.account_local(0, 3, 4_000_000, 1);
    c.rq[3].cpu_runtime += 4_000_000;
    assert_eq!(c.fraction(0, 3, 5), 1024 * 4_000_000 / 8_000_001);
    // 25 jiffies later: epoch_next was 10 → two epochs pass (ceil(15/10)) → both halve twice
    c.account_local(0, 3, 0, 25);
    assert_eq!(c.rq[3].cpu_epoch, 2);
    assert_eq!(c.mms[0].pcpu[3].runtime, 1_000_000);
    assert_eq!(c.rq[3].cpu_runtime, 2_000_000);
    assert_eq!(c.fraction(0, 3, 25), 1024 * 1_000_000 / 2_000_001);
}

#[test]
fn hysteresis_needs_twice_the_occupancy() {
    assert!(!CacheAware::should_switch(200, 100));
    assert!(CacheAware::should_switch(201, 100));
    assert!(CacheAware::should_switch(1, 0));
}

#[test]
fn nr_running_avg_is_the_kernels_integer_eighth_ewma() {
    let mut a = 0;
    a = update_avg(a, 8);
    assert_eq!(a, 1);
    a = update_avg(a, 8);
    assert_eq!(a, 1); // (8 - 1) / 8 == 0
    // rising towards 64 it stops at 57 (64 - 57 = 7 < 8); falling to 0 it stops at 7
    let mut up = 0;
    for _ in 0..200 {
        up = update_avg(up, 64);
    }
    assert_eq!(up, 57);
    let mut down = up;
    for _ in 0..200 {
        down = update_avg(down, 0);
    }
    assert_eq!(down, 7);
}

#[test]
fn exceed_llc_nr_compares_threads_times_smt_with_the_llc_cpus() {
    // Milan CCX: 16 CPUs, SMT2 → more than 8 running threads exceed it
    assert!(!exceed_llc_nr(8, 2, 16));
    assert!(exceed_llc_nr(9, 2, 16));
    assert!(exceed_llc_nr(17, 1, 16));
}

#[test]
fn fix_1_moves_nr_running_avg_to_its_own_line() {
    let t = Topology::new(preset("milan-2s").unwrap()).unwrap();
    let mut lines = Coherence::new(&t);
    let a = CacheAware::new(
        &t,
        &mut lines,
        &["mysqld".to_string()],
        &[64],
        &[0],
        64,
        false,
        false,
        10, // HZ/100 at HZ=1000
    );
    assert_eq!(a.mms[0].avg_line, a.mms[0].line);
    let b = CacheAware::new(
        &t,
        &mut lines,
        &["mysqld".to_string()],
        &[64],
        &[0],
        64,
        true,
        false,
        10, // HZ/100 at HZ=1000
    );
    assert_ne!(b.mms[0].avg_line, b.mms[0].line);
    assert_eq!(
        lines.lines[b.mms[0].avg_line].name,
        "mm_struct(mysqld)+0x40"
    );
    assert_eq!(lines.fields(b.mms[0].avg_line)[0].offset, 64);
    // RFC v4 order: the pcpu_sched pointer every account_mm_sched loads first shares the line
    let f = &lines.fields(a.mms[0].line);
    assert_eq!(f[F_PCPU_SCHED].field, "pcpu_sched");
    assert_eq!(f[F_CPU].field, "mm_sched_cpu");
    assert_eq!(f[F_NR_RUNNING_AVG].field, "nr_running_avg");
}

/// account_mm_sched() calls are counted under their update_curr() caller: spinners that never
/// block account from the tick (at most once per tick of a busy CPU) and from nothing that blocks,
/// preempts on wakeup or requeues a delayed task.
#[test]
fn account_mm_sched_calls_are_counted_by_their_update_curr_caller() {
    let mut e = engine(&["cache-aware"]);
    e.run_until(20_000_000, u64::MAX);
    let by = |c: UpdateCurrCaller| e.metrics.mm_sched_callers[c as usize];
    let ticks = count(&e, Counter::Ticks);
    let tick_calls = by(UpdateCurrCaller::EntityTick);
    assert!(
        tick_calls > 0 && tick_calls <= ticks,
        "{tick_calls} of {ticks} ticks"
    );
    for c in [
        UpdateCurrCaller::DequeueEntitySleep,
        UpdateCurrCaller::DequeueEntityDelayed,
        UpdateCurrCaller::CheckPreemptWakeupFair,
    ] {
        assert_eq!(by(c), 0, "{}", c.name());
    }
    // without cache-aware scheduling nothing is accounted
    let mut off = engine(&[]);
    off.run_until(20_000_000, u64::MAX);
    assert_eq!(off.metrics.mm_sched_callers.iter().sum::<u64>(), 0);
}

/// 7.2's `struct sched_cache_stat` is one line of its own with nr_running_avg beside cpu (the
/// seed's fix 1 is not in the merged layout), and every field lies inside the line.
#[test]
fn the_merged_sc_stat_keeps_nr_running_avg_in_the_line_of_cpu() {
    let t = Topology::new(preset("milan-2s").unwrap()).unwrap();
    let mut lines = Coherence::new(&t);
    let m = CacheAware::new(
        &t,
        &mut lines,
        &["mysqld".to_string()],
        &[64],
        &[0],
        64,
        false,
        true,
        10,
    );
    let fields = lines.fields(m.mms[0].line);
    assert_eq!(m.mms[0].avg_line, m.mms[0].line);
    let names: Vec<&str> = fields.iter().map(|f| f.field).collect();
    for f in ["sc_stat.cpu", "sc_stat.nr_running_avg", "sc_stat.next_scan"] {
        assert!(names.contains(&f), "{f}: {names:?}");
    }
    assert!(fields.iter().all(|f| f.offset < 64));
}

/// task_cache_work() of task `t` on CPU `t`, from its scan (the RFC v4 form), run to the end.
fn cache_work(e: &mut Engine, t: usize) {
    e.cpus[t].exec.jobs.push_back(Job::CacheAware(CasJob::Work {
        mm: 0,
        task: t as TaskId,
        phase: WorkPhase::Scan,
    }));
    drain(e, t);
}

#[test]
fn exceed_llc_capacity_fires_for_an_rss_above_the_l3_and_not_for_one_that_fits() {
    assert!(exceed_llc_capacity(32 << 20, 32 << 20), "llc <= rss");
    assert!(!exceed_llc_capacity((32 << 20) - 4096, 32 << 20));
    assert!(
        exceed_llc_capacity(0, 0),
        "no L3 leaf: exceeds, as num_leaves < 3"
    );

    let with_rss = |rss: fn(u64) -> u64| {
        let mut e = engine(&["cache-aware", "cas-exceed-llc-capacity"]);
        let l3 = e.l3_bytes();
        assert!(l3 > 0);
        let cas = e.cas.as_mut().unwrap();
        cas.mms[0].rss_bytes = rss(l3);
        cas.mms[0].mm_sched_cpu = 3;
        cas.mms[0].nr_running_avg = 2;
        for t in 0..4 {
            account(&mut e, t);
        }
        cache_work(&mut e, 5);
        e
    };
    // mysqld-like: its buffer pool is far above the L3
    let big = with_rss(|l3| 40 * l3);
    assert_eq!(
        count(&big, Counter::MmSchedCpuStores),
        4,
        "-1 stored at every account"
    );
    assert_eq!(count(&big, Counter::MmSchedCpuRedundantStores), 3);
    assert_eq!(big.tasks[3].preferred_llc, -1);
    let m = &big.cas.as_ref().unwrap().mms[0];
    assert_eq!(
        m.nr_running_avg, 2,
        "task_cache_work returned before its update"
    );
    assert_eq!(big.lines.fields(m.line)[F_NR_RUNNING_AVG].stores, 0);
    assert!(!big.cas.as_ref().unwrap().work_queued[5]);

    // a process that fits keeps its preference and scans
    let small = with_rss(|l3| l3 / 2);
    assert_eq!(count(&small, Counter::MmSchedCpuStores), 0);
    assert_eq!(small.tasks[3].preferred_llc, 0);
    let m = &small.cas.as_ref().unwrap().mms[0];
    assert_eq!(small.lines.fields(m.line)[F_NR_RUNNING_AVG].stores, 1);

    // and the load-balance hint lets a large-RSS task go (mig_allow)
    let veto = |rss: u64| {
        let mut e = engine_llc(&["cache-aware", "cas-exceed-llc-capacity"], Some(4));
        let (src, dst) = (0, e.llc_list[1][0] as usize);
        let cas = e.cas.as_mut().unwrap();
        cas.mms[0].mm_sched_cpu = src as i32;
        cas.mms[0].rss_bytes = rss;
        e.tasks[0].preferred_llc = e.topo.cpus[src].llc as i32;
        e.llc_forbids_migration(0, src, dst)
    };
    assert!(veto(4096));
    assert!(!veto(u64::MAX));
}

#[test]
fn toggling_25_28_with_26_27_on_changes_only_exceed_llc_nrs_load() {
    // the series as posted with and without 25/28, mysqld's RSS: nr_running_avg stays 0 (26/28
    // returns before task_cache_work updates it), so exceed_llc_nr() is false and
    // exceed_llc_capacity() invalidates on both sides
    let run = |patches: &[&str]| {
        let mut e = engine(patches);
        let cas = e.cas.as_mut().unwrap();
        cas.mms[0].rss_bytes = 40 << 30;
        cas.mms[0].mm_sched_cpu = 3;
        for t in 0..6 {
            account(&mut e, t);
        }
        cache_work(&mut e, 7);
        let line = e.cas.as_ref().unwrap().mms[0].line;
        let f: Vec<(u64, u64)> = e
            .lines
            .fields(line)
            .iter()
            .map(|f| (f.loads, f.stores))
            .collect();
        (
            f,
            count(&e, Counter::MmSchedCpuStores),
            e.tasks[5].preferred_llc,
        )
    };
    let a = run(&["cache-aware", "cas-exceed-llc-capacity"]);
    let b = run(&[
        "cache-aware",
        "cas-exceed-llc-capacity",
        "cas-skip-many-threads",
    ]);
    assert_eq!((a.1, a.2), (6, -1));
    assert_eq!((b.1, b.2), (6, -1), "the same stores and preference");
    for (i, (fa, fb)) in a.0.iter().zip(&b.0).enumerate() {
        if i == F_NR_RUNNING_AVG {
            assert_eq!(
                (fa.0, fb.0),
                (0, 6),
                "25/28's exceed_llc_nr() load, one per account"
            );
            assert_eq!(fa.1, fb.1);
        } else {
            assert_eq!(fa, fb, "field {i} differs");
        }
    }
}

#[test]
fn the_engine_takes_each_processs_rss_from_the_workload() {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(1);
    e.machine.overrides.cores_per_socket = Some(8);
    e.workload.name = "oltp".into();
    e.workload.knobs.insert("clients".into(), "8".into());
    e.a = vec!["cache-aware".into()];
    let eng = super::test_engine(&e);
    let mms = &eng.cas.as_ref().unwrap().mms;
    assert_eq!(mms[0].rss_bytes, crate::workload::oltp::MYSQLD_RSS_BYTES);
    assert_eq!(
        mms[1].rss_bytes,
        8 * crate::workload::oltp::SYSBENCH_RSS_PER_THREAD_BYTES
    );
}
