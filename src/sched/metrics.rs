//! What a run measures: CPU time per kernel symbol and per CPU (perf `cycles` semantics: idle time is
//! kept apart), stall time on named cache lines, counters, completions with a latency histogram,
//! and per-interval series.

/// Symbols CPU time is charged to, named as perf shows them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sym {
    Idle,
    User,
    SchedTick,
    Schedule,
    TryToWakeUp,
    SelectIdleSibling,
    SchedBalanceDomains,
    SchedBalanceRq,
    UpdateSdLbStats,
    DetachTasks,
    SchedBalanceNewidle,
    NohzBalanceEnter,
    NohzBalanceExit,
    NohzIdleBalance,
    AccountMmSched,
    ExceedLlcNr,
    TaskTickCache,
    TaskCacheWork,
    SchedBalanceUpdateBlockedAverages,
    ActiveLoadBalanceCpuStop,
    /// 7.2's thread-count gate (deee5e27d5b6), the successor of RFC v4's exceed_llc_nr.
    InvalidLlcNr,
    /// A network card's receive interrupt: the driver's hard IRQ handler (`net_rx.rs`).
    NetRxIrq,
    /// NET_RX: the driver poll, GRO, IP and tcp_v4_rcv of one packet, up to sock_def_readable.
    NetRxAction,
    /// A workload's system calls (`Step::Kernel`, `sched/syscall.rs`): entry, exit and VFS.
    Syscall,
    UnixStreamSendmsg,
    UnixStreamReadGeneric,
    AnonPipeWrite,
    AnonPipeRead,
    SlabAlloc,
    SlabFree,
    WaitQueue,
    TcpSendmsg,
    TcpRecvmsg,
    TcpV4Rcv,
}

impl Sym {
    pub const ALL: [Sym; 34] = [
        Sym::Idle,
        Sym::User,
        Sym::SchedTick,
        Sym::Schedule,
        Sym::TryToWakeUp,
        Sym::SelectIdleSibling,
        Sym::SchedBalanceDomains,
        Sym::SchedBalanceRq,
        Sym::UpdateSdLbStats,
        Sym::DetachTasks,
        Sym::SchedBalanceNewidle,
        Sym::NohzBalanceEnter,
        Sym::NohzBalanceExit,
        Sym::NohzIdleBalance,
        Sym::AccountMmSched,
        Sym::ExceedLlcNr,
        Sym::TaskTickCache,
        Sym::TaskCacheWork,
        Sym::SchedBalanceUpdateBlockedAverages,
        Sym::ActiveLoadBalanceCpuStop,
        Sym::InvalidLlcNr,
        Sym::NetRxIrq,
        Sym::NetRxAction,
        Sym::Syscall,
        Sym::UnixStreamSendmsg,
        Sym::UnixStreamReadGeneric,
        Sym::AnonPipeWrite,
        Sym::AnonPipeRead,
        Sym::SlabAlloc,
        Sym::SlabFree,
        Sym::WaitQueue,
        Sym::TcpSendmsg,
        Sym::TcpRecvmsg,
        Sym::TcpV4Rcv,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Sym::Idle => "[idle]",
            Sym::User => "[user]",
            Sym::SchedTick => "sched_tick",
            Sym::Schedule => "__schedule",
            Sym::TryToWakeUp => "try_to_wake_up",
            Sym::SelectIdleSibling => "select_idle_sibling",
            Sym::SchedBalanceDomains => "sched_balance_domains",
            Sym::SchedBalanceRq => "sched_balance_rq",
            Sym::UpdateSdLbStats => "update_sd_lb_stats",
            Sym::DetachTasks => "detach_tasks",
            Sym::SchedBalanceNewidle => "sched_balance_newidle",
            Sym::NohzBalanceEnter => "nohz_balance_enter_idle",
            Sym::NohzBalanceExit => "nohz_balance_exit_idle",
            Sym::NohzIdleBalance => "_nohz_idle_balance",
            Sym::AccountMmSched => "account_mm_sched",
            Sym::ExceedLlcNr => "exceed_llc_nr",
            Sym::TaskTickCache => "task_tick_cache",
            Sym::TaskCacheWork => "task_cache_work",
            Sym::SchedBalanceUpdateBlockedAverages => "sched_balance_update_blocked_averages",
            Sym::ActiveLoadBalanceCpuStop => "active_load_balance_cpu_stop",
            Sym::InvalidLlcNr => "invalid_llc_nr",
            Sym::NetRxIrq => "common_interrupt",
            Sym::NetRxAction => "net_rx_action",
            Sym::Syscall => "entry_SYSCALL_64",
            Sym::UnixStreamSendmsg => "unix_stream_sendmsg",
            Sym::UnixStreamReadGeneric => "unix_stream_read_generic",
            Sym::AnonPipeWrite => "anon_pipe_write",
            Sym::AnonPipeRead => "anon_pipe_read",
            Sym::SlabAlloc => "kmem_cache_alloc_node",
            Sym::SlabFree => "kmem_cache_free",
            Sym::WaitQueue => "__wake_up_sync_key",
            Sym::TcpSendmsg => "tcp_sendmsg",
            Sym::TcpRecvmsg => "tcp_recvmsg",
            Sym::TcpV4Rcv => "tcp_v4_rcv",
        }
    }
}

