use super::*;
use crate::experiment::scenario::Experiment;
use crate::sched::wake_flags::{WF_RQ_SELECTED, WF_SYNC, WF_TTWU};

/// An engine on a 1-socket machine of `cores` CPUs (SMT off) running `threads` spinners, with
/// nothing run yet.
pub(crate) fn engine(cores: u32, threads: u32) -> Engine {
    engine_smt(cores, 1, threads)
}

/// The same with `smt` threads per core.
pub(crate) fn engine_smt(cores: u32, smt: u32, threads: u32) -> Engine {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(1);
    e.machine.overrides.cores_per_socket = Some(cores);
    e.machine.overrides.nodes_per_socket = Some(1);
    e.machine.overrides.smt = Some(smt);
    e.workload.name = "spin".into();
    e.workload
        .knobs
        .insert("threads".into(), threads.to_string().into());
    super::test_engine(&e)
}

/// Every queue emptied (every task asleep), then tasks 0, 1, ... queued on CPU 0 in order
/// with these `(vruntime, deadline)`.
fn hand_queue(e: &mut Engine, ents: &[(u64, u64)]) {
    for cpu in e.cpus.iter_mut() {
        cpu.rq = RunQueue::new();
    }
    for task in e.tasks.iter_mut() {
        task.state = TaskState::Sleeping;
    }
    for (t, &(v, d)) in ents.iter().enumerate() {
        let task = &mut e.tasks[t];
        task.se.vruntime = v;
        task.se.deadline = d;
        task.cpu = 0;
        task.state = TaskState::Runnable;
        e.__enqueue_entity(0, t as TaskId);
    }
    e.nr_overloaded = usize::from(ents.len() >= 2);
}

/// The loads of update_sd_lb_stats / should_we_balance / the idle scans: a run-queue line
/// nobody wrote since this CPU last read it is a hit; after its owner wrote it (nr_running,
/// curr) it is a HITM costing the transfer from the owner. The remote enqueue's rq lock is a
/// locked read-for-ownership.
#[test]
fn rq_line_loads_miss_only_after_the_owner_wrote() {
    let mut e = engine(4, 1);
    e.run_until(1_500_000, u64::MAX);
    e.rq_line_load(3, 1, RqLine::Rq);
    assert_eq!(e.rq_line_load(3, 1, RqLine::Rq), 1, "clean: a hit");
    let id = e.rq_lines[1].rq();
    let hitm = e.lines.stats(id).hitm_local;
    e.rq_written(1);
    e.now += 1_000;
    let xfer = e.topo.xfer_ns(1, 3) as u64;
    assert_eq!(e.rq_line_load(3, 1, RqLine::Rq), xfer);
    assert_eq!(e.lines.stats(id).hitm_local, hitm + 1);
    assert_eq!(e.rq_line_load(3, 1, RqLine::Rq), 1);
    // the PELT line is written by every update of the averages
    e.rq_line_load(3, 0, RqLine::Avg);
    assert_eq!(e.rq_line_load(3, 0, RqLine::Avg), 1);
    e.update_cfs_rq_load_avg(0);
    e.now += 1_000;
    assert_eq!(
        e.rq_line_load(3, 0, RqLine::Avg),
        e.topo.xfer_ns(0, 3) as u64
    );
    e.now += 1_000;
    assert!(
        e.rq_lock_remote(3, 1) >= xfer,
        "the lock takes the line from its sharers"
    );
}

#[test]
fn pick_eevdf_takes_the_earliest_deadline_among_eligible_entities() {
    let mut e = engine(2, 8);
    // V = (0 + 100 + 20 + 40)/4 = 40: task 1 has the earliest deadline but v > V
    hand_queue(&mut e, &[(0, 10), (100, 5), (20, 8), (40, 8)]);
    assert_eq!(e.avg_vruntime(0), 40);
    assert!(!e.entity_eligible(0, 1));
    assert!(e.entity_eligible(0, 3), "v == V is eligible");
    // 2 and 3 tie on the deadline: the one queued first wins, as in the tree
    assert_eq!(e.pick_eevdf(0, true), Some(2));
    // eligibility uses the weights: task 1 at nice −10 pulls V to 97 and becomes eligible
    e.cpus[0].rq = RunQueue::new();
    let w = Entity::new(-10, e.base_slice);
    e.tasks[1].se.weight = w.weight;
    e.tasks[1].se.inv_weight = w.inv_weight;
    hand_queue(&mut e, &[(0, 10), (100, 5), (20, 8), (40, 8)]);
    // (0·1024 + 100·9548 + 20·1024 + 40·1024) / (3·1024 + 9548) = 1015240/12620 = 80
    assert_eq!(e.avg_vruntime(0), 80);
    assert!(!e.entity_eligible(0, 1));
    assert_eq!(e.pick_eevdf(0, true), Some(2));
}

