//! Real machines: the text a user copies from their box — `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE`
//! (or plain `lscpu -p`, or the `lscpu -e` table) plus the node distances (`numactl -H`, or the
//! lines of `/sys/devices/system/node/node*/distance`) — parsed into a `CpuMap`: per CPU its core,
//! L2 cluster, LLC, node and socket, and the SLIT. `Topology::new` builds a machine from it with
//! the exact CPU numbering; the hardware figures (latency table, vendor) come from a preset.
//!
//! The map travels in links and scenario JSON as one compact string (`CpuMap::encode`, runs of
//! ids), decoded with the same structural checks (`CpuMap::check`). Every error names the line and
//! column of the input (`line 12:7: ...`), and what is allowed; nothing here panics on any input.

use crate::topology::{self, MAX_CPUS, Topology, Vendor};
use std::collections::BTreeMap;
use std::fmt;

/// Nodes a machine may have: 8 sockets x 4 nodes per socket (`topology::SOCKETS`,
/// `topology::NODES_PER_SOCKET`).
pub const MAX_NODES: usize =
    (*topology::SOCKETS.end() * *topology::NODES_PER_SOCKET.end()) as usize;
/// The kernel's `MAX_NUMNODES` with CONFIG_NODES_SHIFT=10: node ids in the input above it are refused.
const MAX_NODE_ID: u32 = 1023;
/// Input size a machine file may have (a 4096-CPU `lscpu -e` is about 300 KB).
pub const MAX_INPUT_BYTES: usize = 4 << 20;
/// Errors listed before the rest are counted.
const MAX_ERRORS: usize = 20;
/// ACPI SLIT: 10 is the local distance, 255 unreachable; distances are u8 (`numa_set_distance`).
const LOCAL_DISTANCE: u32 = 10;
const MAX_DISTANCE: u32 = 255;

