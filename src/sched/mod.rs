//! The scheduler engine: per-CPU run queues with CFS-like fair sharing, the tick, context switches,
//! NOHZ idle, and kernel work executed as resumable jobs whose shared-memory accesses go through
//! the cache-line model. Balancing lives in `balance.rs`, wakeup placement in `wakeup.rs`,
//! cache-aware scheduling in `cache_aware.rs`.

mod balance;
mod cache_aware;
mod metrics;
mod wakeup;

pub use metrics::{Counter, Metrics, Series, Sym};

use crate::coherence::{Coherence, LineId, Op};
use crate::domains::SchedDomains;
use crate::events::EventQueue;
use crate::patches::Patches;
use crate::sim::SimRng;
use crate::topology::Topology;
use crate::workload::{Step, TaskId, Workload};
use balance::{IlbState, NewidleWalk, Walk};
use cache_aware::{CacheAware, CasJob};
use std::collections::VecDeque;

/// Kernel defaults and cost assumptions (sources in docs/MODEL.md).
pub mod consts {
    /// sysctl_sched_migration_cost: task_hot() window and newidle cost floor.
    pub const MIGRATION_COST_NS: u64 = 500_000;
    /// sysctl_sched_base_slice 0.75 ms × (1 + ilog2(min(ncpus, 8))) = 3 ms on these machines.
    pub const SLICE_NS: u64 = 3_000_000;
    /// CFS wakeup granularity 1 ms × the same factor.
    pub const WAKEUP_GRAN_NS: u64 = 4_000_000;
    /// sched_tick + update_process_times + hrtimer interrupt work (assumption).
    pub const TICK_NS: u64 = 1_000;
    /// __schedule + context switch direct cost (assumption, lmbench lat_ctx order).
    pub const SWITCH_NS: u64 = 1_000;
    /// try_to_wake_up fixed path: ttwu, enqueue, IPI or wakelist (assumption).
    pub const TTWU_NS: u64 = 600;
    /// Per-domain bookkeeping in sched_balance_domains (interval math, next_balance).
    pub const SBD_LEVEL_NS: u64 = 25;
    /// Fixed part of sched_balance_rq (lb_env setup, group walk, decisions).
    pub const SBR_FIXED_NS: u64 = 400;
    /// Independent rq loads in update_sg_lb_stats / refills overlap: memory-level parallelism.
    pub const STATS_MLP: u64 = 4;
    pub const REFILL_MLP: u64 = 8;
    /// sysctl_sched_nr_migrate.
    pub const NR_MIGRATE: usize = 32;
}
use consts::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Idle,
    User,
    Kernel,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TaskState {
    Running,
    Runnable,
    Sleeping,
    Exited,
}

#[derive(Clone, Debug)]
pub(crate) struct Task {
    pub process: u32,
    state: TaskState,
    pub cpu: u32,
    vruntime: u64,
    /// When it last started running or was last accounted (task_hot reads this).
    exec_start: u64,
    /// Remaining CPU of the current burst while not running.
    remaining: u64,
    /// While running: when the burst ends if nothing interrupts it.
    run_end: u64,
    /// Where its working set is (the CPU it last ran on).
    last_ran_cpu: u32,
    pending_wakeups: u32,
    /// Data handed over by a waker: (waker CPU, lines).
    handoff: Option<(u32, u32)>,
    /// Transfer time owed by a task that starts running with no burst left (paid by its next burst).
    pending_extra: u64,
    wakee_flips: u32,
    wakee_flip_decay_ts: u64,
    last_wakee: u32,
    pub sum_exec: u64,
    pub events: u64,
    /// When the last wakeup enqueued it (for the wakeup latency).
    woken_at: Option<u64>,
    /// Cache-aware scheduling: the LLC this task's mm prefers (-1: none).
    pub preferred_llc: i32,
}

#[derive(Clone, Debug)]
pub(crate) struct DomainState {
    last_balance: u64,
    balance_interval: u32,
    nr_balance_failed: u32,
    max_newidle_lb_cost: u64,
    last_decay: u64,
}

