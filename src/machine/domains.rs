//! Sched domains built per CPU as `kernel/sched/topology.c` builds them: the x86 topology levels
//! (SMT, CLS, MC, PKG only without NUMA-in-package), `sched_init_numa` (NODE + one NUMA level per distinct
//! distance), `sd_init` flags and intervals, overlapping NUMA groups with balance masks, and the
//! removal of degenerate levels (`cpu_attach_domain`).

use crate::machine::cpuset::CpuSet;
use crate::machine::hardware::Vendor;
use crate::machine::topology::{Topology, sched_distances};
use serde::Serialize;
use std::collections::HashMap;
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

/// `node_reclaim_distance`: RECLAIM_DISTANCE 30, raised to 32 on AMD Zen (arch/x86/kernel/cpu/amd.c).
fn node_reclaim_distance(vendor: Vendor) -> u32 {
    match vendor {
        Vendor::Intel => 30,
        Vendor::Amd => 32,
    }
}

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
    pub domains: Vec<Domain>,
    /// Per CPU, its domains bottom-up (indices into `domains`), degenerate levels removed.
    pub per_cpu: Vec<Vec<u32>>,
    /// `sd_llc_size` / `sd_llc_id` per CPU (the highest SD_SHARE_LLC domain).
    pub llc_size: Vec<u32>,
}

/// Distinct spans, each stored once.
#[derive(Default)]
struct Interner(Vec<CpuSet>, HashMap<CpuSet, u32>);

impl Interner {
    fn intern(&mut self, s: CpuSet) -> u32 {
        if let Some(&id) = self.1.get(&s) {
            return id;
        }
        self.0.push(s.clone());
        self.1.insert(s, self.0.len() as u32 - 1);
        self.0.len() as u32 - 1
    }
}

/// How a level's span is found for a CPU.
#[derive(Clone, Copy)]
enum Mask {
    /// From the CPU's place in the topology (`cpu_smt_mask`, `cpu_coregroup_mask`, `cpu_cpu_mask`).
    Cpu(fn(&Topology, usize) -> CpuSet),
    /// `sd_numa_mask`: the CPUs of every node within this (scheduler) distance of the CPU's node.
    Numa(u32),
}

/// One entry of the topology table, as the kernel writes `SDTL_INIT(mask, flags, name)`.
struct TopologyLevel {
    name: &'static str,
    mask: fn(&Topology, usize) -> CpuSet,
    /// The level's flags function (`cpu_smt_flags`, `x86_core_flags`, ...) as its value.
    flags: u32,
    /// Whether the machine has the level: SMT only with SMT on (a one-CPU span would degenerate
    /// anyway), PKG only without NUMA in the package (`build_sched_topology` clears it when
    /// `x86_has_numa_in_package`: the NUMA levels span the package instead).
    present: fn(&Topology) -> bool,
    /// The entry is in the kernel's table even where it is not `present` (SMT and CLS with
    /// CONFIG_SCHED_SMT / CONFIG_SCHED_CLUSTER): it still counts in `sd->level`.
    in_table: bool,
}

/// The x86 levels below NUMA, bottom-up: `x86_topology[]` (arch/x86/kernel/smpboot.c), the
/// arch's version of `default_topology[]` in kernel/sched/topology.c. A new level is one entry here.
const X86_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "SMT",
        mask: cpu_smt_mask,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        present: |t| t.spec.smt > 1,
        in_table: true,
    },
    // CONFIG_SCHED_CLUSTER (default y): `x86_cluster_flags` = SD_CLUSTER | SD_SHARE_LLC (no ITMT).
    // Without L2 modules the span is the SMT siblings (or the CPU) and the level degenerates; a
    // cluster as wide as the LLC makes MC the degenerate parent instead (sd_parent_degenerate).
    TopologyLevel {
        name: "CLS",
        mask: cpu_clustergroup_mask,
        flags: SD_CLUSTER | SD_SHARE_LLC,
        present: |t| t.spec.cores_per_cluster > 1,
        in_table: true,
    },
    TopologyLevel {
        name: "MC",
        mask: cpu_coregroup_mask,
        flags: SD_SHARE_LLC,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "PKG",
        mask: cpu_cpu_mask,
        flags: 0,
        present: |t| t.spec.nodes_per_socket == 1,
        in_table: false,
    },
];

/// The levels `sched_init_numa` appends, one per distinct distance: NODE at the local distance,
/// then a NUMA level (`cpu_numa_flags`, overlapping groups) per larger distance.
const NUMA_NODE: (&str, u32) = ("NODE", 0);
const NUMA_LEVEL: (&str, u32) = ("NUMA", SD_NUMA | SD_OVERLAP);

/// `cpu_smt_mask`: the CPU's SMT siblings.
fn cpu_smt_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut s = CpuSet::new(topo.nr_cpus());
    topo.smt_siblings(cpu).for_each(|c| s.set(c));
    s
}

