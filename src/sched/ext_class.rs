//! The `sched_class` seam for sched_ext (kernel/sched/ext.c's `ext_sched_class`, v6.18): when a
//! BPF scheduler is attached without `SCX_OPS_SWITCH_PARTIAL`, every SCHED_NORMAL task is an ext
//! task (`scx_switched_all()`), so the engine's class-dependent call sites branch here instead of
//! to the fair class:
//! - `try_to_wake_up` → `select_task_rq_scx` (ops.select_cpu, or the built-in idle pick);
//! - `enqueue` (ttwu_do_activate) → `enqueue_task_scx` (ops.runnable, ops.enqueue, direct dispatch);
//! - `kernel_exit` (__schedule) → `balance_one` (ops.dispatch), `pick_task_scx`, and when the
//!   task changes `put_prev_task_scx` (ops.stopping, ops.enqueue) + `set_next_task_scx`
//!   (ops.running), or the idle class and `update_idle`;
//! - a task blocking or exiting → `dequeue_task_scx` (ops.stopping, ops.quiescent);
//! - `sched_tick` → `task_tick_scx` (the slice runs down, ops.tick) and the watchdog.
//!
//! The fair class's load balancing does not run while every task is ext (`for_each_active_class`
//! skips fair, so `sched_balance_newidle` is never reached; the periodic and NOHZ balancers would
//! find empty cfs run queues and are not run). When the scheduler exits (`scx_bpf_error`, a fault,
//! the watchdog) every task goes back to the fair class (`scx_disable_workfn`) and the run goes on.
//!
//! The ext core itself (`ext::core`) knows nothing of the engine: it is driven by these calls, and
//! the shared lines it touched (DSQ locks, idle masks) are priced here through the cache-line model.

use super::exec::Exit;
use super::ext::core::{Config, SCX_ENQ_WAKEUP, ScxSched, Where};
use super::ext::dsq::{SCX_DSQ_GLOBAL, SCX_DSQ_LOCAL_CPU_MASK, SCX_DSQ_LOCAL_ON};
use super::ext::idle::CpuTopo;
use super::ext::internal::{SCX_KICK_IDLE, SCX_KICK_PREEMPT, Shared, Touch};
use super::*;
use std::collections::BTreeMap;

/// Nanoseconds (×1000) one BPF instruction costs: a JIT'd program runs about one instruction per
/// cycle; at 2.5 GHz that is 0.4 ns (stated assumption, docs/MODEL.md §sched_ext).
pub const BPF_INSN_PS: u64 = 400;

/// A BPF scheduler to attach: the `.bpf.o` and the `.rodata` options its user space would set
/// before load (name, value; each written in the variable's own size).
#[derive(Clone, Debug, Default)]
pub struct ScxObject {
    pub bytes: Vec<u8>,
    pub options: Vec<(String, u64)>,
}

/// `SCX_OPS_SWITCH_PARTIAL` (ext_internal.h `enum scx_ops_flags`).
const SCX_OPS_SWITCH_PARTIAL: u64 = 8;
/// `SCX_OPS_ALLOW_QUEUED_WAKEUP`.
const SCX_OPS_ALLOW_QUEUED_WAKEUP: u64 = 1 << 5;

/// What the seam cannot run yet, refused by name: a scheduler with `SCX_OPS_SWITCH_PARTIAL` takes
/// only SCHED_EXT tasks, and no workload here sets that policy (it would run nothing).
pub fn check_supported(s: &ScxSched) -> Result<(), String> {
    if s.ops.uint("flags") & SCX_OPS_SWITCH_PARTIAL != 0 {
        return Err(format!(
            "sched_ext_ops.flags of '{}' has SCX_OPS_SWITCH_PARTIAL: only SCHED_EXT tasks would switch to it, and no workload here sets that policy (load it without the partial-switch option)",
            s.k.name
        ));
    }
    Ok(())
}

/// `p->scx.weight` from the load weight (set_task_scx_weight: sched_weight_to_cgroup, 100 for
/// nice 0, 1..10000).
fn scx_weight(load_weight: u32) -> u32 {
    ((load_weight as u64 * 100 + 512) / 1024).clamp(1, 10_000) as u32
}