const NSYM: usize = Sym::ALL.len();

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    Ticks,
    Softirqs,
    SbrCmpxchg,
    SbrCmpxchgFailed,
    Balances,
    NewidleBalances,
    Migrations,
    Wakeups,
    IlbKicks,
    WakeMigrations,
    MmSchedCpuStores,
    SerializeVisits,
    SerializeDueVisits,
    MmSchedCpuRedundantStores,
    ActiveBalances,
    /// rq->nr_switches summed over CPUs: `__schedule()` switching to a different task, the idle
    /// task included (vmstat's `cs`, /proc/stat `ctxt`).
    ContextSwitches,
    /// A CPU's idle entries (`do_idle` reached after schedule() picked the idle task; schedstat's
    /// `sched_goidle` counts the same switches): how often CPUs go idle.
    IdleEntries,
}

impl Counter {
    pub const ALL: [Counter; 17] = [
        Counter::Ticks,
        Counter::Softirqs,
        Counter::SbrCmpxchg,
        Counter::SbrCmpxchgFailed,
        Counter::Balances,
        Counter::NewidleBalances,
        Counter::Migrations,
        Counter::Wakeups,
        Counter::IlbKicks,
        Counter::WakeMigrations,
        Counter::MmSchedCpuStores,
        Counter::SerializeVisits,
        Counter::SerializeDueVisits,
        Counter::MmSchedCpuRedundantStores,
        Counter::ActiveBalances,
        Counter::ContextSwitches,
        Counter::IdleEntries,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Counter::Ticks => "ticks",
            Counter::Softirqs => "sched_softirqs",
            Counter::SbrCmpxchg => "sched_balance_running_cmpxchg",
            Counter::SbrCmpxchgFailed => "sched_balance_running_cmpxchg_failed",
            Counter::Balances => "sched_balance_rq_calls",
            Counter::NewidleBalances => "newidle_balance_calls",
            Counter::Migrations => "lb_migrations",
            Counter::Wakeups => "wakeups",
            Counter::IlbKicks => "nohz_ilb_kicks",
            Counter::WakeMigrations => "wakeup_migrations",
            Counter::MmSchedCpuStores => "mm_sched_cpu_stores",
            Counter::SerializeVisits => "sd_serialize_level_visits",
            Counter::SerializeDueVisits => "sd_serialize_level_visits_due",
            Counter::MmSchedCpuRedundantStores => "mm_sched_cpu_stores_of_unchanged_value",
            Counter::ActiveBalances => "active_balance_moves",
            Counter::ContextSwitches => "context_switches",
            Counter::IdleEntries => "idle_entries",
        }
    }
}

/// The update_curr() callers (v6.18 fair.c) whose call reaches account_mm_sched() (RFC v4 calls
/// it from update_curr_task(), so from every update_curr() with delta > 0 of a task). The
/// DEQUEUE_SLEEP / DEQUEUE_DELAYED variants of dequeue_entity() are told apart: a block (and
/// exit) and a delayed entity's finish are not a migration's detach. (requeue_delayed_entity() does
/// not call update_curr() in v6.18: a delayed task's wakeup accounts curr in
/// check_preempt_wakeup_fair().)
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateCurrCaller {
    EntityTick,
    EnqueueEntity,
    DequeueEntity,
    DequeueEntitySleep,
    DequeueEntityDelayed,
    CheckPreemptWakeupFair,
    PutPrevEntity,
    PickTaskFair,
    ReweightEntity,
}

