//! NOHZ idle state: a CPU whose tick is stopped enters `nohz.idle_cpus_mask` and `nohz.nr_cpus`
//! (nohz_balance_enter_idle) and leaves them from its first busy tick (nohz_balance_exit_idle).
//! The kick and the idle load balancer that read this state are in `balance.rs`.

use super::*;
use crate::coherence::Op;

/// Field indexes of the `nohz` line (the global `struct nohz` of fair.c), as `Engine::new` lays it out.
const NOHZ_IDLE_CPUS_MASK: usize = 0;
const NOHZ_NR_CPUS: usize = 1;
pub(super) const NOHZ_NEXT_BALANCE: usize = 2;

/// The steps of nohz_balance_enter_idle / nohz_balance_exit_idle, one atomic each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NohzStep {
    /// cpumask_set_cpu / cpumask_clear_cpu on nohz.idle_cpus_mask.
    UpdateMask,
    /// atomic_inc / atomic_dec of nohz.nr_cpus.
    UpdateNrCpus,
}

impl Engine {
    /// tick_nohz_idle_stop_tick() at idle entry: the cpuidle governor stops the tick only when the
    /// predicted idle is longer than a tick; the CPU then enters the NOHZ idle state (the returned
    /// job, nohz_balance_enter_idle).
    pub(super) fn tick_nohz_idle_stop_tick(&mut self, c: usize) -> Option<Job> {
        if self.cpus[c].idle.pred_idle >= self.tick_ns && !self.cpus[c].tick.stopped {
            self.cpus[c].tick.stopped = true;
            return Some(Job::NohzEnter(NohzStep::UpdateMask));
        }
        None
    }

    /// tick_nohz_idle_exit(): a stopped tick restarts at the next tick boundary (plus this CPU's
    /// offset) when the CPU leaves idle.
    pub(super) fn tick_nohz_idle_restart_tick(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if cpu.tick.stopped {
            cpu.tick.stopped = false;
            cpu.tick.generation = cpu.tick.generation.wrapping_add(1);
            let next = (now / self.tick_ns + 1) * self.tick_ns + cpu.tick.offset;
            self.q.push(next, Ev::Tick(c as u32, cpu.tick.generation));
        }
    }

    /// nohz_balance_enter_idle / nohz_balance_exit_idle: the cpumask bit, then nr_cpus, both atomics.
    pub(super) fn step_nohz(&mut self, c: usize, step: NohzStep, enter: bool) -> Option<NohzStep> {
        if self.must_wait(c) {
            return Some(step);
        }
        let sym = if enter {
            Sym::NohzBalanceEnter
        } else {
            Sym::NohzBalanceExit
        };
        match step {
            NohzStep::UpdateMask => {
                self.kaccess(c, self.line_nohz, Op::Atomic, NOHZ_IDLE_CPUS_MASK, sym);
                self.nohz_idle[c] = enter;
                self.cpus[c].idle.in_nohz_mask = enter;
                if enter {
                    self.cpus[c].rq.has_blocked_load = true;
                }
                Some(NohzStep::UpdateNrCpus)
            }
            NohzStep::UpdateNrCpus => {
                self.kaccess(c, self.line_nohz, Op::Atomic, NOHZ_NR_CPUS, sym);
                None
            }
        }
    }
}
