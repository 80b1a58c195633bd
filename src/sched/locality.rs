//! Placement has a price (docs/MODEL.md §21): a task's working set is warm in the L2 and the LLC
//! where it last ran and cools there as others fill those caches; a start elsewhere, or after the
//! set was evicted, refills it from where its lines are (local LLC, another LLC, memory). Data a
//! waker hands over comes from the waker's CPU. Memory lives on the node where the task first ran;
//! the memory-bound share of a burst away from it is stretched by the remote/local latency ratio.
//! Two busy SMT siblings each progress at the machine's sourced share.
//!
//! Priced once per start (`set_next_entity`), per burst (`Step::Run`) and per change of a core's busy
//! siblings, never per event. Integer arithmetic only.

use super::*;
use crate::machine::hardware::{LatencyClass, Vendor};
use crate::machine::spec::MachineSpec;

/// Bytes per cache line.
pub const LINE_BYTES: u64 = 64;

/// A machine's figures for pricing placement (sources: docs/MODEL.md §21, the shared HARDWARE.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Figures {
    /// L2 per L2 instance (a core, or an E-core module), KiB.
    pub l2_kib: u32,
    /// Load-to-use latency of a hit in the local LLC, ns.
    pub llc_hit_ns: u32,
    /// DRAM latency: local node, another node of the socket, another socket, ns.
    pub mem_local_ns: u32,
    pub mem_node_ns: u32,
    pub mem_socket_ns: u32,
    /// One core's DRAM bandwidth, GB/s (= bytes per ns): the floor of a refill's time.
    pub core_gbps: u32,
    /// Throughput of each of two busy SMT siblings relative to one thread alone, per mille.
    pub smt_share_permille: u32,
}

const GNR_SNC3: Figures = Figures {
    l2_kib: 2048,
    llc_hit_ns: 33,
    mem_local_ns: 104,
    mem_node_ns: 165,
    mem_socket_ns: 452,
    core_gbps: 20,
    smt_share_permille: 615,
};
const GNR_FLAT: Figures = Figures {
    mem_local_ns: 130,
    mem_node_ns: 130,
    mem_socket_ns: 430,
    ..GNR_SNC3
};
const SPR: Figures = Figures {
    l2_kib: 2048,
    llc_hit_ns: 33,
    mem_local_ns: 115,
    mem_node_ns: 130,
    mem_socket_ns: 195,
    core_gbps: 20,
    smt_share_permille: 615,
};
const MILAN: Figures = Figures {
    l2_kib: 512,
    llc_hit_ns: 14,
    mem_local_ns: 115,
    mem_node_ns: 115,
    mem_socket_ns: 200,
    core_gbps: 28,
    smt_share_permille: 610,
};
const GENOA: Figures = Figures {
    l2_kib: 1024,
    llc_hit_ns: 13,
    mem_local_ns: 120,
    mem_node_ns: 120,
    mem_socket_ns: 200,
    core_gbps: 30,
    smt_share_permille: 625,
};
const BERGAMO: Figures = Figures {
    llc_hit_ns: 16,
    ..GENOA
};
/// E-core modules: 4 MB L2 shared by 4 cores, no SMT; the rest as Granite Rapids (same mesh).
const SRF: Figures = Figures {
    l2_kib: 4096,
    smt_share_permille: 1000,
    ..GNR_FLAT
};
const CWF: Figures = Figures {
    l2_kib: 4096,
    smt_share_permille: 1000,
    ..GNR_SNC3
};
const CLX: Figures = Figures {
    l2_kib: 1024,
    llc_hit_ns: 33,
    mem_local_ns: 115,
    mem_node_ns: 115,
    mem_socket_ns: 200,
    core_gbps: 20,
    smt_share_permille: 615,
};

