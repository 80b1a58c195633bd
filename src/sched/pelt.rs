//! PELT, per-entity load tracking (kernel/sched/pelt.c, sched-pelt.h, v6.18), in the kernel's
//! integer arithmetic so that results are bit-identical natively and in wasm: 1024 µs periods
//! (time >> 10), a geometric decay with y^32 = 1/2 (`decay_load` through `runnable_avg_yN_inv`),
//! `accumulate_sum` with `__accumulate_pelt_segments`, and the sum → average step over
//! `get_pelt_divider`. The callers (update_load_avg at enqueue, dequeue, pick, put_prev, tick;
//! attach/detach on migration; the blocked-average update) are in `rq.rs` and `balance.rs`.

/// LOAD_AVG_PERIOD: y^32 = 1/2.
pub const LOAD_AVG_PERIOD: u64 = 32;
/// LOAD_AVG_MAX: the converged maximum of the series (sched-pelt.h).
pub const LOAD_AVG_MAX: u64 = 47742;
/// PELT_MIN_DIVIDER (pelt.h).
pub const PELT_MIN_DIVIDER: u64 = LOAD_AVG_MAX - 1024;
/// SCHED_CAPACITY_SHIFT.
const SCHED_CAPACITY_SHIFT: u32 = 10;

/// runnable_avg_yN_inv[n] = y^n · 2^32 (sched-pelt.h).
pub const RUNNABLE_AVG_YN_INV: [u32; 32] = [
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698,
];

/// `struct sched_avg`. In C layout with the three averages first: a balance pass reads only
/// those of every CPU of a domain, and `RunQueue` keeps them in its first cache line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SchedAvg {
    pub load_avg: u64,
    pub runnable_avg: u64,
    pub util_avg: u64,
    /// ns, advanced in 1024 ns steps; 0 = not attached (a new or migrating entity).
    pub last_update_time: u64,
    pub load_sum: u64,
    pub runnable_sum: u64,
    pub util_sum: u32,
    pub period_contrib: u32,
}

/// decay_load(): val · y^n.
#[inline]
pub fn decay_load(mut val: u64, n: u64) -> u64 {
    if n > LOAD_AVG_PERIOD * 63 {
        return 0;
    }
    let mut n = n as u32;
    if n >= LOAD_AVG_PERIOD as u32 {
        val >>= n / LOAD_AVG_PERIOD as u32;
        n %= LOAD_AVG_PERIOD as u32;
    }
    ((val as u128 * RUNNABLE_AVG_YN_INV[n as usize] as u128) >> 32) as u64
}

/// __accumulate_pelt_segments(): d1 (the end of the open period, decayed), the full periods in
/// between (from LOAD_AVG_MAX), d3 (the start of the current period).
fn accumulate_pelt_segments(periods: u64, d1: u32, d3: u32) -> u32 {
    // u32 arithmetic as in pelt.c (c2 may wrap; the sum does not)
    let c1 = decay_load(d1 as u64, periods) as u32;
    let c2 = (LOAD_AVG_MAX as u32)
        .wrapping_sub(decay_load(LOAD_AVG_MAX, periods) as u32)
        .wrapping_sub(1024);
    c1.wrapping_add(c2).wrapping_add(d3)
}

/// get_pelt_divider().
pub fn get_pelt_divider(sa: &SchedAvg) -> u64 {
    PELT_MIN_DIVIDER + sa.period_contrib as u64
}

impl SchedAvg {
    /// accumulate_sum(): returns the number of period boundaries crossed.
    #[inline(always)]
    fn accumulate_sum(&mut self, mut delta: u64, load: u64, runnable: u64, running: bool) -> u64 {
        let mut contrib = delta as u32; // no boundary crossed: delta < 1024
        delta += self.period_contrib as u64;
        let periods = delta / 1024;
        if periods > 0 {
            self.load_sum = decay_load(self.load_sum, periods);
            self.runnable_sum = decay_load(self.runnable_sum, periods);
            self.util_sum = decay_load(self.util_sum as u64, periods) as u32;
            delta %= 1024;
            if load > 0 {
                contrib =
                    accumulate_pelt_segments(periods, 1024 - self.period_contrib, delta as u32);
            }
        }
        self.period_contrib = delta as u32;
        if load > 0 {
            self.load_sum += load * contrib as u64;
        }
        if runnable > 0 {
            self.runnable_sum += (runnable * contrib as u64) << SCHED_CAPACITY_SHIFT;
        }
        if running {
            self.util_sum += contrib << SCHED_CAPACITY_SHIFT;
        }
        periods
    }

