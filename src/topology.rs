//! The machine: sockets → NUMA nodes (SNC / NPS) → LLCs → cores → SMT threads, numbered as Linux
//! numbers them on these machines (thread siblings at +cores_total), the SLIT, and the one-way
//! cache-line transfer latency between any two CPUs. Every figure and its source (measured
//! latencies, SLITs, layouts) is in docs/MODEL.md, §1 and the constants table.
//!
//! Adding a machine preset: one `Preset` literal appended to `MACHINES` (its name is then listed
//! in `PRESETS`, the CLI, the page and links).

use crate::cpuset::CpuSet;
use crate::error::{FieldError, Invalid};
use crate::machine_file::CpuMap;
use serde::{Deserialize, Deserializer, Serialize};
use std::ops::RangeInclusive;
use std::sync::Arc;

pub const MAX_CPUS: usize = 4096;

// The layout limits every machine is checked against (`MachineSpec::validate`). They are the one
// source of these ranges: `scenario::MACHINE_KEYS` gives them to validation, links and the page.
/// Sockets of a generated layout: up to 32 (HPE Superdome Flex; 16-socket POWER10 E1080 and
/// Xeon boxes); an imported machine has no socket limit of its own.
pub const SOCKETS: RangeInclusive<u32> = 1..=32;
pub const CORES_PER_SOCKET: RangeInclusive<u32> = 1..=2048;
/// Threads per core: x86 has 2, POWER8-POWER11 up to 8 (SMT8), SPARC M7/M8 8.
pub const SMT: RangeInclusive<u32> = 1..=8;
pub const NODES_PER_SOCKET: RangeInclusive<u32> = 1..=4;
/// At most the machine's cores per socket; this is the bound over all machines.
pub const CORES_PER_LLC: RangeInclusive<u32> = 1..=*CORES_PER_SOCKET.end();
/// The RMW hold window in ns (`coherence::RMW_HOLD_NS` is the default).
pub const RMW_HOLD_NS: RangeInclusive<u32> = 0..=1000;

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

/// The architecture whose topology table the kernel builds its domains from (`domains.rs`).
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

/// Every class of a table measured with core-to-core-latency (CAS ping-pong).
const ALL_CAS: &[LatencyClass] = &[
    LatencyClass::Smt,
    LatencyClass::Cluster,
    LatencyClass::Llc,
    LatencyClass::NodeNear,
    LatencyClass::NodeFar,
    LatencyClass::Socket,
];

/// Everything a preset or a custom machine is made from.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineSpec {
    pub name: String,
    pub description: &'static str,
    pub vendor: Vendor,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub smt: u32,
    pub nodes_per_socket: u32,
    pub cores_per_llc: u32,
    /// Cores sharing one L2 (an E-core module): the CLS level; 1 = no cluster above the core.
    pub cores_per_cluster: u32,
    /// Raw firmware SLIT when the preset has a measured one (else the vendor's regular form).
    pub slit: Option<Vec<Vec<u32>>>,
    /// LLC size in MiB (per LLC), for the cache-aware capacity checks.
    pub llc_mib: u32,
    pub latency: LatencyTable,
    /// How long a core keeps a line after a locked RMW before the next request is served, ns
    /// (a stated assumption, the same for every preset: see `coherence::RMW_HOLD_NS`).
    pub rmw_hold_ns: u32,
    /// CONFIG_CPUMASK_OFFSTACK: `nohz.idle_cpus_mask` is a pointer to separately allocated bits
    /// (distribution kernels for big machines), else the bits sit inline (NR_CPUS = 8192 either way).
    pub cpumask_offstack: bool,
    /// An imported machine (`machine_file`): the exact CPU map and SLIT. The layout fields above
    /// then hold its maxima (`Shape`), and the hardware figures are the preset's.
    pub map: Option<Arc<CpuMap>>,
}

/// One-way transfer between two cores of one 4-core E-core module through their shared L2: the
/// closest measured part is Gracemont (i9-12900K, core-to-core-latency CAS ping-pong: 49.8-50.7 ns
/// inside a module). No Crestmont / Darkmont figure was found (docs/MODEL.md). Tables of machines
/// without L2 modules use it only for custom clusters, capped at their LLC figure.
const CLUSTER_ECORE_NS: u32 = 50;

const GNR_SNC3_SLIT: &[&[u32]] = &[
    &[10, 15, 17, 21, 28, 26],
    &[15, 10, 15, 23, 26, 23],
    &[17, 15, 10, 26, 23, 21],
    &[21, 28, 26, 10, 15, 17],
    &[23, 26, 23, 15, 10, 15],
    &[26, 23, 21, 17, 15, 10],
];

const LAT_GNR_SNC3: LatencyTable = LatencyTable {
    smt: 8,
    cluster: CLUSTER_ECORE_NS,
    llc: 81,
    node_near: 105,
    node_far: 132,
    socket: 412,
    source: "Intel MLC c2c HITM on 2S Xeon 6980P SNC3 (ik_llama.cpp #201): 81 / 99-110 / 125-140 / 372-452, midpoints",
    cas_measured: &[LatencyClass::Smt],
};
const LAT_GNR_FLAT: LatencyTable = LatencyTable {
    smt: 8,
    cluster: CLUSTER_ECORE_NS,
    llc: 180,
    node_near: 180,
    node_far: 180,
    socket: 423,
    source: "Intel MLC HITM on 2S Xeon 6980P SNC off (ik_llama.cpp #201): 180 / 413-433 midpoint",
    cas_measured: &[LatencyClass::Smt],
};
const LAT_SPR: LatencyTable = LatencyTable {
    smt: 8,
    cluster: CLUSTER_ECORE_NS,
    llc: 51,
    node_near: 51,
    node_far: 51,
    socket: 141,
    source: "no SPR measurement found, so proxies: Ice Lake 8375C on-die 51 (core-to-core-latency; same mesh generation), Cascade Lake SNC2 cross-socket 107-175 midpoint (Intel MLC, plantegg); docs/MODEL.md Sources",
    cas_measured: &[
        LatencyClass::Smt,
        LatencyClass::Llc,
        LatencyClass::NodeNear,
        LatencyClass::NodeFar,
    ],
};
const LAT_MILAN: LatencyTable = LatencyTable {
    smt: 10,
    cluster: 23,
    llc: 23,
    node_near: 108,
    node_far: 108,
    socket: 197,
    source: "CAS ping-pong on 2S Milan 7R13 (core-to-core-latency): 9.8 / 22.7 / 107.6 / 197",
    cas_measured: ALL_CAS,
};
const LAT_GENOA: LatencyTable = LatencyTable {
    smt: 10,
    cluster: 24,
    llc: 24,
    node_near: 95,
    node_far: 95,
    socket: 193,
    source: "core-to-core-latency #132 on 2S Genoa 9274F: ~24 / 87-102 / 187-199 midpoints; SMT from Milan (same core design)",
    cas_measured: ALL_CAS,
};

