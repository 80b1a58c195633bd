//! Load balancing state and what its three callers share: the per-CPU and per-domain state
//! (`BalanceState`, `DomainState`), the global `sched_balance_running` flag and its cmpxchg,
//! get_sd_balance_interval, update_newidle_cost, should_we_balance and the `out_balanced` labels of
//! sched_balance_rq. The callers: the periodic walk (`periodic.rs`: sched_balance_trigger →
//! SCHED_SOFTIRQ → sched_balance_domains), newidle balancing (`newidle.rs`) and the NOHZ idle load
//! balancer (`ilb.rs`); the body of sched_balance_rq is `lb.rs`.

use super::rq::RqLine;
use super::*;
use crate::machine::domains::SD_SHARE_CPUCAPACITY;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IdleType {
    NotIdle,
    Idle,
    NewlyIdle,
}

impl IdleType {
    /// The type of a periodic or NOHZ pass: `idle_cpu(cpu) ? CPU_IDLE : CPU_NOT_IDLE`.
    pub(super) fn of(idle: bool) -> IdleType {
        if idle {
            IdleType::Idle
        } else {
            IdleType::NotIdle
        }
    }
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
    pub(super) fn try_acquire(&mut self, t: u64) -> bool {
        if self.release_visible.is_some_and(|v| v <= t) {
            self.release_visible = None;
            self.held = false;
        }
        !std::mem::replace(&mut self.held, true)
    }

    /// atomic_set_release(&flag, 0), committing at `visible`.
    pub(super) fn release(&mut self, visible: u64) {
        debug_assert!(self.held && self.release_visible.is_none());
        self.release_visible = Some(visible);
    }
}

/// Per CPU and domain level: the mutable state of the CPU's sched_domain (the domain itself is
/// shared, immutable data in `SchedDomains`).
#[derive(Clone, Debug)]
pub(crate) struct DomainState {
    pub(super) last_balance: u64,
    pub(super) balance_interval: u32,
    pub(super) nr_balance_failed: u32,
    pub(super) max_newidle_lb_cost: u64,
    /// sd->last_decay_max_lb_cost (jiffies).
    pub(super) last_decay: u64,
    /// sd->newidle_call / newidle_success / newidle_ratio (33cf66d88306, v6.19; read only with
    /// `Merged::ni_random`): sd_init's 512 / 256 / 512, a 50% success rate.
    pub(super) newidle_call: u32,
    pub(super) newidle_success: u32,
    pub(super) newidle_ratio: u32,
}

/// One domain's run-time fields at the end of a run, as /sys/kernel/debug/sched/domains/cpuN/
/// domainM/ and `struct sched_domain` hold them (`run --domains-state`; docs/SCHEMA.md).
#[derive(Clone, Debug, serde::Serialize)]
pub struct DomainRuntime {
    /// The kernel's CPU number (N of cpuN).
    pub cpu: u32,
    /// M of domainM: the CPU's domains from the lowest, 0 first.
    pub domain: u32,
    pub name: &'static str,
    /// sd->max_newidle_lb_cost, ns (the debugfs file).
    pub max_newidle_lb_cost: u64,
    /// sd->balance_interval, ms.
    pub balance_interval: u32,
    /// sd->last_balance relative to jiffies at the end (jiffies; negative: in the past).
    pub last_balance: i64,
    /// sd->nr_balance_failed.
    pub nr_balance_failed: u32,
    /// sd->newidle_call / newidle_success / newidle_ratio: only on a release with 33cf66d88306
    /// (6.19 and later), null before.
    pub newidle_call: Option<u32>,
    pub newidle_success: Option<u32>,
    pub newidle_ratio: Option<u32>,
}

impl Engine {
    /// Every CPU's domains' run-time fields now, CPU by CPU, lowest domain first.
    pub fn domains_state(&self) -> Vec<DomainRuntime> {
        let now = self.jiffies() as i64;
        let ni = self.patches.merged.ni_random;
        let mut out = Vec::new();
        for (c, cpu) in self.cpus.iter().enumerate() {
            for (level, d) in cpu.balance.doms.iter().enumerate() {
                let dom = self.dom(c, level);
                out.push(DomainRuntime {
                    cpu: self.topo.cpu_id[c],
                    domain: level as u32,
                    name: dom.name,
                    max_newidle_lb_cost: d.max_newidle_lb_cost,
                    balance_interval: d.balance_interval,
                    last_balance: d.last_balance as i64 - now,
                    nr_balance_failed: d.nr_balance_failed,
                    newidle_call: ni.then_some(d.newidle_call),
                    newidle_success: ni.then_some(d.newidle_success),
                    newidle_ratio: ni.then_some(d.newidle_ratio),
                });
            }
        }
        out
    }
}

