//! The body of sched_balance_rq() (kernel/sched/fair.c, v6.18) on PELT: update_sd_lb_stats /
//! update_sg_lb_stats with group_classify, update_sd_pick_busiest, sched_balance_find_src_group,
//! calculate_imbalance (migrate_task / migrate_util / migrate_load), sched_balance_find_src_rq,
//! detach_tasks with loop_max and can_migrate_task (delayed, ineligible on dst, running,
//! cache hot by sysctl_sched_migration_cost), the all-pinned redo, and attach_task. The walk that
//! calls it (sched_balance_domains, should_we_balance, newidle) is in `balance.rs`.

use super::balance::IdleType;
use super::*;
use crate::machine::domains::{SD_NUMA, SD_PREFER_SIBLING, SD_SHARE_CPUCAPACITY, SD_SHARE_LLC};

/// SCHED_CAPACITY_SCALE: every CPU's capacity (no asymmetric capacity, no rt/irq pressure).
const CAPACITY: u64 = 1024;
/// NUMA_IMBALANCE_MIN (fair.c).
const NUMA_IMBALANCE_MIN: u64 = 2;

/// `enum group_type`, in the kernel's order (a higher type is busier). group_misfit_task needs a
/// CPU of reduced or asymmetric capacity, group_asym_packing SD_ASYM_PACKING, group_imbalanced an
/// affinity-pinned task (LBF_SOME_PINNED): none exists in the model, so they never arise.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum GroupType {
    #[default]
    HasSpare,
    FullyBusy,
    /// An SMT group with more than one runnable task, seen by an idle CPU.
    SmtBalance,
    Overloaded,
}

/// `enum migration_type` (migrate_misfit never arises, see GroupType); `migrate_llc_task` is RFC
/// v4's (15/28, cache-aware scheduling only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MigrationType {
    Load,
    Util,
    Task,
    LlcTask,
}

/// `struct sg_lb_stats`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GroupStats {
    pub avg_load: u64,
    pub group_load: u64,
    pub group_capacity: u64,
    pub group_util: u64,
    pub group_runnable: u64,
    pub sum_nr_running: u64,
    pub sum_h_nr_running: u64,
    pub idle_cpus: u64,
    pub group_weight: u64,
    pub cores: u64,
    pub ty: GroupType,
    /// `sg->flags` (the child domain's it was built from) include SD_SHARE_CPUCAPACITY.
    pub smt: bool,
    /// `sg->flags` include SD_PREFER_SIBLING.
    pub prefer_sibling: bool,
    /// A CPU of the group runs more than one task (sg_overloaded, read at the root domain).
    pub overloaded_cpu: bool,
    /// Cache-aware (RFC v4): `nr_pref_llc[llc_idx(dst_cpu)]`, the group's tasks preferring the
    /// destination's LLC, and `group_llc_balance` (llc_balance(), 13/28).
    pub nr_pref_llc: u64,
    pub llc_balance: bool,
}

/// group_has_capacity(): spare capacity left.
fn group_has_capacity(pct: u64, s: &GroupStats) -> bool {
    if s.sum_nr_running < s.group_weight {
        return true;
    }
    if s.group_capacity * pct < s.group_runnable * 100 {
        return false;
    }
    s.group_capacity * 100 > s.group_util * pct
}

/// group_is_overloaded(): more tasks than CPUs and no capacity left.
fn group_is_overloaded(pct: u64, s: &GroupStats) -> bool {
    if s.sum_nr_running <= s.group_weight {
        return false;
    }
    s.group_capacity * 100 < s.group_util * pct || s.group_capacity * pct < s.group_runnable * 100
}

/// group_classify().
pub(super) fn group_classify(pct: u64, s: &GroupStats, smt_balance: bool) -> GroupType {
    if group_is_overloaded(pct, s) {
        GroupType::Overloaded
    } else if smt_balance {
        GroupType::SmtBalance
    } else if !group_has_capacity(pct, s) {
        GroupType::FullyBusy
    } else {
        GroupType::HasSpare
    }
}

