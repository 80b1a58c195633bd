//! The machine presets: one named-field `Preset` literal per machine in `MACHINES` (its name is then
//! listed in `PRESETS`, the CLI, the page and links), with its latency table and, when measured, its
//! raw SLIT. Every figure and its source is in docs/MODEL.md, §1 and the constants table. Also the
//! default hardware figures of an imported machine (`CpuMap::closest_preset`).
//!
//! Adding a machine preset: one `Preset` literal appended to `MACHINES`.

use crate::machine::cpu_map::{CpuMap, Parsed};
use crate::machine::hardware::*;
use crate::machine::spec::MachineSpec;

const ALL_CAS: &[LatencyClass] = &[
    LatencyClass::Smt,
    LatencyClass::Cluster,
    LatencyClass::Llc,
    LatencyClass::NodeNear,
    LatencyClass::NodeFar,
    LatencyClass::Socket,
];

/// One-way transfer between two cores of one 4-core E-core module through their shared L2: the
/// closest measured part is Gracemont (i9-12900K, core-to-core-latency CAS ping-pong: 49.8-50.7 ns
/// inside a module). No Crestmont / Darkmont figure was found (docs/MODEL.md). Tables of machines
/// without L2 modules use it only for custom clusters, capped at their LLC figure.
pub const CLUSTER_ECORE_NS: u32 = 50;

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
    // the widest measured spread: cross-socket 372-452 around 412 (±10%)
    spread_pct: [90, 110],
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
    // one 180 figure (±10% [A], as a single published value); cross-socket 413-433
    spread_pct: [90, 110],
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
    // proxies of other parts: the Cascade Lake cross-socket spread 107-175 around 141 (±24%)
    spread_pct: [75, 125],
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
    // one measurement per class: ±10% [A], as a single published value
    spread_pct: [90, 110],
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
    // measured spread: 87-102 around 95 (-8% / +7%)
    spread_pct: [90, 110],
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
    // placeholder from another part [A]: -25% / +50%
    spread_pct: [75, 150],
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
    // placeholder from another part [A]: -25% / +50%
    spread_pct: [75, 150],
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
    // one measurement per class: ±10% [A], as a single published value
    spread_pct: [90, 110],
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
    // measured cross-socket spread 107-175 around 141 (±24%)
    spread_pct: [76, 124],
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
    // placeholder from POWER7 [A]: ±50%
    spread_pct: [50, 150],
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
    // measured in-socket spread 30-60 around 45 (±33%)
    spread_pct: [67, 133],
    cas_measured: ALL_CAS,
};
/// Placeholder: no Grace measurement; Graviton4's in-socket figure (the same Neoverse V2 core on a
/// CMN-700 mesh); across the NVLink-C2C link Graviton4's cross-socket 139, unmeasured.
const LAT_GRACE: LatencyTable = LatencyTable {
    source: "placeholder: no Grace c2c measurement; Graviton4 (same Neoverse V2 on CMN-700, chipsandcheese): 45 in socket, 139 across (NVLink-C2C unmeasured)",
    // a placeholder from Graviton4 [A]: its in-socket spread, +50% for the unmeasured link
    spread_pct: [67, 150],
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
    // a median in socket and a 2x placeholder across [A]: -25% / +50%
    spread_pct: [75, 150],
    cas_measured: ALL_CAS,
};

