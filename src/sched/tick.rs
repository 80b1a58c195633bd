//! The periodic tick: the hrtimer event and sched_tick() (accounting and PELT of the running task,
//! slice preemption, the balance trigger with the blocked-average update, the NOHZ kick).

use super::*;

/// A CPU's periodic tick.
pub(crate) struct TickState {
    /// Stopped by the NOHZ idle entry.
    pub(super) stopped: bool,
    /// Bumped when the tick restarts, so the stopped tick's pending event is a no-op.
    pub(super) generation: u32,
    /// skew_tick: this CPU's offset from the tick boundary.
    pub(super) offset: u64,
}

impl TickState {
    pub(super) fn new(patches: &Patches, tick_ns: u64, nr_cpus: usize, c: usize) -> Self {
        TickState {
            stopped: false,
            generation: 0,
            // skew_tick=1: offset = (TICK_NSEC / 2) / num_possible_cpus() * cpu
            offset: if patches.skew_tick {
                tick_ns / 2 / nr_cpus as u64 * c as u64
            } else {
                0
            },
        }
    }
}

impl Engine {
    pub(super) fn on_tick(&mut self, c: usize, tick_gen: u32) {
        let cpu = &self.cpus[c];
        if tick_gen != cpu.tick.generation || cpu.tick.stopped {
            return;
        }
        let next = self.now + self.tick_ns;
        self.q.push(next, Ev::Tick(c as u32, tick_gen));
        self.metrics.count(Counter::Ticks);
        self.push_job(c, Job::Tick);
    }

    /// sched_tick(): accounting, preemption, and the balance trigger.
    pub(super) fn sched_tick(&mut self, c: usize) {
        let jiffies = self.jiffies();
        // task_tick_fair → entity_tick: update_curr (a consumed request reschedules), PELT
        if self.update_curr(c) {
            self.cpus[c].rq.need_resched = true;
        }
        let idle = self.cpus[c].is_idle();
        if let Some(t) = self.cpus[c].rq.curr {
            self.update_load_avg(c, t, true, false, false);
            let mm = self.tasks[t as usize].process;
            self.task_tick_cache(c, mm);
        }
        if self.cpus[c].idle.in_nohz_mask && !idle {
            self.cpus[c]
                .exec
                .jobs
                .push_back(Job::NohzExit(NohzStep::UpdateMask));
        }
        // sched_balance_trigger()
        if jiffies >= self.cpus[c].balance.next_balance {
            self.metrics.count(Counter::Softirqs);
            // sched_balance_softirq(): the blocked averages first, under the local rq lock
            self.sched_balance_update_blocked_averages(c);
            self.cpus[c].exec.jobs.push_back(Job::Compute(
                Sym::SchedBalanceUpdateBlockedAverages,
                UPDATE_BLOCKED_NS,
            ));
            let w = Walk::new(self, c, idle);
            self.cpus[c].exec.jobs.push_back(Job::Balance(w));
        }
        if !idle {
            self.nohz_balancer_kick(c);
        }
        self.kcharge(c, Sym::SchedTick, TICK_NS);
    }
}
