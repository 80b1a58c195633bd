//! RFC v4's cache-aware load balancing between LLCs (patches 13–16/28): the per-rq count of tasks
//! preferring each LLC (`rq->nr_pref_llc[]`, `nr_pref_llc_running`), `_get_migrate_hint()`,
//! `llc_balance()` tagging a group `group_llc_balance`, and `break_llc_locality()` in
//! `need_active_balance()`. The load balancer (`lb.rs`) uses them to pick the group and the queue
//! with the most tasks preferring the destination's LLC, to move one (`migrate_llc_task`), and when
//! that task is running, to push it with the stopper like any active balance
//! (`active_load_balance_cpu_stop`), priced through the same lines.

use super::*;
use crate::machine::domains::SD_SHARE_LLC;

/// `enum llc_mig_hint` (RFC v4 12/28).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MigHint {
    Allow,
    Ignore,
    Forbid,
}

impl Engine {
    /// `rq->nr_pref_llc[llc]`: tasks on CPU `cpu`'s queue (running, queued, delayed: every task
    /// account_llc_enqueue() counted) whose preferred LLC is `llc`.
    pub(crate) fn nr_pref_llc(&self, cpu: usize, llc: i32) -> u64 {
        let rq = &self.cpus[cpu].rq;
        rq.curr
            .iter()
            .chain(rq.queued.iter())
            .filter(|&&t| self.tasks[t as usize].preferred_llc == llc)
            .count() as u64
    }

    /// `rq->nr_pref_llc_running`: tasks on `cpu`'s queue that prefer the LLC they are in.
    fn nr_pref_llc_running(&self, cpu: usize) -> u64 {
        self.nr_pref_llc(cpu, self.topo.cpus[cpu].llc as i32)
    }

    /// The LLC's summed utilization (get_llc_stats(): the LLC's util; the capacity test is
    /// `llc_fits`).
    fn llc_util(&self, llc: usize) -> u64 {
        self.llc_list[llc]
            .iter()
            .map(|&c| self.cpus[c as usize].rq.avg.util_avg)
            .sum()
    }

    /// `_get_migrate_hint(src_cpu, dst_cpu, tsk_util, to_pref)` of RFC v4: moving `tsk_util` from
    /// src's LLC to dst's. Towards the preferred LLC it is forbidden only when dst's LLC would be
    /// over `llc_aggr_cap` and busier than src's by `llc_aggr_imb`; out of it, while src's LLC is
    /// under the cap or not that much busier than dst's.
    pub(crate) fn get_migrate_hint(
        &self,
        src: usize,
        dst: usize,
        tsk_util: u64,
        to_pref: bool,
    ) -> MigHint {
        let (sl, dl) = (
            self.topo.cpus[src].llc as usize,
            self.topo.cpus[dst].llc as usize,
        );
        if sl == dl {
            return MigHint::Allow;
        }
        if !self.llc_fits(dl, 0) && !self.llc_fits(sl, 0) {
            return MigHint::Ignore;
        }
        let src_util = self.llc_util(sl).saturating_sub(tsk_util);
        let dst_util = self.llc_util(dl) + tsk_util;
        // util_greater(u1, u2): u1 * 100 > u2 * (100 + llc_aggr_imb)
        let imb = self.llc_imb_pct();
        let greater = |a: u64, b: u64| a * 100 > b * (100 + imb);
        if to_pref {
            if !self.llc_fits(dl, tsk_util) && greater(dst_util, src_util) {
                return MigHint::Forbid;
            }
        } else if self.llc_fits(sl, 0) || !greater(src_util, dst_util) {
            return MigHint::Forbid;
        }
        MigHint::Allow
    }

    /// `sgs->nr_pref_llc[llc_idx(dst)]`: tasks of group `gi` (CPUs not in `excluded`) that prefer
    /// dst's LLC (update_sg_if_llc, 12/28).
    pub(crate) fn group_nr_pref_llc(
        &self,
        dom_id: usize,
        gi: usize,
        excluded: &[usize],
        dst: usize,
    ) -> u64 {
        if self.cas.is_none() {
            return 0;
        }
        let llc = self.topo.cpus[dst].llc as i32;
        self.sd.domains[dom_id].groups[gi]
            .cpus
            .iter()
            .filter(|&&c| !excluded.contains(&(c as usize)))
            .map(|&c| self.nr_pref_llc(c as usize, llc))
            .sum()
    }

    /// llc_balance() (13/28) for a non-local group: at the domain just above the LLC, the group
    /// has tasks preferring dst's LLC and `_get_migrate_hint(env->src_cpu, dst, 0, true)` allows.
    /// `env_src` is lb_env's src_cpu when update_sg_lb_stats runs: 0 (the designated initializer
    /// zeroes it) on the first pass, the last busiest queue after an all-pinned redo.
    pub(crate) fn llc_balance(
        &self,
        flags: u32,
        child_flags: u32,
        nr_pref_llc: u64,
        env_src: usize,
        dst: usize,
    ) -> bool {
        if self.cas.is_none() || flags & SD_SHARE_LLC != 0 || child_flags & SD_SHARE_LLC == 0 {
            return false;
        }
        nr_pref_llc > 0 && self.get_migrate_hint(env_src, dst, 0, true) == MigHint::Allow
    }

    /// break_llc_locality() (16/28), checked first in need_active_balance(): between LLCs, when
    /// every runnable task on src prefers src's LLC, do not push src's running task away if it is
    /// alone or the hint forbids leaving.
    pub(crate) fn break_llc_locality(&self, src: usize, dst: usize) -> bool {
        if self.cas.is_none() || self.topo.cpus[src].llc == self.topo.cpus[dst].llc {
            return false;
        }
        let cpu = &self.cpus[src];
        let h_nr_runnable = (cpu.nr_running() - cpu.rq.nr_delayed) as u64;
        self.nr_pref_llc_running(src) == h_nr_runnable
            && (cpu.nr_running() <= 1
                || self.get_migrate_hint(src, dst, 0, false) == MigHint::Forbid)
    }
}

#[cfg(test)]
mod tests;
