//! `CONFIG_SCHED_CACHE` and the debugfs knobs of `/sys/kernel/debug/sched/llc_balancing/` as
//! scenario knobs: the merged cache-aware scheduling of 7.2 (tip `sched/cache`, merge
//! a26d9208c137). A scenario sets them with `--set llc_balancing/imb_pct=30` (CLI), the same key in
//! a link, or the experiment's `sched` object (JSON); every value is checked against its range and
//! a release without the merged code refuses them by name.
//!
//! Defaults are the kernel's, as read in the merged code (fair.c: `llc_aggr_tolerance = 1`,
//! `llc_epoch_period = EPOCH_PERIOD` (HZ/100), `llc_epoch_affinity_timeout = 5`, `llc_imb_pct = 20`,
//! `llc_overaggr_pct = 50`; topology.c: `sysctl_sched_cache_user = 1`; init/Kconfig:
//! `SCHED_CACHE` default y). The ranges are the model's: the kernel takes any u32 (debugfs_create_u32);
//! every value past a range's end behaves as the end does (docs/MODEL.md, §7.2).

use crate::error::{FieldError, range_or_nan};
use serde::Serialize;
use std::collections::BTreeMap;

/// The knobs of one run; `Default` is the kernel's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlcBalancing {
    /// `CONFIG_SCHED_CACHE` (build option; default y).
    pub config: bool,
    /// `llc_balancing/enabled` (`sysctl_sched_cache_user`, default 1).
    pub enabled: bool,
    /// `llc_balancing/aggr_tolerance` (`llc_aggr_tolerance`, default 1; 0 never aggregates a
    /// multi-threaded process, >= 100 ignores the thread-count and footprint gates).
    pub aggr_tolerance: u32,
    /// `llc_balancing/epoch_period` in jiffies (`llc_epoch_period`); None: `EPOCH_PERIOD` = HZ/100.
    pub epoch_period: Option<u32>,
    /// `llc_balancing/epoch_affinity_timeout` in epochs (default 5).
    pub epoch_affinity_timeout: u32,
    /// `llc_balancing/imb_pct` (`llc_imb_pct`, default 20): `util_greater()`'s margin.
    pub imb_pct: u32,
    /// `llc_balancing/overaggr_pct` (`llc_overaggr_pct`, default 50): `fits_llc_capacity()`'s share.
    pub overaggr_pct: u32,
}

impl Default for LlcBalancing {
    fn default() -> Self {
        LlcBalancing {
            config: true,
            enabled: true,
            aggr_tolerance: 1,
            epoch_period: None,
            epoch_affinity_timeout: 5,
            imb_pct: 20,
            overaggr_pct: 50,
        }
    }
}

impl LlcBalancing {
    /// `llc_epoch_period` in jiffies at `hz` (`max(period, 1)` as `__update_mm_sched` reads it).
    pub fn epoch_period_jiffies(&self, hz: u32) -> u64 {
        self.epoch_period.map_or(hz as u64 / 100, u64::from).max(1)
    }

    /// `get_sched_cache_scale(mul)`: 0 at tolerance 0, None (INT_MAX: the gate is off) at >= 100,
    /// else `1 + (tol - 1) * mul`.
    pub fn scale(&self, mul: u64) -> Option<u64> {
        match self.aggr_tolerance {
            0 => Some(0),
            t if t >= 100 => None,
            t => Some(1 + (t as u64 - 1) * mul),
        }
    }
}

/// One knob: its key (CLI `--set`, link, JSON `sched` object), range and meaning.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Knob {
    pub key: &'static str,
    pub min: u32,
    pub max: u32,
    /// The default as text ("HZ/100" for the epoch period).
    pub default: &'static str,
    pub description: &'static str,
    #[serde(skip)]
    pub set: fn(&mut LlcBalancing, u32),
}