const LAT_SRF: LatencyTable = LatencyTable {
    smt: 8,
    cluster: CLUSTER_ECORE_NS,
    llc: 81,
    node_near: 81,
    node_far: 81,
    socket: 412,
    source: "no Sierra Forest measurement: module 50 (Gracemont 12900K CAS), one compute die 81 and cross-socket 412 from 2S 6980P SNC3 MLC HITM (same Intel 3 mesh and Birch Stream UPI); SMT unused",
    cas_measured: &[LatencyClass::Smt, LatencyClass::Cluster],
};
const LAT_CWF: LatencyTable = LatencyTable {
    smt: 8,
    cluster: CLUSTER_ECORE_NS,
    llc: 81,
    node_near: 105,
    node_far: 132,
    socket: 412,
    source: "no Clearwater Forest measurement: module 50 (Gracemont 12900K CAS), node / near / far / socket 81 / 105 / 132 / 412 from 2S 6980P SNC3 MLC HITM (3 dies per socket likewise); SMT unused",
    cas_measured: &[LatencyClass::Smt, LatencyClass::Cluster],
};

const LAT_ZEN4C: LatencyTable = LatencyTable {
    smt: 13,
    cluster: 33,
    llc: 33,
    node_near: 110,
    node_far: 110,
    socket: 204,
    source: "no Turin Dense measurement: 2S Bergamo 9754 core-to-core-latency (fwyzard): 12.7 / 32.5 / 109.7 / 203.6 (Zen 4c, same SP5 fabric)",
    cas_measured: ALL_CAS,
};
const LAT_CLX: LatencyTable = LatencyTable {
    smt: 8,
    cluster: 45,
    llc: 45,
    node_near: 45,
    node_far: 45,
    socket: 141,
    source: "Cascade Lake SNC2 MLC (plantegg): 45 in the LLC, 107-175 across sockets (midpoint; one class for 1 and 2 UPI hops); SMT 8 from Ice Lake 8375C",
    cas_measured: &[LatencyClass::Smt],
};

/// 8 sockets, 3 UPI links each, wired as a Moebius ladder (socket i to i+1, i-1, i+4): 1 hop = 21,
/// 2 hops = 31, as the firmware of glueless 8-socket Xeon Scalable boxes reports hop counts.
const XEON_8S_SLIT: &[&[u32]] = &[
    &[10, 21, 31, 31, 21, 31, 31, 21],
    &[21, 10, 21, 31, 31, 21, 31, 31],
    &[31, 21, 10, 21, 31, 31, 21, 31],
    &[31, 31, 21, 10, 21, 31, 31, 21],
    &[21, 31, 31, 21, 10, 21, 31, 31],
    &[31, 21, 31, 31, 21, 10, 21, 31],
    &[31, 31, 21, 31, 31, 21, 10, 21],
    &[21, 31, 31, 21, 31, 31, 21, 10],
];

/// Placeholder (no POWER10 measurement found; HARDWARE-2.md §2): POWER7's core-to-core-latency
/// figures, the only IBM data: 173 ns in the socket, 443 ns across; SMT as x86 parts (~10 ns).
const LAT_POWER10: LatencyTable = LatencyTable {
    smt: 10,
    cluster: 173,
    llc: 173,
    node_near: 173,
    node_far: 173,
    socket: 443,
    source: "placeholder: no POWER10 c2c measurement; POWER7 3.3 GHz core-to-core-latency (nviennot): 173 in socket, 443 across; SMT 10 as x86 siblings",
    cas_measured: ALL_CAS,
};
/// Graviton4 (chipsandcheese, Neoverse V2 on CMN-700): 30-60 ns in the socket by home mesh stop
/// (midpoint 45), 138.6 ns average across sockets.
const LAT_GRAVITON4: LatencyTable = LatencyTable {
    smt: 45,
    cluster: 45,
    llc: 45,
    node_near: 45,
    node_far: 45,
    socket: 139,
    source: "Graviton4 c2c (chipsandcheese 2024-07-22): 30-60 in socket (midpoint 45), 138.6 across sockets",
    cas_measured: ALL_CAS,
};
/// Placeholder: no Grace measurement; Graviton4's in-socket figure (the same Neoverse V2 core on a
/// CMN-700 mesh); across the NVLink-C2C link Graviton4's cross-socket 139, unmeasured.
const LAT_GRACE: LatencyTable = LatencyTable {
    source: "placeholder: no Grace c2c measurement; Graviton4 (same Neoverse V2 on CMN-700, chipsandcheese): 45 in socket, 139 across (NVLink-C2C unmeasured)",
    ..LAT_GRAVITON4
};
/// Kunpeng 920-6426: 72 ns median core-to-core in one socket (nviennot); nothing finer is
/// measured, so every in-socket class takes it; across sockets a placeholder of twice it (Ice
/// Lake 8375C: 108 vs 51).
const LAT_KUNPENG920: LatencyTable = LatencyTable {
    smt: 72,
    cluster: 72,
    llc: 72,
    node_near: 72,
    node_far: 72,
    socket: 144,
    source: "Kunpeng 920-6426 core-to-core-latency median 72 in socket (nviennot); cross-socket placeholder 144 (2x, as Ice Lake 108/51)",
    cas_measured: ALL_CAS,
};

/// A machine preset: the fields of a `MachineSpec`, as constants.
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    pub description: &'static str,
    pub vendor: Vendor,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub smt: u32,
    pub nodes_per_socket: u32,
    pub cores_per_llc: u32,
    pub cores_per_cluster: u32,
    /// A measured firmware SLIT (rows = nodes), else the vendor's regular form.
    pub slit: Option<&'static [&'static [u32]]>,
    pub llc_mib: u32,
    pub latency: LatencyTable,
    /// A layout the regular generator cannot make (POWER's adjacent SMT8 threads in two SMT4
    /// halves, Arm clusters): the preset's CPU map, as an imported machine has one. The layout
    /// fields above then describe it for the summary; layout overrides do not apply.
    pub map: Option<fn() -> CpuMap>,
}

