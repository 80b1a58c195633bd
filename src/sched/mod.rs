//! The scheduler engine: per-CPU run queues with EEVDF fair sharing, the tick, context switches,
//! NOHZ idle, and kernel work executed as resumable jobs whose shared-memory accesses go through
//! the cache-line model. This file holds the `Engine` and `Cpu` state, construction and the event
//! loop; each mechanism is in its own module:
//! - `exec.rs`: CPU modes and the kernel-job executor (`kcharge` / `kaccess`, `must_wait`, `kernel_exit`);
//! - `rq.rs`: the EEVDF run queue (enqueue, pick_eevdf, set_next_entity, update_curr, place_entity, ...),
//!   with its arithmetic and entity state in `eevdf.rs`;
//! - `tick.rs`: the tick (sched_tick) and the utilization average;
//! - `nohz.rs`: stopping and restarting the tick, nohz_balance_enter_idle / exit_idle;
//! - `idle.rs`: idle entry and exit (newidle, avg_idle, the cpuidle prediction, idle cores);
//! - `task.rs`: the workload driver (a task's script steps); `user_lines.rs`: the workload's own
//!   cache lines and its tasks' accesses to them;
//! - `balance.rs` (what the balancers share), `periodic.rs` (sched_balance_domains), `newidle.rs`
//!   (sched_balance_newidle), `ilb.rs` (_nohz_idle_balance) and `lb.rs` (the body of
//!   sched_balance_rq): load balancing;
//! - `wakeup.rs`, `cache_aware.rs`: wakeup placement, cache-aware scheduling;
//! - `checks.rs`: run-time invariant checks and read-outs; `metrics.rs`: what a run measures;
//! - `ext_class.rs`: the `sched_class` seam to sched_ext (`ext/`): when a BPF scheduler is
//!   attached, the class-dependent call sites above branch there instead of to the fair class.

mod balance;
mod cache_aware;
mod checks;
mod eevdf;
mod exec;
pub mod ext;
mod ext_class;
mod idle;
mod ilb;
mod lb;
mod llc_shared;
mod locality;
pub mod metrics;
mod net_rx;
mod newidle;
mod nohz;
mod pelt;
mod perfetto;
mod periodic;
mod rq;
mod schedstat;
mod syscall;
mod task;
mod tick;
mod trace;
mod user_lines;
mod wake_flags;
mod wakeup;

pub use balance::DomainRuntime;
pub use ext_class::{BPF_INSN_PS, ExtClass, ScxObject, check_supported as scx_check_supported};
pub use locality::{CLASS_NAMES, Figures, LocalityReport, MACHINE_FIGURES, stat as loc_stat};
pub use metrics::{Counter, Histogram, Metrics, Series, Sym, UpdateCurrCaller};
pub use net_rx::NetCounts;
pub use perfetto::{PerfettoCounts, task_pid};
pub use schedstat::{CpuStat, DomainStat, IDLE_TYPE_NAMES, LbStat, Schedstat};
pub use trace::{TRACE_MAX_EVENTS, TraceFormat};

use crate::assumptions::Assumptions;
use crate::coherence::{Coherence, LineId, Op};
use crate::machine::domains::SchedDomains;
use crate::machine::topology::Topology;
use crate::patches::Patches;
use crate::sim::events::EventQueue;
use crate::sim::rng::SimRng;
use crate::workload::{TaskId, Workload};
use balance::{BalanceState, SbrFlag};
use cache_aware::{CacheAware, CasJob};
use exec::{ExecState, Mode};
use idle::IdleState;
use ilb::IlbState;
use locality::{Locality, TaskLoc};
use newidle::NewidleWalk;
use nohz::{KickStep, NohzState, NohzStep};
use periodic::Walk;
use rq::{RqLines, RunQueue};
use std::collections::VecDeque;
use tick::{TickState, TickStep};
use user_lines::UserLines;