/// `cpu_clustergroup_mask` = `cpu_l2c_shared_mask` (arch/x86/kernel/smpboot.c): the CPUs sharing the
/// CPU's L2.
fn cpu_clustergroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut s = CpuSet::new(topo.nr_cpus());
    topo.cluster_siblings(cpu)
        .iter()
        .for_each(|&c| s.set(c as usize));
    s
}

/// `cpu_coregroup_mask`: the CPUs sharing the CPU's LLC.
fn cpu_coregroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    topo.llc_cpus[topo.cpus[cpu].llc as usize].clone()
}

/// `cpu_cpu_mask`: the CPUs of the CPU's package.
fn cpu_cpu_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let socket = topo.cpus[cpu].socket;
    let mut s = CpuSet::new(topo.nr_cpus());
    for (node, set) in topo.node_cpus.iter().enumerate() {
        if topo.socket_of_node[node] == socket {
            s.union_with(set);
        }
    }
    s
}

/// A level of this machine: a topology table entry or a NUMA level.
struct Level {
    name: &'static str,
    flags: u32,
    mask: Mask,
    /// `sd->level`
    level: u32,
}

impl Level {
    /// SLIT distance of a NUMA level.
    fn numa_distance(&self) -> Option<u32> {
        match self.mask {
            Mask::Numa(d) => Some(d),
            Mask::Cpu(_) => None,
        }
    }
}

impl SchedDomains {
    pub fn build(topo: &Topology, snc3_fix: bool) -> SchedDomains {
        let n = topo.nr_cpus();
        let dist = sched_distances(topo, snc3_fix);
        let mut levels: Vec<Level> = Vec::new();
        let mut table_index = 0;
        for tl in X86_TOPOLOGY {
            let present = (tl.present)(topo);
            if present {
                levels.push(Level {
                    name: tl.name,
                    flags: tl.flags,
                    mask: Mask::Cpu(tl.mask),
                    level: table_index,
                });
            }
            if present || tl.in_table {
                table_index += 1;
            }
        }
        let mut distances: Vec<u32> = dist.iter().flatten().copied().collect();
        distances.sort_unstable();
        distances.dedup();
        for (i, &d) in distances.iter().enumerate() {
            let (name, flags) = if i == 0 { NUMA_NODE } else { NUMA_LEVEL };
            levels.push(Level {
                name,
                flags,
                mask: Mask::Numa(d),
                level: table_index + i as u32,
            });
        }

        // Spans per (cpu, level), before degenerate removal (groups are built from these).
        let numa_span = |node: usize, d: u32| {
            let mut s = CpuSet::new(n);
            for (k, row_d) in dist[node].iter().enumerate() {
                if *row_d <= d {
                    s.union_with(&topo.node_cpus[k]);
                }
            }
            s
        };
        let mut spans = Interner::default();
        let intern = |spans: &mut Interner, s: CpuSet| spans.intern(s);
        let mut raw: Vec<Vec<u32>> = vec![Vec::with_capacity(levels.len()); n];
        let mut node_level_cache: HashMap<(usize, usize), u32> = HashMap::new();
        for (cpu, row) in raw.iter_mut().enumerate() {
            let info = topo.cpus[cpu];
            for (li, lv) in levels.iter().enumerate() {
                let id = match lv.mask {
                    Mask::Cpu(mask) => intern(&mut spans, mask(topo, cpu)),
                    Mask::Numa(d) => *node_level_cache
                        .entry((info.node as usize, li))
                        .or_insert_with(|| spans.intern(numa_span(info.node as usize, d))),
                };
                // A child not contained in its parent extends the parent (build_sched_domain).
                let id = match row.last() {
                    Some(&child)
                        if !spans.0[child as usize].is_subset_of(&spans.0[id as usize]) =>
                    {
                        let mut s = spans.0[id as usize].clone();
                        s.union_with(&spans.0[child as usize].clone());
                        intern(&mut spans, s)
                    }
                    _ => id,
                };
                row.push(id);
            }
        }

        let spans = spans.0;
        let reclaim = node_reclaim_distance(topo.spec.vendor);
        let mut domains: Vec<Domain> = Vec::new();
        let mut shape_ids: HashMap<(usize, u32, u32), u32> = HashMap::new();
        let mut groups = GroupCache::default();
        let mut per_cpu = vec![Vec::new(); n];
        for cpu in 0..n {
            let mut kept: Vec<(usize, u32)> = Vec::new();
            for (li, &sid) in raw[cpu].iter().enumerate() {
                let w = spans[sid as usize].weight();
                if w <= 1 || kept.last().is_some_and(|&(_, c)| c == sid) {
                    continue; // sd_degenerate / sd_parent_degenerate: equal spans, one group
                }
                kept.push((li, sid));
            }
            for &(li, sid) in &kept {
                // The local group (groups[0]) is this CPU's child span, or the CPU itself at the
                // lowest level: CPUs sharing a span but not a local group need their own shape.
                let local = if li > 0 {
                    raw[cpu][li - 1]
                } else {
                    u32::MAX - cpu as u32
                };
                let key = (li, sid, local);
                let id = *shape_ids.entry(key).or_insert_with(|| {
                    let lv = &levels[li];
                    let d = make_domain(topo, &spans, &raw, lv, li, sid, cpu, reclaim, &mut groups);
                    domains.push(d);
                    domains.len() as u32 - 1
                });
                per_cpu[cpu].push(id);
            }
        }
        // imb_numa_nr (build_sched_domains), per CPU bottom-up.
        let mut imb_set: HashMap<u32, u32> = HashMap::new();
        for cpu_domains in &per_cpu {
            let (mut imb, mut imb_span) = (0u32, 1u32);
            for (k, &id) in cpu_domains.iter().enumerate() {
                let d = &domains[id as usize];
                let child = if k > 0 {
                    Some(&domains[cpu_domains[k - 1] as usize])
                } else {
                    None
                };
                let value = if !d.has(SD_SHARE_LLC) && child.is_some_and(|c| c.has(SD_SHARE_LLC)) {
                    let nr_llcs = d.weight() / child.map_or(1, |c| c.weight());
                    imb = if nr_llcs == 1 {
                        d.weight() >> 3
                    } else {
                        nr_llcs
                    }
                    .max(1);
                    imb_span = cpu_domains[k + 1..]
                        .iter()
                        .map(|&p| &domains[p as usize])
                        .find(|p| p.has(SD_NUMA))
                        .map_or(d.weight(), |p| p.weight());
                    imb
                } else {
                    imb * (d.weight() / imb_span.max(1)).max(1)
                };
                imb_set.entry(id).or_insert(value);
            }
        }
        for (id, v) in imb_set {
            domains[id as usize].imb_numa_nr = v;
        }
        let llc_size = per_cpu
            .iter()
            .map(|ds| {
                ds.iter()
                    .rev()
                    .map(|&i| &domains[i as usize])
                    .find(|d| d.has(SD_SHARE_LLC))
                    .map_or(1, |d| d.weight())
            })
            .collect();
        SchedDomains {
            domains,
            per_cpu,
            llc_size,
        }
    }