impl Preset {
    pub fn spec(&self) -> MachineSpec {
        MachineSpec {
            name: self.name.to_string(),
            description: self.description,
            vendor: self.vendor,
            sockets: self.sockets,
            cores_per_socket: self.cores_per_socket,
            smt: self.smt,
            nodes_per_socket: self.nodes_per_socket,
            cores_per_llc: self.cores_per_llc,
            cores_per_cluster: self.cores_per_cluster,
            slit: self.slit.map(|s| s.iter().map(|r| r.to_vec()).collect()),
            llc_mib: self.llc_mib,
            latency: self.latency,
            rmw_hold_ns: crate::coherence::RMW_HOLD_NS as u32,
            cpumask_offstack: true,
            map: None,
        }
        .with_preset_map(self.map)
    }
}

/// Machine presets, append-only (links name them).
pub const MACHINES: &[Preset] = &[
    Preset {
        name: "gnr-2s-snc3",
        description: "2S Xeon 6980P (Granite Rapids-AP), 2x128 cores, SMT2, SNC3 (43/43/42), raw asymmetric SLIT",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 128,
        smt: 2,
        nodes_per_socket: 3,
        cores_per_llc: 43,
        cores_per_cluster: 1,
        slit: Some(GNR_SNC3_SLIT),
        llc_mib: 168,
        latency: LAT_GNR_SNC3,
        map: None,
    },
    Preset {
        name: "gnr-2s-96c-snc3",
        description: "2S Granite Rapids 96-core, SNC3 nodes of 32 cores (the seed-000 test machine's dmesg)",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 96,
        smt: 2,
        nodes_per_socket: 3,
        cores_per_llc: 32,
        cores_per_cluster: 1,
        slit: Some(GNR_SNC3_SLIT),
        llc_mib: 168,
        latency: LAT_GNR_SNC3,
        map: None,
    },
    Preset {
        name: "gnr-2s",
        description: "2S Xeon 6980P, SNC off: one node and one LLC per socket",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 128,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 128,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 504,
        latency: LAT_GNR_FLAT,
        map: None,
    },
    Preset {
        name: "spr-2s-snc4",
        description: "2S Xeon 8480+ (Sapphire Rapids), 2x56 cores, SNC4 nodes of 14 cores",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 56,
        smt: 2,
        nodes_per_socket: 4,
        cores_per_llc: 14,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 26,
        latency: LAT_SPR,
        map: None,
    },
    Preset {
        name: "milan-2s",
        description: "2S EPYC 7763 (Milan), 2x64 cores, SMT2, NPS1, 8-core CCX with 32 MB L3",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 64,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 8,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_MILAN,
        map: None,
    },
    Preset {
        name: "genoa-2s",
        description: "2S EPYC 9654 (Genoa), 2x96 cores, SMT2, NPS1, 8-core CCX with 32 MB L3",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 96,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 8,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_GENOA,
        map: None,
    },
    Preset {
        name: "bergamo-2s",
        description: "2S EPYC 9754 (Bergamo), 2x128 Zen4c cores, SMT2, NPS1, 8-core CCX with 16 MB L3",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 128,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 8,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 16,
        latency: LAT_GENOA,
        map: None,
    },
    Preset {
        name: "custom",
        description: "custom layout from parameters (hardware figures of gnr-2s-snc3)",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 32,
        smt: 2,
        nodes_per_socket: 2,
        cores_per_llc: 16,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_GNR_SNC3,
        map: None,
    },
    Preset {
        name: "srf-2s",
        description: "2S Xeon 6780E (Sierra Forest), 2x144 E-cores, no SMT, 4-core modules sharing 4 MB L2, SNC off, 108 MB L3",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 144,
        smt: 1,
        nodes_per_socket: 1,
        cores_per_llc: 144,
        cores_per_cluster: 4,
        slit: None,
        llc_mib: 108,
        latency: LAT_SRF,
        map: None,
    },
    Preset {
        name: "cwf-2s",
        description: "2S Xeon 6+ (Clearwater Forest), 2x288 Darkmont E-cores, no SMT, 4-core modules sharing 4 MB L2, SNC3 (3 base dies, 192 MB L3 each)",
        vendor: Vendor::Intel,
        sockets: 2,
        cores_per_socket: 288,
        smt: 1,
        nodes_per_socket: 3,
        cores_per_llc: 96,
        cores_per_cluster: 4,
        slit: Some(GNR_SNC3_SLIT),
        llc_mib: 192,
        latency: LAT_CWF,
        map: None,
    },
    Preset {
        name: "turin-2s",
        description: "2S EPYC 9755 (Turin), 2x128 Zen 5 cores, SMT2, NPS1, 8-core CCX with 32 MB L3",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 128,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 8,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_GENOA,
        map: None,
    },
    Preset {
        name: "turin-dense-2s",
        description: "2S EPYC 9965 (Turin Dense), 2x192 Zen 5c cores, SMT2, NPS1, 16-core CCX with 32 MB L3",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 192,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 16,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_ZEN4C,
        map: None,
    },
    Preset {
        name: "clx-8s",
        description: "8S Xeon Platinum 8280 (Cascade Lake), 8x28 cores, SMT2, 3 UPI links per socket: SLIT 10/21/31",
        vendor: Vendor::Intel,
        sockets: 8,
        cores_per_socket: 28,
        smt: 2,
        nodes_per_socket: 1,
        cores_per_llc: 28,
        cores_per_cluster: 1,
        slit: Some(XEON_8S_SLIT),
        llc_mib: 38,
        latency: LAT_CLX,
        map: None,
    },
    Preset {
        name: "power10-4n",
        description: "IBM POWER10 LPAR, 4 chips x 10 SMT8 cores (320 CPUs), a node per chip; SMT4 halves with their own L2 (the kernel's SMT level and LLC); latencies placeholder",
        vendor: Vendor::Ibm,
        sockets: 4,
        cores_per_socket: 20,
        smt: 4,
        nodes_per_socket: 1,
        cores_per_llc: 1,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 8,
        latency: LAT_POWER10,
        map: Some(crate::arch_presets::power10_4n),
    },
    Preset {
        name: "grace-2s",
        description: "NVIDIA Grace CPU Superchip, 2 x 72 Neoverse V2 cores, no SMT, a node and 114 MB L3 per Grace; latencies placeholder",
        vendor: Vendor::Arm,
        sockets: 2,
        cores_per_socket: 72,
        smt: 1,
        nodes_per_socket: 1,
        cores_per_llc: 72,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 114,
        latency: LAT_GRACE,
        map: Some(crate::arch_presets::grace_2s),
    },
    Preset {
        name: "graviton4-2s",
        description: "2S AWS Graviton4, 2 x 96 Neoverse V2 cores, no SMT, a node and 36 MB L3 per socket",
        vendor: Vendor::Arm,
        sockets: 2,
        cores_per_socket: 96,
        smt: 1,
        nodes_per_socket: 1,
        cores_per_llc: 96,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 36,
        latency: LAT_GRAVITON4,
        map: Some(crate::arch_presets::graviton4_2s),
    },
    Preset {
        name: "kunpeng920-2s",
        description: "2S Kunpeng 920 (128 cores), 2 dies per socket, a node and 32 MB L3 per die, clusters (CCL) of 4 cores: CLS",
        vendor: Vendor::Hisilicon,
        sockets: 2,
        cores_per_socket: 64,
        smt: 1,
        nodes_per_socket: 2,
        cores_per_llc: 32,
        cores_per_cluster: 4,
        slit: None,
        llc_mib: 32,
        latency: LAT_KUNPENG920,
        map: Some(crate::arch_presets::kunpeng920_2s),
    },
];