/// Kernel defaults and cost assumptions (sources in docs/MODEL.md).
pub mod consts {
    /// sysctl_sched_migration_cost: task_hot() window and newidle cost floor.
    pub const MIGRATION_COST_NS: u64 = 500_000;
    // The path costs and MLP figures that are assumptions are in `Assumptions` (src/assumptions,
    // with their ranges): the engine reads `self.assume`.
    /// sysctl_sched_nr_migrate.
    pub const NR_MIGRATE: usize = 32;
}
use consts::*;

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
    /// The EEVDF state of its sched_entity (weight, vruntime, deadline, lag, slice).
    se: eevdf::Entity,
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
    /// record_wakee()'s state (`wakeup.rs`).
    flips: wakeup::WakeeFlips,
    /// `p->recent_used_cpu`: the prev of its last select_idle_sibling (its first CPU before).
    recent_used_cpu: u32,
    /// TASK_WAKING on a wake list: woken, not yet enqueued by its target CPU.
    waking: bool,
    /// p->sched_remote_wakeup: the wakeup that put it on a wake list had WF_MIGRATED.
    sched_remote_wakeup: bool,
    pub sum_exec: u64,
    pub events: u64,
    /// When the last wakeup enqueued it (for the wakeup latency).
    woken_at: Option<u64>,
    /// Cache-aware scheduling: the LLC this task's mm prefers (-1: none).
    pub preferred_llc: i32,
    /// Home node and cache stamps of its working set (`locality.rs`).
    loc: TaskLoc,
}

pub(crate) enum Job {
    Compute(Sym, u64),
    Tick(TickStep),
    // The walks are inline (a walk starts at most every idle entry: no allocation per statement);
    // the rare ILB pass with its CPU list is boxed so the enum stays small.
    Balance(Walk),
    Ilb(Box<IlbState>),
    Newidle(NewidleWalk),
    NohzEnter(NohzStep),
    NohzExit(NohzStep),
    NohzKick(KickStep),
    CacheAware(CasJob),
    /// active_load_balance_cpu_stop() on the busiest CPU, pushing a task to this CPU.
    ActiveBalance(u32),
    /// sched_ttwu_pending(): a task on this CPU's wake list (with whether an IPI brought it).
    TtwuPending(TaskId, bool),
    /// Then ttwu_do_activate under the CPU's own rq lock, once the llist_del_all is served.
    TtwuActivate(TaskId),
    /// A receive queue's interrupt and its NET_RX softirq (`net_rx.rs`).
    NetRx(net_rx::NetRxStep),
    /// A step of the system call this task is in (`syscall.rs`).
    Syscall(TaskId, crate::workload::syscall::KernelStep),
}

/// One CPU's state, grouped by the mechanism that owns it (each sub-struct is defined, with its
/// construction, in that mechanism's module). Aligned to a host cache line so that the run
/// queue's first 64 bytes (what update_sg_lb_stats reads, `rq.rs`) are one line, not two.
#[repr(align(64))]
pub(crate) struct Cpu {
    /// Mode, kernel-job queue and cursor (`exec.rs`).
    pub(super) exec: ExecState,
    /// The run queue: running task, queued entities, min_vruntime and the avg sums (`rq.rs`).
    pub(super) rq: RunQueue,
    /// Idle entry/exit, avg_idle, the cpuidle prediction, NOHZ idle membership (`idle.rs`).
    pub(super) idle: IdleState,
    /// The periodic tick: offset, generation, stopped (`tick.rs`).
    pub(super) tick: TickState,
    /// rq->next_balance and the per-domain balancing state (`balance.rs`).
    pub(super) balance: BalanceState,
}

// What the alignment is for: the run queue starts a line of its own.
const _: () = assert!(std::mem::offset_of!(Cpu, rq) % 64 == 0);

impl Cpu {
    pub fn nr_running(&self) -> usize {
        self.rq.queued.len() + usize::from(self.rq.curr.is_some())
    }
    pub fn is_idle(&self) -> bool {
        self.rq.curr.is_none() && self.rq.queued.is_empty()
    }
}

#[derive(Clone, Copy, Debug)]
enum Ev {
    Tick(u32, u32),
    BurstEnd(u32, u32),
    Continue(u32, u32),
    /// A CPU's kernel request reaches its line's serialization point (`exec.rs`).
    Home(u32),
    Wake(TaskId),
    /// A request of connection `.1`, served by task `.0`, reaches the network card (`net_rx.rs`).
    Packet(TaskId, u32),
    /// A receive queue's moderation timer (queue, generation).
    NicIrq(u32, u32),
    Sample,
    /// The earliest armed BPF timer of the attached sched_ext scheduler expires.
    ScxTimer,
}

