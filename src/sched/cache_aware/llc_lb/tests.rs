use super::*;
use crate::experiment::scenario::Experiment;
use crate::sched::balance::IdleType;

/// Two sockets of 4 cores (no SMT), one LLC and one node each, running `threads` spinners of one
/// process for 5 ms, with these patches.
fn two_llcs(patches: &[&str], threads: u32, workload: &str) -> Engine {
    let mut x = Experiment::default();
    x.machine.preset = "custom".into();
    x.machine.overrides.sockets = Some(2);
    x.machine.overrides.cores_per_socket = Some(4);
    x.machine.overrides.nodes_per_socket = Some(1);
    x.machine.overrides.cores_per_llc = Some(4);
    x.machine.overrides.smt = Some(1);
    x.workload.name = workload.into();
    if workload == "spin" {
        x.workload
            .knobs
            .insert("threads".into(), threads.to_string().into());
    }
    x.a = patches.iter().map(|p| p.to_string()).collect();
    let mut e = crate::sched::test_engine(&x);
    e.run_until(5_000_000, u64::MAX);
    e
}

/// A running task alone on its CPU in one LLC, an idle CPU of the other LLC, and the level of
/// that CPU's domains just above its LLC: (task, src, dst, level).
fn lone_runner(e: &Engine) -> (TaskId, usize, usize, usize) {
    let src = (0..e.cpus.len())
        .find(|&c| e.cpus[c].nr_running() == 1 && e.cpus[c].rq.curr.is_some())
        .expect("a CPU running one task");
    let t = e.cpus[src].rq.curr.unwrap();
    let dst = (0..e.cpus.len())
        .find(|&c| e.topo.cpus[c].llc != e.topo.cpus[src].llc && e.cpus[c].is_idle())
        .expect("an idle CPU in the other LLC");
    let level = (0..e.sd.per_cpu[dst].len())
        .find(|&l| {
            e.sd.domains[e.sd.per_cpu[dst][l] as usize]
                .span
                .contains(src)
        })
        .unwrap();
    (t, src, dst, level)
}

#[test]
fn migrate_llc_task_pushes_a_running_task_to_its_preferred_llc_and_plain_balancing_does_not() {
    for cache_aware in [true, false] {
        let patches: &[&str] = if cache_aware { &["cache-aware"] } else { &[] };
        let mut e = two_llcs(patches, 2, "spin");
        let (t, src, dst, level) = lone_runner(&e);
        if cache_aware {
            // the mm prefers dst's LLC (task_cache_work chose it; account_mm_sched copied it)
            e.cas.as_mut().unwrap().mms[0].mm_sched_cpu = dst as i32;
            e.tasks[t as usize].preferred_llc = e.topo.cpus[dst].llc as i32;
        }
        let moved = e.sched_balance_rq(dst, dst, level, IdleType::Idle);
        assert_eq!(moved, 0, "the task runs: no detach_tasks move");
        // need_active_balance(): migrate_llc_task asks the stopper of src to push
        assert_eq!(e.cpus[src].rq.active_balance, cache_aware);
        if cache_aware {
            e.active_load_balance_cpu_stop(src, dst);
            assert_eq!(e.tasks[t as usize].cpu as usize, dst);
            assert_eq!(e.cpus[dst].nr_running(), 1, "the task is on dst's queue");
            assert_eq!(e.metrics.counters[Counter::ActiveBalances as usize], 1);
        } else {
            assert_eq!(e.tasks[t as usize].cpu as usize, src);
        }
        e.check_invariants().unwrap();
    }
}

#[test]
fn break_llc_locality_keeps_a_lone_task_in_the_llc_it_prefers() {
    let mut e = two_llcs(&["cache-aware"], 2, "spin");
    let (t, src, dst, _) = lone_runner(&e);
    assert!(!e.break_llc_locality(src, dst), "no preference: free to go");
    e.tasks[t as usize].preferred_llc = e.topo.cpus[src].llc as i32;
    assert!(e.break_llc_locality(src, dst), "alone and home: stay");
    assert!(
        !e.break_llc_locality(src, src),
        "same LLC: not a locality question"
    );
}

