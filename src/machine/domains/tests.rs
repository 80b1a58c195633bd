use super::levels::X86_TOPOLOGY;
use super::*;
use crate::machine::presets::preset;
use crate::machine::topology::Topology;

fn doms(name: &str, fix: bool) -> (Topology, SchedDomains) {
    let t = Topology::new(preset(name).unwrap()).unwrap();
    let d = SchedDomains::build(&t, fix);
    (t, d)
}

fn numa_node_spans(t: &Topology, d: &SchedDomains, cpu: usize) -> Vec<Vec<usize>> {
    d.of(cpu)
        .filter(|x| x.has(SD_NUMA))
        .map(|x| {
            (0..t.nr_nodes)
                .filter(|&n| t.node_cpus[n].is_subset_of(&x.span))
                .collect()
        })
        .collect()
}

#[test]
fn gnr_96c_snc3_numa_levels_before_and_after_the_fix() {
    let (t, d) = doms("gnr-2s-96c-snc3", false);
    let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(
        names,
        vec![
            ("SMT", 2),
            ("MC", 64),
            ("NUMA", 128),
            ("NUMA", 192),
            ("NUMA", 256),
            ("NUMA", 320),
            ("NUMA", 384)
        ]
    );
    assert_eq!(
        numa_node_spans(&t, &d, 0),
        vec![
            vec![0, 1],
            vec![0, 1, 2],
            vec![0, 1, 2, 3],
            vec![0, 1, 2, 3, 5],
            vec![0, 1, 2, 3, 4, 5]
        ]
    );
    // Tim Chen's dmesg: domain-3 spans 0-95,192-287 with groups masked by node 0 and node 2.
    let d3 = d.of(0).nth(3).unwrap();
    assert_eq!(d3.span.to_string(), "0-95,192-287");
    assert_eq!(d3.groups.len(), 2);
    assert_eq!(d3.groups[1].span.to_string(), "32-95,224-287");
    let node1_cpu = 32;
    assert_eq!(numa_node_spans(&t, &d, node1_cpu).len(), 3);
    let (t, d) = doms("gnr-2s-96c-snc3", true);
    assert_eq!(
        numa_node_spans(&t, &d, 0),
        vec![vec![0, 1], vec![0, 1, 2], vec![0, 1, 2, 3, 4, 5]]
    );
    assert_eq!(numa_node_spans(&t, &d, node1_cpu).len(), 2);
}

#[test]
fn local_group_first_and_overlapping_groups_stay_in_the_span() {
    let (t, d) = doms("gnr-2s-96c-snc3", false);
    // the seed's dmesg: domain-4 of CPU 0 has node 3 alone as a group (find_descended_sibling)
    let d4 = d.of(0).nth(4).unwrap();
    assert_eq!(
        d4.groups
            .iter()
            .map(|g| g.span.to_string())
            .collect::<Vec<_>>(),
        vec!["0-95,192-287", "96-127,288-319"]
    );
    for cpu in [0, 32, 100, 200, 383] {
        for dom in d.of(cpu) {
            assert!(
                dom.groups[0].span.contains(cpu),
                "CPU {cpu} {}: local group first",
                dom.name
            );
            for g in &dom.groups {
                assert!(
                    g.span.is_subset_of(&dom.span),
                    "CPU {cpu} {} group {} outside {}",
                    dom.name,
                    g.span,
                    dom.span
                );
            }
            let covered = dom
                .groups
                .iter()
                .fold(CpuSet::new(t.nr_cpus()), |mut a, g| {
                    a.union_with(&g.span);
                    a
                });
            assert_eq!(covered, dom.span);
        }
    }
    let smt = d.of(192).next().unwrap();
    assert_eq!(smt.groups[0].span.to_string(), "192");
}

#[test]
fn flags_and_intervals_follow_sd_init() {
    let (_, d) = doms("gnr-2s-snc3", false);
    let v: Vec<_> = d.of(0).collect();
    assert_eq!(
        (
            v[0].name,
            v[0].weight(),
            v[0].imbalance_pct,
            v[0].cache_nice_tries
        ),
        ("SMT", 2, 110, 0)
    );
    assert_eq!(
        (
            v[1].name,
            v[1].weight(),
            v[1].min_interval,
            v[1].max_interval
        ),
        ("MC", 86, 86, 172)
    );
    assert_eq!(v[1].cache_nice_tries, 1);
    for numa in &v[2..] {
        assert!(numa.has(SD_SERIALIZE) && numa.has(SD_NUMA) && !numa.has(SD_PREFER_SIBLING));
        assert_eq!(numa.cache_nice_tries, 2);
        assert!(
            numa.has(SD_WAKE_AFFINE),
            "GNR distances are all below node_reclaim_distance 30"
        );
    }
    assert!(!v[1].has(SD_SERIALIZE));
}

