//! A topology printed the way `lscpu -p` and `numactl -H` print a real machine (the round trip's
//! other half: `--format lscpu|numactl`).

use crate::machine::hardware::{Arch, Vendor};
use crate::machine::topology::Topology;

/// `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` as util-linux prints it. The L1d/L1i ids are the core's,
/// L2 the cluster's; the L3 id is the LLC's, except on Intel SNC machines, where as on real ones
/// the L3 is the socket's (the kernel splits it per node: `match_llc`).
pub fn lscpu(t: &Topology) -> String {
    let snc_l3 = t.spec.vendor == Vendor::Intel
        && t.nr_llcs == t.nr_nodes
        && t.node_cpus.len() > t.spec.sockets as usize
        && (0..t.nr_llcs).all(|l| t.llc_cpus[l] == t.node_cpus[l]);
    // an arch without presets (its domain table is the map's) is said as lscpu's summary says
    // it (`uname -m`), so the text reads back to the same machine
    let mut s = match t.spec.map.as_ref().and_then(|m| m.arch) {
        Some(a) => format!(
            "Architecture:        {}\n",
            match a {
                Arch::Riscv => "riscv64",
                Arch::Loongarch => "loongarch64",
                Arch::S390 => "s390x",
                Arch::Sparc => "sparc64",
                Arch::X86 => "x86_64",
                Arch::Arm64 => "aarch64",
                Arch::Powerpc => "ppc64le",
            }
        ),
        None => String::new(),
    };
    s += "# The following is the parsable format, which can be fed to other\n\
         # programs. Each different item in every column has an unique ID\n\
         # starting usually from zero.\n\
         # CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n";
    for c in &t.cpus {
        let l3 = if snc_l3 { c.socket } else { c.llc };
        s += &format!(
            "{},{},{},{},,{},{},{},{}\n",
            t.cpu_id[c.cpu as usize], c.core, c.socket, c.node, c.core, c.core, c.cluster, l3
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
        set.iter().for_each(|c| s += &format!(" {}", t.cpu_id[c]));
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
    use crate::machine::cpu_map::{CpuMap, parse};
    use crate::machine::presets::preset;

    #[test]
    fn numactl_prints_as_numactl_does() {
        let t = Topology::new(preset("milan-2s").unwrap()).unwrap();
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
}
