//! The periodic balance: sched_balance_domains() for one run queue, level by level, with the
//! SD_SERIALIZE cmpxchg on `sched_balance_running` where each patch variant puts it, the interval
//! check, should_we_balance and sched_balance_rq; also run by the idle load balancer for each idle
//! CPU that is due.

use super::balance::IdleType;
use super::*;
use crate::machine::domains::SD_SERIALIZE;

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

/// sched_balance_domains() in progress for the run queue of `rq_cpu`.
pub(crate) struct Walk {
    rq_cpu: u32,
    idle: bool,
    busy: bool,
    level: u8,
    phase: Phase,
    pub(super) continue_balancing: bool,
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

impl Engine {
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
                    w.interval = self.get_sd_balance_interval(rq, level, w.busy);
                    w.due = self.jiffies()
                        >= self.cpus[rq].balance.doms[level].last_balance + w.interval;
                    self.kcharge(c, Sym::SchedBalanceDomains, self.assume.sbd_level_ns);
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
                    if !self.sbr_cmpxchg_issue(c, Sym::SchedBalanceDomains) {
                        return Some(w);
                    }
                    w.phase = Phase::CmpxchgServed;
                }
                Phase::CmpxchgServed => {
                    let Some(won) = self.sbr_cmpxchg_served(c) else {
                        return Some(w);
                    };
                    if !won {
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
                    let it = IdleType::of(w.idle);
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
                        w.pulled = self.sched_balance_rq(c, rq, level, it) > 0;
                        w.phase = Phase::AfterBalance;
                    }
                }
                Phase::CmpxchgInRq => {
                    if !self.sbr_cmpxchg_issue(c, Sym::SchedBalanceRq) {
                        return Some(w);
                    }
                    w.phase = Phase::CmpxchgInRqServed;
                }
                Phase::CmpxchgInRqServed => {
                    let Some(won) = self.sbr_cmpxchg_served(c) else {
                        return Some(w);
                    };
                    let it = IdleType::of(w.idle);
                    if won {
                        w.held = true;
                        w.pulled = self.sched_balance_rq(c, rq, level, it) > 0;
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
                    w.interval = self.get_sd_balance_interval(rq, level, w.busy);
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
                    let visible = self.kstore(c, self.line_sbr, 0, sym);
                    self.sbr.release(visible);
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
}