/// update_sd_pick_busiest(): does `sg` replace `busiest` (None: no busiest yet)?
pub(super) fn update_sd_pick_busiest(busiest: Option<&GroupStats>, sg: &GroupStats) -> bool {
    if sg.sum_h_nr_running == 0 {
        return false;
    }
    // sds->busiest_stat starts as { idle_cpus = UINT_MAX, group_has_spare }
    let none = GroupStats {
        idle_cpus: u64::MAX,
        ..Default::default()
    };
    let b = busiest.unwrap_or(&none);
    // RFC v4 14/28: update_llc_busiest(), the group with most tasks preferring dst's LLC, then
    // no normal pick over a group_llc_balance busiest
    if sg.llc_balance && sg.nr_pref_llc > b.nr_pref_llc {
        return true;
    }
    if b.llc_balance {
        return false;
    }
    if sg.ty != b.ty {
        return sg.ty > b.ty;
    }
    // the `has_spare:` label
    let has_spare_rule = |b: &GroupStats| {
        !(sg.idle_cpus > b.idle_cpus
            || (sg.idle_cpus == b.idle_cpus && sg.sum_nr_running <= b.sum_nr_running))
    };
    match sg.ty {
        GroupType::Overloaded => sg.avg_load > b.avg_load,
        GroupType::SmtBalance if sg.idle_cpus != 0 || b.idle_cpus != 0 => has_spare_rule(b),
        GroupType::SmtBalance | GroupType::FullyBusy => {
            // avg_load is 0 unless overloaded: equal, so the later group replaces a non-SMT one
            !(sg.avg_load < b.avg_load
                || (sg.avg_load == b.avg_load && busiest.is_some_and(|b| b.smt)))
        }
        GroupType::HasSpare => {
            // smt_vs_nonsmt_groups(): an SMT group with at most one task does not replace a
            // non-SMT one, otherwise the other kind wins (groups of one domain differ in flags
            // when some were built through find_descended_sibling)
            if busiest.is_some_and(|b| b.smt != sg.smt) {
                return !(sg.smt && sg.sum_h_nr_running <= 1);
            }
            has_spare_rule(b)
        }
    }
}

/// sibling_imbalance(): tasks to move so that both groups have the same tasks per core (×2, the
/// caller halves it).
fn sibling_imbalance(idle: bool, busiest: &GroupStats, local: &GroupStats) -> u64 {
    if !idle || busiest.sum_nr_running == 0 {
        return 0;
    }
    let (nb, nl) = (busiest.cores, local.cores);
    if nb == nl {
        return busiest.sum_nr_running.saturating_sub(local.sum_nr_running);
    }
    let mut imb = (nl * busiest.sum_nr_running).saturating_sub(nb * local.sum_nr_running);
    imb = (2 * imb + nl + nb) / (nl + nb);
    if imb <= 1 && local.sum_nr_running == 0 && busiest.sum_nr_running > 1 {
        imb = 2;
    }
    imb
}

/// The domain-wide part of `struct sd_lb_stats` that the decisions read.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct SdStats {
    pub total_load: u64,
    pub total_capacity: u64,
    pub prefer_sibling: bool,
    pub flags: u32,
    pub imbalance_pct: u64,
    pub imb_numa_nr: u64,
}