#[test]
fn towards_the_preferred_llc_only_a_full_and_busier_destination_forbids() {
    let mut e = two_llcs(&["cache-aware"], 2, "spin");
    let (_, src, dst, _) = lone_runner(&e);
    let (sl, dl) = (e.topo.cpus[src].llc as usize, e.topo.cpus[dst].llc as usize);
    let set = |e: &mut Engine, llc: usize, u: u64| {
        for &c in &e.llc_list[llc].clone() {
            e.cpus[c as usize].rq.avg.util_avg = u;
        }
    };
    // 4 CPUs: the cap is 4 · 1024 · 50% = 2048
    set(&mut e, sl, 100);
    set(&mut e, dl, 100);
    assert_eq!(e.get_migrate_hint(src, dst, 0, true), MigHint::Allow);
    set(&mut e, dl, 600); // 2400: over the cap and 6x busier than src
    assert_eq!(e.get_migrate_hint(src, dst, 0, true), MigHint::Forbid);
    set(&mut e, sl, 900); // both over the cap
    assert_eq!(e.get_migrate_hint(src, dst, 0, true), MigHint::Ignore);
    // out of an LLC under the cap is forbidden
    set(&mut e, sl, 100);
    set(&mut e, dl, 100);
    assert_eq!(e.get_migrate_hint(src, dst, 0, false), MigHint::Forbid);
}

/// A communicating thread workload on two big LLCs: with cache-aware scheduling the threads
/// gather in their preferred LLC; without it they stay spread over both. No task is lost.
#[test]
fn communicating_threads_gather_in_the_preferred_llc() {
    let share_in = |patches: &[&str]| -> (f64, usize) {
        let mut x = Experiment::default();
        x.machine.preset = "custom".into();
        x.machine.overrides.sockets = Some(2);
        x.machine.overrides.cores_per_socket = Some(8);
        x.machine.overrides.nodes_per_socket = Some(1);
        x.machine.overrides.cores_per_llc = Some(8);
        x.machine.overrides.smt = Some(1);
        x.workload.name = "hackbench".into();
        for (k, v) in [("mode", "thread"), ("groups", "1"), ("fds", "4")] {
            x.workload.knobs.insert(k.into(), v.into());
        }
        x.a = patches.iter().map(|p| p.to_string()).collect();
        let mut e = crate::sched::test_engine(&x);
        // sample where the threads are every ms over 0.1 s–0.3 s
        let (mut in_llc, mut all) = (0u64, 0u64);
        for ms in 0..300u64 {
            e.run_until(ms * 1_000_000, u64::MAX);
            e.check_invariants().unwrap();
            e.flush_accounting();
            e.check_cpu_time().unwrap();
            if ms < 100 {
                continue;
            }
            // the LLC holding most of the threads (with cache-aware: the preferred LLC)
            let mut per_llc = vec![0u64; e.topo.nr_llcs];
            for t in &e.tasks {
                per_llc[e.topo.cpus[t.cpu as usize].llc as usize] += 1;
            }
            let pref = e.cas.as_ref().map(|c| c.mms[0].mm_sched_cpu).unwrap_or(-1);
            let llc = if pref >= 0 {
                e.topo.cpus[pref as usize].llc as usize
            } else {
                (0..per_llc.len()).max_by_key(|&l| per_llc[l]).unwrap()
            };
            in_llc += per_llc[llc];
            all += e.tasks.len() as u64;
        }
        (in_llc as f64 / all as f64, e.tasks.len())
    };
    let (with, n) = share_in(&["cache-aware"]);
    let (without, _) = share_in(&[]);
    assert!(n >= 4);
    assert!(
        with > 0.9,
        "with cache-aware {with:.3} of {n} threads in the preferred LLC"
    );
    // without it, wake_affine alone keeps most of a pair's wakeups in the waker's LLC (0.82 of
    // the thread-samples with the message path priced line by line): cache-aware must gather
    // clearly more than that
    assert!(
        with - without >= 0.1,
        "with {with:.3}, without {without:.3}"
    );
}
