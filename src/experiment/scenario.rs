//! The scenario of an A/B experiment (machine, workload, HZ, time, seed, patches for A and B) and
//! its validation (every field, all errors at once, limits checked before anything is allocated);
//! the share-link codec is `link`, the seed stories `stories`.

use crate::assumptions::{self, Assumptions};
use crate::error::{FieldError, Invalid, range_or_nan};
use crate::kernels::{self, DEFAULT_KERNEL};
use crate::machine::cpu_map::CpuMap;
use crate::machine::limits;
use crate::machine::presets;
use crate::machine::spec;
use crate::machine::spec::{LayoutOverrides, MachineSpec};
use crate::machine::topology::Topology;
use crate::patches::Patches;
use crate::sched_features;
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

mod machine_keys;
pub mod scx;
pub use machine_keys::{MACHINE_KEYS, MachineKey};

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
    /// The kernel release (`kernels::KERNELS`); `a` and `b` are toggles relative to it. Absent =
    /// `DEFAULT_KERNEL` (6.18) and not written when it is, so every older link and scenario
    /// reproduces bit-identically.
    #[serde(default = "default_kernel", skip_serializing_if = "is_default_kernel")]
    pub kernel: String,
    /// Side B's release when it is not `kernel` (a release-to-release A/B, e.g. 6.18 against
    /// 6.19 on one box); `b` and `features_b` are then relative to it. Absent = B runs `kernel`,
    /// and not written, so every older link and scenario reproduces bit-identically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_b: Option<String>,
    /// Kernel knobs (`llc_balancing::KNOBS`: `CONFIG_SCHED_CACHE`, `llc_balancing/...`), key ->
    /// value; only a release with the merged cache-aware code takes them. Absent = none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sched: BTreeMap<String, serde_json::Value>,
    /// Overrides of screened assumptions by name (`assumptions::ROWS`, each within its plausible
    /// range): what `sensitivity` varies. Absent = none, and not written then, so every older
    /// link and scenario reproduces bit-identically.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub assume: BTreeMap<String, u64>,
    /// sched features side A writes to /sys/kernel/debug/sched/features on top of the release's
    /// defaults, as debugfs takes them (`NO_NI_RANDOM`, `NEXT_BUDDY`); `sched_features.rs`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features_a: Vec<String>,
    /// The same for side B.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features_b: Vec<String>,
    /// A sched_ext scheduler that runs side A's tasks instead of the fair class (`scenario/scx.rs`).
    /// Absent = none, and not written then, so every older scenario reproduces bit-identically.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scx_a: Option<scx::ScxChoice>,
    /// The same for side B.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scx_b: Option<scx::ScxChoice>,
}