pub struct Engine {
    pub topo: Topology,
    /// The assumed path costs and MLP figures of this run (`assumptions::ROWS`).
    pub assume: Assumptions,
    pub sd: SchedDomains,
    pub patches: Patches,
    pub hz: u32,
    pub tick_ns: u64,
    /// sysctl_sched_base_slice, scaled by the CPU count as update_sysctl() does.
    base_slice: u64,
    /// max_load_balance_interval = HZ × nr_cpus / 10 (jiffies).
    max_load_balance_interval: u64,
    pub lines: Coherence,
    line_sbr: LineId,
    /// `jiffies_64`, rewritten by the timekeeping CPU every tick and read by everyone.
    line_jiffies: LineId,
    /// tick_do_timer_cpu: the CPU whose tick advances jiffies (none while every tick is stopped).
    tick_do_timer_cpu: Option<u32>,
    /// The workload's own lines (`Step::Access`).
    user: UserLines,
    /// The workload's kernel objects' lines (`Step::Kernel`).
    klines: syscall::KernelLines,
    pub(crate) cpus: Vec<Cpu>,
    /// Per CPU, its run-queue lines and their pending writers (`rq::RqLines`), apart from `cpus`.
    pub(crate) rq_lines: Vec<RqLines>,
    pub(crate) tasks: Vec<Task>,
    q: EventQueue<Ev>,
    rng: SimRng,
    pub now: u64,
    workload: Box<dyn Workload>,
    pub metrics: Metrics,
    /// The global `sched_balance_running` flag (its cache line is `line_sbr`).
    sbr: SbrFlag,
    /// The global `struct nohz` (its lines and values).
    nohz: NohzState,
    /// CPUs with 2+ tasks (checked against the queues by check_invariants).
    nr_overloaded: usize,
    /// rd->overloaded: set when a queue reaches 2 tasks (add_nr_running), written only by a
    /// balance pass at the root domain (update_sd_lb_stats); the newidle gate reads it.
    rd_overloaded: bool,
    /// Per LLC: SIS_UTIL `nr_idle_scan`, `has_idle_cores`.
    llc_nr_idle_scan: Vec<u32>,
    llc_has_idle_cores: Vec<bool>,
    llc_list: Vec<Vec<u32>>,
    /// Each CPU's index in its LLC's `llc_list` (where select_idle_cpu starts its scan).
    llc_pos: Vec<u32>,
    cas: Option<CacheAware>,
    /// Placement pricing: cache fills, the machine's figures (`locality.rs`).
    loc: Locality,
    pub events: u64,
    /// Nesting of run_cpu (a CPU's work can start another CPU's).
    run_depth: u32,
    /// The CPUs of the `Ev::Home` batch being served (kept between events: one allocation per
    /// run, not one per event).
    home_batch: Vec<u32>,
    /// The trace being recorded, if any (`trace.rs`; off: None).
    tracer: Option<Box<trace::Tracer>>,
    /// `/proc/schedstat` counters (`schedstat.rs`) and the sched_info bookkeeping behind them.
    schedstat: Schedstat,
    /// The counters when the warm-up ended (`schedstat_begin_window`).
    schedstat_at: Option<Box<Schedstat>>,
    sched_info: schedstat::SchedInfo,
    /// Each CPU's idle task's record_wakee() state (a device interrupt wakes from its context).
    swapper_flips: Vec<wakeup::WakeeFlips>,
    /// The network card and its receive queues (`net_rx.rs`; used by workloads whose requests
    /// come from another host).
    net: net_rx::NetState,
    /// The sched_ext scheduler that runs every task instead of the fair class, if one is attached
    /// (`ext_class.rs`).
    scx: Option<Box<ExtClass>>,
    /// The driver host's open-loop arrivals (`Workload::next_arrival`): a stream of their own.
    arrivals: SimRng,
    /// The workload sends open-loop requests: each arrival schedules the next.
    open_loop: bool,
}

impl Engine {
    pub fn new(
        topo: Topology,
        patches: Patches,
        hz: u32,
        seed: u64,
        workload: Box<dyn Workload>,
        sample_ns: u64,
        assume: Assumptions,
    ) -> Engine {
        Self::new_with_scx(topo, patches, hz, seed, workload, sample_ns, assume, None)
            .expect("no BPF scheduler to refuse")
    }