/// Every knob, append-only (links use the keys).
pub const KNOBS: &[Knob] = &[
    Knob {
        key: "CONFIG_SCHED_CACHE",
        min: 0,
        max: 1,
        default: "1",
        description: "build option: 1 (y, the Kconfig default) or 0 (n: no cache-aware code at all)",
        set: |l, v| l.config = v == 1,
    },
    Knob {
        key: "llc_balancing/enabled",
        min: 0,
        max: 1,
        default: "1",
        description: "debugfs switch (sysctl_sched_cache_user); active only on a machine with more than one LLC",
        set: |l, v| l.enabled = v == 1,
    },
    Knob {
        key: "llc_balancing/aggr_tolerance",
        min: 0,
        max: 100,
        default: "1",
        description: "llc_aggr_tolerance: scales the LLC's cores in the thread-count gate (1 + (t-1)); 0 never aggregates, 100 (or more) ignores the gate",
        set: |l, v| l.aggr_tolerance = v,
    },
    Knob {
        key: "llc_balancing/epoch_period",
        min: 1,
        max: 10_000,
        default: "HZ/100",
        description: "llc_epoch_period, jiffies: occupancy epoch and the rescan interval of task_cache_work",
        set: |l, v| l.epoch_period = Some(v),
    },
    Knob {
        key: "llc_balancing/epoch_affinity_timeout",
        min: 0,
        max: 10_000,
        default: "5",
        description: "llc_epoch_affinity_timeout, epochs: a preference older than this is dropped in account_mm_sched",
        set: |l, v| l.epoch_affinity_timeout = v,
    },
    Knob {
        key: "llc_balancing/imb_pct",
        min: 0,
        max: 1000,
        default: "20",
        description: "llc_imb_pct: util_greater() margin between two LLCs, percent",
        set: |l, v| l.imb_pct = v,
    },
    Knob {
        key: "llc_balancing/overaggr_pct",
        min: 0,
        max: 1000,
        default: "50",
        description: "llc_overaggr_pct: fits_llc_capacity() share of the LLC's capacity, percent (x3/2 without SMT)",
        set: |l, v| l.overaggr_pct = v,
    },
];

/// The table entry of a key.
pub fn knob(key: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.key == key)
}

impl Knob {
    /// A value as text (CLI, link), range-checked; `y`/`n` for the 0..=1 knobs too.
    pub fn parse(&self, raw: &str) -> Result<u32, FieldError> {
        let t = raw.trim();
        let word = match t {
            "y" | "on" if self.max == 1 => Some(1),
            "n" | "off" if self.max == 1 => Some(0),
            _ => None,
        };
        match word.or_else(|| t.parse::<u32>().ok()) {
            Some(v) if (self.min..=self.max).contains(&v) => Ok(v),
            _ => Err(FieldError::new(
                self.key,
                range_or_nan(
                    raw,
                    format!(
                        "{raw:?} is out of range: allowed {}..={} ({}; default {})",
                        self.min, self.max, self.description, self.default
                    ),
                ),
            )),
        }
    }
}

/// A side's own kernel knob setting in its patch list (`a`, `b`): `KEY=VALUE`, e.g.
/// `CONFIG_SCHED_CACHE=n` or `llc_balancing/enabled=0`, over the scenario's `sched` for that side
/// only: on 7.2, where every cache-aware toggle is merged, this is how cache-aware scheduling on
/// and off become an A/B. Any entry with `=` is one (an unknown key is then refused by name).
pub fn side_setting(entry: &str) -> Option<(&str, &str)> {
    entry.split_once('=').map(|(k, v)| (k.trim(), v.trim()))
}

/// The settings a side can take as a checkbox of the page: (entry, what it does).
pub const SIDE_SETTINGS: &[(&str, &str)] = &[
    (
        "CONFIG_SCHED_CACHE=n",
        "this side's kernel built without cache-aware scheduling (7.2): against the other side's CONFIG_SCHED_CACHE=y, cache-aware on against off",
    ),
    (
        "llc_balancing/enabled=0",
        "cache-aware scheduling built in but switched off at run time on this side (echo 0 > /sys/kernel/debug/sched/llc_balancing/enabled, 7.2)",
    ),
];