/// Preset names, in `MACHINES` order.
pub const PRESETS: &[&str] = &{
    let mut names = [""; MACHINES.len()];
    let mut i = 0;
    while i < MACHINES.len() {
        names[i] = MACHINES[i].name;
        i += 1;
    }
    names
};

pub fn preset(name: &str) -> Option<MachineSpec> {
    MACHINES.iter().find(|m| m.name == name).map(Preset::spec)
}

/// Optional overrides of a preset's layout (the page's machine knobs, the link's keys).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LayoutOverrides {
    pub sockets: Option<u32>,
    pub cores_per_socket: Option<u32>,
    /// `"on"` / `"off"` or the thread count (`SMT_WORDS`); serialized as the count.
    #[serde(default, deserialize_with = "smt_value")]
    pub smt: Option<u32>,
    pub nodes_per_socket: Option<u32>,
    pub cores_per_llc: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rmw_hold_ns: Option<u32>,
    /// 1: CONFIG_CPUMASK_OFFSTACK=y, 0: n (`OFF_ON_WORDS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpumask_offstack: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores_per_cluster: Option<u32>,
}

/// A kernel option given as a word: its value.
pub const OFF_ON_WORDS: &[(&str, u32)] = &[("off", 0), ("on", 1)];

/// SMT given as a word, everywhere (JSON, links, CLI, page): the word and its thread count.
pub const SMT_WORDS: &[(&str, u32)] = &[("off", 1), ("on", 2)];

/// `smt` in JSON: a thread count (range-checked by validation like every override) or a word of
/// `SMT_WORDS` (also as a numeric string, as links and form fields carry it).
fn smt_value<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    use serde::de::{Error, Visitor};
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Option<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("\"on\", \"off\" or a thread count 1..=8")
        }
        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(V)
        }
        fn visit_u64<E: Error>(self, v: u64) -> Result<Self::Value, E> {
            u32::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is out of range: allowed {SMT:?}")))
        }
        fn visit_i64<E: Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map_err(|_| E::custom(format!("{v} is out of range: allowed {SMT:?}")))
                .and_then(|v| self.visit_u64(v))
        }
        fn visit_f64<E: Error>(self, v: f64) -> Result<Self::Value, E> {
            if v.fract() == 0.0 && (0.0..=u32::MAX as f64).contains(&v) {
                Ok(Some(v as u32))
            } else {
                Err(E::custom(format!("{v} is not allowed: on, off or 1..=8")))
            }
        }
        fn visit_str<E: Error>(self, v: &str) -> Result<Self::Value, E> {
            parse_smt(v).map(Some).map_err(E::custom)
        }
    }
    d.deserialize_option(V)
}

/// `on`, `off` or a thread count (unchecked range: validation reports it with the field name).
pub fn parse_smt(v: &str) -> Result<u32, String> {
    let t = v.trim();
    SMT_WORDS
        .iter()
        .find(|(w, _)| w.eq_ignore_ascii_case(t))
        .map(|&(_, n)| n)
        .or_else(|| t.parse().ok())
        .ok_or_else(|| format!("{v:?} is not allowed: on, off or 1..=8"))
}

impl MachineSpec {
    /// Applies layout overrides; a raw SLIT only survives if the node layout is unchanged.
    pub fn with_overrides(mut self, o: &LayoutOverrides) -> Result<MachineSpec, Invalid> {
        if self.map.is_some() {
            // a preset with its own CPU map: only the non-layout knobs apply
            let layout = [
                ("sockets", o.sockets),
                ("cores_per_socket", o.cores_per_socket),
                ("smt", o.smt),
                ("nodes_per_socket", o.nodes_per_socket),
                ("cores_per_llc", o.cores_per_llc),
                ("cores_per_cluster", o.cores_per_cluster),
            ];
            let errs: Vec<FieldError> = layout
                .iter()
                .filter(|(_, v)| v.is_some())
                .map(|(k, _)| {
                    FieldError::new(
                        k,
                        format!(
                            "{k} does not apply to the {} preset: its layout is its CPU map (import a machine file for another)",
                            self.name
                        ),
                    )
                })
                .collect();
            if !errs.is_empty() {
                return Err(Invalid(errs));
            }
        }
        let before = (self.sockets, self.nodes_per_socket);
        if let Some(v) = o.sockets {
            self.sockets = v;
        }
        if let Some(v) = o.cores_per_socket {
            self.cores_per_socket = v;
        }
        if let Some(v) = o.smt {
            self.smt = v;
        }
        if let Some(v) = o.nodes_per_socket {
            self.nodes_per_socket = v;
        }
        if let Some(v) = o.rmw_hold_ns {
            self.rmw_hold_ns = v;
        }
        if let Some(v) = o.cpumask_offstack {
            if v > 1 {
                return Err(Invalid(vec![FieldError::new(
                    "cpumask_offstack",
                    format!("{v} is not allowed: off (0) or on (1)"),
                )]));
            }
            self.cpumask_offstack = v == 1;
        }
        if self.map.is_some() {
            // the layout is the map's
        } else if let Some(v) = o.cores_per_llc {
            self.cores_per_llc = v;
        } else if self.vendor == Vendor::Intel {
            // Intel: the LLC is the socket, split per SNC node for the scheduler (match_llc).
            self.cores_per_llc = self.cores_per_socket.div_ceil(self.nodes_per_socket.max(1));
        } else {
            self.cores_per_llc = self.cores_per_llc.min(self.cores_per_socket);
        }
        if self.map.is_some() {
        } else if let Some(v) = o.cores_per_cluster {
            self.cores_per_cluster = v;
        } else {
            self.cores_per_cluster = self.cores_per_cluster.min(self.cores_per_llc);
        }
        if (self.sockets, self.nodes_per_socket) != before {
            self.slit = None;
        }
        self.validate()?;
        Ok(self)
    }