    pub fn of(&self, cpu: usize) -> impl Iterator<Item = &Domain> {
        self.per_cpu[cpu].iter().map(|&i| &self.domains[i as usize])
    }

    /// The kernel's sched_verbose dmesg for one CPU, plus each domain's debugfs values.
    pub fn sched_verbose(&self, cpu: usize) -> String {
        let mut s = format!("CPU{cpu} attaching sched-domain(s):\n");
        for (k, d) in self.of(cpu).enumerate() {
            let indent = " ".repeat(k + 1);
            s += &format!("{indent}domain-{k}: span={} level={}\n", d.span, d.name);
            let groups: Vec<String> = d
                .groups
                .iter()
                .take(8)
                .map(|g| format!("{}:{{ span={} }}", g.cpus[0], g.span))
                .collect();
            let more = if d.groups.len() > 8 {
                format!(", ... ({} groups)", d.groups.len())
            } else {
                String::new()
            };
            s += &format!("{indent} groups: {}{more}\n", groups.join(", "));
            s += &format!(
                "{indent} debugfs: name={} flags={} min_interval={} max_interval={} busy_factor={} imbalance_pct={} cache_nice_tries={}\n",
                d.name,
                flag_names(d.flags).join(" "),
                d.min_interval,
                d.max_interval,
                d.busy_factor,
                d.imbalance_pct,
                d.cache_nice_tries
            );
        }
        s
    }

    /// What `sched_domain_debug` prints for one CPU at boot with `sched_verbose`
    /// (kernel/sched/topology.c): the domains bottom-up, each group as `id:{ span=... }` with the
    /// balance mask of an overlapping group that differs from its span and the group capacity
    /// when it is not SCHED_CAPACITY_SCALE. The capacity is 1024 per CPU (no RT/IRQ pressure in
    /// the model); the id is the first CPU of the group (of its balance mask when overlapping).
    pub fn dmesg(&self, cpu: usize) -> String {
        if self.per_cpu[cpu].is_empty() {
            return format!("CPU{cpu} attaching NULL sched-domain.\n");
        }
        let mut s = format!("CPU{cpu} attaching sched-domain(s):\n");
        let n = self.per_cpu.len();
        for (k, d) in self.of(cpu).enumerate() {
            s += &format!("{:k$} domain-{k}: span={} level={}\n", "", d.span, d.name);
            s += &format!("{:w$} groups:", "", w = k + 1);
            for (i, g) in d.groups.iter().enumerate() {
                let overlap = d.has(SD_OVERLAP);
                let id = if overlap {
                    g.balance_cpus.first().copied().unwrap_or(g.cpus[0])
                } else {
                    g.cpus[0]
                };
                s += &format!(" {id}:{{ span={}", g.span);
                if overlap && g.balance_cpus != g.cpus {
                    let mut m = CpuSet::new(n);
                    g.balance_cpus.iter().for_each(|&c| m.set(c as usize));
                    s += &format!(" mask={m}");
                }
                let cap = SCHED_CAPACITY_SCALE * g.cpus.len() as u64;
                if cap != SCHED_CAPACITY_SCALE {
                    s += &format!(" cap={cap}");
                }
                s += " }";
                if i + 1 < d.groups.len() {
                    s += ",";
                }
            }
            s += "\n";
        }
        s
    }