pub(crate) enum Job {
    Compute(Sym, u64),
    Tick,
    // The walks are inline (a walk starts at most every idle entry: no allocation per statement);
    // the rare ILB pass with its CPU list is boxed so the enum stays small.
    Balance(Walk),
    Ilb(Box<IlbState>),
    Newidle(NewidleWalk),
    NohzEnter(u8),
    NohzExit(u8),
    CacheAware(CasJob),
}

pub(crate) struct Cpu {
    mode: Mode,
    since: u64,
    pub curr: Option<TaskId>,
    pub rq: Vec<TaskId>,
    need_resched: bool,
    /// A job is waiting for time to reach the cursor.
    waiting: bool,
    burst_gen: u32,
    cont_gen: u32,
    jobs: VecDeque<Job>,
    cursor: u64,
    picked_at: u64,
    min_vruntime: u64,
    // balancing
    pub next_balance: u64,
    idle_entered: bool,
    newidle_done: bool,
    idle_stamp: u64,
    pub avg_idle: u64,
    /// The cpuidle governor's predicted idle duration (EWMA of idle periods), ns.
    pred_idle: u64,
    pub max_idle_balance_cost: u64,
    tick_stopped: bool,
    tick_gen: u32,
    in_nohz_mask: bool,
    tick_offset: u64,
    /// Utilization estimate, 0..1024 (an integer PELT-like average updated each tick).
    pub util: u32,
    busy_since_tick: u64,
    last_util_update: u64,
    pub doms: Vec<DomainState>,
}

