use crate::sched::rq::tests::engine;

/// Eight spinners piled on CPU 0 of a 4-CPU machine spread to two per CPU, and stay there.
#[test]
fn balancing_by_pelt_spreads_spinners_piled_on_one_cpu() {
    let mut e = engine(4, 8);
    for c in 1..4 {
        if let Some(t) = e.cpus[c].rq.curr {
            e.put_prev(c, t);
        }
        while !e.cpus[c].rq.queued.is_empty() {
            e.migrate_task(0, c, 0, 0);
        }
    }
    assert_eq!(e.cpus[0].nr_running(), 8);
    e.run_until(300_000_000, u64::MAX);
    e.check_invariants().unwrap();
    let per_cpu: Vec<usize> = (0..4).map(|c| e.cpus[c].nr_running()).collect();
    assert_eq!(per_cpu, vec![2, 2, 2, 2]);
    for c in 0..4 {
        let a = e.cpus[c].rq.avg;
        assert!((1900..=2060).contains(&a.load_avg), "CPU {c}: {a:?}");
    }
}

/// rd->overloaded is set when a queue reaches two tasks, stays set when it drops back, and is
/// cleared only by a balance pass at the root domain that finds no CPU with two tasks.
#[test]
fn rd_overloaded_is_sticky_until_a_root_level_balance() {
    use crate::sched::balance::IdleType;
    let mut e = engine(4, 4);
    assert!(!e.rd_overloaded);
    let t = e.cpus[1].rq.curr.unwrap();
    e.put_prev(1, t);
    e.migrate_task(0, 1, 0, 0);
    assert!(e.rd_overloaded && e.cpus[0].nr_running() == 2);
    let i = e.cpus[0].rq.queued.iter().position(|&q| q == t).unwrap();
    e.migrate_task(0, 0, 1, i);
    assert_eq!(e.cpus[0].nr_running(), 1);
    assert!(e.rd_overloaded, "sub_nr_running never clears it");
    // a balance below the root leaves it alone; one at the root clears it
    let top = e.sd.per_cpu[0].len() - 1;
    if top > 0 {
        e.sched_balance_rq(0, 0, 0, IdleType::NotIdle);
        assert!(e.rd_overloaded);
    }
    e.sched_balance_rq(0, 0, top, IdleType::NotIdle);
    assert!(!e.rd_overloaded);
}

/// Two spinners on the SMT siblings of core 0, core 1 idle: CPU 1's idle balancing at the MC
/// level finds an smt_balance group but a source with only its running task, fails, and once
/// its failure count passes cache_nice_tries + 2 the stopper of the source pushes its running
/// task over.
#[test]
fn active_balance_moves_a_running_task_when_balancing_keeps_failing() {
    use crate::sched::Counter;
    use crate::sched::balance::IdleType;
    use crate::sched::rq::tests::engine_smt;
    let mut e = engine_smt(2, 2, 2); // CPUs 0, 2 on core 0; 1, 3 on core 1
    let t = e.cpus[1].rq.curr.unwrap();
    e.put_prev(1, t);
    e.migrate_task(1, 1, 2, 0); // onto CPU 0's sibling
    e.run_until(1_500_000, u64::MAX); // between ticks: no CPU in the kernel
    assert!(e.cpus[0].rq.curr.is_some() && e.cpus[2].rq.curr.is_some());
    assert!(e.cpus[1].is_idle() && e.cpus[3].is_idle());
    let mc = 1; // SMT is level 0
    let tries = e.sd.domains[e.sd.per_cpu[1][mc] as usize].cache_nice_tries;
    for k in 1..=tries + 2 {
        assert_eq!(e.sched_balance_rq(1, 1, mc, IdleType::Idle), 0);
        assert_eq!(e.cpus[1].balance.doms[mc].nr_balance_failed, k);
        assert!(e.cpus[1].is_idle(), "no push before the failures pile up");
    }
    assert_eq!(e.metrics.counters[Counter::ActiveBalances as usize], 0);
    assert_eq!(e.sched_balance_rq(1, 1, mc, IdleType::Idle), 0);
    assert_eq!(e.metrics.counters[Counter::ActiveBalances as usize], 1);
    assert_eq!(
        e.cpus[1].nr_running(),
        1,
        "the stopper pushed a running task to CPU 1"
    );
    assert_eq!(e.cpus[1].balance.doms[mc].nr_balance_failed, 0);
    e.check_invariants().unwrap();
}