/// sched_balance_find_src_group() after update_sd_lb_stats(): the decision whether the busiest
/// group found is worth balancing, then (the kernel's `force_balance:` label) calculate_imbalance().
/// The migration type and the imbalance, or None when balanced (the kernel returns NULL).
pub(super) fn sched_balance_find_src_group(
    sds: &SdStats,
    local: &mut GroupStats,
    busiest: &GroupStats,
    idle: bool,
) -> Option<(MigrationType, u64)> {
    if busiest.sum_h_nr_running == 0 || local.ty > busiest.ty {
        return None;
    }
    let sds_avg = || CAPACITY * sds.total_load / sds.total_capacity.max(1);
    if local.ty == GroupType::Overloaded
        && (local.avg_load >= busiest.avg_load
            || local.avg_load >= sds_avg()
            || 100 * busiest.avg_load <= sds.imbalance_pct * local.avg_load)
    {
        return None;
    }
    // (RFC v4 14/28: also when the busiest group has tasks preferring the local LLC)
    let sib_force = sds.prefer_sibling
        && local.ty == GroupType::HasSpare
        && (busiest.llc_balance || sibling_imbalance(idle, busiest, local) > 1);
    if !sib_force && busiest.ty != GroupType::Overloaded {
        if !idle {
            return None;
        }
        // an smt_balance busiest against a local group of the other kind (smt_vs_nonsmt_groups)
        let smt_force = busiest.ty == GroupType::SmtBalance && local.smt != busiest.smt;
        if !smt_force
            && ((busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1)
                || busiest.sum_h_nr_running == 1)
        {
            return None;
        }
    }
    calculate_imbalance(sds, local, busiest, idle)
}

/// calculate_imbalance(): the migration type and the amount to move; None when it comes out zero
/// (or the local group turns out not to be below the average).
fn calculate_imbalance(
    sds: &SdStats,
    local: &mut GroupStats,
    busiest: &GroupStats,
    idle: bool,
) -> Option<(MigrationType, u64)> {
    let sds_avg = || CAPACITY * sds.total_load / sds.total_capacity.max(1);
    if busiest.ty == GroupType::SmtBalance {
        return Some((MigrationType::Task, 1));
    }
    if busiest.llc_balance {
        // RFC v4 15/28: move a task that prefers the local LLC
        return Some((MigrationType::LlcTask, 1));
    }
    if local.ty == GroupType::HasSpare {
        if busiest.ty > GroupType::FullyBusy && sds.flags & SD_SHARE_LLC == 0 {
            let imb = local.group_capacity.max(local.group_util) - local.group_util;
            if idle && imb == 0 {
                return Some((MigrationType::Task, 1));
            }
            return (imb > 0).then_some((MigrationType::Util, imb));
        }
        let mut imb = if busiest.group_weight == 1 || sds.prefer_sibling {
            sibling_imbalance(idle, busiest, local)
        } else {
            local.idle_cpus.saturating_sub(busiest.idle_cpus)
        };
        if sds.flags & SD_NUMA != 0 {
            // adjust_numa_imbalance(imb, local nr + 1, imb_numa_nr)
            let dst_running = local.sum_nr_running + 1;
            if dst_running <= sds.imb_numa_nr && imb <= NUMA_IMBALANCE_MIN {
                imb = 0;
            }
        }
        imb >>= 1;
        return (imb > 0).then_some((MigrationType::Task, imb));
    }
    let avg = sds_avg();
    if local.ty < GroupType::Overloaded {
        local.avg_load = CAPACITY * local.group_load / local.group_capacity.max(1);
        if local.avg_load >= busiest.avg_load || local.avg_load >= avg {
            return None;
        }
    }
    let imb = ((busiest.avg_load.saturating_sub(avg)) * busiest.group_capacity)
        .min(avg.saturating_sub(local.avg_load) * local.group_capacity)
        / CAPACITY;
    (imb > 0).then_some((MigrationType::Load, imb))
}