/// The attached BPF scheduler and the map between engine tasks and the core's.
pub struct ExtClass {
    pub sched: ScxSched,
    /// Engine task → the core's task index.
    idx: Vec<usize>,
    /// The core's task index → engine task.
    tid: Vec<TaskId>,
    /// The scheduler exited and every task is the fair class's again.
    pub switched_back: bool,
    /// Kicks served (`scx_bpf_kick_cpu`), and of those, the ones that sent an IPI.
    pub kicks: u64,
    pub kick_ipis: u64,
    /// When the watchdog looks next.
    next_watchdog: u64,
    /// Each non-local DSQ's line (`scx_dispatch_q`: its lock and list), made when first touched.
    dsq_lines: BTreeMap<u64, LineId>,
    /// The built-in idle mask's line (`idle_masks.cpu`: one cpumask, one line up to 512 CPUs).
    idle_line: LineId,
    /// Each node's idle mask line with `SCX_OPS_BUILTIN_IDLE_PER_NODE` (`scx_idle_node_masks`).
    node_idle_lines: BTreeMap<u32, LineId>,
    /// When the next BPF timer event is queued (None: none queued).
    timer_event_at: Option<u64>,
}

impl Engine {
    /// True while a BPF scheduler runs every task (`scx_switched_all()`).
    pub(super) fn scx_on(&self) -> bool {
        self.scx.as_ref().is_some_and(|x| !x.switched_back)
    }

    /// `scx_allow_ttwu_queue` (ext.c): while a BPF scheduler runs the tasks, a wakeup uses the
    /// target's wake list (TTWU_QUEUE) only if the scheduler set `SCX_OPS_ALLOW_QUEUED_WAKEUP`;
    /// otherwise the waker enqueues under the target's rq lock.
    pub(super) fn scx_allow_ttwu_queue(&self) -> bool {
        !self.scx_on()
            || self
                .scx
                .as_ref()
                .is_some_and(|x| x.sched.ops.uint("flags") & SCX_OPS_ALLOW_QUEUED_WAKEUP != 0)
    }

    /// The attached scheduler, if any (for the report).
    pub fn ext_class(&self) -> Option<&ExtClass> {
        self.scx.as_deref()
    }

    /// `scx_enable` at time 0: ops.init, then every task is initialized (ops.init_task,
    /// ops.enable) and enqueued on the ext class. A failing ops.init leaves the fair class in
    /// charge: returns false then (the caller enqueues the tasks on the fair class). An exit
    /// while the tasks switch hands them to the fair class at once (true: they are enqueued).
    pub(super) fn scx_enable(&mut self, o: &ScxObject) -> Result<bool, String> {
        let n = self.cpus.len() as u32;
        let mut sched = ScxSched::open(&o.bytes, Config { nr_cpus: n }).map_err(|e| e.0)?;
        for (name, v) in &o.options {
            sched.set_option(name, *v)?;
        }
        check_supported(&sched)?;
        sched.set_topology(self.scx_topo());
        sched.k.now_ns = self.now;
        sched.attach();
        let idle_line = self.lines.add_line("idle_masks", &[(0, "cpu")]);
        let mut x = ExtClass {
            dsq_lines: BTreeMap::new(),
            node_idle_lines: BTreeMap::new(),
            timer_event_at: None,
            idle_line,
            sched,
            idx: Vec::with_capacity(self.tasks.len()),
            tid: Vec::with_capacity(self.tasks.len()),
            switched_back: false,
            kicks: 0,
            kick_ipis: 0,
            next_watchdog: 0,
        };
        x.next_watchdog = x.sched.k.timeout_ns / 2;
        if !x.sched.enabled() {
            x.switched_back = true;
            self.scx = Some(Box::new(x));
            return Ok(false);
        }
        for t in 0..self.tasks.len() {
            let task = &self.tasks[t];
            // pids start at 1 (0 is the idle task's)
            let i = x
                .sched
                .add_task(t as i32 + 1, scx_weight(task.se.weight), task.cpu);
            x.idx.push(i);
            x.tid.push(t as TaskId);
        }
        self.scx = Some(Box::new(x));
        for t in 0..self.tasks.len() {
            self.sched_info_enqueue(t as TaskId, 0);
        }
        for t in 0..self.tasks.len() {
            let c = self.tasks[t].cpu as usize;
            self.scx_op(c, None, |s, i| s.enqueue_task(i[t], c as u32, 0));
            if !self.scx_on() {
                // an exit while switching: scx_check_exit put every task on the fair class
                break;
            }
        }
        Ok(true)
    }

