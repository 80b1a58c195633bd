//! `SchedDomains::build`: spans per level, degenerate removal (`cpu_attach_domain`), `sd_init`
//! values from the flags, groups (`build_sched_groups`, `build_overlap_sched_groups` through
//! `find_descended_sibling`) with balance masks, `imb_numa_nr` and `sd_llc_size`.

use super::levels::*;
use super::*;
use crate::machine::cpuset::CpuSet;
use crate::machine::hardware::Vendor;
use crate::machine::topology::{Topology, sched_distances};
use std::collections::HashMap;
use std::rc::Rc;

/// `node_reclaim_distance`: RECLAIM_DISTANCE 30, raised to 32 on AMD Zen (arch/x86/kernel/cpu/amd.c);
/// powerpc defines RECLAIM_DISTANCE 10 (arch/powerpc/include/asm/topology.h); RISC-V, LoongArch,
/// s390 and SPARC keep the generic 30 (include/linux/topology.h).
fn node_reclaim_distance(topo: &Topology) -> u32 {
    if topo.spec.map.as_ref().is_some_and(|m| m.arch.is_some()) {
        return 30;
    }
    match topo.spec.vendor {
        Vendor::Intel | Vendor::Arm | Vendor::Hisilicon => 30,
        Vendor::Amd => 32,
        Vendor::Ibm => 10,
    }
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

impl SchedDomains {
    pub fn build(topo: &Topology, snc3_fix: bool) -> SchedDomains {
        let n = topo.nr_cpus();
        let dist = sched_distances(topo, snc3_fix);
        let mut levels: Vec<Level> = Vec::new();
        let mut table_index = 0;
        for tl in topology_table(topo) {
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
        let reclaim = node_reclaim_distance(topo);
        let mut domains: Vec<Domain> = Vec::new();
        let mut shape_ids: HashMap<(usize, u32, u32), u32> = HashMap::new();
        let mut groups = GroupCache::default();
        let mut per_cpu = vec![Vec::new(); n];
        let kept_all: Vec<Vec<(usize, u32)>> = (0..n)
            .map(|cpu| {
                let mut kept: Vec<(usize, u32)> = Vec::new();
                for (li, &sid) in raw[cpu].iter().enumerate() {
                    let w = spans[sid as usize].weight();
                    if w <= 1 || kept.last().is_some_and(|&(_, c)| c == sid) {
                        continue; // sd_degenerate / sd_parent_degenerate: equal spans, one group
                    }
                    kept.push((li, sid));
                }
                kept
            })
            .collect();
        let tree = Tree {
            spans: &spans,
            raw: &raw,
            kept: &kept_all,
            levels: &levels,
            reclaim,
        };
        for (cpu, kept) in kept_all.iter().enumerate() {
            for &(li, sid) in kept {
                // The local group (groups[0]) is this CPU's child span, or the CPU itself at the
                // lowest level: CPUs sharing a span but not a local group need their own shape.
                let local = if li > 0 {
                    raw[cpu][li - 1]
                } else {
                    u32::MAX - cpu as u32
                };
                let key = (li, sid, local);
                let id = *shape_ids.entry(key).or_insert_with(|| {
                    let d = make_domain(topo, &tree, li, sid, cpu, &mut groups);
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
            cpu_id: topo.cpu_id.clone(),
            domains,
            per_cpu,
            llc_size,
        }
    }
}

/// Groups are shared between the domains of many CPUs (a 4096-CPU machine would otherwise hold a
/// copy of every MC group list per core).
#[derive(Default)]
struct GroupCache {
    /// Non-overlapping levels: the groups of a span in ascending CPU order.
    by_span: HashMap<(usize, u32), Vec<Rc<Group>>>,
    interned: HashMap<(Vec<u32>, Vec<u32>, u32), Rc<Group>>,
}

impl GroupCache {
    fn intern(
        &mut self,
        topo: &Topology,
        span: CpuSet,
        cpus: Vec<u32>,
        balance_cpus: Vec<u32>,
        flags: u32,
    ) -> Rc<Group> {
        self.interned
            .entry((cpus.clone(), balance_cpus.clone(), flags))
            .or_insert_with(|| {
                let core_first = cpus
                    .iter()
                    .map(|&c| {
                        let c = c as usize;
                        !topo.smt_siblings(c).any(|s| s < c && span.contains(s))
                    })
                    .collect();
                Rc::new(Group {
                    span,
                    cpus,
                    balance_cpus,
                    flags,
                    core_first,
                })
            })
            .clone()
    }
}

/// `sd_init()`: a level's flags, imbalance_pct and cache_nice_tries.
fn sd_init(lv: &Level, reclaim: u32) -> (u32, u32, u32) {
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
    (flags, imbalance_pct, cache_nice_tries)
}

/// What every domain's construction reads: the spans per (CPU, level) before degenerate removal,
/// the levels each CPU keeps, the topology levels and node_reclaim_distance.
struct Tree<'a> {
    spans: &'a [CpuSet],
    raw: &'a [Vec<u32>],
    kept: &'a [Vec<(usize, u32)>],
    levels: &'a [Level],
    reclaim: u32,
}

impl Tree<'_> {
    /// The flags cpu_attach_domain leaves in a group that is the local group of `cpu`'s domain at
    /// level `li`: its child's as built if that child survives; `tmp->flags` of the surviving
    /// child when the child degenerated as a parent (`parent->parent->groups->flags =
    /// tmp->flags`); none when every level below degenerated (the `sg->flags = 0` after
    /// sd_degenerate of the lowest domain). SD_PREFER_SIBLING moving down from a degenerate
    /// parent never changes a flag here: only NUMA levels lack it, and their parents too.
    fn local_group_flags(&self, cpu: usize, li: usize) -> u32 {
        self.kept[cpu]
            .iter()
            .rev()
            .find(|&&(l, _)| l < li)
            .map_or(0, |&(l, _)| sd_init(&self.levels[l], self.reclaim).0)
    }
}

/// `sd_init()` plus the groups (`build_sched_groups` / `build_overlap_sched_groups`).
#[allow(clippy::too_many_arguments)]
fn make_domain(
    topo: &Topology,
    tree: &Tree,
    li: usize,
    sid: u32,
    cpu: usize,
    cache: &mut GroupCache,
) -> Domain {
    let (spans, raw, levels, reclaim) = (tree.spans, tree.raw, tree.levels, tree.reclaim);
    let span = spans[sid as usize].clone();
    let weight = span.weight() as u32;
    let lv = &levels[li];
    let (flags, imbalance_pct, cache_nice_tries) = sd_init(lv, reclaim);
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
                // sg->flags = the flags of the (descended) sibling's child domain as built
                // (get_group, build_group_from_child_sched_domain), then cpu_attach_domain's
                // fix of each CPU's local group: a non-overlapping group is shared by the
                // domains of its CPUs and local to them, so every one is fixed; of the
                // overlapping groups (one copy per domain) only the local one.
                let gflags = if !overlap || gspan.contains(cpu) {
                    tree.local_group_flags(i, li)
                } else if sl == 0 {
                    0
                } else {
                    sd_init(&levels[sl - 1], reclaim).0
                };
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
                groups.push(cache.intern(topo, gspan, cpus, balance_cpus, gflags));
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