impl Engine {
    /// update_sg_lb_stats() for one group of `dom_id` (its CPUs not in `excluded`); the reads
    /// of the rq lines are priced by the caller.
    fn update_sg_lb_stats(
        &self,
        dom_id: usize,
        gi: usize,
        excluded: &[usize],
        idle: bool,
    ) -> GroupStats {
        let d = &self.sd.domains[dom_id];
        let g = &d.groups[gi];
        let mut s = GroupStats {
            smt: g.flags & SD_SHARE_CPUCAPACITY != 0,
            prefer_sibling: g.flags & SD_PREFER_SIBLING != 0,
            ..Default::default()
        };
        // the group's CPUs not excluded (none are but after an all-pinned redo): the count, the
        // capacity and the cores, then the sums over their run queues
        let mut add = |i: usize, core_first: bool| {
            let cpu = &self.cpus[i];
            let rq = &cpu.rq;
            s.group_weight += 1;
            s.cores += u64::from(core_first);
            s.group_load += rq.avg.load_avg; // cpu_load()
            s.group_util += rq.avg.util_avg.min(CAPACITY); // cpu_util_cfs()
            s.group_runnable += rq.avg.runnable_avg; // cpu_runnable()
            let nr = cpu.nr_running() as u64;
            s.sum_nr_running += nr;
            s.sum_h_nr_running += nr - rq.nr_delayed as u64;
            // counted without branches: whether a CPU of a balance pass is idle is a coin toss
            // for the branch predictor
            s.idle_cpus += u64::from(nr == 0);
            s.overloaded_cpu |= nr > 1;
        };
        if excluded.is_empty() {
            for (&cpu, &core_first) in g.cpus.iter().zip(&g.core_first) {
                add(cpu as usize, core_first);
            }
        } else {
            for (&cpu, &core_first) in g.cpus.iter().zip(&g.core_first) {
                if !excluded.contains(&(cpu as usize)) {
                    add(cpu as usize, core_first);
                }
            }
        }
        s.group_capacity = s.group_weight * CAPACITY;
        let local = gi == 0;
        let smt_balance = !local && idle && s.smt && s.sum_h_nr_running > 1;
        s.ty = group_classify(d.imbalance_pct as u64, &s, smt_balance);
        if s.ty == GroupType::Overloaded {
            s.avg_load = s.group_load * CAPACITY / s.group_capacity.max(1);
        }
        s
    }