#[test]
fn pkg_only_without_numa_in_package_and_degenerate_levels_removed() {
    let (_, d) = doms("milan-2s", false);
    let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(v, vec![("SMT", 2), ("MC", 16), ("PKG", 128), ("NUMA", 256)]);
    assert_eq!(d.llc_size[0], 16);
    let (_, d) = doms("gnr-2s", false);
    let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(v, vec![("SMT", 2), ("MC", 256), ("NUMA", 512)]);
    let (_, d) = doms("spr-2s-snc4", false);
    let v: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(
        v,
        vec![("SMT", 2), ("MC", 28), ("NUMA", 112), ("NUMA", 224)]
    );
}

#[test]
fn topology_table_levels_nest_bottom_up_on_every_preset() {
    for name in crate::machine::presets::PRESETS {
        let t = Topology::new(preset(name).unwrap()).unwrap();
        for cpu in [0, t.nr_cpus() / 3, t.nr_cpus() - 1] {
            let mut child = CpuSet::new(t.nr_cpus());
            child.set(cpu);
            for tl in X86_TOPOLOGY.iter().filter(|tl| (tl.present)(&t)) {
                let span = (tl.mask)(&t, cpu);
                assert!(child.is_subset_of(&span), "{name} CPU {cpu} {}", tl.name);
                child = span;
            }
        }
    }
}

#[test]
fn should_we_balance_masks_pick_one_cpu_per_node_at_numa() {
    let (_, d) = doms("gnr-2s-96c-snc3", false);
    let d2 = d.of(0).nth(2).unwrap();
    // groups = SNC nodes; each group's balance mask is the node itself
    assert_eq!(d2.groups.len(), 2);
    assert_eq!(d2.groups[0].balance_cpus.len(), 64);
    assert_eq!(d2.imb_numa_nr, 2);
    let mc = d.of(0).nth(1).unwrap();
    assert_eq!(mc.groups.len(), 32, "MC groups are SMT cores");
}

fn custom(o: crate::machine::spec::LayoutOverrides) -> (Topology, SchedDomains) {
    let spec = preset("custom").unwrap().with_overrides(&o).unwrap();
    let t = Topology::new(spec).unwrap();
    let d = SchedDomains::build(&t, false);
    (t, d)
}

fn layout(smt: u32, cps: u32, llc: u32, cluster: u32) -> crate::machine::spec::LayoutOverrides {
    crate::machine::spec::LayoutOverrides {
        sockets: Some(1),
        cores_per_socket: Some(cps),
        smt: Some(smt),
        nodes_per_socket: Some(1),
        cores_per_llc: Some(llc),
        cores_per_cluster: Some(cluster),
        ..Default::default()
    }
}

#[test]
fn cls_is_the_l2_cluster_between_smt_and_mc_with_sd_init_values() {
    let (_, d) = custom(layout(1, 16, 16, 4));
    let v: Vec<_> = d.of(5).collect();
    let names: Vec<_> = v.iter().map(|x| (x.name, x.weight())).collect();
    assert_eq!(names, vec![("CLS", 4), ("MC", 16)]);
    let cls = v[0];
    assert_eq!(cls.span.to_string(), "4-7");
    assert!(cls.has(SD_CLUSTER) && cls.has(SD_SHARE_LLC) && cls.has(SD_PREFER_SIBLING));
    assert!(!cls.has(SD_SHARE_CPUCAPACITY) && !cls.has(SD_SERIALIZE));
    assert_eq!(
        (
            cls.min_interval,
            cls.max_interval,
            cls.busy_factor,
            cls.imbalance_pct,
            cls.cache_nice_tries
        ),
        (4, 8, 16, 117, 1)
    );
    // the local group of CLS is the CPU itself; MC's groups are the clusters
    assert_eq!(cls.groups.len(), 4);
    assert_eq!(cls.groups[0].span.to_string(), "5");
    let mc_groups: Vec<_> = v[1].groups.iter().map(|g| g.span.to_string()).collect();
    assert_eq!(mc_groups, vec!["4-7", "8-11", "12-15", "0-3"]);
    assert!(!v[1].has(SD_CLUSTER));
    // sd_llc stays the MC level
    assert_eq!(d.llc_size[5], 16);
    // with SMT: SMT (2), CLS (cluster of 4 cores = 8 CPUs), MC
    let (_, d) = custom(layout(2, 16, 16, 4));
    let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(names, vec![("SMT", 2), ("CLS", 8), ("MC", 32)]);
    assert_eq!(d.of(16).nth(1).unwrap().span.to_string(), "0-3,16-19");
}

