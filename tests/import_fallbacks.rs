//! Machines Linux boots whose dumps are silent or odd where the kernel has a default or a
//! fallback (issue 48): no node distances, offline CPUs, uneven or split caches, virtual machines
//! whose LLC ids span sockets, and the architectures without presets (RISC-V, LoongArch, s390,
//! SPARC). Each imports with a note naming what was assumed, builds the domains the kernel
//! builds, and reads back from its own `--format lscpu` + `numactl` text; the inputs the kernel
//! itself would not take are refused at their line and column.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::machine::cpu_map::{self, CpuMap, Parsed};
use schedplay::machine::domains::SchedDomains;
use schedplay::machine::hardware::Arch;
use schedplay::machine::presets::preset;
use schedplay::machine::print;
use schedplay::machine::topology::Topology;

fn parsed(text: &str) -> Parsed {
    cpu_map::parse(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

/// The machine of `text` with the hardware figures `Parsed::hardware` chooses.
fn import(text: &str) -> (Topology, Parsed) {
    let p = parsed(text);
    let (hw, _) = p.hardware();
    let t = Topology::new(preset(hw).unwrap().with_map(p.map.clone())).unwrap();
    (t, p)
}

/// CPU `cpu`'s domains bottom-up as `NAME:span` (with `@level` when asked).
fn levels(t: &Topology, cpu: usize) -> Vec<String> {
    SchedDomains::build(t, false)
        .of(cpu)
        .map(|d| format!("{}:{}", d.name, t.cpulist(&d.span)))
        .collect()
}

fn sd_levels(t: &Topology, cpu: usize) -> Vec<(String, u32)> {
    SchedDomains::build(t, false)
        .of(cpu)
        .map(|d| (d.name.to_string(), d.level))
        .collect()
}

/// Printed and read back: the same map (arch included), and the same domains on every CPU.
fn round_trips(t: &Topology) {
    let text = print::lscpu(t) + &print::numactl(t);
    let back = parsed(&text);
    assert_eq!(back.map, CpuMap::of(t), "{text}");
    let u = Topology::new(t.spec.clone().with_map(back.map)).unwrap();
    let (a, b) = (
        SchedDomains::build(t, false),
        SchedDomains::build(&u, false),
    );
    for cpu in 0..t.nr_cpus() {
        assert_eq!(a.dmesg(cpu), b.dmesg(cpu), "CPU {cpu}\n{text}");
    }
}

fn has_note(p: &Parsed, start: &str) -> bool {
    p.notes.iter().any(|n| n.starts_with(start))
}

/// `lscpu -p` of `sockets` x `cores` SMT2 x86 cores, a node per socket, an L3 per socket.
fn two_node_box(sockets: u32, cores: u32) -> String {
    let mut s = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    let total = sockets * cores;
    for cpu in 0..total * 2 {
        let core = cpu % total;
        let socket = core / cores;
        s += &format!("{cpu},{core},{socket},{socket},,{core},{core},{core},{socket}\n");
    }
    s
}

#[test]
fn without_node_distances_the_kernel_defaults_apply() {
    // lscpu -p alone: 2 nodes, no SLIT
    let (t, p) = import(&two_node_box(2, 4));
    assert_eq!(p.map.slit, vec![vec![10, 20], vec![20, 10]]);
    assert!(
        has_note(&p, "no node distances: 10 local and 20 between the 2 nodes"),
        "{:?}",
        p.notes
    );
    assert_eq!(levels(&t, 0), vec!["SMT:0,8", "MC:0-3,8-11", "NUMA:0-15"]);
    round_trips(&t);
    // numactl -H with its node lines but no distance table, 4 nodes, lscpu -e without NODE
    let mut text = String::from("CPU SOCKET CORE L1d:L1i:L2:L3\n");
    for cpu in 0..8 {
        text += &format!("{cpu} {} {cpu} {cpu}:{cpu}:{cpu}:{}\n", cpu / 2, cpu / 2);
    }
    text += "\navailable: 4 nodes (0-3)\n";
    for n in 0..4 {
        text += &format!(
            "node {n} cpus: {} {}\nnode {n} size: 1024 MB\n",
            2 * n,
            2 * n + 1
        );
    }
    let p = parsed(&text);
    assert_eq!(p.map.slit.len(), 4);
    for (i, row) in p.map.slit.iter().enumerate() {
        for (j, &d) in row.iter().enumerate() {
            assert_eq!(d, if i == j { 10 } else { 20 });
        }
    }
    assert!(has_note(
        &p,
        "no node distances: 10 local and 20 between the 4 nodes"
    ));
    // one node needs none, and gets no note
    let p = parsed("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n");
    assert!(!has_note(&p, "no node distances"), "{:?}", p.notes);
}

#[test]
fn offline_cpus_are_left_out_and_keep_the_others_numbers() {
    // lscpu -p prints an offline CPU with fewer, empty fields ("4,,,,," has 6 of 9)
    let text = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
                0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,2,0,0,,2,2,2,0\n3,3,0,0,,3,3,3,0\n\
                4,,,,,\n5,,,,,\n6,6,0,0,,6,6,6,0\n7,7,0,0,,7,7,7,0\n";
    let (t, p) = import(text);
    assert_eq!(p.map.cpu_id, vec![0, 1, 2, 3, 6, 7]);
    assert_eq!(
        p.notes,
        vec![
            "offline CPU(s) 4-5 left out, as the kernel builds its domains from the online CPUs; the others keep their numbers"
        ]
    );
    assert_eq!(levels(&t, 4), vec!["MC:0-3,6-7"]);
    round_trips(&t);
    // a full-length row with its node but no topology: offline too
    let p = parsed(&text.replace("4,,,,,\n", "4,,,0,,,,,\n"));
    assert_eq!(p.map.cpu_id, vec![0, 1, 2, 3, 6, 7]);
    // no NODE column and numactl lists the online CPUs only ("CPU 4 has no node" before)
    let text = "# CPU,Core,Socket,,L1d,L1i,L2,L3\n\
                0,0,0,,0,0,0,0\n1,1,0,,1,1,1,0\n2,2,1,,2,2,2,1\n3,3,1,,3,3,3,1\n4,,,,,,,\n\
                node 0 cpus: 0 1\nnode 1 cpus: 2 3\nnode distances:\nnode 0 1\n 0: 10 21\n 1: 21 10\n";
    let (t, p) = import(text);
    assert_eq!((p.map.cpu_id.len(), p.map.slit[0][1]), (4, 21));
    assert!(has_note(&p, "offline CPU(s) 4 left out"), "{:?}", p.notes);
    assert_eq!(levels(&t, 0), vec!["MC:0-1", "NUMA:0-3"]);
    // lscpu -e: ONLINE no, with '-' fields
    let p = parsed(
        "CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE\n0 0 0 0 0:0:0:0 yes\n1 0 0 1 1:1:1:0 yes\n2 - - - - no\n3 - - - - no\n",
    );
    assert_eq!(p.map.cpu_id, vec![0, 1]);
    assert!(has_note(&p, "offline CPU(s) 2-3 left out"));
    // every CPU offline: refused, naming them
    let e = cpu_map::parse("CPU NODE SOCKET CORE ONLINE\n0 - - - no\n1 - - - no\n").unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "line 4:1: no online CPUs: CPU(s) 0-1 are offline (ONLINE no, or no topology)"
    );
    // a short row with data is still an error at its line
    let e = cpu_map::parse("# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0\n").unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "line 3:1: 3 fields, but the header has 4 columns"
    );
    // an online CPU (it has a core) that no numactl node lists: the kernel gives every online
    // CPU a node, so the dump is inconsistent
    let e = cpu_map::parse(
        "# CPU,Core,Socket\n0,0,0\n1,1,0\nnode 0 cpus: 0\nnode distances:\nnode 0\n 0: 10\n",
    )
    .unwrap_err();
    assert_eq!(e[0].to_string(), "line 3:1: CPU 1 has no node");
}

