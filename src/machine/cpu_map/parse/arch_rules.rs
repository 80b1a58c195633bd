//! Where each CPU sits by its architecture's rules (`Parser::places`): which arch the pasted
//! machine is, each CPU's core, cluster and LLC (its own highest cache, or the arch's mask where
//! the caches do not decide it: s390's socket, LoongArch's node, the fallbacks without L2/L3
//! ids), and an LLC whose CPUs lie on several sockets (virtual machines).

use super::*;

/// A cpulist as the kernel prints one (`%*pbl`: `0-3,8`).
pub(super) fn cpulist(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    out.join(",")
}

impl Parser {
    /// The architecture of the pasted machine: the summary's vendor, else its Architecture, else
    /// the shape (more than 2 threads per core: POWER; else x86), as `Parsed::hardware` takes it.
    pub(super) fn effective_arch(&self, rows: &[Row]) -> Arch {
        if let Some(a) = self.vendor.map(Vendor::arch).or(self.arch) {
            return a;
        }
        let mut threads: BTreeMap<(u32, Option<u32>), u32> = BTreeMap::new();
        for r in rows {
            let l1 = r
                .caches
                .iter()
                .find(|(n, _)| n.trim_start_matches(['L', 'l']).starts_with('1'))
                .map(|&(_, v)| v);
            *threads.entry((r.core.unwrap_or(r.cpu), l1)).or_insert(0) += 1;
        }
        if threads.values().any(|&t| t > 2) {
            Arch::Powerpc
        } else {
            Arch::X86
        }
    }

    /// An LLC whose CPUs lie on several sockets (virtual machines: Xen guests, KVM on LoongArch):
    /// what the arch's `cpu_coregroup_mask` then gives. arch_topology (arm64, RISC-V) takes the
    /// package, as the LLC siblings are not inside it; x86 (`match_llc` compares LLC ids and
    /// nodes, not packages), LoongArch (the node), SPARC (`max_cache_id`) and powerpc link them,
    /// so MC spans the sockets: those sockets are taken as one. An x86 LLC id on nodes of
    /// different sockets is split per node, as `topology_sane` ignores such a sibling with its
    /// warning (said in a note).
    pub(super) fn llc_fallbacks(
        &mut self,
        arch: Arch,
        rows: &[Row],
        node: &[u32],
        llc: &mut [(u32, u32, Option<u32>, u32)],
        socket: &mut [u32],
        notes: &mut Vec<String>,
    ) {
        // x86's warning: the first CPU pair of one LLC id on different nodes and sockets
        if arch == Arch::X86 {
            let mut first: BTreeMap<(u32, u32), usize> = BTreeMap::new();
            for i in 0..rows.len() {
                if llc[i].0 < 10 {
                    continue;
                }
                let f = *first.entry((llc[i].0, llc[i].1)).or_insert(i);
                if node[f] != node[i] && socket[f] != socket[i] {
                    notes.push(format!(
                        "LLC id {} spans nodes of different sockets: split per node, as x86 warns \"sched: CPU #{}'s llc-sibling CPU #{} is not on the same node! [node: {} != {}]. Ignoring dependency.\" (topology_sane)",
                        llc[i].1, rows[i].cpu, rows[f].cpu, node[i], node[f]
                    ));
                    break;
                }
            }
        }
        let mut sockets_of: BTreeMap<(u32, u32, Option<u32>, u32), Vec<u32>> = BTreeMap::new();
        for i in 0..rows.len() {
            let s = sockets_of.entry(llc[i]).or_default();
            if !s.contains(&socket[i]) {
                s.push(socket[i]);
            }
        }
        let spanning_llcs: std::collections::BTreeSet<_> = sockets_of
            .iter()
            .filter(|(_, s)| s.len() > 1)
            .map(|(&l, _)| l)
            .collect();
        if spanning_llcs.is_empty() {
            return;
        }
        let spanning: Vec<Vec<u32>> = sockets_of.into_values().filter(|s| s.len() > 1).collect();
        let across: Vec<u32> = (0..rows.len())
            .filter(|&i| spanning_llcs.contains(&llc[i]))
            .map(|i| rows[i].cpu)
            .collect();
        if matches!(arch, Arch::Arm64 | Arch::Riscv) {
            for i in 0..rows.len() {
                if spanning_llcs.contains(&llc[i]) {
                    llc[i] = (1, socket[i], None, node[i]);
                }
            }
            notes.push(format!(
                "the LLC ids of CPU(s) {} span sockets: each takes its package within the node, as arch_topology's cpu_coregroup_mask does when the LLC siblings are not inside the package",
                cpulist(&across)
            ));
            return;
        }
        // union the sockets an LLC spans (the lowest id names the merged socket)
        let mut root: BTreeMap<u32, u32> = BTreeMap::new();
        fn find(root: &BTreeMap<u32, u32>, mut s: u32) -> u32 {
            while let Some(&p) = root.get(&s).filter(|&&p| p != s) {
                s = p;
            }
            s
        }
        for group in &spanning {
            let r = group.iter().map(|&s| find(&root, s)).min().unwrap_or(0);
            for &s in group {
                let f = find(&root, s);
                root.insert(f, r);
                root.insert(s, r);
            }
        }
        let merged: Vec<String> = {
            let mut by_root: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for &s in root.keys() {
                by_root.entry(find(&root, s)).or_default().push(s);
            }
            by_root
                .into_values()
                .map(|v| v.iter().map(u32::to_string).collect::<Vec<_>>().join("+"))
                .collect()
        };
        for s in socket.iter_mut() {
            *s = find(&root, *s);
        }
        let why = match arch {
            Arch::Loongarch => "LoongArch's cpu_llc_shared_map links the CPUs of one node",
            Arch::Sparc => "SPARC's cpu_core_sib_cache_map links the CPUs of one max_cache_id",
            Arch::Powerpc => "powerpc links the CPUs sharing a cache",
            _ => "x86's match_llc links CPUs of one LLC id and node whatever their package",
        };
        notes.push(format!(
            "the LLCs of CPU(s) {} span sockets: {why}, so MC spans them; sockets {} taken as one each",
            cpulist(&across),
            merged.join(", ")
        ));
    }
}

