//! The machine the engine builds from an experiment's machine choice, as the page's summary shows
//! it: CPUs, nodes, LLCs and clusters with their sizes as `Topology::new` lays them out, and every
//! setting the engine used differently from what the form asked (the preset's value or the
//! override), with the rule that changed it. Read from the built `Topology`, never re-derived, so the
//! summary cannot disagree with the run.

use crate::error::Invalid;
use crate::experiment::scenario::Experiment;
use crate::machine::hardware::Vendor;
use crate::machine::presets;
use crate::machine::topology::Topology;
use serde::Serialize;
use std::collections::BTreeMap;

/// `count` sets of `cores` cores (`cpus` CPUs with SMT).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SizeCount {
    pub cores: u32,
    pub cpus: u32,
    pub count: u32,
}

/// A machine key the engine used with another value than the form asked for.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Adjusted {
    /// The machine key (`MACHINE_KEYS`), or `slit`.
    pub field: &'static str,
    /// What the form asked: the override, else the preset's value (0 for `slit`).
    pub asked: u32,
    /// The largest set the engine built (cores), or 0 for `slit`.
    pub used: u32,
    pub why: String,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MachineSummary {
    pub preset: String,
    pub vendor: Vendor,
    pub cpus: usize,
    pub sockets: u32,
    pub smt: u32,
    pub nodes: usize,
    pub llcs: usize,
    pub clusters: usize,
    /// Node, LLC and cluster sizes, largest first.
    pub node_sizes: Vec<SizeCount>,
    pub llc_sizes: Vec<SizeCount>,
    pub cluster_sizes: Vec<SizeCount>,
    /// The preset's LLC capacity (MiB per LLC) while the LLCs have the preset's sizes; else none
    /// (a resized LLC has no measured capacity).
    pub llc_mib: Option<u32>,
    pub adjusted: Vec<Adjusted>,
}

/// Sets grouped by their number of CPUs, largest first.
fn sizes(cpus_per_set: impl Iterator<Item = usize>, smt: u32) -> Vec<SizeCount> {
    let mut by: BTreeMap<usize, u32> = BTreeMap::new();
    for n in cpus_per_set {
        *by.entry(n).or_default() += 1;
    }
    by.into_iter()
        .rev()
        .map(|(cpus, count)| SizeCount {
            cores: cpus as u32 / smt.max(1),
            cpus: cpus as u32,
            count,
        })
        .collect()
}

