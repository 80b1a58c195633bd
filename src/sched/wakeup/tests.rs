use super::*;
use crate::sched::rq::tests::{engine, engine_smt};

/// wake_affine_weight() on PELT load: the waker's CPU carries the waker's 1000 and prev 1500 of
/// which 500 is the wakee's. Without sync: (1000 + 500)·100 against (1500 − 500)·108: prev. With
/// WF_SYNC the waker's own load leaves this CPU: 500·100 < 1000·108: this CPU.
#[test]
fn wake_affine_weight_uses_pelt_load_and_the_sync_adjustment() {
    let mut e = engine(2, 2); // task 0 on CPU 0 (the waker), task 1 on CPU 1 (the wakee's prev)
    e.cpus[0].rq.avg.load_avg = 1000;
    e.tasks[0].se.avg.load_avg = 1000;
    e.cpus[1].rq.avg.load_avg = 1500;
    e.tasks[1].se.avg.load_avg = 500;
    assert_eq!(
        e.wake_affine_weight(1, Current::Task(0), 0, 1, 117, false),
        None
    );
    assert_eq!(
        e.wake_affine_weight(1, Current::Task(0), 0, 1, 117, true),
        Some(0)
    );
    // a waker heavier than its CPU's load: this CPU at once
    e.tasks[0].se.avg.load_avg = 1200;
    assert_eq!(
        e.wake_affine_weight(1, Current::Task(0), 0, 1, 117, true),
        Some(0)
    );
    // WF_SYNC's tie goes to this CPU (prev_eff + 1)
    e.tasks[0].se.avg.load_avg = 0;
    e.cpus[0].rq.avg.load_avg = 0;
    e.tasks[1].se.avg.load_avg = 0;
    e.cpus[1].rq.avg.load_avg = 0;
    assert_eq!(
        e.wake_affine_weight(1, Current::Task(0), 0, 1, 117, false),
        None
    );
    assert_eq!(
        e.wake_affine_weight(1, Current::Task(0), 0, 1, 117, true),
        Some(0)
    );
}

/// wake_affine_idle(): a sync waker alone on its CPU takes the wakee, whatever the loads.
#[test]
fn a_sync_waker_alone_on_its_cpu_takes_the_wakee() {
    let mut e = engine(2, 2);
    e.cpus[0].rq.avg.load_avg = 5000;
    e.tasks[0].se.avg.load_avg = 0;
    assert_eq!(e.wake_affine_idle(0, 1, false), None);
    assert_eq!(e.wake_affine_idle(0, 1, true), Some(0));
    assert_eq!(e.wake_affine(1, Current::Task(0), 0, 1, 117, false), 1);
    assert_eq!(e.wake_affine(1, Current::Task(0), 0, 1, 117, true), 0);
}

fn rq_loads(e: &Engine) -> Vec<u64> {
    (0..e.topo.nr_cpus())
        .map(|c| e.lines.stats(e.rq_lines[c].rq()).loads)
        .collect()
}

/// select_idle_cpu() with a stale idle-core hint: no core is idle, so the first idle CPU the
/// scan passed is returned (not the busy target), and the hint is cleared.
#[test]
fn a_stale_idle_core_hint_returns_the_first_idle_cpu_passed() {
    // 4 cores × 2 (CPU c and c + 4 are siblings): CPUs 0-3 busy, their siblings 4-7 idle
    let mut e = engine_smt(4, 2, 4);
    e.llc_has_idle_cores[0] = true;
    e.llc_nr_idle_scan[0] = 8;
    assert!(e.cpus[0].rq.curr.is_some() || !e.cpus[0].rq.queued.is_empty());
    let (cpu, _) = e.select_idle_sibling(0, 0, 0, 0);
    assert_eq!(cpu, 5, "core 1 is passed first: its idle CPU 5");
    assert!(!e.llc_has_idle_cores[0]);
}

/// SIS_UTIL: with nr_idle_scan 2 the scan looks at two CPUs and stops without loading a third
/// line; select_idle_smt looks at prev's siblings, not at prev itself.
#[test]
fn the_scan_stops_at_its_budget_and_select_idle_smt_skips_prev() {
    let mut e = engine_smt(4, 2, 8); // every CPU busy
    e.llc_has_idle_cores[0] = false;
    e.llc_nr_idle_scan[0] = 2;
    let before = rq_loads(&e);
    let (cpu, _) = e.select_idle_sibling(0, 0, 0, 0);
    assert_eq!(cpu, 0);
    let after = rq_loads(&e);
    let loaded: Vec<usize> = (0..8).filter(|&c| after[c] > before[c]).collect();
    assert_eq!(loaded, vec![1, 2, 4], "prev's sibling 4, then CPUs 1 and 2");
}

