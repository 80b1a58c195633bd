//! `schedplay topology`: a machine's numactl summary, latency table and sched domains (sched_verbose, debugfs, lscpu, numactl forms).

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::scenario::{Experiment, MachineChoice};
use schedplay::machine::domains::SchedDomains;
use schedplay::machine::presets;
use schedplay::machine::topology::Topology;
use schedplay::patches;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct TopologyArgs {
    /// Machine preset (see `schedplay presets`); with --machine-file, the preset whose
    /// hardware figures (latencies) the imported machine uses.
    #[arg(long, required_unless_present = "machine_file")]
    pub(crate) machine: Option<String>,
    /// A real machine: a file with the output of `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` (or
    /// `lscpu -e`) and `numactl -H` (or the lines of /sys/devices/system/node/node*/distance).
    #[arg(long, value_name = "FILE")]
    pub(crate) machine_file: Option<String>,
    /// Output shape: text (default: numactl, latencies and one CPU's domains), sched-verbose
    /// (the boot dmesg of sched_verbose), debugfs (/sys/kernel/debug/sched/domains files),
    /// lscpu (lscpu -p=CPU,CORE,SOCKET,NODE,CACHE) or numactl (numactl -H).
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<String>,
    #[command(flatten)]
    pub(crate) layout: Layout,
    /// Patch to apply (repeatable); only snc3-distance-fix changes the domains.
    #[arg(long = "patch", value_name = "NAME")]
    pub(crate) patches: Vec<String>,
    /// CPU whose sched domains are printed: 0 up to the number of CPUs - 1 (default 0;
    /// sched-verbose and debugfs print every CPU unless it is given).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) cpu: Option<String>,
    /// Print JSON (counts, domains of --cpu, node distances) instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: TopologyArgs) -> ExitCode {
    let TopologyArgs {
        machine,
        machine_file: file,
        format,
        layout,
        patches,
        cpu,
        json,
    } = args;
    let mut errs = Vec::new();
    let overrides = layout.overrides(&mut errs);
    let names: Vec<String> = patches.iter().flat_map(|p| split_list(p)).collect();
    let p = patches::Patches::parse("patch", &names)
        .map_err(|e| errs.push(e))
        .unwrap_or_default();
    const FORMATS: &[&str] = &["text", "sched-verbose", "debugfs", "lscpu", "numactl"];
    let format = format.unwrap_or_else(|| "text".into());
    if !FORMATS.contains(&format.as_str()) {
        errs.push(FieldError::new(
            "format",
            format!("{format:?} is not allowed: {}", FORMATS.join(", ")),
        ));
    }
    let mut machine = machine.unwrap_or_default();
    let mut map = None;
    if let Some(f) = &file {
        match machine_file(f, (!machine.is_empty()).then_some(machine.as_str())) {
            Ok((m, preset)) => {
                machine = preset;
                map = Some(m);
            }
            Err(e) => {
                errs.extend(e.0);
                machine.clear();
            }
        }
    }
    let topo = match presets::preset(&machine) {
        _ if file.is_some() && map.is_none() => None,
        Some(_) => {
            let e = Experiment {
                machine: MachineChoice {
                    preset: machine.clone(),
                    overrides: overrides.clone(),
                    cpu_map: map.clone(),
                },
                ..Default::default()
            };
            match e.machine_spec().and_then(Topology::new) {
                Ok(t) => Some(t),
                Err(e) => {
                    errs.extend(e.0);
                    None
                }
            }
        }
        None => {
            errs.push(FieldError::new(
                "machine",
                format!(
                    "unknown machine {machine:?}: allowed {}",
                    presets::PRESETS.join(", ")
                ),
            ));
            None
        }
    };
    let all_cpus = cpu.is_none();
    let cpu = cpu.unwrap_or_else(|| "0".into());
    // the kernel's CPU number (an imported machine may have gaps)
    let index = |t: &Topology, c: &str| c.trim().parse().ok().and_then(|c| t.cpu_index(c));
    let cpu = match &topo {
        Some(t) if index(t, &cpu).is_some() => index(t, &cpu),
        Some(t) => {
            let mut all = schedplay::machine::cpuset::CpuSet::new(t.nr_cpus());
            (0..t.nr_cpus()).for_each(|c| all.set(c));
            errs.push(FieldError::new(
                "cpu",
                format!(
                    "{cpu:?} is not a CPU of this machine: allowed {}",
                    t.cpulist(&all)
                ),
            ));
            None
        }
        None => None,
    };
    let (Some(topo), Some(cpu), true) = (topo, cpu, errs.is_empty()) else {
        return fail(Invalid(errs));
    };
    let sd = SchedDomains::build(&topo, p.snc3_distance_fix);
    let cpus = if all_cpus {
        0..topo.nr_cpus()
    } else {
        cpu..cpu + 1
    };
    match format.as_str() {
        "sched-verbose" => {
            cpus.for_each(|c| print!("{}", sd.dmesg(c)));
            return ExitCode::SUCCESS;
        }
        "debugfs" => {
            cpus.for_each(|c| print!("{}", sd.debugfs(c)));
            return ExitCode::SUCCESS;
        }
        "lscpu" => {
            print!("{}", schedplay::machine::print::lscpu(&topo));
            return ExitCode::SUCCESS;
        }
        "numactl" => {
            print!("{}", schedplay::machine::print::numactl(&topo));
            return ExitCode::SUCCESS;
        }
        _ => {}
    }
    if json {
        let mut v = serde_json::json!({
            "cpus": topo.nr_cpus(), "nodes": topo.nr_nodes, "llcs": topo.nr_llcs,
            "cpu": cpu, "domains": sd.to_json(cpu),
            "node_distances": schedplay::machine::topology::sched_distances(&topo, p.snc3_distance_fix),
        });
        // an imported machine: the preset of its hardware figures and its link form
        if let Some(m) = &map {
            v["machine"] = machine.clone().into();
            v["cpu_map"] = m.clone().into();
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", topo.numactl());
        println!(
            "latency table (ns, one-way transfer): smt {} llc {} node-near {} node-far {} socket {}  [{}]",
            topo.spec.latency.smt,
            topo.spec.latency.llc,
            topo.spec.latency.node_near,
            topo.spec.latency.node_far,
            topo.spec.latency.socket,
            topo.spec.latency.source
        );
        if topo.spec.cores_per_cluster > 1 {
            println!(
                "cluster: {} cores share an L2 (CLS level), one-way transfer {} ns",
                topo.spec.cores_per_cluster, topo.spec.latency.cluster
            );
        }
        print!("\n{}", sd.sched_verbose(cpu));
    }
    ExitCode::SUCCESS
}