    /// The body of sched_balance_rq() after should_we_balance (and the serialization): group stats,
    /// busiest group and queue, imbalance, detach_tasks, with the all-pinned redo. Returns the
    /// number of tasks pulled to `dst`.
    pub(super) fn sched_balance_rq(
        &mut self,
        exec: usize,
        dst: usize,
        level: usize,
        it: IdleType,
    ) -> usize {
        let dom_id = self.sd.per_cpu[dst][level] as usize;
        let idle = it != IdleType::NotIdle;
        let child_flags = if level > 0 {
            self.sd.domains[self.sd.per_cpu[dst][level - 1] as usize].flags
        } else {
            0
        };
        let mut excluded: Vec<usize> = Vec::new();
        let mut first = true;
        // lb_env.src_cpu as update_sg_lb_stats sees it (RFC v4's llc_balance reads it): 0 from the
        // designated initializer, then the busiest queue of the pass before a redo
        let mut env_src = 0usize;
        loop {
            // update_sd_lb_stats(): every CPU's rq and cfs.avg lines of the domain are read
            let ngroups = self.sd.domains[dom_id].groups.len();
            let dom = &self.sd.domains[dom_id];
            let mut sds = SdStats {
                flags: dom.flags,
                imbalance_pct: dom.imbalance_pct as u64,
                imb_numa_nr: dom.imb_numa_nr as u64,
                ..Default::default()
            };
            let mut local = GroupStats::default();
            let mut busiest: Option<(usize, GroupStats)> = None;
            let mut sum_util = 0u64;
            let mut sg_overloaded = false;
            for gi in 0..ngroups {
                let mut s = self.update_sg_lb_stats(dom_id, gi, &excluded, idle);
                if self.patches.cache_aware {
                    s.nr_pref_llc = self.group_nr_pref_llc(dom_id, gi, &excluded, dst);
                    // 7.2 llc_balance(): off once nr_balance_failed reaches cache_nice_tries + 1;
                    // the hint is asked from the group's first CPU, not lb_env's src_cpu
                    let (src, gave_up) = if self.patches.merged.sched_cache {
                        let d = &self.sd.domains[dom_id];
                        let failed = self.cpus[dst].balance.doms[level].nr_balance_failed;
                        (d.groups[gi].cpus[0] as usize, failed > d.cache_nice_tries)
                    } else {
                        (env_src, false)
                    };
                    s.llc_balance = gi != 0
                        && !gave_up
                        && self.llc_balance(sds.flags, child_flags, s.nr_pref_llc, src, dst);
                }
                sds.total_load += s.group_load;
                sds.total_capacity += s.group_capacity;
                sum_util += s.group_util;
                sg_overloaded |= s.overloaded_cpu;
                if gi == 0 {
                    local = s;
                } else if update_sd_pick_busiest(busiest.as_ref().map(|b| &b.1), &s) {
                    busiest = Some((gi, s));
                }
            }
            // the busiest group's own flags (a descended group's are a lower level's)
            sds.prefer_sibling = busiest.is_some_and(|(_, b)| b.prefer_sibling);
            if level + 1 == self.sd.per_cpu[dst].len() {
                // the root domain: set_rd_overloaded(rd, sg_overloaded), the only place it clears
                self.rd_overloaded = sg_overloaded;
            }
            let (sum, max) = self.rq_lines_load_domain(exec, dom_id, &excluded);
            self.charge_loads(exec, Sym::UpdateSdLbStats, sum, max);
            if first {
                self.kcharge(exec, Sym::SchedBalanceRq, self.assume.sbr_fixed_ns);
                self.update_idle_cpu_scan(exec, dst, dom_id, it, sum_util);
                first = false;
            }
            // sched_balance_find_src_group() returns NULL for no busiest group and for a
            // balanced domain alike: both are lb_nobusyg
            let Some((bi, b)) = busiest else {
                self.lb_stat(dst, level, it).lb_nobusyg += 1;
                self.out_balanced(dst, level, it);
                return 0;
            };
            let Some((mt, imbalance)) = sched_balance_find_src_group(&sds, &mut local, &b, idle)
            else {
                self.lb_stat(dst, level, it).lb_nobusyg += 1;
                self.out_balanced(dst, level, it);
                return 0;
            };
            let Some(src) =
                self.sched_balance_find_src_rq(dom_id, bi, &excluded, dst, mt, imbalance)
            else {
                self.lb_stat(dst, level, it).lb_nobusyq += 1;
                self.out_balanced(dst, level, it);
                return 0;
            };
            // update_lb_imbalance_stat()
            let st = self.lb_stat(dst, level, it);
            match mt {
                MigrationType::Load => st.lb_imbalance_load += imbalance,
                MigrationType::Util => st.lb_imbalance_util += imbalance,
                MigrationType::Task => st.lb_imbalance_task += imbalance,
                MigrationType::LlcTask => {}
            }
            env_src = src;
            let (moved, all_pinned) = if self.cpus[src].nr_running() > 1 {
                // rq_lock_irqsave(busiest): a locked access to its rq line
                if src != exec {
                    let lock = self.rq_lock_remote(exec, src);
                    self.kcharge(exec, Sym::DetachTasks, lock);
                }
                let r = self.detach_tasks(exec, src, dst, level, dom_id, it, mt, imbalance);
                self.rq_written_by(src, exec);
                r
            } else {
                (0, false)
            };
            if all_pinned {
                // LBF_ALL_PINNED: try the others unless only the local group is left
                excluded.push(src);
                let d = &self.sd.domains[dom_id];
                let local_mask = &d.groups[0].balance_cpus;
                let rest = d
                    .cpus
                    .iter()
                    .any(|&c| !excluded.contains(&(c as usize)) && !local_mask.contains(&c));
                if rest {
                    continue;
                }
                self.out_all_pinned(dst, level, it);
                return 0;
            }
            let dom = &self.sd.domains[dom_id];
            let (min_interval, cache_nice_tries) = (dom.min_interval, dom.cache_nice_tries);
            if moved == 0 {
                self.lb_stat(dst, level, it).lb_failed += 1;
            }
            let d = &mut self.cpus[dst].balance.doms[level];
            if moved == 0 {
                if it != IdleType::NewlyIdle {
                    d.nr_balance_failed += 1;
                }
                // need_active_balance(): (RFC v4 16/28) not when break_llc_locality(); migrate_task
                // kept failing, or a migrate_llc_task (its task is running); the stopper of src
                // pushes
                let failed = d.nr_balance_failed;
                let need = !self.break_llc_locality(src, dst)
                    && ((mt == MigrationType::Task && failed > cache_nice_tries + 2)
                        || mt == MigrationType::LlcTask);
                if need && self.cpus[src].rq.curr.is_some() && !self.cpus[src].rq.active_balance {
                    self.cpus[src].rq.active_balance = true;
                    // stop_one_cpu_nowait(): queue the stopper work and IPI src
                    let ns = self.assume.ttwu_ns + self.topo.xfer_ns(exec, src) as u64;
                    self.kcharge(exec, Sym::SchedBalanceRq, ns);
                    self.push_job(src, Job::ActiveBalance(dst as u32));
                }
            } else {
                self.cpus[dst].balance.doms[level].nr_balance_failed = 0;
            }
            self.cpus[dst].balance.doms[level].balance_interval = min_interval;
            return moved;
        }
    }