#[test]
fn uneven_and_split_caches_import() {
    // Arm big.LITTLE-like: CPUs 0-3 share an L3; 4-5 have no L3 id (fewer ids than the header)
    let text = "Architecture: aarch64\nCPU NODE SOCKET CORE L1d:L1i:L2:L3\n\
                0 0 0 0 0:0:0:0\n1 0 0 1 1:1:1:0\n2 0 0 2 2:2:2:0\n3 0 0 3 3:3:3:0\n\
                4 0 0 4 4:4:4\n5 0 0 5 5:5:4\n";
    let (t, p) = import(text);
    assert!(
        has_note(
            &p,
            "CPU(s) 4-5 have no L3 id: each CPU's LLC is its own highest cache"
        ),
        "{:?}",
        p.notes
    );
    assert!(has_note(
        &p,
        "CPU(s) 4-5 give fewer cache ids than the header names"
    ));
    // 4-5 share their L2: their LLC; the others their L3
    assert_eq!(t.cpulist(&t.llc_cpus[t.cpus[4].llc as usize]), "4-5");
    assert_eq!(t.cpulist(&t.llc_cpus[t.cpus[0].llc as usize]), "0-3");
    assert_eq!(levels(&t, 0), vec!["MC:0-3", "PKG:0-5"]);
    assert_eq!(levels(&t, 4), vec!["MC:4-5", "PKG:0-5"]);
    round_trips(&t);
    // split L2 columns (lscpu -e and lscpu -p): the L2d is the cluster
    let e = "CPU NODE SOCKET CORE L1d:L1i:L2d:L2i:L3\n0 0 0 0 0:0:0:0:0\n1 0 0 1 1:1:0:0:0\n\
             2 0 0 2 2:2:1:1:0\n3 0 0 3 3:3:1:1:0\n";
    let p = parsed(e);
    assert_eq!(p.map.cluster, vec![0, 0, 1, 1]);
    assert!(has_note(&p, "split L2 (L2d:L2i)"), "{:?}", p.notes);
    let pp = "# CPU,Core,Socket,Node,,L1d,L1i,L2d,L2i,L3\n0,0,0,0,,0,0,0,0,0\n1,1,0,0,,1,1,0,0,0\n\
              2,2,0,0,,2,2,1,1,0\n3,3,0,0,,3,3,1,1,0\n";
    assert_eq!(parsed(pp).map, p.map);
    // more ids than the header names: refused at the field
    let e = cpu_map::parse("CPU CORE L1d:L1i:L2\n0 0 0:0:0:0\n").unwrap_err();
    assert!(
        e[0].to_string()
            .starts_with("line 2:5: \"0:0:0:0\" has 4 cache ids, the header names 3"),
        "{}",
        e[0]
    );
}