/// POWER10 (placeholder except the L2): 2 MB L2 per SMT8 core (Hot Chips 32; HARDWARE-2.md §2);
/// no POWER10 LLC, DRAM or SMT-share measurement was found, so Granite Rapids' figures stand in.
const POWER10: Figures = Figures {
    l2_kib: 2048,
    ..GNR_FLAT
};
/// Neoverse V2 (Grace, Graviton4): 1 MB L2 per core (NVIDIA Grace blog; HARDWARE-2.md §3), no
/// SMT; LLC and DRAM figures are placeholders (Genoa's).
const NEOVERSE_V2: Figures = Figures {
    l2_kib: 1024,
    smt_share_permille: 1000,
    ..GENOA
};
/// Kunpeng 920: 512 KB L2 per TaiShan v110 core (placeholder), no SMT; the rest Genoa's
/// (placeholders).
const KUNPENG920: Figures = Figures {
    l2_kib: 512,
    smt_share_permille: 1000,
    ..GENOA
};

/// Figures per preset name (every preset has a row: `tests::every_preset_has_figures`).
pub const MACHINE_FIGURES: &[(&str, Figures)] = &[
    ("gnr-2s-snc3", GNR_SNC3),
    ("gnr-2s-96c-snc3", GNR_SNC3),
    ("gnr-2s", GNR_FLAT),
    ("spr-2s-snc4", SPR),
    ("milan-2s", MILAN),
    ("genoa-2s", GENOA),
    ("bergamo-2s", BERGAMO),
    ("custom", GNR_SNC3),
    ("srf-2s", SRF),
    ("cwf-2s", CWF),
    ("turin-2s", GENOA),
    ("turin-dense-2s", GENOA),
    ("clx-8s", CLX),
    ("power10-4n", POWER10),
    ("grace-2s", NEOVERSE_V2),
    ("graviton4-2s", NEOVERSE_V2),
    ("kunpeng920-2s", KUNPENG920),
    // placeholder: Milan's (the closest measured Zen server part; Zen 1's L2 is 512 KiB too)
    ("hygon-2s", MILAN),
    // the same Genoa cores and memory, seen through a VM
    ("genoa-vm-16", GENOA),
];

/// The figures of a machine: its preset's row; a machine of another name (an imported one) takes
/// its vendor's reference part (Granite Rapids SNC3 or Genoa).
pub fn figures(spec: &MachineSpec) -> Figures {
    MACHINE_FIGURES
        .iter()
        .find(|(n, _)| *n == spec.name)
        .map(|(_, f)| *f)
        .unwrap_or(match spec.vendor {
            Vendor::Intel => GNR_SNC3,
            Vendor::Amd => GENOA,
            Vendor::Ibm => POWER10,
            Vendor::Arm => NEOVERSE_V2,
            Vendor::Hisilicon => KUNPENG920,
        })
}

/// `a × b / c` rounded up, in u128 (no overflow for any u64 inputs with c > 0). In u64 when the
/// product fits (nearly always): the same value without a 128-bit division, a library call
/// natively and slower still in wasm.
fn mul_div_ceil(a: u64, b: u64, c: u64) -> u64 {
    match a.checked_mul(b) {
        Some(p) => p.div_ceil(c),
        None => ((a as u128 * b as u128).div_ceil(c as u128)) as u64,
    }
}

/// Where a task's working set is when it starts on a CPU (bytes), and what fetching it costs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Refill {
    /// Lines of the L2 part found in the local LLC, fetched at the LLC hit latency.
    pub llc_bytes: u64,
    /// Lines found in the LLC the task left, fetched cache-to-cache at the class latency.
    pub far_bytes: u64,
    /// Lines fetched from the task's home memory.
    pub mem_bytes: u64,
    /// Time the burst is stretched by, ns.
    pub ns: u64,
}

/// The refill of a working set: each line at the latency of where it is, `mlp` misses in flight
/// (`Assumptions::refill_mlp`), and never faster than the core's DRAM bandwidth.
pub fn refill_ns(
    f: &Figures,
    mlp: u64,
    llc_bytes: u64,
    far_bytes: u64,
    far_ns: u64,
    mem_bytes: u64,
    mem_ns: u64,
) -> u64 {
    let lat =
        (llc_bytes * f.llc_hit_ns as u64 + far_bytes * far_ns + mem_bytes * mem_ns) / LINE_BYTES;
    let by_latency = lat.div_ceil(mlp);
    let by_bandwidth = (llc_bytes + far_bytes + mem_bytes).div_ceil(f.core_gbps.max(1) as u64);
    by_latency.max(by_bandwidth)
}