impl Cpu {
    pub fn nr_running(&self) -> usize {
        self.rq.len() + usize::from(self.curr.is_some())
    }
    pub fn is_idle(&self) -> bool {
        self.curr.is_none() && self.rq.is_empty()
    }
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

#[derive(Clone, Copy, Debug)]
enum Ev {
    Tick(u32, u32),
    BurstEnd(u32, u32),
    Continue(u32, u32),
    Wake(TaskId),
    Sample,
}

pub struct Engine {
    pub topo: Topology,
    pub sd: SchedDomains,
    pub patches: Patches,
    pub hz: u32,
    pub tick_ns: u64,
    /// max_load_balance_interval = HZ × nr_cpus / 10 (jiffies).
    max_load_balance_interval: u64,
    pub lines: Coherence,
    line_sbr: LineId,
    line_nohz: LineId,
    pub(crate) cpus: Vec<Cpu>,
    pub(crate) tasks: Vec<Task>,
    q: EventQueue<Ev>,
    rng: SimRng,
    pub now: u64,
    workload: Box<dyn Workload>,
    pub metrics: Metrics,
    /// The global `sched_balance_running` flag (its cache line is `line_sbr`).
    sbr_flag: bool,
    nohz_next_balance: u64,
    nohz_idle: Vec<bool>,
    nr_overloaded: usize,
    /// Per LLC: SIS_UTIL `nr_idle_scan`, `has_idle_cores`.
    llc_nr_idle_scan: Vec<u32>,
    llc_has_idle_cores: Vec<bool>,
    llc_list: Vec<Vec<u32>>,
    /// Each CPU's index in its LLC's `llc_list` (where select_idle_cpu starts its scan).
    llc_pos: Vec<u32>,
    cas: Option<CacheAware>,
    ws_lines: u64,
    pub events: u64,
    /// Nesting of run_cpu (a CPU's work can start another CPU's).
    run_depth: u32,
}

impl Engine {
    pub fn new(
        topo: Topology,
        patches: Patches,
        hz: u32,
        seed: u64,
        workload: Box<dyn Workload>,
        sample_ns: u64,
    ) -> Engine {
        let sd = SchedDomains::build(&topo, patches.snc3_distance_fix);
        let n = topo.nr_cpus();
        let tick_ns = 1_000_000_000 / hz as u64;
        let mut lines = Coherence::new(&topo);
        let line_sbr = lines.add_line("sched_balance_running", &[(0, "sched_balance_running")]);
        let line_nohz = lines.add_line(
            "nohz",
            &[
                (0, "nohz.idle_cpus_mask"),
                (8, "nohz.nr_cpus"),
                (16, "nohz.next_balance"),
            ],
        );
        let cpus = (0..n)
            .map(|c| Cpu {
                mode: Mode::Idle,
                since: 0,
                curr: None,
                rq: Vec::new(),
                need_resched: false,
                waiting: false,
                burst_gen: 0,
                cont_gen: 0,
                jobs: VecDeque::new(),
                cursor: 0,
                picked_at: 0,
                min_vruntime: 0,
                next_balance: 0,
                // not yet through the idle path: the first tick takes it (and may stop the tick)
                idle_entered: false,
                newidle_done: false,
                idle_stamp: 0,
                avg_idle: 2 * MIGRATION_COST_NS,
                // no idle history yet: one tick, so a CPU that never runs stops its tick at its
                // first idle entry and a busy one learns its short idles after one
                pred_idle: tick_ns,
                max_idle_balance_cost: MIGRATION_COST_NS,
                tick_stopped: false,
                tick_gen: 0,
                in_nohz_mask: false,
                // skew_tick=1: offset = (TICK_NSEC / 2) / num_possible_cpus() * cpu
                tick_offset: if patches.skew_tick {
                    tick_ns / 2 / n as u64 * c as u64
                } else {
                    0
                },
                util: 0,
                busy_since_tick: 0,
                last_util_update: 0,
                doms: sd
                    .of(c)
                    .map(|d| DomainState {
                        last_balance: 0,
                        balance_interval: d.min_interval,
                        nr_balance_failed: 0,
                        max_newidle_lb_cost: 0,
                        last_decay: 0,
                    })
                    .collect(),
            })
            .collect();
        let tasks: Vec<Task> = workload
            .tasks()
            .iter()
            .enumerate()
            .map(|(i, s)| Task {
                process: s.process,
                state: TaskState::Runnable,
                cpu: (i % n) as u32,
                vruntime: 0,
                exec_start: 0,
                remaining: 0,
                run_end: 0,
                last_ran_cpu: (i % n) as u32,
                pending_wakeups: 0,
                handoff: None,
                pending_extra: 0,
                wakee_flips: 0,
                wakee_flip_decay_ts: 0,
                last_wakee: u32::MAX,
                sum_exec: 0,
                events: 0,
                preferred_llc: -1,
                woken_at: None,
            })
            .collect();
        let nr_llcs = topo.nr_llcs;
        let llc_scan: Vec<u32> = (0..nr_llcs)
            .map(|l| topo.llc_cpus[l].weight() as u32)
            .collect();
        let ws_lines = workload.ws_lines() as u64;
        let llc_list: Vec<Vec<u32>> = (0..nr_llcs)
            .map(|l| topo.llc_cpus[l].iter().map(|c| c as u32).collect())
            .collect();
        let mut llc_pos = vec![0u32; n];
        for list in &llc_list {
            for (i, &c) in list.iter().enumerate() {
                llc_pos[c as usize] = i as u32;
            }
        }
        let mut e = Engine {
            sd,
            patches,
            hz,
            tick_ns,
            max_load_balance_interval: (hz as u64 * n as u64 / 10).max(1),
            lines,
            line_sbr,
            line_nohz,
            cpus,
            tasks,
            q: EventQueue::default(),
            rng: SimRng::new(seed),
            now: 0,
            metrics: Metrics::new(n, sample_ns),
            workload,
            sbr_flag: false,
            nohz_next_balance: 0,
            nohz_idle: vec![false; n],
            nr_overloaded: 0,
            llc_nr_idle_scan: llc_scan,
            llc_has_idle_cores: vec![true; nr_llcs],
            cas: None,
            llc_list,
            llc_pos,
            ws_lines,
            events: 0,
            run_depth: 0,
            topo,
        };
        e.init_cache_aware();
        for t in 0..e.tasks.len() {
            let c = e.tasks[t].cpu as usize;
            let before = e.cpus[c].nr_running();
            e.cpus[c].rq.push(t as TaskId);
            e.update_overload(c, before);
        }
        for c in 0..n {
            let first = e.cpus[c].tick_offset + e.tick_ns;
            e.q.push(first, Ev::Tick(c as u32, 0));
            if !e.cpus[c].rq.is_empty() {
                e.resched_cpu(c);
            }
        }
        e.q.push(sample_ns, Ev::Sample);
        e
    }

    pub fn jiffies(&self) -> u64 {
        self.now / self.tick_ns
    }

    /// ms → jiffies as msecs_to_jiffies rounds (up).
    pub fn ms_to_jiffies(&self, ms: u64) -> u64 {
        (ms * self.hz as u64).div_ceil(1000)
    }

