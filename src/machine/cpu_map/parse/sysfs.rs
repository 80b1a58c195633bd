//! `grep . /sys/devices/system/cpu/cpu*/topology/*_cpus_list` lines (arm64 clusters) and bare
//! `cat node*/distance` rows, placed once the nodes are known.

use super::*;

/// The sysfs topology files read, by the level they give: core (SMT siblings), cluster
/// (arm64 `cluster_cpus_list`, since 5.16), package; the older names too. die_cpus_list and the
/// rest are read and ignored (no level is built from the die).
const SYSFS_FILES: &[(&str, &str)] = &[
    ("core_cpus_list", "core"),
    ("thread_siblings_list", "core"),
    ("cluster_cpus_list", "cluster"),
    ("package_cpus_list", "package"),
    ("core_siblings_list", "package"),
];

/// The lowest CPU of a cpulist (`0-3,8-11`), or None if it is not one.
fn first_of_cpulist(list: &str) -> Option<u32> {
    let mut lowest: Option<u32> = None;
    for part in list.trim().split(',') {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
        if a > b || b >= NR_CPUS {
            return None;
        }
        lowest = Some(lowest.map_or(a, |l| l.min(a)));
    }
    lowest
}

impl Parser {
    /// `/sys/devices/system/cpu/cpuN/topology/FILE:LIST`
    pub(super) fn sysfs_topology(&mut self, ln: usize, indent: usize, t: &str) {
        let rest = &t["/sys/devices/system/cpu/cpu".len()..];
        let Some((num, rest)) = rest.split_once('/') else {
            return self.errs.push(err(
                ln,
                indent + 1,
                "expected /sys/devices/system/cpu/cpuN/topology/FILE:LIST",
            ));
        };
        let cpu = match number(ln, indent + 28, num, "CPU", NR_CPUS - 1) {
            Ok(c) => c,
            Err(e) => return self.errs.push(e),
        };
        let Some((file, list)) = rest.trim_start_matches("topology/").split_once(':') else {
            return self.errs.push(err(
                ln,
                indent + 1,
                "expected FILE:LIST after topology/ (grep . prints both)",
            ));
        };
        let Some(&(_, level)) = SYSFS_FILES.iter().find(|(f, _)| *f == file) else {
            return; // die_cpus_list, *_id, book/drawer: not a level built here
        };
        let Some(first) = first_of_cpulist(list) else {
            return self.errs.push(err(
                ln,
                indent + t.len() - list.len() + 1,
                format!(
                    "{file} {list:?} is not a CPU list (like 0-3,8-11 of CPUs below {NR_CPUS})"
                ),
            ));
        };
        self.sysfs.insert((cpu, level), (first, ln));
    }

    /// Without an lscpu table, the sysfs topology files make the rows (no caches: the arch's
    /// fallback decides the LLC).
    pub(super) fn rows_from_sysfs(&mut self) {
        if !self.rows.is_empty() {
            return;
        }
        let mut cpus: Vec<u32> = self.sysfs.keys().map(|&(c, _)| c).collect();
        cpus.dedup();
        for cpu in cpus {
            let get = |l| self.sysfs.get(&(cpu, l)).map(|&(v, _)| v);
            let line = self
                .sysfs
                .range((cpu, "")..)
                .next()
                .map_or(1, |(_, &(_, l))| l);
            self.rows.push(Row {
                line,
                col: 1,
                cpu,
                core: get("core"),
                socket: get("package"),
                node: None,
                caches: Vec::new(),
                short_caches: false,
            });
        }
    }

    /// Rows of `cat node*/distance` carry no node id. Each row's local distance (10, only on the
    /// diagonal: ACPI SLIT) is in its own node's column; the columns are the online nodes in id
    /// order: the nodes with CPUs when there are as many rows, else nodes 0..R-1 (said in a note).
    pub(super) fn place_bare_rows(&mut self, cpu_nodes: &[u32], notes: &mut Vec<String>) {
        if self.bare_rows.is_empty() {
            return;
        }
        let rows = std::mem::take(&mut self.bare_rows);
        if !self.dist.is_empty() {
            return self.errs.push(err(
                rows[0].1,
                1,
                "distance rows without node ids next to rows with them: paste one form (grep . /sys/devices/system/node/node*/distance names the nodes)",
            ));
        }
        let r = rows.len();
        let ids: Vec<u32> = if cpu_nodes.len() == r {
            cpu_nodes.to_vec()
        } else {
            if cpu_nodes.iter().any(|&n| n as usize >= r) {
                return self.errs.push(err(
                    rows[0].1,
                    1,
                    format!(
                        "{r} distance rows without node ids, but CPUs on nodes {}: paste grep . /sys/devices/system/node/node*/distance (it names each row's node) or numactl -H",
                        cpu_nodes.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                    ),
                ));
            }
            notes.push(format!(
                "{r} distance rows without node ids taken as nodes 0..={}",
                r - 1
            ));
            (0..r as u32).collect()
        };
        self.dist_cols = Some(ids.clone());
        for (row, ln) in rows {
            let local: Vec<usize> = (0..row.len())
                .filter(|&k| row[k] == LOCAL_DISTANCE)
                .collect();
            let node = match local[..] {
                [k] if k < ids.len() => ids[k],
                _ => {
                    self.errs.push(err(
                        ln,
                        1,
                        format!("a distance row without a node id needs exactly one local distance 10 among its {} nodes (its own): it tells the row's node", ids.len()),
                    ));
                    continue;
                }
            };
            if self.dist.insert(node, (row, ln)).is_some() {
                self.errs.push(err(
                    ln,
                    1,
                    format!(
                        "two distance rows have their local distance 10 in node {node}'s column"
                    ),
                ));
            }
        }
    }
}
