//! Load balancing as the kernel loops: sched_balance_trigger → SCHED_SOFTIRQ →
//! sched_balance_domains (with the SD_SERIALIZE cmpxchg on `sched_balance_running` where each patch
//! variant puts it) → should_we_balance → sched_balance_rq; newidle balancing; the NOHZ
//! idle-load-balancer.

use super::nohz::{
    CsdStep, NOHZ_BALANCE_KICK, NOHZ_NEWILB_KICK, NOHZ_NEXT_KICK, NOHZ_STATS_KICK, NohzField,
};
use super::rq::RqLine;
use super::*;
use crate::domains::{SD_BALANCE_NEWIDLE, SD_SERIALIZE, SD_SHARE_CPUCAPACITY};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdleType {
    NotIdle,
    Idle,
    NewlyIdle,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Level,
    /// Issue the `sched_balance_running` cmpxchg (sched_balance_domains' place).
    Cmpxchg,
    /// The cmpxchg has been served: its outcome is the flag's value at that moment.
    CmpxchgServed,
    Balance,
    /// Issue the cmpxchg inside sched_balance_rq, after should_we_balance (serialize-after-swb).
    CmpxchgInRq,
    CmpxchgInRqServed,
    AfterBalance,
    Release,
    Track,
}

/// The global `sched_balance_running` flag. A cmpxchg compares against the value the line holds
/// when the cmpxchg is served; a release store takes effect when it commits (`Access::visible`).
#[derive(Default)]
pub(crate) struct SbrFlag {
    held: bool,
    /// When the holder's release store commits (it may still be waiting for the line).
    release_visible: Option<u64>,
}

impl SbrFlag {
    /// atomic_cmpxchg_acquire(&flag, 0, 1) served at `t`: true when it found 0 (and set it).
    fn try_acquire(&mut self, t: u64) -> bool {
        if self.release_visible.is_some_and(|v| v <= t) {
            self.release_visible = None;
            self.held = false;
        }
        !std::mem::replace(&mut self.held, true)
    }

    /// atomic_set_release(&flag, 0), committing at `visible`.
    fn release(&mut self, visible: u64) {
        debug_assert!(self.held && self.release_visible.is_none());
        self.release_visible = Some(visible);
    }
}

/// Per CPU and domain level: the mutable state of the CPU's sched_domain (the domain itself is
/// shared, immutable data in `SchedDomains`).
#[derive(Clone, Debug)]
pub(crate) struct DomainState {
    last_balance: u64,
    pub(super) balance_interval: u32,
    pub(super) nr_balance_failed: u32,
    pub(super) max_newidle_lb_cost: u64,
    /// sd->last_decay_max_lb_cost (jiffies).
    pub(super) last_decay: u64,
}

/// A CPU's balancing state: rq->next_balance and its domains' state, lowest level first.
pub(crate) struct BalanceState {
    /// rq->next_balance (jiffies).
    pub(super) next_balance: u64,
    pub(super) doms: Vec<DomainState>,
}

impl BalanceState {
    pub(super) fn new(sd: &SchedDomains, c: usize) -> Self {
        BalanceState {
            next_balance: 0,
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
        }
    }
}

/// sched_balance_domains() in progress for the run queue of `rq_cpu`.
pub(crate) struct Walk {
    rq_cpu: u32,
    idle: bool,
    busy: bool,
    level: u8,
    phase: Phase,
    continue_balancing: bool,
    next_balance: u64,
    update_next: bool,
    held: bool,
    due: bool,
    pulled: bool,
    need_decay: bool,
    interval: u64,
}

impl Walk {
    pub fn new(e: &Engine, rq_cpu: usize, idle: bool) -> Walk {
        Walk {
            rq_cpu: rq_cpu as u32,
            idle,
            busy: !idle,
            level: 0,
            phase: Phase::Level,
            continue_balancing: true,
            next_balance: e.jiffies() + 60 * e.hz as u64,
            update_next: false,
            held: false,
            due: false,
            pulled: false,
            need_decay: false,
            interval: 0,
        }
    }
}

/// What the idle load balancer does next: receive the kick (nohz_csd_func), or for the newidle
/// path flag and take NOHZ_NEWILB_KICK; then _nohz_idle_balance().
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IlbPhase {
    /// flush_smp_call_function_queue: llist_del_all of the call_single_queue.
    Queue,
    /// nohz_csd_func: take the flags; raise SCHED_SOFTIRQ if still idle.
    Flags,
    /// nohz_newidle_balance: read nohz.has_blocked / next_blocked.
    NewilbRead,
    /// `atomic_or(NOHZ_NEWILB_KICK, nohz_flags(this_cpu))`.
    NewilbOr,
    /// nohz_run_idle_balance at do_idle: `atomic_fetch_andnot(NOHZ_NEWILB_KICK, ...)`.
    NewilbTake,
    /// `nohz.has_blocked = 0` (STATS) / `nohz.needs_update = 0` (NEXT).
    Clear,
    ClearNext,
    /// for_each_cpu_wrap over the mask: update_nohz_stats, sched_balance_domains(CPU_IDLE).
    Cpus,
    /// The ILB CPU got work: restore needs_update.
    Abort,
    NextBalance,
    NextBlocked,
    /// `nohz.has_blocked = 1` if a CPU still has blocked load.
    HasBlocked,
}

