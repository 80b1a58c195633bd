//! The periodic tick: the hrtimer event, the jiffies update by the timekeeping CPU, sched_tick()
//! (accounting and PELT of the running task, slice preemption, the balance trigger with the
//! blocked-average update, queuing the NOHZ kick).

use super::*;
use crate::coherence::Op;

/// The tick job: jiffies first (one shared-line access), then sched_tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TickStep {
    /// tick_sched_do_timer(): the timekeeping CPU advances jiffies_64 (a store); every other CPU
    /// reads it (sched_balance_trigger's `time_after_eq(jiffies, rq->next_balance)`).
    Jiffies,
    /// sched_tick() and what it triggers.
    SchedTick,
}

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
        self.push_job(c, Job::Tick(TickStep::Jiffies));
    }

    pub(super) fn step_tick(&mut self, c: usize, step: TickStep) -> Option<TickStep> {
        if self.must_wait(c) {
            return Some(step);
        }
        match step {
            TickStep::Jiffies => {
                // tick_sched_do_timer(): a CPU takes the duty when nobody has it (it is given up
                // when the holder stops its tick, tick_nohz_idle_stop_tick)
                let keeper = *self.tick_do_timer_cpu.get_or_insert(c as u32);
                let op = if keeper as usize == c {
                    Op::Store // tick_do_update_jiffies64(): jiffies_64 += ticks
                } else {
                    Op::Load
                };
                self.kaccess(c, self.line_jiffies, op, 0, Sym::SchedTick);
                Some(TickStep::SchedTick)
            }
            TickStep::SchedTick => {
                self.sched_tick(c);
                None
            }
        }
    }

    /// sched_tick(): accounting, preemption, and the balance trigger.
    pub(super) fn sched_tick(&mut self, c: usize) {
        if self.scx_on() {
            // task_tick_scx; no balance trigger: fair is not an active class (ext_class.rs)
            self.task_tick_scx(c);
            self.kcharge(c, Sym::SchedTick, self.assume.tick_ns);
            return;
        }
        let jiffies = self.jiffies();
        // task_tick_fair → entity_tick: update_curr (a consumed request reschedules), PELT
        if self.update_curr(c, UpdateCurrCaller::EntityTick) {
            self.cpus[c].rq.need_resched = true;
        }
        let idle = self.cpus[c].is_idle();
        if let Some(t) = self.cpus[c].rq.curr {
            self.update_load_avg(c, t, true, false, false);
            let mm = self.tasks[t as usize].process;
            self.task_tick_cache(c, t, mm);
        }
        // sched_balance_trigger(): raise SCHED_SOFTIRQ (it runs after the interrupt), then
        // nohz_balancer_kick() on a busy CPU, which first leaves the NOHZ idle state
        let softirq = jiffies >= self.cpus[c].balance.next_balance;
        if !idle {
            let step = self.nohz.first_step();
            let cpu = &mut self.cpus[c];
            if cpu.idle.in_nohz_mask {
                cpu.exec.jobs.push_back(Job::NohzExit(step));
            }
            cpu.exec.jobs.push_back(Job::NohzKick(KickStep::ReadNohz));
        }
        if softirq {
            self.metrics.count(Counter::Softirqs);
            self.trace_instant(c, "raise SCHED_SOFTIRQ");
            // sched_balance_softirq(): the blocked averages first, under the local rq lock
            self.sched_balance_update_blocked_averages(c);
            self.cpus[c].exec.jobs.push_back(Job::Compute(
                Sym::SchedBalanceUpdateBlockedAverages,
                self.assume.update_blocked_ns,
            ));
            let w = Walk::new(self, c, idle);
            self.cpus[c].exec.jobs.push_back(Job::Balance(w));
        }
        self.kcharge(c, Sym::SchedTick, self.assume.tick_ns);
    }
}
