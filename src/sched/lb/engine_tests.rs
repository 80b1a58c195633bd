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