    /// A preset with its own CPU map (`Preset::map`): the map's layout.
    fn with_preset_map(self, map: Option<fn() -> CpuMap>) -> MachineSpec {
        match map {
            Some(f) => self.with_map(f()),
            None => self,
        }
    }

    /// This preset's hardware with an imported machine's layout.
    pub fn with_map(mut self, map: CpuMap) -> MachineSpec {
        let s = map.shape();
        self.sockets = s.sockets;
        self.cores_per_socket = s.cores_per_socket;
        self.smt = s.smt;
        self.nodes_per_socket = s.nodes_per_socket;
        self.cores_per_llc = s.cores_per_llc;
        self.cores_per_cluster = s.cores_per_cluster;
        self.slit = Some(map.slit.clone());
        self.map = Some(Arc::new(map));
        self
    }

    /// Logical CPUs of the machine.
    pub fn nr_cpus(&self) -> u64 {
        match &self.map {
            Some(m) => m.nr_cpus() as u64,
            None => self.sockets as u64 * self.cores_per_socket as u64 * self.smt as u64,
        }
    }

    /// The hold window outside its range (checked for presets and imported machines alike).
    fn rmw_hold_error(&self) -> Option<FieldError> {
        (!RMW_HOLD_NS.contains(&self.rmw_hold_ns)).then(|| {
            FieldError::new(
                "rmw_hold_ns",
                format!(
                    "{} is out of range: allowed {RMW_HOLD_NS:?} ns",
                    self.rmw_hold_ns
                ),
            )
        })
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        if let Some(m) = &self.map {
            let mut errs: Vec<FieldError> = m
                .check(&|_| (0, 0), &|_| (0, 0))
                .into_iter()
                .map(|e| FieldError::new("cpu_map", e.to_string()))
                .collect();
            errs.extend(self.rmw_hold_error());
            return if errs.is_empty() {
                Ok(())
            } else {
                Err(Invalid(errs))
            };
        }
        let mut errs = Vec::new();
        if !SOCKETS.contains(&self.sockets) {
            errs.push(FieldError::new(
                "sockets",
                format!("{} is out of range: allowed {SOCKETS:?}", self.sockets),
            ));
        }
        if !CORES_PER_SOCKET.contains(&self.cores_per_socket) {
            errs.push(FieldError::new(
                "cores_per_socket",
                format!(
                    "{} is out of range: allowed {CORES_PER_SOCKET:?}",
                    self.cores_per_socket
                ),
            ));
        }
        if !SMT.contains(&self.smt) {
            errs.push(FieldError::new(
                "smt",
                format!(
                    "{} is not allowed: on (2), off (1) or a thread count {SMT:?}",
                    self.smt
                ),
            ));
        }
        if !NODES_PER_SOCKET.contains(&self.nodes_per_socket) {
            errs.push(FieldError::new(
                "nodes_per_socket",
                format!(
                    "{} is out of range: allowed {NODES_PER_SOCKET:?} (1: SNC off / NPS1)",
                    self.nodes_per_socket
                ),
            ));
        } else if self.cores_per_socket < self.nodes_per_socket * 2 {
            errs.push(FieldError::new(
                "nodes_per_socket",
                format!(
                    "{} nodes per socket need at least {} cores per socket (2 per node), got {}",
                    self.nodes_per_socket,
                    self.nodes_per_socket * 2,
                    self.cores_per_socket
                ),
            ));
        }
        if !(*CORES_PER_LLC.start()..=self.cores_per_socket.max(1)).contains(&self.cores_per_llc) {
            errs.push(FieldError::new(
                "cores_per_llc",
                format!(
                    "{} is out of range: allowed 1..={}",
                    self.cores_per_llc, self.cores_per_socket
                ),
            ));
        }
        errs.extend(self.rmw_hold_error());
        if self.cores_per_cluster == 0 || self.cores_per_cluster > self.cores_per_llc.max(1) {
            errs.push(FieldError::new(
                "cores_per_cluster",
                format!(
                    "{} is out of range: allowed 1..={} (cores per LLC; 1: no cluster level)",
                    self.cores_per_cluster, self.cores_per_llc
                ),
            ));
        }
        let cpus = self.sockets as u64 * self.cores_per_socket as u64 * self.smt as u64;
        if errs.is_empty() && cpus > MAX_CPUS as u64 {
            errs.push(FieldError::new(
                "cores_per_socket",
                format!("{cpus} CPUs (sockets x cores x SMT) exceed the limit of {MAX_CPUS}"),
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Invalid(errs))
        }
    }
}

/// Where one CPU sits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CpuInfo {
    pub cpu: u32,
    pub socket: u32,
    pub node: u32,
    pub llc: u32,
    /// Global cluster id (the cores sharing an L2; one core each where there is no module).
    pub cluster: u32,
    /// Global core id (`cpu % cores_total`).
    pub core: u32,
    pub thread: u32,
}

#[derive(Clone, Debug)]
pub struct Topology {
    pub spec: MachineSpec,
    pub cpus: Vec<CpuInfo>,
    pub nr_nodes: usize,
    pub nr_llcs: usize,
    pub cores_total: usize,
    /// SLIT as firmware reports it (row = from node).
    pub slit: Vec<Vec<u32>>,
    pub node_cpus: Vec<CpuSet>,
    pub llc_cpus: Vec<CpuSet>,
    /// CPUs of each cluster, ascending.
    pub cluster_cpus: Vec<Vec<u32>>,
    /// CPUs of each core (its SMT siblings), ascending.
    pub core_cpus: Vec<Vec<u32>>,
    pub socket_of_node: Vec<u32>,
    /// The kernel's number of each CPU (index order): 0..N-1 unless an imported machine has
    /// gaps (`CpuMap::cpu_id`). The engine indexes CPUs densely; what it prints uses these.
    pub cpu_id: Vec<u32>,
    /// Latency class between CPUs of two nodes that do not share an LLC (row-major, hot path).
    node_class: Vec<LatencyClass>,
}

