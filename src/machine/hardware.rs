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