fn default_kernel() -> String {
    DEFAULT_KERNEL.into()
}
fn is_default_kernel(k: &String) -> bool {
    k == DEFAULT_KERNEL
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
    /// The effective patch set: the release's merged changes plus the side's toggles.
    pub patches: Patches,
    /// The release that runs.
    pub kernel: &'static str,
    /// The kernel knobs set (`llc_balancing::KNOBS`), validated.
    pub sched: BTreeMap<String, u32>,
    pub patch_names: Vec<String>,
    /// The features the side switched from the release's defaults, as debugfs takes them.
    pub feature_names: Vec<String>,
    pub hz: u32,
    pub seconds: f64,
    pub seed: u64,
    pub workload: String,
    pub knobs: Knobs,
    /// Warm-up, simulated seconds (0 ..< seconds).
    pub warmup: f64,
    /// The assumed figures (the table's, with the scenario's overrides).
    pub assume: Assumptions,
    /// The side's sched_ext scheduler, if any (opened once: the loader accepts it).
    pub scx: Option<crate::sched::ScxObject>,
    /// Its file name.
    pub scx_file: Option<String>,
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
            kernel: DEFAULT_KERNEL.into(),
            kernel_b: None,
            sched: BTreeMap::new(),
            assume: BTreeMap::new(),
            features_a: vec![],
            features_b: vec![],
            scx_a: None,
            scx_b: None,
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
pub(crate) fn warmup_ok(warmup: f64, seconds: f64) -> bool {
    warmup.is_finite() && warmup >= 0.0 && warmup <= seconds - MIN_SECONDS
}

pub(crate) fn knob_string(v: &serde_json::Value) -> String {
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

    /// The events one side of this experiment is estimated to take (`estimate_events`, the limit
    /// check's figure): the page weighs its runs by it for a job's time left. `None` while the
    /// machine does not resolve.
    pub fn estimated_events(&self) -> Option<f64> {
        let cpus = self.machine_spec().ok()?.nr_cpus();
        let tasks = workload::task_count(&self.workload.name, &self.knobs(), cpus as usize);
        Some(estimate_events(cpus, tasks, self.hz, self.seconds))
    }

    /// The release a side runs and the field that names it: `kernel` for A, and for B too unless
    /// `kernel_b` is given.
    pub fn kernel_field(&self, side: Side) -> (&'static str, &str) {
        match (&self.kernel_b, side) {
            (Some(k), Side::B) => ("kernel_b", k.as_str()),
            _ => ("kernel", self.kernel.as_str()),
        }
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
        let mut spec = self.machine_spec().map_err(|e| errs.extend(e.0)).ok();
        let assume = spec.as_ref().and_then(|s| {
            assumptions::resolve(&self.assume, &s.latency)
                .map_err(|e| errs.extend(e))
                .ok()
        });
        if let (Some(s), Some(a)) = (&mut spec, &assume) {
            // the machine's transfer table at the scenario's scale (100: the table itself)
            s.latency = s.latency.scaled(a.xfer_pct);
        }
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
        // Both sides are resolved whichever is asked for, so a bad B is reported with A's run.
        let mut patches = Patches::default();
        let mut kernel = None;
        let sides = [
            (Side::A, "a", &self.a, "features_a", &self.features_a),
            (Side::B, "b", &self.b, "features_b", &self.features_b),
        ];
        for (this, field, names, ffield, features) in sides {
            let (kfield, kname) = self.kernel_field(this);
            let Some(k) = kernels::info(kname) else {
                let mut err = kernels::kernel_error(kname);
                err.field = kfield.into();
                // one error for one bad release, whichever sides run it
                if !errs.contains(&err) {
                    errs.push(err);
                }
                continue;
            };
            let resolved = kernels::resolve(k, field, names).and_then(|mut p| {
                sched_features::apply(k.name, ffield, features, &mut p.features).map(|()| p)
            });
            let has = kernels::merged(k).merged.sched_cache;
            let shared = crate::llc_balancing::resolve(k.name, has, &self.sched);
            // `sched` applies to both sides: its errors once, from the first side that has them
            if let Err(e) = &shared {
                for x in e {
                    if !errs.contains(x) {
                        errs.push(x.clone());
                    }
                }
            }
            // a side's own knob settings (`KEY=VALUE` in its list), over `sched`
            let own = side_settings(names);
            let own_ok = own.is_empty()
                || match crate::llc_balancing::resolve(k.name, has, &own) {
                    Err(e) => {
                        errs.extend(e.into_iter().map(|x| {
                            let msg = format!("{}: {}", x.field, x.message);
                            FieldError::new(field, msg)
                        }));
                        false
                    }
                    Ok(_) => true,
                };
            match resolved {
                Err(e) => errs.push(e),
                Ok(mut p) if this == side => {
                    if let Ok(l) = shared {
                        p.llc = l;
                    }
                    if own_ok && !own.is_empty() {
                        let mut all = self.sched.clone();
                        all.extend(own);
                        if let Ok(l) = crate::llc_balancing::resolve(k.name, has, &all) {
                            p.llc = l;
                        }
                    }
                    patches = p;
                    kernel = Some(k);
                }
                Ok(_) => {}
            }
        }
        let mut scx = None;
        if let Some(spec) = &spec {
            for (field, c) in [("scx_a", &self.scx_a), ("scx_b", &self.scx_b)] {
                let Some(c) = c else { continue };
                match scx::resolve(field, c, spec.nr_cpus() as u32) {
                    Ok(o) if (field == "scx_a") == (side == Side::A) => scx = Some(o),
                    Ok(_) => {}
                    Err(e) => errs.push(e),
                }
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
        let (Some(spec), Some(kernel), Some(assume)) = (spec, kernel, assume) else {
            unreachable!("a machine or kernel error was reported above")
        };
        let topo = Topology::new(spec)?;
        workload::check_machine(&self.workload.name, &knobs, &topo, &assume)?;
        Ok(RunSpec {
            topo,
            patches,
            kernel: kernel.name,
            sched: {
                let mut all = self.sched.clone();
                all.extend(side_settings(if side == Side::A {
                    &self.a
                } else {
                    &self.b
                }));
                all
            }
            .iter()
            .filter_map(|(k, v)| {
                let knob = crate::llc_balancing::knob(k)?;
                knob.parse(&knob_string(v))
                    .ok()
                    .map(|x| (knob.key.to_string(), x))
            })
            .collect(),
            patch_names: if side == Side::A {
                self.a.clone()
            } else {
                self.b.clone()
            },
            feature_names: sched_features::changed(kernel.name, &patches.features),
            hz: self.hz,
            seconds: self.seconds,
            seed: self.seed,
            workload: self.workload.name.clone(),
            knobs,
            warmup: self.warmup,
            assume,
            scx,
            scx_file: match side {
                Side::A => self.scx_a.as_ref(),
                Side::B => self.scx_b.as_ref(),
            }
            .map(|c| c.file.clone()),
        })
    }
}

/// A side's own kernel knob settings (`KEY=VALUE` entries of its patch list) as a `sched` map.
fn side_settings(names: &[String]) -> BTreeMap<String, serde_json::Value> {
    names
        .iter()
        .filter_map(|n| crate::llc_balancing::side_setting(n))
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect()
}

impl Experiment {
    /// An A/B must compare two different kernels: refused (field `b`, naming why) when the sides
    /// ask for different things and both resolve to the same code and knobs, e.g. a story's
    /// toggles all merged by the chosen release: the experiment the user set up is gone. Sides that
    /// ask for the same thing (no toggle on either: one kernel run twice) are what they say and run.
    /// Checked before an A/B runs (`compare`, the page); a one-side `run` never needs it.
    pub fn check_ab(&self) -> Result<(), Invalid> {
        let (a, b) = (self.run_spec(Side::A)?, self.run_spec(Side::B)?);
        if a.patches != b.patches || a.kernel != b.kernel {
            return Ok(());
        }
        let k = a.kernel;
        let set = |v: &[String]| -> Vec<String> {
            let mut x: Vec<String> = v.iter().map(|s| s.trim().to_string()).collect();
            x.sort();
            x.dedup();
            x
        };
        let (sa, sb) = (set(&self.a), set(&self.b));
        let differ: Vec<&str> = sa
            .iter()
            .filter(|n| !sb.contains(n))
            .chain(sb.iter().filter(|n| !sa.contains(n)))
            .map(String::as_str)
            .collect();
        if differ.is_empty() {
            return Ok(());
        }
        let why = format!(
            "what differs between A and B ({}) is merged in kernel {k}, so both sides run it",
            differ.join(", ")
        );
        let hint = if kernels::info(k).is_some_and(|i| kernels::merged(i).merged.sched_cache) {
            "; to compare cache-aware scheduling on against off here, give one side CONFIG_SCHED_CACHE=n or llc_balancing/enabled=0"
        } else {
            "; tick a toggle on one side only, or pick the release before the one that merged it"
        };
        Err(FieldError::new(
            "b",
            format!("B is the same kernel as A: {why}, and the two runs would be identical{hint}"),
        )
        .into())
    }
}

/// Rough event count of a run: ticks, balancing and about 10 events per task per ms of activity.
pub fn estimate_events(cpus: u64, tasks: u64, hz: u32, seconds: f64) -> f64 {
    seconds * (cpus as f64 * hz as f64 * 4.0 + tasks.min(cpus * 4) as f64 * 30_000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An A/B of one kernel against itself is refused before it runs, with why; on 7.2 a side's
    /// own CONFIG_SCHED_CACHE=n (or llc_balancing/enabled=0) makes cache-aware on against off.
    #[test]
    fn an_ab_of_identical_sides_is_refused_and_7_2_compares_cache_aware_per_side() {
        let mut e = Experiment {
            a: vec!["cache-aware".into()],
            b: vec!["cache-aware".into(), "cas-skip-many-threads".into()],
            ..Default::default()
        };
        e.machine.preset = "milan-2s".into();
        assert!(e.check_ab().is_ok(), "6.18: the toggles differ");
        e.kernel = "7.2".into();
        e.validate().unwrap();
        let err = e.check_ab().unwrap_err();
        assert_eq!(err.0[0].field, "b");
        for want in [
            "merged in kernel 7.2",
            "cas-skip-many-threads",
            "CONFIG_SCHED_CACHE=n",
        ] {
            assert!(
                err.0[0].message.contains(want),
                "{want}: {}",
                err.0[0].message
            );
        }
        // one kernel run twice, as asked, is not refused
        Experiment::default().check_ab().unwrap();
        for off in ["CONFIG_SCHED_CACHE=n", "llc_balancing/enabled=0"] {
            e.a = vec![];
            e.b = vec![off.into()];
            e.check_ab().unwrap();
            let (a, b) = (e.run_spec(Side::A).unwrap(), e.run_spec(Side::B).unwrap());
            assert!(a.patches.llc.config && a.patches.llc.enabled, "{off}");
            assert!(!(b.patches.llc.config && b.patches.llc.enabled), "{off}");
            assert!(b.sched.iter().any(|(k, _)| off.starts_with(k.as_str())));
            assert!(a.sched.is_empty());
        }
        // before 7.2 a side's knob is refused on its side, naming the knob
        e.kernel = "7.0".into();
        let err = e.validate().unwrap_err();
        assert_eq!(err.0[0].field, "b");
        assert!(
            err.0[0].message.starts_with("llc_balancing/enabled:"),
            "{}",
            err.0[0].message
        );
    }

    /// `kernel_b` makes an A/B of two releases: each side resolves its toggles against its own
    /// release, the A/B is not refused for having no toggle, and a bad B release is named as
    /// `kernel_b` (A still validates on its own).
    #[test]
    fn an_ab_of_two_releases_resolves_each_side_on_its_own() {
        let mut e = Experiment {
            kernel_b: Some("6.19".into()),
            ..Default::default()
        };
        e.machine.preset = "gnr-2s-96c-snc3".into();
        e.check_ab().unwrap();
        let (a, b) = (e.run_spec(Side::A).unwrap(), e.run_spec(Side::B).unwrap());
        assert_eq!((a.kernel, b.kernel), ("6.18", "6.19"));
        assert_ne!(
            a.patches, b.patches,
            "6.19 merged the serialize-after-swb fix"
        );
        // B's toggles are relative to B's release: asking 6.19's merged fix off is refused on b
        e.b = vec!["-serialize-after-swb".into()];
        let err = e.validate().unwrap_err();
        assert_eq!(err.0[0].field, "b", "{err:?}");
        e.b.clear();
        e.kernel_b = Some("9.9".into());
        let err = e.validate().unwrap_err();
        assert_eq!(err.0.len(), 1, "{err:?}");
        assert_eq!(err.0[0].field, "kernel_b");
        assert!(
            e.run_spec(Side::A).is_err(),
            "a bad B refuses the whole A/B"
        );
        // B on A's release is the one-release A/B it always was
        e.kernel_b = Some("6.18".into());
        assert_eq!(e.run_spec(Side::B).unwrap().kernel, "6.18");
        let a_only = Experiment {
            kernel_b: None,
            ..e.clone()
        };
        assert_eq!(
            e.run_spec(Side::B).unwrap().patches,
            a_only.run_spec(Side::B).unwrap().patches
        );
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
}
