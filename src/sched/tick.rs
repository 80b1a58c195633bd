//! The periodic tick: the hrtimer event, sched_tick() (accounting, slice preemption, the balance
//! trigger, the NOHZ kick) and the utilization average.

use super::*;

impl Engine {
    pub(super) fn on_tick(&mut self, c: usize, tick_gen: u32) {
        let cpu = &self.cpus[c];
        if tick_gen != cpu.tick_gen || cpu.tick_stopped {
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
        self.update_curr(c);
        let idle = self.cpus[c].is_idle();
        if let Some(t) = self.cpus[c].curr {
            if self.now - self.cpus[c].picked_at >= SLICE_NS && !self.cpus[c].rq.is_empty() {
                self.cpus[c].need_resched = true;
            }
            let mm = self.tasks[t as usize].process;
            self.task_tick_cache(c, mm);
        }
        if self.cpus[c].in_nohz_mask && !idle {
            self.cpus[c]
                .jobs
                .push_back(Job::NohzExit(NohzStep::UpdateMask));
        }
        // sched_balance_trigger()
        if jiffies >= self.cpus[c].next_balance {
            self.metrics.count(Counter::Softirqs);
            let w = Walk::new(self, c, idle);
            self.cpus[c].jobs.push_back(Job::Balance(w));
        }
        if !idle {
            self.nohz_balancer_kick(c);
        }
        self.kcharge(c, Sym::SchedTick, TICK_NS);
    }

    /// Integer PELT-like utilization: a 1/32-per-tick moving average of the busy share (≈ 22 ms half-life).
    pub(super) fn update_util(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let elapsed = now - cpu.last_util_update;
        if elapsed == 0 {
            return;
        }
        let ticks = (elapsed / self.tick_ns).clamp(1, 64);
        let busy = (cpu.busy_since_tick.min(elapsed) * 1024 / elapsed) as u32;
        for _ in 0..ticks {
            cpu.util = cpu.util - cpu.util / 32 + busy / 32;
        }
        cpu.busy_since_tick = 0;
        cpu.last_util_update = now;
    }
}
