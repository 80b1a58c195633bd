//! `/proc/schedstat` version 17 (Documentation/scheduler/sched-stats.rst, v6.18): the per-CPU
//! `struct rq` statistics and the per-domain `struct sched_domain` statistics, counted at the
//! `schedstat_inc` / `schedstat_add` sites of core.c and fair.c that the engine models. Counting
//! only watches: nothing here is read back by the scheduler, so the report is unchanged.
//!
//! The context switch itself (`rq->nr_switches`, what `sched_switch` traces) is recorded here too,
//! as `__schedule()` does when prev != next, and handed to the tracer.

use super::balance::IdleType;
use super::*;

/// The `[CPU_MAX_IDLE_TYPES]` index of an idle type, in v6.18 `enum cpu_idle_type` order
/// (schedstat v16 and later): CPU_IDLE 0, __CPU_NOT_IDLE 1, CPU_NEWLY_IDLE 2.
pub(super) fn idle_index(it: IdleType) -> usize {
    match it {
        IdleType::Idle => 0,
        IdleType::NotIdle => 1,
        IdleType::NewlyIdle => 2,
    }
}

/// The names of the idle types in index order, as `perf sched stats` labels them.
pub const IDLE_TYPE_NAMES: [&str; 3] = ["idle", "busy", "newidle"];

/// The per-CPU fields of a `cpu<N>` line, in print order (field 2, the O(1) scheduler's expired
/// count, is always 0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuStat {
    pub yld_count: u64,
    pub sched_count: u64,
    pub sched_goidle: u64,
    pub ttwu_count: u64,
    pub ttwu_local: u64,
    /// rq_sched_info.rq_cpu_time: ns tasks ran on this CPU (sched_info_depart).
    pub rq_cpu_time: u64,
    /// rq_sched_info.run_delay: ns tasks waited on this run queue (sched_info_arrive).
    pub run_delay: u64,
    /// rq_sched_info.pcount: timeslices run here (sched_info_arrive).
    pub pcount: u64,
    /// rq->nr_switches (not in /proc/schedstat: /proc/stat `ctxt`; what `sched_switch` traces).
    pub nr_switches: u64,
}

/// The load-balance fields of one idle type, in print order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LbStat {
    pub lb_count: u64,
    pub lb_balanced: u64,
    pub lb_failed: u64,
    pub lb_imbalance_load: u64,
    pub lb_imbalance_util: u64,
    pub lb_imbalance_task: u64,
    pub lb_imbalance_misfit: u64,
    pub lb_gained: u64,
    pub lb_hot_gained: u64,
    pub lb_nobusyq: u64,
    pub lb_nobusyg: u64,
}

impl LbStat {
    pub const NAMES: [&'static str; 11] = [
        "lb_count",
        "lb_balanced",
        "lb_failed",
        "lb_imbalance_load",
        "lb_imbalance_util",
        "lb_imbalance_task",
        "lb_imbalance_misfit",
        "lb_gained",
        "lb_hot_gained",
        "lb_nobusyq",
        "lb_nobusyg",
    ];

    pub fn values(&self) -> [u64; 11] {
        [
            self.lb_count,
            self.lb_balanced,
            self.lb_failed,
            self.lb_imbalance_load,
            self.lb_imbalance_util,
            self.lb_imbalance_task,
            self.lb_imbalance_misfit,
            self.lb_gained,
            self.lb_hot_gained,
            self.lb_nobusyq,
            self.lb_nobusyg,
        ]
    }
}

/// One `domain<N>` line of one CPU.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DomainStat {
    /// Indexed by `idle_index`.
    pub lb: [LbStat; 3],
    pub alb_count: u64,
    pub alb_failed: u64,
    pub alb_pushed: u64,
    /// sched_balance_exec / fork: no v6.18 code increments these (always 0, printed for the ABI).
    pub sbe_count: u64,
    pub sbe_balanced: u64,
    pub sbe_pushed: u64,
    pub sbf_count: u64,
    pub sbf_balanced: u64,
    pub sbf_pushed: u64,
    pub ttwu_wake_remote: u64,
    pub ttwu_move_affine: u64,
    /// No v6.18 code increments it (always 0).
    pub ttwu_move_balance: u64,
}

impl DomainStat {
    pub const TAIL_NAMES: [&'static str; 12] = [
        "alb_count",
        "alb_failed",
        "alb_pushed",
        "sbe_count",
        "sbe_balanced",
        "sbe_pushed",
        "sbf_count",
        "sbf_balanced",
        "sbf_pushed",
        "ttwu_wake_remote",
        "ttwu_move_affine",
        "ttwu_move_balance",
    ];

    pub fn tail(&self) -> [u64; 12] {
        [
            self.alb_count,
            self.alb_failed,
            self.alb_pushed,
            self.sbe_count,
            self.sbe_balanced,
            self.sbe_pushed,
            self.sbf_count,
            self.sbf_balanced,
            self.sbf_pushed,
            self.ttwu_wake_remote,
            self.ttwu_move_affine,
            self.ttwu_move_balance,
        ]
    }