    /// Runs one call into the core on behalf of CPU `c`: the clock is set, the lines it touched
    /// are priced and its instructions costed, charged to `sym` (None: returned in `scx_ns` for
    /// the caller to charge, a CPU not yet in the kernel), its kicks served, and an exit it
    /// caused hands every task back to the fair class.
    fn scx_op<R>(
        &mut self,
        c: usize,
        sym: Option<Sym>,
        f: impl FnOnce(&mut ScxSched, &[usize]) -> R,
    ) -> R {
        let (r, ns) = self.scx_op_ns(c, f);
        if let Some(sym) = sym
            && ns > 0
        {
            self.kcharge(c, sym, ns);
        }
        r
    }

    /// `scx_op` that returns the time the call took instead of charging it.
    fn scx_op_ns<R>(&mut self, c: usize, f: impl FnOnce(&mut ScxSched, &[usize]) -> R) -> (R, u64) {
        let x = self.scx.as_mut().expect("an ext class");
        x.sched.k.now_ns = self.now;
        let before = x.sched.k.insns;
        let r = f(&mut x.sched, &x.idx);
        let insns = x.sched.k.insns - before;
        let touched = std::mem::take(&mut x.sched.k.touched);
        let kicks = std::mem::take(&mut x.sched.k.kicks);
        let ns = self.scx_price(c, &touched) + insns * BPF_INSN_PS / 1000;
        self.scx_kicks(c, &kicks);
        self.scx_check_exit();
        self.scx_arm_timer();
        (r, ns)
    }

    /// The machine's layout as the ext core sees it: each CPU's node, LLC id (its first CPU),
    /// LLC size and SMT core.
    fn scx_topo(&self) -> CpuTopo {
        let llc: Vec<u32> = self.topo.cpus.iter().map(|i| i.llc).collect();
        let first = |l: u32| llc.iter().position(|&x| x == l).unwrap_or(0) as u32;
        CpuTopo {
            node: self.topo.cpus.iter().map(|i| i.node).collect(),
            llc_id: llc.iter().map(|&l| first(l)).collect(),
            llc_size: llc
                .iter()
                .map(|&l| llc.iter().filter(|&&x| x == l).count() as u32)
                .collect(),
            core: self.topo.cpus.iter().map(|i| i.core).collect(),
        }
    }

    /// Queues the event of the earliest armed BPF timer (an hrtimer), if none is queued as early.
    fn scx_arm_timer(&mut self) {
        let Some(x) = self.scx.as_mut() else {
            return;
        };
        let Some(at) = x.sched.k.timers.next_expiry() else {
            return;
        };
        if x.timer_event_at.is_some_and(|q| q <= at) {
            return;
        }
        x.timer_event_at = Some(at);
        self.q.push(at.max(self.now), Ev::ScxTimer);
    }

    /// A BPF timer event: the due callbacks run (on CPU 0, whose hrtimer base fires them; their
    /// instructions are counted, not charged to a CPU), and the next is queued.
    pub(super) fn on_scx_timer(&mut self) {
        if !self.scx_on() {
            return;
        }
        let x = self.scx.as_mut().unwrap();
        if x.timer_event_at.is_some_and(|q| q <= self.now) {
            x.timer_event_at = None;
        }
        self.scx_op_ns(0, |s, _| s.fire_timers());
    }

    fn core_idx(&self, t: TaskId) -> usize {
        self.scx.as_ref().expect("an ext class").idx[t as usize]
    }

    fn engine_tid(&self, i: usize) -> TaskId {
        self.scx.as_ref().expect("an ext class").tid[i]
    }

