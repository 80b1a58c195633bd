//! Real machines: the text a user copies from their box — `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE`
//! (or plain `lscpu -p`, or the `lscpu -e` table) plus the node distances (`numactl -H`, or the
//! lines of `/sys/devices/system/node/node*/distance`) — parsed into a `CpuMap`: per CPU its core,
//! L2 cluster, LLC, node and socket, and the SLIT. `Topology::new` builds a machine from it with
//! the exact CPU numbering; the hardware figures (latency table, vendor) come from a preset.
//!
//! The map travels in links and scenario JSON as one compact string (`CpuMap::encode`, runs of
//! ids), decoded with the same structural checks (`CpuMap::check`). Every error names the line and
//! column of the input (`line 12:7: ...`), and what is allowed; nothing here panics on any input.

use crate::machine::hardware::{Arch, Vendor};
use crate::machine::limits::{self, MAX_CPUS};
use std::collections::BTreeMap;
use std::fmt;

mod parse;
pub use parse::{Parsed, parse};

/// Nodes with CPUs a machine may have: the kernel's MAX_NUMNODES with CONFIG_NODES_SHIFT=10
/// (x86_64 and arm64 distribution kernels). Sockets and nodes per socket have no limit of their
/// own: the engine's costs grow with CPUs (at most `MAX_CPUS`), and with nodes only as the SLIT
/// (nodes squared) and one NUMA level per distinct distance (at most 246).
pub const MAX_NODES: usize = MAX_NODE_ID as usize + 1;
/// The kernel's `MAX_NUMNODES` with CONFIG_NODES_SHIFT=10: node ids in the input above it are refused.
const MAX_NODE_ID: u32 = 1023;
/// CPU numbers run below NR_CPUS = 8192 (distribution kernels for big machines: x86, arm64 and
/// powerpc `CONFIG_NR_CPUS` maxima); a machine has at most `MAX_CPUS` of them.
pub const NR_CPUS: u32 = 8192;
/// Input size a machine file may have (a 4096-CPU `lscpu -e` is about 300 KB).
pub const MAX_INPUT_BYTES: usize = 4 << 20;
/// Errors listed before the rest are counted.
const MAX_ERRORS: usize = 20;
/// ACPI SLIT: 10 is the local distance, 255 unreachable; distances are u8 (`numa_set_distance`).
const LOCAL_DISTANCE: u32 = 10;
/// The kernel's distance between two nodes without a SLIT (`REMOTE_DISTANCE`, include/linux/topology.h).
const REMOTE_DISTANCE: u32 = 20;
const MAX_DISTANCE: u32 = 255;

/// Where every CPU sits, ids dense from 0 in order of first appearance (nodes keep their numbers),
/// and the SLIT between the nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuMap {
    /// The kernel's number of each CPU, ascending: 0..N-1 on most machines; with gaps where CPUs
    /// are offline or absent (SMT modes, s390 standby CPUs, `nosmt`). The engine indexes CPUs
    /// 0..N-1 in this order; what it prints of a CPU uses this number.
    pub cpu_id: Vec<u32>,
    pub core: Vec<u32>,
    /// The CPUs sharing an L2 (`cpu_clustergroup_mask` on x86).
    pub cluster: Vec<u32>,
    /// The last-level cache, split per node as Intel SNC splits it (`match_llc`).
    pub llc: Vec<u32>,
    pub node: Vec<u32>,
    pub socket: Vec<u32>,
    pub slit: Vec<Vec<u32>>,
    /// The architecture whose domain table the machine is built with when no hardware preset has
    /// it (RISC-V, LoongArch, s390, SPARC: `Arch::has_presets` is false); None otherwise, and then
    /// the hardware preset's vendor decides the table.
    pub arch: Option<Arch>,
}

/// One bad spot of the input: 1-based line and column (0: not tied to a line, e.g. a link).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            f.write_str(&self.message)
        } else {
            write!(f, "line {}:{}: {}", self.line, self.col, self.message)
        }
    }
}

fn err(line: usize, col: usize, message: impl Into<String>) -> LineError {
    LineError {
        line,
        col,
        message: message.into(),
    }
}

/// The shape of a map, in `MachineSpec` terms (maxima where the machine is uneven).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub cpus: u32,
    pub sockets: u32,
    pub cores_per_socket: u32,
    pub smt: u32,
    pub nodes_per_socket: u32,
    pub cores_per_llc: u32,
    pub cores_per_cluster: u32,
    pub nodes: u32,
    pub llcs: u32,
}