    /// update_idle_cpu_scan() (SIS_UTIL) run by `exec`: balancing inside the LLC refreshes its
    /// nr_idle_scan.
    fn update_idle_cpu_scan(
        &mut self,
        exec: usize,
        dst: usize,
        dom_id: usize,
        it: IdleType,
        sum_util: u64,
    ) {
        let dom = &self.sd.domains[dom_id];
        let llc_size = self.sd.llc_size[dst] as usize;
        if !self.patches.features.sis_util {
            return;
        }
        if it != IdleType::NewlyIdle && dom.cpus.len() == llc_size && dom.has(SD_SHARE_LLC) {
            let x = sum_util / llc_size as u64; // 0..1024
            let pct = dom.imbalance_pct as u64;
            let tmp = (x * x * pct * pct / (10_000 * 1024)).min(1024);
            let llc = self.topo.cpus[dst].llc as usize;
            let y = ((1024 - tmp) * llc_size as u64 / 1024) as u32;
            // on the sd_llc_shared line: read, written when it changed
            let ns = self.set_nr_idle_scan(exec, llc, y);
            self.charge_loads(exec, Sym::UpdateSdLbStats, ns, ns);
        }
    }

    /// sched_balance_find_src_rq(): the busiest queue of the busiest group for the migration type.
    fn sched_balance_find_src_rq(
        &self,
        dom_id: usize,
        gi: usize,
        excluded: &[usize],
        dst: usize,
        mt: MigrationType,
        imbalance: u64,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        let (mut best_load, mut best_cap, mut best_util, mut best_nr) = (0u64, 1u64, 0u64, 0u64);
        for &cpu in &self.sd.domains[dom_id].groups[gi].cpus {
            let i = cpu as usize;
            if i == dst || excluded.contains(&i) {
                continue;
            }
            let rq = &self.cpus[i].rq;
            let nr = (self.cpus[i].nr_running() - rq.nr_delayed) as u64; // h_nr_runnable
            if nr == 0 {
                continue;
            }
            match mt {
                MigrationType::Load => {
                    let load = rq.avg.load_avg;
                    // one task heavier than the imbalance on a CPU of full capacity: leave it
                    if nr == 1 && load > imbalance {
                        continue;
                    }
                    if load * best_cap > best_load * CAPACITY {
                        (best_load, best_cap, best) = (load, CAPACITY, Some(i));
                    }
                }
                MigrationType::Util => {
                    // cpu_util_cfs_boost(): util boosted by runnable, capped at capacity
                    let util = rq.avg.util_avg.max(rq.avg.runnable_avg).min(CAPACITY);
                    if nr <= 1 {
                        continue;
                    }
                    if best_util < util {
                        (best_util, best) = (util, Some(i));
                    }
                }
                MigrationType::Task => {
                    if best_nr < nr {
                        (best_nr, best) = (nr, Some(i));
                    }
                }
                MigrationType::LlcTask => {
                    // RFC v4 15/28: the queue outside dst's LLC with most tasks preferring it
                    let dl = self.topo.cpus[dst].llc;
                    let pref = self.nr_pref_llc(i, dl as i32);
                    if self.topo.cpus[i].llc != dl && best_nr < pref {
                        (best_nr, best) = (pref, Some(i));
                    }
                }
            }
        }
        best
    }

