//! `schedplay` CLI: presets, topology, run, compare, link, sweep, bench.

#[cfg(not(target_arch = "wasm32"))]
mod cli {
    use clap::{Args, Parser, Subcommand};
    use schedplay::domains::SchedDomains;
    use schedplay::error::{FieldError, Invalid};
    use schedplay::scenario::{
        Experiment, MACHINE_KEYS, MachineChoice, Side, WorkloadChoice, decode_link, encode_link,
    };
    use schedplay::topology::{self, LayoutOverrides, Topology};
    use schedplay::{Delta, Report, patches, repeat, scenario, sweep, workload};
    use std::collections::BTreeMap;
    use std::process::ExitCode;

    const TOP_EXAMPLES: &str = "\
Examples:
  schedplay presets
  schedplay topology --machine gnr-2s-snc3 --cpu 0
  schedplay run --machine milan-2s --workload hackbench --seconds 0.5
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due
  schedplay link --machine milan-2s --b cache-aware
  schedplay sweep --cpus 64,128,256 --b skip-not-due --seconds 0.2
  schedplay bench --seconds 0.5

Invalid input is reported field by field (`error: field: message`) with exit code 2.";

    #[derive(Parser)]
    #[command(
        name = "schedplay",
        version,
        about = "Simulate Linux scheduler balancing and its cache-line contention on big machines",
        after_help = TOP_EXAMPLES
    )]
    struct Cli {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(Subcommand)]
    enum Cmd {
        /// Machines, workloads and patches, one line each.
        #[command(after_help = "Examples:\n  schedplay presets")]
        Presets,
        /// numactl -H style summary and a CPU's sched domains (sched_verbose + debugfs values).
        #[command(after_help = "\
Examples:
  schedplay topology --machine gnr-2s-snc3
  schedplay topology --machine gnr-2s-96c-snc3 --patch snc3-distance-fix --cpu 100
  schedplay topology --machine custom --sockets 4 --cores-per-socket 32 --json
  schedplay topology --machine gnr-2s-96c-snc3 --format sched-verbose --cpu 0
  schedplay topology --machine milan-2s --format lscpu > box.txt; schedplay topology --machine milan-2s --format numactl >> box.txt
  schedplay topology --machine-file box.txt --format debugfs --cpu 0")]
        Topology {
            /// Machine preset (see `schedplay presets`); with --machine-file, the preset whose
            /// hardware figures (latencies) the imported machine uses.
            #[arg(long, required_unless_present = "machine_file")]
            machine: Option<String>,
            /// A real machine: a file with the output of `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` (or
            /// `lscpu -e`) and `numactl -H` (or the lines of /sys/devices/system/node/node*/distance).
            #[arg(long, value_name = "FILE")]
            machine_file: Option<String>,
            /// Output shape: text (default: numactl, latencies and one CPU's domains), sched-verbose
            /// (the boot dmesg of sched_verbose), debugfs (/sys/kernel/debug/sched/domains files),
            /// lscpu (lscpu -p=CPU,CORE,SOCKET,NODE,CACHE) or numactl (numactl -H).
            #[arg(long, value_name = "FORMAT")]
            format: Option<String>,
            #[command(flatten)]
            layout: Layout,
            /// Patch to apply (repeatable); only snc3-distance-fix changes the domains.
            #[arg(long = "patch", value_name = "NAME")]
            patches: Vec<String>,
            /// CPU whose sched domains are printed: 0 up to the number of CPUs - 1 (default 0;
            /// sched-verbose and debugfs print every CPU unless it is given).
            #[arg(long, allow_hyphen_values = true)]
            cpu: Option<String>,
            /// Print JSON (counts, domains of --cpu, node distances) instead of text.
            #[arg(long)]
            json: bool,
        },
        /// Run one scenario.
        #[command(after_help = "\
Examples:
  schedplay run
  schedplay run --machine milan-2s --workload hackbench --set groups=4 --seconds 0.5
  schedplay run --machine gnr-2s-snc3 --patch skip-not-due,skew-tick --json
  schedplay run --link 'http://127.0.0.1:8080/?v=1&machine=milan-2s&b=cache-aware'
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --trace run.json --trace-from 0.01 --trace-to 0.02
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --trace run.pftrace
  schedplay run --machine milan-2s --workload hackbench --seconds 0.05 --schedstat
  schedplay run --machine milan-2s --workload-file rt-app.json --seconds 2

Without --link the scenario runs unpatched unless --patch is given; with --link it runs the link's
side B (the change under test). --trace writes Perfetto protobuf for FILE.pftrace, else Chrome JSON trace events (docs/TRACE.md).")]
        Run {
            #[command(flatten)]
            s: ScenarioArgs,
            /// Patches to apply, comma-separated or repeated (see `schedplay presets`).
            #[arg(long = "patch", value_name = "NAMES")]
            patches: Vec<String>,
            /// Print the report as JSON (fields: docs/SCHEMA.md).
            #[arg(long)]
            json: bool,
            /// Write a trace of the run to FILE: FILE.pftrace is Perfetto protobuf (CPU scheduling tracks, thread states), any other name Chrome JSON trace events; open it in ui.perfetto.dev (docs/TRACE.md). Without --trace-to the window ends where the 1,000,000-event cap is reached.
            #[arg(long, value_name = "FILE")]
            trace: Option<String>,
            /// Trace window start, seconds of simulated time from the start (default 0).
            #[arg(long, value_name = "S", allow_hyphen_values = true, requires = "trace")]
            trace_from: Option<String>,
            /// Trace window end, seconds (default: the end of the run).
            #[arg(long, value_name = "S", allow_hyphen_values = true, requires = "trace")]
            trace_to: Option<String>,
            /// After the report, print /proc/schedstat (version 17) over the measured window and its per-domain summary, as perf sched stats report (text only).
            #[arg(long, conflicts_with_all = ["json", "trace"])]
            schedstat: bool,
        },
        /// Run A and B and show the change.
        #[command(after_help = "\
Examples:
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due
  schedplay compare --machine milan-2s --a cache-aware --b cache-aware,cas-write-if-changed
  schedplay compare --machine gnr-2s-snc3 --b skip-not-due --seconds 0.2 --schedstat
  schedplay compare --link 'http://127.0.0.1:8080/?v=1&machine=milan-2s&b=cache-aware' --json")]
        Compare {
            #[command(flatten)]
            ab: AbArgs,
            /// Print {a, b, delta} as JSON (fields: docs/SCHEMA.md).
            #[arg(long)]
            json: bool,
            /// After the comparison, print the per-domain schedstat diff of A and B, as perf sched stats diff (text only).
            #[arg(long, conflicts_with = "json")]
            schedstat: bool,
        },
        /// Print the share link of a scenario.
        #[command(after_help = "\
Examples:
  schedplay link --machine milan-2s --workload hackbench --b cache-aware
  schedplay link --machine custom --sockets 2 --cores-per-socket 16 --base https://example.org/schedplay/")]
        Link {
            #[command(flatten)]
            ab: AbArgs,
            /// Page address the query is appended to.
            #[arg(long, default_value = "http://127.0.0.1:8080/")]
            base: String,
        },
        /// The same experiment on 2-socket machines of growing CPU count: throughput and contention of A and B.
        #[command(after_help = "\
Examples:
  schedplay sweep --b skip-not-due --seconds 0.2
  schedplay sweep --cpus 64,256,1024 --workload hackbench --b cache-aware --json
  schedplay sweep --grid grid.json --shard 0/4 > shard-0.jsonl

With --grid the points come from a JSON grid file (machines x patch_sets x workloads x hz x cpus,
each repeated; README) and print as JSON lines; --shard I/N runs the points i with i mod N == I,
and `schedplay merge` joins the shards.")]
        Sweep {
            #[command(flatten)]
            ab: AbArgs,
            /// A grid file (JSON): the points to run, one JSON line each (scenario flags are refused with it).
            #[arg(long, value_name = "FILE")]
            grid: Option<String>,
            /// Run only the points i with i mod N == I of the grid, e.g. 0/4 (default 0/1: all).
            #[arg(
                long,
                value_name = "I/N",
                default_value = "0/1",
                allow_hyphen_values = true
            )]
            shard: String,
            /// CPU counts, comma-separated (2 sockets x cores x SMT2: multiples of 4, up to 4096).
            #[arg(
                long,
                default_value = "64,128,256,512,1024,2048,4096",
                value_delimiter = ',',
                allow_hyphen_values = true
            )]
            cpus: Vec<String>,
            /// Print the points as JSON.
            #[arg(long)]
            json: bool,
        },
        /// Join the JSON lines of grid shards (sweep --grid --shard) into one table.
        #[command(after_help = "\