/// Per-task placement state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TaskLoc {
    /// First-touch node of its memory (`NO_NODE` before it first runs).
    pub home: u32,
    /// The fill counters of its last L2 and LLC when it last started there.
    pub l2_stamp: u64,
    pub llc_stamp: u64,
    /// Its burst is a wait on a cache line (`Step::Access`): it does not slow with a busy sibling
    /// (the measured transfer times are what they are).
    pub line_wait: bool,
}

pub const NO_NODE: u32 = u32::MAX;

impl TaskLoc {
    pub fn new() -> Self {
        TaskLoc {
            home: NO_NODE,
            l2_stamp: 0,
            llc_stamp: 0,
            line_wait: false,
        }
    }
}

/// The locality counters (indices into `Metrics::loc`; windowed with the other totals).
pub mod stat {
    /// Starts by distance from the CPU the task last ran on: same CPU, SMT sibling, same LLC
    /// (cluster included), other LLC of the node/socket (near), far node of the socket, other socket.
    pub const START: usize = 0; // ..START + 6
    /// Wakeups handing data over, by the distance waker CPU → wakee CPU (same six classes).
    pub const HANDOFF: usize = 6; // ..HANDOFF + 6
    /// Starts that had to refill any of their working set, and the ns the refills cost.
    pub const COLD_STARTS: usize = 12;
    pub const REFILL_NS: usize = 13;
    /// Bytes refilled from the local LLC, another LLC, memory.
    pub const REFILL_LLC_BYTES: usize = 14;
    pub const REFILL_FAR_BYTES: usize = 15;
    pub const REFILL_MEM_BYTES: usize = 16;
    /// Communication: handed-over lines and lines shared with sibling threads, ns.
    pub const COMM_NS: usize = 17;
    /// User ns run while an SMT sibling was busy, and the progress lost to it.
    pub const SMT_CORUN_NS: usize = 18;
    pub const SMT_NS: usize = 19;
    /// Burst ns started away from the home node, and the stretch of their memory-bound share.
    pub const REMOTE_BURST_NS: usize = 20;
    pub const REMOTE_MEM_NS: usize = 21;
    /// Base burst ns started (what a warm, local run on an idle core would take).
    pub const BURST_NS: usize = 22;
    /// Task-to-task wakeups by the distance waker CPU → the CPU the wakee is queued on.
    pub const WAKEUP: usize = 23; // ..WAKEUP + 6
    pub const N: usize = 29;
}

/// Index of a latency class among the six reported distances.
pub fn class_index(c: LatencyClass) -> usize {
    match c {
        LatencyClass::Same => 0,
        LatencyClass::Smt => 1,
        LatencyClass::Cluster | LatencyClass::Llc => 2,
        LatencyClass::NodeNear => 3,
        LatencyClass::NodeFar => 4,
        LatencyClass::Socket => 5,
    }
}

/// The report's names of the six distances.
pub const CLASS_NAMES: [&str; 6] = ["same_cpu", "smt", "llc", "node_near", "node_far", "socket"];

/// Engine-wide placement state: the machine's figures, cache capacities and fill counters.
pub(crate) struct Locality {
    pub fig: Figures,
    l2_bytes: u64,
    llc_bytes: u64,
    /// Bytes brought into each L2 (by cluster) and each LLC so far: a task's lines survive there
    /// while what others brought in since it last ran leaves room for them (LRU).
    l2_fill: Vec<u64>,
    llc_fill: Vec<u64>,
    /// Working set per task, bytes; memory-bound share of bursts, percent.
    pub ws_bytes: u64,
    pub mem_pct: u64,
    /// Per core: its CPUs that are busy (not idle); whether SMT siblings slow each other at all.
    core_busy: Vec<u8>,
    smt: bool,
}