    /// detach_tasks() + attach_tasks(): from the tail of src's tasks (the queue in enqueue order,
    /// then the running task), at most loop_max = min(sysctl_sched_nr_migrate, nr_running)
    /// looked at. Returns (tasks moved, LBF_ALL_PINNED still set).
    #[allow(clippy::too_many_arguments)]
    fn detach_tasks(
        &mut self,
        exec: usize,
        src: usize,
        dst: usize,
        level: usize,
        dom_id: usize,
        it: IdleType,
        mt: MigrationType,
        imbalance: u64,
    ) -> (usize, bool) {
        let now = self.now;
        let d = &self.sd.domains[dom_id];
        let (flags, cache_nice_tries) = (d.flags, d.cache_nice_tries);
        let failed = self.cpus[dst].balance.doms[level].nr_balance_failed;
        let loop_max = NR_MIGRATE.min(self.cpus[src].nr_running());
        let mut imbalance = imbalance as i64;
        let mut all_pinned = true;
        let (mut moved, mut i, mut examined) = (0usize, 0usize, 0usize);
        let dst_has_queued = !self.cpus[dst].is_idle();
        while imbalance > 0 {
            if it != IdleType::NotIdle && self.cpus[src].nr_running() <= 1 {
                break;
            }
            examined += 1;
            if examined > loop_max {
                break;
            }
            // the queue from its tail, then the running task (the head of cfs_tasks)
            let running = i >= self.cpus[src].rq.queued.len();
            let Some(t) = self.cpus[src]
                .rq
                .queued
                .get(i)
                .copied()
                .or(self.cpus[src].rq.curr)
            else {
                break;
            };
            // can_migrate_task()
            let se = &self.tasks[t as usize].se;
            if se.sched_delayed && mt != MigrationType::Load {
                i += 1;
                continue;
            }
            if failed == 0 && dst_has_queued && !self.entity_eligible(src, t) {
                i += 1; // task_is_ineligible_on_dst_cpu (PLACE_LAG)
                continue;
            }
            all_pinned = false;
            if running {
                break; // task_on_cpu: the running task is not detached (and it is the last)
            }
            // task_hot(): CACHE_HOT_BUDDY (the cfs_rq->next buddy is hot while dst runs something)
            let buddy = self.patches.features.cache_hot_buddy
                && self.cpus[src].rq.next == Some(t)
                && self.cpus[dst].nr_running() > 0;
            let hot = flags & SD_SHARE_CPUCAPACITY == 0
                && (buddy
                    || now.saturating_sub(self.tasks[t as usize].exec_start) < MIGRATION_COST_NS);
            // migrate_degrades_llc(): cache-aware keeps tasks in their preferred LLC until balancing failed
            let llc_pinned = failed <= cache_nice_tries && self.llc_forbids_migration(t, src, dst);
            if (hot && failed <= cache_nice_tries) || llc_pinned {
                i += 1;
                continue;
            }
            let amount = match mt {
                MigrationType::Load => se.avg.load_avg.max(1), // task_h_load
                MigrationType::Util => se.avg.util_avg,        // task_util_est (no util_est)
                MigrationType::Task | MigrationType::LlcTask => 1,
            };
            // LB_MIN: a light task is not worth moving for load until balancing has failed
            if mt == MigrationType::Load
                && self.patches.features.lb_min
                && amount < 16
                && failed == 0
            {
                i += 1;
                continue;
            }
            let counted = matches!(mt, MigrationType::Load | MigrationType::Util);
            if counted && (amount >> failed.min(63)) as i64 > imbalance {
                i += 1;
                continue;
            }
            imbalance -= amount as i64;
            if hot {
                // detach_task() of a task can_migrate_task let go although cache-hot
                self.lb_stat(dst, level, it).lb_hot_gained += 1;
            }
            self.migrate_task(exec, src, dst, i);
            // the task's own lines, last written on src, and the dequeue/enqueue bookkeeping
            let ns = self.topo.xfer_ns(exec, src) as u64 + self.assume.detach_task_ns;
            self.kcharge(exec, Sym::DetachTasks, ns);
            moved += 1;
            if it == IdleType::NewlyIdle {
                break; // CONFIG_PREEMPTION: a newidle pass stops after one task
            }
        }
        self.lb_stat(dst, level, it).lb_gained += moved as u64;
        (moved, all_pinned && moved == 0)
    }

