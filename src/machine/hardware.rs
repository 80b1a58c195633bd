//! The hardware figures a machine is priced with: the vendor, the latency classes between two CPUs
//! and a machine's one-way transfer table, and the default RMW hold window. Every figure's source
//! is in docs/MODEL.md (§1, §5 and the constants table). It uses nothing of the crate.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vendor {
    Intel,
    Amd,
    /// IBM POWER (powerpc64).
    Ibm,
    /// Arm Neoverse cores (lscpu "Vendor ID: ARM"): NVIDIA Grace, AWS Graviton, Ampere Altra.
    Arm,
    /// HiSilicon TaiShan cores (Kunpeng 920).
    Hisilicon,
}

/// The architecture whose topology table the kernel builds its domains from (`domains`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    /// `x86_topology[]` (arch/x86/kernel/smpboot.c).
    X86,
    /// `default_topology[]` with the masks of drivers/base/arch_topology.c.
    Arm64,
    /// `powerpc_topology[]` (arch/powerpc/kernel/smp.c).
    Powerpc,
    /// `default_topology[]` with arch_topology's masks, built without CONFIG_SCHED_SMT and
    /// CONFIG_SCHED_CLUSTER (arch/riscv/Kconfig selects only ARCH_SUPPORTS_SCHED_MC). No preset:
    /// only imported machines have it (`CpuMap::arch`).
    Riscv,
    /// `default_topology[]` (SMT, MC, PKG) with `cpu_coregroup_mask` = `cpu_llc_shared_map`, the
    /// CPUs of the node (arch/loongarch/kernel/smp.c). Imported machines only.
    Loongarch,
    /// `s390_topology[]` (arch/s390/kernel/topology.c): SMT, MC (the socket), BOOK, DRAWER, PKG.
    /// Imported machines only.
    S390,
    /// `default_topology[]` (SMT, MC, PKG) with `cpu_coregroup_mask` = `cpu_core_sib_cache_map`
    /// (the CPUs of one `max_cache_id`, arch/sparc/kernel/smp_64.c). Imported machines only.
    Sparc,
}

impl Arch {
    /// The kernel's directory name (`arch/<name>/`).
    pub fn name(self) -> &'static str {
        match self {
            Arch::X86 => "x86",
            Arch::Arm64 => "arm64",
            Arch::Powerpc => "powerpc",
            Arch::Riscv => "riscv",
            Arch::Loongarch => "loongarch",
            Arch::S390 => "s390",
            Arch::Sparc => "sparc",
        }
    }

    /// The arch named by `name` (its `arch/` directory), for the link form.
    pub fn from_name(name: &str) -> Option<Arch> {
        [
            Arch::X86,
            Arch::Arm64,
            Arch::Powerpc,
            Arch::Riscv,
            Arch::Loongarch,
            Arch::S390,
            Arch::Sparc,
        ]
        .into_iter()
        .find(|a| a.name() == name)
    }

    /// The kernel's table of domain levels below NUMA for this architecture, as named in notes.
    pub fn table(self) -> &'static str {
        match self {
            Arch::X86 => "x86's x86_topology[] (SMT, CLS, MC, PKG)",
            Arch::Arm64 => {
                "arm64's default_topology[] with arch_topology's masks (SMT, CLS, MC, PKG)"
            }
            Arch::Powerpc => "powerpc's powerpc_topology[] (SMT, CACHE, PKG)",
            Arch::Riscv => {
                "RISC-V's default_topology[] with arch_topology's masks, without SCHED_SMT and SCHED_CLUSTER (MC, PKG)"
            }
            Arch::Loongarch => {
                "LoongArch's default_topology[] (SMT, MC, PKG), MC the node (cpu_llc_shared_map)"
            }
            Arch::S390 => {
                "s390's s390_topology[] (SMT, MC, BOOK, DRAWER, PKG), MC the socket; one book and one drawer assumed"
            }
            Arch::Sparc => {
                "SPARC's default_topology[] (SMT, MC, PKG), MC the CPUs of one max_cache_id"
            }
        }
    }

    /// Whether a hardware preset of this architecture exists (else an imported machine keeps
    /// the arch in its map, for its domain table, and takes another arch's hardware figures).
    pub fn has_presets(self) -> bool {
        matches!(self, Arch::X86 | Arch::Arm64 | Arch::Powerpc)
    }
}

impl Vendor {
    pub fn arch(self) -> Arch {
        match self {
            Vendor::Intel | Vendor::Amd => Arch::X86,
            Vendor::Arm | Vendor::Hisilicon => Arch::Arm64,
            Vendor::Ibm => Arch::Powerpc,
        }
    }
}