    /// Every field of the line after the name and mask, in print order (45 values).
    pub fn fields(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(45);
        for lb in &self.lb {
            v.extend(lb.values());
        }
        v.extend(self.tail());
        v
    }

    /// The names of `fields()`, `<name>[<idle type>]` for the load-balance ones.
    pub fn field_names() -> Vec<String> {
        let mut v = Vec::with_capacity(45);
        for it in IDLE_TYPE_NAMES {
            v.extend(LbStat::NAMES.iter().map(|n| format!("{n}[{it}]")));
        }
        v.extend(Self::TAIL_NAMES.iter().map(|n| n.to_string()));
        v
    }

    fn sub(&self, b: &DomainStat) -> DomainStat {
        let d =
            |x: &[u64], y: &[u64]| -> Vec<u64> { x.iter().zip(y).map(|(a, b)| a - b).collect() };
        let f = d(&self.fields(), &b.fields());
        DomainStat::from_fields(&f)
    }

    fn from_fields(f: &[u64]) -> DomainStat {
        let lb = |i: usize| {
            let g = &f[i * 11..i * 11 + 11];
            LbStat {
                lb_count: g[0],
                lb_balanced: g[1],
                lb_failed: g[2],
                lb_imbalance_load: g[3],
                lb_imbalance_util: g[4],
                lb_imbalance_task: g[5],
                lb_imbalance_misfit: g[6],
                lb_gained: g[7],
                lb_hot_gained: g[8],
                lb_nobusyq: g[9],
                lb_nobusyg: g[10],
            }
        };
        let t = &f[33..45];
        DomainStat {
            lb: [lb(0), lb(1), lb(2)],
            alb_count: t[0],
            alb_failed: t[1],
            alb_pushed: t[2],
            sbe_count: t[3],
            sbe_balanced: t[4],
            sbe_pushed: t[5],
            sbf_count: t[6],
            sbf_balanced: t[7],
            sbf_pushed: t[8],
            ttwu_wake_remote: t[9],
            ttwu_move_affine: t[10],
            ttwu_move_balance: t[11],
        }
    }
}

/// The counters of one instant (the engine's live ones, or a snapshot).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedstat {
    pub cpus: Vec<CpuStat>,
    /// Per CPU, per domain level (`SchedDomains::per_cpu` order: domain0 is the lowest).
    pub domains: Vec<Vec<DomainStat>>,
}

impl Schedstat {
    /// What accumulated since `base` (perf sched stats record: the end minus the start snapshot).
    pub fn since(&self, base: &Schedstat) -> Schedstat {
        let cpus = self
            .cpus
            .iter()
            .zip(&base.cpus)
            .map(|(a, b)| CpuStat {
                yld_count: a.yld_count - b.yld_count,
                sched_count: a.sched_count - b.sched_count,
                sched_goidle: a.sched_goidle - b.sched_goidle,
                ttwu_count: a.ttwu_count - b.ttwu_count,
                ttwu_local: a.ttwu_local - b.ttwu_local,
                rq_cpu_time: a.rq_cpu_time - b.rq_cpu_time,
                run_delay: a.run_delay - b.run_delay,
                pcount: a.pcount - b.pcount,
                nr_switches: a.nr_switches - b.nr_switches,
            })
            .collect();
        let domains = self
            .domains
            .iter()
            .zip(&base.domains)
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.sub(y)).collect())
            .collect();
        Schedstat { cpus, domains }
    }
}

/// Per-CPU switch state (what `rq->curr` was after the last `__schedule`) and per-task
/// `sched_info` (last_arrival, last_queued), the bookkeeping behind the counters.
#[derive(Clone, Debug, Default)]
pub(super) struct SchedInfo {
    /// Per CPU: the task switched to last (None: the idle task).
    pub cur: Vec<Option<TaskId>>,
    /// Per CPU: inside a `__schedule()` that has been counted and not yet finished.
    pub in_schedule: Vec<bool>,
    /// Per task: when it last started running (sched_info.last_arrival).
    pub last_arrival: Vec<u64>,
    /// Per task: since when it waits on a run queue (sched_info.last_queued).
    pub last_queued: Vec<Option<u64>>,
}

impl SchedInfo {
    pub fn new(nr_cpus: usize, nr_tasks: usize) -> SchedInfo {
        SchedInfo {
            cur: vec![None; nr_cpus],
            in_schedule: vec![false; nr_cpus],
            last_arrival: vec![0; nr_tasks],
            last_queued: vec![None; nr_tasks],
        }
    }
}

impl Schedstat {
    pub fn new(sd: &SchedDomains) -> Schedstat {
        let n = sd.per_cpu.len();
        Schedstat {
            cpus: vec![CpuStat::default(); n],
            domains: sd
                .per_cpu
                .iter()
                .map(|d| vec![DomainStat::default(); d.len()])
                .collect(),
        }
    }
}