#[test]
fn virtual_machines_whose_llc_spans_sockets_take_the_arch_fallback() {
    // Xen guest: every vCPU its own socket, one node, one L3 id
    let xen = "Vendor ID: GenuineIntel\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
               0,0,0,0,,0,0,0,0\n1,1,1,0,,1,1,1,0\n2,2,2,0,,2,2,2,0\n3,3,3,0,,3,3,3,0\n";
    let (t, p) = import(xen);
    assert!(
        has_note(&p, "the LLCs of CPU(s) 0-3 span sockets: x86's match_llc"),
        "{:?}",
        p.notes
    );
    assert_eq!(p.map.socket, vec![0; 4]);
    assert_eq!(levels(&t, 0), vec!["MC:0-3"]);
    round_trips(&t);
    // the same on arm64 (KVM): arch_topology takes the package, one CPU: only PKG is left
    let (t, p) = import(&xen.replace("Vendor ID: GenuineIntel", "Architecture: aarch64"));
    assert!(has_note(
        &p,
        "the LLC ids of CPU(s) 0-3 span sockets: each takes its package"
    ));
    assert_eq!(levels(&t, 0), vec!["PKG:0-3"]);
    round_trips(&t);
    // KVM on LoongArch: MC is the node whatever the LLC ids; the sockets become one
    let (t, p) = import(
        "Architecture: loongarch64\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n\
         0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n2,2,1,0,,2,2,2,1\n3,3,1,0,,3,3,3,1\n",
    );
    assert_eq!(p.map.arch, Some(Arch::Loongarch));
    assert!(
        has_note(&p, "LoongArch: the LLC is the node"),
        "{:?}",
        p.notes
    );
    assert!(has_note(
        &p,
        "the LLCs of CPU(s) 0-3 span sockets: LoongArch's cpu_llc_shared_map"
    ));
    assert_eq!(levels(&t, 0), vec!["MC:0-3"]);
    round_trips(&t);
    // x86: an LLC id on nodes of two sockets is split per node, with the kernel's warning
    let p = parsed(
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,0,0,,1,1,1,0\n\
         2,2,1,1,,2,2,2,0\n3,3,1,1,,3,3,3,0\n10 20\n20 10\n",
    );
    assert_eq!(p.map.llc, vec![0, 0, 1, 1]);
    assert!(
        p.notes.iter().any(|n| n.contains(
            "sched: CPU #2's llc-sibling CPU #0 is not on the same node! [node: 1 != 0]. Ignoring dependency."
        )),
        "{:?}",
        p.notes
    );
}

