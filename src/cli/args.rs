//! What the subcommands share: the scenario flags (`ScenarioArgs`, `AbArgs`, `Layout`) and
//! their reading into an `Experiment`, the machine file, and how results and errors are printed.

use clap::Args;
use schedplay::Report;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::link::decode_link;
use schedplay::experiment::scenario::{Experiment, MachineChoice, Side};
use schedplay::experiment::scenario::{MACHINE_KEYS, WorkloadChoice};
use schedplay::experiment::{repeat, scenario};
use schedplay::machine::spec::LayoutOverrides;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// A scenario with patch lists for A and B (comma-separated names; empty = no patches).
#[derive(Args, Clone)]
pub(crate) struct AbArgs {
    #[command(flatten)]
    pub(crate) s: ScenarioArgs,
    /// Patches of side A, comma-separated (default: none; replaces a link's list).
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "",
        hide_default_value = true,
        value_name = "NAMES"
    )]
    pub(crate) a: String,
    /// Patches of side B, comma-separated (default: none; replaces a link's list).
    #[arg(
        long,
        allow_hyphen_values = true,
        default_value = "",
        hide_default_value = true,
        value_name = "NAMES"
    )]
    pub(crate) b: String,
}

impl AbArgs {
    /// --a/--b replace a link's lists when given; without a link they always apply.
    pub(crate) fn experiment(&self) -> Result<Experiment, Invalid> {
        let keep_link = (self.s.link.is_some() || self.s.story.is_some())
            && self.a.is_empty()
            && self.b.is_empty();
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
pub(crate) struct Layout {
    /// Sockets, 1..=32 (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) sockets: Option<String>,
    /// Cores per socket, 1..=2048 (default: the preset's; at most 4096 CPUs in all).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) cores_per_socket: Option<String>,
    /// SMT: on or off (or the threads per core, 2 or 1) (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) smt: Option<String>,
    /// NUMA nodes per socket (SNC / NPS): 1, 2, 3 or 4 (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) nodes_per_socket: Option<String>,
    /// Cores sharing one LLC, 1..=cores per socket (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) cores_per_llc: Option<String>,
    /// ns a core keeps a line after a locked RMW before serving the next request, 0..=1000
    /// (default 0: no direct measurement; the CAS ping-pong tables leave no room for more).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) rmw_hold_ns: Option<String>,
    /// Kernel CONFIG_CPUMASK_OFFSTACK: on (default, distribution kernels) or off.
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) cpumask_offstack: Option<String>,
    /// Cores sharing one L2 (CLS level), 1..=cores per LLC; 1: none (default: the preset's).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) cores_per_cluster: Option<String>,
    /// Store-buffer entries per CPU, 1..=512 (default: the preset's core figure).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) store_buffer_entries: Option<String>,
    /// The network card's receive queues, 1..=4096 (default: mlx5's, one per CPU up to 63).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) nic_queues: Option<String>,
    /// The node the network card is attached to (default 0).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) nic_node: Option<String>,
}

/// The field errors the link decoder (the validation layer for text values) gives for
/// `key=raw`: the same message a share link with that value gets.
pub(crate) fn text_errors(key: &str, raw: &str) -> Vec<FieldError> {
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
pub(crate) fn number<T: std::str::FromStr>(
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
    pub(crate) fn overrides(&self, errs: &mut Vec<FieldError>) -> LayoutOverrides {
        let given = |key: &str| match key {
            "sockets" => &self.sockets,
            "cores_per_socket" => &self.cores_per_socket,
            "smt" => &self.smt,
            "nodes_per_socket" => &self.nodes_per_socket,
            "cores_per_llc" => &self.cores_per_llc,
            "cores_per_cluster" => &self.cores_per_cluster,
            "rmw_hold_ns" => &self.rmw_hold_ns,
            "cpumask_offstack" => &self.cpumask_offstack,
            "store_buffer_entries" => &self.store_buffer_entries,
            "nic_queues" => &self.nic_queues,
            "nic_node" => &self.nic_node,
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
pub(crate) struct ScenarioArgs {
    /// Machine preset (default gnr-2s-snc3; see `schedplay presets`); resets a link's layout overrides.
    #[arg(long)]
    pub(crate) machine: Option<String>,
    #[command(flatten)]
    pub(crate) layout: Layout,
    /// Workload: oltp, hackbench, schbench or spin (default oltp); resets a link's knobs.
    #[arg(long)]
    pub(crate) workload: Option<String>,
    /// An rt-app JSON workload file (global + tasks; docs/SCHEMA.md lists the keys and events read; anything else is refused by name).
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    pub(crate) workload_file: Option<String>,
    /// Workload knob, `hz` (100, 250, 300, 1000; default 1000) or, on 7.2, a kernel knob
    /// (`CONFIG_SCHED_CACHE`, `llc_balancing/enabled`, ...; `schedplay presets` lists them), repeatable,
    /// e.g. --set clients=64 --set hz=250 --set llc_balancing/imb_pct=30
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub(crate) set: Vec<String>,
    /// Simulated seconds, 0.001..=60 (default 1).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) seconds: Option<String>,
    /// Seed of the run's random stream, 0..=2^64-1 (default 1).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) seed: Option<String>,
    /// Kernel release: 6.18 (default), 6.19, 7.0 or 7.2; --a/--b/--patch are toggles on top of what it
    /// merged (`schedplay presets` lists each release's changes).
    #[arg(long, value_name = "RELEASE", allow_hyphen_values = true)]
    pub(crate) kernel: Option<String>,
    /// Side B's release when it is not --kernel's (an A/B of two releases on one box, e.g.
    /// --kernel 6.18 --kernel-b 6.19); --b is then relative to it. `same` = B runs --kernel.
    #[arg(long, value_name = "RELEASE", allow_hyphen_values = true)]
    pub(crate) kernel_b: Option<String>,
    /// sched features both sides write, comma-separated, as /sys/kernel/debug/sched/features
    /// takes them: NAME on, NO_NAME off, on top of the release's defaults, e.g.
    /// --features NO_NI_RANDOM,NEXT_BUDDY (`schedplay presets` lists each release's; replaces a
    /// link's lists).
    #[arg(long, value_name = "NAMES", allow_hyphen_values = true)]
    pub(crate) features: Option<String>,
    /// sched features of side A only (after --features; replaces its list), e.g. an A/B of
    /// NI_RANDOM: --features-b NO_NI_RANDOM.
    #[arg(long, value_name = "NAMES", allow_hyphen_values = true)]
    pub(crate) features_a: Option<String>,
    /// sched features of side B only (after --features; replaces its list).
    #[arg(long, value_name = "NAMES", allow_hyphen_values = true)]
    pub(crate) features_b: Option<String>,
    /// A sched_ext scheduler (a `.bpf.o` built with clang -target bpf) that runs side A's tasks
    /// instead of the fair class, as when it is loaded with no SCX_OPS_SWITCH_PARTIAL (`run`
    /// runs side A). An object the loader refuses is refused by name (section, helper, kfunc,
    /// map type, relocation).
    #[arg(long, value_name = "FILE")]
    pub(crate) scx_a: Option<String>,
    /// The same for side B.
    #[arg(long, value_name = "FILE")]
    pub(crate) scx_b: Option<String>,
    /// What the scheduler's user space would set before load, for side A's --scx-a:
    /// `NAME=VALUE,...`, a `.rodata` option by its variable's name (`slice_ns=5000000`) or an
    /// ops data member (`ops.flags=0x78`, `ops.timeout_ms=5000`, `ops.exit_dump_len=0`).
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub(crate) scx_opt_a: Option<String>,
    /// The same for side B's --scx-b.
    #[arg(long, value_name = "NAME=VALUE,...")]
    pub(crate) scx_opt_b: Option<String>,
    /// Run the scenario a share link describes (other flags override it).
    #[arg(long)]
    pub(crate) link: Option<String>,
    /// Run a seed story's scenario, as the page's story button does (`schedplay stories` lists
    /// them; other flags override it, e.g. --seconds 1 --warmup auto).
    #[arg(long, value_name = "NAME", conflicts_with = "link")]
    pub(crate) story: Option<String>,
    /// A real machine: a file with the output of `lscpu -p=CPU,CORE,SOCKET,NODE,CACHE` (or
    /// `lscpu -e`) and `numactl -H` (or /sys/devices/system/node/node*/distance lines); --machine
    /// then picks the hardware figures (default: the closest preset, said on stderr).
    #[arg(long, value_name = "FILE")]
    pub(crate) machine_file: Option<String>,
    /// Runs per side, 1..=100, seeds derived from --seed (default 1); >1 prints mean (std%), 95% intervals and Welch's p.
    #[arg(long = "repeat", value_name = "N", allow_hyphen_values = true)]
    pub(crate) repeat: Option<String>,
    /// Simulated seconds excluded from the figures at the start, or `auto` (docs/MODEL.md, Steady state; default 0).
    #[arg(long, value_name = "S|auto", allow_hyphen_values = true)]
    pub(crate) warmup: Option<String>,
    /// Runs at once (threads) for repeats, sides and sweep points (default: every core; 1 = one after the other).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) jobs: Option<String>,
    /// An assumed figure within its plausible range, repeatable, e.g. --assume TICK_NS=2000
    /// (docs/MODEL.md §19a lists the names and ranges; default: the table's values).
    #[arg(long, value_name = "NAME=VALUE", allow_hyphen_values = true)]
    pub(crate) assume: Vec<String>,
}

pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

impl ScenarioArgs {
    /// The experiment from a link and/or flags; `a`/`b` (when given) replace the link's patch lists.
    pub(crate) fn experiment(
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
            None => match &self.story {
                Some(name) => match schedplay::experiment::stories::find(name) {
                    Ok(st) => st.experiment,
                    Err(err) => {
                        errs.push(err);
                        Experiment::default()
                    }
                },
                None => Experiment::default(),
            },
        };
        if let Some(k) = &self.kernel {
            // an unknown release is refused by validation below, by name
            e.kernel = k.trim().to_string();
        }
        if let Some(k) = &self.kernel_b {
            let k = k.trim();
            e.kernel_b = (k != "same").then(|| k.to_string());
        }
        if let Some(f) = &self.features {
            e.features_a = split_list(f);
            e.features_b = split_list(f);
        }
        if let Some(f) = &self.features_a {
            e.features_a = split_list(f);
        }
        if let Some(f) = &self.features_b {
            e.features_b = split_list(f);
        }
        for (field, path, opts, slot) in [
            ("scx_a", &self.scx_a, &self.scx_opt_a, &mut e.scx_a),
            ("scx_b", &self.scx_b, &self.scx_opt_b, &mut e.scx_b),
        ] {
            if let Some(path) = path {
                match std::fs::read(path) {
                    Ok(bytes) => {
                        let file = std::path::Path::new(path)
                            .file_name()
                            .map_or(path.clone(), |f| f.to_string_lossy().into_owned());
                        *slot = Some(scenario::scx::ScxChoice::from_bytes(&file, &bytes));
                    }
                    Err(err) => errs.push(FieldError::new(field, format!("{path}: {err}"))),
                }
            }
            let Some(opts) = opts else { continue };
            let opt_field = format!("scx_opt_{}", &field[4..]);
            let Some(choice) = slot.as_mut() else {
                errs.push(FieldError::new(
                    &opt_field,
                    format!("options need a scheduler (--scx-{})", &field[4..]),
                ));
                continue;
            };
            for kv in split_list(opts) {
                match scenario::scx::parse_option(&kv) {
                    Ok((k, v)) => {
                        choice.options.insert(k, v);
                    }
                    Err(e) => errs.push(FieldError::new(&opt_field, e)),
                }
            }
        }
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
                        store_buffer_entries: e.machine.overrides.store_buffer_entries,
                        nic_queues: e.machine.overrides.nic_queues,
                        nic_node: e.machine.overrides.nic_node,
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
        eo.store_buffer_entries = o.store_buffer_entries.or(eo.store_buffer_entries);
        eo.nic_queues = o.nic_queues.or(eo.nic_queues);
        eo.nic_node = o.nic_node.or(eo.nic_node);
        if let Some(w) = &self.workload {
            e.workload = WorkloadChoice {
                name: w.clone(),
                knobs: BTreeMap::new(),
            };
        }
        if let Some(f) = &self.workload_file {
            use schedplay::workload::rtapp;
            match std::fs::read_to_string(f) {
                Ok(text) => {
                    e.workload = WorkloadChoice {
                        name: rtapp::NAME.into(),
                        knobs: [(rtapp::FILE_KNOB.to_string(), text.into())].into(),
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
                // a kernel knob: checked against the release by validation below
                Some((k, v))
                    if schedplay::llc_balancing::knob(k).is_some()
                        || k.starts_with("llc_balancing/")
                        || k.starts_with("CONFIG_") =>
                {
                    e.sched.insert(k.to_string(), v.into());
                }
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
        for kv in &self.assume {
            match schedplay::assumptions::parse_one(kv) {
                Ok((name, v)) => {
                    e.assume.insert(name, v);
                }
                Err(err) => errs.push(err),
            }
        }
        if let Err(inv) = e.validate() {
            errs.extend(inv.0);
        }
        if auto && errs.is_empty() {
            match schedplay::experiment::steady::auto_warmup(&e) {
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
pub(crate) fn machine_file(path: &str, preset: Option<&str>) -> Result<(String, String), Invalid> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| FieldError::new("machine_file", format!("{path}: {e}")))?;
    let parsed = schedplay::machine::cpu_map::parse(&text).map_err(|errs| {
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
            let (p, why) = parsed.hardware();
            eprintln!("machine file {path}: {why} (--machine chooses another)");
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
pub(crate) fn seconds_arg(field: &str, v: &Option<String>) -> Result<Option<f64>, FieldError> {
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

pub(crate) fn print_report(r: &Report, json: bool) -> ExitCode {
    if json {
        println!("{}", serde_json::to_string_pretty(r).unwrap_or_default());
    } else {
        print!("{}", r.to_text());
    }
    ExitCode::SUCCESS
}

pub(crate) fn run_side(e: &Experiment, side: Side) -> Result<Report, Invalid> {
    schedplay::run(e, side)
}

impl ScenarioArgs {
    /// --jobs, or every core.
    pub(crate) fn threads(&self) -> Result<usize, Invalid> {
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
pub(crate) fn print_table(e: &Experiment, sides: &[Side], threads: usize, json: bool) -> ExitCode {
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

pub(crate) fn fail(e: Invalid) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}