    pub fn nr_tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Runs events up to `until` (ns) or until `max_events` have been handled; true when `until` is reached.
    pub fn run_until(&mut self, until: u64, max_events: u64) -> bool {
        let mut handled = 0;
        while handled < max_events {
            match self.q.peek_time() {
                Some(t) if t <= until => {}
                _ => {
                    self.now = self.now.max(until);
                    return true;
                }
            }
            let Some((t, ev)) = self.q.pop() else {
                return true;
            };
            self.now = t;
            self.events += 1;
            handled += 1;
            self.dispatch(ev);
        }
        false
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Tick(c, g) => self.on_tick(c as usize, g),
            Ev::BurstEnd(c, g) => {
                if self.cpus[c as usize].burst_gen == g && self.cpus[c as usize].mode == Mode::User
                {
                    self.on_burst_end(c as usize);
                }
            }
            Ev::Continue(c, g) => {
                if self.cpus[c as usize].cont_gen == g {
                    self.run_cpu(c as usize);
                }
            }
            Ev::Wake(t) => {
                let cpu = self.tasks[t as usize].cpu as usize;
                self.try_to_wake_up(t, cpu, None);
            }
            Ev::Sample => {
                self.flush_accounting();
                self.metrics.sample(self.now, &self.lines);
                self.q.push(self.now + self.metrics.sample_ns, Ev::Sample);
            }
        }
    }

    // ---- accounting -------------------------------------------------------------------------

    /// Charges the open Idle/User interval of every CPU up to now (for samples and the report).
    pub fn flush_accounting(&mut self) {
        for c in 0..self.cpus.len() {
            let cpu = &mut self.cpus[c];
            let dt = self.now.saturating_sub(cpu.since);
            match cpu.mode {
                Mode::Idle => self.metrics.charge(c, Sym::Idle, dt),
                Mode::User => {
                    self.metrics.charge(c, Sym::User, dt);
                    cpu.busy_since_tick += dt;
                    if let Some(t) = cpu.curr {
                        self.tasks[t as usize].sum_exec += dt;
                    }
                }
                Mode::Kernel => continue,
            }
            cpu.since = self.now.max(cpu.since);
        }
    }

    fn kcharge(&mut self, c: usize, sym: Sym, ns: u64) {
        self.metrics.charge(c, sym, ns);
        self.cpus[c].cursor += ns;
        self.cpus[c].busy_since_tick += ns;
    }

    /// A shared-line access by kernel code on CPU `c` at `now` (its cursor must be now).
    fn kaccess(&mut self, c: usize, line: LineId, op: Op, field: usize, sym: Sym) -> u64 {
        debug_assert!(self.cpus[c].cursor <= self.now);
        let a = self.lines.access(&self.topo, line, c, op, field, self.now);
        let stall = a.done - self.now;
        self.metrics.charge(c, sym, stall);
        self.metrics.stall(c, stall);
        self.cpus[c].busy_since_tick += stall;
        self.cpus[c].cursor = a.done;
        a.done
    }

    // ---- modes and the kernel-job executor -----------------------------------------------------

    /// Leaves Idle/User for kernel work. A CPU whose last kernel work ends in the future (`since` >
    /// now) starts the new work when that ends.
    fn enter_kernel(&mut self, c: usize) {
        let now = self.now;
        let cpu = &mut self.cpus[c];
        let t = now.max(cpu.since);
        let dt = t - cpu.since;
        match cpu.mode {
            Mode::Kernel => return,
            Mode::Idle => self.metrics.charge(c, Sym::Idle, dt),
            Mode::User => {
                self.metrics.charge(c, Sym::User, dt);
                cpu.busy_since_tick += dt;
                if let Some(task) = cpu.curr {
                    let task = &mut self.tasks[task as usize];
                    task.sum_exec += dt;
                    task.remaining = task.run_end.saturating_sub(t);
                }
                cpu.burst_gen = cpu.burst_gen.wrapping_add(1);
            }
        }
        cpu.mode = Mode::Kernel;
        cpu.cursor = t;
        cpu.since = t;
    }

