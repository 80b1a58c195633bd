//! The kernel-job executor: CPU modes (idle, user, kernel), entering the kernel, the job queue and
//! its cursor, `must_wait` (shared-line accesses in arrival order), `kernel_exit`, and the two doors
//! through which kernel code spends time: `kcharge` (pure compute) and `kaccess` (a shared line).

use super::*;
use crate::coherence::{Access, LineId, Op};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Idle,
    User,
    Kernel,
}

/// What kernel_exit decided.
enum Exit {
    /// The CPU left the kernel (to user space or idle).
    Left,
    /// State changed (a switch, a script step): look at the job queue again.
    Again,
    /// This job runs next (the queue is empty, so it is what a queued job would be).
    Run(Job),
}

/// A CPU's mode and kernel work: where its time goes and the jobs it has yet to do.
pub(crate) struct ExecState {
    pub(super) mode: Mode,
    /// Start of the open Idle/User interval (or of the kernel work, in Kernel mode).
    pub(super) since: u64,
    /// Kernel work queued on this CPU.
    pub(super) jobs: VecDeque<Job>,
    /// In Kernel mode: how far the CPU's kernel work has been costed.
    pub(super) cursor: u64,
    /// A job is waiting for time to reach the cursor.
    waiting: bool,
    /// When this CPU's buffered stores have all committed (a locked instruction waits for it),
    /// and the function of the last of them (charged for a drain at kernel exit).
    sb_drain_at: u64,
    sb_sym: Sym,
    pub(super) burst_gen: u32,
    pub(super) cont_gen: u32,
    /// In User mode: when the task's `remaining` work was last brought up to date, and the rate
    /// (per mille) it progresses at since then (`locality.rs`: SMT co-run).
    pub(super) ustart: u64,
    pub(super) rate: u32,
}

impl ExecState {
    pub(super) fn new() -> Self {
        ExecState {
            mode: Mode::Idle,
            since: 0,
            jobs: VecDeque::new(),
            cursor: 0,
            waiting: false,
            sb_drain_at: 0,
            sb_sym: Sym::SchedTick,
            burst_gen: 0,
            cont_gen: 0,
            ustart: 0,
            rate: 1000,
        }
    }
}

impl Engine {
    // ---- accounting -------------------------------------------------------------------------

    /// Charges the open Idle/User interval of every CPU up to now (for samples and the report).
    pub fn flush_accounting(&mut self) {
        for c in 0..self.cpus.len() {
            let cpu = &mut self.cpus[c];
            let dt = self.now.saturating_sub(cpu.exec.since);
            match cpu.exec.mode {
                Mode::Idle => self.metrics.charge(c, Sym::Idle, dt),
                Mode::User => {
                    self.metrics.charge(c, Sym::User, dt);
                    if let Some(t) = cpu.rq.curr {
                        self.tasks[t as usize].sum_exec += dt;
                    }
                }
                Mode::Kernel => continue,
            }
            cpu.exec.since = self.now.max(cpu.exec.since);
        }
    }

    pub(super) fn kcharge(&mut self, c: usize, sym: Sym, ns: u64) {
        // kernel compute, like user work, runs at the SMT share while a sibling is busy
        let ns = locality::wall_for(ns, self.smt_rate(c));
        self.metrics.charge(c, sym, ns);
        self.trace_charge(c, sym, self.cpus[c].exec.cursor, ns);
        self.cpus[c].exec.cursor += ns;
    }

    /// A shared-line access by kernel code on CPU `c` at `now` (its cursor must be now). The CPU
    /// goes on at `done`; a store's value is visible to others from `visible`.
    pub(super) fn kaccess(
        &mut self,
        c: usize,
        line: LineId,
        op: Op,
        field: usize,
        sym: Sym,
    ) -> Access {
        debug_assert!(self.cpus[c].exec.cursor <= self.now);
        let a = self.lines.access(&self.topo, line, c, op, field, self.now);
        let stall = a.done - self.now;
        self.metrics.charge(c, sym, stall);
        self.metrics.stall(c, stall);
        self.trace_wait(c, sym, Some(line), self.now, a.done);
        let exec = &mut self.cpus[c].exec;
        exec.cursor = a.done;
        if op == Op::Store && a.visible > exec.sb_drain_at {
            exec.sb_drain_at = a.visible;
            exec.sb_sym = sym;
        }
        a
    }

