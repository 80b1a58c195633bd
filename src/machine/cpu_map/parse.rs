//! The text a user pastes: `lscpu -p` / `lscpu -e` tables and `numactl -H` or sysfs distance
//! lines, read into a `CpuMap` with line:column errors.
//!
//! The sysfs readers are `sysfs.rs`, the arch's LLC rules `arch_rules.rs`. The lscpu and numactl
//! readers share one column and error state here (splitting them per input form is not done).

use super::*;

mod arch_rules;
mod sysfs;

use arch_rules::{Places, cpulist};

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
    /// The row gave fewer cache ids than its header names (read left to right).
    short_caches: bool,
}

impl Row {
    /// No core, socket or cache id: what lscpu prints for an offline CPU (its sysfs topology
    /// directory is removed with it, CPUHP_TOPOLOGY_PREPARE).
    fn bare(&self) -> bool {
        self.core.is_none() && self.socket.is_none() && self.caches.is_empty()
    }
}

/// A machine parsed from text, and what the parser assumed.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub map: CpuMap,
    pub notes: Vec<String>,
    /// The CPU vendor, when a plain `lscpu` summary came with the map ("Vendor ID").
    pub vendor: Option<Vendor>,
    /// The architecture, when the summary names it ("Architecture").
    pub arch: Option<Arch>,
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
    /// Bare rows of sysfs distances (`cat node*/distance`): (distances, line), placed in
    /// `finish` once the nodes are known.
    bare_rows: Vec<(Vec<u32>, usize)>,
    /// A plain `lscpu` summary was seen, and its vendor.
    lscpu_summary: bool,
    vendor: Option<Vendor>,
    arch: Option<Arch>,
    /// Offline CPUs (`lscpu -e` ONLINE no, or rows without any topology), left out.
    offline: Vec<u32>,
    /// `grep . /sys/devices/system/cpu/cpu*/topology/*_cpus_list`: (cpu, file) -> (first CPU of
    /// the list, line). The lowest CPU of a list names its group.
    sysfs: BTreeMap<(u32, &'static str), (u32, usize)>,
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
        if t.starts_with("/sys/devices/system/cpu/cpu") && t.contains("/topology/") {
            return self.sysfs_topology(ln, indent, t);
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
            // cat /sys/devices/system/node/node*/distance: one row per node, without its id
            let mut row = Vec::new();
            for (c, w) in split_at(t, None) {
                match number(ln, indent + c, w, "distance", MAX_DISTANCE) {
                    Ok(d) if row.len() <= MAX_NODE_ID as usize => row.push(d),
                    Ok(_) => {
                        return self.errs.push(err(
                            ln,
                            indent + c,
                            format!("more than {} distances", MAX_NODE_ID + 1),
                        ));
                    }
                    Err(e) => return self.errs.push(e),
                }
            }
            return self.bare_rows.push((row, ln));
        }
        // plain `lscpu` ("Vendor ID:   GenuineIntel"): no per-CPU map, but the vendor narrows
        // the closest preset; its other lines are skipped
        if let Some((k, v)) = t.split_once(':')
            && k.starts_with(|c: char| c.is_ascii_uppercase())
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || " ()-_/".contains(c))
        {
            self.lscpu_summary = true;
            match k.trim() {
                "Vendor ID" => {
                    self.vendor = match v.trim() {
                        "GenuineIntel" => Some(Vendor::Intel),
                        "AuthenticAMD" | "HygonGenuine" => Some(Vendor::Amd),
                        "ARM" | "Ampere" | "APM" | "NVIDIA" => Some(Vendor::Arm),
                        "HiSilicon" => Some(Vendor::Hisilicon),
                        "IBM" => Some(Vendor::Ibm),
                        _ => None,
                    }
                }
                "Architecture" => {
                    self.arch = match v.trim() {
                        "x86_64" | "i686" | "i386" => Some(Arch::X86),
                        "aarch64" | "arm64" => Some(Arch::Arm64),
                        "ppc64le" | "ppc64" => Some(Arch::Powerpc),
                        "riscv64" | "riscv32" => Some(Arch::Riscv),
                        "loongarch64" | "loongarch32" => Some(Arch::Loongarch),
                        "s390x" | "s390" => Some(Arch::S390),
                        "sparc64" | "sparc" => Some(Arch::Sparc),
                        _ => None,
                    }
                }
                _ => {}
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
                    match number(ln, col + c - 1, w, "CPU", NR_CPUS - 1) {
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
        if fields.len() < cols.len()
            && let Some(k) = cols.iter().position(|c| *c == Col::Cpu)
            && let Some(&(c, f)) = fields.get(k)
            && fields
                .iter()
                .enumerate()
                .all(|(i, (_, x))| i == k || x.trim().is_empty() || x.trim() == "-")
        {
            // an offline CPU: lscpu -p prints its number and (some) empty fields
            return match number(ln, c, f, "CPU", NR_CPUS - 1) {
                Ok(cpu) => self.offline.push(cpu),
                Err(e) => self.errs.push(e),
            };
        }
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
        let mut offline = false;
        for (col, &(c, f)) in cols.iter().zip(fields) {
            let f = f.trim();
            let absent = f.is_empty() || f == "-";
            let r = match col {
                Col::Cpu => number(ln, c, f, "CPU", NR_CPUS - 1).map(|v| {
                    row.cpu = v;
                    row.col = c;
                    have_cpu = true;
                }),
                Col::Online => {
                    // offline CPUs are not simulated: the others keep their numbers
                    offline |= f.eq_ignore_ascii_case("no");
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
                    if parts.len() > names.len() {
                        Err(err(
                            ln,
                            c,
                            format!(
                                "{f:?} has {} cache ids, the header names {} ({}): at most one id per named cache",
                                parts.len(),
                                names.len(),
                                names.join(":")
                            ),
                        ))
                    } else {
                        // fewer ids than names: a CPU without the higher levels (asymmetric
                        // caches), read left to right
                        row.short_caches |= parts.len() < names.len();
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
        if offline {
            return self.offline.push(row.cpu);
        }
        self.rows.push(row);
    }

    fn finish(mut self, last_line: usize) -> Result<Parsed, Vec<LineError>> {
        let mut notes = Vec::new();
        let end = last_line + 1;
        self.rows_from_sysfs();
        if self.rows.is_empty() && self.errs.is_empty() {
            self.errs.push(if !self.offline.is_empty() {
                err(end, 1, format!("no online CPUs: CPU(s) {} are offline (ONLINE no, or no topology)", cpulist(&self.offline)))
            } else if self.lscpu_summary {
                err(1, 1, "plain lscpu output has no per-CPU map: add the output of lscpu -p=CPU,CORE,SOCKET,NODE,CACHE (or lscpu -e) and numactl -H")
            } else {
                err(end, 1, "no CPUs: paste the output of lscpu -p=CPU,CORE,SOCKET,NODE,CACHE (or lscpu -e) and numactl -H")
            });
        }
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let mut rows = std::mem::take(&mut self.rows);
        // Rows without any topology next to rows with it are offline CPUs (lscpu prints their
        // number only): the kernel builds its domains from the online CPUs.
        if rows.iter().any(|r| !r.bare()) {
            self.offline
                .extend(rows.iter().filter(|r| r.bare()).map(|r| r.cpu));
            rows.retain(|r| !r.bare());
        }
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
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let n = rows.len();
        self.offline.sort_unstable();
        self.offline.dedup();
        self.offline
            .retain(|c| rows.binary_search_by_key(c, |r| r.cpu).is_err());
        if !self.offline.is_empty() {
            notes.push(format!(
                "offline CPU(s) {} left out, as the kernel builds its domains from the online CPUs; the others keep their numbers",
                cpulist(&self.offline)
            ));
        }
        // node: the NODE column, else numactl's node cpus lines, else one node
        let mut from_numactl = vec![None; n];
        // the kernel's CPU numbers, ascending (gaps kept: offline CPUs, SMT modes, standby CPUs)
        let cpu_id: Vec<u32> = rows.iter().map(|r| r.cpu).collect();
        let absent = (0..cpu_id.last().map_or(0, |&l| l + 1))
            .filter(|c| cpu_id.binary_search(c).is_err() && self.offline.binary_search(c).is_err())
            .count();
        if absent > 0 {
            notes.push(format!(
                "{absent} CPU number(s) absent (offline or not present): the others keep their numbers"
            ));
        }
        for (&node, (cpus, ln)) in &self.node_cpus {
            for &c in cpus {
                let slot = cpu_id
                    .binary_search(&c)
                    .ok()
                    .and_then(|i| from_numactl.get_mut(i));
                match slot {
                    Some(slot @ None) => *slot = Some((node, *ln)),
                    Some(Some((other, _))) => self.errs.push(err(
                        *ln,
                        1,
                        format!("CPU {c} is on node {other} and node {node}"),
                    )),
                    None => self.errs.push(err(
                        *ln,
                        1,
                        format!("node {node} lists CPU {c}, but the CPU table has no CPU {c}"),
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
                        format!(
                            "CPU {} is on node {a} here but on node {b} in line {ln}",
                            r.cpu
                        ),
                    ));
                    a
                }
                (Some((a, _)), _) => a,
                (None, Some((b, _))) => b,
                (None, None) if has_col || !self.node_cpus.is_empty() => {
                    self.errs
                        .push(err(r.line, r.col, format!("CPU {} has no node", r.cpu)));
                    0
                }
                (None, None) => 0,
            };
        }
        if !has_col && self.node_cpus.is_empty() {
            notes.push("no NODE column and no numactl -H: one node".to_string());
        }
        let Places {
            arch,
            core,
            cluster,
            llc,
            socket,
        } = self.places(&rows, &node, &mut notes);
        if rows.iter().any(|r| r.core.is_none()) {
            notes.push("no CORE column: one thread per core".to_string());
        }
        if rows.iter().any(|r| r.socket.is_none()) {
            notes.push("no SOCKET column: one socket".to_string());
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
                format!("CPU {} is on a node with CPUs beyond the first {MAX_NODES}: allowed 1..={MAX_NODES} nodes (MAX_NUMNODES)", r.cpu),
            ));
            return Err(self.errs);
        }
        let renumbered: Vec<String> = cpu_nodes
            .iter()
            .enumerate()
            .filter(|&(k, &n)| n as usize != k)
            .map(|(k, n)| format!("{n} as {k}"))
            .collect();
        self.place_bare_rows(&cpu_nodes, &mut notes);
        if !self.errs.is_empty() {
            return Err(self.errs);
        }
        let slit = if self.dist.is_empty() {
            // Without a SLIT the kernel's node_distance is LOCAL_DISTANCE 10 on the diagonal and
            // REMOTE_DISTANCE 20 elsewhere (__node_distance, mm/numa_memblks.c)
            if nodes > 1 {
                notes.push(format!("no node distances: 10 local and 20 between the {nodes} nodes, the kernel's LOCAL_DISTANCE and REMOTE_DISTANCE without a SLIT (numactl -H or /sys/devices/system/node/node*/distance give the measured ones)"));
            }
            (0..nodes)
                .map(|i| {
                    (0..nodes)
                        .map(|j| {
                            if i == j {
                                LOCAL_DISTANCE
                            } else {
                                REMOTE_DISTANCE
                            }
                        })
                        .collect()
                })
                .collect()
        } else {
            // numactl's header names the columns; a sysfs distance file has one column per
            // online node in id order (node_read_distance: for_each_online_node), and every online
            // node has its file, so the columns are the rows' nodes in order
            let cols: Vec<u32> = match &self.dist_cols {
                Some(c) => c.clone(),
                None => {
                    let ids: Vec<u32> = self.dist.keys().copied().collect();
                    if let Some((i, (row, ln))) =
                        self.dist.iter().find(|(_, (r, _))| r.len() != ids.len())
                    {
                        self.errs.push(err(
                            *ln,
                            1,
                            format!(
                                "node {i}'s distance row has {} entries but {} nodes' rows are given: a row has one entry per online node, so give the distance line of every node (memory-only nodes too)",
                                row.len(),
                                ids.len()
                            ),
                        ));
                        return Err(self.errs);
                    }
                    ids
                }
            };
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
            cpu_id,
            core: dense(core.into_iter()),
            cluster: dense(cluster.into_iter()),
            llc: dense(llc.into_iter()),
            node,
            socket: dense(socket.into_iter()),
            slit,
            arch: Some(arch).filter(|a| !a.has_presets()),
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
            arch: self.arch,
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
        bare_rows: Vec::new(),
        lscpu_summary: false,
        vendor: None,
        arch: None,
        offline: Vec::new(),
        sysfs: BTreeMap::new(),
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