/// Renumbers ids densely in order of first appearance.
fn dense<K: Ord + Copy>(keys: impl Iterator<Item = K>) -> Vec<u32> {
    let mut seen: BTreeMap<K, u32> = BTreeMap::new();
    keys.map(|k| {
        let next = seen.len() as u32;
        *seen.entry(k).or_insert(next)
    })
    .collect()
}

fn count(ids: &[u32]) -> usize {
    ids.iter().max().map_or(0, |&m| m as usize + 1)
}

impl CpuMap {
    pub fn nr_cpus(&self) -> usize {
        self.core.len()
    }

    /// A map of CPUs 0..N-1 from each CPU's (core, cluster, LLC, node, socket) ids, any
    /// numbering (renumbered densely; nodes keep theirs), and the SLIT: how presets whose layout
    /// the regular generator cannot make are written (`presets::Preset::map`).
    pub fn from_places(places: &[(u32, u32, u32, u32, u32)], slit: Vec<Vec<u32>>) -> CpuMap {
        CpuMap {
            cpu_id: (0..places.len() as u32).collect(),
            core: places.iter().map(|p| p.0).collect(),
            cluster: places.iter().map(|p| p.1).collect(),
            llc: places.iter().map(|p| p.2).collect(),
            node: places.iter().map(|p| p.3).collect(),
            socket: places.iter().map(|p| p.4).collect(),
            slit,
            arch: None,
        }
        .canonical()
    }

    /// Ids renumbered densely by first appearance (nodes keep theirs: the SLIT is indexed by them).
    pub(in crate::machine) fn canonical(mut self) -> CpuMap {
        self.core = dense(self.core.iter().copied());
        self.cluster = dense(self.cluster.iter().copied());
        self.llc = dense(self.llc.iter().copied());
        self.socket = dense(self.socket.iter().copied());
        self
    }

    pub fn shape(&self) -> Shape {
        let n = self.nr_cpus();
        let (cores, sockets) = (count(&self.core), count(&self.socket));
        let per = |ids: &[u32], of: &[u32], size: usize| -> u32 {
            // distinct `ids` per `of` group, max over groups
            let mut sets = vec![std::collections::BTreeSet::new(); size];
            for (&id, &group) in ids.iter().zip(of) {
                sets[group as usize].insert(id);
            }
            sets.iter().map(|s| s.len() as u32).max().unwrap_or(0)
        };
        // per core (ids are dense): its socket, LLC and cluster
        let mut core_socket = vec![0u32; cores];
        let mut core_llc = vec![0u32; cores];
        let mut core_cluster = vec![0u32; cores];
        for (i, &c) in self.core.iter().enumerate() {
            core_socket[c as usize] = self.socket[i];
            core_llc[c as usize] = self.llc[i];
            core_cluster[c as usize] = self.cluster[i];
        }
        let core_ids: Vec<u32> = (0..cores as u32).collect();
        Shape {
            cpus: n as u32,
            sockets: sockets as u32,
            cores_per_socket: per(&core_ids, &core_socket, sockets),
            smt: per(&(0..n as u32).collect::<Vec<_>>(), &self.core, cores),
            nodes_per_socket: per(&self.node, &self.socket, sockets),
            cores_per_llc: per(&core_ids, &core_llc, count(&self.llc)),
            cores_per_cluster: per(&core_ids, &core_cluster, count(&self.cluster)),
            nodes: self.slit.len() as u32,
            llcs: count(&self.llc) as u32,
        }
    }