impl Locality {
    pub fn new(topo: &Topology, ws_bytes: u64, mem_pct: u64) -> Self {
        let fig = figures(&topo.spec);
        Locality {
            fig,
            l2_bytes: fig.l2_kib as u64 * 1024,
            llc_bytes: topo.spec.llc_mib as u64 * 1024 * 1024,
            l2_fill: vec![0; topo.cluster_cpus.len()],
            llc_fill: vec![0; topo.nr_llcs],
            ws_bytes,
            mem_pct,
            core_busy: vec![0; topo.cores_total],
            smt: topo.spec.smt > 1 && fig.smt_share_permille < 1000,
        }
    }

    /// DRAM latency from a CPU of node `from` to memory on node `home`.
    pub fn mem_ns(&self, topo: &Topology, from: usize, home: usize) -> u64 {
        let f = &self.fig;
        (if from == home {
            f.mem_local_ns
        } else if topo.socket_of_node[from] == topo.socket_of_node[home] {
            f.mem_node_ns
        } else {
            f.mem_socket_ns
        }) as u64
    }
}

impl Engine {
    /// A task starts (or resumes) on `c` (set_next_entity): where its working set is decides the
    /// refill; data its waker handed over comes from the waker's CPU. Returns the ns to add to its
    /// burst (charged as user time) and advances the caches' fill counters.
    pub(super) fn locality_start(&mut self, c: usize, t: TaskId) -> u64 {
        let mlp = self.assume.refill_mlp;
        let topo = &self.topo;
        let loc = &mut self.loc;
        let task = &mut self.tasks[t as usize];
        let m = &mut self.metrics.loc;
        let (cl, llc, node) = (
            topo.cpus[c].cluster as usize,
            topo.cpus[c].llc as usize,
            topo.cpus[c].node as usize,
        );
        let p = task.last_ran_cpu as usize;
        let ws = loc.ws_bytes;
        let first = task.loc.home == NO_NODE;
        if first {
            task.loc.home = node as u32; // first touch
        } else {
            m[stat::START + class_index(topo.class(p, c))] += 1;
        }
        let mut extra = 0;
        if ws > 0 {
            let a = ws.min(loc.l2_bytes);
            let (pcl, pllc) = (topo.cpus[p].cluster as usize, topo.cpus[p].llc as usize);
            // LRU: lines survive while others' fills since the task left leave room for them
            let (s2, s3) = if first {
                (0, 0)
            } else {
                let s2 = if pcl == cl {
                    a.min(
                        loc.l2_bytes
                            .saturating_sub(loc.l2_fill[cl] - task.loc.l2_stamp),
                    )
                } else {
                    0
                };
                let s3 = ws.min(
                    loc.llc_bytes
                        .saturating_sub(loc.llc_fill[pllc] - task.loc.llc_stamp),
                );
                (s2, s3.max(s2))
            };
            let mem_ns = loc.mem_ns(topo, node, task.loc.home as usize);
            let r = if first {
                // first touch: the set is created here, as it is in the warm run (no price)
                Refill::default()
            } else if pllc == llc {
                // L2 part not in the L2 but in this LLC; the rest (beyond the LLC) from memory
                let in_llc = a.min(s3) - s2;
                let mem = ws - s3;
                Refill {
                    llc_bytes: in_llc,
                    far_bytes: 0,
                    mem_bytes: mem,
                    ns: refill_ns(&loc.fig, mlp, in_llc, 0, 0, mem, mem_ns),
                }
            } else {
                let far_ns = topo.xfer_ns(p, c) as u64;
                Refill {
                    llc_bytes: 0,
                    far_bytes: s3,
                    mem_bytes: ws - s3,
                    ns: refill_ns(&loc.fig, mlp, 0, s3, far_ns, ws - s3, mem_ns),
                }
            };
            // what this start brings into its L2 and LLC evicts others' lines there
            loc.l2_fill[cl] += a - if pcl == cl { s2 } else { 0 };
            loc.llc_fill[llc] += if pllc == llc && !first { ws - s3 } else { ws };
            task.loc.l2_stamp = loc.l2_fill[cl];
            task.loc.llc_stamp = loc.llc_fill[llc];
            if r.ns > 0 {
                m[stat::COLD_STARTS] += 1;
                m[stat::REFILL_NS] += r.ns;
                m[stat::REFILL_LLC_BYTES] += r.llc_bytes;
                m[stat::REFILL_FAR_BYTES] += r.far_bytes;
                m[stat::REFILL_MEM_BYTES] += r.mem_bytes;
            }
            extra += r.ns;
        }
        if let Some((w, lines)) = task.handoff.take() {
            let ns = lines as u64 * topo.xfer_ns(w as usize, c) as u64;
            m[stat::HANDOFF + class_index(topo.class(w as usize, c))] += 1;
            m[stat::COMM_NS] += ns;
            extra += ns;
        }
        extra
    }

