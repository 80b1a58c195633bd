//! The topology tables per arch (`X86_TOPOLOGY`, `ARM64_TOPOLOGY`, `POWERPC_TOPOLOGY`,
//! `RISCV_TOPOLOGY`, `SMT_MC_PKG_TOPOLOGY` (LoongArch, SPARC), `S390_TOPOLOGY`: the kernel's `SDTL_INIT` entries), the CPU masks each level
//! spans (`cpu_smt_mask`, `cpu_clustergroup_mask`, `cpu_coregroup_mask`, `cpu_cpu_mask`) and the
//! NUMA levels `sched_init_numa` appends.

use super::*;
use crate::machine::cpuset::CpuSet;
use crate::machine::hardware::Arch;
use crate::machine::topology::Topology;

/// How a level's span is found for a CPU.
#[derive(Clone, Copy)]
pub(super) enum Mask {
    /// From the CPU's place in the topology (`cpu_smt_mask`, `cpu_coregroup_mask`, `cpu_node_mask`).
    Cpu(fn(&Topology, usize) -> CpuSet),
    /// `sd_numa_mask`: the CPUs of every node within this (scheduler) distance of the CPU's node.
    Numa(u32),
}

/// One entry of the topology table, as the kernel writes `SDTL_INIT(mask, flags, name)`.
pub(super) struct TopologyLevel {
    pub(super) name: &'static str,
    pub(super) mask: fn(&Topology, usize) -> CpuSet,
    /// The level's flags function (`cpu_smt_flags`, `x86_core_flags`, ...) as its value.
    pub(super) flags: u32,
    /// Whether the machine has the level: SMT only with SMT on (a one-CPU span would degenerate
    /// anyway), PKG only without NUMA in the package (`build_sched_topology` clears it when
    /// `x86_has_numa_in_package`: the NUMA levels span the package instead).
    pub(super) present: fn(&Topology) -> bool,
    /// The entry is in the kernel's table even where it is not `present` (SMT and CLS with
    /// CONFIG_SCHED_SMT / CONFIG_SCHED_CLUSTER): it still counts in `sd->level`.
    pub(super) in_table: bool,
}

/// The x86 levels below NUMA, bottom-up: `x86_topology[]` (arch/x86/kernel/smpboot.c), the
/// arch's version of `default_topology[]` in kernel/sched/topology.c. A new level is one entry here.
pub(super) const X86_TOPOLOGY: &[TopologyLevel] = &[
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
        mask: cpu_node_mask,
        flags: 0,
        present: |t| t.spec.nodes_per_socket == 1,
        in_table: false,
    },
];

/// arm64 (and other `GENERIC_ARCH_TOPOLOGY` arches): `default_topology[]` of
/// kernel/sched/topology.c with drivers/base/arch_topology.c's masks. PKG is always in the table
/// (`tl_pkg_mask` = the node); where it equals MC or NODE one of them degenerates.
pub(super) const ARM64_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "SMT",
        mask: cpu_smt_mask,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        present: |t| t.spec.smt > 1,
        in_table: true,
    },
    TopologyLevel {
        name: "CLS",
        mask: arch_topology_clustergroup_mask,
        flags: SD_CLUSTER | SD_SHARE_LLC,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "MC",
        mask: arch_topology_coregroup_mask,
        flags: SD_SHARE_LLC,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "PKG",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
];

/// powerpc: `build_sched_topology` (arch/powerpc/kernel/smp.c) writes SMT (the small core on
/// big-core parts: `tl_smallcore_smt_mask`), CACHE only with `shared_caches` (an L2 wider than
/// the small core), MC only with `has_coregroup_support()` (PowerVM's coregroup associativity,
/// which lscpu does not show: not built here), and PKG (`tl_pkg_mask`, the node). Flags on a
/// dedicated LPAR: `powerpc_smt_flags` (no ASYM_PACKING after POWER7), `powerpc_shared_cache_flags`
/// = SD_SHARE_LLC, `powerpc_shared_proc_flags` = 0.
pub(super) const POWERPC_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "SMT",
        mask: cpu_smt_mask,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        present: |t| t.spec.smt > 1,
        in_table: true,
    },
    TopologyLevel {
        name: "CACHE",
        mask: cpu_clustergroup_mask,
        flags: SD_SHARE_LLC,
        present: |t| {
            (0..t.nr_cpus()).any(|c| t.cluster_siblings(c).len() > t.smt_siblings(c).count())
        },
        in_table: false,
    },
    TopologyLevel {
        name: "PKG",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
];