    /// The structural rules every map obeys (parsed or decoded from a link): CPUs 0..N-1 with
    /// N <= MAX_CPUS; a core inside one L2, an L2 inside one LLC, an LLC inside one node, a node inside
    /// one socket; at most 2 threads per core, 8 sockets and 4 nodes per socket; every node with CPUs
    /// and a square SLIT over them (10 on the diagonal, 10..=255 elsewhere). `at(cpu)` and
    /// `at_node(node)` locate a CPU's row and a node's distances in the input for the message.
    pub fn check(
        &self,
        at: &dyn Fn(usize) -> (usize, usize),
        at_node: &dyn Fn(usize) -> (usize, usize),
    ) -> Vec<LineError> {
        let n = self.nr_cpus();
        let mut errs = Vec::new();
        let e = |cpu: usize, msg: String| {
            let (l, c) = at(cpu);
            err(l, c, msg)
        };
        let en = |node: usize, msg: String| {
            let (l, c) = at_node(node);
            err(l, c, msg)
        };
        if n == 0 {
            return vec![err(0, 0, "no CPUs")];
        }
        if n > MAX_CPUS {
            return vec![err(
                0,
                0,
                format!("{n} CPUs exceed the limit of {MAX_CPUS}"),
            )];
        }
        if self.cpu_id.len() != n {
            return vec![err(
                0,
                0,
                format!(
                    "{} CPU numbers for {n} CPUs: one per CPU",
                    self.cpu_id.len()
                ),
            )];
        }
        if let Some(w) = self.cpu_id.windows(2).find(|w| w[0] >= w[1]) {
            return vec![err(
                0,
                0,
                format!("CPU number {} after {}: CPU numbers ascend", w[1], w[0]),
            )];
        }
        if let Some(&c) = self.cpu_id.last().filter(|&&c| c >= NR_CPUS) {
            return vec![err(
                0,
                0,
                format!("CPU number {c}: allowed 0..={} (NR_CPUS)", NR_CPUS - 1),
            )];
        }
        let lens = [
            self.cluster.len(),
            self.llc.len(),
            self.node.len(),
            self.socket.len(),
        ];
        if lens.iter().any(|&l| l != n) {
            return vec![err(
                0,
                0,
                format!(
                    "the core, cluster, LLC, node and socket parts give {n}, {}, {}, {} and {} CPUs: they must give the same number",
                    lens[0], lens[1], lens[2], lens[3]
                ),
            )];
        }
        let nodes = self.slit.len();
        if nodes == 0 || nodes > MAX_NODES {
            let msg = format!("{nodes} nodes with CPUs: allowed 1..={MAX_NODES} (MAX_NUMNODES)");
            return vec![
                match self.node.iter().position(|&x| x as usize >= MAX_NODES) {
                    Some(cpu) => e(cpu, msg),
                    None => en(nodes.saturating_sub(1), msg),
                },
            ];
        }
        // Containment: each child id has one parent id (first CPU seen decides).
        // (A node and a socket nest either way: checked below.)
        let levels: [(&str, &[u32], &str, &[u32]); 4] = [
            ("core", &self.core, "L2 cluster", &self.cluster),
            ("L2 cluster", &self.cluster, "LLC", &self.llc),
            ("LLC", &self.llc, "node", &self.node),
            ("LLC", &self.llc, "socket", &self.socket),
        ];
        for (cname, child, pname, parent) in levels {
            let mut first: BTreeMap<u32, (u32, usize)> = BTreeMap::new();
            for cpu in 0..n {
                let (p, c0) = *first.entry(child[cpu]).or_insert((parent[cpu], cpu));
                if p != parent[cpu] {
                    let no = self.cpu_id[cpu];
                    errs.push(e(
                        cpu,
                        format!(
                            "CPU {no} is in {pname} {} but its {cname} is in {pname} {p} with CPU {}: a {cname} lies inside one {pname}",
                            parent[cpu],
                            self.cpu_id[c0]
                        ),
                    ));
                    break;
                }
            }
        }
        errs.extend(self.nodes_and_sockets_nest(&e));
        let mut threads: BTreeMap<u32, u32> = BTreeMap::new();
        for cpu in 0..n {
            let t = threads.entry(self.core[cpu]).or_insert(0);
            *t += 1;
            if *t > *limits::SMT.end() {
                let no = self.cpu_id[cpu];
                errs.push(e(
                    cpu,
                    format!(
                        "CPU {no} is thread {} of its core: allowed 1..={} threads per core",
                        *t,
                        limits::SMT.end()
                    ),
                ));
                break;
            }
        }
        for cpu in 0..n {
            if self.node[cpu] as usize >= nodes {
                let no = self.cpu_id[cpu];
                errs.push(e(
                    cpu,
                    format!(
                        "CPU {no} is on node {} but the distances cover nodes 0..={}",
                        self.node[cpu],
                        nodes - 1
                    ),
                ));
                break;
            }
        }
        let mut has_cpu = vec![false; nodes];
        self.node
            .iter()
            .filter(|&&x| (x as usize) < nodes)
            .for_each(|&x| has_cpu[x as usize] = true);
        if let Some(k) = has_cpu.iter().position(|h| !h) {
            errs.push(en(
                k,
                format!("node {k} has no CPUs: nodes 0..={} must all have CPUs (CPU-less memory nodes are left out)", nodes - 1),
            ));
        }
        for (i, row) in self.slit.iter().enumerate() {
            if row.len() != nodes {
                errs.push(en(
                    i,
                    format!(
                        "distance row of node {i} has {} entries: one per node ({nodes})",
                        row.len()
                    ),
                ));
                continue;
            }
            for (j, &d) in row.iter().enumerate() {
                let ok = if i == j {
                    d == LOCAL_DISTANCE
                } else {
                    (LOCAL_DISTANCE..=MAX_DISTANCE).contains(&d)
                };
                if !ok {
                    errs.push(en(
                        i,
                        format!(
                            "distance {d} from node {i} to node {j}: allowed {}",
                            if i == j {
                                "10 (local)".to_string()
                            } else {
                                format!("{LOCAL_DISTANCE}..={MAX_DISTANCE}")
                            }
                        ),
                    ));
                }
            }
        }
        errs
    }