/// _nohz_idle_balance() in progress (with the kick's receipt before it).
pub(crate) struct IlbState {
    flags: u8,
    phase: IlbPhase,
    /// for_each_cpu_wrap(…, this_cpu + 1): the offset of the next CPU to look at (1..=nr_cpus).
    k: u32,
    /// jiffies at the start of the pass.
    start: u64,
    next_balance: u64,
    updated: bool,
    has_blocked_load: bool,
    /// The CPU whose sched_balance_domains is `walk`.
    walking: u32,
    walk: Option<Walk>,
}

impl IlbState {
    fn with(flags: u8, phase: IlbPhase) -> IlbState {
        IlbState {
            flags,
            phase,
            k: 1,
            start: 0,
            next_balance: 0,
            updated: false,
            has_blocked_load: false,
            walking: 0,
            walk: None,
        }
    }

    /// An ILB kicked by IPI (kick_ilb).
    pub fn kicked(flags: u8) -> IlbState {
        IlbState::with(flags, IlbPhase::Queue)
    }

    /// nohz_newidle_balance → nohz_run_idle_balance: a local blocked-load update, no IPI.
    pub fn newidle() -> IlbState {
        IlbState::with(NOHZ_STATS_KICK, IlbPhase::NewilbRead)
    }
}

/// What a newidle walk does next at its current level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NewidlePhase {
    /// The loop head: stop (pulled, gated, out of budget, no levels left) or balance this level.
    Level,
    /// serialize-newidle: issue the `sched_balance_running` cmpxchg.
    Cmpxchg,
    /// It has been served: balance this level if it found the flag free.
    CmpxchgServed,
    /// Balance this level (sched_balance_rq as CPU_NEWLY_IDLE).
    Balance,
    /// Release `sched_balance_running` if held, then update_newidle_cost() and go to the next level.
    UpdateCost,
}

/// sched_balance_newidle() in progress.
pub(crate) struct NewidleWalk {
    level: u8,
    phase: NewidlePhase,
    curr_cost: u64,
    started: u64,
    next_balance: u64,
    held: bool,
    pulled: bool,
    /// sched_balance_update_blocked_averages has run (once, past the gate).
    blocked_done: bool,
}

impl NewidleWalk {
    pub fn new(e: &Engine) -> NewidleWalk {
        NewidleWalk {
            level: 0,
            phase: NewidlePhase::Level,
            curr_cost: 0,
            started: 0,
            next_balance: e.jiffies() + e.hz as u64,
            held: false,
            pulled: false,
            blocked_done: false,
        }
    }
}

impl Engine {
    fn dom(&self, cpu: usize, level: usize) -> &crate::domains::Domain {
        &self.sd.domains[self.sd.per_cpu[cpu][level] as usize]
    }

    /// get_sd_balance_interval(): ms → jiffies, ×busy_factor (−1 to de-phase levels) when busy.
    fn balance_interval(&self, cpu: usize, level: usize, busy: bool) -> u64 {
        let ms = self.cpus[cpu].balance.doms[level].balance_interval as u64;
        let j = if busy {
            let busy_factor = self.dom(cpu, level).busy_factor as u64;
            self.ms_to_jiffies(ms * busy_factor).saturating_sub(1)
        } else {
            self.ms_to_jiffies(ms)
        };
        j.clamp(1, self.max_load_balance_interval)
    }

    /// update_newidle_cost(sd, cost) (v6.18): a higher cost becomes the max, capped at
    /// sysctl_sched_migration_cost + 200 (155213a2aed4, v6.17-v6.18); otherwise the max decays by
    /// 253/256 when a second has passed since the last raise or decay. True when it decayed.
    pub(super) fn update_newidle_cost(&mut self, cpu: usize, level: usize, cost: u64) -> bool {
        let (jiffies, hz) = (self.jiffies(), self.hz as u64);
        let d = &mut self.cpus[cpu].balance.doms[level];
        if cost > d.max_newidle_lb_cost {
            d.max_newidle_lb_cost = cost.min(MIGRATION_COST_NS + 200);
            d.last_decay = jiffies;
        } else if jiffies > d.last_decay + hz {
            d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
            d.last_decay = jiffies;
            return true;
        }
        false
    }