    /// `select_task_rq_scx` for a wakeup of `t` last on `prev` (wake flags `wf`), run by `waker`:
    /// the CPU, and the time the op took (the waker charges it with its try_to_wake_up).
    pub(super) fn select_task_rq_scx(
        &mut self,
        t: TaskId,
        prev: usize,
        waker: usize,
        wf: u32,
    ) -> (usize, u64) {
        let i = self.core_idx(t);
        let (cpu, ns) = self.scx_op_ns(waker, |s, _| {
            s.select_task_rq(i, prev as u32, wf as u64) as usize
        });
        (cpu.min(self.cpus.len() - 1), ns)
    }

    /// `enqueue_task_scx` of a woken task on `c`'s run queue, run by `exec`; then what
    /// `wakeup_preempt` does for it: an idle CPU (whose current is the idle class, below ext) is
    /// rescheduled, a busy one is not (`wakeup_preempt_scx` is empty): the BPF scheduler kicks.
    pub(super) fn enqueue_scx(&mut self, c: usize, t: TaskId, exec: usize) {
        let i = self.core_idx(t);
        let task = &mut self.tasks[t as usize];
        task.state = TaskState::Runnable;
        task.cpu = c as u32;
        self.sched_info_enqueue(t, self.now);
        self.scx_op(exec, Some(Sym::TryToWakeUp), |s, _| {
            s.enqueue_task(i, c as u32, SCX_ENQ_WAKEUP)
        });
        if !self.scx_on() {
            return;
        }
        self.scx_wake_idle(c);
        // a direct dispatch to another CPU's local DSQ wakes that CPU too
        if let Where::Queued(id) = self.scx.as_ref().unwrap().sched.k.tasks[i].wh
            && id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON
        {
            let d = (id & SCX_DSQ_LOCAL_CPU_MASK) as usize;
            self.scx_wake_idle(d);
        }
    }

    fn scx_wake_idle(&mut self, c: usize) {
        if c < self.cpus.len() && self.cpus[c].exec.mode == Mode::Idle {
            self.resched_cpu(c);
        }
    }

    /// `scx_bpf_kick_cpu`'s kicks, served once the op that made them has returned (the kernel
    /// defers them to an irq_work: kick_cpus_irq_workfn). SCX_KICK_IDLE only wakes an idle CPU;
    /// SCX_KICK_PREEMPT zeroes the running task's slice; otherwise the CPU reschedules.
    fn scx_kicks(&mut self, from: usize, kicks: &[(u32, u64)]) {
        for &(cpu, flags) in kicks {
            let c = cpu as usize;
            if c >= self.cpus.len() {
                continue;
            }
            self.scx.as_mut().unwrap().kicks += 1;
            let idle = self.cpus[c].exec.mode == Mode::Idle;
            if flags & SCX_KICK_IDLE != 0 && !idle {
                continue;
            }
            if flags & SCX_KICK_PREEMPT != 0
                && let Some(t) = self.cpus[c].rq.curr
            {
                let i = self.core_idx(t);
                self.scx.as_mut().unwrap().sched.set_slice(i, 0);
            }
            if !idle {
                self.cpus[c].rq.need_resched = true;
            }
            if c != from {
                self.scx.as_mut().unwrap().kick_ipis += 1;
            }
            self.resched_cpu(c);
        }
    }

    /// The scheduler has exited (`scx_disable_workfn`): every task is the fair class's again. A
    /// runnable task not running is enqueued on the fair queue of the CPU it was last given; a
    /// running one stays and its CPU reschedules.
    fn scx_check_exit(&mut self) {
        let Some(x) = self.scx.as_mut() else {
            return;
        };
        if x.switched_back || x.sched.enabled() {
            return;
        }
        x.switched_back = true;
        for t in 0..self.tasks.len() {
            let c = self.tasks[t].cpu as usize;
            if self.tasks[t].state == TaskState::Runnable
                && !self.tasks[t].waking
                && self.cpus[c].rq.curr != Some(t as TaskId)
            {
                self.enqueue_entity(c, t as TaskId, c, rq::Enq::Wakeup);
            }
        }
        for c in 0..self.cpus.len() {
            if !self.cpus[c].is_idle() {
                self.cpus[c].rq.need_resched = true;
                self.resched_cpu(c);
            }
        }
    }