Examples:
  schedplay merge shard-*.jsonl > all.jsonl
  schedplay merge shard-*.jsonl --csv > all.csv

Refuses lines of different grids, a point given twice (overlapping shards) and missing points,
naming each; the merged JSON lines are the bytes of the unsharded sweep.")]
        Merge {
            /// Shard files (JSON lines of `sweep --grid`).
            #[arg(required = true, value_name = "FILES")]
            files: Vec<String>,
            /// Print CSV (one row per point) instead of JSON lines.
            #[arg(long)]
            csv: bool,
            /// Print one JSON array (chart data) instead of JSON lines.
            #[arg(long)]
            json: bool,
        },
        /// How close is the model? Every published figure it is calibrated or checked against, next to the model's.
        #[command(after_help = "\
Examples:
  schedplay validate
  schedplay validate --seconds 0.05 --repeat 2 --json
  schedplay validate --markdown

A row holds when the model's figure (mean over the repeats) lies in its tolerance band. Rows that
miss are listed as MISSES and the exit code stays 0: the model is known to overshoot seed 000 and
undershoot seed 002 (docs/MODEL.md), and CI must keep running while that is so. With --strict any
miss exits 1.")]
        Validate {
            /// Simulated seconds per run, 0.001..=60 (default 0.3, as the calibration tables).
            #[arg(long, default_value = "0.3", allow_hyphen_values = true)]
            seconds: String,
            /// Runs per side, 1..=100 (default 3).
            #[arg(
                long = "repeat",
                value_name = "N",
                default_value = "3",
                allow_hyphen_values = true
            )]
            repeat: String,
            /// First seed (default 1).
            #[arg(long, default_value = "1", allow_hyphen_values = true)]
            seed: String,
            /// Runs at once (default: every core).
            #[arg(long, value_name = "N", allow_hyphen_values = true)]
            jobs: Option<String>,
            /// Print the rows as JSON (fields: docs/SCHEMA.md).
            #[arg(long)]
            json: bool,
            /// Print the rows as a markdown table (docs/MODEL.md).
            #[arg(long)]
            markdown: bool,
            /// Exit 1 when a row misses.
            #[arg(long)]
            strict: bool,
        },
        /// Simulation speed and memory of the reference scenarios (each in its own process).
        #[command(after_help = "\