    /// A task on `c` reads `lines` lines task `from` wrote: they come from `from`'s last CPU.
    pub(super) fn locality_read(&mut self, c: usize, from: TaskId, lines: u32) -> u64 {
        let w = self.tasks[from as usize].last_ran_cpu as usize;
        let ns = lines as u64 * self.topo.xfer_ns(w, c) as u64;
        let m = &mut self.metrics.loc;
        m[stat::HANDOFF + class_index(self.topo.class(w, c))] += 1;
        m[stat::COMM_NS] += ns;
        ns
    }

    /// A task on `waker` woke one queued on `target`.
    pub(super) fn locality_wakeup(&mut self, waker: usize, target: usize) {
        self.metrics.loc[stat::WAKEUP + class_index(self.topo.class(waker, target))] += 1;
    }

    /// A burst of `ns` starts on `c`: its memory-bound share runs at the latency of the task's
    /// home memory from here (the ns added).
    pub(super) fn locality_burst(&mut self, c: usize, t: TaskId, ns: u64) -> u64 {
        let m = &mut self.metrics.loc;
        m[stat::BURST_NS] += ns;
        let home = self.tasks[t as usize].loc.home;
        let node = self.topo.cpus[c].node as usize;
        if home == NO_NODE || home as usize == node || self.loc.mem_pct == 0 {
            return 0;
        }
        let (local, remote) = (
            self.loc.mem_ns(&self.topo, node, node),
            self.loc.mem_ns(&self.topo, node, home as usize),
        );
        // mem share × (remote/local − 1), in one rounding
        let extra = mul_div_ceil(ns * self.loc.mem_pct, remote - local, 100 * local);
        m[stat::REMOTE_BURST_NS] += ns;
        m[stat::REMOTE_MEM_NS] += extra;
        extra
    }

    /// Progress rate on `c` (busy: in user or kernel mode), per mille: the SMT share while a
    /// sibling is busy too.
    #[inline]
    pub(super) fn smt_rate(&self, c: usize) -> u32 {
        if self.loc.core_busy[self.topo.cpus[c].core as usize] >= 2 {
            self.loc.fig.smt_share_permille
        } else {
            1000
        }
    }

    /// Progress rate of the user burst running on `c`, per mille.
    pub(super) fn user_rate(&self, c: usize) -> u32 {
        match self.cpus[c].rq.curr {
            Some(t) if self.tasks[t as usize].loc.line_wait => 1000,
            _ => self.smt_rate(c),
        }
    }

    /// CPU `c` became busy (`busy`) or idle: its siblings running user code change speed.
    pub(super) fn smt_changed(&mut self, c: usize, busy: bool) {
        if !self.loc.smt {
            return;
        }
        let core = self.topo.cpus[c].core as usize;
        let n = &mut self.loc.core_busy[core];
        if busy {
            *n += 1;
        } else {
            *n -= 1;
        }
        // only crossing between 1 and 2 busy threads changes a rate
        if *n != if busy { 2 } else { 1 } {
            return;
        }
        for k in 0..self.topo.spec.smt as usize {
            let s = core + k * self.topo.cores_total;
            if s != c && self.cpus[s].exec.mode == Mode::User && self.cpus[s].rq.curr.is_some() {
                self.retime_user(s);
            }
        }
    }
}

