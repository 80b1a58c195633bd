//! Newidle balancing: sched_balance_newidle() when a CPU is about to go idle: the avg_idle gate,
//! the blocked-load update, one sched_balance_rq(CPU_NEWLY_IDLE) per domain within the cost
//! budget (update_newidle_cost), the optional serialization (serialize-newidle), and
//! nohz_newidle_balance(). On v6.19 and later (`Patches::merged`): no 3/2 cost bump
//! (d206fbad9328) and NI_RANDOM, proportional newidle balance (33cf66d88306).

use super::balance::IdleType;
use super::ilb::IlbState;
use super::*;
use crate::machine::domains::{SD_BALANCE_NEWIDLE, SD_SERIALIZE};

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
    /// NI_RANDOM's weight of a success at this level ((1024 + w/2)/w; 1 without NI_RANDOM).
    weight: u32,
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
            weight: 1,
        }
    }
}

impl Engine {
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
                        self.kcharge(
                            c,
                            Sym::SchedBalanceUpdateBlockedAverages,
                            self.assume.update_blocked_ns,
                        );
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
                    if self.patches.features.ni_random {
                        // NI_RANDOM (33cf66d88306, v6.19): throw a 1k-sided dice and balance
                        // this domain only at its success rate; a skip is not a break
                        let d1k = self.sched_rng_d1k(c);
                        let weight = 1 + self.cpus[c].balance.doms[level].newidle_ratio;
                        if d1k > weight {
                            self.update_newidle_stats(c, level, 0);
                            w.level += 1;
                            continue;
                        }
                        w.weight = (1024 + weight / 2) / weight;
                    }
                    self.metrics.count(Counter::NewidleBalances);
                    self.lb_stat(c, level, IdleType::NewlyIdle).lb_count += 1;
                    self.kcharge(c, Sym::SchedBalanceNewidle, self.assume.sbd_level_ns);
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
                    w.pulled = self.sched_balance_rq(c, c, level, IdleType::NewlyIdle) > 0;
                    w.phase = NewidlePhase::UpdateCost;
                }
                NewidlePhase::Cmpxchg => {
                    if !self.sbr_cmpxchg_issue(c, Sym::SchedBalanceNewidle) {
                        return Some(w);
                    }
                    w.phase = NewidlePhase::CmpxchgServed;
                }
                NewidlePhase::CmpxchgServed => {
                    let Some(won) = self.sbr_cmpxchg_served(c) else {
                        return Some(w);
                    };
                    if won {
                        w.held = true;
                        w.pulled = self.sched_balance_rq(c, c, level, IdleType::NewlyIdle) > 0;
                    }
                    w.phase = NewidlePhase::UpdateCost;
                }
                NewidlePhase::UpdateCost => {
                    if w.held {
                        if self.must_wait(c) {
                            return Some(w);
                        }
                        let visible = self.kstore(c, self.line_sbr, 0, Sym::SchedBalanceNewidle);
                        self.sbr.release(visible);
                        w.held = false;
                    }
                    // domain_cost = t1 - t0; curr_cost += domain_cost; t0 = t1
                    let t1 = self.cpus[c].exec.cursor;
                    let cost = t1 - w.started;
                    w.curr_cost += cost;
                    w.started = t1;
                    // v6.17-v6.18 (155213a2aed4): a pass that pulled nothing bumps the max by
                    // half; v6.19 reverted it (d206fbad9328)
                    let max = self.cpus[c].balance.doms[level].max_newidle_lb_cost;
                    let reverted = self.patches.merged.newidle_cost_bump_reverted;
                    let domain_cost = if w.pulled || reverted {
                        cost
                    } else {
                        3 * max / 2
                    };
                    // update_newidle_cost(sd, domain_cost, weight * !!pulled): the stats only
                    // for a non-zero cost
                    if self.patches.merged.ni_random && domain_cost != 0 {
                        self.update_newidle_stats(c, level, w.weight * u32::from(w.pulled));
                    }
                    self.update_newidle_cost(c, level, domain_cost);
                    w.level += 1;
                    w.phase = NewidlePhase::Level;
                }
            }
        }
    }
}
