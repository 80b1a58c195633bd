//! The scenario of an A/B experiment (machine, workload, HZ, time, seed, patches for A and B), its
//! validation (every field, all errors at once, limits checked before anything is allocated), and
//! the share-link codec (versioned, readable keys, append-only).

use crate::error::{FieldError, Invalid, range_or_nan};
use crate::machine::cpu_map::CpuMap;
use crate::machine::limits;
use crate::machine::presets;
use crate::machine::spec;
use crate::machine::spec::{LayoutOverrides, MachineSpec};
use crate::machine::topology::Topology;
use crate::patches::Patches;
use crate::workload::{self, Knobs};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const LINK_VERSION: u32 = 1;
pub const MAX_SECONDS: f64 = 60.0;
pub const MIN_SECONDS: f64 = 0.001;
pub const MAX_TASKS: u64 = 65_536;
/// Refuse runs estimated above this many events (about ten minutes of native simulation).
pub const MAX_EVENTS: f64 = 4e9;
/// The HZ values a run accepts (the kernel's `CONFIG_HZ` choices). The page's HZ list is this one.
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];
/// Runs per side of a repeated experiment (`repeats`): 1 is a single run.
pub const MIN_REPEATS: u32 = 1;
pub const MAX_REPEATS: u32 = 100;

/// "100, 250, 300 or 1000"
fn one_of(values: &[u32]) -> String {
    let s: Vec<String> = values.iter().map(u32::to_string).collect();
    match s.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => s.join(""),
    }
}

/// The error for an HZ value (as given) that is not in `HZ_VALUES`.
pub fn hz_error(given: &str) -> FieldError {
    FieldError::new(
        "hz",
        format!("{given} is not allowed: {}", one_of(HZ_VALUES)),
    )
}

/// One machine layout override: a field of `LayoutOverrides` (the experiment's `machine` object),
/// its share-link key and its range. The CLI flag is `--` + `key` with `-` for `_` (tests/cli.rs
/// checks that the binary accepts every one). Validation, the link codec and the page's machine
/// fields all read this table.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct MachineKey {
    /// Field name in the experiment's `machine` object (JSON) and in `LayoutOverrides`.
    pub key: &'static str,
    /// Share-link key.
    pub link: &'static str,
    pub min: u32,
    pub max: u32,
    /// Words accepted for values (and written in links), e.g. `on` / `off` for SMT; empty for
    /// plain numbers.
    pub words: &'static [(&'static str, u32)],
    pub description: &'static str,
    #[serde(skip)]
    pub get: fn(&LayoutOverrides) -> Option<u32>,
    #[serde(skip)]
    pub set: fn(&mut LayoutOverrides, Option<u32>),
}

impl MachineKey {
    /// A value as text (link, CLI, form): a word of `words` or an integer, range-checked. The one
    /// rule every input path uses.
    pub fn parse(&self, raw: &str) -> Result<u32, FieldError> {
        let t = raw.trim();
        let word = self
            .words
            .iter()
            .find(|(w, _)| w.eq_ignore_ascii_case(t))
            .map(|&(_, v)| v);
        match word.or_else(|| t.parse::<u32>().ok()) {
            Some(v) => self.check(v),
            None => Err(FieldError::new(
                self.key,
                range_or_nan(raw, self.allowed(&format!("{raw:?}"))),
            )),
        }
    }

    /// The value as a link writes it: its word if it has one.
    pub fn format(&self, v: u32) -> String {
        match self.words.iter().find(|&&(_, x)| x == v) {
            Some((w, _)) => w.to_string(),
            None => v.to_string(),
        }
    }

    fn allowed(&self, given: &str) -> String {
        let words: Vec<String> = self.words.iter().map(|(w, _)| w.to_string()).collect();
        if words.is_empty() {
            format!(
                "{given} is out of range: allowed {}..={} ({})",
                self.min, self.max, self.description
            )
        } else {
            format!(
                "{given} is not allowed: {}, or the count {}..={}",
                words.join(" or "),
                self.min,
                self.max
            )
        }
    }

    fn check(&self, v: u32) -> Result<u32, FieldError> {
        if (self.min..=self.max).contains(&v) {
            Ok(v)
        } else {
            Err(FieldError::new(self.key, self.allowed(&v.to_string())))
        }
    }
}