    /// The end of sched_balance_domains: rq->next_balance, and after a decay
    /// rq->max_idle_balance_cost = max(sysctl_sched_migration_cost, Σ max_newidle_lb_cost).
    fn balance_domains_done(&mut self, rq: usize, w: &Walk) {
        if w.update_next {
            self.cpus[rq].balance.next_balance = w.next_balance;
        }
        if w.need_decay {
            // every level was visited (a walk stops early only without a decay)
            let sum: u64 = self.cpus[rq]
                .balance
                .doms
                .iter()
                .map(|d| d.max_newidle_lb_cost)
                .sum();
            self.cpus[rq].idle.max_idle_balance_cost = sum.max(MIGRATION_COST_NS);
        }
    }

    pub(super) fn step_balance(&mut self, c: usize, mut w: Walk) -> Option<Walk> {
        let rq = w.rq_cpu as usize;
        let nlev = self.cpus[rq].balance.doms.len();
        loop {
            let level = w.level as usize;
            match w.phase {
                Phase::Level => {
                    if level >= nlev {
                        self.balance_domains_done(rq, &w);
                        return None;
                    }
                    // need_decay = update_newidle_cost(sd, 0): a regular visit to every domain
                    w.need_decay = self.update_newidle_cost(rq, level, 0);
                    if !w.continue_balancing {
                        // should_we_balance failed below: go on only to decay the upper levels
                        if w.need_decay {
                            w.level += 1;
                            continue;
                        }
                        self.balance_domains_done(rq, &w);
                        return None;
                    }
                    w.interval = self.balance_interval(rq, level, w.busy);
                    w.due = self.jiffies()
                        >= self.cpus[rq].balance.doms[level].last_balance + w.interval;
                    self.kcharge(c, Sym::SchedBalanceDomains, SBD_LEVEL_NS);
                    let serialize = self.dom(rq, level).has(SD_SERIALIZE);
                    if serialize {
                        self.metrics.count(Counter::SerializeVisits);
                        if w.due {
                            self.metrics.count(Counter::SerializeDueVisits);
                        }
                    }
                    let p = self.patches;
                    w.phase = if p.serialize_after_swb || !serialize {
                        // serialization (if any) happens inside sched_balance_rq
                        if w.due { Phase::Balance } else { Phase::Track }
                    } else if p.skip_not_due {
                        if w.due { Phase::Cmpxchg } else { Phase::Track }
                    } else {
                        // pre-fix: cmpxchg on every visit of an SD_SERIALIZE level, due or not
                        Phase::Cmpxchg
                    };
                }
                Phase::Cmpxchg => {
                    self.drain_store_buffer(c, Sym::SchedBalanceDomains);
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    self.sbr_cmpxchg(c, Sym::SchedBalanceDomains);
                    w.phase = Phase::CmpxchgServed;
                }
                Phase::CmpxchgServed => {
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    if !self.sbr_cmpxchg_succeeded(c) {
                        w.phase = Phase::Track; // goto out: skip this level
                        continue;
                    }
                    w.held = true;
                    if !self.patches.skip_not_due {
                        // pre-fix: the interval check comes after the cmpxchg, reading jiffies_64
                        self.kaccess(c, self.line_jiffies, Op::Load, 0, Sym::SchedBalanceDomains);
                        w.due = self.jiffies()
                            >= self.cpus[rq].balance.doms[level].last_balance + w.interval;
                    }
                    w.phase = if w.due {
                        Phase::Balance
                    } else {
                        Phase::Release
                    };
                }
                Phase::Balance => {
                    // the rq lines are read at this CPU's time
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    self.metrics.count(Counter::Balances);
                    let it = if w.idle {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    self.lb_stat(rq, level, it).lb_count += 1;
                    if !self.should_we_balance(c, rq, level, it) {
                        w.continue_balancing = false;
                        self.out_balanced(rq, level, it);
                        w.phase = Phase::AfterBalance;
                    } else if self.patches.serialize_after_swb
                        && self.dom(rq, level).has(SD_SERIALIZE)
                        && !w.held
                    {
                        w.phase = Phase::CmpxchgInRq;
                    } else {
                        w.pulled = self.balance_core(c, rq, level, it) > 0;
                        w.phase = Phase::AfterBalance;
                    }
                }
                Phase::CmpxchgInRq => {
                    self.drain_store_buffer(c, Sym::SchedBalanceRq);
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    self.sbr_cmpxchg(c, Sym::SchedBalanceRq);
                    w.phase = Phase::CmpxchgInRqServed;
                }
                Phase::CmpxchgInRqServed => {
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    let it = if w.idle {
                        IdleType::Idle
                    } else {
                        IdleType::NotIdle
                    };
                    if self.sbr_cmpxchg_succeeded(c) {
                        w.held = true;
                        w.pulled = self.balance_core(c, rq, level, it) > 0;
                    } else {
                        self.out_balanced(rq, level, it);
                    }
                    w.phase = Phase::AfterBalance;
                }
                Phase::AfterBalance => {
                    if w.pulled {
                        w.idle = self.cpus[rq].is_idle();
                        w.busy = !w.idle;
                        w.pulled = false;
                    }
                    self.cpus[rq].balance.doms[level].last_balance = self.jiffies();
                    w.interval = self.balance_interval(rq, level, w.busy);
                    w.phase = if w.held { Phase::Release } else { Phase::Track };
                }
                Phase::Release => {
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    let sym = if self.patches.serialize_after_swb {
                        Sym::SchedBalanceRq
                    } else {
                        Sym::SchedBalanceDomains
                    };
                    let a = self.kaccess(c, self.line_sbr, Op::Store, 0, sym);
                    self.sbr.release(a.visible);
                    w.held = false;
                    w.phase = Phase::Track;
                }
                Phase::Track => {
                    let nb = self.cpus[rq].balance.doms[level].last_balance + w.interval;
                    if w.next_balance > nb {
                        w.next_balance = nb;
                        w.update_next = true;
                    }
                    w.level += 1;
                    w.phase = Phase::Level;
                }
            }
        }
    }

    /// atomic_cmpxchg_acquire(&sched_balance_running, 0, 1) issued through the cache-line model;
    /// its outcome is decided when it has been served (`sbr_cmpxchg_succeeded`, at the cursor).
    fn sbr_cmpxchg(&mut self, c: usize, sym: Sym) {
        self.metrics.count(Counter::SbrCmpxchg);
        self.kaccess(c, self.line_sbr, Op::Atomic, 0, sym);
    }

    /// The outcome of the cmpxchg just served (now is its completion): the value the line holds.
    fn sbr_cmpxchg_succeeded(&mut self, c: usize) -> bool {
        let won = self.sbr.try_acquire(self.now);
        if !won {
            self.metrics.count(Counter::SbrCmpxchgFailed);
            self.trace_instant(c, "cmpxchg sched_balance_running failed");
        }
        won
    }

    /// out_balanced: clear nr_balance_failed; a periodic pass doubles balance_interval up to max.
    pub(super) fn out_balanced(&mut self, cpu: usize, level: usize, it: IdleType) {
        self.lb_stat(cpu, level, it).lb_balanced += 1;
        let max = self.dom(cpu, level).max_interval;
        let d = &mut self.cpus[cpu].balance.doms[level];
        d.nr_balance_failed = 0;
        if it != IdleType::NewlyIdle && d.balance_interval < max {
            d.balance_interval *= 2;
        }
    }

    fn cpu_idle(&self, c: usize) -> bool {
        self.cpus[c].is_idle()
    }

    /// should_we_balance(): newidle always; otherwise only the first idle CPU (on an idle core) of
    /// the local group's balance mask, else the group's first CPU.
    fn should_we_balance(&mut self, exec: usize, dst: usize, level: usize, it: IdleType) -> bool {
        if it == IdleType::NewlyIdle {
            return self.cpus[dst].rq.queued.is_empty() && self.cpus[dst].rq.curr.is_none();
        }
        let d = self.dom(dst, level);
        let g = &d.groups[0];
        let share_cap = d.has(SD_SHARE_CPUCAPACITY);
        let mut idle_smt: Option<u32> = None;
        let mut checked = 0;
        let mut verdict = None;
        for &cpu in &g.balance_cpus {
            checked += 1;
            if !self.cpu_idle(cpu as usize) {
                continue;
            }
            if !share_cap
                && !self
                    .topo
                    .smt_siblings(cpu as usize)
                    .all(|s| self.cpu_idle(s))
            {
                idle_smt.get_or_insert(cpu);
                continue;
            }
            verdict = Some(cpu as usize == dst);
            break;
        }
        let first = g.balance_cpus[0] as usize;
        let v = verdict.unwrap_or_else(|| idle_smt.map_or(first == dst, |s| s as usize == dst));
        // idle_cpu() of each CPU looked at: a load of its rq line
        let (mut sum, mut max) = (0u64, 0u64);
        for k in 0..checked {
            let cpu = self.dom(dst, level).groups[0].balance_cpus[k] as usize;
            let ns = self.rq_line_load(exec, cpu, RqLine::Rq);
            sum += ns;
            max = max.max(ns);
        }
        self.charge_loads(exec, Sym::SchedBalanceRq, sum, max);
        v
    }

    // ---- newidle -----------------------------------------------------------------------------

    /// update_next_balance(): the idle interval of a domain pulls next_balance in.
    fn update_next_balance(&self, cpu: usize, level: usize, next: &mut u64) {
        let nb = self.cpus[cpu].balance.doms[level].last_balance
            + self.balance_interval(cpu, level, false);
        if *next > nb {
            *next = nb;
        }
    }

    pub(super) fn step_newidle(&mut self, c: usize, mut w: NewidleWalk) -> Option<NewidleWalk> {
        let nlev = self.cpus[c].balance.doms.len();
        loop {
            let level = w.level as usize;
            match w.phase {
                NewidlePhase::Level => {
                    let gate = level == 0
                        && (!self.rd_overloaded
                            || self.cpus[c].idle.avg_idle
                                < self.cpus[c]
                                    .balance
                                    .doms
                                    .first()
                                    .map_or(0, |d| d.max_newidle_lb_cost));
                    if level >= nlev || gate || !self.cpus[c].rq.queued.is_empty() || w.pulled {
                        if gate && nlev > 0 {
                            let mut nb = w.next_balance;
                            self.update_next_balance(c, 0, &mut nb);
                            w.next_balance = nb;
                        }
                        if self.cpus[c].balance.next_balance > w.next_balance {
                            self.cpus[c].balance.next_balance = w.next_balance;
                        }
                        if w.curr_cost > self.cpus[c].idle.max_idle_balance_cost {
                            self.cpus[c].idle.max_idle_balance_cost = w.curr_cost;
                        }
                        // nohz_newidle_balance(): nothing pulled and a long expected idle: the
                        // idle CPUs' blocked load may be updated locally before idling
                        let cpu = &mut self.cpus[c];
                        if !w.pulled
                            && cpu.rq.queued.is_empty()
                            && cpu.idle.avg_idle >= MIGRATION_COST_NS
                        {
                            let job = Job::Ilb(Box::new(IlbState::newidle()));
                            cpu.exec.jobs.push_back(job);
                        }
                        return None;
                    }
                    if !w.blocked_done {
                        // past the gate: t0, then the local blocked averages (their cost goes to
                        // the first domain's)
                        w.blocked_done = true;
                        w.started = self.cpus[c].exec.cursor;
                        self.sched_balance_update_blocked_averages(c);
                        self.kcharge(c, Sym::SchedBalanceUpdateBlockedAverages, UPDATE_BLOCKED_NS);
                    }
                    let mut nb = w.next_balance;
                    self.update_next_balance(c, level, &mut nb);
                    w.next_balance = nb;
                    if self.cpus[c].idle.avg_idle
                        < w.curr_cost + self.cpus[c].balance.doms[level].max_newidle_lb_cost
                    {
                        // break: the next loop head finds no level left
                        w.level = nlev as u8;
                        continue;
                    }
                    if !self.dom(c, level).has(SD_BALANCE_NEWIDLE) {
                        w.level += 1;
                        continue;
                    }
                    self.metrics.count(Counter::NewidleBalances);
                    self.lb_stat(c, level, IdleType::NewlyIdle).lb_count += 1;
                    self.kcharge(c, Sym::SchedBalanceNewidle, SBD_LEVEL_NS);
                    if self.patches.serialize_newidle && self.dom(c, level).has(SD_SERIALIZE) {
                        w.phase = NewidlePhase::Cmpxchg;
                    } else {
                        w.phase = NewidlePhase::Balance;
                    }
                }
                NewidlePhase::Balance => {
                    // the rq lines are read at this CPU's time
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    w.pulled = self.balance_core(c, c, level, IdleType::NewlyIdle) > 0;
                    w.phase = NewidlePhase::UpdateCost;
                }
                NewidlePhase::Cmpxchg => {
                    self.drain_store_buffer(c, Sym::SchedBalanceNewidle);
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    self.sbr_cmpxchg(c, Sym::SchedBalanceNewidle);
                    w.phase = NewidlePhase::CmpxchgServed;
                }
                NewidlePhase::CmpxchgServed => {
                    if self.must_wait(c) {
                        return Some(w);
                    }
                    if self.sbr_cmpxchg_succeeded(c) {
                        w.held = true;
                        w.pulled = self.balance_core(c, c, level, IdleType::NewlyIdle) > 0;
                    }
                    w.phase = NewidlePhase::UpdateCost;
                }
                NewidlePhase::UpdateCost => {
                    if w.held {
                        if self.must_wait(c) {
                            return Some(w);
                        }
                        let a =
                            self.kaccess(c, self.line_sbr, Op::Store, 0, Sym::SchedBalanceNewidle);
                        self.sbr.release(a.visible);
                        w.held = false;
                    }
                    // domain_cost = t1 - t0; curr_cost += domain_cost; t0 = t1
                    let t1 = self.cpus[c].exec.cursor;
                    let cost = t1 - w.started;
                    w.curr_cost += cost;
                    w.started = t1;
                    // v6.17-v6.18 (155213a2aed4): a pass that pulled nothing bumps the max by half
                    let max = self.cpus[c].balance.doms[level].max_newidle_lb_cost;
                    let domain_cost = if w.pulled { cost } else { 3 * max / 2 };
                    self.update_newidle_cost(c, level, domain_cost);
                    w.level += 1;
                    w.phase = NewidlePhase::Level;
                }
            }
        }
    }

    // ---- NOHZ idle load balancer ----------------------------------------------------------

    /// The idle load balancer on CPU `c`: nohz_csd_func (or the newidle path's NOHZ_NEWILB_KICK),
    /// then _nohz_idle_balance(): clear has_blocked / needs_update, walk the idle CPUs from c+1
    /// (update_nohz_stats with STATS, sched_balance_domains(CPU_IDLE) when due with BALANCE),
    /// collate their next_balance, and store nohz.next_balance / next_blocked / has_blocked.
    pub(super) fn step_ilb(&mut self, c: usize, mut s: Box<IlbState>) -> Option<Box<IlbState>> {
        let n = self.cpus.len();
        loop {
            let atomic = matches!(
                s.phase,
                IlbPhase::Queue | IlbPhase::NewilbOr | IlbPhase::NewilbTake
            );
            if atomic {
                self.drain_store_buffer(c, Sym::NohzIdleBalance);
            }
            if s.phase != IlbPhase::Cpus && self.must_wait(c) {
                return Some(s);
            }
            let flags = s.flags;
            let has = |f: u8| flags & f != 0;
            match s.phase {
                IlbPhase::Queue => {
                    self.nohz_csd_func(c, CsdStep::Queue);
                    s.phase = IlbPhase::Flags;
                }
                IlbPhase::Flags => {
                    let flags = self.nohz_csd_func(c, CsdStep::Flags).unwrap_or(0);
                    // rq->idle_balance = idle_cpu(cpu): only an idle CPU raises the softirq
                    if flags == 0 || !self.cpus[c].is_idle() {
                        return None;
                    }
                    s.flags = flags;
                    s.phase = IlbPhase::Clear;
                }
                IlbPhase::NewilbRead => {
                    let (line, f) = self.nohz_line_field(NohzField::HasBlocked);
                    self.kaccess(c, line, Op::Load, f, Sym::SchedBalanceNewidle);
                    let n = &self.nohz;
                    if !n.has_blocked || self.jiffies() < n.next_blocked {
                        return None;
                    }
                    s.phase = IlbPhase::NewilbOr;
                }
                IlbPhase::NewilbOr => {
                    let line = self.nohz_flags_line(c);
                    self.kaccess(c, line, Op::Atomic, 0, Sym::SchedBalanceNewidle);
                    self.nohz.nohz_flags[c] |= NOHZ_NEWILB_KICK;
                    s.phase = IlbPhase::NewilbTake;
                }
                IlbPhase::NewilbTake => {
                    let line = self.nohz_flags_line(c);
                    self.kaccess(c, line, Op::Atomic, 0, Sym::NohzIdleBalance);
                    let old = self.nohz.nohz_flags[c];
                    self.nohz.nohz_flags[c] &= !NOHZ_NEWILB_KICK;
                    // only when no SCHED_SOFTIRQ kick is pending and nothing is to run
                    if old != NOHZ_NEWILB_KICK || !self.cpus[c].is_idle() {
                        return None;
                    }
                    s.phase = IlbPhase::Clear;
                }
                IlbPhase::Clear => {
                    s.start = self.jiffies();
                    s.next_balance = s.start + 60 * self.hz as u64;
                    if has(NOHZ_STATS_KICK) {
                        self.nohz_store(c, NohzField::HasBlocked);
                        self.nohz.has_blocked = false;
                        s.phase = IlbPhase::ClearNext;
                    } else {
                        s.phase = IlbPhase::ClearNext;
                        continue;
                    }
                }
                IlbPhase::ClearNext => {
                    if has(NOHZ_NEXT_KICK) {
                        self.nohz_store(c, NohzField::NeedsUpdate);
                        self.nohz.needs_update = false;
                    }
                    s.phase = IlbPhase::Cpus;
                }
                IlbPhase::Cpus => {
                    if let Some(w) = s.walk.take() {
                        s.walk = self.step_balance(c, w);
                        if s.walk.is_some() {
                            return Some(s);
                        }
                        let b = s.walking as usize;
                        self.ilb_collate(&mut s, b);
                    }
                    while s.k as usize <= n {
                        let b = (c + s.k as usize) % n;
                        s.k += 1;
                        if !self.nohz.idle[b] || !self.cpus[b].is_idle() {
                            continue;
                        }
                        if !self.cpus[c].is_idle() {
                            // this CPU got work: abort, leaving the flags for the next pass
                            s.has_blocked_load |= has(NOHZ_STATS_KICK);
                            s.phase = IlbPhase::Abort;
                            break;
                        }
                        self.kcharge(c, Sym::NohzIdleBalance, SBD_LEVEL_NS);
                        if has(NOHZ_STATS_KICK) {
                            s.has_blocked_load |= self.update_nohz_stats(c, b);
                        }
                        if has(NOHZ_BALANCE_KICK)
                            && self.jiffies() >= self.cpus[b].balance.next_balance
                        {
                            s.walking = b as u32;
                            s.walk = Some(Walk::new(self, b, true));
                            return Some(s);
                        }
                        self.ilb_collate(&mut s, b);
                    }
                    if s.phase == IlbPhase::Cpus {
                        s.phase = IlbPhase::NextBalance;
                    }
                }
                IlbPhase::Abort => {
                    if has(NOHZ_NEXT_KICK) {
                        self.nohz_store(c, NohzField::NeedsUpdate);
                        self.nohz.needs_update = true;
                    }
                    s.phase = IlbPhase::HasBlocked;
                }
                IlbPhase::NextBalance => {
                    if s.updated {
                        self.nohz_store(c, NohzField::NextBalance);
                        self.nohz.next_balance = s.next_balance;
                    }
                    s.phase = IlbPhase::NextBlocked;
                }
                IlbPhase::NextBlocked => {
                    if has(NOHZ_STATS_KICK) {
                        self.nohz_store(c, NohzField::NextBlocked);
                        self.nohz.next_blocked = s.start + self.load_avg_period_jiffies();
                    }
                    s.phase = IlbPhase::HasBlocked;
                }
                IlbPhase::HasBlocked => {
                    if s.has_blocked_load {
                        self.nohz_store(c, NohzField::HasBlocked);
                        self.nohz.has_blocked = true;
                    }
                    return None;
                }
            }
        }
    }

    /// `next_balance = min(next_balance, rq->next_balance)` for a visited idle CPU.
    fn ilb_collate(&self, s: &mut IlbState, b: usize) {
        let nb = self.cpus[b].balance.next_balance;
        if s.next_balance > nb {
            s.next_balance = nb;
            s.updated = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SbrFlag;
    use crate::coherence::{Coherence, Op};
    use crate::topology::{Topology, preset};

    /// k CPUs try the free flag at once: the first served wins. Its release, issued `after` ns
    /// after its cmpxchg completes, commits in place inside the hold window, and the next served
    /// cmpxchg wins; outside the window the release queues behind every waiter, and all fail.
    #[test]
    fn kth_of_k_cmpxchgs_on_a_free_flag_and_the_release() {
        let t = Topology::new(preset("gnr-2s-snc3").unwrap()).unwrap();
        const HOLD: u64 = 20;
        for (after, next_wins) in [(2, true), (HOLD + 5, false)] {
            let mut c = Coherence::new(&t);
            c.set_rmw_hold_ns(HOLD);
            let l = c.add_line("sched_balance_running", &[(0, "sched_balance_running")]);
            let mut flag = SbrFlag::default();
            let served: Vec<u64> = (0..8)
                .map(|cpu| c.access(&t, l, cpu, Op::Atomic, 0, 1000).done)
                .collect();
            assert!(
                flag.try_acquire(served[0]),
                "the first served finds it free"
            );
            let rel = c.access(&t, l, 0, Op::Store, 0, served[0] + after);
            flag.release(rel.visible);
            let won: Vec<bool> = served[1..].iter().map(|&s| flag.try_acquire(s)).collect();
            let mut want = vec![false; 7];
            want[0] = next_wins;
            assert_eq!(won, want, "release {after} ns after the cmpxchg");
        }
    }
}

#[cfg(test)]
mod decay_tests_support {
    use super::*;
    use crate::sched::rq::tests::engine_smt;

    /// Two cores of two SMT threads (levels SMT and MC), one spinner on CPU 0, run past 1 s to
    /// between two ticks; every level's max_newidle_lb_cost set to `max`.
    pub(super) fn two_levels(max: u64) -> Engine {
        let mut e = engine_smt(2, 2, 1);
        e.run_until(1_100_500_000, u64::MAX);
        for c in 0..4 {
            for d in e.cpus[c].balance.doms.iter_mut() {
                d.max_newidle_lb_cost = max;
            }
        }
        assert_eq!(e.cpus[1].balance.doms.len(), 2);
        e
    }

    /// sched_balance_newidle on `c`, stepped to its end (its cursor is time).
    pub(super) fn run_newidle(e: &mut Engine, c: usize) {
        e.enter_kernel(c);
        let mut w = NewidleWalk::new(e);
        loop {
            e.now = e.now.max(e.cpus[c].exec.cursor);
            match e.step_newidle(c, w) {
                Some(next) => w = next,
                None => return,
            }
        }
    }
}

#[cfg(test)]
mod decay_tests {
    use super::decay_tests_support::*;
    use super::*;

    #[test]
    fn update_newidle_cost_raises_to_a_capped_max_and_decays_once_a_second() {
        let mut e = two_levels(1000);
        let j = e.jiffies();
        e.cpus[1].balance.doms[0].last_decay = j;
        assert!(!e.update_newidle_cost(1, 0, 2000));
        assert_eq!(e.cpus[1].balance.doms[0].max_newidle_lb_cost, 2000);
        assert!(!e.update_newidle_cost(1, 0, 10_000_000));
        assert_eq!(e.cpus[1].balance.doms[0].max_newidle_lb_cost, 500_200);
        assert!(!e.update_newidle_cost(1, 0, 0), "decayed less than HZ ago");
        e.cpus[1].balance.doms[0].last_decay = j - e.hz as u64 - 1;
        assert!(e.update_newidle_cost(1, 0, 0));
        let d = &e.cpus[1].balance.doms[0];
        assert_eq!(
            (d.max_newidle_lb_cost, d.last_decay),
            (500_200 * 253 / 256, j)
        );
    }

    fn run_walk(e: &mut Engine, c: usize, mut w: Walk) {
        loop {
            e.now = e.now.max(e.cpus[c].exec.cursor);
            match e.step_balance(c, w) {
                Some(next) => w = next,
                None => return,
            }
        }
    }

    /// sched_balance_domains after a failed should_we_balance: it keeps visiting the levels
    /// while each one decays (and then resets max_idle_balance_cost from the sum), and stops at
    /// the first level that does not.
    #[test]
    fn the_periodic_walk_keeps_visiting_upper_levels_to_decay_them() {
        let decayed = 1000 * 253 / 256;
        for (first_due, want) in [(true, [decayed, decayed]), (false, [1000, 1000])] {
            let mut e = two_levels(1000);
            let j = e.jiffies();
            for d in e.cpus[1].balance.doms.iter_mut() {
                d.last_decay = 0;
            }
            if !first_due {
                e.cpus[1].balance.doms[0].last_decay = j;
            }
            let mut w = Walk::new(&e, 1, true);
            w.continue_balancing = false;
            run_walk(&mut e, 1, w);
            let got: Vec<u64> = e.cpus[1]
                .balance
                .doms
                .iter()
                .map(|d| d.max_newidle_lb_cost)
                .collect();
            assert_eq!(got, want, "level 0 due: {first_due}");
            let cost = e.cpus[1].idle.max_idle_balance_cost;
            assert_eq!(cost, MIGRATION_COST_NS, "max(migration_cost, Σ)");
        }
    }

    /// v6.18 newidle: past the gate, the blocked averages are updated first; a level that pulls
    /// nothing bumps its max_newidle_lb_cost by half (capped at migration_cost + 200), so a
    /// failing newidle never decays its costs (only the periodic walk does).
    #[test]
    fn a_failed_newidle_pass_bumps_every_level_it_visits() {
        for (max, want) in [(1000, 1500), (400_000, 500_200)] {
            let mut e = two_levels(max);
            e.rd_overloaded = true;
            e.cpus[1].idle.avg_idle = 10_000_000;
            for d in e.cpus[1].balance.doms.iter_mut() {
                d.last_decay = 0; // a decay is due: the bump still wins
            }
            let tick = e.cpus[1].rq.last_blocked_load_update_tick;
            run_newidle(&mut e, 1);
            assert!(e.cpus[1].is_idle(), "nothing to pull");
            let got: Vec<u64> = e.cpus[1]
                .balance
                .doms
                .iter()
                .map(|d| d.max_newidle_lb_cost)
                .collect();
            assert_eq!(got, vec![want, want], "max {max}");
            assert_eq!(e.cpus[1].rq.last_blocked_load_update_tick, e.jiffies());
            assert!(tick < e.jiffies());
        }
    }
}

#[cfg(test)]
mod newilb_tests {
    use super::decay_tests_support::*;
    use super::*;

    /// nohz_newidle_balance → nohz_run_idle_balance: a newidle pass that pulls nothing, with a
    /// long expected idle and the idle CPUs' blocked load due, flags NOHZ_NEWILB_KICK on its own
    /// rq and runs the stats pass itself before idling: no IPI, nohz.next_blocked moves on, an
    /// idle CPU's blocked load decays. With a short expected idle it does not.
    #[test]
    fn a_long_newidle_runs_the_blocked_load_update_locally() {
        for (avg_idle, runs) in [(10_000_000, true), (MIGRATION_COST_NS - 1, false)] {
            let mut e = two_levels(0);
            e.nohz.has_blocked = true;
            e.nohz.next_blocked = 0;
            e.nohz.idle[3] = true;
            let mut avg = e.cpus[0].rq.avg;
            avg.last_update_time -= 2_000_000;
            e.cpus[3].rq.avg = avg;
            e.cpus[3].rq.has_blocked_load = true;
            e.cpus[1].idle.avg_idle = avg_idle;
            let kicks = e.metrics.counters[Counter::IlbKicks as usize];
            run_newidle(&mut e, 1);
            let job = e.cpus[1].exec.jobs.pop_front();
            assert_eq!(job.is_some(), runs, "avg_idle {avg_idle}");
            let Some(Job::Ilb(mut s)) = job else {
                continue;
            };
            loop {
                e.now = e.now.max(e.cpus[1].exec.cursor);
                match e.step_ilb(1, s) {
                    Some(next) => s = next,
                    None => break,
                }
            }
            let j = e.jiffies();
            assert_eq!(e.metrics.counters[Counter::IlbKicks as usize], kicks);
            assert_eq!(e.nohz.nohz_flags[1], 0);
            assert_eq!(e.nohz.next_blocked, j + e.ms_to_jiffies(32));
            assert_eq!(e.cpus[3].rq.last_blocked_load_update_tick, j);
            assert!(e.cpus[3].rq.avg.load_avg < avg.load_avg);
        }
    }
}