#[test]
fn risc_v_loongarch_s390_and_sparc_build_their_own_tables() {
    // RISC-V board, lscpu -e with '-' in SOCKET and no L3
    let rv = "Architecture:        riscv64\nVendor ID:           0x489\n\
              CPU NODE SOCKET CORE L1d:L1i:L2 ONLINE MAXMHZ\n\
              0 0 - 0 0:0:0 yes 1500.0000\n1 0 - 1 1:1:0 yes 1500.0000\n\
              2 0 - 2 2:2:0 yes 1500.0000\n3 0 - 3 3:3:0 yes 1500.0000\n";
    let (t, p) = import(rv);
    assert_eq!(p.map.arch, Some(Arch::Riscv));
    let (_, why) = p.hardware();
    assert!(
        why.starts_with("no riscv preset: hardware figures of"),
        "{why}"
    );
    assert!(why.contains("RISC-V's default_topology[]"), "{why}");
    // no SMT or CLS in RISC-V's table: MC is level 0
    assert_eq!(sd_levels(&t, 0), vec![("MC".to_string(), 0)]);
    round_trips(&t);
    // SG2042-like: 2 nodes, L2 per 2 cores, one L3 across both nodes (split per node)
    let mut sg = String::from("Architecture: riscv64\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for c in 0..8 {
        sg += &format!("{c},{c},0,{},,{c},{c},{},0\n", c / 4, c / 2);
    }
    sg += "node distances:\nnode 0 1\n 0: 10 15\n 1: 15 10\n";
    let (t, _) = import(&sg);
    assert_eq!(levels(&t, 0), vec!["MC:0-3", "NUMA:0-7"]);
    round_trips(&t);
    // LoongArch 3C5000-like: SMT off, 4 cores a node, 2 nodes, SLIT from sysfs
    let mut la = String::from("Architecture: loongarch64\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for c in 0..8 {
        la += &format!("{c},{c},0,{},,{c},{c},{c},0\n", c / 4);
    }
    la += "/sys/devices/system/node/node0/distance:10 16\n/sys/devices/system/node/node1/distance:16 10\n";
    let (t, p) = import(&la);
    assert_eq!(p.map.arch, Some(Arch::Loongarch));
    // SMT is in its table (level 0), MC level 1, PKG 2, NODE 3 (degenerate), NUMA 4
    assert_eq!(
        sd_levels(&t, 0),
        vec![("MC".to_string(), 1), ("NUMA".to_string(), 4)]
    );
    assert_eq!(levels(&t, 0), vec!["MC:0-3", "NUMA:0-7"]);
    round_trips(&t);
    // s390 z/VM guest, lscpu -e: SMT2, 2 sockets, split L2, DRAWER and BOOK columns
    let mut s390 = String::from(
        "Architecture:        s390x\nVendor ID:           IBM/S390\n\
         CPU NODE DRAWER BOOK SOCKET CORE L1d:L1i:L2d:L2i ONLINE CONFIGURED POLARIZATION ADDRESS\n",
    );
    for c in 0..8 {
        s390 += &format!(
            "{c} 0 0 0 {} {} {}:{}:{}:{} yes yes horizontal {c}\n",
            c / 4,
            c / 2,
            c / 2,
            c / 2,
            c / 2,
            c / 2
        );
    }
    let (t, p) = import(&s390);
    assert_eq!(p.map.arch, Some(Arch::S390));
    assert!(has_note(&p, "s390: the LLC is the socket"), "{:?}", p.notes);
    assert_eq!(levels(&t, 0), vec!["SMT:0-1", "MC:0-3", "BOOK:0-7"]);
    assert_eq!(
        sd_levels(&t, 0).iter().map(|l| l.1).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    round_trips(&t);
    // SPARC T-series: SMT8 cores sharing an L3
    let mut sp = String::from("Architecture: sparc64\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for c in 0..16 {
        sp += &format!("{c},{},0,0,,{},{},{},0\n", c / 8, c / 8, c / 8, c / 8);
    }
    let (t, p) = import(&sp);
    assert_eq!(p.map.arch, Some(Arch::Sparc));
    assert_eq!(levels(&t, 9), vec!["SMT:8-15", "MC:0-15"]);
    round_trips(&t);
    // the arch travels in the link form
    let enc = p.map.encode();
    assert!(enc.ends_with("_sparc"), "{enc}");
    assert_eq!(CpuMap::decode(&enc).unwrap(), p.map);
    assert!(
        CpuMap::decode(&enc.replace("_sparc", "_x86"))
            .unwrap_err()
            .contains("riscv, loongarch, s390, sparc")
    );
}