impl UpdateCurrCaller {
    pub const ALL: [UpdateCurrCaller; 9] = [
        UpdateCurrCaller::EntityTick,
        UpdateCurrCaller::EnqueueEntity,
        UpdateCurrCaller::DequeueEntity,
        UpdateCurrCaller::DequeueEntitySleep,
        UpdateCurrCaller::DequeueEntityDelayed,
        UpdateCurrCaller::CheckPreemptWakeupFair,
        UpdateCurrCaller::PutPrevEntity,
        UpdateCurrCaller::PickTaskFair,
        UpdateCurrCaller::ReweightEntity,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UpdateCurrCaller::EntityTick => "entity_tick",
            UpdateCurrCaller::EnqueueEntity => "enqueue_entity",
            UpdateCurrCaller::DequeueEntity => "dequeue_entity",
            UpdateCurrCaller::DequeueEntitySleep => "dequeue_entity(DEQUEUE_SLEEP)",
            UpdateCurrCaller::DequeueEntityDelayed => "dequeue_entity(DEQUEUE_DELAYED)",
            UpdateCurrCaller::CheckPreemptWakeupFair => "check_preempt_wakeup_fair",
            UpdateCurrCaller::PutPrevEntity => "put_prev_entity",
            UpdateCurrCaller::PickTaskFair => "pick_task_fair",
            UpdateCurrCaller::ReweightEntity => "reweight_entity",
        }
    }
}

const NCALLERS: usize = UpdateCurrCaller::ALL.len();

/// Log-linear latency histogram: 32 sub-buckets per power of two (≈3% resolution).
#[derive(Clone, Debug, Default)]
pub struct Histogram {
    buckets: Vec<u64>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl Histogram {
    const SUB: u64 = 32;

    fn index(v: u64) -> usize {
        if v < Self::SUB {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros() as u64; // >= 5
        let shift = msb - 5;
        ((shift + 1) * Self::SUB + ((v >> shift) - Self::SUB)) as usize
    }

    fn lower_bound(i: usize) -> u64 {
        let i = i as u64;
        if i < Self::SUB {
            return i;
        }
        let shift = i / Self::SUB - 1;
        (Self::SUB + i % Self::SUB) << shift
    }

    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, 0);
        }
        self.buckets[i] += 1;
        self.min = if self.count == 0 { v } else { self.min.min(v) };
        self.max = self.max.max(v);
        self.count += 1;
        self.sum += v as u128;
    }

    /// Each non-empty bucket as (its lower bound, its count), lowest first (the schbench v1.0
    /// renderer walks them as schbench's calc_percentiles walks its own).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (self.buckets.iter().enumerate())
            .filter(|(_, n)| **n > 0)
            .map(|(i, &n)| (Self::lower_bound(i), n))
    }

    /// The bucket a value `v` falls in, `[lower, upper)`: a quantile is its bucket's lower bound,
    /// so the true quantile lies somewhere in this range (1/32 of the value wide from 32 up). The
    /// page shows the range instead of one figure that two different runs can share.
    pub fn bucket_of(v: u64) -> (u64, u64) {
        let i = Self::index(v);
        (Self::lower_bound(i), Self::lower_bound(i + 1))
    }

    /// The value below which `q` of the samples fall (bucket lower bound, clamped to [min, max]).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let target = ((self.count as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= target {
                return Self::lower_bound(i).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

/// Per-sample series, one value per sample interval. The names are the report's `series` JSON
/// names and the keys of the page's progress messages.
#[derive(Clone, Debug, Default)]
pub struct Series {
    /// Simulated time of the sample, seconds.
    pub t_s: Vec<f64>,
    /// Completions per second over the interval.
    pub throughput: Vec<f64>,
    /// % of busy (non-idle) CPU time stalled on contended scheduler lines over the interval.
    pub contention_pct: Vec<f64>,
    /// Busy fraction of all CPUs over the interval.
    pub utilization: Vec<f64>,
}

