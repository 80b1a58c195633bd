//! Patch toggles. Each one changes only the code path its commit changes; names are append-only
//! (links and the CLI use them).
//!
//! Adding a patch: one `PATCHES` entry (its name, commit, description and the flag it sets), the
//! `bool` field of `Patches` that entry names, the mechanism that reads the field, and a test.

use crate::error::FieldError;
use crate::llc_balancing::LlcBalancing;
use crate::sched_features::Features;
use serde::Serialize;

/// One patch toggle. The page and `presets` receive the serialized form (`name`, `description`,
/// `commit`); `flag` is which field of `Patches` the name sets.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct PatchInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// The kernel commit, the RFC patch or the boot option the toggle stands for.
    pub commit: &'static str,
    #[serde(skip)]
    pub flag: fn(&mut Patches) -> &mut bool,
}

/// Every toggle, append-only, in the order the page and `presets` list them.
pub const PATCHES: &[PatchInfo] = &[
    PatchInfo {
        name: "skip-not-due",
        description: "sched_balance_domains: check the balance interval before the sched_balance_running cmpxchg (seed 000, v2)",
        commit: "LKML v2 2025-10-28 (unmerged)",
        flag: |p| &mut p.skip_not_due,
    },
    PatchInfo {
        name: "serialize-after-swb",
        description: "move the SD_SERIALIZE cmpxchg into sched_balance_rq after should_we_balance (PeterZ's suggestion, v3/v4)",
        commit: "3324b2180c17 (tip 2265c5d4deef)",
        flag: |p| &mut p.serialize_after_swb,
    },
    PatchInfo {
        name: "serialize-newidle",
        description: "newidle balancing on SD_SERIALIZE domains takes sched_balance_running too",
        commit: "522fb20fbdbe",
        flag: |p| &mut p.serialize_newidle,
    },
    PatchInfo {
        name: "snc3-distance-fix",
        description: "sched domains use the averaged cross-socket distance on GNR/CWF SNC-3 (remote = 24)",
        commit: "4d6dd05d07d0",
        flag: |p| &mut p.snc3_distance_fix,
    },
    PatchInfo {
        name: "skew-tick",
        description: "boot option skew_tick=1: per-CPU tick offsets instead of one instant",
        commit: "skew_tick=1",
        flag: |p| &mut p.skew_tick,
    },
    PatchInfo {
        name: "cache-aware",
        description: "cache-aware scheduling RFC v4: mm occupancy, task_cache_work, preferred LLC in load balancing",
        commit: "RFC v4 01-24/28",
        flag: |p| &mut p.cache_aware,
    },
    PatchInfo {
        name: "cas-skip-many-threads",
        description: "RFC v4 25/28: exceed_llc_nr() on every account_mm_sched, mm_sched_cpu = -1 written whenever it holds",
        commit: "RFC v4 25/28",
        flag: |p| &mut p.cas_skip_many_threads,
    },
    PatchInfo {
        name: "cas-nr-running-avg-own-line",
        description: "fix 1: nr_running_avg ____cacheline_aligned_in_smp (its own cache line)",
        commit: "seed 002 fix 1",
        flag: |p| &mut p.cas_nr_running_avg_own_line,
    },
    PatchInfo {
        name: "cas-write-if-changed",
        description: "fix 2: write mm_sched_cpu = -1 only when it differs",
        commit: "seed 002 fix 2",
        flag: |p| &mut p.cas_write_if_changed,
    },
    PatchInfo {
        name: "nohz-no-nr-cpus",
        description: "drop nohz.nr_cpus: no atomic inc/dec on idle entry and exit; nohz_balancer_kick checks the time first, then cpumask_empty(idle_cpus_mask) (the series 6b67c8a72e56, 94e70734b4d0, 5d86d542f68f, v7.0)",
        commit: "5d86d542f68f",
        flag: |p| &mut p.nohz_no_nr_cpus,
    },
    PatchInfo {
        name: "nohz-ilb-round-robin",
        description: "find_new_ilb() starts after nohz.ilb_cpu_last instead of the lowest idle CPU (lkml 2026-04, Imran Khan, \"sched/fair: distribute nohz ILB work across idle CPUs\", patch 2/2)",
        commit: "lkml 2604.2/06474",
        flag: |p| &mut p.nohz_ilb_round_robin,
    },
    PatchInfo {
        name: "cas-exceed-llc-capacity",
        description: "RFC v4 26/28 and 27/28: exceed_llc_capacity(), the process's RSS (anon + shmem pages) against the L3 size (llc_ignore_rss at its default 1), ORed into account_mm_sched()'s invalidation after exceed_llc_nr(), an early return of task_cache_work() and mig_allow in get_migrate_hint(); with cache-aware and cas-skip-many-threads, the series as posted",
        commit: "RFC v4 26/28, 27/28",
        flag: |p| &mut p.cas_exceed_llc_capacity,
    },
];

/// The set of toggles of one run: one field per `PATCHES` entry, named as the entry with `_` for
/// `-` (a test checks both ways).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    pub nohz_no_nr_cpus: bool,
    pub nohz_ilb_round_robin: bool,
    /// RFC v4 26/28 + 27/28 (`exceed_llc_capacity()`); like the other `cas-*` toggles it does
    /// nothing without `cache-aware`, and 7.2's merged form stands in for it on 7.2.
    pub cas_exceed_llc_capacity: bool,
    /// Changes only a kernel release sets (`kernels::KERNELS`); no toggle names them.
    pub merged: Merged,
    /// `CONFIG_SCHED_CACHE` and the `llc_balancing/` knobs: read only where `merged.sched_cache`.
    pub llc: LlcBalancing,
    /// The sched features (`/sys/kernel/debug/sched/features`) the run switches; the release's
    /// defaults unless a scenario writes them (`sched_features::apply`).
    pub features: Features,
}