/// Every machine override key (append-only: links and the CLI use them). The ranges are
/// `topology`'s layout limits, which every machine is checked against.
pub const MACHINE_KEYS: &[MachineKey] = &[
    MachineKey {
        key: "sockets",
        link: "sockets",
        min: *limits::SOCKETS.start(),
        max: *limits::SOCKETS.end(),
        words: &[],
        description: "sockets (packages)",
        get: |o| o.sockets,
        set: |o, v| o.sockets = v,
    },
    MachineKey {
        key: "cores_per_socket",
        link: "cores_per_socket",
        min: *limits::CORES_PER_SOCKET.start(),
        max: *limits::CORES_PER_SOCKET.end(),
        words: &[],
        description: "physical cores per socket",
        get: |o| o.cores_per_socket,
        set: |o, v| o.cores_per_socket = v,
    },
    MachineKey {
        key: "smt",
        link: "smt",
        min: *limits::SMT.start(),
        max: *limits::SMT.end(),
        words: spec::SMT_WORDS,
        description: "SMT: on or off (hardware threads per core: 2 or 1)",
        get: |o| o.smt,
        set: |o, v| o.smt = v,
    },
    MachineKey {
        key: "nodes_per_socket",
        link: "nodes_per_socket",
        min: *limits::NODES_PER_SOCKET.start(),
        max: *limits::NODES_PER_SOCKET.end(),
        words: &[],
        description: "NUMA nodes per socket (Intel SNC / AMD NPS)",
        get: |o| o.nodes_per_socket,
        set: |o, v| o.nodes_per_socket = v,
    },
    MachineKey {
        key: "cores_per_llc",
        link: "cores_per_llc",
        min: *limits::CORES_PER_LLC.start(),
        max: *limits::CORES_PER_LLC.end(),
        words: &[],
        description: "cores sharing one last-level cache (empty: the preset's)",
        get: |o| o.cores_per_llc,
        set: |o, v| o.cores_per_llc = v,
    },
    MachineKey {
        key: "rmw_hold_ns",
        link: "rmw_hold_ns",
        min: *limits::RMW_HOLD_NS.start(),
        max: *limits::RMW_HOLD_NS.end(),
        words: &[],
        description: "ns a core keeps a line after a locked RMW before the next request is served (no direct measurement; default 0, bounded by the CAS ping-pong tables)",
        get: |o| o.rmw_hold_ns,
        set: |o, v| o.rmw_hold_ns = v,
    },
    MachineKey {
        key: "cpumask_offstack",
        link: "cpumask_offstack",
        min: 0,
        max: 1,
        words: spec::OFF_ON_WORDS,
        description: "kernel CONFIG_CPUMASK_OFFSTACK: on (distribution kernels: nohz.idle_cpus_mask's bits in their own lines, reached through a pointer in the nohz struct) or off (bits inline)",
        get: |o| o.cpumask_offstack,
        set: |o, v| o.cpumask_offstack = v,
    },
    MachineKey {
        key: "cores_per_cluster",
        link: "cores_per_cluster",
        min: 1,
        max: 2048,
        words: &[],
        description: "cores sharing one L2, the CLS level (1: none; empty: the preset's)",
        get: |o| o.cores_per_cluster,
        set: |o, v| o.cores_per_cluster = v,
    },
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MachineChoice {
    /// A preset; with `cpu_map`, the preset whose hardware figures (latencies, vendor) the
    /// imported machine uses.
    pub preset: String,
    #[serde(flatten)]
    pub overrides: LayoutOverrides,
    /// An imported machine (`machine_file::CpuMap::encode`; link key `cpu_map`, added under v1):
    /// the exact CPU map and SLIT. Layout overrides do not apply to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_map: Option<String>,
}

/// The layout keys of `MACHINE_KEYS` (an imported machine refuses them; the others still apply).
pub const LAYOUT_KEYS: &[&str] = &[
    "sockets",
    "cores_per_socket",
    "smt",
    "nodes_per_socket",
    "cores_per_llc",
    "cores_per_cluster",
];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkloadChoice {
    pub name: String,
    #[serde(flatten)]
    pub knobs: BTreeMap<String, serde_json::Value>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    #[serde(default = "link_version")]
    pub v: u32,
    pub machine: MachineChoice,
    #[serde(default = "default_hz")]
    pub hz: u32,
    pub workload: WorkloadChoice,
    #[serde(default = "default_seconds")]
    pub seconds: f64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    #[serde(default)]
    pub a: Vec<String>,
    #[serde(default)]
    pub b: Vec<String>,
    /// Runs per side, each with its own seed (`repeat::seeds`); 1 = one run. Since link v1 (added
    /// later; absent = 1).
    #[serde(default = "default_repeats")]
    pub repeats: u32,
    /// Simulated seconds at the start excluded from the headline figures (sysbench
    /// `--warmup-time`); 0 = none. Absent = 0, so every older link and scenario reproduces.
    #[serde(default)]
    pub warmup: f64,
}

fn link_version() -> u32 {
    LINK_VERSION
}
fn default_hz() -> u32 {
    1000
}
fn default_seconds() -> f64 {
    1.0
}
fn default_seed() -> u64 {
    1
}
fn default_repeats() -> u32 {
    1
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    A,
    B,
}

/// A validated single run: what the engine needs.
pub struct RunSpec {
    pub topo: Topology,
    pub patches: Patches,
    pub patch_names: Vec<String>,
    pub hz: u32,
    pub seconds: f64,
    pub seed: u64,
    pub workload: String,
    pub knobs: Knobs,
    /// Warm-up, simulated seconds (0 ..< seconds).
    pub warmup: f64,
}

impl Default for Experiment {
    fn default() -> Self {
        Experiment {
            v: LINK_VERSION,
            machine: MachineChoice {
                preset: "gnr-2s-snc3".into(),
                overrides: LayoutOverrides::default(),
                cpu_map: None,
            },
            hz: 1000,
            workload: WorkloadChoice {
                name: "oltp".into(),
                knobs: BTreeMap::new(),
            },
            seconds: 1.0,
            seed: 1,
            a: vec![],
            b: vec![],
            repeats: 1,
            warmup: 0.0,
        }
    }
}

/// The error for a repeat count outside `MIN_REPEATS..=MAX_REPEATS` (as given).
pub fn repeats_error(given: &str) -> FieldError {
    FieldError::new(
        "repeats",
        format!(
            "{given} is out of range: an integer in {MIN_REPEATS}..={MAX_REPEATS} (runs per side)"
        ),
    )
}

/// The error for a warm-up outside 0 ..< seconds (as given).
pub fn warmup_error(given: &str, seconds: f64) -> FieldError {
    FieldError::new(
        "warmup",
        format!(
            "{given} is out of range: 0 ..= seconds - {MIN_SECONDS} ({}) simulated seconds excluded at the start",
            seconds - MIN_SECONDS
        ),
    )
}

/// A warm-up leaves at least `MIN_SECONDS` measured.
fn warmup_ok(warmup: f64, seconds: f64) -> bool {
    warmup.is_finite() && warmup >= 0.0 && warmup <= seconds - MIN_SECONDS
}

fn knob_string(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

impl Experiment {
    pub fn knobs(&self) -> Knobs {
        self.workload
            .knobs
            .iter()
            .map(|(k, v)| (k.clone(), knob_string(v)))
            .collect()
    }

    pub fn machine_spec(&self) -> Result<MachineSpec, Invalid> {
        let Some(base) = presets::preset(&self.machine.preset) else {
            return Err(FieldError::new(
                "machine",
                format!(
                    "unknown machine {:?}: allowed {}",
                    self.machine.preset,
                    presets::PRESETS.join(", ")
                ),
            )
            .into());
        };
        let errs: Vec<FieldError> = MACHINE_KEYS
            .iter()
            .filter_map(|k| (k.get)(&self.machine.overrides).and_then(|v| k.check(v).err()))
            .collect();
        if !errs.is_empty() {
            return Err(Invalid(errs));
        }
        let Some(text) = &self.machine.cpu_map else {
            return base.with_overrides(&self.machine.overrides);
        };
        let layout: Vec<FieldError> = MACHINE_KEYS
            .iter()
            .filter(|k| LAYOUT_KEYS.contains(&k.key) && (k.get)(&self.machine.overrides).is_some())
            .map(|k| {
                FieldError::new(
                    k.key,
                    format!("{} does not apply to an imported machine (cpu_map): its layout is the file's", k.key),
                )
            })
            .collect();
        if !layout.is_empty() {
            return Err(Invalid(layout));
        }
        let map = CpuMap::decode(text).map_err(|m| FieldError::new("cpu_map", m))?;
        let spec = base.with_overrides(&self.machine.overrides)?.with_map(map);
        spec.validate()?;
        Ok(spec)
    }

    /// Every field checked; all errors at once.
    pub fn validate(&self) -> Result<(), Invalid> {
        self.run_spec(Side::A)
            .and(self.run_spec(Side::B))
            .map(|_| ())
    }

    /// Validates and resolves one side (limits before any allocation of the machine or tasks).
    pub fn run_spec(&self, side: Side) -> Result<RunSpec, Invalid> {
        let mut errs = Vec::new();
        if self.v != LINK_VERSION {
            errs.push(FieldError::new(
                "v",
                format!(
                    "version {} is not supported: allowed {LINK_VERSION}",
                    self.v
                ),
            ));
        }
        let spec = self.machine_spec().map_err(|e| errs.extend(e.0)).ok();
        if !HZ_VALUES.contains(&self.hz) {
            errs.push(hz_error(&self.hz.to_string()));
        }
        let seconds_ok =
            self.seconds.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&self.seconds);
        if !seconds_ok {
            errs.push(FieldError::new(
                "seconds",
                format!(
                    "{} is out of range: {MIN_SECONDS}..={MAX_SECONDS} simulated seconds",
                    self.seconds
                ),
            ));
        }
        if !(MIN_REPEATS..=MAX_REPEATS).contains(&self.repeats) {
            errs.push(repeats_error(&self.repeats.to_string()));
        }
        // Against a valid `seconds` only (a bad one is reported above; fuzz finding
        // tests/fuzz_corpus/json-ea7971b545160ea4.txt).
        if seconds_ok && !warmup_ok(self.warmup, self.seconds) {
            errs.push(warmup_error(&self.warmup.to_string(), self.seconds));
        }
        let knobs = self.knobs();
        errs.extend(workload::validate_knobs(&self.workload.name, &knobs));
        let mut patches = Patches::default();
        for (field, names) in [("a", &self.a), ("b", &self.b)] {
            match Patches::parse(field, names) {
                Ok(p) if (field == "a") == (side == Side::A) => patches = p,
                Ok(_) => {}
                Err(e) => errs.push(e),
            }
        }
        if let Some(spec) = &spec {
            let cpus = spec.nr_cpus();
            let tasks = workload::task_count(&self.workload.name, &knobs, cpus as usize);
            if tasks > MAX_TASKS {
                errs.push(FieldError::new(
                    "workload",
                    format!("{tasks} tasks exceed the limit of {MAX_TASKS}"),
                ));
            }
            let est = estimate_events(cpus, tasks, self.hz, self.seconds);
            if errs.is_empty() && est > MAX_EVENTS {
                errs.push(FieldError::new(
                    "seconds",
                    format!("this run would take about {:.1e} events (limit {MAX_EVENTS:.0e}); lower seconds, CPUs or tasks", est),
                ));
            }
        }
        if !errs.is_empty() {
            return Err(Invalid(errs));
        }
        let Some(spec) = spec else {
            unreachable!("a machine error was reported above")
        };
        let topo = Topology::new(spec)?;
        workload::check_machine(&self.workload.name, &knobs, &topo)?;
        Ok(RunSpec {
            topo,
            patches,
            patch_names: if side == Side::A {
                self.a.clone()
            } else {
                self.b.clone()
            },
            hz: self.hz,
            seconds: self.seconds,
            seed: self.seed,
            workload: self.workload.name.clone(),
            knobs,
            warmup: self.warmup,
        })
    }
}

/// The seed stories, one click away in the page.
/// A seed story: the claim it reproduces, what to look at, and the report it comes from.
#[derive(Clone, Debug, Serialize)]
pub struct Story {
    pub name: &'static str,
    pub title: &'static str,
    pub claim: &'static str,
    pub look_at: &'static str,
    pub source: &'static str,
    /// The reported figures, and the profile symbol the model's figure is read from.
    pub reported: &'static str,
    pub symbol: &'static str,
    pub experiment: Experiment,
}

pub fn stories() -> Vec<Story> {
    let mut gnr = Experiment::default();
    gnr.machine.preset = "gnr-2s-96c-snc3".into();
    gnr.seconds = 0.3;
    gnr.b = vec!["skip-not-due".into()];
    let mut milan = Experiment::default();
    milan.machine.preset = "milan-2s".into();
    milan.seconds = 0.3;
    milan.a = vec!["cache-aware".into()];
    milan.b = vec!["cache-aware".into(), "cas-skip-many-threads".into()];
    vec![
        Story {
            name: "sched-balance-running",
            title: "sched_balance_running on 2S GNR SNC3",
            claim: "an OLTP load spent 7.8% of all cycles in sched_balance_domains() contending on the global sched_balance_running flag; checking the balance interval first removed it: +8% throughput (A: v6.18, B: skip-not-due)",
            look_at: "sched_balance_domains in A's profile and the sched_balance_running line in the c2c table; B's throughput change",
            source: "LKML 2025-10-28, Re: [PATCH v2] sched/fair: Skip sched_balance_running cmpxchg when balance is not due (Tim Chen; merged as 3324b2180c17)",
            reported: "7.8% of cycles in sched_balance_domains before, gone after; +8% throughput",
            symbol: "sched_balance_domains",
            experiment: gnr,
        },
        Story {
            name: "cache-aware-false-sharing",
            title: "cache-aware false sharing on Milan",
            claim: "cache-aware scheduling made mysql+sysbench about 10% slower on 256 cores: mm->nr_running_avg shared a line with mm->mm_sched_cpu, rewritten to -1 on every tick (A: cache-aware, B: with patch 25/28)",
            look_at: "account_mm_sched and exceed_llc_nr in B's profile, HITM on mm_struct(mysqld) in the c2c table, B's throughput change",
            source: "LKML 2025-09, Re: [RFC PATCH v4 25/28] sched: Skip cache aware scheduling if the process has many active threads (Tingyin Duan's report, Chen Yu's analysis)",
            reported: "about 10% slower with patch 25/28; exceed_llc_nr high in perf top",
            symbol: "account_mm_sched",
            experiment: milan,
        },
    ]
}

/// Rough event count of a run: ticks, balancing and about 10 events per task per ms of activity.
pub fn estimate_events(cpus: u64, tasks: u64, hz: u32, seconds: f64) -> f64 {
    seconds * (cpus as f64 * hz as f64 * 4.0 + tasks.min(cpus * 4) as f64 * 30_000.0)
}

// ---- share links ---------------------------------------------------------------------------

fn pct_encode(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The canonical query string (without `?`) of an experiment.
pub fn encode_link(e: &Experiment) -> String {
    let mut kv: Vec<(String, String)> = vec![
        ("v".into(), e.v.to_string()),
        ("machine".into(), e.machine.preset.clone()),
    ];
    let o = &e.machine.overrides;
    // Every override that is set, even one equal to the preset: the link must decode to the same
    // experiment (and an override can change derived values, e.g. the Intel LLC split).
    for k in MACHINE_KEYS {
        if let Some(v) = (k.get)(o) {
            kv.push((k.link.to_string(), k.format(v)));
        }
    }
    // Added under v1: only when set.
    if let Some(m) = &e.machine.cpu_map {
        kv.push(("cpu_map".into(), m.clone()));
    }
    kv.push(("hz".into(), e.hz.to_string()));
    kv.push(("workload".into(), e.workload.name.clone()));
    for (k, v) in e.knobs() {
        kv.push((k, v));
    }
    kv.push(("a".into(), e.a.join(",")));
    kv.push(("b".into(), e.b.join(",")));
    kv.push(("seconds".into(), e.seconds.to_string()));
    kv.push(("seed".into(), e.seed.to_string()));
    // Keys added after v1 shipped: only when set, so a link without them stays the same link.
    if e.repeats != 1 {
        kv.push(("repeats".into(), e.repeats.to_string()));
    }
    if e.warmup != 0.0 {
        kv.push(("warmup".into(), e.warmup.to_string()));
    }
    kv.iter()
        .map(|(k, v)| format!("{}={}", pct_encode(k), pct_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Decodes a link; every bad or unknown key is reported and the rest still loads (bad values keep
/// the default).
pub fn decode_link(query: &str) -> (Experiment, Vec<FieldError>) {
    let mut e = Experiment::default();
    let mut errs = Vec::new();
    let q = query.trim_start_matches('?');
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        pairs.push((pct_decode(k), pct_decode(v)));
    }
    let get = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
    };
    if let Some(v) = get("v") {
        match v.parse::<u32>() {
            Ok(LINK_VERSION) => {}
            _ => errs.push(FieldError::new(
                "v",
                format!("link version {v:?} is not supported: allowed {LINK_VERSION}"),
            )),
        }
    }
    if let Some(m) = get("machine") {
        if presets::preset(&m).is_some() {
            e.machine.preset = m;
        } else {
            errs.push(FieldError::new(
                "machine",
                format!(
                    "unknown machine {m:?}: allowed {}",
                    presets::PRESETS.join(", ")
                ),
            ));
        }
    }
    for k in MACHINE_KEYS {
        let v = get(k.link).and_then(|raw| {
            k.parse(&raw)
                .map_err(|mut err| {
                    err.field = k.link.to_string();
                    errs.push(err)
                })
                .ok()
        });
        (k.set)(&mut e.machine.overrides, v);
    }
    e.machine.cpu_map = get("cpu_map");
    if let Err(inv) = e.machine_spec() {
        // An impossible layout or a bad map: report it and fall back to the preset's own layout.
        errs.extend(inv.0);
        e.machine.overrides = LayoutOverrides::default();
        e.machine.cpu_map = None;
    }
    if let Some(h) = get("hz") {
        match h.parse::<u32>() {
            Ok(x) if HZ_VALUES.contains(&x) => e.hz = x,
            _ => errs.push(hz_error(&format!("{h:?}"))),
        }
    }
    if let Some(w) = get("workload") {
        if workload::info(&w).is_some() {
            e.workload.name = w;
        } else {
            errs.extend(workload::validate_knobs(&w, &Knobs::new()));
        }
    }
    let winfo = workload::info(&e.workload.name);
    let knob_names: Vec<&str> = workload::WORKLOADS
        .iter()
        .flat_map(|w| w.knobs.iter().map(|k| k.name))
        .collect();
    for (k, v) in &pairs {
        if knob_names.contains(&k.as_str()) {
            if winfo.is_some_and(|w| w.knobs.iter().any(|x| x.name == k)) {
                let mut one = Knobs::new();
                one.insert(k.clone(), v.clone());
                let bad = workload::validate_knobs(&e.workload.name, &one);
                if bad.is_empty() {
                    let val = v
                        .parse::<u64>()
                        .map(serde_json::Value::from)
                        .unwrap_or_else(|_| serde_json::Value::from(v.clone()));
                    e.workload.knobs.insert(k.clone(), val);
                } else {
                    errs.extend(bad);
                }
            } else {
                errs.push(FieldError::new(
                    k,
                    format!("{k} is not a knob of {}", e.workload.name),
                ));
            }
        } else if ![
            "v", "machine", "hz", "workload", "a", "b", "seconds", "seed", "repeats", "warmup",
            "cpu_map",
        ]
        .contains(&k.as_str())
            && !MACHINE_KEYS.iter().any(|m| m.link == k)
        {
            errs.push(FieldError::new(k, format!("unknown key {k:?}")));
        }
    }
    for (field, dst) in [("a", &mut e.a), ("b", &mut e.b)] {
        if let Some(list) = get(field) {
            let names: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            match Patches::parse(field, &names) {
                Ok(_) => *dst = names,
                Err(err) => {
                    // keep the names that are known
                    *dst = names
                        .into_iter()
                        .filter(|n| Patches::parse(field, std::slice::from_ref(n)).is_ok())
                        .collect();
                    errs.push(err);
                }
            }
        }
    }
    if let Some(s) = get("seconds") {
        match s.parse::<f64>() {
            Ok(x) if x.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&x) => e.seconds = x,
            _ => errs.push(FieldError::new(
                "seconds",
                range_or_nan(
                    &s,
                    format!(
                        "{s:?} is out of range: {MIN_SECONDS}..={MAX_SECONDS} simulated seconds"
                    ),
                ),
            )),
        }
    }
    if let Some(s) = get("seed") {
        match s.parse::<u64>() {
            Ok(x) => e.seed = x,
            _ => errs.push(FieldError::new(
                "seed",
                if s.trim().parse::<f64>().is_ok_and(f64::is_finite) {
                    format!("{s:?} is not an integer in 0..={}", u64::MAX)
                } else {
                    format!("{s:?} is not a number: an integer in 0..={}", u64::MAX)
                },
            )),
        }
    }
    if let Some(s) = get("repeats") {
        match s.parse::<u32>() {
            Ok(x) if (MIN_REPEATS..=MAX_REPEATS).contains(&x) => e.repeats = x,
            _ => errs.push(FieldError {
                message: range_or_nan(&s, repeats_error(&format!("{s:?}")).message),
                ..repeats_error("")
            }),
        }
    }
    if let Some(s) = get("warmup") {
        match s.parse::<f64>() {
            Ok(x) if warmup_ok(x, e.seconds) => e.warmup = x,
            _ => errs.push(FieldError {
                message: range_or_nan(&s, warmup_error(&format!("{s:?}"), e.seconds).message),
                ..warmup_error("", e.seconds)
            }),
        }
    }
    (e, errs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_round_trips() {
        let mut e = Experiment::default();
        e.machine.preset = "milan-2s".into();
        e.workload.name = "hackbench".into();
        e.workload.knobs.insert("groups".into(), 4.into());
        e.workload.knobs.insert("mode".into(), "thread".into());
        e.b = vec!["skip-not-due".into(), "skew-tick".into()];
        e.seconds = 0.25;
        e.seed = 7;
        let q = encode_link(&e);
        assert!(q.starts_with("v=1&machine=milan-2s"), "{q}");
        let (d, errs) = decode_link(&q);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d, e);
        assert_eq!(encode_link(&d), q);
    }

    #[test]
    fn bad_fields_are_reported_and_the_rest_loads() {
        let (e, errs) = decode_link(
            "v=1&machine=nope&workload=oltp&clients=64&seconds=-1&b=skip-not-due,bogus&zzz=1&seed=3",
        );
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["machine", "zzz", "b", "seconds"]);
        assert_eq!(e.machine.preset, "gnr-2s-snc3");
        assert_eq!(e.b, vec!["skip-not-due".to_string()]);
        assert_eq!(e.seed, 3);
        assert_eq!(e.knobs().get("clients").map(String::as_str), Some("64"));
    }

    #[test]
    fn validation_lists_every_bad_field() {
        let mut e = Experiment {
            hz: 123,
            seconds: 1e9,
            a: vec!["nope".into()],
            ..Default::default()
        };
        e.machine.overrides.cores_per_socket = Some(100_000);
        let err = e.validate().unwrap_err();
        let fields: Vec<&str> = err.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["cores_per_socket", "hz", "seconds", "a"]);
    }

    #[test]
    fn machine_keys_are_the_override_fields() {
        let mut o = LayoutOverrides::default();
        for (i, k) in MACHINE_KEYS.iter().enumerate() {
            (k.set)(&mut o, Some(i as u32 + 1));
            assert_eq!((k.get)(&o), Some(i as u32 + 1), "{}", k.key);
            assert!(k.min <= k.max);
        }
        // the table names every field of LayoutOverrides, in its JSON spelling
        let v = serde_json::to_value(&o).unwrap();
        let fields: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut keys: Vec<&str> = MACHINE_KEYS.iter().map(|k| k.key).collect();
        keys.sort_unstable();
        let mut fields = fields;
        fields.sort_unstable();
        assert_eq!(keys, fields);
        for k in MACHINE_KEYS {
            assert_eq!((k.get)(&o), v[k.key].as_u64().map(|x| x as u32));
        }
    }

    /// A value just outside a key's range is refused both by the key (validation, links) and by
    /// `MachineSpec::validate` (every machine, e.g. `schedplay topology`), naming the same field.
    #[test]
    fn machine_keys_and_machine_validation_share_their_ranges() {
        for k in MACHINE_KEYS {
            assert!(
                k.check(k.min).is_ok() && k.check(k.max).is_ok(),
                "{}",
                k.key
            );
            for v in k.min.checked_sub(1).into_iter().chain([k.max + 1]) {
                assert_eq!(k.check(v).unwrap_err().field, k.key);
                let mut o = LayoutOverrides::default();
                (k.set)(&mut o, Some(v));
                let err = presets::preset("custom")
                    .unwrap()
                    .with_overrides(&o)
                    .unwrap_err();
                assert!(
                    err.0.iter().any(|e| e.field == k.key),
                    "{} = {v}: {err}",
                    k.key
                );
            }
        }
    }

    #[test]
    fn every_hz_value_round_trips_through_a_link() {
        for &hz in HZ_VALUES {
            let e = Experiment {
                hz,
                ..Default::default()
            };
            assert!(e.validate().is_ok(), "hz {hz}");
            let (d, errs) = decode_link(&encode_link(&e));
            assert!(errs.is_empty(), "{errs:?}");
            assert_eq!(d.hz, hz);
        }
        let (_, errs) = decode_link("hz=301");
        assert_eq!(
            errs[0].message,
            "\"301\" is not allowed: 100, 250, 300 or 1000"
        );
    }

    #[test]
    fn repeats_and_warmup_round_trip_and_old_links_are_unchanged() {
        let old = encode_link(&Experiment::default());
        assert!(!old.contains("repeats") && !old.contains("warmup"), "{old}");
        let e = Experiment {
            repeats: 10,
            warmup: 0.25,
            ..Default::default()
        };
        let q = encode_link(&e);
        assert!(q.ends_with("&repeats=10&warmup=0.25"), "{q}");
        let (d, errs) = decode_link(&q);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d, e);
        let (d, errs) = decode_link("seconds=0.5&repeats=0&warmup=0.5");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, vec!["repeats", "warmup"]);
        assert_eq!((d.repeats, d.warmup), (1, 0.0));
        assert!(errs[0].message.contains("1..=100"), "{}", errs[0].message);
        let bad = Experiment {
            repeats: 101,
            warmup: 2.0,
            ..Default::default()
        };
        let fields: Vec<String> = bad
            .validate()
            .unwrap_err()
            .0
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, vec!["repeats", "warmup"]);
    }

    #[test]
    fn percent_decoding_is_total() {
        for s in ["%", "%4", "%zz", "a%41b", "+", "%E2%82"] {
            let _ = pct_decode(s);
        }
        assert_eq!(pct_decode("a%41b+c"), "aAb c");
    }

    #[test]
    fn smt_words_and_counts_decode_and_links_write_words() {
        for (raw, n) in [("on", 2), ("off", 1), ("2", 2), ("1", 1), ("Off", 1)] {
            let (e, errs) = decode_link(&format!("v=1&machine=custom&smt={raw}"));
            assert!(errs.is_empty(), "{raw}: {errs:?}");
            assert_eq!(e.machine.overrides.smt, Some(n), "{raw}");
        }
        let (e, _) = decode_link("v=1&machine=custom&smt=1");
        assert!(encode_link(&e).contains("&smt=off&"), "{}", encode_link(&e));
        let (e, errs) = decode_link("v=1&machine=custom&smt=3&sockets=x");
        let msgs: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            msgs,
            vec![
                "sockets: \"x\" is not a number: allowed 1..=8 (sockets (packages))",
                "smt: 3 is not allowed: off or on, or the count 1..=2"
            ]
        );
        assert_eq!(e.machine.overrides.smt, None);
        // JSON takes the same words
        let e: Experiment = serde_json::from_str(
            r#"{"machine":{"preset":"custom","smt":"off"},"workload":{"name":"oltp"}}"#,
        )
        .unwrap();
        assert_eq!(e.machine.overrides.smt, Some(1));
        assert!(e.validate().is_ok());
    }

    #[test]
    fn cpu_map_is_an_appended_link_key_and_refuses_layout_overrides() {
        let old = encode_link(&Experiment::default());
        assert!(!old.contains("cpu_map"), "{old}");
        assert!(
            LAYOUT_KEYS
                .iter()
                .all(|k| MACHINE_KEYS.iter().any(|m| m.key == *k))
        );
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.cpu_map = Some("0,1_0,1_0x2_0x2_0x2_10".into());
        let q = encode_link(&e);
        assert!(
            q.contains("&machine=custom&cpu_map=0,1_0,1_0x2_0x2_0x2_10&hz="),
            "{q}"
        );
        let (d, errs) = decode_link(&q);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d, e);
        assert_eq!(d.machine_spec().unwrap().nr_cpus(), 2);
        // a layout key next to a map: reported, and the map and overrides fall back to the preset's
        let (d, errs) = decode_link(&format!("{q}&smt=off"));
        assert_eq!(errs[0].field, "smt");
        assert!(
            errs[0].message.contains("imported machine"),
            "{}",
            errs[0].message
        );
        assert_eq!(d.machine.cpu_map, None);
    }

    #[test]
    fn cluster_size_round_trips_through_a_link() {
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.overrides.smt = Some(1);
        e.machine.overrides.cores_per_cluster = Some(4);
        let q = encode_link(&e);
        assert!(q.contains("&smt=off&cores_per_cluster=4&"), "{q}");
        let (d, errs) = decode_link(&q);
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d, e);
        let (_, errs) = decode_link("v=1&machine=custom&cores_per_cluster=17");
        assert_eq!(errs[0].field, "cores_per_cluster");
    }
}
