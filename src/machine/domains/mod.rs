//! Sched domains built per CPU as `kernel/sched/topology.c` builds them: the x86 topology levels
//! (SMT, CLS, MC, PKG only without NUMA-in-package), `sched_init_numa` (NODE + one NUMA level per distinct
//! distance), `sd_init` flags and intervals, overlapping NUMA groups with balance masks, and the
//! removal of degenerate levels (`cpu_attach_domain`).
//!
//! `mod.rs` holds the flags and the built domains (`Domain`, `Group`, `SchedDomains`); `levels`
//! the topology table and masks, `build` the builder, `print` the sched_verbose / debugfs / JSON
//! forms. Domains are immutable shared data; the per-CPU mutable balance state lives in
//! `sched::balance`.

mod build;
mod levels;
mod print;
#[cfg(test)]
mod tests;

pub use print::DomainJson;

use crate::machine::cpuset::CpuSet;
use std::rc::Rc;

pub const SD_BALANCE_NEWIDLE: u32 = 1 << 0;
pub const SD_BALANCE_EXEC: u32 = 1 << 1;
pub const SD_BALANCE_FORK: u32 = 1 << 2;
pub const SD_WAKE_AFFINE: u32 = 1 << 4;
pub const SD_SHARE_CPUCAPACITY: u32 = 1 << 7;
pub const SD_CLUSTER: u32 = 1 << 8;
pub const SD_SHARE_LLC: u32 = 1 << 9;
pub const SD_SERIALIZE: u32 = 1 << 10;
pub const SD_PREFER_SIBLING: u32 = 1 << 12;
pub const SD_OVERLAP: u32 = 1 << 13;
pub const SD_NUMA: u32 = 1 << 14;
/// SCHED_CAPACITY_SCALE: one CPU's capacity.
pub const SCHED_CAPACITY_SCALE: u64 = 1024;

const FLAG_NAMES: &[(u32, &str)] = &[
    (SD_BALANCE_NEWIDLE, "SD_BALANCE_NEWIDLE"),
    (SD_BALANCE_EXEC, "SD_BALANCE_EXEC"),
    (SD_BALANCE_FORK, "SD_BALANCE_FORK"),
    (SD_WAKE_AFFINE, "SD_WAKE_AFFINE"),
    (SD_SHARE_CPUCAPACITY, "SD_SHARE_CPUCAPACITY"),
    (SD_CLUSTER, "SD_CLUSTER"),
    (SD_SHARE_LLC, "SD_SHARE_LLC"),
    (SD_SERIALIZE, "SD_SERIALIZE"),
    (SD_PREFER_SIBLING, "SD_PREFER_SIBLING"),
    (SD_OVERLAP, "SD_OVERLAP"),
    (SD_NUMA, "SD_NUMA"),
];

pub fn flag_names(flags: u32) -> Vec<&'static str> {
    FLAG_NAMES
        .iter()
        .filter(|(f, _)| flags & f != 0)
        .map(|&(_, n)| n)
        .collect()
}

#[derive(Clone, Debug)]
pub struct Group {
    pub span: CpuSet,
    pub cpus: Vec<u32>,
    /// `group_balance_mask`: the CPUs that may balance on behalf of this group.
    pub balance_cpus: Vec<u32>,
    /// `sg->flags`: the flags of the child domain the group was built from, a lower level's for
    /// a group built through find_descended_sibling (0 for a group of one CPU).
    pub flags: u32,
    /// Per CPU of `cpus`: no SMT sibling with a lower number is in the span, so it counts a core
    /// (sgs->cores). Fixed by the topology, so looked up instead of searched on every balance pass.
    pub core_first: Vec<bool>,
}

/// One sched domain as seen by the CPUs that share it (spans, groups and parameters are shared;
/// the per-CPU mutable fields live in the scheduler's `DomainState`).
#[derive(Clone, Debug)]
pub struct Domain {
    pub name: &'static str,
    pub span: CpuSet,
    pub cpus: Vec<u32>,
    pub flags: u32,
    pub min_interval: u32,
    pub max_interval: u32,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub imb_numa_nr: u32,
    /// Local group first ("the first group of each domain is its child domain").
    pub groups: Vec<Rc<Group>>,
    /// SLIT distance of a NUMA level.
    pub numa_distance: Option<u32>,
    /// `sd->level`: the level's index in the topology table (degenerate levels keep their number).
    pub level: u32,
}

impl Domain {
    pub fn weight(&self) -> u32 {
        self.cpus.len() as u32
    }
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }
}

pub struct SchedDomains {
    /// The kernel's CPU numbers (`Topology::cpu_id`): what the text and JSON views print.
    pub(super) cpu_id: Vec<u32>,
    pub domains: Vec<Domain>,
    /// Per CPU, its domains bottom-up (indices into `domains`), degenerate levels removed.
    pub per_cpu: Vec<Vec<u32>>,
    /// `sd_llc_size` / `sd_llc_id` per CPU (the highest SD_SHARE_LLC domain).
    pub llc_size: Vec<u32>,
}

impl SchedDomains {
    pub fn of(&self, cpu: usize) -> impl Iterator<Item = &Domain> {
        self.per_cpu[cpu].iter().map(|&i| &self.domains[i as usize])
    }
}
