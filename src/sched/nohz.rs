//! NOHZ idle state: a CPU whose tick is stopped enters `nohz.idle_cpus_mask` and `nohz.nr_cpus`
//! (nohz_balance_enter_idle) and leaves them from its first busy tick (nohz_balance_exit_idle).
//! The kick and the idle load balancer that read this state are in `balance.rs`.

use super::*;
use crate::coherence::Op;

impl Engine {
    /// tick_nohz_idle_stop_tick() at idle entry: the cpuidle governor stops the tick only when the
    /// predicted idle is longer than a tick; the CPU then enters the NOHZ idle state (the returned
    /// job, nohz_balance_enter_idle).
    pub(super) fn tick_nohz_idle_stop_tick(&mut self, c: usize) -> Option<Job> {
        if self.cpus[c].pred_idle >= self.tick_ns && !self.cpus[c].tick_stopped {
            self.cpus[c].tick_stopped = true;
            return Some(Job::NohzEnter(0));
        }
        None
    }

    /// tick_nohz_idle_exit(): a stopped tick restarts at the next tick boundary (plus this CPU's
    /// offset) when the CPU leaves idle.
    pub(super) fn tick_nohz_idle_restart_tick(&mut self, c: usize, now: u64) {
        let cpu = &mut self.cpus[c];
        if cpu.tick_stopped {
            cpu.tick_stopped = false;
            cpu.tick_gen = cpu.tick_gen.wrapping_add(1);
            let next = (now / self.tick_ns + 1) * self.tick_ns + cpu.tick_offset;
            self.q.push(next, Ev::Tick(c as u32, cpu.tick_gen));
        }
    }

    /// nohz_balance_enter_idle / nohz_balance_exit_idle: cpumask bit and nr_cpus, both atomics.
    pub(super) fn step_nohz(&mut self, c: usize, k: u8, enter: bool) -> Option<u8> {
        if self.must_wait(c) {
            return Some(k);
        }
        let sym = if enter {
            Sym::NohzBalanceEnter
        } else {
            Sym::NohzBalanceExit
        };
        self.kaccess(c, self.line_nohz, Op::Atomic, k as usize, sym);
        if k == 0 {
            self.nohz_idle[c] = enter;
            self.cpus[c].in_nohz_mask = enter;
            return Some(1);
        }
        None
    }
}
