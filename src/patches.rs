//! Patch toggles. Each one changes only the code path its commit changes; names are append-only
//! (links and the CLI use them).

use crate::error::FieldError;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PatchInfo {
    pub name: &'static str,
    pub description: &'static str,
    pub commit: &'static str,
}

pub const PATCHES: &[PatchInfo] = &[
    PatchInfo {
        name: "skip-not-due",
        description: "sched_balance_domains: check the balance interval before the sched_balance_running cmpxchg (seed 000, v2)",
        commit: "3324b2180c17",
    },
    PatchInfo {
        name: "serialize-after-swb",
        description: "move the SD_SERIALIZE cmpxchg into sched_balance_rq after should_we_balance (PeterZ's suggestion, v3/v4)",
        commit: "2265c5d4deef",
    },
    PatchInfo {
        name: "serialize-newidle",
        description: "newidle balancing on SD_SERIALIZE domains takes sched_balance_running too",
        commit: "522fb20fbdbe",
    },
    PatchInfo {
        name: "snc3-distance-fix",
        description: "sched domains use the averaged cross-socket distance on GNR/CWF SNC-3 (remote = 24)",
        commit: "4d6dd05d07d0",
    },
    PatchInfo {
        name: "skew-tick",
        description: "boot option skew_tick=1: per-CPU tick offsets instead of one instant",
        commit: "skew_tick=1",
    },
    PatchInfo {
        name: "cache-aware",
        description: "cache-aware scheduling RFC v4: mm occupancy, task_cache_work, preferred LLC in load balancing",
        commit: "RFC v4 01-24/28",
    },
    PatchInfo {
        name: "cas-skip-many-threads",
        description: "RFC v4 25/28: exceed_llc_nr() on every account_mm_sched, mm_sched_cpu = -1 written whenever it holds",
        commit: "RFC v4 25/28",
    },
    PatchInfo {
        name: "cas-nr-running-avg-own-line",
        description: "fix 1: nr_running_avg ____cacheline_aligned_in_smp (its own cache line)",
        commit: "seed 002 fix 1",
    },
    PatchInfo {
        name: "cas-write-if-changed",
        description: "fix 2: write mm_sched_cpu = -1 only when it differs",
        commit: "seed 002 fix 2",
    },
];

/// The set of toggles of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Patches {
    pub skip_not_due: bool,
    pub serialize_after_swb: bool,
    pub serialize_newidle: bool,
    pub snc3_distance_fix: bool,
    pub skew_tick: bool,
    pub cache_aware: bool,
    /// The three below change code inside cache-aware scheduling; without `cache-aware` they do nothing.
    pub cas_skip_many_threads: bool,
    pub cas_nr_running_avg_own_line: bool,
    pub cas_write_if_changed: bool,
}

impl Patches {
    /// Parses patch names (a field name is given for the error message).
    pub fn parse<S: AsRef<str>>(field: &str, names: &[S]) -> Result<Patches, FieldError> {
        let mut p = Patches::default();
        for n in names {
            let n = n.as_ref().trim();
            if n.is_empty() {
                continue;
            }
            let flag = match n {
                "skip-not-due" => &mut p.skip_not_due,
                "serialize-after-swb" => &mut p.serialize_after_swb,
                "serialize-newidle" => &mut p.serialize_newidle,
                "snc3-distance-fix" => &mut p.snc3_distance_fix,
                "skew-tick" => &mut p.skew_tick,
                "cache-aware" => &mut p.cache_aware,
                "cas-skip-many-threads" => &mut p.cas_skip_many_threads,
                "cas-nr-running-avg-own-line" => &mut p.cas_nr_running_avg_own_line,
                "cas-write-if-changed" => &mut p.cas_write_if_changed,
                other => {
                    let allowed: Vec<&str> = PATCHES.iter().map(|p| p.name).collect();
                    return Err(FieldError::new(
                        field,
                        format!("unknown patch {other:?}: allowed {}", allowed.join(", ")),
                    ));
                }
            };
            *flag = true;
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_patch_parses_and_unknown_names_are_refused() {
        for p in PATCHES {
            assert_ne!(
                Patches::parse("a", &[p.name]).unwrap(),
                Patches::default(),
                "{}",
                p.name
            );
        }
        let e = Patches::parse("b", &["skip-not-due", "bogus"]).unwrap_err();
        assert_eq!(e.field, "b");
        assert!(e.message.contains("bogus") && e.message.contains("skip-not-due"));
    }
}