/// The summary of the machine `exp` asks for; its field errors when the machine is invalid.
pub fn summary(exp: &Experiment) -> Result<MachineSummary, Invalid> {
    let spec = exp.machine_spec()?;
    let preset = presets::preset(&exp.machine.preset).expect("machine_spec checked the preset");
    let o = &exp.machine.overrides;
    let t = Topology::new(spec.clone())?;
    let smt = spec.smt;
    let node_sizes = sizes(t.node_cpus.iter().map(|s| s.weight()), smt);
    let llc_sizes = sizes(t.llc_cpus.iter().map(|s| s.weight()), smt);
    let cluster_sizes = sizes(t.cluster_cpus.iter().map(Vec::len), smt);
    let largest = |v: &[SizeCount]| v.first().map_or(0, |s| s.cores);
    let (node_max, llc_max, cl_max) = (
        largest(&node_sizes),
        largest(&llc_sizes),
        largest(&cluster_sizes),
    );
    let mut adjusted = Vec::new();
    // An imported machine (cpu_map), or a preset with its own map, is built as given: no setting
    // is derived, so none is adjusted.
    let imported = exp.machine.cpu_map.is_some() || spec.map.is_some();

    let asked = o.cores_per_llc.unwrap_or(preset.cores_per_llc);
    if !imported && llc_max != asked {
        let why = if o.cores_per_llc.is_none() && spec.vendor == Vendor::Intel {
            format!(
                "Intel: the LLC is the socket, split per SNC node for the scheduler ({} cores / {} nodes per socket); type a size into the field to keep it",
                spec.cores_per_socket, spec.nodes_per_socket
            )
        } else if spec.cores_per_llc < asked {
            format!(
                "an LLC has at most the cores of a socket ({})",
                spec.cores_per_socket
            )
        } else {
            format!("an LLC never spans NUMA nodes: a node has at most {node_max} cores")
        };
        adjusted.push(Adjusted {
            field: "cores_per_llc",
            asked,
            used: llc_max,
            why,
        });
    }
    let asked = o.cores_per_cluster.unwrap_or(preset.cores_per_cluster);
    if !imported && cl_max != asked {
        adjusted.push(Adjusted {
            field: "cores_per_cluster",
            asked,
            used: cl_max,
            why: format!("a cluster has at most the cores of an LLC ({llc_max})"),
        });
    }
    if !imported && preset.slit.is_some() && spec.slit.is_none() {
        adjusted.push(Adjusted {
            field: "slit",
            asked: 0,
            used: 0,
            why: format!(
                "the preset's measured SLIT fits {} nodes; {} nodes get the regular distances of the vendor",
                preset.sockets * preset.nodes_per_socket,
                t.nr_nodes
            ),
        });
    }
    // the LLCs are the preset's when they have its sizes (43/43/42 on gnr-2s-snc3), however many
    let as_built = Topology::new(preset.clone())?;
    let cores_of = |v: &[SizeCount]| v.iter().map(|x| x.cores).collect::<Vec<_>>();
    let preset_llcs = cores_of(&llc_sizes)
        == cores_of(&sizes(
            as_built.llc_cpus.iter().map(|s| s.weight()),
            preset.smt,
        ));
    Ok(MachineSummary {
        preset: spec.name.clone(),
        vendor: spec.vendor,
        cpus: t.nr_cpus(),
        sockets: spec.sockets,
        smt,
        nodes: t.nr_nodes,
        llcs: t.nr_llcs,
        clusters: t.cluster_cpus.len(),
        node_sizes,
        llc_sizes,
        cluster_sizes,
        llc_mib: preset_llcs.then_some(preset.llc_mib),
        adjusted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::scenario::MachineChoice;

    fn exp(
        preset: &str,
        set: impl FnOnce(&mut crate::machine::spec::LayoutOverrides),
    ) -> Experiment {
        let mut e = Experiment {
            machine: MachineChoice {
                preset: preset.into(),
                overrides: Default::default(),
                cpu_map: None,
            },
            ..Experiment::default()
        };
        set(&mut e.machine.overrides);
        e
    }

    #[test]
    fn spr_snc4_resized_to_two_nodes_says_four_llcs_of_30_and_why() {
        let s = summary(&exp("spr-2s-snc4", |o| {
            o.cores_per_socket = Some(60);
            o.nodes_per_socket = Some(2);
        }))
        .unwrap();
        assert_eq!((s.cpus, s.nodes, s.llcs), (240, 4, 4));
        let four_30 = vec![SizeCount {
            cores: 30,
            cpus: 60,
            count: 4,
        }];
        assert_eq!(s.llc_sizes, four_30);
        assert_eq!(s.node_sizes, four_30);
        assert_eq!(s.llc_mib, None, "a 30-core LLC has no measured size");
        let a = &s.adjusted[0];
        assert_eq!((a.field, a.asked, a.used), ("cores_per_llc", 14, 30));
        assert!(a.why.contains("SNC"), "{}", a.why);
    }

    #[test]
    fn an_explicit_llc_size_is_kept_and_splits_each_node() {
        let s = summary(&exp("spr-2s-snc4", |o| {
            o.cores_per_socket = Some(60);
            o.nodes_per_socket = Some(2);
            o.cores_per_llc = Some(14);
        }))
        .unwrap();
        // 30 cores per node: 14 + 14 + 2
        assert_eq!(s.llcs, 12);
        assert_eq!(
            s.llc_sizes
                .iter()
                .map(|x| (x.cores, x.count))
                .collect::<Vec<_>>(),
            vec![(14, 8), (2, 4)]
        );
        assert!(s.adjusted.iter().all(|a| a.field != "cores_per_llc"));
    }

    #[test]
    fn an_llc_larger_than_a_node_is_cut_at_the_node_and_said() {
        let s = summary(&exp("milan-2s", |o| {
            o.nodes_per_socket = Some(4);
            o.cores_per_llc = Some(64);
        }))
        .unwrap();
        let a = s
            .adjusted
            .iter()
            .find(|a| a.field == "cores_per_llc")
            .unwrap();
        assert_eq!((a.asked, a.used), (64, 16));
        assert!(a.why.contains("never spans"), "{}", a.why);
        assert!(s.llc_sizes.iter().all(|x| x.cores <= 16));
    }

    #[test]
    fn an_imported_machine_is_summarised_as_built_and_adjusts_nothing() {
        // spr-2s-snc4's layout imported under milan-2s's hardware figures: the summary is the
        // imported layout (8 nodes, 8 LLCs), with no "adjusted" notice against milan's settings.
        let spr = Topology::new(presets::preset("spr-2s-snc4").unwrap()).unwrap();
        let text = crate::machine::print::lscpu(&spr) + &crate::machine::print::numactl(&spr);
        let map = crate::machine::cpu_map::parse(&text).unwrap().map.encode();
        let mut e = exp("milan-2s", |_| {});
        e.machine.cpu_map = Some(map);
        let s = summary(&e).unwrap();
        assert_eq!(s.adjusted, vec![]);
        assert_eq!(
            (s.cpus, s.nodes, s.llcs),
            (spr.nr_cpus(), spr.nr_nodes, spr.nr_llcs)
        );
    }

    #[test]
    fn every_preset_as_is_adjusts_nothing_and_adds_up() {
        for name in presets::PRESETS {
            let s = summary(&exp(name, |_| {})).unwrap();
            assert_eq!(s.adjusted, vec![], "{name}");
            assert!(
                s.llc_mib.is_some_and(|m| m > 0),
                "{name}: the preset's LLC in MiB"
            );
            let total =
                |v: &[SizeCount]| v.iter().map(|x| (x.cpus * x.count) as usize).sum::<usize>();
            assert_eq!(total(&s.llc_sizes), s.cpus, "{name}");
            assert_eq!(total(&s.node_sizes), s.cpus, "{name}");
            assert_eq!(
                s.llc_sizes.iter().map(|x| x.count as usize).sum::<usize>(),
                s.llcs
            );
        }
    }

    #[test]
    fn a_bad_machine_is_a_field_error() {
        let e = summary(&exp("spr-2s-snc4", |o| o.nodes_per_socket = Some(9))).unwrap_err();
        assert!(e.0.iter().any(|f| f.field == "nodes_per_socket"), "{e}");
    }
}