/// recent_used_cpu: an idle CPU the task used recently, in target's LLC, is taken before any
/// scan, and the task remembers prev instead.
#[test]
fn an_idle_recently_used_cpu_is_taken() {
    let mut e = engine_smt(4, 2, 8);
    // empty CPU 6: its task goes to CPU 7
    let t = e.cpus[6].rq.curr.unwrap();
    e.put_prev(6, t);
    e.migrate_task(6, 6, 7, 0);
    assert!(e.cpus[6].is_idle());
    e.llc_has_idle_cores[0] = false;
    e.tasks[0].recent_used_cpu = 6;
    let (cpu, cost) = e.select_idle_sibling(0, 0, 0, 0);
    assert_eq!((cpu, cost), (6, 0));
    assert_eq!(e.tasks[0].recent_used_cpu, 0);
}

/// ttwu_queue_wakelist(): a wakeup into another LLC puts the task on the target's wake list (a
/// store to its rq line for ttwu_pending, llist_add on its call_single_queue line) instead of
/// taking the target's rq lock; the target enqueues it itself, and until then a second wakeup
/// finds it waking.
#[test]
fn a_wakeup_into_another_llc_goes_through_the_wake_list() {
    use crate::experiment::scenario::Experiment;
    let mut x = Experiment::default();
    x.machine.preset = "custom".into();
    x.machine.overrides.sockets = Some(2);
    x.machine.overrides.cores_per_socket = Some(2);
    x.machine.overrides.nodes_per_socket = Some(1);
    x.machine.overrides.smt = Some(1);
    x.workload.name = "spin".into();
    x.workload.knobs.insert("threads".into(), "4".into());
    let mut e = crate::sched::test_engine(&x);
    e.run_until(1_500_000, u64::MAX);
    let far = (0..4).find(|&c| !e.share_cache(0, c)).unwrap();
    let t = e.cpus[far].rq.curr.unwrap();
    e.cpus[far].exec.mode = Mode::Kernel;
    e.dequeue_curr_sleep(far, t);
    e.cpus[far].exec.mode = Mode::Idle;
    assert!(e.cpus[far].is_idle());
    let lock = |e: &Engine| e.lines.stats(e.rq_lines[far].rq()).atomics;
    let csq = |e: &Engine| e.lines.stats(e.nohz.csq_lines[far]).atomics;
    let (lock0, csq0) = (lock(&e), csq(&e));
    e.try_to_wake_up(t, 0, Waker::Timer, 0); // no waker task: target = prev
    assert!(e.tasks[t as usize].waking, "on the wake list");
    assert_eq!(e.tasks[t as usize].state, TaskState::Sleeping);
    assert_eq!(csq(&e), csq0 + 1, "llist_add by the waker");
    assert_eq!(lock(&e), lock0, "no remote rq lock");
    let pending = e.tasks[t as usize].pending_wakeups;
    e.try_to_wake_up(t, 0, Waker::Timer, 0);
    assert_eq!(
        e.tasks[t as usize].pending_wakeups,
        pending + 1,
        "TASK_WAKING"
    );
    e.run_until(e.now + 50_000, u64::MAX);
    let task = &e.tasks[t as usize];
    assert!(!task.waking && task.cpu as usize == far);
    assert!(matches!(
        task.state,
        TaskState::Running | TaskState::Runnable
    ));
    assert_eq!(csq(&e), csq0 + 2, "llist_del_all by the target");
    e.check_invariants().unwrap();
}

/// From softirq context (NET_RX), select_task_rq_fair sees what the interrupt interrupted as
/// `current`: on an idle CPU that is the idle task, with no load of its own, so a sync wakeup
/// whose prev is busy in the same LLC comes to the interrupt CPU (wake_affine_idle), and the idle
/// task's wakee flips count the wakeup (record_wakee).
#[test]
fn a_softirq_wakeup_on_an_idle_cpu_pulls_the_wakee_from_a_busy_prev_in_its_llc() {
    let mut e = engine(2, 2);
    e.cpus[0].rq.avg.load_avg = 0;
    assert_eq!(e.waker_current(Waker::Irq(4), 1), Some(Current::Task(1)));
    // CPU 0 idle: the interrupt's current is swapper/0
    let t = e.cpus[0].rq.curr.take().unwrap();
    e.cpus[0].rq.queued.clear();
    let cur = e.waker_current(Waker::Irq(4), 0);
    assert_eq!(cur, Some(Current::Swapper(0)));
    e.cpus[1].rq.avg.load_avg = 1500;
    e.tasks[1].se.avg.load_avg = 500;
    assert_eq!(e.wake_affine(1, Current::Swapper(0), 0, 1, 117, true), 0);
    e.record_wakee(Current::Swapper(0), t);
    assert_eq!(e.swapper_flips[0].flips, 1);
    assert_eq!(e.wakee_flips(Current::Swapper(0)), 1);
}