#[test]
fn run_to_parity_keeps_a_protected_curr_and_releases_it_after() {
    let mut e = engine(2, 8);
    hand_queue(&mut e, &[(0, 1_000), (0, 500)]);
    e.set_next_entity(0, 0);
    // curr 0 is protected up to its deadline: kept though task 1's deadline is earlier
    assert_eq!(e.tasks[0].se.vprot, 1_000);
    assert_eq!(e.pick_eevdf(0, true), Some(0));
    assert_eq!(e.pick_eevdf(0, false), Some(1));
}

#[test]
fn place_lag_preserves_the_lag_across_a_dequeue_and_enqueue() {
    let mut e = engine(2, 8);
    hand_queue(
        &mut e,
        &[(0, 2_800_000), (3_000_000, 5_000_000), (600_000, 3_000_000)],
    );
    e.cpus[0].rq.min_vruntime = 0;
    let v0 = e.avg_vruntime(0);
    // task 2 leaves (a migration-style dequeue keeps vlag = V − v and the relative deadline)
    e.dequeue_entity(0, 2, 0);
    let lag = e.tasks[2].se.vlag;
    assert_eq!(lag, v0 as i64 - 600_000);
    // ... the others advance, and it comes back: its lag after insertion is the saved one
    e.tasks[0].se.vruntime += 1_000_000;
    e.__dequeue_entity(0, 0);
    e.__enqueue_entity(0, 0);
    let before = e.avg_vruntime(0);
    e.tasks[2].cpu = 1; // placed as a migration would be
    e.enqueue_entity(0, 2, 0, Enq::Migrated);
    let after = e.avg_vruntime(0);
    let got = after.wrapping_sub(e.tasks[2].se.vruntime) as i64;
    assert!((got - lag).abs() <= 1, "lag {lag} became {got}");
    assert!(after < before, "a positive lag lowers V");
    // the relative deadline came back on top of the new vruntime
    assert_eq!(
        e.tasks[2].se.deadline - e.tasks[2].se.vruntime,
        3_000_000 - 600_000
    );
}

#[test]
fn delay_dequeue_keeps_an_ineligible_sleeper_queued_until_picked() {
    let mut e = engine(2, 8);
    hand_queue(&mut e, &[(0, 2_800_000), (5_000_000, 7_000_000)]);
    e.set_next_entity(0, 1); // task 1 runs although ahead of V (as if protected until now)
    e.tasks[1].exec_start = e.now;
    assert!(!e.entity_eligible(0, 1));
    e.dequeue_curr_sleep(0, 1);
    assert!(e.tasks[1].se.sched_delayed);
    assert_eq!(e.cpus[0].nr_running(), 2, "a delayed task still counts");
    e.check_invariants().unwrap();
    // the pick finishes the dequeue of the delayed task once it is picked
    assert_eq!(e.pick_task_fair(0), Some(0));
    e.set_next_entity(0, 0);
    e.tasks[0].se.vruntime = 6_000_000; // task 0 catches up: task 1 becomes eligible
    assert_eq!(e.pick_task_fair(0), Some(0));
    assert!(!e.tasks[1].se.sched_delayed && e.cpus[0].rq.queued.is_empty());
    assert!(e.tasks[1].se.vlag <= 0, "DELAY_ZERO drops a positive lag");
    e.check_invariants().unwrap();
}

#[test]
fn a_wakee_with_lag_preempts_an_unprotected_curr_and_not_a_protected_one() {
    let mut e = engine(2, 8);
    let slice = e.base_slice;
    hand_queue(&mut e, &[(0, slice)]);
    e.set_next_entity(0, 0);
    e.cpus[0].exec.mode = Mode::Kernel; // (no IPI side effects in this hand-built case)
    // a wakee without lag lands at V with a later deadline: no preemption
    e.tasks[1].se.vlag = 0;
    e.tasks[1].cpu = 0;
    e.tasks[1].state = TaskState::Sleeping;
    e.enqueue(0, 1, 0, 0);
    assert!(!e.cpus[0].rq.need_resched);
    // a wakee owed 1 ms lands before V with an earlier deadline: it preempts once curr's
    // protection is over
    e.tasks[0].se.vprot = 0;
    e.tasks[2].se.vlag = 1_000_000;
    e.tasks[2].cpu = 0;
    e.tasks[2].state = TaskState::Sleeping;
    e.enqueue(0, 2, 0, 0);
    assert!(e.cpus[0].rq.need_resched);
    assert_eq!(e.pick_eevdf(0, true), Some(2));
}