/// A CPU's balancing state: rq->next_balance and its domains' state, lowest level first.
pub(crate) struct BalanceState {
    /// rq->next_balance (jiffies).
    pub(super) next_balance: u64,
    pub(super) doms: Vec<DomainState>,
    /// This CPU's `sched_rnd_state` (33cf66d88306): `Some` only on a release with NI_RANDOM. The
    /// kernel seeds it at boot (prandom_init_once); here each CPU's stream comes from the run's
    /// seed and the CPU number, apart from the workload's stream ([A], docs/MODEL.md §11).
    pub(super) sched_rnd_state: Option<SimRng>,
}

impl BalanceState {
    pub(super) fn new(sd: &SchedDomains, c: usize, ni_random_seed: Option<u64>) -> Self {
        BalanceState {
            next_balance: 0,
            sched_rnd_state: ni_random_seed
                .map(|s| SimRng::new(s.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (c as u64 + 1))),
            doms: sd
                .of(c)
                .map(|d| DomainState {
                    last_balance: 0,
                    balance_interval: d.min_interval,
                    nr_balance_failed: 0,
                    max_newidle_lb_cost: 0,
                    last_decay: 0,
                    newidle_call: 512,
                    newidle_success: 256,
                    newidle_ratio: 512,
                })
                .collect(),
        }
    }
}

impl Engine {
    pub(super) fn dom(&self, cpu: usize, level: usize) -> &crate::machine::domains::Domain {
        &self.sd.domains[self.sd.per_cpu[cpu][level] as usize]
    }

    /// get_sd_balance_interval(): ms → jiffies, ×busy_factor (−1 to de-phase levels) when busy.
    pub(super) fn get_sd_balance_interval(&self, cpu: usize, level: usize, busy: bool) -> u64 {
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
        let reverted = self.patches.merged.newidle_cost_bump_reverted;
        let d = &mut self.cpus[cpu].balance.doms[level];
        if cost > d.max_newidle_lb_cost {
            // d206fbad9328 (v6.19) removed the cap with the bump it bounded
            d.max_newidle_lb_cost = if reverted {
                cost
            } else {
                cost.min(MIGRATION_COST_NS + 200)
            };
            d.last_decay = jiffies;
        } else if jiffies > d.last_decay + hz {
            d.max_newidle_lb_cost = d.max_newidle_lb_cost * 253 / 256;
            d.last_decay = jiffies;
            return true;
        }
        false
    }

    /// update_newidle_stats(sd, success) (33cf66d88306, v6.19): count the call and its weighted
    /// success; every 1024 calls the ratio becomes the success count and both halve.
    pub(super) fn update_newidle_stats(&mut self, cpu: usize, level: usize, success: u32) {
        let d = &mut self.cpus[cpu].balance.doms[level];
        d.newidle_call += 1;
        d.newidle_success += success;
        if d.newidle_call >= 1024 {
            d.newidle_ratio = d.newidle_success;
            d.newidle_call /= 2;
            d.newidle_success /= 2;
        }
    }

    /// sched_rng() % 1024 on this CPU (NI_RANDOM's 1k-sided dice).
    pub(super) fn sched_rng_d1k(&mut self, cpu: usize) -> u32 {
        let rng = self.cpus[cpu].balance.sched_rnd_state.as_mut();
        rng.map_or(0, |r| (r.next_u64() as u32) % 1024)
    }

    /// The issue half of atomic_cmpxchg_acquire(&sched_balance_running, 0, 1): a locked
    /// instruction drains the store buffer first, then goes to the line at this CPU's time. False:
    /// the CPU must wait first (call again).
    pub(super) fn sbr_cmpxchg_issue(&mut self, c: usize, sym: Sym) -> bool {
        self.drain_store_buffer(c, sym);
        if self.must_wait(c) {
            return false;
        }
        self.metrics.count(Counter::SbrCmpxchg);
        self.kaccess(c, self.line_sbr, Op::Atomic, 0, sym);
        true
    }

