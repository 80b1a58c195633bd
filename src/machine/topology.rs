//! The machine as the kernel sees it: sockets → NUMA nodes (SNC / NPS) → LLCs → L2 clusters →
//! cores → SMT threads, numbered as Linux numbers them on these machines (thread siblings at
//! +cores_total), the SLIT, and the one-way cache-line transfer latency between any two CPUs
//! (`class`, `xfer_ns`). Built from a `MachineSpec` (a preset, a custom layout or an imported
//! `CpuMap`). Nothing here knows about scheduling.

use crate::error::Invalid;
use crate::machine::cpu_map::CpuMap;
use crate::machine::cpuset::CpuSet;
use crate::machine::hardware::{LatencyClass, Vendor};
use crate::machine::spec::MachineSpec;
use serde::Serialize;

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
        crate::machine::cpuset::cpulist(set.iter().map(|i| self.cpu_id[i]))
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

impl CpuMap {
    /// The map of a topology (presets included), as `lscpu`/`numactl` would describe it.
    pub fn of(t: &Topology) -> CpuMap {
        CpuMap {
            cpu_id: t.cpu_id.clone(),
            core: t.cpus.iter().map(|c| c.core).collect(),
            cluster: t.cpus.iter().map(|c| c.cluster).collect(),
            llc: t.cpus.iter().map(|c| c.llc).collect(),
            node: t.cpus.iter().map(|c| c.node).collect(),
            socket: t.cpus.iter().map(|c| c.socket).collect(),
            slit: t.slit.clone(),
            arch: t.spec.map.as_ref().and_then(|m| m.arch),
        }
        .canonical()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::presets::{CLUSTER_ECORE_NS, preset};
    use crate::machine::spec::LayoutOverrides;

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
}