impl Engine {
    /// Work started but not done at `now`: every task's remaining burst and owed transfers, the
    /// running ones brought up to now; and the SMT loss and co-run time of the open user
    /// intervals (closed ones are in the counters).
    pub fn locality_in_flight(&self) -> (u64, u64, u64) {
        let (mut work, mut smt, mut corun) = (0, 0, 0);
        let mut running = vec![u64::MAX; self.tasks.len()];
        for (c, cpu) in self.cpus.iter().enumerate() {
            if let (Mode::User, Some(t)) = (cpu.exec.mode, cpu.rq.curr) {
                let wall = self.now.saturating_sub(cpu.exec.ustart);
                let rem = self.tasks[t as usize].remaining;
                let done = progress(wall, cpu.exec.rate, rem);
                running[t as usize] = rem - done;
                if cpu.exec.rate < 1000 {
                    smt += wall - done;
                    corun += wall;
                }
                let _ = c;
            }
        }
        for (i, t) in self.tasks.iter().enumerate() {
            let rem = if running[i] != u64::MAX {
                running[i]
            } else {
                t.remaining
            };
            work += rem + t.pending_extra;
        }
        (work, smt, corun)
    }
}

/// The report's `locality` block (docs/SCHEMA.md): where placement cost user time, over the
/// measured window. `user_ns = work_ns + lost_ns - in_flight_ns` (exactly, without a warm-up).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct LocalityReport {
    /// User time of all CPUs, ns.
    pub user_ns: u64,
    /// The bursts' own length: what a warm run on the home node with idle siblings would take.
    pub work_ns: u64,
    /// refill + communication + remote memory + SMT: user time lost to placement.
    pub lost_ns: u64,
    pub refill_ns: u64,
    pub comm_ns: u64,
    pub remote_mem_ns: u64,
    pub smt_ns: u64,
    /// Work started but not finished when the run ended (in `work_ns + lost_ns`, not yet in `user_ns`).
    pub in_flight_ns: u64,
    /// `lost_ns` over `user_ns`, %.
    pub lost_pct: f64,
    /// Starts of a task on a CPU (after its first) and those that refilled part of their working set.
    pub starts: u64,
    pub cold_starts: u64,
    /// Bytes refilled from the local LLC, another LLC (cache to cache), memory.
    pub refill_bytes_llc: u64,
    pub refill_bytes_other_llc: u64,
    pub refill_bytes_memory: u64,
    /// Starts by distance from the CPU the task last ran on.
    pub starts_by_class: BTreeMap<String, u64>,
    /// Wakeups handing data over, by distance from waker CPU to wakee CPU.
    pub handoffs_by_class: BTreeMap<String, u64>,
    /// Share of user time run while an SMT sibling was busy, %.
    pub smt_corun_pct: f64,
    /// Share of burst time started away from the task's home node, %.
    pub remote_burst_pct: f64,
    /// Task-to-task wakeups by distance from the waker's CPU to the CPU the wakee is queued on.
    pub wakeups_by_class: BTreeMap<String, u64>,
}

use std::collections::BTreeMap;

