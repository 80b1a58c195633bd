//! `schedplay` CLI: presets, topology, run, compare, link, sweep, bench.

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::{Args, Parser, Subcommand};
    use schedplay::domains::SchedDomains;
    use schedplay::error::{FieldError, Invalid};
    use schedplay::scenario::{
        Experiment, MachineChoice, Side, WorkloadChoice, decode_link, encode_link,
    };
    use schedplay::topology::{self, LayoutOverrides, Topology};
    use schedplay::{Delta, Report, patches, workload};
    use std::collections::BTreeMap;
    use std::process::ExitCode;

    #[derive(Parser)]
    #[command(
        name = "schedplay",
        version,
        about = "Simulate Linux scheduler balancing and its cache-line contention on big machines"
    )]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Machines, workloads and patches, one line each.
        Presets,
        /// numactl -H style summary and a CPU's sched domains (sched_verbose + debugfs values).
        Topology {
            #[arg(long)]
            machine: String,
            #[command(flatten)]
            layout: Layout,
            #[arg(long = "patch")]
            patches: Vec<String>,
            #[arg(long, default_value_t = 0)]
            cpu: usize,
            #[arg(long)]
            json: bool,
        },
        /// Run one scenario.
        Run {
            #[command(flatten)]
            s: ScenarioArgs,
            #[arg(long = "patch")]
            patches: Vec<String>,
            #[arg(long)]
            json: bool,
        },
        /// Run A and B and show the change.
        Compare {
            #[command(flatten)]
            ab: AbArgs,
            #[arg(long)]
            json: bool,
        },
        /// Print the share link of a scenario.
        Link {
            #[command(flatten)]
            ab: AbArgs,
            /// Page address the query is appended to.
            #[arg(long, default_value = "http://127.0.0.1:8080/")]
            base: String,
        },
        /// The same experiment on 2-socket machines of growing CPU count: throughput and contention of A and B.
        Sweep {
            #[command(flatten)]
            ab: AbArgs,
            /// CPU counts (multiples of 4).
            #[arg(
                long,
                default_value = "64,128,256,512,1024,2048,4096",
                value_delimiter = ','
            )]
            cpus: Vec<u32>,
            #[arg(long)]
            json: bool,
        },
        /// Simulation speed and memory of the reference scenarios (each in its own process).
        Bench {
            /// Simulated seconds per scenario.
            #[arg(long, default_value_t = 0.5)]
            seconds: f64,
            /// Run only this scenario (used by the table mode to measure each in its own process).
            #[arg(long)]
            only: Option<String>,
        },
    }

    /// A scenario with patch lists for A and B (comma-separated names; empty = no patches).
    #[derive(Args, Clone)]
    struct AbArgs {
        #[command(flatten)]
        s: ScenarioArgs,
        #[arg(long, default_value = "")]
        a: String,
        #[arg(long, default_value = "")]
        b: String,
    }

    impl AbArgs {
        /// --a/--b replace a link's lists when given; without a link they always apply.
        fn experiment(&self) -> Result<Experiment, Invalid> {
            let keep_link = self.s.link.is_some() && self.a.is_empty() && self.b.is_empty();
            if keep_link {
                self.s.experiment(None, None)
            } else {
                self.s
                    .experiment(Some(split_list(&self.a)), Some(split_list(&self.b)))
            }
        }
    }

    #[derive(Args, Clone, Default)]
    struct Layout {
        #[arg(long)]
        sockets: Option<u32>,
        #[arg(long)]
        cores_per_socket: Option<u32>,
        #[arg(long)]
        smt: Option<u32>,
        #[arg(long)]
        nodes_per_socket: Option<u32>,
        #[arg(long)]
        cores_per_llc: Option<u32>,
    }

    impl Layout {
        fn overrides(&self) -> LayoutOverrides {
            LayoutOverrides {
                sockets: self.sockets,
                cores_per_socket: self.cores_per_socket,
                smt: self.smt,
                nodes_per_socket: self.nodes_per_socket,
                cores_per_llc: self.cores_per_llc,
            }
        }
    }

    #[derive(Args, Clone)]
    struct ScenarioArgs {
        #[arg(long)]
        machine: Option<String>,
        #[command(flatten)]
        layout: Layout,
        #[arg(long)]
        workload: Option<String>,
        /// Workload knob or `hz`, e.g. --set clients=64 --set hz=250
        #[arg(long = "set")]
        set: Vec<String>,
        #[arg(long)]
        seconds: Option<f64>,
        #[arg(long)]
        seed: Option<u64>,
        /// Run the scenario a share link describes (other flags override it).
        #[arg(long)]
        link: Option<String>,
    }

    fn split_list(s: &str) -> Vec<String> {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    }

    impl ScenarioArgs {
        /// The experiment from a link and/or flags; `a`/`b` (when given) replace the link's patch lists.
        fn experiment(
            &self,
            a: Option<Vec<String>>,
            b: Option<Vec<String>>,
        ) -> Result<Experiment, Invalid> {
            let mut errs = Vec::new();
            let mut e = match &self.link {
                Some(l) => {
                    let q = l.split_once('?').map_or(l.as_str(), |(_, q)| q);
                    let (e, bad) = decode_link(q);
                    errs.extend(bad);
                    e
                }
                None => Experiment::default(),
            };
            if let Some(m) = &self.machine {
                e.machine = MachineChoice {
                    preset: m.clone(),
                    overrides: LayoutOverrides::default(),
                };
            }
            let o = self.layout.overrides();
            let eo = &mut e.machine.overrides;
            eo.sockets = o.sockets.or(eo.sockets);
            eo.cores_per_socket = o.cores_per_socket.or(eo.cores_per_socket);
            eo.smt = o.smt.or(eo.smt);
            eo.nodes_per_socket = o.nodes_per_socket.or(eo.nodes_per_socket);
            eo.cores_per_llc = o.cores_per_llc.or(eo.cores_per_llc);
            if let Some(w) = &self.workload {
                e.workload = WorkloadChoice {
                    name: w.clone(),
                    knobs: BTreeMap::new(),
                };
            }
            for kv in &self.set {
                match kv.split_once('=') {
                    Some(("hz", v)) => match v.parse() {
                        Ok(h) => e.hz = h,
                        Err(_) => errs.push(FieldError::new(
                            "hz",
                            format!("{v:?} is not allowed: 100, 250, 300 or 1000"),
                        )),
                    },
                    Some((k, v)) => {
                        let val = v
                            .parse::<u64>()
                            .map(serde_json::Value::from)
                            .unwrap_or_else(|_| v.into());
                        e.workload.knobs.insert(k.to_string(), val);
                    }
                    None => errs.push(FieldError::new("set", format!("{kv:?} is not key=value"))),
                }
            }
            if let Some(s) = self.seconds {
                e.seconds = s;
            }
            if let Some(s) = self.seed {
                e.seed = s;
            }
            if let Some(a) = a {
                e.a = a;
            }
            if let Some(b) = b {
                e.b = b;
            }
            if let Err(inv) = e.validate() {
                errs.extend(inv.0);
            }
            if errs.is_empty() {
                Ok(e)
            } else {
                Err(Invalid(errs))
            }
        }
    }

    fn run_side(e: &Experiment, side: Side) -> Result<Report, Invalid> {
        schedplay::run(e, side)
    }

    fn fail(e: Invalid) -> ExitCode {
        eprintln!("error: {e}");
        ExitCode::from(2)
    }

    pub fn main() -> ExitCode {
        let cli = Cli::parse();
        match cli.cmd {
            Cmd::Presets => {
                println!("machines:");
                for name in topology::PRESETS {
                    if let Some(m) = topology::preset(name) {
                        let cpus = m.sockets * m.cores_per_socket * m.smt;
                        println!("  {name:<18} {cpus:>5} CPUs  {}", m.description);
                    }
                }
                println!("workloads:");
                for w in workload::WORKLOADS {
                    let knobs: Vec<&str> = w.knobs.iter().map(|k| k.name).collect();
                    println!(
                        "  {:<18} {} (knobs: {}; unit: {})",
                        w.name,
                        w.description,
                        knobs.join(", "),
                        w.unit
                    );
                }
                println!("patches:");
                for p in patches::PATCHES {
                    println!("  {:<28} {} [{}]", p.name, p.description, p.commit);
                }
                ExitCode::SUCCESS
            }
            Cmd::Topology {
                machine,
                layout,
                patches,
                cpu,
                json,
            } => {
                let spec = match topology::preset(&machine) {
                    Some(s) => s,
                    None => {
                        return fail(
                            FieldError::new(
                                "machine",
                                format!(
                                    "unknown machine {machine:?}: allowed {}",
                                    topology::PRESETS.join(", ")
                                ),
                            )
                            .into(),
                        );
                    }
                };
                let topo = match spec
                    .with_overrides(&layout.overrides())
                    .and_then(Topology::new)
                {
                    Ok(t) => t,
                    Err(e) => return fail(e),
                };
                let p = match patches::Patches::parse("patch", &patches) {
                    Ok(p) => p,
                    Err(e) => return fail(e.into()),
                };
                if cpu >= topo.nr_cpus() {
                    return fail(
                        FieldError::new(
                            "cpu",
                            format!("{cpu} is out of range: 0..={}", topo.nr_cpus() - 1),
                        )
                        .into(),
                    );
                }
                let sd = SchedDomains::build(&topo, p.snc3_distance_fix);
                if json {
                    let v = serde_json::json!({
                        "cpus": topo.nr_cpus(), "nodes": topo.nr_nodes, "llcs": topo.nr_llcs,
                        "cpu": cpu, "domains": sd.to_json(cpu),
                        "node_distances": schedplay::topology::sched_distances(&topo, p.snc3_distance_fix),
                    });
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
                    print!("\n{}", sd.sched_verbose(cpu));
                }
                ExitCode::SUCCESS
            }
            Cmd::Run { s, patches, json } => {
                // A link's B is the side `run --link` runs (the change under test); --patch overrides it.
                let given = (!patches.is_empty()).then(|| {
                    patches
                        .iter()
                        .flat_map(|p| split_list(p))
                        .collect::<Vec<_>>()
                });
                let e = match s.experiment(given.clone(), given) {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                let side = if s.link.is_some() { Side::B } else { Side::A };
                let r = match run_side(&e, side) {
                    Ok(r) => r,
                    Err(e) => return fail(e),
                };
                if json {
                    println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
                } else {
                    print!("{}", r.to_text());
                }
                ExitCode::SUCCESS
            }
            Cmd::Compare { ab, json } => {
                let e = match ab.experiment() {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                let (ra, rb) = match schedplay::run_ab(&e) {
                    (Ok(x), Ok(y)) => (x, y),
                    (Err(err), _) | (_, Err(err)) => return fail(err),
                };
                let d = Delta::between(&ra, &rb);
                if json {
                    let v = serde_json::json!({ "a": ra, "b": rb, "delta": d });
                    println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
                } else {
                    print!("{}", d.to_text(&ra, &rb));
                }
                ExitCode::SUCCESS
            }
            Cmd::Sweep { ab, cpus, json } => {
                let e = match ab.experiment() {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                if !json {
                    println!(
                        "{:>6} {:>14} {:>14} {:>9} {:>12} {:>12}",
                        "CPUs", "A /s", "B /s", "B vs A", "A contention", "B contention"
                    );
                }
                let mut points = Vec::new();
                for n in cpus {
                    match schedplay::sweep::point(&e, n) {
                        Ok(p) => {
                            if !json {
                                println!(
                                    "{:>6} {:>14.1} {:>14.1} {:>+8.2}% {:>11.2}% {:>11.2}%",
                                    p.cpus,
                                    p.a_throughput,
                                    p.b_throughput,
                                    p.throughput_pct,
                                    p.a_contention_pct,
                                    p.b_contention_pct
                                );
                            }
                            points.push(p);
                        }
                        Err(err) => return fail(err),
                    }
                }
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&points).unwrap_or_default()
                    );
                }
                ExitCode::SUCCESS
            }
            Cmd::Bench { seconds, only } => crate::bench::main(seconds, only.as_deref()),
            Cmd::Link { ab, base } => {
                let e = match ab.experiment() {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                println!("{base}?{}", encode_link(&e));
                ExitCode::SUCCESS
            }
        }
    }
}

#[cfg(not(target_arch = "wasm32"))]
mod bench;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