impl Series {
    /// Every series with its name, `t_s` (the x axis) first.
    pub fn named(&self) -> [(&'static str, &[f64]); 4] {
        [
            ("t_s", &self.t_s),
            ("throughput", &self.throughput),
            ("contention_pct", &self.contention_pct),
            ("utilization", &self.utilization),
        ]
    }
}

pub struct Metrics {
    /// Per CPU, ns per symbol.
    pub cpu_sym: Vec<[u64; NSYM]>,
    /// Per CPU, ns stalled on named (contended) scheduler cache lines.
    pub cpu_stall: Vec<u64>,
    /// Per CPU, ns of user time spent on cache-line transfers (refills, shared data, handoffs).
    pub cpu_user_xfer: Vec<u64>,
    pub counters: [u64; Counter::ALL.len()],
    /// account_mm_sched() calls by update_curr() caller (cache-aware scheduling only).
    pub mm_sched_callers: [u64; NCALLERS],
    /// Placement costs and distances (`locality::stat` indices).
    pub loc: [u64; super::locality::stat::N],
    pub latency: Histogram,
    /// Wakeup to first run, every wakeup (schbench's "Wakeup Latencies").
    pub wakeup_latency: Histogram,
    pub completions: u64,
    pub sample_ns: u64,
    pub series: Series,
    /// (time, completions, busy ns, stall ns, all ns) at the last sample.
    last_sample: (u64, u64, u64, u64, u64),
    /// The totals at the end of the warm-up (`begin_window`); `None` without a warm-up.
    pub window: Option<Box<Window>>,
}

/// A line's running totals in a window's snapshot: loads, stores, atomics, hitm_local,
/// hitm_remote, stall_ns, then the hand-offs by distance.
pub const LINE_TOTALS: usize = 10;

pub fn line_totals(s: &crate::coherence::LineStats) -> [u64; LINE_TOTALS] {
    let h = s.handoffs;
    [
        s.loads,
        s.stores,
        s.atomics,
        s.hitm_local,
        s.hitm_remote,
        s.stall_ns,
        h[0],
        h[1],
        h[2],
        h[3],
    ]
}

/// What had accumulated when the warm-up ended: the report's headline figures are the totals
/// minus these (sysbench `--warmup-time` resets its statistics the same way).
#[derive(Clone, Debug)]
pub struct Window {
    pub start_ns: u64,
    /// The totals at `start_ns`.
    pub at: Measured,
    /// Units completed per task.
    pub task_events: Vec<u64>,
    /// Per cache line (by index): `line_totals`, and
    /// per field loads, stores, atomics, hitm.
    pub lines: Vec<([u64; LINE_TOTALS], Vec<[u64; 4]>)>,
}

/// The measured window's CPU time and counters (the whole run without a warm-up), or the totals
/// at one instant.
#[derive(Clone, Debug)]
pub struct Measured {
    pub cpu_sym: Vec<[u64; NSYM]>,
    pub cpu_stall: Vec<u64>,
    pub cpu_user_xfer: Vec<u64>,
    pub counters: [u64; Counter::ALL.len()],
    pub mm_sched_callers: [u64; NCALLERS],
    pub loc: [u64; super::locality::stat::N],
    pub completions: u64,
}

/// ns charged to `sym` over all CPUs.
fn total(cpu_sym: &[[u64; NSYM]], sym: Sym) -> u64 {
    cpu_sym.iter().map(|s| s[sym as usize]).sum()
}

/// ns charged to anything but `[idle]` over all CPUs.
fn non_idle_ns(cpu_sym: &[[u64; NSYM]]) -> u64 {
    cpu_sym
        .iter()
        .map(|s| s.iter().sum::<u64>() - s[Sym::Idle as usize])
        .sum()
}

impl Measured {
    pub fn total(&self, sym: Sym) -> u64 {
        total(&self.cpu_sym, sym)
    }

    pub fn non_idle_ns(&self) -> u64 {
        non_idle_ns(&self.cpu_sym)
    }
}

impl Metrics {
    pub fn new(nr_cpus: usize, sample_ns: u64) -> Self {
        Metrics {
            cpu_sym: vec![[0; NSYM]; nr_cpus],
            cpu_stall: vec![0; nr_cpus],
            cpu_user_xfer: vec![0; nr_cpus],
            counters: [0; Counter::ALL.len()],
            mm_sched_callers: [0; NCALLERS],
            loc: [0; super::locality::stat::N],
            latency: Histogram::default(),
            wakeup_latency: Histogram::default(),
            completions: 0,
            sample_ns,
            series: Series::default(),
            last_sample: (0, 0, 0, 0, 0),
            window: None,
        }
    }

