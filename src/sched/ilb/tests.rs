use super::*;
use crate::sched::nohz::KickStep;
use crate::sched::rq::tests::engine;

/// A 4-CPU machine with one spinner on CPU 0 after 10.5 ms, CPUs 1-3 idle in the nohz mask.
fn quiet() -> Engine {
    let mut e = engine(4, 1);
    e.run_until(10_500_000, u64::MAX);
    for k in 1..4 {
        e.nohz.idle[k] = true;
    }
    e.nohz.nr_idle = 3;
    e.nohz.nohz_flags = vec![0; 4];
    e
}

fn rq_stats(e: &Engine) -> Vec<(u64, u64)> {
    (0..4)
        .map(|c| {
            let s = &e.lines.stats(e.rq_lines[c].rq());
            (s.loads, s.atomics)
        })
        .collect()
}

/// _nohz_idle_balance() walks the idle mask: idle_cpu() of each CPU in it reads its rq line
/// (none of the others), and a CPU whose balance is due has its rq lock taken and clock updated
/// even on a stats-only kick.
#[test]
fn the_ilb_reads_each_idle_cpus_rq_line_and_locks_the_due_ones() {
    let mut e = quiet();
    e.cpus[1].balance.next_balance = u64::MAX;
    e.cpus[2].balance.next_balance = 0; // due
    e.cpus[3].balance.next_balance = u64::MAX;
    let before = rq_stats(&e);
    let mut s = Box::new(IlbState::with(NOHZ_STATS_KICK, IlbPhase::Clear));
    loop {
        e.now = e.now.max(e.cpus[1].exec.cursor);
        match e.step_ilb(1, s) {
            Some(x) => s = x,
            None => break,
        }
    }
    let after = rq_stats(&e);
    assert_eq!(after[0], before[0], "CPU 0 is not in the mask: not read");
    for b in [2, 3] {
        assert!(after[b].0 > before[b].0, "CPU {b}'s rq line read");
    }
    assert_eq!(
        after[2].1,
        before[2].1 + 1,
        "due: rq_lock + update_rq_clock"
    );
    assert_eq!(after[3].1, before[3].1, "not due: no lock");
    e.check_invariants().unwrap();
}

/// find_new_ilb(): idle_cpu() of each candidate of the mask is a load of its rq line, up to the
/// first idle one.
#[test]
fn find_new_ilb_reads_each_candidate() {
    let mut e = engine(4, 2);
    e.run_until(10_500_000, u64::MAX);
    for k in 1..4 {
        e.nohz.idle[k] = true; // CPU 1 still marked, but it runs the second spinner
    }
    e.nohz.nr_idle = 3;
    e.nohz.nohz_flags = vec![0; 4];
    assert!(!e.cpus[1].is_idle());
    let before = rq_stats(&e);
    e.now = e.now.max(e.cpus[0].exec.cursor);
    let next = e.step_nohz_kick(0, KickStep::Kick(NOHZ_STATS_KICK));
    assert!(matches!(next, Some(KickStep::ReadIlbFlags(2, _))));
    let after = rq_stats(&e);
    assert!(after[1].0 > before[1].0 && after[2].0 > before[2].0);
    assert_eq!(after[3].0, before[3].0, "the search stopped at CPU 2");
}
