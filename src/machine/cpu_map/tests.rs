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
    // CPU numbers may have gaps, but numactl must name CPUs of the table
    let e = parse(&BOX.replace("6,2,0,1", "9,2,0,1")).unwrap_err();
    assert_eq!(
        e[0].to_string(),
        "line 13:1: node 1 lists CPU 6, but the CPU table has no CPU 6"
    );
    let e = parse(&BOX.replace("node 1 cpus: 2 3 6 7", "node 1 cpus: 2 3 6 1")).unwrap_err();
    assert!(
        e[0].to_string().contains("CPU 1 is on node 0 and node 1"),
        "{}",
        e[0]
    );
    let summary =
        "Architecture:  x86_64\nCPU(s):  2\nVendor ID:  AuthenticAMD\nNUMA node0 CPU(s):  0,1\n";
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
    // (two nodes in its socket: no AMD-family preset has two nodes per socket; the one-node and
    // four-node ones are as near, and of those milan-2s has the nearest LLC and CPU count)
    assert_eq!(p.map.closest_preset(p.vendor), "milan-2s");
    let intel = parse(&format!("Vendor ID: GenuineIntel\n{BOX}")).unwrap();
    let name = intel.map.closest_preset(intel.vendor);
    assert_eq!(
        crate::machine::presets::preset(name).unwrap().vendor,
        Vendor::Intel,
        "{name}"
    );
    assert_eq!(
        intel.map.closest_preset_of(None, Some(Arch::X86)),
        "milan-2s"
    );
    // without a summary the shape decides the architecture: SMT2 is x86
    let bare = parse(BOX).unwrap();
    let (name, why) = bare.hardware();
    assert_eq!(name, "milan-2s");
    assert!(why.contains("no lscpu summary"), "{why}");
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
    let bare =
        "CPU NODE SOCKET CORE L1d:L1i:L2:L3\n0 0 0 0 0:0:0:0\n1 1 1 1 1:1:1:1\n\n10 32\n32 10\n";
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
    // nine threads on core 0 (line 10 is CPU 8)
    let e = first_error(&text(&[one(0); 9], ""));
    assert_eq!(
        e,
        "line 10:1: CPU 8 is thread 9 of its core: allowed 1..=8 threads per core"
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
    // sixteen sockets, a node each, and five nodes in one socket: Linux boots both
    let sockets: Vec<_> = (0..16).map(|c| (c, c, c, c, c)).collect();
    assert_eq!(
        parse(&text(&sockets, &square(16)))
            .unwrap()
            .map
            .shape()
            .sockets,
        16
    );
    let nodes: Vec<_> = (0..5).map(|c| (c, 0, c, c, c)).collect();
    assert_eq!(
        parse(&text(&nodes, &square(5)))
            .unwrap()
            .map
            .shape()
            .nodes_per_socket,
        5
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
            "3 distance rows without node ids taken as nodes 0..=2",
            "1 node(s) without CPUs left out (the scheduler builds its NUMA levels from nodes with CPUs)",
            "nodes with CPUs renumbered: 2 as 1"
        ]
    );
    // node ids beyond MAX_NUMNODES - 1
    let many_nodes: Vec<_> = (0..1025).map(|c| (c, c, c, c, c)).collect();
    let e = first_error(&text(&many_nodes, ""));
    assert_eq!(
        e,
        "line 1026:16: node 1024 is out of range: allowed 0..=1023"
    );
    // a local distance that is not 10, at its row
    let e = first_error(&text(
        &[one(0), (1, 0, 1, 1, 1)],
        "/sys/devices/system/node/node0/distance:10 20\n/sys/devices/system/node/node1/distance:20 11\n",
    ));
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
    // no cache column: the arch's fallback, said in a note
    let p = parse("# CPU,Core,Socket,Node\n0,0,0,0\n").unwrap();
    assert!(
        p.notes.iter().any(|n| n.starts_with("no L2/L3 ids")),
        "{:?}",
        p.notes
    );
}