/// RISC-V: `default_topology[]` with arch_topology's masks, built without CONFIG_SCHED_SMT and
/// CONFIG_SCHED_CLUSTER (arch/riscv/Kconfig selects only ARCH_SUPPORTS_SCHED_MC): MC and PKG.
pub(super) const RISCV_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "MC",
        mask: riscv_coregroup_mask,
        flags: SD_SHARE_LLC,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "PKG",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
];

/// LoongArch and SPARC: `default_topology[]` with CONFIG_SCHED_SMT and CONFIG_SCHED_MC (their
/// Kconfig selects ARCH_SUPPORTS_SCHED_SMT and _MC, not _CLUSTER): SMT, MC, PKG. Their
/// `cpu_coregroup_mask` is the map's LLC: the importer sets it to `cpu_llc_shared_map` (the node)
/// on LoongArch and to `cpu_core_sib_cache_map` (the CPUs of one highest-level cache) on SPARC.
pub(super) const SMT_MC_PKG_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "SMT",
        mask: cpu_smt_mask,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        present: |t| t.spec.smt > 1,
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
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
];

/// s390: `s390_topology[]` (arch/s390/kernel/topology.c): SMT, MC (`core_mask`, the socket: the
/// importer sets the map's LLC to it), BOOK, DRAWER (no flags), PKG. Book and drawer ids are not
/// in the map: BOOK and DRAWER span the node, as on a machine of one book and one drawer, where
/// DRAWER and PKG degenerate into BOOK.
pub(super) const S390_TOPOLOGY: &[TopologyLevel] = &[
    TopologyLevel {
        name: "SMT",
        mask: cpu_smt_mask,
        flags: SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        present: |t| t.spec.smt > 1,
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
        name: "BOOK",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "DRAWER",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
    TopologyLevel {
        name: "PKG",
        mask: cpu_node_mask,
        flags: 0,
        present: |_| true,
        in_table: true,
    },
];

/// The architecture the domains are built for: an imported machine's own (`CpuMap::arch`, the
/// arches without presets), else the hardware preset's vendor's.
pub(super) fn arch(topo: &Topology) -> Arch {
    topo.spec
        .map
        .as_ref()
        .and_then(|m| m.arch)
        .unwrap_or_else(|| topo.spec.vendor.arch())
}

/// The arch's table of levels below NUMA.
pub(super) fn topology_table(topo: &Topology) -> &'static [TopologyLevel] {
    match arch(topo) {
        Arch::X86 => X86_TOPOLOGY,
        Arch::Arm64 => ARM64_TOPOLOGY,
        Arch::Powerpc => POWERPC_TOPOLOGY,
        Arch::Riscv => RISCV_TOPOLOGY,
        Arch::Loongarch | Arch::Sparc => SMT_MC_PKG_TOPOLOGY,
        Arch::S390 => S390_TOPOLOGY,
    }
}

/// The levels `sched_init_numa` appends, one per distinct distance: NODE at the local distance,
/// then a NUMA level (`cpu_numa_flags`, overlapping groups) per larger distance.
pub(super) const NUMA_NODE: (&str, u32) = ("NODE", 0);
pub(super) const NUMA_LEVEL: (&str, u32) = ("NUMA", SD_NUMA | SD_OVERLAP);

/// `cpu_smt_mask`: the CPU's SMT siblings.
pub(super) fn cpu_smt_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut s = CpuSet::new(topo.nr_cpus());
    topo.smt_siblings(cpu).for_each(|c| s.set(c));
    s
}

