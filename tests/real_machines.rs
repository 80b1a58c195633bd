//! Real machines Linux boots that the importer once refused (issue 28): each input imports and
//! builds the domains the kernel builds, and round-trips (printed as `lscpu -p` + `numactl -H` and
//! read back, it is the same machine with the same domains).
#![cfg(not(target_arch = "wasm32"))]

use schedplay::machine::cpu_map::{self, CpuMap};
use schedplay::machine::domains::SchedDomains;
use schedplay::machine::presets::preset;
use schedplay::machine::print;
use schedplay::machine::topology::Topology;

/// The machine of `text` with the hardware figures of `hw`.
fn import(text: &str, hw: &str) -> Topology {
    let p = cpu_map::parse(text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    Topology::new(preset(hw).unwrap().with_map(p.map)).unwrap()
}

/// CPU `cpu`'s domains bottom-up as `NAME:span`.
fn levels(t: &Topology, cpu: usize) -> Vec<String> {
    SchedDomains::build(t, false)
        .of(cpu)
        .map(|d| format!("{}:{}", d.name, t.cpulist(&d.span)))
        .collect()
}

/// Printed and read back: the same map, and the same domains on every CPU.
fn round_trips(t: &Topology) {
    let text = print::lscpu(t) + &print::numactl(t);
    let back = cpu_map::parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
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

#[test]
fn several_sockets_in_one_node_build_pkg_over_the_node() {
    // the input: two sockets, NUMA off (one node), no distances needed
    let t = import(
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,1,0,,1,1,1,1\n",
        "gnr-2s",
    );
    assert_eq!(levels(&t, 0), vec!["PKG:0-1"]);
    assert_eq!(
        t.class(0, 1),
        schedplay::machine::hardware::LatencyClass::Socket
    );
    round_trips(&t);
    // 4 sockets of 2 cores (SMT2) in 2 nodes of 2 sockets each
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for cpu in 0..16u32 {
        let core = cpu % 8;
        let socket = core / 2;
        text += &format!(
            "{cpu},{core},{socket},{},,{core},{core},{core},{socket}\n",
            socket / 2
        );
    }
    text += "node distances:\nnode 0 1\n 0: 10 21\n 1: 21 10\n";
    let t = import(&text, "gnr-2s");
    assert_eq!(
        levels(&t, 0),
        vec!["SMT:0,8", "MC:0-1,8-9", "PKG:0-3,8-11", "NUMA:0-15"]
    );
    round_trips(&t);
    // a node across sockets where one of them has a second node: named, not built
    let e = cpu_map::parse(
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,1,0,,1,1,1,1\n2,2,1,1,,2,2,2,1\n10 20\n20 10\n",
    )
    .unwrap_err();
    assert!(
        e[0].to_string()
            .contains("a node lies inside one socket or holds whole sockets"),
        "{e:?}"
    );
}

#[test]
fn sparse_node_ids_in_the_sysfs_distance_form() {
    // nodes 0 and 2 (node 1 offline or absent): a distance file has a column per online node
    let cpus = "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n1,1,1,2,,1,1,1,1\n";
    for dist in [
        "/sys/devices/system/node/node0/distance:10 20\n/sys/devices/system/node/node2/distance:20 10\n",
        // `cat node*/distance`: no ids; the local 10 tells each row's node
        "10 20\n20 10\n",
        // numactl -H names the columns
        "node distances:\nnode   0   2\n  0:  10  20\n  2:  20  10\n",
    ] {
        let p =
            cpu_map::parse(&format!("{cpus}{dist}")).unwrap_or_else(|e| panic!("{dist}: {e:?}"));
        assert_eq!(p.map.slit, vec![vec![10, 20], vec![20, 10]], "{dist}");
        assert_eq!(p.map.node, vec![0, 1], "{dist}");
        let t = Topology::new(preset("milan-2s").unwrap().with_map(p.map)).unwrap();
        assert_eq!(levels(&t, 0), vec!["NUMA:0-1"], "{dist}");
        round_trips(&t);
    }
    // a memory-only node 1 between them: its row is in the files, its column in every row
    let p = cpu_map::parse(&format!(
        "{cpus}/sys/devices/system/node/node0/distance:10 20 30\n/sys/devices/system/node/node1/distance:20 10 20\n/sys/devices/system/node/node2/distance:30 20 10\n"
    ))
    .unwrap();
    assert_eq!(p.map.slit, vec![vec![10, 30], vec![30, 10]]);
    // rows of nodes 0 and 2 only, three columns: the missing row is named
    let e = cpu_map::parse(&format!(
        "{cpus}/sys/devices/system/node/node0/distance:10 20 30\n/sys/devices/system/node/node2/distance:30 20 10\n"
    ))
    .unwrap_err();
    assert!(
        e[0].to_string()
            .contains("give the distance line of every node"),
        "{e:?}"
    );
    // a bare row without its local 10
    let e = cpu_map::parse(&format!("{cpus}10 20\n20 30\n")).unwrap_err();
    assert!(
        e[0].to_string().starts_with(
            "line 5:1: a distance row without a node id needs exactly one local distance 10"
        ),
        "{e:?}"
    );
}

#[test]
fn gaps_in_cpu_numbering_keep_the_kernels_numbers() {
    // `nosmt` on a box with adjacent siblings: CPUs 0,2,4,6 online, 1,3,5,7 offline (lscpu -e)
    let text = "\
CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE
  0    0      0    0 0:0:0:0          yes
  1    -      -    - -                no
  2    0      0    1 1:1:1:0          yes
  3    -      -    - -                no
  4    1      1    2 2:2:2:1          yes
  5    -      -    - -                no
  6    1      1    3 3:3:3:1          yes
  7    -      -    - -                no
node distances:
node   0   1
  0:  10  21
  1:  21  10
";
    let p = cpu_map::parse(text).unwrap();
    assert_eq!(p.map.cpu_id, vec![0, 2, 4, 6]);
    assert!(
        p.notes.iter().any(|n| n.contains("keep their numbers")),
        "{:?}",
        p.notes
    );
    let t = Topology::new(preset("gnr-2s").unwrap().with_map(p.map.clone())).unwrap();
    assert_eq!(levels(&t, 0), vec!["MC:0,2", "NUMA:0,2,4,6"]);
    let d = SchedDomains::build(&t, false);
    assert!(d.dmesg(1).starts_with("CPU2 attaching"), "{}", d.dmesg(1));
    assert!(
        d.debugfs(3)
            .starts_with("/sys/kernel/debug/sched/domains/cpu6/domain0/")
    );
    round_trips(&t);
    // the link form carries the numbers as a seventh part, and only then
    let enc = p.map.encode();
    assert_eq!(enc.split('_').count(), 7, "{enc}");
    assert_eq!(CpuMap::decode(&enc).unwrap(), p.map);
    let dense = CpuMap::of(&Topology::new(preset("milan-2s").unwrap()).unwrap());
    assert_eq!(dense.encode().split('_').count(), 6);
    // numactl -H lists the kernel's numbers; a CPU it names that the table lacks is named
    let e = cpu_map::parse(
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,0\n8,1,0,0,,1,1,1,0\nnode 0 cpus: 0 8 9\n",
    )
    .unwrap_err();
    assert!(
        e[0].to_string()
            .contains("node 0 lists CPU 9, but the CPU table has no CPU 9"),
        "{e:?}"
    );
    // POWER at SMT4 of 8 threads: 0-3, 8-11 (threads 4-7 of each core offline)
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for cpu in [0u32, 1, 2, 3, 8, 9, 10, 11] {
        let core = cpu / 8;
        text += &format!("{cpu},{core},0,0,,{core},{core},{core},{core}\n");
    }
    let t = import(&text, "gnr-2s");
    assert_eq!(t.cpu_id, vec![0, 1, 2, 3, 8, 9, 10, 11]);
    // bad numbers in a link: named
    for bad in ["0,0_0,0_0,0_0,0_0,0_10_3,1", "0_0_0_0_0_10_9000"] {
        let e = CpuMap::decode(bad).unwrap_err();
        assert!(e.contains("CPU number"), "{bad}: {e}");
    }
}

#[test]
fn more_than_two_threads_per_core() {
    // 2 cores of SMT8, siblings adjacent (POWER numbering), one L3 per core
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for cpu in 0..16u32 {
        let core = cpu / 8;
        text += &format!("{cpu},{core},0,0,,{core},{core},{core},0\n");
    }
    let t = import(&text, "gnr-2s");
    assert_eq!(t.spec.smt, 8);
    assert_eq!(levels(&t, 9), vec!["SMT:8-15", "MC:0-15"]);
    round_trips(&t);
    // SMT4 on a custom layout (threads at +cores, as x86 numbers them)
    let spec = preset("custom")
        .unwrap()
        .with_overrides(&schedplay::machine::spec::LayoutOverrides {
            sockets: Some(1),
            cores_per_socket: Some(4),
            smt: Some(4),
            nodes_per_socket: Some(1),
            ..Default::default()
        })
        .unwrap();
    let t = Topology::new(spec).unwrap();
    assert_eq!(levels(&t, 0), vec!["SMT:0,4,8,12", "MC:0-15"]);
    round_trips(&t);
}

#[test]
fn mixed_core_arm_repeats_core_ids_across_types() {
    // lscpu -e of a big.LITTLE board: CORE restarts at 0 for the big cores; caches tell them apart
    let text = "\
CPU NODE SOCKET CORE L1d:L1i:L2:L3 ONLINE
  0    0      0    0 0:0:0:0          yes
  1    0      0    1 1:1:1:0          yes
  2    0      0    0 5:5:5:0          yes
  3    0      0    1 6:6:6:0          yes
";
    let p = cpu_map::parse(text).unwrap();
    assert_eq!(p.map.core, vec![0, 1, 2, 3]);
    assert_eq!(p.map.cluster, vec![0, 1, 2, 3]);
    let t = Topology::new(preset("gnr-2s").unwrap().with_map(p.map)).unwrap();
    assert_eq!(t.spec.smt, 1);
    round_trips(&t);
}

/// The POWER and Arm presets build the levels their arch's kernel builds (powerpc: SMT on the
/// SMT4 half, PKG on the node; arm64: CLS from the clusters, MC on the LLC, PKG degenerate where
/// it equals MC), and each round-trips through lscpu + numactl.
#[test]
fn power_and_arm_presets_build_their_arch_levels() {
    for (name, cpu0) in [
        (
            "power10-4n",
            vec!["SMT:0,2,4,6", "PKG:0-79", "NUMA:0-159", "NUMA:0-319"],
        ),
        ("grace-2s", vec!["MC:0-71", "NUMA:0-143"]),
        ("graviton4-2s", vec!["MC:0-95", "NUMA:0-191"]),
        (
            "kunpeng920-2s",
            vec!["CLS:0-3", "MC:0-31", "NUMA:0-63", "NUMA:0-95", "NUMA:0-127"],
        ),
    ] {
        let t = Topology::new(preset(name).unwrap()).unwrap();
        assert_eq!(levels(&t, 0), cpu0, "{name}");
        round_trips(&t);
    }
    // powerpc's RECLAIM_DISTANCE is 10: no wake-affine across any NUMA level
    let t = Topology::new(preset("power10-4n").unwrap()).unwrap();
    let d = SchedDomains::build(&t, false);
    let numa = d.of(0).find(|d| d.name == "NUMA").unwrap();
    assert!(!numa.has(schedplay::machine::domains::SD_WAKE_AFFINE));
    // layout overrides do not apply to a preset with its own map
    let e = preset("kunpeng920-2s")
        .unwrap()
        .with_overrides(&schedplay::machine::spec::LayoutOverrides {
            sockets: Some(1),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.0[0].field, "sockets");
}

#[test]
fn the_summary_or_the_shape_chooses_the_hardware_figures() {
    let t = Topology::new(preset("kunpeng920-2s").unwrap()).unwrap();
    let body = print::lscpu(&t) + &print::numactl(&t);
    for (summary, want) in [
        (
            "Architecture: aarch64\nVendor ID: HiSilicon\n",
            "kunpeng920-2s",
        ),
        ("Architecture: aarch64\nVendor ID: ARM\n", "grace-2s"),
        ("Architecture: aarch64\n", "kunpeng920-2s"),
        ("Architecture: x86_64\nVendor ID: GenuineIntel\n", "cwf-2s"),
    ] {
        let p = cpu_map::parse(&format!("{summary}{body}")).unwrap();
        let (name, why) = p.hardware();
        assert_eq!(name, want, "{summary}: {why}");
        assert!(why.contains("lscpu summary"), "{why}");
    }
    // SMT8 without a summary: POWER
    let t = Topology::new(preset("power10-4n").unwrap()).unwrap();
    let p = cpu_map::parse(&(print::lscpu(&t) + &print::numactl(&t))).unwrap();
    assert_eq!(p.hardware().0, "power10-4n", "{}", p.hardware().1);
}

#[test]
fn no_cache_columns_take_the_arch_fallback() {
    // an s390 / RISC-V guest: lscpu -p=CPU,CORE,SOCKET,NODE, 2 sockets of 2 cores, one node
    let text = "# CPU,Core,Socket,Node\n0,0,0,0\n1,1,0,0\n2,2,1,0\n3,3,1,0\n";
    let p = cpu_map::parse(text).unwrap();
    assert!(
        p.notes
            .iter()
            .any(|n| n.contains("package within its node")),
        "{:?}",
        p.notes
    );
    let t = Topology::new(preset("graviton4-2s").unwrap().with_map(p.map)).unwrap();
    assert_eq!(levels(&t, 0), vec!["MC:0-1", "PKG:0-3"]);
    round_trips(&t);
    // said to be x86: each core its own LLC, no MC
    let p = cpu_map::parse(&format!("Architecture: x86_64\n{text}")).unwrap();
    assert!(
        p.notes.iter().any(|n| n.contains("no MC level")),
        "{:?}",
        p.notes
    );
    let t = Topology::new(preset("gnr-2s").unwrap().with_map(p.map)).unwrap();
    assert_eq!(levels(&t, 0), vec!["PKG:0-3"]);
}

/// Kunpeng 920's clusters are only in sysfs: lscpu shows a private L2 per core. The
/// `cluster_cpus_list` lines, with lscpu or alone, give the CLS level.
#[test]
fn sysfs_cluster_lists_give_the_cls_level() {
    let (cpus, per_node) = (16u32, 8u32);
    let mut lscpu = String::from(
        "Architecture: aarch64\nVendor ID: HiSilicon\n# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n",
    );
    let mut sysfs = String::new();
    for cpu in 0..cpus {
        let node = cpu / per_node;
        lscpu += &format!("{cpu},{cpu},0,{node},,{cpu},{cpu},{cpu},{node}\n");
        let cl = cpu / 4 * 4;
        let pkg = "0-15";
        sysfs += &format!(
            "/sys/devices/system/cpu/cpu{cpu}/topology/cluster_cpus_list:{cl}-{}\n/sys/devices/system/cpu/cpu{cpu}/topology/core_cpus_list:{cpu}\n/sys/devices/system/cpu/cpu{cpu}/topology/die_cpus_list:{pkg}\n/sys/devices/system/cpu/cpu{cpu}/topology/package_cpus_list:{pkg}\n",
            cl + 3
        );
    }
    let dist = "node distances:\nnode 0 1\n 0: 10 12\n 1: 12 10\n";
    // lscpu alone: no CLS (each core its own L2)
    let t = import(&format!("{lscpu}{dist}"), "kunpeng920-2s");
    assert_eq!(levels(&t, 0), vec!["MC:0-7", "NUMA:0-15"]);
    // with the sysfs lists: CLS of 4 cores
    let t = import(&format!("{lscpu}{sysfs}{dist}"), "kunpeng920-2s");
    assert_eq!(levels(&t, 0), vec!["CLS:0-3", "MC:0-7", "NUMA:0-15"]);
    round_trips(&t);
    // the sysfs lists alone, with numactl for the nodes: no caches, so MC is the package
    // within the node (arch_topology's fallback), the same spans here
    let nodes = "node 0 cpus: 0 1 2 3 4 5 6 7\nnode 1 cpus: 8 9 10 11 12 13 14 15\n";
    let p = cpu_map::parse(&format!("{sysfs}{nodes}{dist}")).unwrap();
    let t = Topology::new(preset("kunpeng920-2s").unwrap().with_map(p.map)).unwrap();
    assert_eq!(levels(&t, 0), vec!["CLS:0-3", "MC:0-7", "NUMA:0-15"]);
    round_trips(&t);
    // a bad list is named
    let e = cpu_map::parse("/sys/devices/system/cpu/cpu0/topology/cluster_cpus_list:3-1\n")
        .unwrap_err();
    assert!(e[0].to_string().contains("is not a CPU list"), "{e:?}");
}