/// The knobs of a scenario (`sched` object: key -> value) resolved on top of the defaults, all
/// errors at once. `merged` says whether the release has the merged code (7.2 on): before it,
/// every key is refused (the RFC v4 toggles carry their own constants).
pub fn resolve(
    kernel: &str,
    merged: bool,
    map: &BTreeMap<String, serde_json::Value>,
) -> Result<LlcBalancing, Vec<FieldError>> {
    let mut l = LlcBalancing::default();
    let mut errs = Vec::new();
    for (k, v) in map {
        let Some(knob) = knob(k) else {
            let keys: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
            let shown: String = k.chars().take(60).collect();
            errs.push(FieldError::new(
                "sched",
                format!("unknown kernel knob {shown:?}: allowed {}", keys.join(", ")),
            ));
            continue;
        };
        if !merged {
            errs.push(FieldError::new(
                knob.key,
                format!(
                    "applies from kernel 7.2 (cache-aware scheduling as merged, CONFIG_SCHED_CACHE); kernel {kernel} has no llc_balancing/ (the RFC v4 toggles cache-aware, cas-* carry their own constants)"
                ),
            ));
            continue;
        }
        let raw = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        match knob.parse(&raw) {
            Ok(x) => (knob.set)(&mut l, x),
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() { Ok(l) } else { Err(errs) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(kv: &[(&str, &str)]) -> BTreeMap<String, serde_json::Value> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), serde_json::Value::from(*v)))
            .collect()
    }

    #[test]
    fn defaults_are_the_kernels_and_every_knob_sets_its_field() {
        let d = resolve("7.2", true, &BTreeMap::new()).unwrap();
        assert_eq!(d, LlcBalancing::default());
        assert_eq!(d.epoch_period_jiffies(1000), 10);
        assert_eq!(d.epoch_period_jiffies(250), 2);
        assert_eq!(d.epoch_period_jiffies(100), 1);
        assert_eq!(d.scale(1), Some(1));
        for k in KNOBS {
            let v = if k.max == 1 { "0" } else { "7" };
            let l = resolve("7.2", true, &map(&[(k.key, v)])).unwrap();
            assert_ne!(l, d, "{} changed nothing", k.key);
        }
    }

    #[test]
    fn tolerance_scales_as_get_sched_cache_scale() {
        let at = |t: u32| LlcBalancing {
            aggr_tolerance: t,
            ..Default::default()
        };
        assert_eq!(at(0).scale(256), Some(0));
        assert_eq!(at(99).scale(256), Some(1 + 98 * 256));
        assert_eq!(at(100).scale(1), None);
    }

    #[test]
    fn bad_values_name_the_field_and_the_range_and_old_releases_refuse() {
        let e = resolve("7.2", true, &map(&[("llc_balancing/imb_pct", "2000")])).unwrap_err();
        assert_eq!(e[0].field, "llc_balancing/imb_pct");
        assert!(e[0].message.contains("0..=1000"), "{}", e[0].message);
        let e = resolve("7.2", true, &map(&[("llc_balancing/epoch_period", "x")])).unwrap_err();
        assert!(e[0].message.contains("not a number"), "{}", e[0].message);
        let e = resolve("7.2", true, &map(&[("llc_balancing/bogus", "1")])).unwrap_err();
        assert_eq!(e[0].field, "sched");
        assert!(e[0].message.contains("llc_balancing/imb_pct"));
        let e = resolve("6.18", false, &map(&[("llc_balancing/enabled", "0")])).unwrap_err();
        assert_eq!(e[0].field, "llc_balancing/enabled");
        assert!(e[0].message.contains("7.2") && e[0].message.contains("6.18"));
        let l = resolve("7.2", true, &map(&[("CONFIG_SCHED_CACHE", "n")])).unwrap();
        assert!(!l.config);
    }
}