impl Topology {
    pub fn new(spec: MachineSpec) -> Result<Topology, Invalid> {
        spec.validate()?;
        if let Some(map) = spec.map.clone() {
            // thread: the CPU's rank among its core's CPUs, in CPU order
            let mut seen = vec![0u32; map.core.iter().max().map_or(0, |&c| c as usize + 1)];
            let cpus: Vec<CpuInfo> = (0..map.nr_cpus())
                .map(|i| {
                    let thread = seen[map.core[i] as usize];
                    seen[map.core[i] as usize] += 1;
                    CpuInfo {
                        cpu: i as u32,
                        socket: map.socket[i],
                        node: map.node[i],
                        llc: map.llc[i],
                        cluster: map.cluster[i],
                        core: map.core[i],
                        thread,
                    }
                })
                .collect();
            let nr_nodes = map.slit.len();
            let mut socket_of_node = vec![0u32; nr_nodes];
            // a node holding several sockets has its first CPU's socket as home
            for c in cpus.iter().rev() {
                socket_of_node[c.node as usize] = c.socket;
            }
            return Ok(Topology::assemble(
                spec,
                cpus,
                nr_nodes,
                socket_of_node,
                map.slit.clone(),
            ));
        }
        let (sockets, cps, smt, nps) = (
            spec.sockets as usize,
            spec.cores_per_socket as usize,
            spec.smt as usize,
            spec.nodes_per_socket as usize,
        );
        let cores_total = sockets * cps;
        let nr_cpus = cores_total * smt;
        // Per core: node and LLC. Nodes split a socket as evenly as possible, larger first (43/43/42).
        let mut core_node = vec![0u32; cores_total];
        let mut core_llc = vec![0u32; cores_total];
        let mut core_cluster = vec![0u32; cores_total];
        let (mut nr_llcs, mut nr_clusters) = (0u32, 0u32);
        for s in 0..sockets {
            let mut c = 0;
            for n in 0..nps {
                let size = cps / nps + usize::from(n < cps % nps);
                let node = (s * nps + n) as u32;
                let per_llc = (spec.cores_per_llc as usize).min(size);
                let per_cluster = (spec.cores_per_cluster as usize).clamp(1, per_llc);
                for k in 0..size {
                    let core = s * cps + c + k;
                    core_node[core] = node;
                    core_llc[core] = nr_llcs + (k / per_llc) as u32;
                    // clusters split each LLC (the last one may be smaller)
                    let in_llc = k % per_llc;
                    let before = (k / per_llc) * per_llc.div_ceil(per_cluster);
                    core_cluster[core] = nr_clusters + (before + in_llc / per_cluster) as u32;
                }
                let (full, rest) = (size / per_llc, size % per_llc);
                nr_clusters +=
                    (full * per_llc.div_ceil(per_cluster) + rest.div_ceil(per_cluster)) as u32;
                nr_llcs += size.div_ceil(per_llc) as u32;
                c += size;
            }
        }
        let nr_nodes = sockets * nps;
        let cpus: Vec<CpuInfo> = (0..nr_cpus)
            .map(|cpu| {
                let core = cpu % cores_total;
                CpuInfo {
                    cpu: cpu as u32,
                    socket: (core / cps) as u32,
                    node: core_node[core],
                    llc: core_llc[core],
                    cluster: core_cluster[core],
                    core: core as u32,
                    thread: (cpu / cores_total) as u32,
                }
            })
            .collect();
        let socket_of_node: Vec<u32> = (0..nr_nodes).map(|n| (n / nps) as u32).collect();
        let slit = match &spec.slit {
            Some(s) if s.len() == nr_nodes => s.clone(),
            _ => regular_slit(&spec, &socket_of_node),
        };
        Ok(Topology::assemble(
            spec,
            cpus,
            nr_nodes,
            socket_of_node,
            slit,
        ))
    }