    /// True when a job on `c` must wait for simulated time to reach its cursor before touching a
    /// shared line. If no other event can come first, time simply advances (conservative lookahead).
    fn must_wait(&mut self, c: usize) -> bool {
        let cursor = self.cpus[c].cursor;
        if cursor <= self.now {
            return false;
        }
        // Only the outermost CPU of an event may advance time: a CPU reached from another CPU's
        // work (an IPI, a wakeup) must not move the clock under the CPU that is running it.
        if self.run_depth == 1 && self.q.peek_time().is_none_or(|t| cursor < t) {
            self.now = cursor;
            return false;
        }
        self.cpus[c].waiting = true;
        true
    }

    /// Queues kernel work on `c` (an interrupt, an IPI, a softirq); it starts at now.
    fn push_job(&mut self, c: usize, job: Job) {
        self.cpus[c].jobs.push_back(job);
        if self.cpus[c].mode != Mode::Kernel {
            self.enter_kernel(c);
            self.run_cpu(c);
        }
    }

    /// Something became runnable on `c` (a resched IPI): a CPU outside the kernel enters it and
    /// re-evaluates at kernel exit; one in the kernel does so at its own exit (a queued no-op job
    /// would change nothing, so none is queued).
    fn resched_cpu(&mut self, c: usize) {
        if self.cpus[c].mode != Mode::Kernel {
            self.enter_kernel(c);
            self.run_cpu(c);
        }
    }

    fn continue_at(&mut self, c: usize, t: u64) {
        let cpu = &mut self.cpus[c];
        cpu.cont_gen = cpu.cont_gen.wrapping_add(1);
        self.q.push(t, Ev::Continue(c as u32, cpu.cont_gen));
    }

    fn run_cpu(&mut self, c: usize) {
        self.run_depth += 1;
        self.run_cpu_inner(c);
        self.run_depth -= 1;
    }

    fn run_cpu_inner(&mut self, c: usize) {
        loop {
            let job = match self.cpus[c].jobs.pop_front() {
                Some(job) => job,
                None => match self.kernel_exit(c) {
                    Exit::Left => return,
                    Exit::Again => continue,
                    Exit::Run(job) => job,
                },
            };
            if let Some(job) = self.step(c, job) {
                self.cpus[c].jobs.push_front(job);
            }
            if std::mem::take(&mut self.cpus[c].waiting) {
                let t = self.cpus[c].cursor;
                self.continue_at(c, t);
                return;
            }
        }
    }

    /// Executes one step of a job; returns it if it is not finished.
    fn step(&mut self, c: usize, job: Job) -> Option<Job> {
        match job {
            Job::Compute(sym, ns) => {
                self.kcharge(c, sym, ns);
                None
            }
            Job::CacheAware(j) => self.step_cache_aware(c, j).map(Job::CacheAware),
            Job::Tick => {
                if self.must_wait(c) {
                    return Some(Job::Tick);
                }
                self.sched_tick(c);
                None
            }
            Job::Balance(w) => self.step_balance(c, w).map(Job::Balance),
            Job::Ilb(s) => self.step_ilb(c, s).map(Job::Ilb),
            Job::Newidle(w) => self.step_newidle(c, w).map(Job::Newidle),
            Job::NohzEnter(k) => self.step_nohz(c, k, true).map(Job::NohzEnter),
            Job::NohzExit(k) => self.step_nohz(c, k, false).map(Job::NohzExit),
        }
    }