/// fair.c update_sd_lb_stats(): prefer_sibling is the busiest group's own SD_PREFER_SIBLING.
/// On gnr-2s-96c-snc3, CPU 0's domain 4 has node 3 alone as a group, built through
/// find_descended_sibling from the NODE level: it prefers siblings although CPU 0's child (a
/// NUMA level) does not. An idle CPU 0 whose local group has one idle CPU facing a node with
/// 100 short sleepers on its 64 CPUs (has_spare, no idle CPU) is balanced by the idle-CPU rule
/// without it, and by sibling_imbalance (tasks per core) with it.
#[test]
fn prefer_sibling_comes_from_the_busiest_groups_own_flags() {
    use super::*;
    use crate::experiment::scenario::Experiment;
    use crate::machine::domains::SD_PREFER_SIBLING;
    let mut x = Experiment::default();
    x.machine.preset = "gnr-2s-96c-snc3".into();
    x.workload.name = "spin".into();
    x.workload.knobs.insert("threads".into(), "1".into());
    let e = crate::sched::test_engine(&x);
    let (d3, d4) = (e.sd.per_cpu[0][3] as usize, e.sd.per_cpu[0][4] as usize);
    assert_eq!(e.sd.domains[d3].flags & SD_PREFER_SIBLING, 0);
    let node3 = e.update_sg_lb_stats(d4, 1, &[], true);
    assert!(node3.prefer_sibling && !node3.smt);
    assert_eq!((node3.group_weight, node3.cores), (64, 32));
    let local0 = e.update_sg_lb_stats(d4, 0, &[], true);
    assert!(!local0.prefer_sibling);
    assert_eq!((local0.group_weight, local0.cores), (192, 96));
    // the decision on the loads described above
    let dom = &e.sd.domains[d4];
    let mut local = GroupStats {
        sum_nr_running: 191,
        sum_h_nr_running: 191,
        idle_cpus: 1,
        group_util: 191 * 300,
        group_runnable: 191 * 300,
        ..local0
    };
    let busiest = GroupStats {
        sum_nr_running: 100,
        sum_h_nr_running: 100,
        idle_cpus: 0,
        group_util: 64 * 300,
        group_runnable: 64 * 400,
        ..node3
    };
    local.ty = group_classify(dom.imbalance_pct as u64, &local, false);
    let busiest = GroupStats {
        ty: group_classify(dom.imbalance_pct as u64, &busiest, false),
        ..busiest
    };
    assert_eq!(
        (local.ty, busiest.ty),
        (GroupType::HasSpare, GroupType::HasSpare)
    );
    let sds = SdStats {
        total_capacity: 256 * CAPACITY,
        prefer_sibling: busiest.prefer_sibling,
        flags: dom.flags,
        imbalance_pct: dom.imbalance_pct as u64,
        imb_numa_nr: dom.imb_numa_nr as u64,
        ..Default::default()
    };
    // sibling_imbalance: (2·(96·100 − 32·191) + 128) / 128 = 55, halved
    assert_eq!(
        sched_balance_find_src_group(&sds, &mut local.clone(), &busiest, true),
        Some((MigrationType::Task, 27))
    );
    // with CPU 0's child flags (the model before): balanced
    let child = SdStats {
        prefer_sibling: false,
        ..sds
    };
    assert_eq!(
        sched_balance_find_src_group(&child, &mut local, &busiest, true),
        None
    );
}