/// `cpu_clustergroup_mask` = `cpu_l2c_shared_mask` (arch/x86/kernel/smpboot.c): the CPUs sharing the
/// CPU's L2.
pub(super) fn cpu_clustergroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut s = CpuSet::new(topo.nr_cpus());
    topo.cluster_siblings(cpu)
        .iter()
        .for_each(|&c| s.set(c as usize));
    s
}

/// `cpu_coregroup_mask`: the CPUs sharing the CPU's LLC.
pub(super) fn cpu_coregroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    topo.llc_cpus[topo.cpus[cpu].llc as usize].clone()
}

/// `tl_pkg_mask` = `cpu_node_mask` (x86, and `cpu_cpu_mask` on the generic table): the CPUs of
/// the CPU's node. It is the package where a package is one node (the level is only built then on
/// x86), and spans several packages where one node holds them (NUMA off, multi-socket VMs).
pub(super) fn cpu_node_mask(topo: &Topology, cpu: usize) -> CpuSet {
    topo.node_cpus[topo.cpus[cpu].node as usize].clone()
}

/// The CPUs of the CPU's package (`core_sibling` on arm64: `topology_core_cpumask`).
pub(super) fn package_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let socket = topo.cpus[cpu].socket;
    let mut s = CpuSet::new(topo.nr_cpus());
    topo.cpus
        .iter()
        .filter(|c| c.socket == socket)
        .for_each(|c| s.set(c.cpu as usize));
    s
}

/// arm64 `cpu_coregroup_mask` (drivers/base/arch_topology.c): the smallest of the node, the
/// package and the LLC siblings, widened to the cluster where the cluster holds it. Without cache
/// information the LLC is the package (machine_file's fallback), so the package or node stands.
pub(super) fn arch_topology_coregroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut core_mask = cpu_node_mask(topo, cpu);
    let package = package_mask(topo, cpu);
    if package.is_subset_of(&core_mask) {
        core_mask = package;
    }
    let llc = cpu_coregroup_mask(topo, cpu);
    if llc.is_subset_of(&core_mask) {
        core_mask = llc;
    }
    let cluster = cpu_clustergroup_mask(topo, cpu);
    if core_mask.is_subset_of(&cluster) {
        core_mask = cluster;
    }
    core_mask
}

/// RISC-V `cpu_coregroup_mask`: arch_topology's without the cluster widening (no
/// CONFIG_SCHED_CLUSTER): the smallest of the node, the package and the LLC siblings.
pub(super) fn riscv_coregroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let mut core_mask = cpu_node_mask(topo, cpu);
    let package = package_mask(topo, cpu);
    if package.is_subset_of(&core_mask) {
        core_mask = package;
    }
    let llc = cpu_coregroup_mask(topo, cpu);
    if llc.is_subset_of(&core_mask) {
        core_mask = llc;
    }
    core_mask
}

/// arm64 `cpu_clustergroup_mask`: the cluster siblings, or the SMT siblings where the cluster
/// would span the coregroup (then MC is the level, CLS degenerates).
pub(super) fn arch_topology_clustergroup_mask(topo: &Topology, cpu: usize) -> CpuSet {
    let cluster = cpu_clustergroup_mask(topo, cpu);
    if arch_topology_coregroup_mask(topo, cpu).is_subset_of(&cluster) {
        cpu_smt_mask(topo, cpu)
    } else {
        cluster
    }
}

/// A level of this machine: a topology table entry or a NUMA level.
pub(super) struct Level {
    pub(super) name: &'static str,
    pub(super) flags: u32,
    pub(super) mask: Mask,
    /// `sd->level`
    pub(super) level: u32,
}

impl Level {
    /// SLIT distance of a NUMA level.
    pub(super) fn numa_distance(&self) -> Option<u32> {
        match self.mask {
            Mask::Numa(d) => Some(d),
            Mask::Cpu(_) => None,
        }
    }
}