    /// The sets and tables of a machine from where each CPU sits (ids dense from 0).
    fn assemble(
        spec: MachineSpec,
        cpus: Vec<CpuInfo>,
        nr_nodes: usize,
        socket_of_node: Vec<u32>,
        slit: Vec<Vec<u32>>,
    ) -> Topology {
        let nr_cpus = cpus.len();
        let count = |f: fn(&CpuInfo) -> u32| cpus.iter().map(f).max().map_or(0, |m| m as usize + 1);
        let (nr_llcs, nr_clusters, cores_total) =
            (count(|c| c.llc), count(|c| c.cluster), count(|c| c.core));
        let mut node_cpus = vec![CpuSet::new(nr_cpus); nr_nodes];
        let mut llc_cpus = vec![CpuSet::new(nr_cpus); nr_llcs];
        let mut cluster_cpus = vec![Vec::new(); nr_clusters];
        let mut core_cpus = vec![Vec::new(); cores_total];
        for c in &cpus {
            node_cpus[c.node as usize].set(c.cpu as usize);
            llc_cpus[c.llc as usize].set(c.cpu as usize);
            cluster_cpus[c.cluster as usize].push(c.cpu);
            core_cpus[c.core as usize].push(c.cpu);
        }
        let cpu_id = match &spec.map {
            Some(m) => m.cpu_id.clone(),
            None => (0..nr_cpus as u32).collect(),
        };
        let mut t = Topology {
            spec,
            cpus,
            cpu_id,
            nr_nodes,
            nr_llcs,
            cores_total,
            slit,
            node_cpus,
            llc_cpus,
            cluster_cpus,
            core_cpus,
            socket_of_node,
            node_class: Vec::new(),
        };
        t.node_class = (0..nr_nodes * nr_nodes)
            .map(|i| t.node_pair_class(i / nr_nodes, i % nr_nodes))
            .collect();
        t
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// A set of CPUs (engine indices) as the kernel's cpulist of their numbers.
    pub fn cpulist(&self, set: &CpuSet) -> String {
        crate::cpuset::cpulist(set.iter().map(|i| self.cpu_id[i]))
    }

    /// The engine index of the kernel's CPU `no`.
    pub fn cpu_index(&self, no: u32) -> Option<usize> {
        self.cpu_id.binary_search(&no).ok()
    }

    /// The CPUs sharing this CPU's L2 (itself and its SMT siblings included).
    pub fn cluster_siblings(&self, cpu: usize) -> &[u32] {
        &self.cluster_cpus[self.cpus[cpu].cluster as usize]
    }

    pub fn smt_siblings(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        self.core_cpus[self.cpus[cpu].core as usize]
            .iter()
            .map(|&c| c as usize)
    }

    pub fn class(&self, a: usize, b: usize) -> LatencyClass {
        let (x, y) = (&self.cpus[a], &self.cpus[b]);
        if a == b {
            LatencyClass::Same
        } else if x.core == y.core {
            LatencyClass::Smt
        } else if x.cluster == y.cluster {
            LatencyClass::Cluster
        } else if x.llc == y.llc {
            LatencyClass::Llc
        } else if x.socket != y.socket {
            // also inside one node that holds several sockets (NUMA off, multi-socket VMs)
            LatencyClass::Socket
        } else {
            self.node_class[x.node as usize * self.nr_nodes + y.node as usize]
        }
    }

    /// Two CPUs of these nodes in different LLCs: on one socket the larger of the on-socket SLIT
    /// distances is the far die; otherwise the other socket.
    fn node_pair_class(&self, na: usize, nb: usize) -> LatencyClass {
        if self.socket_of_node[na] != self.socket_of_node[nb] {
            LatencyClass::Socket
        } else if na != nb && self.slit[na][nb] > self.nearest_remote_node_distance(na) {
            LatencyClass::NodeFar
        } else {
            LatencyClass::NodeNear
        }
    }

    fn nearest_remote_node_distance(&self, node: usize) -> u32 {
        let s = self.socket_of_node[node];
        (0..self.nr_nodes)
            .filter(|&n| n != node && self.socket_of_node[n] == s)
            .map(|n| self.slit[node][n])
            .min()
            .unwrap_or(u32::MAX)
    }

    /// One-way cache-line transfer latency between two CPUs, ns.
    pub fn xfer_ns(&self, a: usize, b: usize) -> u32 {
        self.class_ns(self.class(a, b))
    }

    /// Whether the transfer figure between `a` and `b` is a CAS ping-pong time (it then contains a
    /// locked instruction; see `LatencyTable::cas_measured`).
    pub fn cas_measured(&self, a: usize, b: usize) -> bool {
        self.spec.latency.cas_measured.contains(&self.class(a, b))
    }

    /// Transfer latency of a latency class, ns.
    pub fn class_ns(&self, class: LatencyClass) -> u32 {
        let l = &self.spec.latency;
        match class {
            LatencyClass::Same => 0,
            LatencyClass::Smt => l.smt,
            LatencyClass::Cluster => l.cluster,
            LatencyClass::Llc => l.llc,
            LatencyClass::NodeNear => l.node_near,
            LatencyClass::NodeFar => l.node_far,
            LatencyClass::Socket => l.socket,
        }
    }

    /// The latency table grows with distance: SMT <= cluster <= LLC <= near node <= far node.
    pub fn latency_classes_ordered(&self) -> bool {
        let l = &self.spec.latency;
        (self.spec.smt == 1 || l.smt <= l.cluster)
            && l.cluster <= l.llc
            && l.llc <= l.node_near
            && l.node_near <= l.node_far
            && l.node_far <= l.socket
    }

    pub fn same_socket(&self, a: usize, b: usize) -> bool {
        self.cpus[a].socket == self.cpus[b].socket
    }

    /// `numactl -H`-style summary.
    pub fn numactl(&self) -> String {
        let mut s = format!(
            "available: {} nodes (0-{})\n",
            self.nr_nodes,
            self.nr_nodes - 1
        );
        for (n, set) in self.node_cpus.iter().enumerate() {
            let list: Vec<String> = set.iter().map(|c| self.cpu_id[c].to_string()).collect();
            s += &format!("node {n} cpus: {}\n", list.join(" "));
        }
        s += "node distances:\nnode ";
        for n in 0..self.nr_nodes {
            s += &format!("{n:>4}");
        }
        s += "\n";
        for (n, row) in self.slit.iter().enumerate() {
            s += &format!("{n:>4}:");
            for d in row {
                s += &format!("{d:>4}");
            }
            s += "\n";
        }
        s
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

/// The regular SLIT firmware reports: 10 local; on-socket 12 (Intel SNC) or 11 (AMD NPS);
/// 21 (Intel) or 32 (AMD) across sockets.
fn regular_slit(spec: &MachineSpec, socket_of_node: &[u32]) -> Vec<Vec<u32>> {
    // (POWER and Arm presets carry their SLIT in their map; these serve their custom layouts:
    // ACPI's REMOTE_DISTANCE 20 across sockets, 12 on a socket as Kunpeng 920 reports.)
    let (on, off) = match spec.vendor {
        Vendor::Intel => (12, 21),
        Vendor::Amd => (11, 32),
        Vendor::Ibm | Vendor::Arm | Vendor::Hisilicon => (12, 20),
    };
    let n = socket_of_node.len();
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        10
                    } else if socket_of_node[i] == socket_of_node[j] {
                        on
                    } else {
                        off
                    }
                })
                .collect()
        })
        .collect()
}