/// One-way cache-line transfer latency by CPU-pair class, in ns (a measured table per machine).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatencyTable {
    pub smt: u32,
    /// Same cluster (module sharing an L2: `cpu_clustergroup_mask`), other core.
    pub cluster: u32,
    pub llc: u32,
    /// Same socket, other LLC/node, near (adjacent die, or any other CCX on AMD).
    pub node_near: u32,
    /// Same socket, far die (Intel SNC: the node at the larger SLIT distance).
    pub node_far: u32,
    pub socket: u32,
    pub source: &'static str,
    /// The classes whose figure is a CAS ping-pong one-way time (core-to-core-latency): it
    /// contains the locked instruction, so an atomic that fetches the line adds nothing to it;
    /// the others are load (HITM) latencies, and an atomic adds the locked op.
    pub cas_measured: &'static [LatencyClass],
    /// The plausible range of the whole table as a scale, % (low, high): its measured spread, or
    /// for a placeholder the assumed one. The sensitivity screen's `XFER_PCT` (src/assumptions).
    pub spread_pct: [u32; 2],
}

impl LatencyTable {
    /// Every class scaled by `pct` % (rounded to the nearest ns); 100 is the table itself.
    pub fn scaled(&self, pct: u64) -> LatencyTable {
        if pct == 100 {
            return *self;
        }
        let f = |x: u32| ((x as u64 * pct + 50) / 100) as u32;
        LatencyTable {
            smt: f(self.smt),
            cluster: f(self.cluster),
            llc: f(self.llc),
            node_near: f(self.node_near),
            node_far: f(self.node_far),
            socket: f(self.socket),
            ..*self
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LatencyClass {
    Same,
    Smt,
    /// Same L2 module, other core.
    Cluster,
    Llc,
    NodeNear,
    NodeFar,
    Socket,
}

/// How long a core keeps a line after a locked read-modify-write before the next queued request
/// is served. No direct measurement exists (HARDWARE.md §6); the CAS ping-pong tables bound it: a
/// same-CCX one-way of 23-27 ns is the L3 transfer (13-16 ns) plus the locked op (~8), leaving
/// about nothing for a hold (docs/MODEL.md §5). A machine can set another (`rmw_hold_ns`).
pub const DEFAULT_RMW_HOLD_NS: u64 = 0;

/// A core's store buffer (store queue): how many retired stores it holds before the core stalls
/// (`coherence::StoreBuffer`). Per core design, from the vendor's manual or a measurement; the
/// sources and the assumptions [A] with their ranges are in docs/MODEL.md §5c.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreStoreBuffer {
    pub core: &'static str,
    pub entries: u32,
    pub source: &'static str,
}

pub const SB_GOLDEN_COVE: CoreStoreBuffer = CoreStoreBuffer {
    core: "Golden Cove",
    entries: 114,
    source: "Chips and Cheese Golden Cove table (HARDWARE-2.md §5)",
};
pub const SB_REDWOOD_COVE: CoreStoreBuffer = CoreStoreBuffer {
    core: "Redwood Cove",
    entries: 114,
    source: "as Golden Cove: C&C 'Redwood Cove: Baby Steps' finds no structure-size change (HARDWARE-2.md §5)",
};
pub const SB_SKYLAKE_SP: CoreStoreBuffer = CoreStoreBuffer {
    core: "Skylake-SP / Cascade Lake",
    entries: 56,
    source: "[A] 56, the figure usually quoted from Intel's optimization manual for Skylake; not read here (range 42-72)",
};
pub const SB_CRESTMONT: CoreStoreBuffer = CoreStoreBuffer {
    core: "Crestmont / Darkmont",
    entries: 50,
    source: "[A] no source found (HARDWARE-2.md §5 gap 8); range 32-80",
};
pub const SB_ZEN1: CoreStoreBuffer = CoreStoreBuffer {
    core: "Zen / Dhyana",
    entries: 44,
    source: "wikichip Zen; planet3dnow Hot Chips analysis (HARDWARE-2.md §5)",
};
pub const SB_ZEN3: CoreStoreBuffer = CoreStoreBuffer {
    core: "Zen 3",
    entries: 64,
    source: "anandtech 16214 p.4: 'from 48 entries to 64' (HARDWARE-2.md §5)",
};
pub const SB_ZEN4: CoreStoreBuffer = CoreStoreBuffer {
    core: "Zen 4 / Zen 4c",
    entries: 64,
    source: "C&C 'Zen 4 Part 2' (HARDWARE-2.md §5); Zen 4c is the same core",
};
pub const SB_ZEN5: CoreStoreBuffer = CoreStoreBuffer {
    core: "Zen 5 / Zen 5c",
    entries: 64,
    source: "[A] Zen 4's 64 (AMD SOG 58455 not read here: HARDWARE-2.md §5 gap 8); range 64-104",
};
pub const SB_NEOVERSE_V2: CoreStoreBuffer = CoreStoreBuffer {
    core: "Neoverse V2",
    entries: 64,
    source: "[A] no source found; range 48-96",
};
pub const SB_TAISHAN_V110: CoreStoreBuffer = CoreStoreBuffer {
    core: "TaiShan v110",
    entries: 48,
    source: "[A] no source found; range 32-64",
};
pub const SB_POWER10: CoreStoreBuffer = CoreStoreBuffer {
    core: "POWER10",
    entries: 64,
    source: "[A] no source found (per SMT thread); range 32-128",
};