    /// A locked instruction drains the store buffer first: before CPU `c` issues an atomic, it
    /// waits (charged to `sym`) until its buffered stores have committed. Call before `must_wait`.
    pub(super) fn drain_store_buffer(&mut self, c: usize, sym: Sym) {
        let cursor = self.cpus[c].exec.cursor;
        let wait = self.cpus[c].exec.sb_drain_at.saturating_sub(cursor);
        if wait > 0 {
            self.metrics.charge(c, sym, wait);
            self.metrics.stall(c, wait);
            self.trace_wait(c, sym, None, cursor, cursor + wait);
            self.cpus[c].exec.cursor += wait;
        }
    }

    // ---- modes and the kernel-job executor -----------------------------------------------------

    /// Leaves Idle/User for kernel work. A CPU whose last kernel work ends in the future (`since` >
    /// now) starts the new work when that ends.
    pub(super) fn enter_kernel(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let t = now.max(cpu.exec.since);
        let dt = t - cpu.exec.since;
        match cpu.exec.mode {
            Mode::Kernel => return,
            Mode::Idle => self.metrics.charge(c, Sym::Idle, dt),
            Mode::User => {
                self.metrics.charge(c, Sym::User, dt);
                if let Some(task) = cpu.rq.curr {
                    self.tasks[task as usize].sum_exec += dt;
                    self.user_progress(c, task, t);
                }
                let cpu = &mut self.cpus[c];
                cpu.exec.burst_gen = cpu.exec.burst_gen.wrapping_add(1);
            }
        }
        let was_idle = self.cpus[c].exec.mode == Mode::Idle;
        let cpu = &mut self.cpus[c];
        cpu.exec.mode = Mode::Kernel;
        cpu.exec.cursor = t;
        cpu.exec.since = t;
        self.trace_mode(c, t);
        if was_idle {
            self.smt_changed(c, true);
        }
    }

    /// Brings the running task's remaining work up to `t` on `c` (at the CPU's rate since
    /// `ustart`); the wall time beyond the work done is the SMT co-run's loss.
    fn user_progress(&mut self, c: usize, task: TaskId, t: u64) {
        let exec = &mut self.cpus[c].exec;
        let wall = t.saturating_sub(exec.ustart);
        let task = &mut self.tasks[task as usize];
        let done = locality::progress(wall, exec.rate, task.remaining);
        task.remaining -= done;
        if exec.rate < 1000 {
            self.metrics.loc[locality::stat::SMT_CORUN_NS] += wall;
            self.metrics.loc[locality::stat::SMT_NS] += wall - done;
        }
        exec.ustart = t.max(exec.ustart);
    }

    /// A sibling of `c` changed between busy and idle: `c`'s running burst goes on at its new rate.
    pub(super) fn retime_user(&mut self, c: usize) {
        let Some(t) = self.cpus[c].rq.curr else {
            return;
        };
        let at = self.now.max(self.cpus[c].exec.ustart);
        let rate = self.user_rate(c);
        if rate == self.cpus[c].exec.rate {
            return;
        }
        self.user_progress(c, t, at);
        let cpu = &mut self.cpus[c];
        let slower = rate < cpu.exec.rate;
        cpu.exec.rate = rate;
        let task = &mut self.tasks[t as usize];
        task.run_end = at + locality::wall_for(task.remaining, rate);
        if slower {
            // the pending BurstEnd comes first and is pushed on to the new end (on_burst_end)
            return;
        }
        cpu.exec.burst_gen = cpu.exec.burst_gen.wrapping_add(1);
        self.q
            .push(task.run_end, Ev::BurstEnd(c as u32, cpu.exec.burst_gen));
    }

