//! The NOHZ idle load balancer on the CPU that was kicked: nohz_csd_func (or the newidle path's
//! NOHZ_NEWILB_KICK), then _nohz_idle_balance() over the idle CPUs (update_nohz_stats, and a
//! sched_balance_domains(CPU_IDLE) pass for each CPU whose balance is due). The kick itself and the
//! `nohz` state are `nohz.rs`.

use super::nohz::{
    CPUS_PER_MASK_LINE, CsdStep, NOHZ_BALANCE_KICK, NOHZ_NEWILB_KICK, NOHZ_NEXT_KICK,
    NOHZ_STATS_KICK, NohzField,
};
use super::periodic::Walk;
use super::rq::RqLine;
use super::*;
use crate::coherence::LineId;

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
    /// The idle mask's line the walk read last.
    mask_line: Option<u32>,
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
            mask_line: None,
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

impl Engine {
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
                    // for_each_cpu_wrap(balance_cpu, nohz.idle_cpus_mask, this_cpu + 1)
                    while s.k as usize <= n {
                        let b = (c + s.k as usize) % n;
                        if !self.nohz.idle[b] {
                            s.k += 1;
                            continue;
                        }
                        if self.must_wait(c) {
                            return Some(s);
                        }
                        s.k += 1;
                        // the mask's words, one line per CPUS_PER_MASK_LINE CPUs, then
                        // idle_cpu(balance_cpu): its rq line
                        let m = b / CPUS_PER_MASK_LINE;
                        let mut ns = 0;
                        if s.mask_line != Some(m as u32) {
                            s.mask_line = Some(m as u32);
                            let line = self.nohz.mask_lines[m];
                            ns += self.ilb_load(c, line);
                        }
                        ns += self.rq_line_load(c, b, RqLine::Rq);
                        self.metrics.stall(c, ns);
                        self.kcharge(c, Sym::NohzIdleBalance, ns);
                        if !self.cpus[b].is_idle() {
                            continue;
                        }
                        if !self.cpus[c].is_idle() {
                            // this CPU got work: abort, leaving the flags for the next pass
                            s.has_blocked_load |= has(NOHZ_STATS_KICK);
                            s.phase = IlbPhase::Abort;
                            break;
                        }
                        self.kcharge(c, Sym::NohzIdleBalance, self.assume.sbd_level_ns);
                        if has(NOHZ_STATS_KICK) {
                            s.has_blocked_load |= self.update_nohz_stats(c, b);
                        }
                        let due = self.jiffies() >= self.cpus[b].balance.next_balance;
                        if due {
                            // rq_lock_irqsave(rq) + update_rq_clock(rq), stats-only kick too
                            let lock = if b != c { self.rq_lock_remote(c, b) } else { 0 };
                            self.kcharge(c, Sym::NohzIdleBalance, lock);
                        }
                        if has(NOHZ_BALANCE_KICK) && due {
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

    /// A load of a line by the ILB CPU at now (its cursor is now); returns the stall.
    fn ilb_load(&mut self, c: usize, line: LineId) -> u64 {
        if self.lines.load_hit(line, c, 0) {
            return crate::coherence::HIT_NS;
        }
        let a = self
            .lines
            .access(&self.topo, line, c, Op::Load, 0, self.now);
        a.done - self.now
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
mod tests;