Examples:
  schedplay bench
  schedplay bench --seconds 2")]
        Bench {
            /// Simulated seconds per scenario (0.001..=60).
            #[arg(long, default_value_t = 0.5, allow_negative_numbers = true)]
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
        /// Patches of side A, comma-separated (default: none; replaces a link's list).
        #[arg(
            long,
            default_value = "",
            hide_default_value = true,
            value_name = "NAMES"
        )]
        a: String,
        /// Patches of side B, comma-separated (default: none; replaces a link's list).
        #[arg(
            long,
            default_value = "",
            hide_default_value = true,
            value_name = "NAMES"
        )]
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

    /// Layout overrides. Values are taken as text so that a negative or malformed value reaches
    /// validation and comes back as a field error (clap would refuse `-3` as an unknown flag); each
    /// is read by its `scenario::MACHINE_KEYS` entry, the rule links and JSON use too.
    #[derive(Args, Clone, Default)]
    struct Layout {
        /// Sockets, 1..=8 (default: the preset's).
        #[arg(long, allow_hyphen_values = true)]
        sockets: Option<String>,
        /// Cores per socket, 1..=2048 (default: the preset's; at most 4096 CPUs in all).
        #[arg(long, allow_hyphen_values = true)]
        cores_per_socket: Option<String>,
        /// SMT: on or off (or the threads per core, 2 or 1) (default: the preset's).
        #[arg(long, allow_hyphen_values = true)]
        smt: Option<String>,
        /// NUMA nodes per socket (SNC / NPS): 1, 2, 3 or 4 (default: the preset's).
        #[arg(long, allow_hyphen_values = true)]
        nodes_per_socket: Option<String>,
        /// Cores sharing one LLC, 1..=cores per socket (default: the preset's).
        #[arg(long, allow_hyphen_values = true)]
        cores_per_llc: Option<String>,
        /// ns a core keeps a line after a locked RMW before serving the next request, 0..=1000
        /// (default 0: no direct measurement; the CAS ping-pong tables leave no room for more).
        #[arg(long, allow_hyphen_values = true)]
        rmw_hold_ns: Option<String>,
        /// Kernel CONFIG_CPUMASK_OFFSTACK: on (default, distribution kernels) or off.
        #[arg(long, allow_hyphen_values = true)]
        cpumask_offstack: Option<String>,
        /// Cores sharing one L2 (CLS level), 1..=cores per LLC; 1: none (default: the preset's).
        #[arg(long, allow_hyphen_values = true)]
        cores_per_cluster: Option<String>,
    }

    /// The field errors the link decoder (the validation layer for text values) gives for
    /// `key=raw`: the same message a share link with that value gets.
    fn text_errors(key: &str, raw: &str) -> Vec<FieldError> {
        let enc: String = raw
            .bytes()
            .map(|b| {
                if b.is_ascii_alphanumeric() || b == b'-' || b == b'.' {
                    (b as char).to_string()
                } else {
                    format!("%{b:02X}")
                }
            })
            .collect();
        let (_, errs) = decode_link(&format!("{key}={enc}"));
        let mine: Vec<FieldError> = errs.iter().filter(|e| e.field == key).cloned().collect();
        if mine.is_empty() {
            vec![FieldError::new(key, format!("{raw:?} is not allowed"))]
        } else {
            mine
        }
    }

    /// Parses a numeric flag; a value of the wrong type becomes the validation layer's error.
    fn number<T: std::str::FromStr>(
        key: &str,
        raw: &Option<String>,
        errs: &mut Vec<FieldError>,
    ) -> Option<T> {
        let raw = raw.as_deref()?;
        match raw.trim().parse::<T>() {
            Ok(v) => Some(v),
            Err(_) => {
                errs.extend(text_errors(key, raw));
                None
            }
        }
    }

    impl Layout {
        fn overrides(&self, errs: &mut Vec<FieldError>) -> LayoutOverrides {
            let given = |key: &str| match key {
                "sockets" => &self.sockets,
                "cores_per_socket" => &self.cores_per_socket,
                "smt" => &self.smt,
                "nodes_per_socket" => &self.nodes_per_socket,
                "cores_per_llc" => &self.cores_per_llc,
                "cores_per_cluster" => &self.cores_per_cluster,
                "rmw_hold_ns" => &self.rmw_hold_ns,
                "cpumask_offstack" => &self.cpumask_offstack,
                _ => &None,
            };
            let mut o = LayoutOverrides::default();
            for k in MACHINE_KEYS {
                let v = given(k.key)
                    .as_deref()
                    .and_then(|raw| k.parse(raw).map_err(|e| errs.push(e)).ok());
                (k.set)(&mut o, v);
            }
            o
        }
    }

    #[derive(Args, Clone)]
    struct ScenarioArgs {
        /// Machine preset (default gnr-2s-snc3; see `schedplay presets`); resets a link's layout overrides.
        #[arg(long)]
        machine: Option<String>,
        #[command(flatten)]
        layout: Layout,
        /// Workload: oltp, hackbench, schbench or spin (default oltp); resets a link's knobs.
        #[arg(long)]
        workload: Option<String>,
        /// An rt-app JSON workload file (global + tasks; docs/SCHEMA.md lists the keys and events read; anything else is refused by name).
        #[arg(long, value_name = "FILE", conflicts_with = "workload")]
        workload_file: Option<String>,
        /// Workload knob or `hz` (100, 250, 300, 1000; default 1000), repeatable, e.g. --set clients=64 --set hz=250
        #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
        set: Vec<String>,
        /// Simulated seconds, 0.001..=60 (default 1).
        #[arg(long, allow_hyphen_values = true)]
        seconds: Option<String>,
        /// Seed of the run's random stream, 0..=2^64-1 (default 1).
        #[arg(long, allow_hyphen_values = true)]
        seed: Option<String>,
        /// Run the scenario a share link describes (other flags override it).
        #[arg(long)]
        link: Option<String>,
        /// A real machine: a file with the output of `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` (or
        /// `lscpu -e`) and `numactl -H` (or /sys/devices/system/node/node*/distance lines); --machine
        /// then picks the hardware figures (default: the closest preset, said on stderr).
        #[arg(long, value_name = "FILE")]
        machine_file: Option<String>,
        /// Runs per side, 1..=100, seeds derived from --seed (default 1); >1 prints mean (std%), 95% intervals and Welch's p.
        #[arg(long = "repeat", value_name = "N", allow_hyphen_values = true)]
        repeat: Option<String>,
        /// Simulated seconds excluded from the figures at the start, or `auto` (docs/MODEL.md, Steady state; default 0).
        #[arg(long, value_name = "S|auto", allow_hyphen_values = true)]
        warmup: Option<String>,
        /// Runs at once (threads) for repeats, sides and sweep points (default: every core; 1 = one after the other).
        #[arg(long, value_name = "N", allow_hyphen_values = true)]
        jobs: Option<String>,
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
                    cpu_map: None,
                };
            }
            if let Some(f) = &self.machine_file {
                match machine_file(f, self.machine.as_deref()) {
                    Ok((map, preset)) => {
                        e.machine.preset = preset;
                        e.machine.cpu_map = Some(map);
                        e.machine.overrides = LayoutOverrides {
                            rmw_hold_ns: e.machine.overrides.rmw_hold_ns,
                            cpumask_offstack: e.machine.overrides.cpumask_offstack,
                            ..Default::default()
                        };
                    }
                    Err(inv) => errs.extend(inv.0),
                }
            }
            let o = self.layout.overrides(&mut errs);
            let eo = &mut e.machine.overrides;
            eo.sockets = o.sockets.or(eo.sockets);
            eo.cores_per_socket = o.cores_per_socket.or(eo.cores_per_socket);
            eo.smt = o.smt.or(eo.smt);
            eo.nodes_per_socket = o.nodes_per_socket.or(eo.nodes_per_socket);
            eo.cores_per_llc = o.cores_per_llc.or(eo.cores_per_llc);
            eo.rmw_hold_ns = o.rmw_hold_ns.or(eo.rmw_hold_ns);
            eo.cpumask_offstack = o.cpumask_offstack.or(eo.cpumask_offstack);
            eo.cores_per_cluster = o.cores_per_cluster.or(eo.cores_per_cluster);
            if let Some(w) = &self.workload {
                e.workload = WorkloadChoice {
                    name: w.clone(),
                    knobs: BTreeMap::new(),
                };
            }
            if let Some(f) = &self.workload_file {
                match std::fs::read_to_string(f) {
                    Ok(text) => {
                        e.workload = WorkloadChoice {
                            name: workload::rtapp::NAME.into(),
                            knobs: [(workload::rtapp::FILE_KNOB.to_string(), text.into())].into(),
                        }
                    }
                    Err(err) => errs.push(FieldError::new("workload_file", format!("{f}: {err}"))),
                }
            }
            for kv in &self.set {
                match kv.split_once('=') {
                    Some(("hz", v)) => match v.parse() {
                        Ok(h) => e.hz = h,
                        Err(_) => errs.push(scenario::hz_error(&format!("{v:?}"))),
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
            if let Some(s) = number("seconds", &self.seconds, &mut errs) {
                e.seconds = s;
            }
            if let Some(s) = number("seed", &self.seed, &mut errs) {
                e.seed = s;
            }
            if let Some(n) = number("repeats", &self.repeat, &mut errs) {
                e.repeats = n;
            }
            let auto = self.warmup.as_deref().map(str::trim) == Some("auto");
            if !auto && let Some(w) = number("warmup", &self.warmup, &mut errs) {
                e.warmup = w;
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
            if auto && errs.is_empty() {
                match schedplay::steady::auto_warmup(&e) {
                    Ok(w) => e.warmup = w,
                    Err(inv) => errs.extend(inv.0),
                }
            }
            if errs.is_empty() {
                Ok(e)
            } else {
                Err(Invalid(errs))
            }
        }
    }

    /// An imported machine: its `cpu_map` and the preset of its hardware figures (given, or the
    /// closest, which stderr names). Errors name the file's line and column.
    fn machine_file(path: &str, preset: Option<&str>) -> Result<(String, String), Invalid> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| FieldError::new("machine_file", format!("{path}: {e}")))?;
        let parsed = schedplay::machine_file::parse(&text).map_err(|errs| {
            Invalid(
                errs.iter()
                    .take(20)
                    .map(|e| FieldError::new("machine_file", format!("{path}: {e}")))
                    .collect(),
            )
        })?;
        let s = parsed.map.shape();
        let preset = match preset {
            Some(p) => {
                eprintln!("machine file {path}: hardware figures of {p}");
                p.to_string()
            }
            None => {
                let p = parsed.map.closest_preset(parsed.vendor);
                eprintln!(
                    "machine file {path}: hardware figures of {p}, the closest preset (--machine chooses another)"
                );
                p.to_string()
            }
        };
        eprintln!(
            "machine file {path}: {} CPUs, {} sockets, {} nodes, {} LLCs, up to {} threads per core{}",
            s.cpus,
            s.sockets,
            s.nodes,
            s.llcs,
            s.smt,
            parsed
                .notes
                .iter()
                .map(|n| format!("; {n}"))
                .collect::<String>()
        );
        Ok((parsed.map.encode(), preset))
    }

    /// An optional seconds value of a flag; a bad one names the field.
    fn seconds_arg(field: &str, v: &Option<String>) -> Result<Option<f64>, FieldError> {
        match v {
            None => Ok(None),
            Some(s) => match s.trim().parse::<f64>() {
                Ok(x) if x.is_finite() => Ok(Some(x)),
                _ => Err(FieldError::new(
                    field,
                    format!("{s:?} is not a number of seconds"),
                )),
            },
        }
    }

    fn print_report(r: &Report, json: bool) -> ExitCode {
        if json {
            println!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
        } else {
            print!("{}", r.to_text());
        }
        ExitCode::SUCCESS
    }

    fn run_side(e: &Experiment, side: Side) -> Result<Report, Invalid> {
        schedplay::run(e, side)
    }

    impl ScenarioArgs {
        /// --jobs, or every core.
        fn threads(&self) -> Result<usize, Invalid> {
            match &self.jobs {
                None => Ok(repeat::default_threads()),
                Some(j) => match j.trim().parse::<usize>() {
                    Ok(n) if (1..=1024).contains(&n) => Ok(n),
                    _ => Err(FieldError::new(
                        "jobs",
                        format!("{j:?} is out of range: an integer in 1..=1024 (runs at once)"),
                    )
                    .into()),
                },
            }
        }
    }

    /// A repeated run or A/B: the table as text or JSON.
    fn print_table(e: &Experiment, sides: &[Side], threads: usize, json: bool) -> ExitCode {
        let runs = match repeat::run_sides(e, sides, threads) {
            Ok(r) => r,
            Err(err) => return fail(err),
        };
        let t = repeat::Table::new(&runs[0], runs.get(1).map(|b| &b[..]));
        if json {
            println!("{}", serde_json::to_string_pretty(&t).unwrap_or_default());
        } else {
            print!("{}", t.to_text());
        }
        ExitCode::SUCCESS
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
                machine_file: file,
                format,
                layout,
                patches,
                cpu,
                json,
            } => {
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
                let topo = match topology::preset(&machine) {
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
                                topology::PRESETS.join(", ")
                            ),
                        ));
                        None
                    }
                };
                let all_cpus = cpu.is_none();
                let cpu = cpu.unwrap_or_else(|| "0".into());
                let cpu = match (&topo, cpu.trim().parse::<usize>()) {
                    (Some(t), Ok(c)) if c < t.nr_cpus() => Some(c),
                    (Some(t), _) => {
                        errs.push(FieldError::new(
                            "cpu",
                            format!("{cpu:?} is out of range: 0..={}", t.nr_cpus() - 1),
                        ));
                        None
                    }
                    (None, _) => None,
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
                        print!("{}", schedplay::machine_file::lscpu(&topo));
                        return ExitCode::SUCCESS;
                    }
                    "numactl" => {
                        print!("{}", schedplay::machine_file::numactl(&topo));
                        return ExitCode::SUCCESS;
                    }
                    _ => {}
                }
                if json {
                    let mut v = serde_json::json!({
                        "cpus": topo.nr_cpus(), "nodes": topo.nr_nodes, "llcs": topo.nr_llcs,
                        "cpu": cpu, "domains": sd.to_json(cpu),
                        "node_distances": schedplay::topology::sched_distances(&topo, p.snc3_distance_fix),
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
            Cmd::Run {
                s,
                patches,
                json,
                trace,
                trace_from,
                trace_to,
                schedstat,
            } => {
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
                let threads = match s.threads() {
                    Ok(t) => t,
                    Err(e) => return fail(e),
                };
                if let Some(file) = &trace {
                    if e.repeats > 1 {
                        return fail(
                            FieldError::new("trace", "a trace is of one run: repeats must be 1")
                                .into(),
                        );
                    }
                    let (from, to) = match (
                        seconds_arg("trace_from", &trace_from),
                        seconds_arg("trace_to", &trace_to),
                    ) {
                        (Ok(f), Ok(t)) => (f, t),
                        (Err(a), Err(b)) => return fail(Invalid(vec![a, b])),
                        (Err(a), _) | (_, Err(a)) => return fail(a.into()),
                    };
                    let format = schedplay::traced::format_for(file);
                    let (r, tf) = match schedplay::traced::run_traced_as(&e, side, format, from, to)
                    {
                        Ok(x) => x,
                        Err(e) => return fail(e),
                    };
                    if let Err(err) = std::fs::write(file, &tf.bytes) {
                        return fail(FieldError::new("trace", format!("{file}: {err}")).into());
                    }
                    eprintln!("{} → {file}", tf.summary());
                    return print_report(&r, json);
                }
                if e.repeats > 1 {
                    if schedstat {
                        return fail(
                            FieldError::new(
                                "schedstat",
                                "schedstat is of one run: repeats must be 1",
                            )
                            .into(),
                        );
                    }
                    return print_table(&e, &[side], threads, json);
                }
                if schedstat {
                    let (r, st) = match schedplay::schedstat::run_with_schedstat(&e, side) {
                        Ok(x) => x,
                        Err(e) => return fail(e),
                    };
                    print!("{}", r.to_text());
                    println!("\n# /proc/schedstat over the measured window");
                    print!("{}\n{}", st.proc_text, st.report_text);
                    return ExitCode::SUCCESS;
                }
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
            Cmd::Compare {
                ab,
                json,
                schedstat,
            } => {
                let e = match ab.experiment() {
                    Ok(e) => e,
                    Err(e) => return fail(e),
                };
                let threads = match ab.s.threads() {
                    Ok(t) => t,
                    Err(e) => return fail(e),
                };
                if e.repeats > 1 {
                    if schedstat {
                        return fail(
                            FieldError::new(
                                "schedstat",
                                "schedstat is of one run per side: repeats must be 1",
                            )
                            .into(),
                        );
                    }
                    return print_table(&e, &[Side::A, Side::B], threads, json);
                }
                if schedstat {
                    let ((ra, sa), (rb, sb)) = match schedplay::schedstat::run_ab_with_schedstat(&e)
                    {
                        (Ok(x), Ok(y)) => (x, y),
                        (Err(err), _) | (_, Err(err)) => return fail(err),
                    };
                    print!("{}", Delta::between(&ra, &rb).to_text(&ra, &rb));
                    print!("\n{}", schedplay::schedstat::diff(&sa, &sb));
                    return ExitCode::SUCCESS;
                }
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
            Cmd::Merge { files, csv, json } => {
                let mut read = Vec::new();
                let mut errs = Vec::new();
                for f in &files {
                    match std::fs::read_to_string(f) {
                        Ok(t) => read.push((f.clone(), t)),
                        Err(e) => errs.push(FieldError::new("merge", format!("{f}: {e}"))),
                    }
                }
                if !errs.is_empty() {
                    return fail(Invalid(errs));
                }
                let lines = match schedplay::grid::merge(&read) {
                    Ok(l) => l,
                    Err(e) => return fail(e),
                };
                if csv {
                    print!("{}", schedplay::grid::to_csv(&lines));
                } else if json {
                    print!("{}", schedplay::grid::merged_array(&lines));
                } else {
                    print!("{}", schedplay::grid::merged_lines(&lines));
                }
                ExitCode::SUCCESS
            }
            Cmd::Sweep {
                ab,
                cpus: _,
                json: _,
                grid: Some(grid),
                shard,
            } => {
                let mut errs = Vec::new();
                let s = &ab.s;
                let given = s.machine.is_some()
                    || s.workload.is_some()
                    || s.workload_file.is_some()
                    || !s.set.is_empty()
                    || s.seconds.is_some()
                    || s.seed.is_some()
                    || s.link.is_some()
                    || s.machine_file.is_some()
                    || s.repeat.is_some()
                    || s.warmup.is_some()
                    || !ab.a.is_empty()
                    || !ab.b.is_empty();
                if given {
                    errs.push(FieldError::new(
                        "grid",
                        "scenario flags cannot be combined with --grid: the grid file holds the points",
                    ));
                }
                let shard = schedplay::grid::Shard::parse(&shard)
                    .map_err(|e| errs.push(e))
                    .ok();
                let threads = s.threads().map_err(|e| errs.extend(e.0)).ok();
                let g = std::fs::read_to_string(&grid)
                    .map_err(|e| FieldError::new("grid", format!("{grid}: {e}")).into())
                    .and_then(|t| schedplay::grid::Grid::from_json(&t))
                    .map_err(|e| errs.extend(e.0))
                    .ok();
                let (Some(shard), Some(threads), Some(g), true) =
                    (shard, threads, g, errs.is_empty())
                else {
                    return fail(Invalid(errs));
                };
                match g.run(shard, threads) {
                    Ok(lines) => {
                        print!("{}", schedplay::grid::to_lines(&lines));
                        ExitCode::SUCCESS
                    }
                    Err(e) => fail(e),
                }
            }
            Cmd::Sweep { ab, cpus, json, .. } => {
                let mut errs = Vec::new();
                if ab.s.machine_file.is_some() {
                    return fail(
                        FieldError::new(
                            "machine_file",
                            "a sweep resizes the machine; an imported machine has one size (run or compare it)",
                        )
                        .into(),
                    );
                }
                // Every count is checked (`sweep::check_cpus`, the rule the page uses too) before
                // any point runs, so a bad one is refused up front with all the others.
                let cpus: Vec<u32> = cpus
                    .iter()
                    .filter_map(|c| match c.trim().parse::<u32>() {
                        Ok(n) => sweep::check_cpus(n).map_err(|e| errs.push(e)).ok(),
                        Err(_) => {
                            errs.push(FieldError::new(
                                "cpus",
                                format!("{c:?} is not a CPU count: a positive integer"),
                            ));
                            None
                        }
                    })
                    .collect();
                let e = ab.experiment().map_err(|inv| errs.extend(inv.0));
                let Ok(e) = e else {
                    return fail(Invalid(errs));
                };
                if !errs.is_empty() {
                    return fail(Invalid(errs));
                }
                let threads = match ab.s.threads() {
                    Ok(t) => t,
                    Err(e) => return fail(e),
                };
                let points = match schedplay::sweep::points(&e, &cpus, threads) {
                    Ok(p) => p,
                    Err(err) => return fail(err),
                };
                if json {
                    println!(
                        "{}",
                        serde_json::to_string_pretty(&points).unwrap_or_default()
                    );
                    return ExitCode::SUCCESS;
                }
                println!(
                    "{:>6} {:>14} {:>14} {:>9} {:>12} {:>12}{}",
                    "CPUs",
                    "A /s",
                    "B /s",
                    "B vs A",
                    "A contention",
                    "B contention",
                    if e.repeats > 1 {
                        format!(
                            "  {:>20} {:>7}  (means of {} runs per side)",
                            "95% CI of B vs A", "p", e.repeats
                        )
                    } else {
                        String::new()
                    }
                );
                for p in &points {
                    let stats = match (p.throughput_pct_ci95, p.throughput_p) {
                        (Some(ci), Some(pv)) => {
                            format!(
                                "  {:>20} {pv:>7.4}",
                                format!("[{:+.2}, {:+.2}]%", ci[0], ci[1])
                            )
                        }
                        _ => String::new(),
                    };
                    println!(
                        "{:>6} {:>14.1} {:>14.1} {:>+8.2}% {:>11.2}% {:>11.2}%{stats}",
                        p.cpus,
                        p.a_throughput,
                        p.b_throughput,
                        p.throughput_pct,
                        p.a_contention_pct,
                        p.b_contention_pct
                    );
                }
                ExitCode::SUCCESS
            }
            Cmd::Validate {
                seconds,
                repeat,
                seed,
                jobs,
                json,
                markdown,
                strict,
            } => {
                let mut errs = Vec::new();
                let seconds = number::<f64>("seconds", &Some(seconds), &mut errs);
                let repeats = number::<u32>("repeats", &Some(repeat), &mut errs);
                let seed = number::<u64>("seed", &Some(seed), &mut errs);
                let scen = ScenarioArgs {
                    machine: None,
                    machine_file: None,
                    layout: Layout::default(),
                    workload: None,
                    workload_file: None,
                    set: vec![],
                    seconds: None,
                    seed: None,
                    link: None,
                    repeat: None,
                    warmup: None,
                    jobs,
                };
                let threads = scen.threads().map_err(|e| errs.extend(e.0)).ok();
                let (Some(seconds), Some(repeats), Some(seed), Some(threads), true) =
                    (seconds, repeats, seed, threads, errs.is_empty())
                else {
                    return fail(Invalid(errs));
                };
                let s = schedplay::validation::Settings {
                    seconds,
                    repeats,
                    seed,
                    threads,
                };
                let out = match schedplay::validation::validate(schedplay::validation::ROWS, &s) {
                    Ok(o) => o,
                    Err(e) => return fail(e),
                };
                if json {
                    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
                } else if markdown {
                    print!("{}", schedplay::validation::to_markdown(&out, &s));
                } else {
                    print!("{}", schedplay::validation::to_text(&out, &s));
                }
                let missed = out
                    .iter()
                    .any(|o| o.status == schedplay::validation::Status::Misses);
                if strict && missed {
                    ExitCode::from(1)
                } else {
                    ExitCode::SUCCESS
                }
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