    /// Ends the warm-up at `now` (the caller has flushed open accounting): keeps the totals so far
    /// and restarts the latency histograms, which cannot be subtracted.
    pub fn begin_window(
        &mut self,
        now: u64,
        task_events: Vec<u64>,
        lines: Vec<([u64; LINE_TOTALS], Vec<[u64; 4]>)>,
    ) {
        self.window = Some(Box::new(Window {
            start_ns: now,
            at: self.totals(),
            task_events,
            lines,
        }));
        self.latency = Histogram::default();
        self.wakeup_latency = Histogram::default();
    }

    /// Everything accumulated since the start of the run.
    fn totals(&self) -> Measured {
        Measured {
            cpu_sym: self.cpu_sym.clone(),
            cpu_stall: self.cpu_stall.clone(),
            cpu_user_xfer: self.cpu_user_xfer.clone(),
            counters: self.counters,
            mm_sched_callers: self.mm_sched_callers,
            loc: self.loc,
            completions: self.completions,
        }
    }

    /// Totals over the measured window: everything after the warm-up.
    pub fn measured(&self) -> Measured {
        let mut m = self.totals();
        let Some(w) = self.window.as_deref() else {
            return m;
        };
        let b = &w.at;
        for (s, bs) in m.cpu_sym.iter_mut().zip(&b.cpu_sym) {
            s.iter_mut().zip(bs).for_each(|(x, y)| *x -= y);
        }
        let sub = |a: &mut [u64], b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x -= y);
        sub(&mut m.cpu_stall, &b.cpu_stall);
        sub(&mut m.cpu_user_xfer, &b.cpu_user_xfer);
        sub(&mut m.counters, &b.counters);
        sub(&mut m.mm_sched_callers, &b.mm_sched_callers);
        sub(&mut m.loc, &b.loc);
        m.completions -= b.completions;
        m
    }

    #[inline]
    pub fn charge(&mut self, cpu: usize, sym: Sym, ns: u64) {
        self.cpu_sym[cpu][sym as usize] += ns;
    }

    #[inline]
    pub fn stall(&mut self, cpu: usize, ns: u64) {
        self.cpu_stall[cpu] += ns;
    }

    #[inline]
    pub fn charge_stat(&mut self, cpu: usize, ns: u64) {
        self.cpu_user_xfer[cpu] += ns;
    }

    #[inline]
    pub fn count(&mut self, c: Counter) {
        self.counters[c as usize] += 1;
    }

    pub fn complete(&mut self, latency_ns: u64) {
        self.completions += 1;
        self.latency.record(latency_ns);
    }

    pub fn total(&self, sym: Sym) -> u64 {
        total(&self.cpu_sym, sym)
    }

    pub fn non_idle_ns(&self) -> u64 {
        non_idle_ns(&self.cpu_sym)
    }

    /// Closes one series interval (the caller has flushed open accounting up to `now`).
    pub fn sample(&mut self, now: u64) {
        let busy = self.non_idle_ns();
        let stall: u64 = self.cpu_stall.iter().sum();
        let all: u64 = self.cpu_sym.iter().map(|s| s.iter().sum::<u64>()).sum();
        let (t0, c0, b0, s0, a0) = self.last_sample;
        let dt = now.saturating_sub(t0).max(1);
        let (db, ds, da) = (
            busy.saturating_sub(b0),
            stall.saturating_sub(s0),
            all.saturating_sub(a0),
        );
        self.series.t_s.push(now as f64 / 1e9);
        self.series
            .throughput
            .push((self.completions - c0) as f64 * 1e9 / dt as f64);
        self.series.contention_pct.push(if db > 0 {
            ds as f64 * 100.0 / db as f64
        } else {
            0.0
        });
        self.series
            .utilization
            .push(if da > 0 { db as f64 / da as f64 } else { 0.0 });
        self.last_sample = (now, self.completions, busy, stall, all);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_quantile_lies_in_the_bucket_of_its_value() {
        let mut h = super::Histogram::default();
        for v in [2_560u64, 2_570, 2_600, 2_623, 2_700] {
            h.record(v);
        }
        let p50 = h.quantile(0.5);
        assert_eq!(super::Histogram::bucket_of(p50), (2_560, 2_624));
        assert_eq!(super::Histogram::bucket_of(2_623), (2_560, 2_624));
        assert_eq!(super::Histogram::bucket_of(31), (31, 32));
        assert_eq!(super::Histogram::bucket_of(63), (63, 64));
        assert_eq!(super::Histogram::bucket_of(127), (126, 128));
    }
}