    /// ___update_load_sum(): true when a period boundary was crossed (the averages are due).
    #[inline(always)]
    pub fn update_load_sum(&mut self, now: u64, load: u64, runnable: u64, running: bool) -> bool {
        let delta = now.wrapping_sub(self.last_update_time);
        if (delta as i64) < 0 {
            self.last_update_time = now;
            return false;
        }
        let delta = delta >> 10;
        if delta == 0 {
            return false;
        }
        self.last_update_time += delta << 10;
        let (runnable, running) = if load == 0 {
            (0, false)
        } else {
            (runnable, running)
        };
        self.accumulate_sum(delta, load, runnable, running) > 0
    }

    /// ___update_load_avg(): the sums over the divider (`load` is se_weight for an entity, 1 for
    /// a cfs_rq).
    pub fn update_load_avg(&mut self, load: u64) {
        let divider = get_pelt_divider(self);
        self.load_avg = load * self.load_sum / divider;
        self.runnable_avg = self.runnable_sum / divider;
        self.util_avg = self.util_sum as u64 / divider;
    }

    /// ___update_load_sum + ___update_load_avg, as __update_load_avg_se / _cfs_rq do.
    #[inline(always)]
    pub fn update(&mut self, now: u64, load: u64, runnable: u64, running: bool, w: u64) -> bool {
        if self.update_load_sum(now, load, runnable, running) {
            self.update_load_avg(w);
            return true;
        }
        false
    }
}

/// sub_positive(): subtract, floored at 0.
pub fn sub_positive(v: &mut u64, d: u64) {
    *v = v.saturating_sub(d);
}

/// A cfs_rq's `removed` averages: entities that left by a wakeup migration or exit, subtracted at
/// the next update_cfs_rq_load_avg (remove_entity_load_avg).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Removed {
    load_avg: u64,
    util_avg: u64,
    runnable_avg: u64,
    nr: u32,
}

/// The PELT clock starts at one period so that `last_update_time == 0` always means "detached"
/// (as it does in a booted kernel, whose clock is never 0); there is no capacity or frequency
/// scaling (every CPU runs at capacity 1024, at its maximum frequency): rq_clock_pelt = clock_task.
const PELT_CLOCK_START: u64 = 1 << 20;

use super::*;

impl Engine {
    fn rq_clock_pelt(&self) -> u64 {
        self.now + PELT_CLOCK_START
    }

    /// The cfs_rq's PELT inputs: scale_load_down(load.weight) (queued, delayed and curr),
    /// h_nr_runnable (delayed excluded), curr != NULL.
    fn cfs_rq_pelt_inputs(&self, c: usize) -> (u64, u64, bool) {
        let rq = &self.cpus[c].rq;
        let mut load = rq.avg_load as u64;
        let mut runnable = (rq.queued.len() - rq.nr_delayed) as u64;
        if let Some(cu) = rq.curr {
            load += self.tasks[cu as usize].se.weight as u64;
            runnable += 1;
        }
        (load, runnable, rq.curr.is_some())
    }

    /// update_cfs_rq_load_avg(): apply the removed averages, then age the cfs_rq. True if
    /// anything decayed.
    pub(super) fn update_cfs_rq_load_avg(&mut self, c: usize) -> bool {
        let now = self.rq_clock_pelt();
        let (load, runnable, running) = self.cfs_rq_pelt_inputs(c);
        self.rq_lines[c].avg_written(c);
        let rq = &mut self.cpus[c].rq;
        let mut decayed = false;
        if rq.removed.nr > 0 {
            let r = std::mem::take(&mut rq.removed);
            let sa = &mut rq.avg;
            let divider = get_pelt_divider(sa);
            sub_positive(&mut sa.load_avg, r.load_avg);
            sub_positive(&mut sa.load_sum, r.load_avg * divider);
            sa.load_sum = sa.load_sum.max(sa.load_avg * PELT_MIN_DIVIDER);
            sub_positive(&mut sa.util_avg, r.util_avg);
            let mut util_sum = sa.util_sum as u64;
            sub_positive(&mut util_sum, r.util_avg * divider);
            sa.util_sum = util_sum.max(sa.util_avg * PELT_MIN_DIVIDER) as u32;
            sub_positive(&mut sa.runnable_avg, r.runnable_avg);
            sub_positive(&mut sa.runnable_sum, r.runnable_avg * divider);
            sa.runnable_sum = sa.runnable_sum.max(sa.runnable_avg * PELT_MIN_DIVIDER);
            decayed = true;
        }
        decayed | rq.avg.update(now, load, runnable, running, 1)
    }