    /// True when a job on `c` must wait for simulated time to reach its cursor before touching a
    /// shared line. If no other event can come first, time simply advances (conservative lookahead).
    pub(super) fn must_wait(&mut self, c: usize) -> bool {
        let cursor = self.cpus[c].exec.cursor;
        if cursor <= self.now {
            return false;
        }
        // Only the outermost CPU of an event may advance time: a CPU reached from another CPU's
        // work (an IPI, a wakeup) must not move the clock under the CPU that is running it.
        if self.run_depth == 1 && self.q.peek_time().is_none_or(|t| cursor < t) {
            self.now = cursor;
            return false;
        }
        self.cpus[c].exec.waiting = true;
        true
    }

    /// Queues kernel work on `c` (an interrupt, an IPI, a softirq); it starts at now.
    pub(super) fn push_job(&mut self, c: usize, job: Job) {
        self.cpus[c].exec.jobs.push_back(job);
        if self.cpus[c].exec.mode != Mode::Kernel {
            self.enter_kernel(c);
            self.run_cpu(c);
        }
    }

    /// Queues kernel work on `c` that arrives at `t` (an IPI in flight): a CPU outside the kernel
    /// stays where it is until then and enters the kernel at `t`; one in the kernel runs it after
    /// its queued work.
    pub(super) fn push_job_at(&mut self, c: usize, job: Job, t: u64) {
        self.cpus[c].exec.jobs.push_back(job);
        if self.cpus[c].exec.mode != Mode::Kernel {
            self.continue_at(c, t);
        }
    }

    /// Something became runnable on `c` (a resched IPI): a CPU outside the kernel enters it and
    /// re-evaluates at kernel exit; one in the kernel does so at its own exit (a queued no-op job
    /// would change nothing, so none is queued).
    pub(super) fn resched_cpu(&mut self, c: usize) {
        if self.cpus[c].exec.mode != Mode::Kernel {
            self.enter_kernel(c);
            self.run_cpu(c);
        }
    }

    fn continue_at(&mut self, c: usize, t: u64) {
        let cpu = &mut self.cpus[c];
        cpu.exec.cont_gen = cpu.exec.cont_gen.wrapping_add(1);
        self.q.push(t, Ev::Continue(c as u32, cpu.exec.cont_gen));
    }

    pub(super) fn run_cpu(&mut self, c: usize) {
        if self.cpus[c].exec.mode != Mode::Kernel {
            // a job that was in flight (push_job_at) and now starts
            if self.cpus[c].exec.jobs.is_empty() {
                return;
            }
            self.enter_kernel(c);
        }
        self.run_depth += 1;
        self.run_cpu_inner(c);
        self.run_depth -= 1;
    }

    fn run_cpu_inner(&mut self, c: usize) {
        loop {
            let job = match self.cpus[c].exec.jobs.pop_front() {
                Some(job) => job,
                None => match self.kernel_exit(c) {
                    Exit::Left => return,
                    Exit::Again => continue,
                    Exit::Run(job) => job,
                },
            };
            if let Some(job) = self.step(c, job) {
                self.cpus[c].exec.jobs.push_front(job);
            }
            if std::mem::take(&mut self.cpus[c].exec.waiting) {
                let t = self.cpus[c].exec.cursor;
                self.continue_at(c, t);
                return;
            }
        }
    }

    /// Executes one step of a job; returns it if it is not finished.
    pub(super) fn step(&mut self, c: usize, job: Job) -> Option<Job> {
        match job {
            Job::Compute(sym, ns) => {
                self.kcharge(c, sym, ns);
                None
            }
            Job::CacheAware(j) => self.step_cache_aware(c, j).map(Job::CacheAware),
            Job::Tick(step) => self.step_tick(c, step).map(Job::Tick),
            Job::ActiveBalance(target) => {
                self.active_load_balance_cpu_stop(c, target as usize);
                None
            }
            Job::Balance(w) => self.step_balance(c, w).map(Job::Balance),
            Job::Ilb(s) => self.step_ilb(c, s).map(Job::Ilb),
            Job::TtwuPending(t, ipi) => self.sched_ttwu_pending(c, t, ipi),
            Job::Newidle(w) => self.step_newidle(c, w).map(Job::Newidle),
            Job::NohzEnter(k) => self.step_nohz(c, k, true).map(Job::NohzEnter),
            Job::NohzExit(k) => self.step_nohz(c, k, false).map(Job::NohzExit),
            Job::NohzKick(k) => self.step_nohz_kick(c, k).map(Job::NohzKick),
        }
    }