    /// A node lies inside one socket (SNC, NPS, one node per socket), or holds whole sockets
    /// (several sockets in one node: NUMA off, node interleaving, multi-socket VMs; the kernel then
    /// builds PKG over the node, `tl_pkg_mask` = `cpu_node_mask`). A node holding part of a socket
    /// that also has another node is refused: the engine gives each node one home socket.
    fn nodes_and_sockets_nest(&self, e: &dyn Fn(usize, String) -> LineError) -> Option<LineError> {
        let mut node_sockets: BTreeMap<u32, std::collections::BTreeSet<u32>> = BTreeMap::new();
        let mut socket_nodes: BTreeMap<u32, std::collections::BTreeSet<u32>> = BTreeMap::new();
        for cpu in 0..self.nr_cpus() {
            node_sockets
                .entry(self.node[cpu])
                .or_default()
                .insert(self.socket[cpu]);
            socket_nodes
                .entry(self.socket[cpu])
                .or_default()
                .insert(self.node[cpu]);
        }
        for cpu in 0..self.nr_cpus() {
            let (n, s) = (self.node[cpu], self.socket[cpu]);
            if node_sockets[&n].len() > 1 && socket_nodes[&s].len() > 1 {
                let other = socket_nodes[&s]
                    .iter()
                    .find(|&&m| m != n)
                    .copied()
                    .unwrap_or(n);
                let no = self.cpu_id[cpu];
                return Some(e(
                    cpu,
                    format!(
                        "CPU {no} puts node {n} across sockets, but its socket {s} also holds node {other}: a node lies inside one socket or holds whole sockets"
                    ),
                ));
            }
        }
        None
    }

    /// The link/JSON form: `core_cluster_llc_node_socket_slit`, each a comma-separated list of
    /// runs `V[xR][nC]`: C consecutive values from V, each repeated R times (default 1 and 1).
    /// A seventh part, the CPU numbers, follows only where they have gaps (links of machines
    /// numbered 0..N-1 keep their six parts).
    pub fn encode(&self) -> String {
        let flat: Vec<u32> = self.slit.iter().flatten().copied().collect();
        let mut parts = vec![
            &self.core,
            &self.cluster,
            &self.llc,
            &self.node,
            &self.socket,
            &flat,
        ];
        if !self.numbered_densely() {
            parts.push(&self.cpu_id);
        }
        let mut out: Vec<String> = parts.iter().map(|v| encode_runs(v)).collect();
        // the arch's name last, only for arches without presets (its first character is a
        // letter: no run starts with one)
        out.extend(self.arch.map(|a| a.name().to_string()));
        out.join("_")
    }

    /// CPUs numbered 0..N-1.
    pub fn numbered_densely(&self) -> bool {
        self.cpu_id
            .iter()
            .enumerate()
            .all(|(i, &c)| c as usize == i)
    }