    /// update_load_avg(cfs_rq, se, flags): age the entity (in the state it had since its last
    /// update: `on_rq`, runnable unless delayed, running if curr) and its cfs_rq, then attach a
    /// detached entity (`attach`: DO_ATTACH) or detach it (`detach`: DO_DETACH, a load-balance
    /// migration).
    pub(super) fn update_load_avg(
        &mut self,
        c: usize,
        t: TaskId,
        on_rq: bool,
        attach: bool,
        detach: bool,
    ) {
        let now = self.rq_clock_pelt();
        let running = self.cpus[c].rq.curr == Some(t);
        let se = &mut self.tasks[t as usize].se;
        if se.avg.last_update_time != 0 {
            let runnable = on_rq && !se.sched_delayed;
            let w = se.weight as u64;
            se.avg
                .update(now, on_rq as u64, runnable as u64, running, w);
        }
        self.update_cfs_rq_load_avg(c);
        if self.tasks[t as usize].se.avg.last_update_time == 0 && attach {
            self.attach_entity_load_avg(c, t);
        } else if detach {
            self.detach_entity_load_avg(c, t);
        }
    }

    /// attach_entity_load_avg(): align the entity with the cfs_rq's clock and add it.
    fn attach_entity_load_avg(&mut self, c: usize, t: TaskId) {
        let rq = &mut self.cpus[c].rq;
        let se = &mut self.tasks[t as usize].se;
        let divider = get_pelt_divider(&rq.avg);
        let w = se.weight as u64;
        let a = &mut se.avg;
        a.last_update_time = rq.avg.last_update_time;
        a.period_contrib = rq.avg.period_contrib;
        a.util_sum = (a.util_avg * divider) as u32;
        a.runnable_sum = a.runnable_avg * divider;
        a.load_sum = a.load_avg * divider;
        a.load_sum = if w < a.load_sum { a.load_sum / w } else { 1 };
        let sa = &mut rq.avg;
        sa.load_avg += a.load_avg;
        sa.load_sum += w * a.load_sum;
        sa.util_avg += a.util_avg;
        sa.util_sum += a.util_sum;
        sa.runnable_avg += a.runnable_avg;
        sa.runnable_sum += a.runnable_sum;
    }

    /// detach_entity_load_avg(): subtract the entity now (a load-balance migration); it is then
    /// detached (set_task_cpu → migrate_task_rq_fair clears last_update_time).
    fn detach_entity_load_avg(&mut self, c: usize, t: TaskId) {
        let sa = &mut self.cpus[c].rq.avg;
        let se = &mut self.tasks[t as usize].se;
        let a = &se.avg;
        sub_positive(&mut sa.load_avg, a.load_avg);
        sub_positive(&mut sa.load_sum, se.weight as u64 * a.load_sum);
        sa.load_sum = sa.load_sum.max(sa.load_avg * PELT_MIN_DIVIDER);
        sub_positive(&mut sa.util_avg, a.util_avg);
        let mut util_sum = sa.util_sum as u64;
        sub_positive(&mut util_sum, a.util_sum as u64);
        sa.util_sum = util_sum.max(sa.util_avg * PELT_MIN_DIVIDER) as u32;
        sub_positive(&mut sa.runnable_avg, a.runnable_avg);
        sub_positive(&mut sa.runnable_sum, a.runnable_sum);
        sa.runnable_sum = sa.runnable_sum.max(sa.runnable_avg * PELT_MIN_DIVIDER);
        se.avg.last_update_time = 0;
    }