/// Two CPUs, each with a nice-0 and a nice-5 spinner: CPU time splits 1024 : 335.
#[test]
fn nice_0_and_nice_5_share_a_cpu_by_their_weights() {
    let mut e = engine(2, 4);
    e.set_nice(2, 5);
    e.set_nice(3, 5);
    e.run_until(2_000_000_000, u64::MAX);
    e.flush_accounting();
    e.check_invariants().unwrap();
    let rt = e.task_runtime();
    assert_eq!((e.tasks[0].cpu, e.tasks[2].cpu), (0, 0), "no migration");
    let share = rt[0] as f64 / (rt[0] + rt[2]) as f64;
    let want = 1024.0 / (1024.0 + 335.0);
    assert!(
        (share - want).abs() < 0.01,
        "nice 0 got {share:.4} of the CPU, weights say {want:.4}"
    );
}

/// put_prev_set_next_task(): schedule() picking prev again neither puts nor sets it, so an
/// expired protection stays expired (set_protect_slice is not run again).
#[test]
fn prev_picked_again_keeps_its_expired_protection() {
    let mut e = engine(2, 8);
    // V = (0 + 500)/2: both eligible, prev (task 0) has the earlier deadline
    hand_queue(&mut e, &[(0, 1_000), (500, 2_000)]);
    e.set_next_entity(0, 0);
    assert_eq!(e.tasks[0].se.vprot, 1_000);
    e.tasks[0].se.vprot = 0; // protection over (vprot reached)
    assert!(!e.tasks[0].se.protect_slice());
    assert_eq!(e.pick_next_task_fair(0, 0), Picked::Prev);
    assert_eq!(e.cpus[0].rq.curr, Some(0));
    assert_eq!(e.tasks[0].se.vprot, 0, "not renewed");
    assert_eq!(e.cpus[0].rq.queued, vec![1]);
    // once prev has run past V, task 1 is set and prev put back
    e.tasks[0].se.vruntime = 1_000;
    e.tasks[0].se.deadline = 3_000;
    assert_eq!(e.pick_next_task_fair(0, 0), Picked::Next);
    assert_eq!(e.cpus[0].rq.curr, Some(1));
    assert_eq!(e.cpus[0].rq.queued, vec![0]);
    e.check_invariants().unwrap();
}

/// detach_task() of a delayed task (migrate_load, or the active balance): dequeued without
/// DEQUEUE_DELAYED it stays delayed, its PELT load detached from the source and attached to the
/// destination; the destination's pick later finishes its dequeue there.
#[test]
fn a_delayed_task_moved_by_load_balancing_stays_delayed() {
    let mut e = engine(2, 8);
    hand_queue(&mut e, &[(0, 2_800_000), (5_000_000, 7_000_000)]);
    e.set_next_entity(0, 1);
    e.tasks[1].exec_start = e.now;
    e.dequeue_curr_sleep(0, 1);
    assert!(e.tasks[1].se.sched_delayed);
    let load = e.tasks[1].se.avg.load_avg;
    assert!(load > 0);
    let (src0, dst0) = (e.cpus[0].rq.avg.load_avg, e.cpus[1].rq.avg.load_avg);
    let i = e.cpus[0].rq.queued.iter().position(|&q| q == 1).unwrap();
    e.migrate_task(0, 0, 1, i);
    let t = &e.tasks[1];
    assert!(t.se.sched_delayed, "still delayed");
    assert_eq!((t.state, t.cpu), (TaskState::Sleeping, 1));
    assert_eq!((e.cpus[0].rq.nr_delayed, e.cpus[1].rq.nr_delayed), (0, 1));
    assert_eq!(e.cpus[0].rq.avg.load_avg, src0.saturating_sub(load));
    assert_eq!(e.cpus[1].rq.avg.load_avg, dst0 + load);
    e.check_invariants().unwrap();
    // CPU 1's pick finds it delayed and finishes its sleep there
    assert_eq!(e.pick_task_fair(1), e.cpus[1].rq.curr);
    assert!(!e.tasks[1].se.sched_delayed && e.cpus[1].rq.nr_delayed == 0);
    e.check_invariants().unwrap();
}