    /// All kernel work is done: resume the task, switch, or go idle.
    fn kernel_exit(&mut self, c: usize) -> Exit {
        // Every way out of the kernel passes a locked instruction (the rq lock in __schedule, the
        // hrtimer base lock on the interrupt path), which drains the store buffer: the wait is
        // charged to the function whose store was still waiting for its line.
        let sym = self.cpus[c].exec.sb_sym;
        self.drain_store_buffer(c, sym);
        let now = self.cpus[c].exec.cursor.max(self.now);
        if let Some(t) = self.cpus[c].rq.curr {
            if !self.cpus[c].rq.need_resched || self.cpus[c].rq.queued.is_empty() {
                self.cpus[c].rq.need_resched = false;
                if self.tasks[t as usize].remaining == 0 {
                    // Back from a sleep with no burst pending: its next step runs here, in the
                    // kernel exit path, instead of through a zero-length burst.
                    self.advance_script(c, t, now);
                    return Exit::Again;
                }
                self.resume_user(c, t);
                return Exit::Left;
            }
            // schedule(): pick_next_task_fair with prev still current; prev picked again is
            // neither put nor set (no protection renewal) and needs no switch.
            self.sched_count(c);
            self.cpus[c].rq.need_resched = false;
            self.update_curr(c);
            match self.pick_next_task_fair(c, t) {
                rq::Picked::Prev => return Exit::Again,
                rq::Picked::Next => {
                    self.kcharge(c, Sym::Schedule, SWITCH_NS);
                    return Exit::Again;
                }
                rq::Picked::Idle => {}
            }
        }
        self.cpus[c].rq.need_resched = false;
        let next = self.pick_task_fair(c);
        if next.is_some() || self.sched_info.cur[c].is_some() {
            // a task blocked, or an idle CPU has work: schedule() / schedule_idle()
            self.sched_count(c);
        }
        if let Some(next) = next {
            self.set_next_entity(c, next);
            // the switch is the next work of this CPU (a job queued at the front would run now)
            self.kcharge(c, Sym::Schedule, SWITCH_NS);
            return Exit::Again;
        }
        // Nothing to run: newidle balancing, then the idle entry (which may stop the tick).
        if let Some(job) = self.idle_enter(c, now) {
            return Exit::Run(job);
        }
        self.sched_switch_to(c, None, now);
        self.sched_finish(c, true);
        let cpu = &mut self.cpus[c];
        cpu.exec.mode = Mode::Idle;
        cpu.exec.since = now;
        self.trace_mode(c, now);
        self.smt_changed(c, false);
        Exit::Left
    }

    fn resume_user(&mut self, c: usize, t: TaskId) {
        self.sched_finish(c, false);
        let now = self.cpus[c].exec.cursor.max(self.now);
        let rate = self.user_rate(c);
        let cpu = &mut self.cpus[c];
        cpu.exec.mode = Mode::User;
        cpu.exec.since = now;
        cpu.exec.ustart = now;
        cpu.exec.rate = rate;
        cpu.exec.burst_gen = cpu.exec.burst_gen.wrapping_add(1);
        let task = &mut self.tasks[t as usize];
        if let Some(w) = task.woken_at.take() {
            self.metrics.wakeup_latency.record(now - w); // wakeup to running in user space
        }
        task.run_end = now + locality::wall_for(task.remaining, rate);
        self.q
            .push(task.run_end, Ev::BurstEnd(c as u32, cpu.exec.burst_gen));
        self.trace_mode(c, now);
    }
}