    /// The files of /sys/kernel/debug/sched/domains/cpuN/domainM/ (v6.18 `register_sd`) as
    /// `grep . cpuN/domain*/*` lists them: name, flags and groups_flags (`sd_flags_show`: the
    /// names, each followed by a space), the sd_init intervals, `level` and
    /// `max_newidle_lb_cost` (0 at boot: no newidle balance has run).
    pub fn debugfs(&self, cpu: usize) -> String {
        let mut s = String::new();
        let doms: Vec<&Domain> = self.of(cpu).collect();
        for (k, d) in doms.iter().enumerate() {
            let dir = format!("/sys/kernel/debug/sched/domains/cpu{cpu}/domain{k}");
            let names = |f: u32| {
                flag_names(f)
                    .iter()
                    .map(|n| format!("{n} "))
                    .collect::<String>()
            };
            // sched groups carry their child domain's flags; none for the lowest domain
            let groups_flags = if k > 0 { doms[k - 1].flags } else { 0 };
            for (file, v) in [
                ("busy_factor", d.busy_factor.to_string()),
                ("cache_nice_tries", d.cache_nice_tries.to_string()),
                ("flags", names(d.flags)),
                ("groups_flags", names(groups_flags)),
                ("imbalance_pct", d.imbalance_pct.to_string()),
                ("level", d.level.to_string()),
                ("max_interval", d.max_interval.to_string()),
                ("max_newidle_lb_cost", "0".to_string()),
                ("min_interval", d.min_interval.to_string()),
                ("name", d.name.to_string()),
            ] {
                s += &format!("{dir}/{file}:{v}\n");
            }
        }
        s
    }

    pub fn to_json(&self, cpu: usize) -> Vec<DomainJson> {
        self.of(cpu)
            .enumerate()
            .map(|(k, d)| DomainJson {
                level: k as u32,
                name: d.name,
                span: d.span.to_string(),
                span_weight: d.weight(),
                flags: flag_names(d.flags),
                min_interval: d.min_interval,
                max_interval: d.max_interval,
                busy_factor: d.busy_factor,
                imbalance_pct: d.imbalance_pct,
                cache_nice_tries: d.cache_nice_tries,
                groups: d.groups.iter().map(|g| g.span.to_string()).collect(),
            })
            .collect()
    }
}

#[derive(Serialize, Debug)]
pub struct DomainJson {
    pub level: u32,
    pub name: &'static str,
    pub span: String,
    pub span_weight: u32,
    pub flags: Vec<&'static str>,
    pub min_interval: u32,
    pub max_interval: u32,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub groups: Vec<String>,
}

/// Groups are shared between the domains of many CPUs (a 4096-CPU machine would otherwise hold a
/// copy of every MC group list per core).
#[derive(Default)]
struct GroupCache {
    /// Non-overlapping levels: the groups of a span in ascending CPU order.
    by_span: HashMap<(usize, u32), Vec<Rc<Group>>>,
    interned: HashMap<(Vec<u32>, Vec<u32>), Rc<Group>>,
}

impl GroupCache {
    fn intern(&mut self, span: CpuSet, cpus: Vec<u32>, balance_cpus: Vec<u32>) -> Rc<Group> {
        self.interned
            .entry((cpus.clone(), balance_cpus.clone()))
            .or_insert_with(|| {
                Rc::new(Group {
                    span,
                    cpus,
                    balance_cpus,
                })
            })
            .clone()
    }
}