    /// active_load_balance_cpu_stop() on `src` (its stopper preempts the running task): the first
    /// migratable task from the tail of cfs_tasks moves to `target` (LBF_ACTIVE_LB: cache-hot
    /// tasks too; detach_one_task), and the lowest domain of `target` spanning `src` forgets its
    /// failures.
    pub(super) fn active_load_balance_cpu_stop(&mut self, src: usize, target: usize) {
        self.cpus[src].rq.active_balance = false;
        // the switch to the stopper thread, and back through schedule() afterwards
        self.kcharge(src, Sym::ActiveLoadBalanceCpuStop, self.assume.switch_ns);
        if let Some(t) = self.cpus[src].rq.curr {
            self.put_prev(src, t);
            self.cpus[src].rq.need_resched = true;
        }
        let Some(level) = (0..self.sd.per_cpu[target].len()).find(|&l| {
            self.sd.domains[self.sd.per_cpu[target][l] as usize]
                .span
                .contains(src)
        }) else {
            return;
        };
        if self.cpus[src].nr_running() == 0 {
            return;
        }
        self.sd_stat(target, level).alb_count += 1;
        let failed = self.cpus[target].balance.doms[level].nr_balance_failed;
        let dst_has_queued = !self.cpus[target].is_idle();
        let idx = (0..self.cpus[src].rq.queued.len()).find(|&i| {
            let t = self.cpus[src].rq.queued[i];
            // can_migrate_task() under LBF_ACTIVE_LB (migrate_load: delayed tasks may move)
            !(failed == 0 && dst_has_queued && !self.entity_eligible(src, t))
        });
        if let Some(i) = idx {
            // double_lock_balance(): the target's rq lock through its line, then the move
            let lock = self.rq_lock_remote(src, target);
            self.migrate_task(src, src, target, i);
            // detach_one_task() counts its move as lb_gained[CPU_IDLE]; the push succeeded
            self.lb_stat(target, level, IdleType::Idle).lb_gained += 1;
            self.sd_stat(target, level).alb_pushed += 1;
            self.rq_written_by(target, src);
            let ns = lock + self.topo.xfer_ns(src, target) as u64 + self.assume.detach_task_ns;
            self.kcharge(src, Sym::ActiveLoadBalanceCpuStop, ns);
            self.metrics.count(Counter::ActiveBalances);
            self.cpus[target].balance.doms[level].nr_balance_failed = 0;
        } else {
            self.sd_stat(target, level).alb_failed += 1;
        }
    }

    /// detach_task + attach_task: move the queued task at `rq[idx]` of `src` to `dst`, by CPU
    /// `exec`: dequeued without sleep (lag and relative deadline kept, PELT detached), placed and
    /// attached on `dst`, then wakeup_preempt(dst).
    pub(super) fn migrate_task(&mut self, exec: usize, src: usize, dst: usize, idx: usize) {
        let t = self.cpus[src].rq.queued[idx];
        self.trace_flow(src, t, "migrate");
        self.trace_migrate(exec, t, src, dst);
        self.dequeue_entity(src, t, exec);
        let resched = self.enqueue_entity(dst, t, exec, rq::Enq::Migrated);
        self.metrics.count(Counter::Migrations);
        self.wakeup_preempt(dst, t, exec, resched, 0); // attach_task: wakeup_preempt(rq, p, 0)
    }
}

#[cfg(test)]
mod engine_tests;
#[cfg(test)]
mod tests;