    /// The served half: once the cmpxchg has been served (the cursor is its completion), its
    /// outcome is the value the line holds then. None: the CPU must wait first (call again).
    pub(super) fn sbr_cmpxchg_served(&mut self, c: usize) -> Option<bool> {
        if self.must_wait(c) {
            return None;
        }
        let won = self.sbr.try_acquire(self.now);
        if !won {
            self.metrics.count(Counter::SbrCmpxchgFailed);
            self.trace_instant(c, "cmpxchg sched_balance_running failed");
        }
        Some(won)
    }

    /// sched_balance_rq's `out_balanced:` label. Its first step (clearing the parent group's
    /// `sgc->imbalance`) is not modelled, so it falls through to `out_all_pinned:` unchanged.
    pub(super) fn out_balanced(&mut self, cpu: usize, level: usize, it: IdleType) {
        self.out_all_pinned(cpu, level, it);
    }

    /// `out_all_pinned:`: sd->nr_balance_failed = 0, then `out_one_pinned:`.
    pub(super) fn out_all_pinned(&mut self, cpu: usize, level: usize, it: IdleType) {
        self.lb_stat(cpu, level, it).lb_balanced += 1;
        self.cpus[cpu].balance.doms[level].nr_balance_failed = 0;
        self.out_one_pinned(cpu, level, it);
    }

    /// `out_one_pinned:`: a periodic pass doubles balance_interval up to the domain's
    /// max_interval; newidle skips it (it disregards the interval).
    fn out_one_pinned(&mut self, cpu: usize, level: usize, it: IdleType) {
        let max = self.dom(cpu, level).max_interval;
        let d = &mut self.cpus[cpu].balance.doms[level];
        if it != IdleType::NewlyIdle && d.balance_interval < max {
            d.balance_interval *= 2;
        }
    }

    fn idle_cpu(&self, c: usize) -> bool {
        self.cpus[c].is_idle()
    }

    /// should_we_balance(): newidle always; otherwise only the first idle CPU (on an idle core) of
    /// the local group's balance mask, else the group's first CPU.
    pub(super) fn should_we_balance(
        &mut self,
        exec: usize,
        dst: usize,
        level: usize,
        it: IdleType,
    ) -> bool {
        if it == IdleType::NewlyIdle {
            return self.cpus[dst].rq.queued.is_empty() && self.cpus[dst].rq.curr.is_none();
        }
        let d = self.dom(dst, level);
        let share_cap = d.has(SD_SHARE_CPUCAPACITY);
        let (nr, first) = (
            d.groups[0].balance_cpus.len(),
            d.groups[0].balance_cpus[0] as usize,
        );
        let mut idle_smt: Option<usize> = None;
        let mut verdict = None;
        let (mut sum, mut max) = (0u64, 0u64);
        for k in 0..nr {
            let cpu = self.dom(dst, level).groups[0].balance_cpus[k] as usize;
            // idle_cpu() of each CPU looked at: a load of its rq line
            let ns = self.rq_line_load(exec, cpu, RqLine::Rq);
            sum += ns;
            max = max.max(ns);
            if !self.idle_cpu(cpu) {
                continue;
            }
            if !share_cap && !self.topo.smt_siblings(cpu).all(|s| self.idle_cpu(s)) {
                idle_smt.get_or_insert(cpu);
                continue;
            }
            verdict = Some(cpu == dst);
            break;
        }
        let v = verdict.unwrap_or_else(|| idle_smt.map_or(first == dst, |s| s == dst));
        self.charge_loads(exec, Sym::SchedBalanceRq, sum, max);
        v
    }