/// NEXT_BUDDY as v6.19 reimplemented it (e837456fdca8): a wakee at V (no lag, a later deadline
/// than curr) does not preempt a protected curr without the buddy (v6.18, and v6.19 as released);
/// with it the wakee becomes cfs_rq->next, __pick_eevdf takes an eligible buddy ahead of curr's
/// protection, and it preempts. A WF_SYNC wakee becomes the buddy without preempting
/// (preempt_sync: curr has run 0 ns since update_curr), and the next pick takes it.
#[test]
fn next_buddy_lets_an_eligible_wakee_preempt_a_protected_curr_from_6_19() {
    let setup = |eevdf: bool, buddy: bool| {
        let mut e = engine(2, 8);
        e.patches.merged.next_buddy_eevdf = eevdf;
        e.patches.features.next_buddy = buddy;
        let slice = e.base_slice;
        hand_queue(&mut e, &[(0, slice)]);
        e.set_next_entity(0, 0);
        e.cpus[0].exec.mode = Mode::Kernel;
        assert!(e.tasks[0].se.protect_slice());
        for t in [1, 2] {
            e.tasks[t].se.vlag = 0;
            e.tasks[t].cpu = 0;
            e.tasks[t].state = TaskState::Sleeping;
        }
        e
    };
    for (eevdf, buddy) in [(false, false), (true, false)] {
        let mut e = setup(eevdf, buddy);
        e.enqueue(0, 1, 0, WF_TTWU | WF_RQ_SELECTED);
        assert!(!e.cpus[0].rq.need_resched, "6.19: {eevdf}");
        assert_eq!(e.cpus[0].rq.next, None);
        assert_eq!(e.pick_eevdf(0, true), Some(0), "protected curr stays");
    }
    let mut e = setup(true, true);
    e.enqueue(0, 1, 0, WF_TTWU | WF_RQ_SELECTED);
    assert_eq!(e.cpus[0].rq.next, Some(1));
    assert!(e.cpus[0].rq.need_resched, "the buddy preempts");
    assert_eq!(e.pick_next_task_fair(0, 0), Picked::Next);
    assert_eq!(e.cpus[0].rq.curr, Some(1));
    assert_eq!(e.cpus[0].rq.next, None, "clear_buddies when set running");
    e.check_invariants().unwrap();
    // a sync wakeup: the buddy is set, no preemption now, the pick takes it
    let mut e = setup(true, true);
    e.enqueue(0, 2, 0, WF_TTWU | WF_SYNC | WF_RQ_SELECTED);
    assert_eq!(e.cpus[0].rq.next, Some(2));
    assert!(
        !e.cpus[0].rq.need_resched,
        "preempt_sync: no runtime since exec_start"
    );
    assert_eq!(
        e.pick_eevdf(0, true),
        Some(2),
        "PICK_BUDDY ahead of protection"
    );
    // a second wakee with a later deadline (placed after V: it owes 1 ms) keeps the first
    // buddy (set_preempt_buddy); an equal deadline would replace it
    e.tasks[1].se.vlag = -1_000_000;
    e.enqueue(0, 1, 0, WF_TTWU | WF_RQ_SELECTED);
    assert_eq!(e.cpus[0].rq.next, Some(2));
    assert!(
        !e.cpus[0].rq.need_resched,
        "the pick is the old buddy, not the wakee"
    );
}

/// ac8e69e69363 (v7.1): the pick of wakeup preemption is pick_next_entity(), which finishes the
/// dequeue of a delayed entity it picks and picks again. Curr ahead of V (not eligible), a
/// delayed task eligible with the earliest deadline, and a wakee placed at V: up to 7.0 the pick
/// is the delayed task, so the wakee does not preempt and the delayed task stays queued; from
/// 7.1 the wakeup finishes the delayed task's dequeue (its positive lag dropped, DELAY_ZERO) and
/// the wakee, picked next, preempts.
#[test]
fn from_7_1_the_wakeup_pick_finishes_a_delayed_dequeue_and_the_wakee_preempts() {
    for fix in [false, true] {
        let mut e = engine(2, 8);
        e.patches.merged.next_buddy_eevdf = true;
        e.patches.merged.wakeup_pick_next_entity = fix;
        let slice = e.base_slice;
        hand_queue(&mut e, &[(3_000_000, 3_000_000 + slice), (0, 100)]);
        e.set_next_entity(0, 0);
        e.tasks[0].exec_start = e.now;
        e.tasks[1].se.sched_delayed = true;
        e.tasks[1].state = TaskState::Sleeping;
        e.cpus[0].rq.nr_delayed = 1;
        e.cpus[0].exec.mode = Mode::Kernel;
        assert!(!e.entity_eligible(0, 0) && e.entity_eligible(0, 1));
        e.check_invariants().unwrap();
        e.tasks[2].se.vlag = 0;
        e.tasks[2].cpu = 0;
        e.tasks[2].state = TaskState::Sleeping;
        e.enqueue(0, 2, 0, WF_TTWU | WF_RQ_SELECTED);
        let rq = &e.cpus[0].rq;
        assert_eq!(rq.need_resched, fix, "7.1: the wakee preempts");
        assert_eq!(e.tasks[1].se.sched_delayed, !fix);
        assert_eq!(rq.queued.contains(&1), !fix);
        assert_eq!(rq.nr_delayed, usize::from(!fix));
        let want = if fix { 2 } else { 1 };
        assert_eq!(e.pick_eevdf(0, true), Some(want));
        e.check_invariants().unwrap();
    }
}