/// The toggle that was the NEXT_BUDDY feature before features were switchable: a side listing
/// it (an old link or scenario) asks for `NEXT_BUDDY` on that side (`kernels::resolve`).
pub const NEXT_BUDDY_ALIAS: &str = "next-buddy";

/// The merged changes of a release that are not toggles (`kernels::Effect::Internal`), each named
/// after what the commit changes; all off is v6.18.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Merged {
    /// d206fbad9328 (v6.19): no 3/2 bump of max_newidle_lb_cost after a newidle pass that pulled
    /// nothing, and no cap at migration_cost + 200 in update_newidle_cost.
    pub newidle_cost_bump_reverted: bool,
    /// 33cf66d88306 (v6.19): the NI_RANDOM feature (proportional newidle balance).
    pub ni_random: bool,
    /// df0d98475954 and the rest of tip `sched/cache` (v7.2): cache-aware scheduling as merged
    /// (mm->sc_stat, the llc_balancing/ knobs, invalid_llc_nr(), update_avg_scale(),
    /// fits_llc_capacity() with llc_overaggr_pct); the `cache-aware` toggle's code paths take
    /// their merged form.
    pub sched_cache: bool,
    /// a2b4cf39d9d3 (v7.2): one thread per epoch scans: task_cache_work() claims
    /// mm->sc_stat.next_scan with try_cmpxchg.
    pub sched_cache_next_scan: bool,
    /// e837456fdca8 with 15257cc2f905 (v6.19): check_preempt_wakeup_fair() as reimplemented for
    /// NEXT_BUDDY (WF_FORK and delayed wakees return before the pick; update_protect_slice() on
    /// every wakeup that does not preempt), the PICK_BUDDY check inside __pick_eevdf().
    pub next_buddy_eevdf: bool,
    /// ac8e69e69363 with 9f6d929ee2c6 (v7.1): wakeup_preempt_fair() picks with
    /// pick_next_entity(), which finishes the dequeue of a delayed entity it finds and picks
    /// again while the cfs_rq has queued entities, instead of __pick_eevdf().
    pub wakeup_pick_next_entity: bool,
}

/// The table entry of a patch name.
pub fn info(name: &str) -> Option<&'static PatchInfo> {
    PATCHES.iter().find(|p| p.name == name)
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
            let Some(entry) = info(n) else {
                let allowed: Vec<&str> = PATCHES.iter().map(|p| p.name).collect();
                // the side by name (the field of a link or experiment is `a` or `b`)
                let side = match field {
                    "a" => " in A",
                    "b" => " in B",
                    _ => "",
                };
                let n: String = n.chars().take(60).collect();
                return Err(FieldError::new(
                    field,
                    format!("unknown patch {n:?}{side}: allowed {}", allowed.join(", ")),
                ));
            };
            *(entry.flag)(&mut p) = true;
        }
        Ok(p)
    }

    /// Whether the toggle of a table entry is set.
    pub fn is_set(&self, entry: &PatchInfo) -> bool {
        let mut copy = *self;
        *(entry.flag)(&mut copy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every field of `p` with its value, read from the derived `Debug` form
    /// (`Patches { skip_not_due: false, .. }`), so the test sees the struct's own field names.
    fn fields(p: &Patches) -> Vec<(String, bool)> {
        // the release-only flags are not toggles
        let s = format!("{p:?}");
        let s = match s.split_once(", merged: ") {
            Some((head, _)) => format!("{head} }}"),
            None => s,
        };
        let body = s
            .strip_prefix("Patches { ")
            .and_then(|b| b.strip_suffix(" }"))
            .unwrap();
        body.split(", ")
            .map(|f| {
                let (k, v) = f.split_once(": ").unwrap();
                (k.to_string(), v.parse().unwrap())
            })
            .collect()
    }

    /// The fields set in `p`, by their struct field names.
    fn set_fields(p: &Patches) -> Vec<String> {
        fields(p).into_iter().filter(|f| f.1).map(|f| f.0).collect()
    }

    #[test]
    fn every_entry_sets_exactly_its_own_field_and_every_field_has_an_entry() {
        assert_eq!(
            fields(&Patches::default()).len(),
            PATCHES.len(),
            "one Patches field per entry"
        );
        for e in PATCHES {
            let p = Patches::parse("a", &[e.name]).unwrap();
            assert_eq!(
                set_fields(&p),
                vec![e.name.replace('-', "_")],
                "{} must set its own field and nothing else",
                e.name
            );
            assert!(p.is_set(e));
            for other in PATCHES.iter().filter(|o| o.name != e.name) {
                assert!(!p.is_set(other), "{} also sets {}", e.name, other.name);
            }
        }
        let all: Vec<&str> = PATCHES.iter().map(|e| e.name).collect();
        let p = Patches::parse("a", &all).unwrap();
        assert_eq!(set_fields(&p).len(), PATCHES.len());
    }

    #[test]
    fn names_are_unique_and_unknown_names_are_refused() {
        for (i, e) in PATCHES.iter().enumerate() {
            assert!(
                PATCHES[..i].iter().all(|o| o.name != e.name),
                "{} listed twice",
                e.name
            );
        }
        assert_eq!(Patches::parse("a", &["", " "]).unwrap(), Patches::default());
        let e = Patches::parse("b", &["skip-not-due", "bogus"]).unwrap_err();
        assert_eq!(e.field, "b");
        assert!(e.message.contains("bogus") && e.message.contains("skip-not-due"));
    }

    #[test]
    fn the_page_receives_name_description_commit() {
        let v = serde_json::to_value(PATCHES[0]).unwrap();
        let mut keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["commit", "description", "name"]);
    }
}