/// Where each CPU sits, as keys to number densely: its core, cluster, LLC and socket, and the
/// architecture whose rules gave them.
pub(super) struct Places {
    pub(super) arch: Arch,
    pub(super) core: Vec<(u32, Option<u32>)>,
    pub(super) cluster: Vec<(u32, u32, Option<u32>, u32)>,
    pub(super) llc: Vec<(u32, u32, Option<u32>, u32)>,
    pub(super) socket: Vec<u32>,
}

impl Parser {
    /// Each CPU's core, cluster, LLC and socket, by the arch's rules, with notes for what was
    /// assumed. `node` is each row's node id.
    pub(super) fn places(&mut self, rows: &[Row], node: &[u32], notes: &mut Vec<String>) -> Places {
        let n = rows.len();
        // The architecture whose rules build the LLC (and later the domains): the summary's
        // vendor, else its Architecture, else the shape (more than 2 threads per core: POWER;
        // else x86), as `Parsed::hardware` chooses.
        let arch = self.effective_arch(rows);
        let said_x86 = self.vendor.map(Vendor::arch).or(self.arch) == Some(Arch::X86);
        let level = |name: &str| -> u32 {
            name.to_ascii_uppercase()
                .trim_start_matches('L')
                .trim_end_matches(|c: char| !c.is_ascii_digit())
                .parse()
                .unwrap_or(0)
        };
        // a level's id: the data (or unified) cache where the level is split (L2d:L2i)
        let cache = |r: &Row, lvl: u32| {
            let of_level = || r.caches.iter().filter(|(n, _)| level(n) == lvl);
            of_level()
                .find(|(n, _)| !n.ends_with(['i', 'I']))
                .or_else(|| of_level().next())
                .map(|&(_, v)| v)
        };
        // each CPU's LLC is its own highest cache level (cacheinfo is per CPU: asymmetric caches)
        let top_of = |r: &Row| r.caches.iter().map(|(n, _)| level(n)).max().unwrap_or(0);
        let top = rows.iter().map(top_of).max().unwrap_or(0);
        let sysfs = std::mem::take(&mut self.sysfs);
        let sysfs_cluster = |cpu: u32| sysfs.get(&(cpu, "cluster")).map(|&(v, _)| v);
        let mut core = Vec::with_capacity(n);
        let mut cluster = Vec::with_capacity(n);
        // (rule, id, L1 id, node): rule 1 the package, 2 the core alone, 3 the node, 10 + level
        // a cache id
        let mut llc: Vec<(u32, u32, Option<u32>, u32)> = Vec::with_capacity(n);
        let mut socket = Vec::with_capacity(n);
        for (i, r) in rows.iter().enumerate() {
            let c = r.core.unwrap_or(r.cpu);
            let pkg = r.socket.unwrap_or(0);
            // A core is its CORE id and its L1: lscpu numbers cores per CPU type on mixed-core
            // Arm (CORE ids repeat across types), and on POWER the CORE is the big core of two
            // SMT4 halves with an L1 each (the small core: the kernel's SMT level).
            core.push((c, cache(r, 1)));
            let t = top_of(r);
            llc.push(match arch {
                // s390's MC is `core_mask`, the socket, whatever the caches
                Arch::S390 => (1, pkg, None, node[i]),
                // LoongArch's `cpu_llc_shared_map` links the CPUs of one node
                Arch::Loongarch => (3, node[i], None, node[i]),
                // Intel SNC: an L3 shared by several nodes is split per node (match_llc)
                _ if t >= 2 => (10 + t, cache(r, t).unwrap_or(0), None, node[i]),
                // No L2/L3 id: x86's LLC mask is then the core alone (only when the summary
                // says x86: dumps without caches come from s390 guests and boards);
                // arch_topology (arm64, RISC-V) and SPARC take the package (within the node)
                Arch::X86 if said_x86 => (2, c, cache(r, 1), node[i]),
                _ => (1, pkg, None, node[i]),
            });
            // without an L2 id each core is its own cluster
            cluster.push(match (sysfs_cluster(r.cpu), cache(r, 2)) {
                // arm64's cluster (cluster_cpus_list) is the CLS span, not the L2
                (Some(first), _) => (3, first, None, node[i]),
                (None, Some(l2)) => (0, l2, None, node[i]),
                (None, None) => (1, c, cache(r, 1), node[i]),
            });
            socket.push(pkg);
        }
        let cpus_where = |f: &dyn Fn(&Row) -> bool| {
            cpulist(
                &rows
                    .iter()
                    .filter(|r| f(r))
                    .map(|r| r.cpu)
                    .collect::<Vec<_>>(),
            )
        };
        match arch {
            Arch::S390 => notes.push("s390: the LLC is the socket, as s390's MC level is core_mask (the CPUs of one socket) whatever the caches".to_string()),
            Arch::Loongarch => notes.push("LoongArch: the LLC is the node, as cpu_llc_shared_map links the CPUs of one node whatever the caches".to_string()),
            _ if top < 2 => notes.push(if said_x86 {
                "no L2/L3 ids: each core is its own LLC, as x86 builds cpu_llc_shared_mask without cache information (no MC level)".to_string()
            } else {
                format!("no L2/L3 ids: the LLC is the package within its node, as {} builds MC without cache information (x86 would build none: paste lscpu's summary to say x86)", match arch {
                    Arch::Sparc => "SPARC's cpu_core_sib_cache_map",
                    Arch::Powerpc => "powerpc",
                    _ => "arch_topology's cpu_coregroup_mask (arm64, RISC-V)",
                })
            }),
            _ => {
                if top == 2 {
                    notes.push("no L3 ids: the L2 is the LLC".to_string());
                }
                if rows.iter().any(|r| top_of(r) < top) {
                    notes.push(format!(
                        "CPU(s) {} have no L{top} id: each CPU's LLC is its own highest cache (cacheinfo is per CPU){}",
                        cpus_where(&|r| top_of(r) < top),
                        if rows.iter().any(|r| top_of(r) < 2) {
                            if said_x86 { "; without L2/L3 ids a core is its own LLC" } else { "; without L2/L3 ids the package within the node" }
                        } else {
                            ""
                        }
                    ));
                }
            }
        }
        if rows.iter().any(|r| r.short_caches) {
            notes.push(format!(
                "CPU(s) {} give fewer cache ids than the header names: read left to right (L1d, L1i, L2, ...), the missing levels absent",
                cpus_where(&|r| r.short_caches)
            ));
        }
        if rows.iter().any(|r| {
            r.caches
                .iter()
                .any(|(n, _)| level(n) == 2 && n.ends_with(['i', 'I']))
        }) {
            notes.push("split L2 (L2d:L2i): the L2d ids are the L2".to_string());
        }
        self.llc_fallbacks(arch, rows, node, &mut llc, &mut socket, notes);
        Places {
            arch,
            core,
            cluster,
            llc,
            socket,
        }
    }
}
