//! The workload driver: a task's script steps (run, complete, wake, sleep, block, exit) executed
//! on its CPU at the end of a burst or at kernel exit.

use super::wake_flags::WF_SYNC;
use super::*;
use crate::workload::Step;

impl Engine {
    pub(super) fn on_burst_end(&mut self, c: usize) {
        let now = self.now;
        let Some(t) = self.cpus[c].rq.curr else {
            return;
        };
        let end = self.tasks[t as usize].run_end;
        if end > now {
            // a busy SMT sibling slowed the burst since this event was queued (retime_user)
            let g = self.cpus[c].exec.burst_gen;
            self.q.push(end, Ev::BurstEnd(c as u32, g));
            return;
        }
        // The burst is over: the CPU is in the kernel (syscall, wakeups, schedule).
        self.enter_kernel(c);
        self.tasks[t as usize].remaining = 0;
        // this CPU's kernel work is not scheduled yet: a CPU its wakeups run must not move the
        // clock past it (it is not the outermost, see must_wait)
        self.run_depth += 1;
        self.advance_script(c, t, now);
        self.run_depth -= 1;
        self.run_cpu(c);
    }

    /// Runs task `t`'s script on CPU `c` (in the kernel) until it has CPU work or blocks.
    pub(super) fn advance_script(&mut self, c: usize, t: TaskId, now: u64) {
        if let Some(ns) = self.user_arrived(c, t) {
            // its access reached the line: the rest of it is the next burst
            let ns = ns.max(1);
            self.metrics.loc[loc_stat::BURST_NS] += ns;
            self.tasks[t as usize].remaining = ns;
            return;
        }
        loop {
            self.user_served(t);
            match self.workload.next(t, now, &mut self.rng) {
                Step::Run { ns, shared_lines } => {
                    let mut extra = std::mem::take(&mut self.tasks[t as usize].pending_extra);
                    let ns = ns.max(1);
                    self.tasks[t as usize].loc.line_wait = false;
                    if shared_lines > 0 {
                        let other = self.random_sibling_thread(t);
                        let from = self.tasks[other as usize].last_ran_cpu as usize;
                        let shared = shared_lines as u64 * self.topo.xfer_ns(from, c) as u64;
                        self.metrics.charge_stat(c, shared);
                        self.metrics.loc[loc_stat::COMM_NS] += shared;
                        extra += shared;
                    }
                    extra += self.locality_burst(c, t, ns);
                    self.tasks[t as usize].remaining = ns.max(1) + extra;
                    return;
                }
                Step::Access { line, op } => {
                    let extra = std::mem::take(&mut self.tasks[t as usize].pending_extra);
                    let ns = self.user_access(c, t, line, op, now).max(1);
                    self.metrics.loc[loc_stat::BURST_NS] += ns;
                    self.tasks[t as usize].loc.line_wait = true;
                    self.tasks[t as usize].remaining = ns + extra;
                    return;
                }
                Step::Kernel(k) => {
                    // its kernel work runs as this CPU's next job; kernel exit asks for the step
                    // after it (the task has no burst left)
                    self.cpus[c].exec.jobs.push_back(Job::Syscall(t, k));
                    return;
                }
                Step::Complete { latency_ns } => {
                    self.tasks[t as usize].events += 1;
                    self.metrics.complete(latency_ns);
                }
                Step::Wake { task, lines, sync } => {
                    let wake_flags = if sync { WF_SYNC } else { 0 };
                    self.try_to_wake_up(task, c, super::wakeup::Waker::Task(t, lines), wake_flags)
                }
                Step::Read { from, lines } => {
                    let ns = self.locality_read(c, from, lines);
                    self.metrics.charge_stat(c, ns);
                    self.tasks[t as usize].pending_extra += ns;
                }
                Step::Sleep { ns } => {
                    self.block(c, t);
                    self.q.push(now + ns, Ev::Wake(t));
                    return;
                }
                Step::AwaitRequest { ns } => {
                    self.block(c, t);
                    self.await_request(t, ns);
                    return;
                }
                Step::Block => {
                    let task = &mut self.tasks[t as usize];
                    if task.pending_wakeups > 0 {
                        task.pending_wakeups -= 1;
                        continue;
                    }
                    self.block(c, t);
                    return;
                }
                Step::Exit if self.scx_on() => {
                    self.dequeue_curr_scx(c, t, TaskState::Exited);
                    return;
                }
                Step::Exit => {
                    self.tasks[t as usize].state = TaskState::Exited;
                    self.update_curr(c, UpdateCurrCaller::DequeueEntitySleep);
                    self.update_load_avg(c, t, true, false, false);
                    self.dequeue_curr(c);
                    self.remove_entity_load_avg(c, t); // task_dead_fair
                    return;
                }
            }
        }
    }

    fn block(&mut self, c: usize, t: TaskId) {
        if self.scx_on() {
            return self.dequeue_curr_scx(c, t, TaskState::Sleeping);
        }
        self.dequeue_curr_sleep(c, t);
    }

    fn random_sibling_thread(&mut self, t: TaskId) -> TaskId {
        let n = self.tasks.len() as u64;
        let other = self.rng.below(n) as TaskId;
        if self.tasks[other as usize].process == self.tasks[t as usize].process {
            other
        } else {
            t
        }
    }
}