    /// `update_curr_scx`: the running task's slice runs down by what it ran since it was last
    /// accounted; true when it is spent.
    fn scx_update_curr(&mut self, c: usize) -> bool {
        let Some(t) = self.cpus[c].rq.curr else {
            return false;
        };
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        let ran = now.saturating_sub(task.exec_start);
        task.exec_start = now;
        let i = self.core_idx(t);
        self.scx.as_mut().unwrap().sched.charge(i, ran)
    }

    /// `task_tick_scx`: the slice runs down (a spent one reschedules), ops.tick; and the watchdog
    /// (`scx_watchdog_workfn`, every timeout / 2).
    pub(super) fn task_tick_scx(&mut self, c: usize) {
        if self.scx_update_curr(c) {
            self.cpus[c].rq.need_resched = true;
        }
        if let Some(t) = self.cpus[c].rq.curr {
            let i = self.core_idx(t);
            self.scx_op(c, Some(Sym::SchedTick), |s, _| s.tick(i));
        }
        let x = self.scx.as_mut().unwrap();
        if self.now >= x.next_watchdog {
            x.next_watchdog = self.now + x.sched.k.timeout_ns / 2;
            self.scx_op(c, None, |s, _| s.watchdog());
        }
    }

    /// The running task `t` blocks (or exits): `dequeue_task_scx` with SCX_DEQ_SLEEP.
    pub(super) fn dequeue_curr_scx(&mut self, c: usize, t: TaskId, state: TaskState) {
        self.scx_update_curr(c);
        self.tasks[t as usize].state = state;
        self.dequeue_curr(c);
        let i = self.core_idx(t);
        self.scx_op(c, Some(Sym::Schedule), |s, _| s.dequeue_task(i));
    }