/// Distances the scheduler uses. With `snc3-distance-fix` (4d6dd05d07d0, 528d89a4707e) Intel
/// machines with ≥3 nodes per package replace every cross-socket distance (≥ REMOTE_DISTANCE 20) by
/// their average; the raw SLIT stays for everything else.
pub fn sched_distances(topo: &Topology, snc3_fix: bool) -> Vec<Vec<u32>> {
    let mut d = topo.slit.clone();
    if snc3_fix && topo.spec.vendor == Vendor::Intel && topo.spec.nodes_per_socket >= 3 {
        let remote: Vec<u32> = d.iter().flatten().copied().filter(|&x| x >= 20).collect();
        if !remote.is_empty() {
            let avg = remote.iter().map(|&x| x as u64).sum::<u64>() / remote.len() as u64;
            for x in d.iter_mut().flatten() {
                if *x >= 20 {
                    *x = avg as u32;
                }
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topo(name: &str) -> Topology {
        Topology::new(preset(name).unwrap()).unwrap()
    }

    #[test]
    fn gnr_snc3_layout_and_numbering() {
        let t = topo("gnr-2s-snc3");
        assert_eq!((t.nr_cpus(), t.nr_nodes, t.nr_llcs), (512, 6, 6));
        let sizes: Vec<usize> = t.node_cpus.iter().map(|s| s.weight()).collect();
        assert_eq!(sizes, vec![86, 86, 84, 86, 86, 84]);
        // CPU 0's sibling is CPU 256 (thread siblings at +cores_total).
        assert_eq!(t.smt_siblings(0).collect::<Vec<_>>(), vec![0, 256]);
        assert_eq!(t.node_cpus[0].to_string(), "0-42,256-298");
    }

    #[test]
    fn latency_classes() {
        let t = topo("gnr-2s-snc3");
        assert_eq!(t.class(0, 256), LatencyClass::Smt);
        assert_eq!(t.class(0, 42), LatencyClass::Llc);
        assert_eq!(t.class(0, 43), LatencyClass::NodeNear); // node 1, SLIT 15
        assert_eq!(t.class(0, 86), LatencyClass::NodeFar); // node 2, SLIT 17
        assert_eq!(t.class(0, 128), LatencyClass::Socket);
        assert_eq!(t.xfer_ns(0, 128), 412);
        let m = topo("milan-2s");
        assert_eq!(m.nr_llcs, 16);
        assert_eq!(m.class(0, 7), LatencyClass::Llc);
        assert_eq!(m.class(0, 8), LatencyClass::NodeNear);
        assert_eq!(m.xfer_ns(0, 64), 197);
    }

    #[test]
    fn snc3_fix_averages_remote_distance_to_24() {
        let t = topo("gnr-2s-snc3");
        let d = sched_distances(&t, true);
        assert_eq!(d[0], vec![10, 15, 17, 24, 24, 24]);
        assert_eq!(sched_distances(&t, false)[0], vec![10, 15, 17, 21, 28, 26]);
    }

    #[test]
    fn presets_are_valid_and_uniquely_named() {
        assert_eq!(PRESETS.len(), MACHINES.len());
        for (i, m) in MACHINES.iter().enumerate() {
            assert_eq!(PRESETS[i], m.name);
            assert!(PRESETS[..i].iter().all(|&n| n != m.name), "{}", m.name);
            let spec = preset(m.name).unwrap();
            spec.validate().unwrap();
            if let Some(slit) = m.slit {
                let nodes = (m.sockets * m.nodes_per_socket) as usize;
                assert!(slit.len() == nodes && slit.iter().all(|r| r.len() == nodes));
            }
            assert!(
                Topology::new(spec).unwrap().latency_classes_ordered(),
                "{}",
                m.name
            );
        }
        assert!(preset("nope").is_none());
    }

    #[test]
    fn impossible_layouts_name_the_field() {
        let spec = preset("custom").unwrap();
        let e = spec
            .clone()
            .with_overrides(&LayoutOverrides {
                cores_per_socket: Some(2),
                nodes_per_socket: Some(3),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0[0].field, "nodes_per_socket");
        let e = spec
            .with_overrides(&LayoutOverrides {
                sockets: Some(8),
                cores_per_socket: Some(512),
                ..Default::default()
            })
            .unwrap_err();
        assert!(e.0[0].message.contains("4096"), "{e}");
    }

    #[test]
    fn clusters_split_each_llc_and_price_a_shared_l2() {
        let spec = preset("custom")
            .unwrap()
            .with_overrides(&LayoutOverrides {
                sockets: Some(1),
                cores_per_socket: Some(10),
                nodes_per_socket: Some(1),
                cores_per_llc: Some(5),
                cores_per_cluster: Some(2),
                ..Default::default()
            })
            .unwrap();
        let t = Topology::new(spec).unwrap();
        // LLC 0 = cores 0-4: clusters {0,1} {2,3} {4}; LLC 1 = cores 5-9: {5,6} {7,8} {9}
        let ids: Vec<u32> = (0..10).map(|c| t.cpus[c].cluster).collect();
        assert_eq!(ids, vec![0, 0, 1, 1, 2, 3, 3, 4, 4, 5]);
        assert_eq!(t.cluster_siblings(10), &[0, 1, 10, 11]);
        assert_eq!(t.class(0, 1), LatencyClass::Cluster);
        assert_eq!(t.class(1, 10), LatencyClass::Cluster);
        assert_eq!(t.class(0, 10), LatencyClass::Smt);
        assert_eq!(t.class(0, 2), LatencyClass::Llc);
        assert_eq!(t.xfer_ns(0, 1), CLUSTER_ECORE_NS);
        // without modules a cluster is one core: the Cluster class never occurs
        let m = topo("milan-2s");
        assert!((0..m.nr_cpus()).all(|c| m.cluster_siblings(c).len() == 2));
        assert!(m.latency_classes_ordered());
    }

    #[test]
    fn cluster_size_is_checked_against_the_llc() {
        let e = preset("custom")
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_llc: Some(8),
                cores_per_cluster: Some(9),
                ..Default::default()
            })
            .unwrap_err();
        assert_eq!(e.0[0].field, "cores_per_cluster");
        assert!(e.0[0].message.contains("1..=8"), "{e}");
        // a preset's cluster shrinks with an LLC override below it, like the AMD LLC does
        let s = preset("custom")
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_cluster: Some(4),
                ..Default::default()
            })
            .unwrap()
            .with_overrides(&LayoutOverrides {
                cores_per_llc: Some(2),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(s.cores_per_cluster, 2);
    }

    #[test]
    fn smt_is_a_word_or_a_thread_count() {
        for (raw, n) in [
            ("on", 2),
            ("off", 1),
            ("OFF", 1),
            ("1", 1),
            ("2", 2),
            (" on ", 2),
        ] {
            assert_eq!(parse_smt(raw), Ok(n), "{raw}");
        }
        assert!(parse_smt("maybe").unwrap_err().contains("on, off or 1..=8"));
        for (json, want) in [
            (r#"{"smt":"off"}"#, Some(1)),
            (r#"{"smt":"on"}"#, Some(2)),
            (r#"{"smt":1}"#, Some(1)),
            (r#"{"smt":"2"}"#, Some(2)),
            (r#"{"smt":null}"#, None),
            (r#"{}"#, None),
        ] {
            let o: LayoutOverrides = serde_json::from_str(json).unwrap();
            assert_eq!(o.smt, want, "{json}");
        }
        assert!(serde_json::from_str::<LayoutOverrides>(r#"{"smt":"maybe"}"#).is_err());
        assert!(serde_json::from_str::<LayoutOverrides>(r#"{"smt":-1}"#).is_err());
        // written as the count: JSON of existing scenarios is unchanged
        let o = LayoutOverrides {
            smt: Some(1),
            ..Default::default()
        };
        assert_eq!(serde_json::to_value(&o).unwrap()["smt"], 1);
    }

    #[test]
    fn e_core_presets_have_4_core_modules_and_no_smt() {
        for (name, cpus, nodes, llcs, clusters) in
            [("srf-2s", 288, 2, 2, 72), ("cwf-2s", 576, 6, 6, 144)]
        {
            let t = topo(name);
            assert_eq!(
                (t.nr_cpus(), t.nr_nodes, t.nr_llcs, t.cluster_cpus.len()),
                (cpus, nodes, llcs, clusters),
                "{name}"
            );
            assert!(t.cluster_cpus.iter().all(|c| c.len() == 4), "{name}");
            assert_eq!(t.class(0, 3), LatencyClass::Cluster);
            assert_eq!(t.class(0, 4), LatencyClass::Llc);
            assert_eq!(t.xfer_ns(0, 3), 50);
        }
    }
}
