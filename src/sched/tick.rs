//! The periodic tick: the hrtimer event, sched_tick() (accounting, slice preemption, the balance
//! trigger, the NOHZ kick) and the utilization average.

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

/// A CPU's busy time since the last tick and the utilization average built from it.
pub(crate) struct CpuStats {
    /// Utilization estimate, 0..1024 (an integer PELT-like average updated each tick).
    pub(super) util: u32,
    /// Non-idle time charged since the last update_util (every charge adds to it).
    pub(super) busy_since_tick: u64,
    last_util_update: u64,
}

impl CpuStats {
    pub(super) fn new() -> Self {
        CpuStats {
            util: 0,
            busy_since_tick: 0,
            last_util_update: 0,
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
        self.update_util(c);
        // task_tick_fair → entity_tick → update_curr: a consumed request reschedules
        if self.update_curr(c) {
            self.cpus[c].rq.need_resched = true;
        }
        let idle = self.cpus[c].is_idle();
        if let Some(t) = self.cpus[c].rq.curr {
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
            let w = Walk::new(self, c, idle);
            self.cpus[c].exec.jobs.push_back(Job::Balance(w));
        }
        if !idle {
            self.nohz_balancer_kick(c);
        }
        self.kcharge(c, Sym::SchedTick, TICK_NS);
    }

    /// Integer PELT-like utilization: a 1/32-per-tick moving average of the busy share (≈ 22 ms half-life).
    fn update_util(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let elapsed = now - cpu.stats.last_util_update;
        if elapsed == 0 {
            return;
        }
        let ticks = (elapsed / self.tick_ns).clamp(1, 64);
        let busy = (cpu.stats.busy_since_tick.min(elapsed) * 1024 / elapsed) as u32;
        for _ in 0..ticks {
            cpu.stats.util = cpu.stats.util - cpu.stats.util / 32 + busy / 32;
        }
        cpu.stats.busy_since_tick = 0;
        cpu.stats.last_util_update = now;
    }
}