    /// remove_entity_load_avg(): a sleeping task leaves `c` (wakeup migration, exit). It is aged
    /// to the cfs_rq's last update (sync_entity_load_avg) and queued in `removed`.
    pub(super) fn remove_entity_load_avg(&mut self, c: usize, t: TaskId) {
        let rq = &mut self.cpus[c].rq;
        let se = &mut self.tasks[t as usize].se;
        if se.avg.last_update_time == 0 {
            return;
        }
        let w = se.weight as u64;
        se.avg.update(rq.avg.last_update_time, 0, 0, false, w);
        rq.removed.nr += 1;
        rq.removed.load_avg += se.avg.load_avg;
        rq.removed.util_avg += se.avg.util_avg;
        rq.removed.runnable_avg += se.avg.runnable_avg;
        se.avg.last_update_time = 0;
    }

    /// init_entity_runnable_average + post_init_entity_util_avg for a task created on `c`: full
    /// load, and util from the cfs_rq's (half the spare capacity at most).
    pub(super) fn init_entity_avg(&mut self, c: usize, t: TaskId) {
        let cfs = self.cpus[c].rq.avg;
        let se = &mut self.tasks[t as usize].se;
        let w = se.weight as u64;
        se.avg = SchedAvg {
            load_avg: w,
            ..SchedAvg::default()
        };
        let cap = (1024i64 - cfs.util_avg as i64) / 2;
        if cap > 0 {
            let util = if cfs.util_avg != 0 {
                (cfs.util_avg * w / (cfs.load_avg + 1)).min(cap as u64)
            } else {
                cap as u64
            };
            se.avg.util_avg = util;
        }
        se.avg.runnable_avg = se.avg.util_avg;
    }

    /// sched_balance_update_blocked_averages(): decay the blocked load of CPU `c`'s cfs_rq
    /// (under its rq lock; the caller prices it). Clears has_blocked_load once fully decayed.
    pub(super) fn sched_balance_update_blocked_averages(&mut self, c: usize) -> bool {
        let jiffies = self.jiffies();
        let decayed = self.update_cfs_rq_load_avg(c);
        let rq = &mut self.cpus[c].rq;
        rq.last_blocked_load_update_tick = jiffies;
        if rq.avg.load_avg == 0 && rq.avg.util_avg == 0 {
            rq.has_blocked_load = false;
        }
        decayed
    }

