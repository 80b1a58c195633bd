//! Real machines (issue 17 items 2-4): every preset printed as `lscpu -p` + `numactl -H` and read
//! back through the machine-file parser is the same machine — the same sched domains on every CPU
//! (sched_verbose and debugfs text, with and without snc3-distance-fix) and the same report hash —
//! and its share link carries it.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::link::{decode_link, encode_link};
use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::machine::cpu_map;
use schedplay::machine::cpu_map::CpuMap;
use schedplay::machine::domains::SchedDomains;
use schedplay::machine::presets::{PRESETS, preset};
use schedplay::machine::print;
use schedplay::machine::topology::Topology;

fn text_of(t: &Topology) -> String {
    print::lscpu(t) + &print::numactl(t)
}

#[test]
fn every_preset_round_trips_through_lscpu_and_numactl() {
    for &name in PRESETS {
        let t = Topology::new(preset(name).unwrap()).unwrap();
        let parsed = cpu_map::parse(&text_of(&t)).unwrap_or_else(|e| panic!("{name}: {e:?}"));
        assert_eq!(parsed.map, CpuMap::of(&t), "{name}");
        assert!(parsed.notes.is_empty(), "{name}: {:?}", parsed.notes);
        let imported = Topology::new(preset(name).unwrap().with_map(parsed.map.clone())).unwrap();
        assert_eq!(imported.cpus, t.cpus, "{name}");
        assert_eq!(imported.slit, t.slit, "{name}");
        for fix in [false, true] {
            let (a, b) = (
                SchedDomains::build(&t, fix),
                SchedDomains::build(&imported, fix),
            );
            for cpu in 0..t.nr_cpus() {
                assert_eq!(a.dmesg(cpu), b.dmesg(cpu), "{name} CPU {cpu} fix {fix}");
                assert_eq!(a.debugfs(cpu), b.debugfs(cpu), "{name} CPU {cpu} fix {fix}");
            }
        }
        // the same run, through the experiment and its share link
        let mut e = Experiment::default();
        e.machine.preset = name.to_string();
        e.seconds = 0.003;
        e.b = vec!["snc3-distance-fix".into()];
        let mut f = e.clone();
        f.machine.cpu_map = Some(parsed.map.encode());
        let q = encode_link(&f);
        // runs compress regular numberings; POWER's alternating SMT4 halves (0,1,0,1,...) do not,
        // so its map (a link only carries it when imported: the preset's own needs only its name)
        // takes about 2 KB
        let limit = if preset(name).unwrap().map.is_some() {
            4096
        } else {
            400
        };
        assert!(
            q.len() < limit,
            "{name}: the link stays short: {} bytes",
            q.len()
        );
        let (g, errs) = decode_link(&q);
        assert!(errs.is_empty(), "{name}: {errs:?}");
        assert_eq!(g, f, "{name}");
        for side in [Side::A, Side::B] {
            let (ra, rb) = (
                schedplay::run(&e, side).unwrap(),
                schedplay::run(&g, side).unwrap(),
            );
            assert_eq!(ra.report_hash, rb.report_hash, "{name} {side:?}");
        }
    }
}

#[test]
fn an_odd_numbering_keeps_its_cpu_numbers_siblings_and_llcs() {
    // 1 socket, 2 SNC nodes of 2 cores, SMT siblings adjacent (0,1), one L3 for the socket, an
    // asymmetric 2-node SLIT given as sysfs lines
    let text = "\
# CPU,Core,Socket,Node,,L1d,L1i,L2,L3
0,0,0,0,,0,0,0,0
1,0,0,0,,0,0,0,0
2,1,0,0,,1,1,1,0
3,1,0,0,,1,1,1,0
4,2,0,1,,2,2,2,0
5,2,0,1,,2,2,2,0
6,3,0,1,,3,3,3,0
7,3,0,1,,3,3,3,0
/sys/devices/system/node/node0/distance:10 12
/sys/devices/system/node/node1/distance:13 10
";
    let p = cpu_map::parse(text).unwrap();
    let t = Topology::new(preset("spr-2s-snc4").unwrap().with_map(p.map)).unwrap();
    assert_eq!(t.smt_siblings(2).collect::<Vec<_>>(), vec![2, 3]);
    assert_eq!(t.llc_cpus[1].to_string(), "4-7", "the L3 is split per node");
    assert_eq!(t.slit, vec![vec![10, 12], vec![13, 10]]);
    let d = SchedDomains::build(&t, false);
    assert_eq!(
        d.dmesg(0),
        "CPU0 attaching sched-domain(s):
 domain-0: span=0-1 level=SMT
  groups: 0:{ span=0 }, 1:{ span=1 }
  domain-1: span=0-3 level=MC
   groups: 0:{ span=0-1 cap=2048 }, 2:{ span=2-3 cap=2048 }
   domain-2: span=0-7 level=NUMA
    groups: 0:{ span=0-3 cap=4096 }, 4:{ span=4-7 cap=4096 }
"
    );
}