/// Hygon C86 (Dhyana, a Zen 1 derivative): no Hygon core-to-core measurement exists
/// (HARDWARE-2.md §1); the closest measured Zen parts are taken instead and said so: in a CCX Zen+
/// (Ryzen 7 2700X, 24 ns), across dies Zen 1 (Threadripper 1950X, 154 ns median), SMT and across
/// sockets Milan's (10, 197: no 2-socket Zen 1 matrix was found).
const LAT_HYGON_C86: LatencyTable = LatencyTable {
    smt: 10,
    cluster: 24,
    llc: 24,
    node_near: 154,
    node_far: 154,
    socket: 197,
    source: "placeholder from the closest measured Zen parts (no Hygon c2c): CCX 24 (Zen+ 2700X), cross-die 154 (Zen 1 1950X median), SMT 10 and cross-socket 197 (Milan 7R13)",
    // placeholder from other Zen parts [A]: -25% / +50%
    spread_pct: [75, 150],
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
    /// The core's store buffer (`hardware::CoreStoreBuffer`).
    pub store_buffer: CoreStoreBuffer,
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
            rmw_hold_ns: DEFAULT_RMW_HOLD_NS as u32,
            store_buffer: self.store_buffer,
            cpumask_offstack: true,
            nic_queues: None,
            nic_node: 0,
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
        store_buffer: SB_REDWOOD_COVE,
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
        store_buffer: SB_REDWOOD_COVE,
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
        store_buffer: SB_REDWOOD_COVE,
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
        store_buffer: SB_GOLDEN_COVE,
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
        store_buffer: SB_ZEN3,
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
        store_buffer: SB_ZEN4,
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
        store_buffer: SB_ZEN4,
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
        store_buffer: SB_REDWOOD_COVE,
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
        store_buffer: SB_CRESTMONT,
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
        store_buffer: SB_CRESTMONT,
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
        store_buffer: SB_ZEN5,
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
        store_buffer: SB_ZEN5,
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
        store_buffer: SB_SKYLAKE_SP,
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
        store_buffer: SB_POWER10,
        map: Some(crate::machine::arch_presets::power10_4n),
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
        store_buffer: SB_NEOVERSE_V2,
        map: Some(crate::machine::arch_presets::grace_2s),
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
        store_buffer: SB_NEOVERSE_V2,
        map: Some(crate::machine::arch_presets::graviton4_2s),
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
        store_buffer: SB_TAISHAN_V110,
        map: Some(crate::machine::arch_presets::kunpeng920_2s),
    },
    // The seed-002 reporter's class ("256 cores", host "hygon"): docs/MODEL.md §1a
    Preset {
        name: "hygon-2s",
        description: "2S Hygon C86-7490 (C86-4G, Zen-derived Dhyana), 2x64 cores, SMT2, 8 nodes of 16 cores, LLC of 4 cores as mainline derives it (llc_id = apicid >> 3), a 16 MB L3 leaf; latencies from the closest measured Zen parts",
        vendor: Vendor::Amd,
        sockets: 2,
        cores_per_socket: 64,
        smt: 2,
        // 4 nodes per socket (Hygon C86 7280's lscpu: 8 nodes on 2 sockets, HARDWARE-2 §1)
        nodes_per_socket: 4,
        // cacheinfo_hygon_init_llc_id(): llc_id = apicid >> 3, 8 APIC ids = 4 SMT2 cores
        cores_per_llc: 4,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 16,
        latency: LAT_HYGON_C86,
        store_buffer: SB_ZEN1,
        map: None,
    },
    Preset {
        name: "genoa-vm-16",
        description: "cloud VM on EPYC Genoa: 16 vCPUs, one per physical core (no SMT), across two CCDs (2 LLCs of 8 cores, 32 MB each), one node",
        vendor: Vendor::Amd,
        sockets: 1,
        cores_per_socket: 16,
        smt: 1,
        nodes_per_socket: 1,
        cores_per_llc: 8,
        cores_per_cluster: 1,
        slit: None,
        llc_mib: 32,
        latency: LAT_GENOA,
        store_buffer: SB_ZEN4,
        map: None,
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

impl CpuMap {
    /// The preset whose layout is nearest (sockets, nodes per socket, L2 clusters, SMT, cores per
    /// LLC, CPUs, compared in that order), of the vendor when it is known; `custom` is not a
    /// candidate.
    pub fn closest_preset(&self, vendor: Option<Vendor>) -> &'static str {
        self.closest_preset_of(vendor, None)
    }

    /// The closest preset of the vendor and of the architecture, where given.
    pub fn closest_preset_of(&self, vendor: Option<Vendor>, arch: Option<Arch>) -> &'static str {
        let s = self.shape();
        let diff = |a: u32, b: u32| a.abs_diff(b);
        MACHINES
            .iter()
            .filter(|m| {
                m.name != "custom"
                    && vendor.is_none_or(|v| v == m.vendor)
                    && arch.is_none_or(|a| a == m.vendor.arch())
            })
            .min_by_key(|m| {
                let (llc, cl) = (m.cores_per_llc, m.cores_per_cluster);
                (
                    diff(m.sockets, s.sockets),
                    diff(m.nodes_per_socket, s.nodes_per_socket),
                    u32::from((cl > 1) != (s.cores_per_cluster > 1)),
                    diff(m.smt, s.smt),
                    diff(llc, s.cores_per_llc),
                    diff(m.sockets * m.cores_per_socket * m.smt, s.cpus),
                )
            })
            .map_or("gnr-2s-snc3", |m| m.name)
    }
}

impl Parsed {
    /// The preset whose hardware figures an imported machine takes when the user names none, and
    /// why: the summary's vendor, else its architecture, else the shape (more than 2 threads per
    /// core: POWER; else x86, the common case, since the map alone cannot tell an Arm server
    /// from x86 with SMT off); among those, the closest layout. An architecture without presets
    /// (RISC-V, LoongArch, s390, SPARC) takes the closest preset of any architecture; its domains
    /// still follow its own table (`CpuMap::arch`), named in the reason.
    pub fn hardware(&self) -> (&'static str, String) {
        let s = self.map.shape();
        let (arch, why) = match (self.vendor, self.arch) {
            (Some(v), _) => (v.arch(), format!("the lscpu summary's Vendor ID ({v:?})")),
            (None, Some(a)) => (a, format!("the lscpu summary's Architecture ({a:?})")),
            (None, None) if s.smt > 2 => (
                Arch::Powerpc,
                format!("no lscpu summary; {} threads per core: POWER", s.smt),
            ),
            (None, None) => (
                Arch::X86,
                "no lscpu summary: x86 taken (an Arm server looks like x86 with SMT off: choose its preset, or paste lscpu's summary too)".to_string(),
            ),
        };
        if !arch.has_presets() {
            let name = self.map.closest_preset_of(None, None);
            return (
                name,
                format!(
                    "no {} preset: hardware figures of {name}, the closest preset by layout of any architecture; architecture from {why}; domains from {}",
                    arch.name(),
                    arch.table()
                ),
            );
        }
        let name = self.map.closest_preset_of(self.vendor, Some(arch));
        (
            name,
            format!(
                "hardware figures of {name}, the closest {arch:?} preset by layout; architecture from {why}"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::topology::Topology;

    fn topo(name: &str) -> Topology {
        Topology::new(preset(name).unwrap()).unwrap()
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