/// Where every CPU sits, ids dense from 0 in order of first appearance (nodes keep their numbers),
/// and the SLIT between the nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuMap {
    pub core: Vec<u32>,
    /// The CPUs sharing an L2 (`cpu_clustergroup_mask` on x86).
    pub cluster: Vec<u32>,
    /// The last-level cache, split per node as Intel SNC splits it (`match_llc`).
    pub llc: Vec<u32>,
    pub node: Vec<u32>,
    pub socket: Vec<u32>,
    pub slit: Vec<Vec<u32>>,
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

    /// The map of a topology (presets included), as `lscpu`/`numactl` would describe it.
    pub fn of(t: &Topology) -> CpuMap {
        CpuMap {
            core: t.cpus.iter().map(|c| c.core).collect(),
            cluster: t.cpus.iter().map(|c| c.cluster).collect(),
            llc: t.cpus.iter().map(|c| c.llc).collect(),
            node: t.cpus.iter().map(|c| c.node).collect(),
            socket: t.cpus.iter().map(|c| c.socket).collect(),
            slit: t.slit.clone(),
        }
        .canonical()
    }

    /// Ids renumbered densely by first appearance (nodes keep theirs: the SLIT is indexed by them).
    fn canonical(mut self) -> CpuMap {
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
            let msg = format!(
                "{nodes} nodes with CPUs: allowed 1..={MAX_NODES} (8 sockets x 4 nodes per socket)"
            );
            return vec![
                match self.node.iter().position(|&x| x as usize >= MAX_NODES) {
                    Some(cpu) => e(cpu, msg),
                    None => en(nodes.saturating_sub(1), msg),
                },
            ];
        }
        // Containment: each child id has one parent id (first CPU seen decides).
        let levels: [(&str, &[u32], &str, &[u32]); 4] = [
            ("core", &self.core, "L2 cluster", &self.cluster),
            ("L2 cluster", &self.cluster, "LLC", &self.llc),
            ("LLC", &self.llc, "node", &self.node),
            ("node", &self.node, "socket", &self.socket),
        ];
        for (cname, child, pname, parent) in levels {
            let mut first: BTreeMap<u32, (u32, usize)> = BTreeMap::new();
            for cpu in 0..n {
                let (p, c0) = *first.entry(child[cpu]).or_insert((parent[cpu], cpu));
                if p != parent[cpu] {
                    errs.push(e(
                        cpu,
                        format!(
                            "CPU {cpu} is in {pname} {} but its {cname} is in {pname} {p} with CPU {c0}: a {cname} lies inside one {pname}",
                            parent[cpu]
                        ),
                    ));
                    break;
                }
            }
        }
        let mut threads: BTreeMap<u32, u32> = BTreeMap::new();
        for cpu in 0..n {
            let t = threads.entry(self.core[cpu]).or_insert(0);
            *t += 1;
            if *t > *topology::SMT.end() {
                errs.push(e(
                    cpu,
                    format!(
                        "CPU {cpu} is thread {} of its core: allowed 1..={} threads per core",
                        *t,
                        topology::SMT.end()
                    ),
                ));
                break;
            }
        }
        for cpu in 0..n {
            if self.node[cpu] as usize >= nodes {
                errs.push(e(
                    cpu,
                    format!(
                        "CPU {cpu} is on node {} but the distances cover nodes 0..={}",
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
        // sockets and nodes per socket, at the first CPU beyond the limit (socket ids are dense)
        let max_sockets = *topology::SOCKETS.end();
        if let Some(cpu) = self.socket.iter().position(|&x| x >= max_sockets) {
            errs.push(e(
                cpu,
                format!(
                    "CPU {cpu} is on socket {} (in order of appearance): allowed {:?} sockets",
                    self.socket[cpu] + 1,
                    topology::SOCKETS
                ),
            ));
        }
        let mut socket_nodes: BTreeMap<u32, std::collections::BTreeSet<u32>> = BTreeMap::new();
        for cpu in 0..n {
            let set = socket_nodes.entry(self.socket[cpu]).or_default();
            set.insert(self.node[cpu]);
            if !topology::NODES_PER_SOCKET.contains(&(set.len() as u32)) {
                errs.push(e(
                    cpu,
                    format!(
                        "CPU {cpu} puts {} nodes in its socket: allowed {:?} nodes per socket",
                        set.len(),
                        topology::NODES_PER_SOCKET
                    ),
                ));
                break;
            }
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

    /// The link/JSON form: `core_cluster_llc_node_socket_slit`, each a comma-separated list of
    /// runs `V[xR][nC]`: C consecutive values from V, each repeated R times (default 1 and 1).
    pub fn encode(&self) -> String {
        let flat: Vec<u32> = self.slit.iter().flatten().copied().collect();
        [
            &self.core,
            &self.cluster,
            &self.llc,
            &self.node,
            &self.socket,
            &flat,
        ]
        .iter()
        .map(|v| encode_runs(v))
        .collect::<Vec<_>>()
        .join("_")
    }

    /// Decodes `encode`'s form and checks it as a parsed machine is checked.
    pub fn decode(s: &str) -> Result<CpuMap, String> {
        let parts: Vec<&str> = s.trim().split('_').collect();
        if parts.len() != 6 {
            return Err(format!(
                "{} parts: a cpu_map has 6 separated by '_' (core, cluster, llc, node, socket, node distances)",
                parts.len()
            ));
        }
        let mut lists = Vec::with_capacity(6);
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
            core: lists[0].clone(),
            cluster: lists[1].clone(),
            llc: lists[2].clone(),
            node: lists[3].clone(),
            socket: lists[4].clone(),
            slit,
        }
        .canonical();
        let errs = m.check(&|_| (0, 0), &|_| (0, 0));
        if !errs.is_empty() {
            return Err(join_errors(&errs));
        }
        Ok(m)
    }

    /// The preset whose layout is nearest (sockets, nodes per socket, L2 clusters, SMT, cores per
    /// LLC, CPUs, compared in that order), of the vendor when it is known; `custom` is not a
    /// candidate.
    pub fn closest_preset(&self, vendor: Option<Vendor>) -> &'static str {
        let s = self.shape();
        let diff = |a: u32, b: u32| a.abs_diff(b);
        topology::MACHINES
            .iter()
            .filter(|m| m.name != "custom" && vendor.is_none_or(|v| v == m.vendor))
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

// ---- text input ------------------------------------------------------------------------------

/// A column of an lscpu table.
#[derive(Clone, Debug, PartialEq)]
enum Col {
    Cpu,
    Core,
    Socket,
    Node,
    Online,
    /// Cache ids, `:`-separated, named (L1d, L1i, L2, L3...).
    Caches(Vec<String>),
    Other,
}

fn column(name: &str) -> Col {
    let n = name.trim();
    if n.contains(':') {
        return Col::Caches(n.split(':').map(|s| s.trim().to_string()).collect());
    }
    match n.to_ascii_uppercase().as_str() {
        "CPU" => Col::Cpu,
        "CORE" => Col::Core,
        "SOCKET" => Col::Socket,
        "NODE" => Col::Node,
        "ONLINE" => Col::Online,
        u if u.starts_with('L') && u[1..].chars().next().is_some_and(|c| c.is_ascii_digit()) => {
            Col::Caches(vec![n.to_string()])
        }
        _ => Col::Other,
    }
}

/// Fields with their 1-based columns.
fn split_at(line: &str, sep: Option<char>) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    match sep {
        Some(c) => {
            let mut start = 0;
            for (i, ch) in line.char_indices() {
                if ch == c {
                    out.push((start + 1, &line[start..i]));
                    start = i + 1;
                }
            }
            out.push((start + 1, &line[start..]));
        }
        None => {
            let mut start = None;
            for (i, ch) in line.char_indices() {
                match (ch.is_whitespace(), start) {
                    (false, None) => start = Some(i),
                    (true, Some(s)) => {
                        out.push((s + 1, &line[s..i]));
                        start = None;
                    }
                    _ => {}
                }
            }
            if let Some(s) = start {
                out.push((s + 1, &line[s..]));
            }
        }
    }
    out
}

/// One CPU row of an lscpu table.
#[derive(Clone, Debug, Default)]
struct Row {
    line: usize,
    col: usize,
    cpu: u32,
    core: Option<u32>,
    socket: Option<u32>,
    node: Option<(u32, usize)>,
    /// (cache name, id)
    caches: Vec<(String, u32)>,
}

/// A machine parsed from text, and what the parser assumed.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub map: CpuMap,
    pub notes: Vec<String>,
    /// The CPU vendor, when a plain `lscpu` summary came with the map ("Vendor ID").
    pub vendor: Option<Vendor>,
}

fn number(line: usize, col: usize, t: &str, what: &str, max: u32) -> Result<u32, LineError> {
    match t.trim().parse::<u64>() {
        Ok(v) if v <= max as u64 => Ok(v as u32),
        Ok(v) => Err(err(
            line,
            col,
            format!("{what} {v} is out of range: allowed 0..={max}"),
        )),
        Err(_) => Err(err(
            line,
            col,
            format!("{what} {:?} is not a number: allowed 0..={max}", t.trim()),
        )),
    }
}

struct Parser {
    errs: Vec<LineError>,
    rows: Vec<Row>,
    /// Columns of the current lscpu table, its separator (`,` for -p, whitespace for -e) and the
    /// header's line.
    table: Option<(Vec<Col>, Option<char>, usize)>,
    /// `numactl -H` "node N cpus:" lines: node -> (cpus, line).
    node_cpus: BTreeMap<u32, (Vec<u32>, usize)>,
    /// Distance rows: node -> (distances, line).
    dist: BTreeMap<u32, (Vec<u32>, usize)>,
    /// numactl's distance header (the node ids of the columns).
    dist_cols: Option<Vec<u32>>,
    /// Bare rows of sysfs distances (`cat node*/distance`), in node order.
    bare_rows: u32,
    /// A plain `lscpu` summary was seen, and its vendor.
    lscpu_summary: bool,
    vendor: Option<Vendor>,
    /// Rows of offline CPUs (`lscpu -e` ONLINE no), left out.
    offline: u32,
}

impl Parser {
    fn line(&mut self, ln: usize, raw: &str) {
        let line = raw.trim_end();
        let t = line.trim_start();
        let indent = line.len() - t.len();
        if t.is_empty() {
            if self.table.as_ref().is_some_and(|(_, sep, _)| sep.is_none()) {
                self.table = None;
            }
            return;
        }
        if let Some(h) = t.strip_prefix('#') {
            let cols: Vec<&str> = h.split(',').collect();
            if cols.len() > 1 && column(cols[0]) == Col::Cpu {
                self.table = Some((cols.iter().map(|c| column(c)).collect(), Some(','), ln));
            }
            return;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        if words[0].eq_ignore_ascii_case("CPU") && words.len() > 1 && !t.contains(',') {
            self.table = Some((words.iter().map(|c| column(c)).collect(), None, ln));
            return;
        }
        if t.starts_with("available:") {
            self.table = None;
            return;
        }
        if t.starts_with("No NUMA available") {
            return;
        }
        if t.starts_with("node distances:") {
            self.table = None;
            return;
        }
        if let Some(rest) = t.strip_prefix("node ") {
            self.table = None;
            return self.numactl_node(ln, indent + 6, rest);
        }
        if let Some(p) = t.find("/distance:") {
            // grep . /sys/devices/system/node/node*/distance
            let before = &t[..p];
            let id = before.rfind("node").map(|i| &before[i + 4..]).unwrap_or("");
            let node = match number(ln, indent + 1, id, "node", MAX_NODE_ID) {
                Ok(n) => n,
                Err(e) => return self.errs.push(e),
            };
            let start = indent + p + "/distance:".len();
            return self.distances(ln, start, &t[p + 10..], node);
        }
        if let Some((head, rest)) = t.split_once(':')
            && head.trim().chars().all(|c| c.is_ascii_digit())
            && !head.trim().is_empty()
        {
            // numactl distance row "  0:  10  21"
            let node = match number(ln, indent + 1, head, "node", MAX_NODE_ID) {
                Ok(n) => n,
                Err(e) => return self.errs.push(e),
            };
            return self.distances(ln, indent + head.len() + 2, rest, node);
        }
        if let Some((cols, sep, _)) = self.table.clone() {
            let fields = split_at(line, sep);
            // a comma table's rows have commas; a whitespace table's rows its column count
            if (sep.is_some() && fields.len() > 1) || (sep.is_none() && fields.len() == cols.len())
            {
                return self.cpu_row(ln, &cols, &fields);
            }
            self.table = None;
        }
        if t.contains(',') && t.starts_with(|c: char| c.is_ascii_digit()) {
            // lscpu -p rows without their header: -p=CPU,CORE,SOCKET,NODE,CACHE in either form
            let fields = split_at(line, Some(','));
            let cols: Vec<Col> = match fields.len() {
                5 => ["CPU", "Core", "Socket", "Node", "L1d:L1i:L2:L3"]
                    .map(column)
                    .to_vec(),
                9 => [
                    "CPU", "Core", "Socket", "Node", "", "L1d", "L1i", "L2", "L3",
                ]
                .map(column)
                .to_vec(),
                n => {
                    return self.errs.push(err(
                        ln,
                        1,
                        format!("{n} comma-separated fields and no lscpu -p header (# CPU,Core,...) before: paste the output of lscpu -p=CPU,CORE,SOCKET,NODE,CACHE with its # lines"),
                    ));
                }
            };
            self.table = Some((cols.clone(), Some(','), ln));
            return self.cpu_row(ln, &cols, &fields);
        }
        if words.iter().all(|w| w.chars().all(|c| c.is_ascii_digit())) {
            // cat /sys/devices/system/node/node*/distance: one row per node, in order
            let node = self.bare_rows;
            self.bare_rows += 1;
            return self.distances(ln, indent + 1, t, node);
        }
        // plain `lscpu` ("Vendor ID:   GenuineIntel"): no per-CPU map, but the vendor narrows
        // the closest preset; its other lines are skipped
        if let Some((k, v)) = t.split_once(':')
            && k.starts_with(|c: char| c.is_ascii_uppercase())
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || " ()-_/".contains(c))
        {
            self.lscpu_summary = true;
            if k.trim() == "Vendor ID" {
                self.vendor = match v.trim() {
                    "GenuineIntel" => Some(Vendor::Intel),
                    "AuthenticAMD" | "HygonGenuine" => Some(Vendor::Amd),
                    _ => None,
                };
            }
            return;
        }
        self.errs.push(err(
            ln,
            indent + 1,
            format!(
                "{:?} is not lscpu -p, lscpu -e, numactl -H or node distance output",
                t.chars().take(40).collect::<String>().trim_end()
            ),
        ));
    }

    fn numactl_node(&mut self, ln: usize, col: usize, rest: &str) {
        let words = split_at(rest, None);
        // "node   0   1   2" (the distance header)
        if !words.is_empty()
            && words
                .iter()
                .all(|(_, w)| w.chars().all(|c| c.is_ascii_digit()))
        {
            let mut ids = Vec::new();
            for (c, w) in &words {
                match number(ln, col + c - 1, w, "node", MAX_NODE_ID) {
                    Ok(n) => ids.push(n),
                    Err(e) => return self.errs.push(e),
                }
            }
            self.dist_cols = Some(ids);
            return;
        }
        let Some(&(c0, id)) = words.first() else {
            return self
                .errs
                .push(err(ln, col, "\"node\" without a node number"));
        };
        let node = match number(ln, col + c0 - 1, id, "node", MAX_NODE_ID) {
            Ok(n) => n,
            Err(e) => return self.errs.push(e),
        };
        match words.get(1).map(|(_, w)| *w) {
            Some("cpus:") => {
                let mut cpus = Vec::new();
                for (c, w) in &words[2..] {
                    match number(ln, col + c - 1, w, "CPU", MAX_CPUS as u32 - 1) {
                        Ok(x) => cpus.push(x),
                        Err(e) => return self.errs.push(e),
                    }
                }
                if self.node_cpus.insert(node, (cpus, ln)).is_some() {
                    self.errs.push(err(ln, col, format!("node {node} cpus listed twice")));
                }
            }
            Some("size:" | "free:") => {}
            _ => self.errs.push(err(
                ln,
                col,
                "expected \"node N cpus: ...\", \"node N size/free: ...\" or the distance header \"node 0 1 ...\"",
            )),
        }
    }

    fn distances(&mut self, ln: usize, col: usize, text: &str, node: u32) {
        let mut row = Vec::new();
        for (c, w) in split_at(text, None) {
            if row.len() > MAX_NODE_ID as usize {
                return self.errs.push(err(
                    ln,
                    col + c - 1,
                    format!("more than {} distances", MAX_NODE_ID + 1),
                ));
            }
            match number(ln, col + c - 1, w, "distance", MAX_DISTANCE) {
                Ok(d) => row.push(d),
                Err(e) => return self.errs.push(e),
            }
        }
        if self.dist.insert(node, (row, ln)).is_some() {
            self.errs.push(err(
                ln,
                col,
                format!("distances of node {node} given twice"),
            ));
        }
    }

    fn cpu_row(&mut self, ln: usize, cols: &[Col], fields: &[(usize, &str)]) {
        if fields.len() != cols.len() {
            return self.errs.push(err(
                ln,
                1,
                format!(
                    "{} fields, but the header has {} columns",
                    fields.len(),
                    cols.len()
                ),
            ));
        }
        if self.rows.len() >= MAX_CPUS {
            return self.errs.push(err(
                ln,
                1,
                format!("more than {MAX_CPUS} CPUs: the limit is {MAX_CPUS}"),
            ));
        }
        let mut row = Row {
            line: ln,
            col: 1,
            ..Default::default()
        };
        let mut have_cpu = false;
        for (col, &(c, f)) in cols.iter().zip(fields) {
            let f = f.trim();
            let absent = f.is_empty() || f == "-";
            let r = match col {
                Col::Cpu => number(ln, c, f, "CPU", MAX_CPUS as u32 - 1).map(|v| {
                    row.cpu = v;
                    row.col = c;
                    have_cpu = true;
                }),
                Col::Online => {
                    if f.eq_ignore_ascii_case("no") {
                        // offline CPUs are not simulated (a gap is reported later)
                        self.offline += 1;
                        return;
                    }
                    Ok(())
                }
                _ if absent => Ok(()),
                Col::Core => number(ln, c, f, "core", u32::MAX - 1).map(|v| row.core = Some(v)),
                Col::Socket => {
                    number(ln, c, f, "socket", u32::MAX - 1).map(|v| row.socket = Some(v))
                }
                Col::Node => number(ln, c, f, "node", MAX_NODE_ID).map(|v| row.node = Some((v, c))),
                Col::Caches(names) => {
                    let parts = split_at(f, Some(':'));
                    if parts.len() != names.len() {
                        Err(err(
                            ln,
                            c,
                            format!(
                                "{f:?} has {} cache ids, the header names {} ({})",
                                parts.len(),
                                names.len(),
                                names.join(":")
                            ),
                        ))
                    } else {
                        parts.iter().zip(names).try_for_each(|(&(pc, p), name)| {
                            if p.trim().is_empty() || p.trim() == "-" {
                                return Ok(());
                            }
                            number(ln, c + pc - 1, p, name, u32::MAX - 1)
                                .map(|v| row.caches.push((name.clone(), v)))
                        })
                    }
                }
                Col::Other => Ok(()),
            };
            if let Err(e) = r {
                return self.errs.push(e);
            }
        }
        if !have_cpu {
            return self
                .errs
                .push(err(ln, 1, "no CPU column in this table's header"));
        }
        self.rows.push(row);
    }

    fn finish(mut self, last_line: usize) -> Result<Parsed, Vec<LineError>> {
        let mut notes = Vec::new();
        let end = last_line + 1;
        if self.rows.is_empty() && self.errs.is_empty() {
            self.errs.push(if self.lscpu_summary {
                err(1, 1, "plain lscpu output has no per-CPU map: add the output of lscpu -p=CPU,CORE,SOCKET,NODE,CACHE (or lscpu -e) and numactl -H")
            } else {
                err(end, 1, "no CPUs: paste the output of lscpu -p=CPU,CORE,SOCKET,NODE,CACHE (or lscpu -e) and numactl -H")
            });
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_by_key(|r| (r.cpu, r.line));
        for w in rows.windows(2) {
            if w[0].cpu == w[1].cpu {
                self.errs.push(err(
                    w[1].line,
                    w[1].col,
                    format!("CPU {} is listed twice (also line {})", w[1].cpu, w[0].line),
                ));
            }
        }
        if self.errs.is_empty()
            && let Some(i) = rows
                .iter()
                .enumerate()
                .position(|(i, r)| r.cpu as usize != i)
        {
            let r = &rows[i];
            self.errs.push(err(
                r.line,
                r.col,
                format!("CPU {i} is missing before CPU {}: CPUs are numbered 0..N-1 without gaps (offline CPUs are not simulated)", r.cpu),
            ));
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let n = rows.len();
        // node: the NODE column, else numactl's node cpus lines, else one node
        let mut from_numactl = vec![None; n];
        for (&node, (cpus, ln)) in &self.node_cpus {
            for &c in cpus {
                match from_numactl.get_mut(c as usize) {
                    Some(slot @ None) => *slot = Some((node, *ln)),
                    Some(Some((other, _))) => self.errs.push(err(
                        *ln,
                        1,
                        format!("CPU {c} is on node {other} and node {node}"),
                    )),
                    None => self.errs.push(err(
                        *ln,
                        1,
                        format!(
                            "node {node} lists CPU {c}, but the CPU table has CPUs 0..={}",
                            n - 1
                        ),
                    )),
                }
            }
        }
        let mut node = vec![0u32; n];
        let has_col = rows.iter().any(|r| r.node.is_some());
        for (i, r) in rows.iter().enumerate() {
            node[i] = match (r.node, from_numactl[i]) {
                (Some((a, c)), Some((b, ln))) if a != b => {
                    self.errs.push(err(
                        r.line,
                        c,
                        format!("CPU {i} is on node {a} here but on node {b} in line {ln}"),
                    ));
                    a
                }
                (Some((a, _)), _) => a,
                (None, Some((b, _))) => b,
                (None, None) if has_col || !self.node_cpus.is_empty() => {
                    self.errs
                        .push(err(r.line, r.col, format!("CPU {i} has no node")));
                    0
                }
                (None, None) => 0,
            };
        }
        if !has_col && self.node_cpus.is_empty() {
            notes.push("no NODE column and no numactl -H: one node".to_string());
        }
        // caches: the LLC is the highest level given, L2 the cluster
        let level = |name: &str| -> u32 {
            name.to_ascii_uppercase()
                .trim_start_matches('L')
                .trim_end_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .unwrap_or(0)
        };
        let top = rows
            .iter()
            .flat_map(|r| r.caches.iter().map(|(n, _)| level(n)))
            .max()
            .unwrap_or(0);
        if top == 0 {
            self.errs.push(err(rows[0].line, 1, "no cache ids (L2, L3): the CACHE column is needed for the LLCs, e.g. lscpu -p=CPU,CORE,SOCKET,NODE,CACHE"));
            return Err(self.errs);
        }
        let cache = |r: &Row, lvl: u32| {
            r.caches
                .iter()
                .find(|(n, _)| level(n) == lvl)
                .map(|&(_, v)| v)
        };
        let mut core = Vec::with_capacity(n);
        let mut cluster = Vec::with_capacity(n);
        let mut llc = Vec::with_capacity(n);
        let mut socket = Vec::with_capacity(n);
        for (i, r) in rows.iter().enumerate() {
            let Some(l) = cache(r, top) else {
                self.errs
                    .push(err(r.line, r.col, format!("CPU {i} has no L{top} id")));
                continue;
            };
            let c = r.core.unwrap_or(r.cpu);
            core.push(c);
            // Intel SNC: an L3 shared by several nodes is split per node (match_llc)
            llc.push((l, node[i]));
            // without an L2 id each core is its own cluster
            cluster.push(match cache(r, 2) {
                Some(l2) => (0, l2, node[i]),
                None => (1, c, node[i]),
            });
            socket.push(r.socket.unwrap_or(0));
        }
        if self.offline > 0 {
            notes.push(format!("{} offline CPU(s) left out", self.offline));
        }
        if rows.iter().any(|r| r.core.is_none()) {
            notes.push("no CORE column: one thread per core".to_string());
        }
        if rows.iter().any(|r| r.socket.is_none()) {
            notes.push("no SOCKET column: one socket".to_string());
        }
        if top == 2 {
            notes.push("no L3 ids: the L2 is the LLC".to_string());
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        // The nodes with CPUs, numbered densely in their order (the kernel builds its NUMA levels
        // from them only: sched_init_numa); the SLIT over them.
        let mut cpu_nodes: Vec<u32> = node.clone();
        cpu_nodes.sort_unstable();
        cpu_nodes.dedup();
        let nodes = cpu_nodes.len();
        if nodes > MAX_NODES {
            let i = node
                .iter()
                .position(|&x| x == cpu_nodes[MAX_NODES])
                .unwrap_or(0);
            let r = &rows[i];
            let col = r.node.map_or(r.col, |(_, c)| c);
            self.errs.push(err(
                r.line,
                col,
                format!("CPU {i} is on a node with CPUs beyond the first {MAX_NODES}: allowed 1..={MAX_NODES} nodes (8 sockets x 4 nodes per socket)"),
            ));
            return Err(self.errs);
        }
        let renumbered: Vec<String> = cpu_nodes
            .iter()
            .enumerate()
            .filter(|&(k, &n)| n as usize != k)
            .map(|(k, n)| format!("{n} as {k}"))
            .collect();
        let slit = if self.dist.is_empty() {
            if nodes > 1 {
                self.errs.push(err(end, 1, format!("no node distances for the {nodes} nodes: add numactl -H or the lines of /sys/devices/system/node/node*/distance")));
                return Err(self.errs);
            }
            vec![vec![LOCAL_DISTANCE]]
        } else {
            let cols: Vec<u32> = self
                .dist_cols
                .clone()
                .unwrap_or_else(|| (0..=MAX_NODE_ID).collect());
            let mut slit = Vec::with_capacity(nodes);
            for &i in &cpu_nodes {
                let Some((row, ln)) = self.dist.get(&i) else {
                    self.errs.push(err(
                        end,
                        1,
                        format!("no distances of node {i}: every node with CPUs needs its row"),
                    ));
                    continue;
                };
                let mut r = Vec::with_capacity(nodes);
                for &j in &cpu_nodes {
                    match cols.iter().position(|&c| c == j).and_then(|k| row.get(k)) {
                        Some(&d) => r.push(d),
                        None => {
                            self.errs.push(err(
                                *ln,
                                1,
                                format!("node {i}'s row has no distance to node {j}"),
                            ));
                            break;
                        }
                    }
                }
                slit.push(r);
            }
            let extra = self
                .dist
                .keys()
                .filter(|k| cpu_nodes.binary_search(k).is_err())
                .count();
            if extra > 0 {
                notes.push(format!("{extra} node(s) without CPUs left out (the scheduler builds its NUMA levels from nodes with CPUs)"));
            }
            slit
        };
        if !renumbered.is_empty() {
            notes.push(format!(
                "nodes with CPUs renumbered: {}",
                renumbered.join(", ")
            ));
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let node: Vec<u32> = node
            .iter()
            .map(|n| cpu_nodes.binary_search(n).unwrap_or(0) as u32)
            .collect();
        let map = CpuMap {
            core: dense(core.into_iter()),
            cluster: dense(cluster.into_iter()),
            llc: dense(llc.into_iter()),
            node,
            socket: dense(socket.into_iter()),
            slit,
        };
        let dist_line = |k: usize| {
            cpu_nodes
                .get(k)
                .and_then(|n| self.dist.get(n))
                .map_or((end, 1), |(_, l)| (*l, 1))
        };
        let errs = map.check(&|cpu| (rows[cpu].line, rows[cpu].col), &dist_line);
        if !errs.is_empty() {
            return Err(errs);
        }
        Ok(Parsed {
            map,
            notes,
            vendor: self.vendor,
        })
    }
}

/// Parses the text of `lscpu -p` / `lscpu -e` plus `numactl -H` / sysfs node distances.
pub fn parse(text: &str) -> Result<Parsed, Vec<LineError>> {
    if text.len() > MAX_INPUT_BYTES {
        return Err(vec![err(
            1,
            1,
            format!("{} bytes: the limit is {MAX_INPUT_BYTES}", text.len()),
        )]);
    }
    let mut p = Parser {
        errs: Vec::new(),
        rows: Vec::new(),
        table: None,
        node_cpus: BTreeMap::new(),
        dist: BTreeMap::new(),
        dist_cols: None,
        bare_rows: 0,
        lscpu_summary: false,
        vendor: None,
        offline: 0,
    };
    let mut last = 0;
    for (i, line) in text.lines().enumerate() {
        p.line(i + 1, line);
        last = i + 1;
        if p.errs.len() > MAX_ERRORS {
            return Err(p.errs);
        }
    }
    p.finish(last)
}

// ---- text output -----------------------------------------------------------------------------

/// `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` as util-linux prints it. The L1d/L1i ids are the core's,
/// L2 the cluster's; the L3 id is the LLC's, except on Intel SNC machines, where as on real ones
/// the L3 is the socket's (the kernel splits it per node: `match_llc`).
pub fn lscpu(t: &Topology) -> String {
    let snc_l3 = t.spec.vendor == Vendor::Intel
        && t.nr_llcs == t.nr_nodes
        && t.node_cpus.len() > t.spec.sockets as usize
        && (0..t.nr_llcs).all(|l| t.llc_cpus[l] == t.node_cpus[l]);
    let mut s = String::from(
        "# The following is the parsable format, which can be fed to other\n\
         # programs. Each different item in every column has an unique ID\n\
         # starting usually from zero.\n\
         # CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n",
    );
    for c in &t.cpus {
        let l3 = if snc_l3 { c.socket } else { c.llc };
        s += &format!(
            "{},{},{},{},,{},{},{},{}\n",
            c.cpu, c.core, c.socket, c.node, c.core, c.core, c.cluster, l3
        );
    }
    s
}

/// `numactl -H` as numactl prints it (`print_node_cpus`, `print_distances`: `"% 3d "` columns
/// with a trailing space). The `size:` / `free:` lines are left out: memory is not modelled.
pub fn numactl(t: &Topology) -> String {
    let mut s = format!("available: {} nodes (0-{})\n", t.nr_nodes, t.nr_nodes - 1);
    for (n, set) in t.node_cpus.iter().enumerate() {
        s += &format!("node {n} cpus:");
        set.iter().for_each(|c| s += &format!(" {c}"));
        s += "\n";
    }
    s += "node distances:\nnode ";
    (0..t.nr_nodes).for_each(|n| s += &format!("{n:>3} "));
    s += "\n";
    for (n, row) in t.slit.iter().enumerate() {
        s += &format!("{n:>3}: ");
        row.iter().for_each(|d| s += &format!("{d:>3} "));
        s += "\n";
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_round_trip() {
        for v in [
            vec![],
            vec![0],
            vec![0, 1, 2, 3, 0, 1, 2, 3],
            vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2],
            vec![5, 5, 3, 10, 15, 17, 21, 28, 26],
            vec![0, 0, 1, 1, 2, 7, 7, 7],
        ] {
            let s = encode_runs(&v);
            if v.is_empty() {
                continue;
            }
            assert_eq!(decode_runs(&s, 100).unwrap(), v, "{s}");
        }
        assert_eq!(encode_runs(&(0..256).collect::<Vec<_>>()), "0n256");
        assert_eq!(encode_runs(&[0, 0, 0, 0, 1, 1, 1, 1]), "0x4n2");
        assert!(decode_runs("0x4000000000n5", 4096).is_err());
        assert!(decode_runs("0x4096n2", 4096).unwrap_err().contains("4096"));
        assert!(decode_runs("4294967295n2", 4096).is_err());
        assert!(decode_runs("1x0", 4096).is_err());
    }

    const BOX: &str = "\
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,1,0,0,,1,1,1,0
2,2,0,1,,2,2,2,0
3,3,0,1,,3,3,3,0
4,0,0,0,,0,0,0,0
5,1,0,0,,1,1,1,0
6,2,0,1,,2,2,2,0
7,3,0,1,,3,3,3,0
available: 2 nodes (0-1)
node 0 cpus: 0 1 4 5
node 0 size: 1000 MB
node 1 cpus: 2 3 6 7
node distances:
node   0   1
  0:  10  12
  1:  12  10
";

    #[test]
    fn numactl_prints_as_numactl_does() {
        let t = Topology::new(topology::preset("milan-2s").unwrap()).unwrap();
        let s = numactl(&t);
        assert!(
            s.starts_with("available: 2 nodes (0-1)\nnode 0 cpus: 0 1 2 "),
            "{s}"
        );
        assert!(
            s.ends_with("node distances:\nnode   0   1 \n  0:  10  32 \n  1:  32  10 \n"),
            "{s}"
        );
        assert_eq!(parse(&(lscpu(&t) + &s)).unwrap().map, CpuMap::of(&t));
    }

    #[test]
    fn snc_box_splits_the_l3_per_node() {
        let p = parse(BOX).unwrap();
        assert_eq!(p.map.core, vec![0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(p.map.llc, vec![0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(p.map.slit, vec![vec![10, 12], vec![12, 10]]);
        let s = p.map.shape();
        assert_eq!((s.smt, s.nodes_per_socket, s.cores_per_llc), (2, 2, 2));
        let enc = p.map.encode();
        assert_eq!(CpuMap::decode(&enc).unwrap(), p.map);
    }

    #[test]
    fn errors_name_line_and_column() {
        let bad = BOX.replace("5,1,0,0,,1,1,1,0", "5,1,0,0,,1,x,1,0");
        let e = parse(&bad).unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "line 7:12: L1i \"x\" is not a number: allowed 0..=4294967294"
        );
        let e = parse(&BOX.replace("  1:  12  10", "  1:  12  300")).unwrap_err();
        assert_eq!(
            e[0].to_string(),
            "line 17:11: distance 300 is out of range: allowed 0..=255"
        );
        let e = parse(&BOX.replace("6,2,0,1", "9,2,0,1")).unwrap_err();
        assert!(
            e[0].to_string().starts_with("line 9:1: CPU 6 is missing"),
            "{}",
            e[0]
        );
        let e = parse(&BOX.replace("node 1 cpus: 2 3 6 7", "node 1 cpus: 2 3 6 1")).unwrap_err();
        assert!(
            e[0].to_string().contains("CPU 1 is on node 0 and node 1"),
            "{}",
            e[0]
        );
        let summary = "Architecture:  x86_64\nCPU(s):  2\nVendor ID:  AuthenticAMD\nNUMA node0 CPU(s):  0,1\n";
        let e = parse(summary).unwrap_err();
        assert_eq!(e.len(), 1);
        assert!(
            e[0].to_string()
                .starts_with("line 1:1: plain lscpu output has no per-CPU map"),
            "{}",
            e[0]
        );
        // with the map, the summary gives the vendor: the closest preset is an AMD one
        let p = parse(&format!("{summary}{BOX}")).unwrap();
        assert_eq!(p.vendor, Some(Vendor::Amd));
        assert_eq!(p.map.closest_preset(p.vendor), "milan-2s");
        let intel = parse(&format!("Vendor ID: GenuineIntel\n{BOX}")).unwrap();
        let name = intel.map.closest_preset(intel.vendor);
        assert_eq!(
            topology::preset(name).unwrap().vendor,
            Vendor::Intel,
            "{name}"
        );
        assert_eq!(intel.map.closest_preset(None), "milan-2s");
        let e = parse("hello\n").unwrap_err();
        assert!(
            e[0].to_string()
                .starts_with("line 1:1: \"hello\" is not lscpu"),
            "{}",
            e[0]
        );
    }

    #[test]
    fn lscpu_e_and_sysfs_distances() {
        let text = "\
CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE
  0    0      0    0 0:0:0:0          yes
  1    0      0    1 1:1:1:0          yes
  2    1      1    2 2:2:2:1          yes
  3    1      1    3 3:3:3:1          yes
  4    -      -    - -                no

/sys/devices/system/node/node0/distance:10 21
/sys/devices/system/node/node1/distance:21 10
";
        let p = parse(text).unwrap();
        assert_eq!(p.notes, vec!["1 offline CPU(s) left out".to_string()]);
        assert_eq!(p.map.node, vec![0, 0, 1, 1]);
        assert_eq!(p.map.socket, vec![0, 0, 1, 1]);
        assert_eq!(p.map.slit, vec![vec![10, 21], vec![21, 10]]);
        let bare = "CPU NODE SOCKET CORE L1d:L1i:L2:L3\n0 0 0 0 0:0:0:0\n1 1 1 1 1:1:1:1\n\n10 32\n32 10\n";
        assert_eq!(parse(bare).unwrap().map.slit[0], vec![10, 32]);
    }
    /// `lscpu -p` rows from (core, socket, node, l2, l3) per CPU, then the given distance text.
    fn text(cpus: &[(u32, u32, u32, u32, u32)], dist: &str) -> String {
        let mut s = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
        for (i, &(core, socket, node, l2, l3)) in cpus.iter().enumerate() {
            s += &format!("{i},{core},{socket},{node},,{core},{core},{l2},{l3}\n");
        }
        s + dist
    }

    fn first_error(t: &str) -> String {
        parse(t).unwrap_err()[0].to_string()
    }

    #[test]
    fn limits_and_shapes_are_refused_at_their_line() {
        let one = |c: u32| (c, 0, 0, c, 0);
        // CPUs
        let many: Vec<_> = (0..4097).map(|c| (c, 0, 0, c, 0)).collect();
        assert_eq!(
            first_error(&text(&many, "")),
            "line 4098:1: more than 4096 CPUs: the limit is 4096"
        );
        assert!(first_error("").starts_with("line 1:1: no CPUs"));
        assert!(first_error("\n\n").starts_with("line 3:1: no CPUs"));
        // three threads on core 0 (line 4 is CPU 2)
        let e = first_error(&text(&[one(0), one(0), one(0)], ""));
        assert_eq!(
            e,
            "line 4:1: CPU 2 is thread 3 of its core: allowed 1..=2 threads per core"
        );
        // nine sockets, a node each
        let square = |n: usize| -> String {
            (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| if i == j { "10 " } else { "20 " })
                        .collect::<String>()
                        + "\n"
                })
                .collect()
        };
        let sockets: Vec<_> = (0..9).map(|c| (c, c, c, c, c)).collect();
        let e = first_error(&text(&sockets, &square(9)));
        assert!(e.starts_with("line 10:1: CPU 8 is on socket 9"), "{e}");
        assert!(e.ends_with("allowed 1..=8 sockets"), "{e}");
        // five nodes in one socket
        let nodes: Vec<_> = (0..5).map(|c| (c, 0, c, c, c)).collect();
        let d = square(5);
        let e = first_error(&text(&nodes, &d));
        assert_eq!(
            e,
            "line 6:1: CPU 4 puts 5 nodes in its socket: allowed 1..=4 nodes per socket"
        );
        // a CPU-less node between two: the CPU nodes are renumbered, the SLIT taken over them
        let p = parse(&text(
            &[(0, 0, 0, 0, 0), (1, 0, 2, 1, 1)],
            "10 20 30\n20 10 20\n30 20 10\n",
        ))
        .unwrap();
        assert_eq!(p.map.node, vec![0, 1]);
        assert_eq!(p.map.slit, vec![vec![10, 30], vec![30, 10]]);
        assert_eq!(
            p.notes,
            vec![
                "1 node(s) without CPUs left out (the scheduler builds its NUMA levels from nodes with CPUs)",
                "nodes with CPUs renumbered: 2 as 1"
            ]
        );
        // 33 nodes with CPUs
        let many_nodes: Vec<_> = (0..33).map(|c| (c, c / 4, c, c, c)).collect();
        let e = first_error(&text(&many_nodes, ""));
        assert!(
            e.starts_with("line 34:9: CPU 32 is on a node with CPUs beyond the first 32"),
            "{e}"
        );
        // a local distance that is not 10, at its row
        let e = first_error(&text(&[one(0), (1, 0, 1, 1, 1)], "10 20\n20 11\n"));
        assert_eq!(
            e,
            "line 5:1: distance 11 from node 1 to node 1: allowed 10 (local)"
        );
        // an L2 shared across two L3s
        let e = first_error(&text(&[(0, 0, 0, 0, 0), (1, 0, 0, 0, 1)], ""));
        assert!(
            e.starts_with("line 3:1: CPU 1 is in LLC 1 but its L2 cluster is in LLC 0"),
            "{e}"
        );
        // no distances for two nodes
        let e = first_error(&text(&[one(0), (1, 0, 1, 1, 1)], ""));
        assert!(
            e.starts_with("line 4:1: no node distances for the 2 nodes"),
            "{e}"
        );
        // no cache column
        let e = first_error("# CPU,Core,Socket,Node\n0,0,0,0\n");
        assert!(e.starts_with("line 2:1: no cache ids"), "{e}");
    }
}