#[test]
fn imported_machines_refuse_layout_overrides_and_bad_maps_name_cpu_map() {
    let t = Topology::new(preset("milan-2s").unwrap()).unwrap();
    let mut e = Experiment::default();
    e.machine.preset = "milan-2s".into();
    e.machine.cpu_map = Some(CpuMap::of(&t).encode());
    e.machine.overrides.sockets = Some(1);
    let err = e.validate().unwrap_err();
    assert_eq!(err.0[0].field, "sockets");
    e.machine.overrides.sockets = None;
    e.machine.overrides.rmw_hold_ns = Some(5);
    assert!(e.validate().is_ok());
    for bad in [
        "",
        "0_0_0_0_0",
        "0n5000_0_0_0_0_10",
        "0x4294967295n4294967295_0_0_0_0_10",
        "0_0_0_1_0_10",
        "0x9_0x9_0x9_0x9_0x9_10",
        "0,1_0,1_0,1_0,1_0,1_10_1,0",
        "0_0_0_0_0_10,21,21,10",
        "0_0_0_0_0_9",
    ] {
        let (_, errs) = decode_link(&format!("machine=milan-2s&cpu_map={bad}"));
        assert_eq!(
            errs.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            vec!["cpu_map"],
            "{bad:?}: {errs:?}"
        );
    }
}

/// Random custom layouts (sockets, cores, SMT, nodes per socket, LLC and L2 cluster sizes, Intel
/// and AMD hardware) read back from their own lscpu + numactl text: the same sched domains.
#[test]
fn random_custom_layouts_round_trip() {
    use schedplay::machine::spec::LayoutOverrides;
    use schedplay::sim::rng::SimRng;
    let mut rng = SimRng::new(17);
    let mut tried = 0;
    while tried < 40 {
        let cps = 2 + rng.below(23) as u32;
        let o = LayoutOverrides {
            sockets: Some(1 + rng.below(4) as u32),
            cores_per_socket: Some(cps),
            smt: Some(1 + rng.below(2) as u32),
            nodes_per_socket: Some(1 + rng.below(4) as u32),
            cores_per_llc: (rng.below(2) == 0).then(|| 1 + rng.below(cps as u64) as u32),
            cores_per_cluster: Some(1 + rng.below(4) as u32),
            ..Default::default()
        };
        let base = if rng.below(2) == 0 {
            "custom"
        } else {
            "milan-2s"
        };
        let Ok(spec) = preset(base).unwrap().with_overrides(&o) else {
            continue;
        };
        tried += 1;
        let t = Topology::new(spec.clone()).unwrap();
        let map = cpu_map::parse(&text_of(&t))
            .unwrap_or_else(|e| panic!("{o:?}: {e:?}"))
            .map;
        let imported = Topology::new(preset(base).unwrap().with_map(map)).unwrap();
        let (a, b) = (
            SchedDomains::build(&t, false),
            SchedDomains::build(&imported, false),
        );
        for cpu in 0..t.nr_cpus() {
            assert_eq!(a.dmesg(cpu), b.dmesg(cpu), "{base} {o:?} CPU {cpu}");
            for other in [0, t.nr_cpus() / 2, t.nr_cpus() - 1] {
                assert_eq!(
                    t.xfer_ns(cpu, other),
                    imported.xfer_ns(cpu, other),
                    "{base} {o:?}"
                );
            }
        }
    }
}

/// A BIOS that numbers CPUs round-robin over the sockets (CPU 0 on socket 0, CPU 1 on socket 1, ...)
/// with SMT siblings at +8: the domains follow the numbering, and a run on it completes.
#[test]
fn sockets_interleaved_numbering() {
    let mut text = String::from("# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n");
    for cpu in 0..16u32 {
        let k = cpu % 8; // CPUs 8-15 are the SMT siblings of 0-7
        let socket = k % 2;
        let core = socket * 4 + k / 2;
        text += &format!("{cpu},{core},{socket},{socket},,{core},{core},{core},{socket}\n");
    }
    text += "node 0 cpus: 0 2 4 6 8 10 12 14\nnode 1 cpus: 1 3 5 7 9 11 13 15\n";
    text += "node distances:\nnode   0   1\n  0:  10  21\n  1:  21  10\n";
    let p = cpu_map::parse(&text).unwrap();
    let t = Topology::new(preset("gnr-2s").unwrap().with_map(p.map.clone())).unwrap();
    let d = SchedDomains::build(&t, false);
    assert_eq!(
        d.dmesg(1),
        "CPU1 attaching sched-domain(s):
 domain-0: span=1,9 level=SMT
  groups: 1:{ span=1 }, 9:{ span=9 }
  domain-1: span=1,3,5,7,9,11,13,15 level=MC
   groups: 1:{ span=1,9 cap=2048 }, 3:{ span=3,11 cap=2048 }, 5:{ span=5,13 cap=2048 }, 7:{ span=7,15 cap=2048 }
   domain-2: span=0-15 level=NUMA
    groups: 1:{ span=1,3,5,7,9,11,13,15 cap=8192 }, 0:{ span=0,2,4,6,8,10,12,14 cap=8192 }
"
    );
    let mut e = Experiment::default();
    e.machine.preset = "gnr-2s".into();
    e.machine.cpu_map = Some(p.map.encode());
    e.seconds = 0.01;
    let r = schedplay::run(&e, Side::A).unwrap();
    assert_eq!(r.machine.cpus, 16);
    assert!(r.throughput_per_sec > 0.0);
}