impl LocalityReport {
    pub fn new(loc: &[u64; stat::N], user_ns: u64, in_flight: (u64, u64, u64)) -> Self {
        let (work_left, smt_open, corun_open) = in_flight;
        let smt_ns = loc[stat::SMT_NS] + smt_open;
        let lost_ns = loc[stat::REFILL_NS] + loc[stat::COMM_NS] + loc[stat::REMOTE_MEM_NS] + smt_ns;
        let pct = |a: u64, b: u64| {
            if b == 0 {
                0.0
            } else {
                a as f64 * 100.0 / b as f64
            }
        };
        let by = |base: usize| {
            CLASS_NAMES
                .iter()
                .enumerate()
                .map(|(i, n)| (n.to_string(), loc[base + i]))
                .collect()
        };
        LocalityReport {
            user_ns,
            work_ns: loc[stat::BURST_NS],
            lost_ns,
            refill_ns: loc[stat::REFILL_NS],
            comm_ns: loc[stat::COMM_NS],
            remote_mem_ns: loc[stat::REMOTE_MEM_NS],
            smt_ns,
            in_flight_ns: work_left,
            lost_pct: pct(lost_ns, user_ns),
            starts: (0..6).map(|i| loc[stat::START + i]).sum(),
            cold_starts: loc[stat::COLD_STARTS],
            refill_bytes_llc: loc[stat::REFILL_LLC_BYTES],
            refill_bytes_other_llc: loc[stat::REFILL_FAR_BYTES],
            refill_bytes_memory: loc[stat::REFILL_MEM_BYTES],
            starts_by_class: by(stat::START),
            handoffs_by_class: by(stat::HANDOFF),
            smt_corun_pct: pct(loc[stat::SMT_CORUN_NS] + corun_open, user_ns),
            remote_burst_pct: pct(loc[stat::REMOTE_BURST_NS], loc[stat::BURST_NS]),
            wakeups_by_class: by(stat::WAKEUP),
        }
    }

    /// The text report's block.
    pub fn text(&self, s: &mut String) {
        use std::fmt::Write as _;
        let ms = |ns: u64| ns as f64 / 1e6;
        let share = |ns: u64| {
            if self.user_ns == 0 {
                0.0
            } else {
                ns as f64 * 100.0 / self.user_ns as f64
            }
        };
        let _ = writeln!(
            s,
            "
# locality: user time {:.3} ms = work {:.3} ms + lost {:.3} ms ({:.2}%) - in flight {:.3} ms",
            ms(self.user_ns),
            ms(self.work_ns),
            ms(self.lost_ns),
            self.lost_pct,
            ms(self.in_flight_ns)
        );
        for (name, ns) in [
            ("cache refill", self.refill_ns),
            ("communication", self.comm_ns),
            ("remote memory", self.remote_mem_ns),
            ("SMT co-run", self.smt_ns),
        ] {
            let _ = writeln!(
                s,
                "  {name:<16} {:>12.3} ms  {:>6.2}% of user",
                ms(ns),
                share(ns)
            );
        }
        let _ = writeln!(
            s,
            "  starts {} (cold {}), refilled KiB: LLC {} other LLC {} memory {}; SMT co-run {:.1}% of user; bursts off the home node {:.1}%",
            self.starts,
            self.cold_starts,
            self.refill_bytes_llc / 1024,
            self.refill_bytes_other_llc / 1024,
            self.refill_bytes_memory / 1024,
            self.smt_corun_pct,
            self.remote_burst_pct
        );
        let _ = writeln!(
            s,
            "  {:<10} {:>10} {:>10} {:>10}",
            "distance", "starts", "wakeups", "handoffs"
        );
        let get = |m: &BTreeMap<String, u64>, n: &str| m.get(n).copied().unwrap_or(0);
        for n in CLASS_NAMES {
            let _ = writeln!(
                s,
                "  {n:<10} {:>10} {:>10} {:>10}",
                get(&self.starts_by_class, n),
                get(&self.wakeups_by_class, n),
                get(&self.handoffs_by_class, n)
            );
        }
    }
}

/// Work done in `wall` ns at `rate` per mille, at most `rem`.
pub fn progress(wall: u64, rate: u32, rem: u64) -> u64 {
    if rate == 1000 {
        wall.min(rem)
    } else {
        (wall * rate as u64 / 1000).min(rem)
    }
}

/// Wall time `rem` ns of work take at `rate` per mille (rounded up: the work is done by then).
pub fn wall_for(rem: u64, rate: u32) -> u64 {
    if rate == 1000 {
        rem
    } else {
        mul_div_ceil(rem, 1000, rate as u64)
    }
}

#[cfg(test)]
mod tests;
