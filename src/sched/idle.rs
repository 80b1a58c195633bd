//! Idle entry and exit (kernel/sched/core.c, fair.c, idle.c): newidle balancing before going idle,
//! the idle stamp, `avg_idle` (update_rq_avg_idle) and the cpuidle governor's prediction
//! `pred_idle`; the idle-core hint it sets is priced in `llc_shared.rs`.

use super::*;

/// A CPU's idle state.
pub(crate) struct IdleState {
    /// The CPU went through the idle entry (and has not run a task since).
    pub(super) idle_entered: bool,
    /// Newidle balancing ran since the CPU last ran a task.
    pub(super) newidle_done: bool,
    idle_stamp: u64,
    pub(super) avg_idle: u64,
    /// The cpuidle governor's predicted idle duration (EWMA of idle periods), ns.
    pub(super) pred_idle: u64,
    pub(super) max_idle_balance_cost: u64,
    /// This CPU's bit in nohz.idle_cpus_mask.
    pub(super) in_nohz_mask: bool,
}

impl IdleState {
    pub(super) fn new(tick_ns: u64) -> Self {
        IdleState {
            // not yet through the idle path: the first tick takes it (and may stop the tick)
            idle_entered: false,
            newidle_done: false,
            idle_stamp: 0,
            avg_idle: 2 * MIGRATION_COST_NS,
            // no idle history yet: one tick, so a CPU that never runs stops its tick at its
            // first idle entry and a busy one learns its short idles after one
            pred_idle: tick_ns,
            max_idle_balance_cost: MIGRATION_COST_NS,
            in_nohz_mask: false,
        }
    }
}

impl Engine {
    /// The CPU has nothing to run (from `kernel_exit`): first sched_balance_newidle(), then, once,
    /// the idle entry, where the cpuidle governor may stop the tick. Returns the job to run before
    /// the CPU goes idle, if any.
    pub(super) fn idle_enter(&mut self, c: usize, now: u64) -> Option<Job> {
        let cpu = &mut self.cpus[c];
        if !cpu.idle.idle_entered && !cpu.idle.newidle_done {
            cpu.idle.newidle_done = true;
            return Some(Job::Newidle(NewidleWalk::new(self)));
        }
        if !cpu.idle.idle_entered {
            cpu.idle.idle_entered = true;
            self.metrics.count(Counter::IdleEntries);
            cpu.idle.idle_stamp = now;
            // pick_next_task_idle(): update_idle_core() reads the sd_llc_shared line
            let ns = self.update_idle_core(c);
            let stop = self.tick_nohz_idle_stop_tick(c);
            if ns > 0 {
                self.metrics.stall(c, ns);
                if let Some(job) = stop {
                    self.cpus[c].exec.jobs.push_back(job);
                }
                return Some(Job::Compute(Sym::Schedule, ns));
            }
            return stop;
        }
        None
    }

    /// A task starts running on `c` (from `set_next_entity`): if the CPU was idle, the idle period feeds
    /// `avg_idle` and `pred_idle`, and a stopped tick restarts.
    pub(super) fn idle_exit(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if cpu.idle.idle_entered {
            cpu.idle.idle_entered = false;
            // update_rq_avg_idle(): average, then clamp to twice the max idle balance cost
            let delta = now - cpu.idle.idle_stamp;
            let avg =
                ((cpu.idle.avg_idle as i64) + (delta as i64 - cpu.idle.avg_idle as i64) / 8) as u64;
            cpu.idle.avg_idle = avg.min(2 * cpu.idle.max_idle_balance_cost);
            // the cpuidle governor's own prediction: recent idle durations, not clamped
            cpu.idle.pred_idle = ((cpu.idle.pred_idle as i64)
                + (delta as i64 - cpu.idle.pred_idle as i64) / 8)
                as u64;
            self.tick_nohz_idle_restart_tick(c, now);
        }
        self.cpus[c].idle.newidle_done = false;
    }
}