impl Engine {
    /// `__schedule()` finishes on `c` at `t` with `next` current (None: the idle task): when prev
    /// != next this is a context switch (rq->nr_switches, sched_info_switch, trace_sched_switch).
    pub(super) fn sched_switch_to(&mut self, c: usize, next: Option<TaskId>, t: u64) {
        let prev = self.sched_info.cur[c];
        if prev == next {
            return;
        }
        self.sched_info.cur[c] = next;
        let st = &mut self.schedstat.cpus[c];
        st.nr_switches += 1;
        self.metrics.count(Counter::ContextSwitches);
        // sched_info_switch(): depart prev (still runnable: queued again), arrive next
        if let Some(p) = prev {
            let ran = t.saturating_sub(self.sched_info.last_arrival[p as usize]);
            st.rq_cpu_time += ran;
            if matches!(
                self.tasks[p as usize].state,
                TaskState::Runnable | TaskState::Running
            ) {
                self.sched_info.last_queued[p as usize].get_or_insert(t);
            }
        }
        if let Some(n) = next {
            if let Some(q) = self.sched_info.last_queued[n as usize].take() {
                st.run_delay += t.saturating_sub(q);
            }
            st.pcount += 1;
            self.sched_info.last_arrival[n as usize] = t;
        }
        self.trace_switch(c, prev, next, t);
    }

    /// sched_info_enqueue(): a woken task starts waiting on a run queue at `t`.
    pub(super) fn sched_info_enqueue(&mut self, task: TaskId, t: u64) {
        self.sched_info.last_queued[task as usize].get_or_insert(t);
    }

    /// The counters now (`/proc/schedstat` read at this instant).
    pub fn schedstat(&self) -> &Schedstat {
        &self.schedstat
    }

    /// The `prev_state` of a task switched out (sched_switch's TASK_* bits): 0 runnable
    /// (preempted), 1 TASK_INTERRUPTIBLE (it blocked), 0x80 TASK_DEAD.
    pub(super) fn task_switch_state(&self, t: TaskId) -> i64 {
        match self.tasks[t as usize].state {
            TaskState::Running | TaskState::Runnable => 0,
            TaskState::Sleeping => 1,
            TaskState::Exited => 0x80,
        }
    }

    /// The kernel priority of a task (`p->prio`: 120 + nice for a fair task).
    pub(super) fn task_prio(&self, t: TaskId) -> i32 {
        let w = self.tasks[t as usize].se.weight;
        let nice = eevdf::SCHED_PRIO_TO_WEIGHT
            .iter()
            .position(|&x| x == w)
            .map_or(0, |i| i as i32 - 20);
        120 + nice
    }
}

impl Engine {
    /// The domain statistics of `cpu`'s domain at `level`.
    pub(super) fn sd_stat(&mut self, cpu: usize, level: usize) -> &mut DomainStat {
        &mut self.schedstat.domains[cpu][level]
    }

    /// The load-balance statistics of one idle type of `cpu`'s domain at `level`.
    pub(super) fn lb_stat(&mut self, cpu: usize, level: usize, it: IdleType) -> &mut LbStat {
        &mut self.schedstat.domains[cpu][level].lb[idle_index(it)]
    }

    /// ttwu_stat(): on the waking CPU's rq (`this_rq()`), ttwu_count, and ttwu_local or, in its
    /// lowest domain spanning the target, ttwu_wake_remote.
    pub(super) fn ttwu_stat(&mut self, waker_cpu: usize, target: usize) {
        let st = &mut self.schedstat.cpus[waker_cpu];
        st.ttwu_count += 1;
        if target == waker_cpu {
            st.ttwu_local += 1;
            return;
        }
        let level = (0..self.sd.per_cpu[waker_cpu].len()).find(|&l| {
            self.sd.domains[self.sd.per_cpu[waker_cpu][l] as usize]
                .span
                .contains(target)
        });
        if let Some(l) = level {
            self.schedstat.domains[waker_cpu][l].ttwu_wake_remote += 1;
        }
    }

    /// schedule_debug()'s sched_count, once per `__schedule()` (the engine may pass
    /// `kernel_exit` several times in one: newidle, the NOHZ entry); `finish` ends it, and
    /// sched_goidle counts one that picked the idle task (set_next_task_idle).
    pub(super) fn sched_count(&mut self, c: usize) {
        if !std::mem::replace(&mut self.sched_info.in_schedule[c], true) {
            self.schedstat.cpus[c].sched_count += 1;
        }
    }

    pub(super) fn sched_finish(&mut self, c: usize, goidle: bool) {
        if std::mem::take(&mut self.sched_info.in_schedule[c]) && goidle {
            self.schedstat.cpus[c].sched_goidle += 1;
        }
    }
}

impl Engine {
    /// Keeps the counters at the end of the warm-up (perf sched stats record's first snapshot).
    pub fn schedstat_begin_window(&mut self) {
        self.schedstat_at = Some(Box::new(self.schedstat.clone()));
    }

    /// The counters over the measured window (the whole run without a warm-up), as
    /// `perf sched stats record` reports them: the end snapshot minus the start one.
    pub fn schedstat_measured(&self) -> Schedstat {
        match self.schedstat_at.as_deref() {
            Some(at) => self.schedstat.since(at),
            None => self.schedstat.clone(),
        }
    }
}