/// `sd_init()` plus the groups (`build_sched_groups` / `build_overlap_sched_groups`).
#[allow(clippy::too_many_arguments)]
fn make_domain(
    topo: &Topology,
    spans: &[CpuSet],
    raw: &[Vec<u32>],
    lv: &Level,
    li: usize,
    sid: u32,
    cpu: usize,
    reclaim: u32,
    cache: &mut GroupCache,
) -> Domain {
    let span = spans[sid as usize].clone();
    let weight = span.weight() as u32;
    let mut flags = SD_BALANCE_NEWIDLE
        | SD_BALANCE_EXEC
        | SD_BALANCE_FORK
        | SD_WAKE_AFFINE
        | SD_PREFER_SIBLING
        | lv.flags;
    let (mut imbalance_pct, mut cache_nice_tries) = (117, 0);
    if flags & SD_SHARE_CPUCAPACITY != 0 {
        imbalance_pct = 110;
    } else if flags & SD_SHARE_LLC != 0 {
        cache_nice_tries = 1;
    } else if flags & SD_NUMA != 0 {
        cache_nice_tries = 2;
        flags &= !SD_PREFER_SIBLING;
        flags |= SD_SERIALIZE;
        if lv.numa_distance().is_some_and(|d| d > reclaim) {
            flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
        }
    } else {
        cache_nice_tries = 1;
    }
    let n = topo.nr_cpus();
    let single = |i: usize| {
        let mut s = CpuSet::new(n);
        s.set(i);
        s
    };
    // The level whose child span makes CPU i's group: its own level, or for overlapping NUMA
    // levels the first descendant whose child fits in this span (find_descended_sibling), skipping
    // levels that would degenerate.
    let sibling_level = |i: usize| -> usize {
        let mut sl = li;
        if flags & SD_OVERLAP == 0 || sl == 0 {
            return sl;
        }
        let child = &spans[raw[i][sl - 1] as usize];
        // build_overlap_sched_groups descends (find_descended_sibling) only when the sibling's
        // child spans out of this domain, or (below) when CPU i has no domain at this level:
        // build_sched_domains stopped at a child spanning every CPU; the group is then the child
        // of CPU i's top domain. Otherwise the child is the group, even when it equals the
        // sibling's span.
        if !child.is_subset_of(&span) || child.weight() == topo.nr_cpus() {
            while sl > 0 && !spans[raw[i][sl - 1] as usize].is_subset_of(&span) {
                sl -= 1;
            }
            while sl > 0 && raw[i][sl - 1] == raw[i][sl] {
                sl -= 1;
            }
        }
        sl
    };
    let child_span = |i: usize, sl: usize| -> CpuSet {
        if sl == 0 {
            single(i)
        } else {
            spans[raw[i][sl - 1] as usize].clone()
        }
    };
    // Groups: walk the span starting at this CPU (for_each_cpu_wrap), each uncovered CPU adds the
    // child span of its (descended) sibling domain.
    let overlap = flags & SD_OVERLAP != 0;
    let start = if overlap {
        cpu
    } else {
        span.first().unwrap_or(cpu)
    };
    let cached = if overlap {
        None
    } else {
        cache.by_span.get(&(li, sid)).cloned()
    };
    let mut groups = match cached {
        Some(g) => g,
        None => {
            let order: Vec<usize> = span
                .iter()
                .filter(|&c| c >= start)
                .chain(span.iter().filter(|&c| c < start))
                .collect();
            let mut covered = CpuSet::new(n);
            let mut groups = Vec::new();
            for &i in &order {
                if covered.contains(i) {
                    continue;
                }
                let sl = sibling_level(i);
                let gspan = child_span(i, sl);
                covered.union_with(&gspan);
                let cpus: Vec<u32> = gspan.iter().map(|c| c as u32).collect();
                let balance_cpus = if overlap {
                    // build_balance_mask: CPUs whose own child domain at that level is exactly this group.
                    gspan
                        .iter()
                        .filter(|&j| sl > 0 && child_span(j, sl) == gspan)
                        .map(|c| c as u32)
                        .collect()
                } else {
                    cpus.clone()
                };
                groups.push(cache.intern(gspan, cpus, balance_cpus));
            }
            if !overlap {
                cache.by_span.insert((li, sid), groups.clone());
            }
            groups
        }
    };
    // The local group first, then on in CPU order from there (wrapping).
    if let Some(k) = groups.iter().position(|g| g.span.contains(cpu)) {
        groups.rotate_left(k);
    }
    Domain {
        name: lv.name,
        cpus: span.iter().map(|c| c as u32).collect(),
        span,
        flags,
        min_interval: weight,
        max_interval: 2 * weight,
        busy_factor: 16,
        imbalance_pct,
        cache_nice_tries,
        imb_numa_nr: 0,
        groups,
        numa_distance: lv.numa_distance(),
        level: lv.level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::preset;

    fn doms(name: &str, fix: bool) -> (Topology, SchedDomains) {
        let t = Topology::new(preset(name).unwrap()).unwrap();
        let d = SchedDomains::build(&t, fix);
        (t, d)
    }

    fn numa_node_spans(t: &Topology, d: &SchedDomains, cpu: usize) -> Vec<Vec<usize>> {
        d.of(cpu)
            .filter(|x| x.has(SD_NUMA))
            .map(|x| {
                (0..t.nr_nodes)
                    .filter(|&n| t.node_cpus[n].is_subset_of(&x.span))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn gnr_96c_snc3_numa_levels_before_and_after_the_fix() {
        let (t, d) = doms("gnr-2s-96c-snc3", false);
        let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(
            names,
            vec![
                ("SMT", 2),
                ("MC", 64),
                ("NUMA", 128),
                ("NUMA", 192),
                ("NUMA", 256),
                ("NUMA", 320),
                ("NUMA", 384)
            ]
        );
        assert_eq!(
            numa_node_spans(&t, &d, 0),
            vec![
                vec![0, 1],
                vec![0, 1, 2],
                vec![0, 1, 2, 3],
                vec![0, 1, 2, 3, 5],
                vec![0, 1, 2, 3, 4, 5]
            ]
        );
        // Tim Chen's dmesg: domain-3 spans 0-95,192-287 with groups masked by node 0 and node 2.
        let d3 = d.of(0).nth(3).unwrap();
        assert_eq!(d3.span.to_string(), "0-95,192-287");
        assert_eq!(d3.groups.len(), 2);
        assert_eq!(d3.groups[1].span.to_string(), "32-95,224-287");
        let node1_cpu = 32;
        assert_eq!(numa_node_spans(&t, &d, node1_cpu).len(), 3);
        let (t, d) = doms("gnr-2s-96c-snc3", true);
        assert_eq!(
            numa_node_spans(&t, &d, 0),
            vec![vec![0, 1], vec![0, 1, 2], vec![0, 1, 2, 3, 4, 5]]
        );
        assert_eq!(numa_node_spans(&t, &d, node1_cpu).len(), 2);
    }

    #[test]
    fn local_group_first_and_overlapping_groups_stay_in_the_span() {
        let (t, d) = doms("gnr-2s-96c-snc3", false);
        // the seed's dmesg: domain-4 of CPU 0 has node 3 alone as a group (find_descended_sibling)
        let d4 = d.of(0).nth(4).unwrap();
        assert_eq!(
            d4.groups
                .iter()
                .map(|g| g.span.to_string())
                .collect::<Vec<_>>(),
            vec!["0-95,192-287", "96-127,288-319"]
        );
        for cpu in [0, 32, 100, 200, 383] {
            for dom in d.of(cpu) {
                assert!(
                    dom.groups[0].span.contains(cpu),
                    "CPU {cpu} {}: local group first",
                    dom.name
                );
                for g in &dom.groups {
                    assert!(
                        g.span.is_subset_of(&dom.span),
                        "CPU {cpu} {} group {} outside {}",
                        dom.name,
                        g.span,
                        dom.span
                    );
                }
                let covered = dom
                    .groups
                    .iter()
                    .fold(CpuSet::new(t.nr_cpus()), |mut a, g| {
                        a.union_with(&g.span);
                        a
                    });
                assert_eq!(covered, dom.span);
            }
        }
        let smt = d.of(192).next().unwrap();
        assert_eq!(smt.groups[0].span.to_string(), "192");
    }

    #[test]
    fn flags_and_intervals_follow_sd_init() {
        let (_, d) = doms("gnr-2s-snc3", false);
        let v: Vec<_> = d.of(0).collect();
        assert_eq!(
            (
                v[0].name,
                v[0].weight(),
                v[0].imbalance_pct,
                v[0].cache_nice_tries
            ),
            ("SMT", 2, 110, 0)
        );
        assert_eq!(
            (
                v[1].name,
                v[1].weight(),
                v[1].min_interval,
                v[1].max_interval
            ),
            ("MC", 86, 86, 172)
        );
        assert_eq!(v[1].cache_nice_tries, 1);
        for numa in &v[2..] {
            assert!(numa.has(SD_SERIALIZE) && numa.has(SD_NUMA) && !numa.has(SD_PREFER_SIBLING));
            assert_eq!(numa.cache_nice_tries, 2);
            assert!(
                numa.has(SD_WAKE_AFFINE),
                "GNR distances are all below node_reclaim_distance 30"
            );
        }
        assert!(!v[1].has(SD_SERIALIZE));
    }

    #[test]
    fn pkg_only_without_numa_in_package_and_degenerate_levels_removed() {
        let (_, d) = doms("milan-2s", false);
        let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(v, vec![("SMT", 2), ("MC", 16), ("PKG", 128), ("NUMA", 256)]);
        assert_eq!(d.llc_size[0], 16);
        let (_, d) = doms("gnr-2s", false);
        let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(v, vec![("SMT", 2), ("MC", 256), ("NUMA", 512)]);
        let (_, d) = doms("spr-2s-snc4", false);
        let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(
            v,
            vec![("SMT", 2), ("MC", 28), ("NUMA", 112), ("NUMA", 224)]
        );
    }

    #[test]
    fn topology_table_levels_nest_bottom_up_on_every_preset() {
        for name in crate::machine::presets::PRESETS {
            let t = Topology::new(preset(name).unwrap()).unwrap();
            for cpu in [0, t.nr_cpus() / 3, t.nr_cpus() - 1] {
                let mut child = CpuSet::new(t.nr_cpus());
                child.set(cpu);
                for tl in X86_TOPOLOGY.iter().filter(|tl| (tl.present)(&t)) {
                    let span = (tl.mask)(&t, cpu);
                    assert!(child.is_subset_of(&span), "{name} CPU {cpu} {}", tl.name);
                    child = span;
                }
            }
        }
    }

    #[test]
    fn should_we_balance_masks_pick_one_cpu_per_node_at_numa() {
        let (_, d) = doms("gnr-2s-96c-snc3", false);
        let d2 = d.of(0).nth(2).unwrap();
        // groups = SNC nodes; each group's balance mask is the node itself
        assert_eq!(d2.groups.len(), 2);
        assert_eq!(d2.groups[0].balance_cpus.len(), 64);
        assert_eq!(d2.imb_numa_nr, 2);
        let mc = d.of(0).nth(1).unwrap();
        assert_eq!(mc.groups.len(), 32, "MC groups are SMT cores");
    }

    fn custom(o: crate::machine::spec::LayoutOverrides) -> (Topology, SchedDomains) {
        let spec = preset("custom").unwrap().with_overrides(&o).unwrap();
        let t = Topology::new(spec).unwrap();
        let d = SchedDomains::build(&t, false);
        (t, d)
    }

    fn layout(smt: u32, cps: u32, llc: u32, cluster: u32) -> crate::machine::spec::LayoutOverrides {
        crate::machine::spec::LayoutOverrides {
            sockets: Some(1),
            cores_per_socket: Some(cps),
            smt: Some(smt),
            nodes_per_socket: Some(1),
            cores_per_llc: Some(llc),
            cores_per_cluster: Some(cluster),
            ..Default::default()
        }
    }

    #[test]
    fn cls_is_the_l2_cluster_between_smt_and_mc_with_sd_init_values() {
        let (_, d) = custom(layout(1, 16, 16, 4));
        let v: Vec<_> = d.of(5).collect();
        let names: Vec<_> = v.iter().map(|x| (x.name, x.weight())).collect();
        assert_eq!(names, vec![("CLS", 4), ("MC", 16)]);
        let cls = v[0];
        assert_eq!(cls.span.to_string(), "4-7");
        assert!(cls.has(SD_CLUSTER) && cls.has(SD_SHARE_LLC) && cls.has(SD_PREFER_SIBLING));
        assert!(!cls.has(SD_SHARE_CPUCAPACITY) && !cls.has(SD_SERIALIZE));
        assert_eq!(
            (
                cls.min_interval,
                cls.max_interval,
                cls.busy_factor,
                cls.imbalance_pct,
                cls.cache_nice_tries
            ),
            (4, 8, 16, 117, 1)
        );
        // the local group of CLS is the CPU itself; MC's groups are the clusters
        assert_eq!(cls.groups.len(), 4);
        assert_eq!(cls.groups[0].span.to_string(), "5");
        let mc_groups: Vec<_> = v[1].groups.iter().map(|g| g.span.to_string()).collect();
        assert_eq!(mc_groups, vec!["4-7", "8-11", "12-15", "0-3"]);
        assert!(!v[1].has(SD_CLUSTER));
        // sd_llc stays the MC level
        assert_eq!(d.llc_size[5], 16);
        // with SMT: SMT (2), CLS (cluster of 4 cores = 8 CPUs), MC
        let (_, d) = custom(layout(2, 16, 16, 4));
        let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(names, vec![("SMT", 2), ("CLS", 8), ("MC", 32)]);
        assert_eq!(d.of(16).nth(1).unwrap().span.to_string(), "0-3,16-19");
    }

    #[test]
    fn cls_degenerates_into_smt_and_mc_as_sd_parent_degenerate_says() {
        // one core per L2: the CLS span is the SMT span (or one CPU): no CLS domain
        for smt in [1, 2] {
            let (_, d) = custom(layout(smt, 16, 8, 1));
            assert!(d.of(0).all(|x| x.name != "CLS" && !x.has(SD_CLUSTER)));
        }
        // the L2 is the LLC: MC is the degenerate parent (its flags are a subset of CLS's and it
        // has one group), so one domain is left and it is CLS
        let (_, d) = custom(layout(1, 16, 8, 8));
        let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
        assert_eq!(names, vec![("CLS", 8), ("PKG", 16)]);
        assert_eq!(d.llc_size[0], 8);
    }

    /// (name, span weight, flags it must have, flags it must not have, imbalance_pct,
    /// cache_nice_tries) per level of CPU 0, and min/max interval = weight / 2 x weight (sd_init).
    type Want = (&'static str, u32, u32, u32, u32, u32);

    fn check_levels(name: &str, want: &[Want]) {
        let (_, d) = doms(name, false);
        let got: Vec<_> = d.of(0).collect();
        assert_eq!(
            got.len(),
            want.len(),
            "{name}: {:?}",
            got.iter().map(|x| x.name).collect::<Vec<_>>()
        );
        for (x, &(lvl, w, has, hasnt, imb, cnt)) in got.iter().zip(want) {
            assert_eq!((x.name, x.weight()), (lvl, w), "{name}");
            assert_eq!(
                x.flags & has,
                has,
                "{name} {lvl}: {:?}",
                flag_names(x.flags)
            );
            assert_eq!(
                x.flags & hasnt,
                0,
                "{name} {lvl}: {:?}",
                flag_names(x.flags)
            );
            assert_eq!(
                (x.imbalance_pct, x.cache_nice_tries),
                (imb, cnt),
                "{name} {lvl}"
            );
            assert_eq!(
                (x.min_interval, x.max_interval, x.busy_factor),
                (w, 2 * w, 16)
            );
        }
    }

    const BASE: u32 =
        SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;
    const NUMA_NEAR: u32 = SD_NUMA | SD_SERIALIZE | SD_OVERLAP | SD_WAKE_AFFINE | SD_BALANCE_FORK;

    #[test]
    fn e_core_presets_get_a_4_cpu_cls_level() {
        // SNC off: PKG = MC (one LLC per socket) and NODE = PKG degenerate; one NUMA level at 21
        check_levels(
            "srf-2s",
            &[
                (
                    "CLS",
                    4,
                    BASE | SD_CLUSTER | SD_SHARE_LLC,
                    SD_SHARE_CPUCAPACITY,
                    117,
                    1,
                ),
                ("MC", 144, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1),
                ("NUMA", 288, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2),
            ],
        );
        // SNC3 with the GNR SLIT: NUMA levels at 15, 17, 21, 26, 28 (row 0), all below 30
        let numa = |w| ("NUMA", w, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2);
        check_levels(
            "cwf-2s",
            &[
                ("CLS", 4, BASE | SD_CLUSTER | SD_SHARE_LLC, 0, 117, 1),
                ("MC", 96, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1),
                numa(192),
                numa(288),
                numa(384),
                numa(480),
                numa(576),
            ],
        );
        // CLS is the first level of every CPU, MC's groups are the modules
        let (t, d) = doms("srf-2s", false);
        for cpu in [0, 5, 143, 144, 287] {
            let cls = d.of(cpu).next().unwrap();
            assert_eq!((cls.name, cls.weight()), ("CLS", 4));
            assert_eq!(cls.span.first(), Some(cpu / 4 * 4));
        }
        let mc = d.of(0).nth(1).unwrap();
        assert_eq!(mc.groups.len(), 36);
        assert!(mc.groups.iter().all(|g| g.span.weight() == 4));
        assert_eq!(d.llc_size[0], 144);
        assert_eq!(t.nr_cpus(), 288);
    }

    #[test]
    fn cls_only_on_the_presets_with_modules() {
        for name in crate::machine::presets::PRESETS {
            let (t, d) = doms(name, false);
            let has_cls = d.of(0).any(|x| x.name == "CLS" || x.has(SD_CLUSTER));
            assert_eq!(has_cls, t.spec.cores_per_cluster > 1, "{name}");
            if has_cls {
                assert_eq!(d.of(0).next().unwrap().weight(), 4 * t.spec.smt, "{name}");
            }
        }
    }

    #[test]
    fn turin_presets_have_ccx_mc_and_no_cls() {
        let smt = (
            "SMT",
            2,
            BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
            SD_CLUSTER,
            110,
            0,
        );
        let mc = |w| ("MC", w, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1);
        let pkg = |w| ("PKG", w, BASE, SD_SHARE_LLC | SD_NUMA, 117, 1);
        // AMD 10/32: 32 is not above node_reclaim_distance (32 on Zen): the NUMA level keeps
        // EXEC/FORK/WAKE_AFFINE
        let numa = |w| ("NUMA", w, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2);
        check_levels("turin-2s", &[smt, mc(16), pkg(256), numa(512)]);
        check_levels("turin-dense-2s", &[smt, mc(32), pkg(384), numa(768)]);
        let (_, d) = doms("turin-dense-2s", false);
        assert_eq!(d.llc_size[0], 32);
        assert_eq!(
            d.of(0).nth(2).unwrap().groups.len(),
            12,
            "12 CCX per socket"
        );
    }

    #[test]
    fn eight_socket_slit_gives_the_numa_levels_sched_init_numa_derives() {
        // distances 10, 21, 31: NODE (= PKG = MC, degenerate), NUMA at 21 = the socket and its
        // three neighbours, NUMA at 31 = all; 31 > node_reclaim_distance 30 drops EXEC, FORK and
        // WAKE_AFFINE there
        check_levels(
            "clx-8s",
            &[
                ("SMT", 2, BASE | SD_SHARE_CPUCAPACITY, 0, 110, 0),
                ("MC", 56, BASE | SD_SHARE_LLC, 0, 117, 1),
                ("NUMA", 224, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2),
                (
                    "NUMA",
                    448,
                    SD_NUMA | SD_SERIALIZE | SD_OVERLAP | SD_BALANCE_NEWIDLE,
                    SD_WAKE_AFFINE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_PREFER_SIBLING,
                    117,
                    2,
                ),
            ],
        );
        let (t, d) = doms("clx-8s", false);
        for node in 0..8 {
            let cpu = t.node_cpus[node].first().unwrap();
            let spans = numa_node_spans(&t, &d, cpu);
            let mut near = vec![node, (node + 1) % 8, (node + 4) % 8, (node + 7) % 8];
            near.sort_unstable();
            assert_eq!(spans, vec![near, (0..8).collect()], "node {node}");
        }
        // the 2-hop level's groups are the 1-hop spans of its sockets (overlapping, 4 sockets each)
        let top = d.of(0).nth(3).unwrap();
        assert!(top.groups.iter().all(|g| g.span.weight() == 224));
        assert_eq!(top.groups[0].span, d.of(0).nth(2).unwrap().span);
        // the SLIT is the firmware's, the same for every preset build (symmetric, 10 on the diagonal)
        assert!((0..8).all(|i| (0..8).all(|j| t.slit[i][j] == t.slit[j][i])));
    }
}