    /// update_nohz_stats(): the ILB's blocked-load update of idle CPU `c`, at most once a jiffy;
    /// true while `c` still has blocked load.
    pub(super) fn update_nohz_stats(&mut self, exec: usize, c: usize) -> bool {
        let rq = &self.cpus[c].rq;
        if !rq.has_blocked_load || !self.nohz.idle[c] {
            return false;
        }
        if self.jiffies() <= rq.last_blocked_load_update_tick {
            return true;
        }
        // the ILB takes c's rq lock (a locked access to its rq line) and writes its averages
        let lock = if exec == c {
            0
        } else {
            self.rq_lock_remote(exec, c)
        };
        self.sched_balance_update_blocked_averages(c);
        self.rq_lines[c].avg_written(exec);
        let ns = self.assume.update_blocked_ns + lock;
        self.kcharge(exec, Sym::SchedBalanceUpdateBlockedAverages, ns);
        self.cpus[c].rq.has_blocked_load
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD_NS: u64 = 1024 * 1024;

    #[test]
    fn decay_load_halves_every_32_periods() {
        // y^32 = 1/2 is a shift, then y^0 = 0xffffffff/2^32 takes one off: 1024 → 511
        assert_eq!(decay_load(1024, 32), 511);
        assert_eq!(decay_load(1024, 64), 255);
        assert_eq!(decay_load(1 << 20, 32), (1 << 19) - 1);
        // one period: 47742 · 0xfa83b2da >> 32 = 46718 (y = 0.97857)
        assert_eq!(decay_load(LOAD_AVG_MAX, 1), 46718);
        assert_eq!(decay_load(u64::MAX, 32 * 63 + 1), 0);
    }

    #[test]
    fn load_avg_max_is_the_converged_series_as_pelt_derives_it() {
        // Documentation/scheduler/sched-pelt.c calc_converged_max(): max = max·y + 1024 until it
        // stops changing, with y as the table's y^1
        let (mut max, mut last) = (0u64, u64::MAX);
        while max != last {
            last = max;
            max = ((max * RUNNABLE_AVG_YN_INV[1] as u64) >> 32) + 1024;
        }
        assert_eq!(max, LOAD_AVG_MAX);
    }

    /// A task that always runs, updated once per period from t = 0.
    fn always_running(periods: u64) -> SchedAvg {
        let mut sa = SchedAvg::default();
        for p in 1..=periods {
            sa.update(p * PERIOD_NS, 1, 1, true, 1024);
        }
        sa
    }

    #[test]
    fn an_always_running_task_reaches_half_after_32_periods_and_converges_to_1024() {
        // By hand from accumulate_sum: each update crosses one boundary with period_contrib 0,
        // so contrib = c1 + c2 + c3 = decay_load(1024, 1) + 0 + 0 = 1002 and
        // util_sum = util_sum·y + 1002·1024; util_avg = util_sum / (47742 − 1024).
        let mut sum = 0u64;
        for _ in 0..32 {
            sum = decay_load(sum, 1) + (decay_load(1024, 1) << 10);
        }
        let sa = always_running(32);
        assert_eq!(sa.util_sum as u64, sum);
        assert_eq!(sa.util_avg, sum / PELT_MIN_DIVIDER);
        // y^32 = 1/2: after 32 periods the average is half way to the converged value
        assert!((500..=525).contains(&sa.util_avg), "{}", sa.util_avg);
        assert_eq!(sa.load_avg, sa.util_avg, "load 1·weight 1024 tracks util");
        let sa = always_running(2000);
        // converged: the sum is (47742 − 1024)·1024·(1002/1024) → util_avg 1002·47742/46718 ≈ 1023
        assert!((1015..=1024).contains(&sa.util_avg), "{}", sa.util_avg);
        assert_eq!(sa.runnable_avg, sa.util_avg);
    }

    #[test]
    fn a_blocked_average_halves_in_32_periods() {
        let mut sa = always_running(2000);
        let full = sa.util_avg;
        sa.update(2032 * PERIOD_NS, 0, 0, false, 1024);
        assert!(
            sa.util_avg * 2 <= full + 1 && sa.util_avg * 2 + 4 >= full,
            "{} after 32 idle periods from {full}",
            sa.util_avg
        );
        assert!(sa.load_avg.abs_diff(sa.util_avg) <= 1);
    }

    #[test]
    fn less_than_a_microsecond_changes_nothing() {
        let mut sa = always_running(10);
        let before = sa;
        assert!(!sa.update(10 * PERIOD_NS + 1023, 1, 1, true, 1024));
        assert_eq!(sa, before);
    }
}

#[cfg(test)]
mod engine_tests {
    use crate::sched::rq::tests::engine;

    /// Spinners that never sleep, one per CPU: each task's and each queue's util converges to the
    /// capacity scale, and a queue's load is the sum of its tasks' (attached at creation).
    #[test]
    fn always_running_tasks_converge_to_the_capacity_scale() {
        let mut e = engine(2, 2);
        e.run_until(500_000_000, u64::MAX);
        for t in 0..2 {
            let a = &e.tasks[t].se.avg;
            assert!((1000..=1024).contains(&a.util_avg), "task {t}: {a:?}");
            assert!((1000..=1024).contains(&a.load_avg), "task {t}: {a:?}");
        }
        for c in 0..2 {
            let a = &e.cpus[c].rq.avg;
            assert!((1000..=1024).contains(&a.util_avg), "cpu {c}: {a:?}");
            assert!((1000..=1024).contains(&a.runnable_avg), "cpu {c}: {a:?}");
        }
    }

    /// Two spinners on one CPU: the queue's runnable average counts both (≈ 2048) while its util
    /// stays at one CPU (≈ 1024), and each task's util is about half.
    #[test]
    fn runnable_counts_waiting_tasks_and_util_does_not() {
        let mut e = engine(2, 4);
        e.run_until(500_000_000, u64::MAX);
        let a = e.cpus[0].rq.avg;
        assert!((1000..=1024).contains(&a.util_avg), "{a:?}");
        assert!((2000..=2048).contains(&a.runnable_avg), "{a:?}");
        assert!((2000..=2048).contains(&a.load_avg), "{a:?}");
        let u = e.tasks[0].se.avg.util_avg;
        assert!((480..=544).contains(&u), "task util {u}");
    }
}