    /// `set_next_task_scx`: `t` runs on `c` (the class-neutral half of `set_next_entity`).
    fn set_next_task_scx(&mut self, c: usize, t: TaskId) {
        let now = self.cpus[c].exec.cursor.max(self.now);
        let extra = self.locality_start(c, t);
        self.idle_exit(c, now);
        self.cpus[c].rq.curr = Some(t);
        self.trace_nr_running(c);
        self.sched_switch_to(c, Some(t), now);
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

    /// `kernel_exit` while the ext class runs every task: __schedule with put_prev_task_scx,
    /// balance_one / pick_task_scx, and the idle class when the BPF scheduler gives nothing.
    pub(super) fn kernel_exit_scx(&mut self, c: usize) -> Exit {
        let schedules = self.cpus[c].rq.curr.is_none() || self.cpus[c].rq.need_resched;
        if std::mem::take(&mut self.cpus[c].exec.interrupted) || schedules {
            let sym = self.cpus[c].exec.sb_sym;
            self.drain_store_buffer(c, sym);
        }
        let now = self.cpus[c].exec.cursor.max(self.now);
        let prev = self.cpus[c].rq.curr;
        if let Some(t) = prev {
            if !self.cpus[c].rq.need_resched {
                if self.tasks[t as usize].remaining == 0 {
                    self.advance_script(c, t, now);
                    return Exit::Again;
                }
                self.resume_user(c, t);
                return Exit::Left;
            }
            // still runnable: balance_one decides whether it keeps the CPU
            self.scx_update_curr(c);
        }
        self.sched_count(c);
        self.cpus[c].rq.need_resched = false;
        let prev_i = prev.map(|t| self.core_idx(t));
        let next = self.scx_op(c, Some(Sym::Schedule), |s, _| s.pick_task(c as u32, prev_i));
        if !self.scx_on() {
            // the exit handed every task to fair; a prev still current reschedules there
            self.cpus[c].rq.need_resched |= prev.is_some();
            return Exit::Again;
        }
        let next = next.map(|i| self.engine_tid(i));
        if next.is_some() && next == prev {
            // prev keeps the CPU: no switch (balance_one's SCX_RQ_BAL_KEEP)
            return Exit::Again;
        }
        if let Some(t) = prev {
            // put_prev_task_scx ran in the pick: prev is back in the ext class's hands
            self.tasks[t as usize].state = TaskState::Runnable;
            self.cpus[c].rq.curr = None;
        }
        if let Some(n) = next {
            self.set_next_task_scx(c, n);
            self.kcharge(c, Sym::Schedule, self.assume.switch_ns);
            return Exit::Again;
        }
        // Nothing to run: the idle class (no newidle balance: fair is not an active class).
        if !self.cpus[c].idle.idle_entered {
            self.cpus[c].idle.newidle_done = true;
            self.scx_op(c, Some(Sym::Schedule), |s, _| s.set_idle(c as u32, true));
            if self.cpus[c].rq.curr.is_some() || !self.scx_on() {
                return Exit::Again;
            }
        }
        if self.cpus[c].rq.need_resched {
            // a kick of this CPU from the ops above (e.g. after an SCX_ENQ_LAST enqueue): the
            // kernel serves it from irq_work once the CPU is idle, and it schedules again
            return Exit::Again;
        }
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

    /// The line of a shared object of the core: a local DSQ is its CPU's rq lock line, another
    /// DSQ its own `scx_dispatch_q` line, the idle mask `idle_masks`.
    fn scx_line(&mut self, what: Shared) -> LineId {
        let x = self.scx.as_mut().unwrap();
        match what {
            Shared::IdleMask => x.idle_line,
            Shared::IdleMaskNode(n) => *x.node_idle_lines.entry(n).or_insert_with(|| {
                self.lines
                    .add_line(format!("idle_masks(node{n})"), &[(0, "cpu")])
            }),
            Shared::Dsq(id) if id & SCX_DSQ_LOCAL_ON == SCX_DSQ_LOCAL_ON => {
                let c = (id & SCX_DSQ_LOCAL_CPU_MASK) as usize;
                self.rq_lines[c.min(self.cpus.len() - 1)].rq()
            }
            Shared::Dsq(id) => *x.dsq_lines.entry(id).or_insert_with(|| {
                let name = if id == SCX_DSQ_GLOBAL {
                    "scx_dispatch_q[global]".to_string()
                } else {
                    format!("scx_dispatch_q[{id:#x}]")
                };
                self.lines.add_line(name, &[(0, "lock"), (8, "list")])
            }),
        }
    }

    /// Prices the shared lines the core touched during one call on CPU `c` through the
    /// cache-line model, one after the other from now, as code that prices its own time
    /// (`ttwu_queue_wakelist` does the same): requests reach the lines in the order of simulated
    /// time, never from a CPU's cursor ahead of it (which would hold a line for everyone past
    /// now); returns the time they took.
    fn scx_price(&mut self, c: usize, touched: &[(Shared, Touch)]) -> u64 {
        let start = self.now;
        let mut at = start;
        for &(what, touch) in touched {
            let line = self.scx_line(what);
            let op = match touch {
                Touch::Store => Op::Store,
                Touch::Load => Op::Load,
                Touch::Atomic => Op::Atomic,
            };
            let issue = if op == Op::Atomic {
                self.locked_issue_at(c, at)
            } else {
                at
            };
            let a = self.lines.access(&self.topo, line, c, op, 0, issue);
            at = a.done.max(at);
        }
        if at > start {
            self.metrics.stall(c, at - start);
        }
        at - start
    }
}

impl Engine {
    /// The ext class's share of `check_invariants`: each runnable ext task that is not running is
    /// counted once (in `seen`) where the core holds it, and every DSQ entry is a task the core
    /// says is queued there.
    pub(super) fn check_scx(&self, x: &ExtClass, seen: &mut [u32]) -> Result<(), String> {
        let k = &x.sched.k;
        for (i, ts) in k.tasks.iter().enumerate() {
            let t = x.tid[i] as usize;
            if matches!(ts.wh, Where::Bpf | Where::Queued(_)) {
                seen[t] += 1;
            }
        }
        let dsqs = k.local.iter().chain([&k.global]).chain(k.user.values());
        for d in dsqs {
            for e in d.iter() {
                if k.tasks[e.task].wh != Where::Queued(d.id) {
                    return Err(format!(
                        "task {} in DSQ {:#x} but the core has it {:?}",
                        x.tid[e.task], d.id, k.tasks[e.task].wh
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod flag_tests;
#[cfg(test)]
mod kit_tests;
#[cfg(test)]
mod tests;