    /// update_next_balance(): the idle interval of a domain pulls next_balance in.
    pub(super) fn update_next_balance(&self, cpu: usize, level: usize, next: &mut u64) {
        let nb = self.cpus[cpu].balance.doms[level].last_balance
            + self.get_sd_balance_interval(cpu, level, false);
        if *next > nb {
            *next = nb;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SbrFlag;
    use crate::coherence::{Coherence, Op};
    use crate::machine::presets::preset;
    use crate::machine::topology::Topology;

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
            e.settle_request(c);
            e.now = e.now.max(e.cpus[c].exec.cursor);
            match e.step_newidle(c, w) {
                Some(next) => w = next,
                None => {
                    e.settle_request(c);
                    return;
                }
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
            e.settle_request(c);
            e.now = e.now.max(e.cpus[c].exec.cursor);
            match e.step_balance(c, w) {
                Some(next) => w = next,
                None => {
                    e.settle_request(c);
                    return;
                }
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
                e.settle_request(1);
                e.now = e.now.max(e.cpus[1].exec.cursor);
                match e.step_ilb(1, s) {
                    Some(next) => s = next,
                    None => {
                        e.settle_request(1);
                        break;
                    }
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

/// The v6.19 newidle changes a release sets (`Patches::merged`): the revert of the cost bump and
/// NI_RANDOM.
#[cfg(test)]
mod v619_newidle_tests {
    use super::decay_tests_support::*;
    use super::*;

    fn newidle_calls(e: &Engine) -> u64 {
        e.metrics.counters[Counter::NewidleBalances as usize]
    }

    /// d206fbad9328: a level that pulls nothing records its measured cost (no 3/2 bump of the
    /// max), and a cost above migration_cost + 200 is no longer capped.
    #[test]
    fn after_the_revert_a_failed_pass_records_its_measured_cost_uncapped() {
        let mut e = two_levels(400_000);
        e.patches.merged.newidle_cost_bump_reverted = true;
        let j = e.jiffies();
        for d in e.cpus[1].balance.doms.iter_mut() {
            d.last_decay = j; // no decay due
        }
        e.rd_overloaded = true;
        e.cpus[1].idle.avg_idle = 10_000_000;
        run_newidle(&mut e, 1);
        assert!(e.cpus[1].is_idle(), "nothing to pull");
        for d in &e.cpus[1].balance.doms {
            assert_eq!(
                d.max_newidle_lb_cost, 400_000,
                "a pass costs less than the max"
            );
        }
        assert!(!e.update_newidle_cost(1, 0, 10_000_000));
        assert_eq!(e.cpus[1].balance.doms[0].max_newidle_lb_cost, 10_000_000);
    }

    /// 33cf66d88306: at a success ratio of 1023 the dice always lets a level balance (and the
    /// call is counted); at 0 it lets one in 512 through, and a skipped level still counts a call
    /// with no success. Every 1024 calls the ratio becomes the successes and both halve.
    #[test]
    fn ni_random_balances_a_domain_at_its_success_rate() {
        for (ratio, balances) in [(1023, 2), (0, 0)] {
            let mut e = two_levels(0);
            // as v6.19 has it: NI_RANDOM on top of the revert (the measured cost is non-zero)
            e.patches.merged.ni_random = true;
            e.patches.features.ni_random = true;
            e.patches.merged.newidle_cost_bump_reverted = true;
            // this stream's first two draws % 1024 are above 1 (a ratio of 0 lets 0 and 1 through)
            e.cpus[1].balance.sched_rnd_state = Some(SimRng::new(11));
            e.rd_overloaded = true;
            e.cpus[1].idle.avg_idle = 10_000_000;
            for d in e.cpus[1].balance.doms.iter_mut() {
                d.newidle_ratio = ratio;
            }
            let before = newidle_calls(&e);
            run_newidle(&mut e, 1);
            assert_eq!(newidle_calls(&e) - before, balances, "ratio {ratio}");
            for d in &e.cpus[1].balance.doms {
                assert_eq!(
                    (d.newidle_call, d.newidle_success),
                    (513, 256),
                    "ratio {ratio}"
                );
            }
        }
        let mut e = two_levels(0);
        for _ in 0..511 {
            e.update_newidle_stats(1, 0, 0);
        }
        let d = &e.cpus[1].balance.doms[0];
        assert_eq!((d.newidle_call, d.newidle_ratio), (1023, 512));
        e.update_newidle_stats(1, 0, 4);
        let d = &e.cpus[1].balance.doms[0];
        assert_eq!(
            (d.newidle_call, d.newidle_success, d.newidle_ratio),
            (512, 130, 260)
        );
    }
}