    /// `new`, with every task run by the sched_ext scheduler in `scx` (a `.bpf.o`) when given
    /// (`scx_enable`: all SCHED_NORMAL tasks switch to it). An object the loader refuses is an
    /// error naming what it refused; one whose ops.init fails leaves the fair class in charge
    /// (the report says why).
    #[allow(clippy::too_many_arguments)]
    pub fn new_with_scx(
        topo: Topology,
        patches: Patches,
        hz: u32,
        seed: u64,
        workload: Box<dyn Workload>,
        sample_ns: u64,
        assume: Assumptions,
        scx: Option<&ScxObject>,
    ) -> Result<Engine, String> {
        let sd = SchedDomains::build(&topo, patches.snc3_distance_fix);
        let n = topo.nr_cpus();
        let tick_ns = 1_000_000_000 / hz as u64;
        let base_slice = eevdf::sysctl_sched_base_slice(n);
        let mut lines = Coherence::new(&topo);
        lines.set_rmw_hold_ns(topo.spec.rmw_hold_ns as u64);
        lines.set_locked_hit_ns(assume.locked_hit_ns);
        let line_sbr = lines.add_line("sched_balance_running", &[(0, "sched_balance_running")]);
        let nohz = NohzState::new(&topo, &mut lines, &patches);
        let line_jiffies = lines.add_line("jiffies_64", &[(0, "jiffies_64")]);
        let user = UserLines::new(&mut lines, workload.lines(), workload.tasks().len());
        let rq_lines = (0..n).map(|c| RqLines::new(&mut lines, c)).collect();
        let cpus = (0..n)
            .map(|c| Cpu {
                exec: ExecState::new(topo.spec.store_buffer.entries),
                rq: RunQueue::new(),
                idle: IdleState::new(tick_ns),
                tick: TickState::new(&patches, tick_ns, n, c),
                balance: BalanceState::new(&sd, c, patches.merged.ni_random.then_some(seed)),
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
                se: eevdf::Entity::new(workload.nice(i as TaskId), base_slice),
                exec_start: 0,
                remaining: 0,
                run_end: 0,
                last_ran_cpu: (i % n) as u32,
                pending_wakeups: 0,
                handoff: None,
                pending_extra: 0,
                flips: wakeup::WakeeFlips::NEW,
                recent_used_cpu: (i % n) as u32,
                waking: false,
                sched_remote_wakeup: false,
                sum_exec: 0,
                events: 0,
                preferred_llc: -1,
                woken_at: None,
                loc: TaskLoc::new(),
            })
            .collect();
        let nr_llcs = topo.nr_llcs;
        let llc_scan: Vec<u32> = (0..nr_llcs)
            .map(|l| topo.llc_cpus[l].weight() as u32)
            .collect();
        let loc = Locality::new(
            &topo,
            workload.ws_lines() as u64 * locality::LINE_BYTES,
            workload.mem_bound_pct() as u64,
        );
        let llc_list: Vec<Vec<u32>> = (0..nr_llcs)
            .map(|l| topo.llc_cpus[l].iter().map(|c| c as u32).collect())
            .collect();
        let mut llc_pos = vec![0u32; n];
        for list in &llc_list {
            for (i, &c) in list.iter().enumerate() {
                llc_pos[c as usize] = i as u32;
            }
        }
        let nr_tasks = tasks.len();
        let workload_conns = workload.connections();
        let schedstat = Schedstat::new(&sd);
        let sched_info = schedstat::SchedInfo::new(n, tasks.len());
        let mut e = Engine {
            assume,
            sd,
            patches,
            hz,
            tick_ns,
            base_slice,
            max_load_balance_interval: (hz as u64 * n as u64 / 10).max(1),
            lines,
            line_sbr,
            line_jiffies,
            tick_do_timer_cpu: None,
            user,
            klines: syscall::KernelLines::default(),
            cpus,
            rq_lines,
            tasks,
            q: EventQueue::default(),
            rng: SimRng::new(seed),
            now: 0,
            metrics: Metrics::new(n, sample_ns),
            workload,
            sbr: SbrFlag::default(),
            nohz,
            nr_overloaded: 0,
            rd_overloaded: false,
            llc_nr_idle_scan: llc_scan,
            llc_has_idle_cores: vec![true; nr_llcs],
            cas: None,
            llc_list,
            llc_pos,
            loc,
            events: 0,
            run_depth: 0,
            home_batch: Vec::new(),
            tracer: None,
            schedstat,
            schedstat_at: None,
            sched_info,
            swapper_flips: vec![wakeup::WakeeFlips::NEW; n],
            net: net_rx::NetState::new(&topo, nr_tasks.max(workload_conns), seed),
            arrivals: SimRng::new(seed ^ 0x6172_7269_7661_6c73), // "arrivals"
            open_loop: false,
            topo,
            scx: None,
        };
        e.schedule_arrival();
        e.init_cache_aware();
        for t in 0..e.tasks.len() {
            if let Some(c) = e.workload.initial_cpu(t as TaskId, &e.topo) {
                // wake_up_new_task(): p->recent_used_cpu = task_cpu(p)
                (e.tasks[t].cpu, e.tasks[t].last_ran_cpu) = (c, c);
                e.tasks[t].recent_used_cpu = c;
            }
        }
        let first: Vec<usize> = e.tasks.iter().map(|t| t.cpu as usize).collect();
        e.klines = syscall::KernelLines::new(&mut e.lines, &*e.workload, |t| first[t as usize], n);
        let ext = match scx {
            Some(o) => e.scx_enable(o)?,
            None => false,
        };
        if !ext {
            for t in 0..e.tasks.len() {
                // wake_up_new_task(): ENQUEUE_INITIAL placement
                let c = e.tasks[t].cpu as usize;
                e.enqueue_entity(c, t as TaskId, c, rq::Enq::Initial);
                e.sched_info_enqueue(t as TaskId, 0);
            }
        }
        for c in 0..n {
            let first = e.cpus[c].tick.offset + e.tick_ns;
            e.q.push(first, Ev::Tick(c as u32, 0));
            let runnable = if ext {
                e.tasks.iter().any(|t| t.cpu as usize == c)
            } else {
                !e.cpus[c].rq.queued.is_empty()
            };
            if runnable {
                e.resched_cpu(c);
            }
        }
        e.q.push(sample_ns, Ev::Sample);
        Ok(e)
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

    fn burst_end(&mut self, c: u32, g: u32) {
        let exec = &self.cpus[c as usize].exec;
        if exec.burst_gen == g && exec.mode == Mode::User {
            self.on_burst_end(c as usize);
        }
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Tick(c, g) => self.on_tick(c as usize, g),
            Ev::BurstEnd(c, g) => {
                // a user access's request arrives at a burst's end: those ending at one
                // nanosecond go in CPU order, never in the order their events were queued
                let tie = |e: &Ev| matches!(e, Ev::BurstEnd(..));
                let Some(next) = self.q.pop_tie(self.now, tie) else {
                    return self.burst_end(c, g);
                };
                let mut ends = vec![(c, g), next_burst(next)];
                while let Some(e) = self.q.pop_tie(self.now, tie) {
                    ends.push(next_burst(e));
                }
                self.events += ends.len() as u64 - 1;
                ends.sort_unstable();
                let last = ends.len() - 1;
                for (i, (c, g)) in ends.into_iter().enumerate() {
                    self.run_in_batch(i == last, |e| e.burst_end(c, g));
                }
            }
            Ev::Continue(c, g) => {
                if self.cpus[c as usize].exec.cont_gen == g {
                    self.run_cpu(c as usize);
                }
            }
            Ev::Home(c) => {
                // every request arriving at this nanosecond is served in CPU order, never in the
                // order their events were queued
                let mut cpus = std::mem::take(&mut self.home_batch);
                cpus.clear();
                cpus.push(c);
                while let Some(Ev::Home(d)) = self.q.pop_tie(self.now, |e| matches!(e, Ev::Home(_)))
                {
                    self.events += 1;
                    cpus.push(d);
                }
                self.on_home_arrivals(&mut cpus);
                self.home_batch = cpus;
            }
            Ev::Wake(t) => {
                let cpu = self.tasks[t as usize].cpu as usize;
                self.try_to_wake_up(t, cpu, wakeup::Waker::Timer, 0);
            }
            Ev::Packet(t, conn) => {
                self.on_packet(t, conn);
                if self.open_loop {
                    self.schedule_arrival();
                }
            }
            Ev::NicIrq(q, g) => self.on_nic_timer(q, g),
            Ev::ScxTimer => self.on_scx_timer(),
            Ev::Sample => {
                self.flush_accounting();
                self.metrics.sample(self.now);
                self.q.push(self.now + self.metrics.sample_ns, Ev::Sample);
            }
        }
    }
}

fn next_burst(e: Ev) -> (u32, u32) {
    match e {
        Ev::BurstEnd(c, g) => (c, g),
        _ => unreachable!("pop_tie took a burst end"),
    }
}

/// Tests' engine for an experiment's side A: seed 1, 10 ms samples, nothing run yet.
#[cfg(test)]
pub(crate) fn test_engine(e: &crate::experiment::scenario::Experiment) -> Engine {
    let spec = e.run_spec(crate::experiment::scenario::Side::A).unwrap();
    let n = spec.topo.nr_cpus();
    let wl = crate::workload::build(&spec.workload, &spec.knobs, n, &spec.assume).unwrap();
    Engine::new(
        spec.topo,
        spec.patches,
        spec.hz,
        1,
        wl,
        10_000_000,
        spec.assume,
    )
}