    /// Decodes `encode`'s form and checks it as a parsed machine is checked.
    pub fn decode(s: &str) -> Result<CpuMap, String> {
        let mut parts: Vec<&str> = s.trim().split('_').collect();
        let arch = match parts.last() {
            Some(p) if p.starts_with(|c: char| c.is_ascii_alphabetic()) => {
                let a = Arch::from_name(p).filter(|a| !a.has_presets()).ok_or_else(|| {
                    format!("last part {p:?}: the architecture is one of riscv, loongarch, s390, sparc (the others come from the hardware preset)")
                })?;
                parts.pop();
                Some(a)
            }
            _ => None,
        };
        if !(6..=7).contains(&parts.len()) {
            return Err(format!(
                "{} parts: a cpu_map has 6 or 7 separated by '_' (core, cluster, llc, node, socket, node distances, and the CPU numbers where they have gaps), then the architecture where no preset has it",
                parts.len()
            ));
        }
        let mut lists = Vec::with_capacity(7);
        for (k, p) in parts.iter().enumerate() {
            let limit = if k == 5 {
                MAX_NODES * MAX_NODES
            } else {
                MAX_CPUS
            };
            lists.push(decode_runs(p, limit).map_err(|e| format!("part {} ({p:?}): {e}", k + 1))?);
        }
        let nodes = (1..=MAX_NODES)
            .find(|k| k * k == lists[5].len())
            .ok_or_else(|| {
                format!(
                    "{} node distances: a square of 1..={MAX_NODES} nodes",
                    lists[5].len()
                )
            })?;
        let slit: Vec<Vec<u32>> = lists[5].chunks(nodes).map(<[u32]>::to_vec).collect();
        // canonical first: the checks size their tables by the ids
        let m = CpuMap {
            cpu_id: lists
                .get(6)
                .cloned()
                .unwrap_or_else(|| (0..lists[0].len() as u32).collect()),
            core: lists[0].clone(),
            cluster: lists[1].clone(),
            llc: lists[2].clone(),
            node: lists[3].clone(),
            socket: lists[4].clone(),
            slit,
            arch,
        }
        .canonical();
        let errs = m.check(&|_| (0, 0), &|_| (0, 0));
        if !errs.is_empty() {
            return Err(join_errors(&errs));
        }
        Ok(m)
    }
}

pub fn join_errors(errs: &[LineError]) -> String {
    let mut v: Vec<String> = errs
        .iter()
        .take(MAX_ERRORS)
        .map(ToString::to_string)
        .collect();
    if errs.len() > MAX_ERRORS {
        v.push(format!("... and {} more", errs.len() - MAX_ERRORS));
    }
    v.join("; ")
}

fn encode_runs(v: &[u32]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let x = v[i];
        let r = v[i..].iter().take_while(|&&y| y == x).count();
        // groups of exactly r copies of x, x+1, ...
        let mut c = 1;
        while i + (c + 1) * r <= v.len()
            && v[i + c * r..i + (c + 1) * r]
                .iter()
                .all(|&y| Some(y) == x.checked_add(c as u32))
            && (i + (c + 1) * r == v.len() || v[i + (c + 1) * r] != x + c as u32)
        {
            c += 1;
        }
        let mut s = x.to_string();
        if r > 1 {
            s += &format!("x{r}");
        }
        if c > 1 {
            s += &format!("n{c}");
        }
        out.push(s);
        i += c * r;
    }
    out.join(",")
}

/// Runs back to values; refuses more than `limit` values before allocating them.
fn decode_runs(s: &str, limit: usize) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for run in s.split(',') {
        let num = |t: &str| -> Result<u64, String> {
            t.parse::<u64>()
                .ok()
                .filter(|&x| x <= u32::MAX as u64)
                .ok_or_else(|| {
                    format!(
                        "{run:?} is not a run V[xR][nC] of integers 0..={}",
                        u32::MAX
                    )
                })
        };
        let (head, c) = match run.split_once('n') {
            Some((h, c)) => (h, num(c)?),
            None => (run, 1),
        };
        let (v, r) = match head.split_once('x') {
            Some((v, r)) => (num(v)?, num(r)?),
            None => (num(head)?, 1),
        };
        if r == 0 || c == 0 {
            return Err(format!("{run:?}: repeat and count are at least 1"));
        }
        if v + c - 1 > u32::MAX as u64 {
            return Err(format!("{run:?}: values above {}", u32::MAX));
        }
        if out.len() as u64 + r * c > limit as u64 {
            return Err(format!("more than {limit} values"));
        }
        for k in 0..c {
            for _ in 0..r {
                out.push((v + k) as u32);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