    /// nohz_balance_enter_idle / nohz_balance_exit_idle: cpumask bit and nr_cpus, both atomics.
    fn step_nohz(&mut self, c: usize, k: u8, enter: bool) -> Option<u8> {
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

    /// All kernel work is done: resume the task, switch, or go idle.
    fn kernel_exit(&mut self, c: usize) -> Exit {
        let now = self.cpus[c].cursor.max(self.now);
        if let Some(t) = self.cpus[c].curr {
            if !self.cpus[c].need_resched || self.cpus[c].rq.is_empty() {
                self.cpus[c].need_resched = false;
                if self.tasks[t as usize].remaining == 0 {
                    // Back from a sleep with no burst pending: its next step runs here, in the
                    // kernel exit path, instead of through a zero-length burst.
                    self.advance_script(c, t, now);
                    return Exit::Again;
                }
                self.resume_user(c, t);
                return Exit::Left;
            }
            // Preempted: back into the queue.
            self.put_prev(c, t);
        }
        self.cpus[c].need_resched = false;
        if let Some(next) = self.pick_next(c) {
            self.set_curr(c, next);
            // the switch is the next work of this CPU (a job queued at the front would run now)
            self.kcharge(c, Sym::Schedule, SWITCH_NS);
            return Exit::Again;
        }
        // Nothing to run.
        let cpu = &mut self.cpus[c];
        if !cpu.idle_entered && !cpu.newidle_done {
            cpu.newidle_done = true;
            return Exit::Run(Job::Newidle(NewidleWalk::new(self, c)));
        }
        if !cpu.idle_entered {
            cpu.idle_entered = true;
            cpu.idle_stamp = now;
            self.idle_core_update(c);
            // cpuidle governor: stop the tick only when the predicted idle is longer than a tick.
            if self.cpus[c].pred_idle >= self.tick_ns && !self.cpus[c].tick_stopped {
                self.cpus[c].tick_stopped = true;
                return Exit::Run(Job::NohzEnter(0));
            }
        }
        let cpu = &mut self.cpus[c];
        cpu.mode = Mode::Idle;
        cpu.since = now;
        Exit::Left
    }

    fn resume_user(&mut self, c: usize, t: TaskId) {
        let now = self.cpus[c].cursor.max(self.now);
        let cpu = &mut self.cpus[c];
        cpu.mode = Mode::User;
        cpu.since = now;
        cpu.burst_gen = cpu.burst_gen.wrapping_add(1);
        let task = &mut self.tasks[t as usize];
        if let Some(w) = task.woken_at.take() {
            self.metrics.wakeup_latency.record(now - w); // wakeup to running in user space
        }
        task.run_end = now + task.remaining;
        self.q
            .push(task.run_end, Ev::BurstEnd(c as u32, cpu.burst_gen));
    }

    // ---- run queue -------------------------------------------------------------------------

    fn update_overload(&mut self, c: usize, before: usize) {
        let after = self.cpus[c].nr_running();
        match (before >= 2, after >= 2) {
            (false, true) => self.nr_overloaded += 1,
            (true, false) => self.nr_overloaded -= 1,
            _ => {}
        }
    }

    fn pick_next(&mut self, c: usize) -> Option<TaskId> {
        let cpu = &mut self.cpus[c];
        let (i, _) = cpu
            .rq
            .iter()
            .enumerate()
            .min_by_key(|&(_, &t)| (self.tasks[t as usize].vruntime, t))?;
        Some(cpu.rq.swap_remove(i))
    }

    /// The task starts running on `c`: working-set refill and handed-over data cost user time.
    fn set_curr(&mut self, c: usize, t: TaskId) {
        let now = self.cpus[c].cursor.max(self.now);
        let ws = self.ws_lines;
        let from = self.tasks[t as usize].last_ran_cpu as usize;
        let mut extra = 0;
        if from != c && self.topo.cpus[from].core != self.topo.cpus[c].core {
            extra += ws * self.topo.xfer_ns(from, c) as u64 / REFILL_MLP;
        }
        if let Some((w, lines)) = self.tasks[t as usize].handoff.take() {
            extra += lines as u64 * self.topo.xfer_ns(w as usize, c) as u64;
        }
        let cpu = &mut self.cpus[c];
        if cpu.idle_entered {
            cpu.idle_entered = false;
            // update_rq_avg_idle(): average, then clamp to twice the max idle balance cost
            let delta = now - cpu.idle_stamp;
            let avg = ((cpu.avg_idle as i64) + (delta as i64 - cpu.avg_idle as i64) / 8) as u64;
            cpu.avg_idle = avg.min(2 * cpu.max_idle_balance_cost);
            // the cpuidle governor's own prediction: recent idle durations, not clamped
            cpu.pred_idle =
                ((cpu.pred_idle as i64) + (delta as i64 - cpu.pred_idle as i64) / 8) as u64;
            if cpu.tick_stopped {
                cpu.tick_stopped = false;
                cpu.tick_gen = cpu.tick_gen.wrapping_add(1);
                let next = (now / self.tick_ns + 1) * self.tick_ns + cpu.tick_offset;
                self.q.push(next, Ev::Tick(c as u32, cpu.tick_gen));
            }
        }
        cpu.newidle_done = false;
        cpu.curr = Some(t);
        cpu.picked_at = now;
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Running;
        task.cpu = c as u32;
        task.last_ran_cpu = c as u32;
        task.exec_start = now;
        if task.remaining > 0 {
            task.remaining += extra;
        } else {
            task.pending_extra += extra;
        }

        self.metrics.charge_stat(c, extra);
    }

    fn put_prev(&mut self, c: usize, t: TaskId) {
        self.update_curr(c);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        let cpu = &mut self.cpus[c];
        cpu.curr = None;
        cpu.rq.push(t);
    }

    fn update_curr(&mut self, c: usize) {
        self.update_curr_by(c, c);
    }

    /// update_curr() of `c`'s running task, executed by CPU `exec`: runtime since the task was
    /// last accounted advances its vruntime (and, with cache-aware scheduling, its mm occupancy).
    fn update_curr_by(&mut self, c: usize, exec: usize) {
        let now = self.now;
        let Some(t) = self.cpus[c].curr else { return };
        let task = &mut self.tasks[t as usize];
        let delta = now.saturating_sub(task.exec_start);
        task.vruntime += delta;
        task.exec_start = now;
        let cpu = &mut self.cpus[c];
        let min_v = cpu
            .rq
            .iter()
            .map(|&q| self.tasks[q as usize].vruntime)
            .min()
            .unwrap_or(u64::MAX)
            .min(self.tasks[t as usize].vruntime);
        cpu.min_vruntime = cpu.min_vruntime.max(min_v);
        if delta > 0 && self.cas.is_some() {
            let mm = self.tasks[t as usize].process;
            self.account_mm_sched(c, exec, t, mm, delta);
        }
    }

    /// Enqueue a woken task on `c`, by CPU `exec` (in the kernel), and decide on preemption.
    fn enqueue(&mut self, c: usize, t: TaskId, exec: usize) {
        // enqueue_entity(): update_curr() of the queue's running task first
        self.update_curr_by(c, exec);
        let before = self.cpus[c].nr_running();
        let min_v = self.cpus[c].min_vruntime;
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.cpu = c as u32;
        // Sleeper placement: no more than half a slice of credit.
        task.vruntime = task.vruntime.max(min_v.saturating_sub(SLICE_NS / 2));
        let v = task.vruntime;
        self.cpus[c].rq.push(t);
        self.update_overload(c, before);
        let cpu = &self.cpus[c];
        if cpu.mode == Mode::Idle {
            self.resched_cpu(c);
        } else if let Some(curr) = cpu.curr
            && v + WAKEUP_GRAN_NS < self.tasks[curr as usize].vruntime
            && !self.cpus[c].need_resched
        {
            self.cpus[c].need_resched = true;
            self.resched_cpu(c);
        }
    }

    fn dequeue_curr(&mut self, c: usize) {
        let before = self.cpus[c].nr_running();
        self.cpus[c].curr = None;
        self.update_overload(c, before);
    }

    // ---- tasks ---------------------------------------------------------------------------

    fn on_burst_end(&mut self, c: usize) {
        let now = self.now;
        let Some(t) = self.cpus[c].curr else { return };
        // The burst is over: the CPU is in the kernel (syscall, wakeups, schedule).
        self.enter_kernel(c);
        self.tasks[t as usize].remaining = 0;
        self.advance_script(c, t, now);
        self.run_cpu(c);
    }

    /// Runs task `t`'s script on CPU `c` (in the kernel) until it has CPU work or blocks.
    fn advance_script(&mut self, c: usize, t: TaskId, now: u64) {
        loop {
            match self.workload.next(t, now, &mut self.rng) {
                Step::Run { ns, shared_lines } => {
                    let mut extra = std::mem::take(&mut self.tasks[t as usize].pending_extra);
                    if shared_lines > 0 {
                        let other = self.random_sibling_thread(t);
                        let from = self.tasks[other as usize].last_ran_cpu as usize;
                        let shared = shared_lines as u64 * self.topo.xfer_ns(from, c) as u64;
                        self.metrics.charge_stat(c, shared);
                        extra += shared;
                    }
                    self.tasks[t as usize].remaining = ns.max(1) + extra;
                    return;
                }
                Step::Complete { latency_ns } => {
                    self.tasks[t as usize].events += 1;
                    self.metrics.complete(latency_ns);
                }
                Step::Wake { task, lines } => self.try_to_wake_up(task, c, Some((t, lines))),
                Step::Sleep { ns } => {
                    self.block(c, t);
                    self.q.push(now + ns, Ev::Wake(t));
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
                Step::Exit => {
                    self.tasks[t as usize].state = TaskState::Exited;
                    self.update_curr(c);
                    self.dequeue_curr(c);
                    return;
                }
            }
        }
    }

    fn block(&mut self, c: usize, t: TaskId) {
        self.update_curr(c);
        self.tasks[t as usize].state = TaskState::Sleeping;
        self.dequeue_curr(c);
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

    // ---- tick ------------------------------------------------------------------------------

    fn on_tick(&mut self, c: usize, tick_gen: u32) {
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
    fn sched_tick(&mut self, c: usize) {
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
            self.cpus[c].jobs.push_back(Job::NohzExit(0));
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
    fn update_util(&mut self, c: usize) {
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

    fn idle_core_update(&mut self, c: usize) {
        let all_idle = self.topo.smt_siblings(c).all(|s| self.cpus[s].is_idle());
        if all_idle {
            let llc = self.topo.cpus[c].llc as usize;
            self.llc_has_idle_cores[llc] = true;
        }
    }

    // ---- report helpers --------------------------------------------------------------------

    /// CPU time each task has received.
    pub fn task_runtime(&self) -> Vec<u64> {
        self.tasks.iter().map(|t| t.sum_exec).collect()
    }

    /// All time charged to CPU `c` (every symbol, idle included).
    pub fn cpu_time_ns(&self, c: usize) -> u64 {
        self.metrics.cpu_sym[c].iter().sum()
    }

    pub fn task_events(&self) -> Vec<u64> {
        self.tasks.iter().map(|t| t.events).collect()
    }

    pub fn processes(&self) -> &[String] {
        self.workload.processes()
    }

    /// Checks structural invariants; returns a description of the first violation.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut seen = vec![0u32; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            for &t in cpu.rq.iter().chain(cpu.curr.iter()) {
                seen[t as usize] += 1;
                if self.tasks[t as usize].cpu as usize != c {
                    return Err(format!(
                        "task {t} queued on CPU {c} but says CPU {}",
                        self.tasks[t as usize].cpu
                    ));
                }
            }
            if let Some(t) = cpu.curr
                && self.tasks[t as usize].state != TaskState::Running
            {
                return Err(format!(
                    "CPU {c} runs task {t} in state {:?}",
                    self.tasks[t as usize].state
                ));
            }
        }
        for (t, task) in self.tasks.iter().enumerate() {
            let queued = matches!(task.state, TaskState::Running | TaskState::Runnable);
            if queued != (seen[t] == 1) || seen[t] > 1 {
                return Err(format!(
                    "task {t} in state {:?} is on {} run queues",
                    task.state, seen[t]
                ));
            }
        }
        let overloaded = self.cpus.iter().filter(|c| c.nr_running() >= 2).count();
        if overloaded != self.nr_overloaded {
            return Err(format!(
                "overload count {} but {overloaded} CPUs have 2+ tasks",
                self.nr_overloaded
            ));
        }
        Ok(())
    }

    /// CPU time is conserved: every CPU's charged time (all symbols, idle included) equals now plus
    /// the kernel work already costed beyond now. Call after `flush_accounting`.
    pub fn check_cpu_time(&self) -> Result<(), String> {
        for c in 0..self.cpus.len() {
            let (charged, expected) = (self.cpu_time_ns(c), self.now + self.overshoot_ns(c));
            if charged != expected {
                return Err(format!(
                    "CPU {c}: charged {charged} ns, expected {expected} at t={}",
                    self.now
                ));
            }
        }
        Ok(())
    }

    /// Time a CPU has charged beyond now (kernel work already costed past the end of the run).
    pub fn overshoot_ns(&self, c: usize) -> u64 {
        let cpu = &self.cpus[c];
        let end = if cpu.mode == Mode::Kernel {
            cpu.cursor
        } else {
            cpu.since
        };
        end.saturating_sub(self.now)
    }
}