#[test]
fn cls_degenerates_into_smt_and_mc_as_sd_parent_degenerate_says() {
    // one core per L2: the CLS span is the SMT span (or one CPU): no CLS domain
    for smt in [1, 2] {
        let (_, d) = custom(layout(smt, 16, 8, 1));
        assert!(d.of(0).all(|x| x.name != "CLS" && !x.has(SD_CLUSTER)));
    }
    // the L2 is the LLC: MC is the degenerate parent (its flags are a subset of CLS's and it
    // has one group), so one domain is left and it is CLS
    let (_, d) = custom(layout(1, 16, 8, 8));
    let names: Vec<_> = d.of(0).map(|x| (x.name, x.weight())).collect();
    assert_eq!(names, vec![("CLS", 8), ("PKG", 16)]);
    assert_eq!(d.llc_size[0], 8);
}

/// (name, span weight, flags it must have, flags it must not have, imbalance_pct,
/// cache_nice_tries) per level of CPU 0, and min/max interval = weight / 2 x weight (sd_init).
type Want = (&'static str, u32, u32, u32, u32, u32);

fn check_levels(name: &str, want: &[Want]) {
    let (_, d) = doms(name, false);
    let got: Vec<_> = d.of(0).collect();
    assert_eq!(
        got.len(),
        want.len(),
        "{name}: {:?}",
        got.iter().map(|x| x.name).collect::<Vec<_>>()
    );
    for (x, &(lvl, w, has, hasnt, imb, cnt)) in got.iter().zip(want) {
        assert_eq!((x.name, x.weight()), (lvl, w), "{name}");
        assert_eq!(
            x.flags & has,
            has,
            "{name} {lvl}: {:?}",
            flag_names(x.flags)
        );
        assert_eq!(
            x.flags & hasnt,
            0,
            "{name} {lvl}: {:?}",
            flag_names(x.flags)
        );
        assert_eq!(
            (x.imbalance_pct, x.cache_nice_tries),
            (imb, cnt),
            "{name} {lvl}"
        );
        assert_eq!(
            (x.min_interval, x.max_interval, x.busy_factor),
            (w, 2 * w, 16)
        );
    }
}

const BASE: u32 =
    SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;
const NUMA_NEAR: u32 = SD_NUMA | SD_SERIALIZE | SD_OVERLAP | SD_WAKE_AFFINE | SD_BALANCE_FORK;

#[test]
fn e_core_presets_get_a_4_cpu_cls_level() {
    // SNC off: PKG = MC (one LLC per socket) and NODE = PKG degenerate; one NUMA level at 21
    check_levels(
        "srf-2s",
        &[
            (
                "CLS",
                4,
                BASE | SD_CLUSTER | SD_SHARE_LLC,
                SD_SHARE_CPUCAPACITY,
                117,
                1,
            ),
            ("MC", 144, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1),
            ("NUMA", 288, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2),
        ],
    );
    // SNC3 with the GNR SLIT: NUMA levels at 15, 17, 21, 26, 28 (row 0), all below 30
    let numa = |w| ("NUMA", w, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2);
    check_levels(
        "cwf-2s",
        &[
            ("CLS", 4, BASE | SD_CLUSTER | SD_SHARE_LLC, 0, 117, 1),
            ("MC", 96, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1),
            numa(192),
            numa(288),
            numa(384),
            numa(480),
            numa(576),
        ],
    );
    // CLS is the first level of every CPU, MC's groups are the modules
    let (t, d) = doms("srf-2s", false);
    for cpu in [0, 5, 143, 144, 287] {
        let cls = d.of(cpu).next().unwrap();
        assert_eq!((cls.name, cls.weight()), ("CLS", 4));
        assert_eq!(cls.span.first(), Some(cpu / 4 * 4));
    }
    let mc = d.of(0).nth(1).unwrap();
    assert_eq!(mc.groups.len(), 36);
    assert!(mc.groups.iter().all(|g| g.span.weight() == 4));
    assert_eq!(d.llc_size[0], 144);
    assert_eq!(t.nr_cpus(), 288);
}

#[test]
fn cls_only_on_the_presets_with_modules() {
    for name in crate::machine::presets::PRESETS {
        let (t, d) = doms(name, false);
        let has_cls = d.of(0).any(|x| x.name == "CLS" || x.has(SD_CLUSTER));
        assert_eq!(has_cls, t.spec.cores_per_cluster > 1, "{name}");
        if has_cls {
            assert_eq!(d.of(0).next().unwrap().weight(), 4 * t.spec.smt, "{name}");
        }
    }
}

#[test]
fn turin_presets_have_ccx_mc_and_no_cls() {
    let smt = (
        "SMT",
        2,
        BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        SD_CLUSTER,
        110,
        0,
    );
    let mc = |w| ("MC", w, BASE | SD_SHARE_LLC, SD_CLUSTER, 117, 1);
    let pkg = |w| ("PKG", w, BASE, SD_SHARE_LLC | SD_NUMA, 117, 1);
    // AMD 10/32: 32 is not above node_reclaim_distance (32 on Zen): the NUMA level keeps
    // EXEC/FORK/WAKE_AFFINE
    let numa = |w| ("NUMA", w, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2);
    check_levels("turin-2s", &[smt, mc(16), pkg(256), numa(512)]);
    check_levels("turin-dense-2s", &[smt, mc(32), pkg(384), numa(768)]);
    let (_, d) = doms("turin-dense-2s", false);
    assert_eq!(d.llc_size[0], 32);
    assert_eq!(
        d.of(0).nth(2).unwrap().groups.len(),
        12,
        "12 CCX per socket"
    );
}

#[test]
fn eight_socket_slit_gives_the_numa_levels_sched_init_numa_derives() {
    // distances 10, 21, 31: NODE (= PKG = MC, degenerate), NUMA at 21 = the socket and its
    // three neighbours, NUMA at 31 = all; 31 > node_reclaim_distance 30 drops EXEC, FORK and
    // WAKE_AFFINE there
    check_levels(
        "clx-8s",
        &[
            ("SMT", 2, BASE | SD_SHARE_CPUCAPACITY, 0, 110, 0),
            ("MC", 56, BASE | SD_SHARE_LLC, 0, 117, 1),
            ("NUMA", 224, NUMA_NEAR, SD_PREFER_SIBLING, 117, 2),
            (
                "NUMA",
                448,
                SD_NUMA | SD_SERIALIZE | SD_OVERLAP | SD_BALANCE_NEWIDLE,
                SD_WAKE_AFFINE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_PREFER_SIBLING,
                117,
                2,
            ),
        ],
    );
    let (t, d) = doms("clx-8s", false);
    for node in 0..8 {
        let cpu = t.node_cpus[node].first().unwrap();
        let spans = numa_node_spans(&t, &d, cpu);
        let mut near = vec![node, (node + 1) % 8, (node + 4) % 8, (node + 7) % 8];
        near.sort_unstable();
        assert_eq!(spans, vec![near, (0..8).collect()], "node {node}");
    }
    // the 2-hop level's groups are the 1-hop spans of its sockets (overlapping, 4 sockets each)
    let top = d.of(0).nth(3).unwrap();
    assert!(top.groups.iter().all(|g| g.span.weight() == 224));
    assert_eq!(top.groups[0].span, d.of(0).nth(2).unwrap().span);
    // the SLIT is the firmware's, the same for every preset build (symmetric, 10 on the diagonal)
    assert!((0..8).all(|i| (0..8).all(|j| t.slit[i][j] == t.slit[j][i])));
}

/// sg->flags are the flags of the child domain a group was built from (get_group,
/// build_group_from_child_sched_domain): at CPU 0's domains 4 and 5 of the seed machine the
/// single-node groups come through find_descended_sibling and carry the NODE level's flags
/// (SD_PREFER_SIBLING, no SD_NUMA), while the local group carries the NUMA child's.
#[test]
fn a_descended_group_carries_the_flags_of_the_level_it_was_built_from() {
    let (_, d) = doms("gnr-2s-96c-snc3", false);
    let v: Vec<_> = d.of(0).collect();
    for k in [4, 5] {
        let (local, node) = (&v[k].groups[0], &v[k].groups[1]);
        assert_eq!(
            local.flags,
            v[k - 1].flags,
            "domain {k}: the local group is the child"
        );
        assert!(local.flags & SD_NUMA != 0 && local.flags & SD_PREFER_SIBLING == 0);
        assert_eq!(node.span.weight(), 64, "domain {k}: one node");
        assert!(
            node.flags & SD_PREFER_SIBLING != 0 && node.flags & SD_NUMA == 0,
            "domain {k}: {:?}",
            flag_names(node.flags)
        );
    }
    assert_eq!(v[4].groups[1].span.to_string(), "96-127,288-319");
    assert_eq!(v[5].groups[1].span.to_string(), "160-191,352-383");
    // below: the MC groups are SMT cores, the SMT groups single CPUs without flags
    assert!(
        v[1].groups
            .iter()
            .all(|g| g.flags & SD_SHARE_CPUCAPACITY != 0)
    );
    assert!(v[0].groups.iter().all(|g| g.flags == 0));
}
