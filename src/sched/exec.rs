//! The kernel-job executor: CPU modes (idle, user, kernel), entering the kernel, the job queue and
//! its cursor, `must_wait` (shared-line accesses in arrival order), `kernel_exit`, and the two doors
//! through which kernel code spends time: `kcharge` (pure compute) and `kaccess` (a shared line).

use super::*;
use crate::coherence::{Access, LineId, Op, StoreBuffer};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    Idle,
    User,
    Kernel,
}

/// What kernel_exit decided.
pub(super) enum Exit {
    /// The CPU left the kernel (to user space or idle).
    Left,
    /// State changed (a switch, a script step): look at the job queue again.
    Again,
    /// This job runs next (the queue is empty, so it is what a queued job would be).
    Run(Job),
}

/// A kernel load or atomic in flight to its line's serialization point (`coherence/home.rs`).
#[derive(Clone, Copy, Debug)]
struct HomeRequest {
    line: LineId,
    op: Op,
    field: usize,
    sym: Sym,
    issue: u64,
    leg: u64,
    /// How far its wait has been charged (`flush_accounting` charges it up to now).
    charged_to: u64,
}

impl HomeRequest {
    fn arrival(&self) -> u64 {
        self.issue + self.leg
    }
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
    /// This CPU's store buffer (`coherence/store_buffer.rs`: FIFO, bounded; a locked instruction
    /// waits until it has drained), and the function of its last store (charged for a drain at
    /// kernel exit).
    sb: StoreBuffer,
    pub(super) sb_sym: Sym,
    /// This kernel stay took an interrupt: it leaves through IRET, which drains the store buffer
    /// (SYSRET does not: `kernel_exit`).
    pub(super) interrupted: bool,
    /// A load or locked RMW whose request is on its way to the line's serialization point: the
    /// CPU waits for it (`Ev::Home`), and requests are served in their order of arrival there.
    request: Option<HomeRequest>,
    /// Compute the step did after issuing `request`: charged and traced after it is served.
    after_request: Vec<(Sym, u64)>,
    pub(super) burst_gen: u32,
    pub(super) cont_gen: u32,
    /// In User mode: when the task's `remaining` work was last brought up to date, and the rate
    /// (per mille) it progresses at since then (`locality.rs`: SMT co-run).
    pub(super) ustart: u64,
    pub(super) rate: u32,
}

impl ExecState {
    /// While a load or atomic is in flight: how far this CPU's time is charged.
    pub(super) fn charged_until(&self) -> Option<u64> {
        self.request.map(|r| r.charged_to)
    }

    /// The load or atomic in flight, for error messages: (issue, leg).
    pub(super) fn request_debug(&self) -> Option<(u64, u64)> {
        self.request.map(|r| (r.issue, r.leg))
    }

    /// `sb_entries`: the store buffer's entries (the machine's core).
    pub(super) fn new(sb_entries: u32) -> Self {
        ExecState {
            mode: Mode::Idle,
            since: 0,
            jobs: VecDeque::new(),
            cursor: 0,
            waiting: false,
            sb: StoreBuffer::new(sb_entries),
            sb_sym: Sym::SchedTick,
            interrupted: false,
            request: None,
            after_request: Vec::new(),
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
                Mode::Kernel => {
                    // the wait of a load or atomic in flight, so far
                    if let Some(r) = &mut cpu.exec.request {
                        let dt = self.now.saturating_sub(r.charged_to);
                        r.charged_to += dt;
                        let sym = r.sym;
                        self.metrics.charge(c, sym, dt);
                        self.metrics.stall(c, dt);
                    }
                    continue;
                }
            }
            cpu.exec.since = self.now.max(cpu.exec.since);
        }
    }

    pub(super) fn kcharge(&mut self, c: usize, sym: Sym, ns: u64) {
        // kernel compute, like user work, runs at the SMT share while a sibling is busy
        let ns = locality::wall_for(ns, self.smt_rate(c));
        if self.cpus[c].exec.request.is_some() {
            // it follows the access in flight
            self.cpus[c].exec.after_request.push((sym, ns));
            return;
        }
        self.metrics.charge(c, sym, ns);
        self.trace_charge(c, sym, self.cpus[c].exec.cursor, ns);
        self.cpus[c].exec.cursor += ns;
    }

    /// A shared-line access by kernel code on CPU `c` at `now` (its cursor must be now). The CPU
    /// goes on when it is served: a load or atomic that misses travels to the line's serialization
    /// point first and is served there in arrival order (`Ev::Home`, ties by CPU number) unless
    /// no other event can come before it arrives; a store retires into the store buffer.
    pub(super) fn kaccess(&mut self, c: usize, line: LineId, op: Op, field: usize, sym: Sym) {
        debug_assert!(self.cpus[c].exec.cursor <= self.now);
        debug_assert!(
            self.cpus[c].exec.request.is_none(),
            "CPU {c}: a request in flight"
        );
        let issue = self.now;
        if op == Op::Store {
            self.kstore(c, line, field, sym);
            return;
        }
        let leg = self.lines.request_leg(&self.topo, line, c, op, issue);
        let arrival = issue + leg;
        if leg == 0 || (self.run_depth == 1 && self.q.peek_time().is_none_or(|t| arrival < t)) {
            let a = self.lines.serve(&self.topo, line, c, op, field, issue, leg);
            self.finish_access(c, line, op, sym, issue, issue, a);
            return;
        }
        let exec = &mut self.cpus[c].exec;
        // (work already costed past now, a store-buffer drain, is charged up to the cursor)
        let charged_to = exec.cursor.max(issue);
        exec.request = Some(HomeRequest {
            line,
            op,
            field,
            sym,
            issue,
            leg,
            charged_to,
        });
        exec.cursor = arrival;
        self.q.push(arrival, Ev::Home(c as u32));
    }

    /// A store by kernel code on `c` (see `kaccess`); returns when its value becomes visible. It
    /// retires into the store buffer (a full one stalls the CPU until its oldest store commits: a
    /// store-buffer wait), and its line is requested once the store before it has committed.
    pub(super) fn kstore(&mut self, c: usize, line: LineId, field: usize, sym: Sym) -> u64 {
        debug_assert!(self.cpus[c].exec.cursor <= self.now);
        let issue = self.now;
        let entered = self.cpus[c].exec.sb.entry_at(issue);
        if entered > issue {
            self.metrics.charge(c, sym, entered - issue);
            self.metrics.stall(c, entered - issue);
            self.trace_wait(c, sym, None, issue, entered);
        }
        let request = self.cpus[c].exec.sb.request_at(entered);
        let a = self
            .lines
            .access(&self.topo, line, c, Op::Store, field, request);
        // the CPU goes on once the store has its entry, whenever its line comes
        let a = Access {
            done: entered + a.done - request,
            ..a
        };
        self.finish_access(c, line, Op::Store, sym, entered, entered, a);
        a.visible
    }

    /// A store by `c` at now from code that prices its own time rather than advancing the job
    /// cursor (the `sd_llc_shared` hints): it retires into the store buffer
    /// as `kstore`'s does, and commits in program order. Returns the wait for an entry (a full
    /// buffer stalls the CPU), for the caller to charge.
    pub(super) fn buffered_store(&mut self, c: usize, line: LineId, field: usize, sym: Sym) -> u64 {
        let issue = self.now;
        let sb = &mut self.cpus[c].exec.sb;
        let entered = sb.entry_at(issue);
        let request = sb.request_at(entered);
        let a = self
            .lines
            .access(&self.topo, line, c, Op::Store, field, request);
        let exec = &mut self.cpus[c].exec;
        exec.sb.push(a.visible);
        exec.sb_sym = sym;
        entered - issue
    }

    /// When a locked instruction of `c` issued at `t` can leave: once its store buffer has
    /// drained (for code that prices its own time; job steps call `drain_store_buffer`).
    pub(super) fn locked_issue_at(&self, c: usize, t: u64) -> u64 {
        t.max(self.cpus[c].exec.sb.drained_at())
    }

    /// Charges an access issued at `issue` and served as `a`: the CPU stalls until `a.done` (its
    /// wait is charged from `charged_to`).
    #[allow(clippy::too_many_arguments)]
    fn finish_access(
        &mut self,
        c: usize,
        line: LineId,
        op: Op,
        sym: Sym,
        issue: u64,
        charged_to: u64,
        a: Access,
    ) {
        let stall = a.done.saturating_sub(charged_to);
        self.metrics.charge(c, sym, stall);
        self.metrics.stall(c, stall);
        self.trace_wait(c, sym, Some(line), issue, a.done);
        let exec = &mut self.cpus[c].exec;
        exec.cursor = a.done;
        if op == Op::Store {
            exec.sb.push(a.visible);
            exec.sb_sym = sym;
        }
    }

    /// The requests of `cpus` (in flight, `Ev::Home`) arrive now, at their lines' serialization
    /// points: served in CPU-number order, each CPU then goes on with its kernel work.
    pub(super) fn on_home_arrivals(&mut self, cpus: &mut Vec<u32>) {
        cpus.sort_unstable();
        cpus.retain(|&c| self.serve_request(c as usize));
        for (i, &c) in cpus.iter().enumerate() {
            self.run_in_batch(i + 1 == cpus.len(), |e| e.run_cpu(c as usize));
        }
    }

    /// Runs `f` for one of a batch of events taken together at now: all but the last run as if
    /// reached from another CPU's work, so that none moves the clock past the others (the
    /// lookahead of `must_wait` cannot see events already taken from the queue).
    pub(super) fn run_in_batch(&mut self, last: bool, f: impl FnOnce(&mut Self)) {
        if !last {
            self.run_depth += 1;
        }
        f(self);
        if !last {
            self.run_depth -= 1;
        }
    }

    /// Serves `c`'s request in flight, if any (its arrival is now); the CPU's cursor moves past it.
    fn serve_request(&mut self, c: usize) -> bool {
        // (a test's hand may have served it already: settle_request)
        let Some(r) = self.cpus[c]
            .exec
            .request
            .filter(|r| r.arrival() == self.now)
        else {
            return false;
        };
        self.cpus[c].exec.request = None;
        let a = self
            .lines
            .serve(&self.topo, r.line, c, r.op, r.field, r.issue, r.leg);
        self.finish_access(c, r.line, r.op, r.sym, r.issue, r.charged_to, a);
        // (by index, and cleared after: the buffer is kept for the CPU's next request)
        for k in 0..self.cpus[c].exec.after_request.len() {
            let (sym, ns) = self.cpus[c].exec.after_request[k];
            self.metrics.charge(c, sym, ns);
            self.trace_charge(c, sym, self.cpus[c].exec.cursor, ns);
            self.cpus[c].exec.cursor += ns;
        }
        self.cpus[c].exec.after_request.clear();
        true
    }

    /// Tests that drive a CPU's steps by hand: serve its request in flight at its arrival (what
    /// `Ev::Home` does), so that the next step can run.
    #[cfg(test)]
    pub(super) fn settle_request(&mut self, c: usize) {
        if let Some(r) = self.cpus[c].exec.request {
            self.now = self.now.max(r.arrival());
            let now = self.now;
            self.cpus[c].exec.request.as_mut().unwrap().leg = now - r.issue;
            self.serve_request(c);
        }
    }

    /// A locked instruction drains the store buffer first: before CPU `c` issues an atomic, it
    /// waits (charged to `sym`) until its buffered stores have committed. Call before `must_wait`.
    pub(super) fn drain_store_buffer(&mut self, c: usize, sym: Sym) {
        if self.cpus[c].exec.request.is_some() {
            return; // a step looping on: it drains when it runs again, after the request
        }
        let cursor = self.cpus[c].exec.cursor;
        let wait = self.cpus[c].exec.sb.drained_at().saturating_sub(cursor);
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
        if self.cpus[c].exec.request.is_some() {
            return true; // its Ev::Home resumes it
        }
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
        self.cpus[c].exec.interrupted = true;
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
        self.cpus[c].exec.interrupted = true;
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
            self.cpus[c].exec.interrupted = true;
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
        if self.cpus[c].exec.request.is_some() {
            return; // its request's arrival (Ev::Home) resumes it
        }
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
            let exec = &mut self.cpus[c].exec;
            if exec.request.is_some() {
                // its Ev::Home resumes it
                exec.waiting = false;
                return;
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
            Job::TtwuActivate(t) => {
                self.tasks[t as usize].waking = false;
                // sched_ttwu_pending: ttwu_do_activate(rq, p, p->sched_remote_wakeup ? WF_MIGRATED : 0)
                let wf = if self.tasks[t as usize].sched_remote_wakeup {
                    wakeup::WF_MIGRATED
                } else {
                    0
                };
                self.enqueue(c, t, c, wf);
                None
            }
            Job::Newidle(w) => self.step_newidle(c, w).map(Job::Newidle),
            Job::NetRx(s) => self.step_net_rx(c, s).map(Job::NetRx),
            Job::Syscall(t, s) => self.step_syscall(c, t, s),
            Job::NohzEnter(k) => self.step_nohz(c, k, true).map(Job::NohzEnter),
            Job::NohzExit(k) => self.step_nohz(c, k, false).map(Job::NohzExit),
            Job::NohzKick(k) => self.step_nohz_kick(c, k).map(Job::NohzKick),
        }
    }

    /// All kernel work is done: resume the task, switch, or go idle.
    fn kernel_exit(&mut self, c: usize) -> Exit {
        if self.scx_on() {
            return self.kernel_exit_scx(c);
        }
        // The store buffer drains on the way out through IRET (the return from an interrupt is
        // serializing) or __schedule (its rq lock is a locked instruction), not through SYSRET
        // (the return from a system call is not): SDM vol. 3A "Serializing instructions",
        // arch/x86/include/asm/sync_core.h; MODEL.md §5c. The wait is charged to the function
        // whose store was still waiting for its line.
        let schedules = self.cpus[c].rq.curr.is_none()
            || (self.cpus[c].rq.need_resched && !self.cpus[c].rq.queued.is_empty());
        if std::mem::take(&mut self.cpus[c].exec.interrupted) || schedules {
            let sym = self.cpus[c].exec.sb_sym;
            self.drain_store_buffer(c, sym);
        }
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
            self.update_curr(c, UpdateCurrCaller::PickTaskFair);
            match self.pick_next_task_fair(c, t) {
                rq::Picked::Prev => return Exit::Again,
                rq::Picked::Next => {
                    self.kcharge(c, Sym::Schedule, self.assume.switch_ns);
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
            self.kcharge(c, Sym::Schedule, self.assume.switch_ns);
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

    pub(super) fn resume_user(&mut self, c: usize, t: TaskId) {
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

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tso_tests;
