//! Kernel releases: what each one merged in the paths the engine models, each change with the
//! commit it was read from. A scenario names its release (`kernel`, default `DEFAULT_KERNEL`);
//! its patch toggles are relative to it: the effective set is the release's merged changes plus
//! the toggles asked for (`resolve`).
//!
//! Every change is one of three kinds (`Effect`): a merged form of an existing toggle (the toggle
//! then shows as included and cannot be turned off: no revert of it is a real option), an
//! internal flag of `Patches::merged` that only a release sets (the mechanism changes the code path
//! the commit changes, named as the kernel names it), or a change listed but not modelled (with
//! why). Releases only add: each one inherits everything of the one before.
//!
//! Adding a release: one `KERNELS` entry after the last, its `changes` read from their commits
//! (tip-bot mails or the stable queue), a test that it runs every workload.

use crate::error::FieldError;
use crate::patches::{self, Merged, NEXT_BUDDY_ALIAS, Patches};
use crate::sched_features;
use serde::Serialize;

/// The release a scenario without `kernel` runs: the one the engine was first written against
/// (and the seeds were measured on). A link or JSON without the key means this release forever.
pub const DEFAULT_KERNEL: &str = "6.18";

/// What a merged change does in the model.
#[derive(Clone, Copy, Debug)]
pub enum Effect {
    /// The merged form of a patch toggle (a `patches::PATCHES` name).
    Toggle(&'static str),
    /// An internal flag (a field of `Merged`) no toggle sets.
    Internal(fn(&mut Merged) -> &mut bool),
    /// Listed, not modelled: why.
    NotModelled(&'static str),
    /// Modelled by code the engine already has for a toggle whose merged form the release runs
    /// (the RFC v4 path is the merged one here): what is reused.
    Reused(&'static str),
}

/// One change a release merged.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Change {
    /// The mainline commit (12 hex digits) the change was read from.
    pub commit: &'static str,
    /// The commit's title.
    pub title: &'static str,
    /// What the model does with it, in a sentence (the page and `presets` list it).
    pub model: &'static str,
    /// Serialized as `toggle`: the toggle this change is the merged form of, or null.
    #[serde(rename = "toggle", serialize_with = "toggle_of")]
    pub effect: Effect,
}

fn toggle_of<S: serde::Serializer>(e: &Effect, s: S) -> Result<S::Ok, S::Error> {
    match e {
        Effect::Toggle(t) => s.serialize_some(t),
        _ => s.serialize_none(),
    }
}

impl Change {
    /// The toggle this change is the merged form of, if any.
    pub fn toggle(&self) -> Option<&'static str> {
        match self.effect {
            Effect::Toggle(t) => Some(t),
            _ => None,
        }
    }
}

/// One release and the changes it merged in the modelled paths (on top of the release before).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct KernelInfo {
    /// The release as a scenario, link and CLI name it ("6.19").
    pub name: &'static str,
    /// How the release was pinned: the merge window the commits landed in.
    pub source: &'static str,
    pub changes: &'static [Change],
}

/// Every release, oldest first (names append-only: links and the CLI use them).
pub const KERNELS: &[KernelInfo] = &[
    KernelInfo {
        name: "6.18",
        source: "v6.18 (the engine's base: fair.c, topology.c, core.c of v6.18)",
        changes: &[],
    },
    KernelInfo {
        name: "6.19",
        source: "v6.19 merge window: tip sched/core, Oct-Nov 2025 (tip-bot2 mails; linux-next shortlog after 6.18-rc6)",
        changes: &[
            Change {
                commit: "4d6dd05d07d0",
                title: "sched/topology: Fix sched domain build error for GNR, CWF in SNC-3 mode",
                model: "the snc3-distance-fix toggle, always on",
                effect: Effect::Toggle("snc3-distance-fix"),
            },
            Change {
                commit: "d206fbad9328",
                title: "sched/fair: Revert max_newidle_lb_cost bump",
                model: "sched_balance_newidle passes the measured domain_cost to update_newidle_cost (no 3/2 bump when nothing was pulled) and update_newidle_cost no longer caps the max at migration_cost + 200",
                effect: Effect::Internal(|m| &mut m.newidle_cost_bump_reverted),
            },
            Change {
                commit: "33cf66d88306",
                title: "sched/fair: Proportional newidle balance",
                model: "the NI_RANDOM sched feature (default on): each SD_BALANCE_NEWIDLE domain is balanced with probability (1 + newidle_ratio)/1024 (sched_rng() % 1024), newidle_call/success/ratio per domain (512/256/512 at sd_init)",
                effect: Effect::Internal(|m| &mut m.ni_random),
            },
            Change {
                commit: "e837456fdca8",
                title: "sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals",
                model: "check_preempt_wakeup_fair as reimplemented (with 15257cc2f905): a WF_FORK or delayed wakee returns before the pick, update_protect_slice() runs on every wakeup that does not preempt (not only PREEMPT_SHORT ones), the PICK_BUDDY check moves into __pick_eevdf(); with NEXT_BUDDY off and every slice the base slice it differs from v6.18 only for a delayed task that load balancing attached (no preemption for it); the buddy itself is the NEXT_BUDDY sched feature",
                effect: Effect::Internal(|m| &mut m.next_buddy_eevdf),
            },
            Change {
                commit: "aceccac58ad7",
                title: "sched/fair: Enable scheduler feature NEXT_BUDDY",
                model: "no change in v6.19 as released: 4f70f106bca1 set NEXT_BUDDY back to false before v6.19 (v6.19-rc7); the NEXT_BUDDY sched feature is this commit's default",
                effect: Effect::NotModelled(
                    "turned off again before the release by 4f70f106bca1; the NEXT_BUDDY sched feature turns it on",
                ),
            },
            Change {
                commit: "15257cc2f905",
                title: "sched/fair: Revert force wakeup preemption",
                model: "part of the reimplemented check_preempt_wakeup_fair above (v6.19-rc7, Fixes: e837456fdca8): no PREEMPT_WAKEUP_RESCHED when the waker is no longer eligible",
                effect: Effect::Reused("rq.rs: check_preempt_wakeup_fair, the e837456fdca8 form"),
            },
            Change {
                commit: "4f70f106bca1",
                title: "sched/fair: Disable scheduler feature NEXT_BUDDY",
                model: "SCHED_FEAT(NEXT_BUDDY, false) again (v6.19-rc7, regressions in mysql, specjbb, daytrader): v6.19 runs without the buddy unless the NEXT_BUDDY sched feature is on",
                effect: Effect::NotModelled(
                    "a default: NEXT_BUDDY stays off (sched_features.rs lists it false)",
                ),
            },
            Change {
                commit: "3324b2180c17",
                title: "sched/fair: Skip sched_balance_running cmpxchg when balance is not due",
                model: "the serialize-after-swb toggle, always on",
                effect: Effect::Toggle("serialize-after-swb"),
            },
            Change {
                commit: "522fb20fbdbe",
                title: "sched/fair: Have SD_SERIALIZE affect newidle balancing",
                model: "the serialize-newidle toggle, always on",
                effect: Effect::Toggle("serialize-newidle"),
            },
        ],
    },
    KernelInfo {
        name: "7.0",
        source: "v7.0 merge window: tip sched/core, Jan 2026 (tip-bot2 mails of 2026-01-15 and 2026-01-22)",
        changes: &[
            Change {
                commit: "5d86d542f68f",
                title: "sched/fair: Remove nohz.nr_cpus and use weight of cpumask instead (with 6b67c8a72e56, 94e70734b4d0)",
                model: "the nohz-no-nr-cpus toggle, always on",
                effect: Effect::Toggle("nohz-no-nr-cpus"),
            },
            Change {
                commit: "4b603f1551a7",
                title: "sched: Update rq->avg_idle when a task is moved to an idle CPU",
                model: "no change: the engine already updates avg_idle whenever a task starts on an idle CPU (idle_exit), the form this commit gives",
                effect: Effect::NotModelled(
                    "the engine's avg_idle update is already the post-commit form",
                ),
            },
        ],
    },
    KernelInfo {
        name: "7.2",
        source: "v7.2 merge window: tip sched/core, merge a26d9208c137 of branch sched/cache (tip gitolite revlist 2026-05-20), with the v7.1 fixes to the modelled wakeup path (tip sched/urgent, April-May 2026). The sched/cache commit texts could not be read (no tip-bot mail of the series in the archive); the code was read in trees carrying the merged series (docs/MODEL.md, 7.2)",
        changes: &[
            Change {
                commit: "df0d98475954",
                title: "sched/cache: Introduce infrastructure for cache-aware load balancing",
                model: "the cache-aware toggle, always on (CONFIG_SCHED_CACHE=y, llc_balancing/enabled=1, active with more than one LLC)",
                effect: Effect::Toggle("cache-aware"),
            },
            Change {
                commit: "df0d98475954",
                title: "sched/cache: Introduce infrastructure for cache-aware load balancing (merged form)",
                model: "mm->sc_stat {pcpu_sched, lock, epoch, nr_running_avg, next_scan, footprint, cpu}, one ____cacheline_aligned_in_smp line; epoch_period and epoch_affinity_timeout knobs (the stale test in signed long); task_tick_cache returns unless sc_stat.epoch is behind the rq's (time_after_eq); task_cache_work scans every online CPU (NUMA balancing off) and averages with update_avg_scale (divisor clamp(llc_size/4, 2, 8))",
                effect: Effect::Internal(|m| &mut m.sched_cache),
            },
            Change {
                commit: "df0d98475954",
                title: "sched/cache: the preference is cleared only when set (READ_ONCE/WRITE_ONCE of sc_stat.cpu)",
                model: "the cas-write-if-changed fix, always on: it is the merged code's form; listed under the infrastructure because the commit that brought it cannot be read",
                effect: Effect::Toggle("cas-write-if-changed"),
            },
            Change {
                commit: "deee5e27d5b6",
                title: "sched/cache: Disable cache aware scheduling for processes with high thread counts",
                model: "the cas-skip-many-threads toggle in its merged form, always on: invalid_llc_nr() = nr_threads <= 1 or !fits_capacity(nr_running_avg * SMT threads, scale(1) * sd_llc_size) (x*1280 < y*1024), scale from llc_balancing/aggr_tolerance",
                effect: Effect::Toggle("cas-skip-many-threads"),
            },
            Change {
                commit: "a2b4cf39d9d3",
                title: "sched/cache: Allow only 1 thread of the process to calculate the LLC occupancy",
                model: "task_cache_work loads sc_stat.next_scan and returns before it; else try_cmpxchg(next_scan, now + epoch_period): one scan per period per process",
                effect: Effect::Internal(|m| &mut m.sched_cache_next_scan),
            },
            Change {
                commit: "808915f982c2",
                title: "sched/cache: Avoid cache-aware scheduling for memory-heavy processes",
                model: "not modelled: exceed_llc_capacity() compares sc_stat.footprint (pages, from NUMA faults) with the LLC's bytes only when NUMA balancing is on; the engine runs with it off, where the merged code returns false",
                effect: Effect::NotModelled(
                    "NUMA balancing (its fault statistics) is not in the engine; with it off the gate is false",
                ),
            },
            Change {
                commit: "e4c9a4cb244a",
                title: "sched/cache: Add migrate_llc_task migration type for cache-aware balancing",
                model: "the engine's migrate_llc_task path (imbalance 1, the queue with most tasks preferring dst's LLC, the active pull); the merged form's migrate_degrades_llc() and LBF_LLC_PINNED are not modelled apart",
                effect: Effect::Reused("llc_lb.rs: migrate_llc_task as RFC v4 16/28"),
            },
            Change {
                commit: "f38cc2f0d8a3",
                title: "sched/cache: Prioritize tasks preferring destination LLC during balancing",
                model: "the engine's group_llc_balance (llc_balance() one level above the LLC, busiest by tasks preferring dst's LLC) with the merged fits_llc_capacity(): util*100 < cap*overaggr_pct (x3/2 without SMT), util_greater() by imb_pct",
                effect: Effect::Reused(
                    "llc_lb.rs: llc_balance, get_migrate_hint with the merged capacity rule",
                ),
            },
            Change {
                commit: "78cde54ea5f0",
                title: "sched/eevdf: Clear buddies for preempt_short (v7.1, read in its stable backport mail)",
                model: "no change in the engine: __pick_eevdf checks the buddy only with protect and a PREEMPT_WAKEUP_SHORT preemption clears it; every task has the base slice, so PREEMPT_SHORT never applies",
                effect: Effect::NotModelled(
                    "only PREEMPT_SHORT wakeups change, and no task has a shorter slice",
                ),
            },
            Change {
                commit: "ac8e69e69363",
                title: "sched/fair: Fix wakeup_preempt_fair() vs delayed dequeue (v7.1, tip sched/urgent 2026-04-29, read in its 7.0 and 6.18 stable backport mails)",
                model: "wakeup_preempt_fair() picks with pick_next_entity() instead of __pick_eevdf(): a delayed entity the pick finds is dequeued there (DEQUEUE_SLEEP | DEQUEUE_DELAYED, as the schedule pick does) and the pick runs again, so a wakee behind an eligible delayed task can now preempt",
                effect: Effect::Internal(|m| &mut m.wakeup_pick_next_entity),
            },
            Change {
                commit: "9f6d929ee2c6",
                title: "sched/fair: Fix wakeup_preempt_fair() for not waking up task (v7.1, tip sched/urgent 2026-05-06; ec4f6da3373d is its stable-branch id; read in its 7.0 and 6.18 stable backport mails)",
                model: "the retry after a delayed dequeue runs only while cfs_rq->nr_queued: part of the ac8e69e69363 pick above; the engine reaches the pick with the wakee queued and not delayed and curr running, so the queue is never empty there and the guard never stops a retry",
                effect: Effect::Reused("rq.rs: wakeup_pick, the ac8e69e69363 loop"),
            },
            Change {
                commit: "3da56dc063cd",
                title: "sched/fair: Clear rel_deadline when initializing forked entities (v7.1, tip sched/urgent 2026-04-29, read in its 7.0, 6.18 and 6.12 stable backport mails)",
                model: "no change in the engine: __sched_fork() now clears the se->rel_deadline a child copies from its parent, so the child's first place_entity() no longer adds a stale relative deadline to vruntime; the engine builds every entity fresh at t = 0 (Entity::new: rel_deadline false) and forks nothing after, so no entity starts with a copied rel_deadline",
                effect: Effect::NotModelled(
                    "no task is forked after t = 0; every entity starts with rel_deadline false",
                ),
            },
            Change {
                commit: "b6eee96843e8",
                title: "sched/fair: Fix overflow in vruntime_eligible() (v7.1, tip sched/urgent 2026-05-05 as 416dd8fc352b; its message not read: the fixed function and its comment read in copies of v7.1 fair.c)",
                model: "no change in the engine: vruntime_eligible() compares avg >= (__int128)key * load, since with 4823725d9d1d's full weights (NICE_0_LOAD 2^20) the 64-bit product overflows; the engine's sums use 6.18's scale_load_down weights (4823725d9d1d is not modelled), where |key * load| and the sum reach 35 bits in the runs measured (oltp on gnr-2s-96c-snc3, 7.2) and stay below 2^58 with 4096 nice -20 tasks on a CPU and a nice 19 key at its lag limit: the 64-bit product never overflows, so the 128-bit one gives the same answer",
                effect: Effect::NotModelled(
                    "the 64-bit product cannot overflow at the engine's down-scaled weights (35 bits measured)",
                ),
            },
        ],
    },
];

/// The table entry of a release name.
pub fn info(name: &str) -> Option<&'static KernelInfo> {
    KERNELS.iter().find(|k| k.name == name)
}

/// The names, for messages: "6.18, 6.19 or 7.0".
pub fn names() -> String {
    let n: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
    match n.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => n.join(""),
    }
}

/// The error for a release name that is not in `KERNELS` (as given).
pub fn kernel_error(given: &str) -> FieldError {
    let g: String = given.chars().take(40).collect();
    FieldError::new(
        "kernel",
        format!("{g:?} is not a modelled release: allowed {}", names()),
    )
}

/// Every change a release has: its own and those of every release before it, oldest first.
pub fn changes(kernel: &KernelInfo) -> impl Iterator<Item = &'static Change> {
    let upto = KERNELS
        .iter()
        .position(|k| k.name == kernel.name)
        .map_or(0, |i| i + 1);
    KERNELS[..upto].iter().flat_map(|k| k.changes.iter())
}

/// The change by which `kernel` merged a toggle, if it did.
pub fn merged_toggle(kernel: &KernelInfo, toggle: &str) -> Option<&'static Change> {
    changes(kernel).find(|c| c.toggle() == Some(toggle))
}

/// The patch set a release runs with no toggles: its merged toggles and internal flags.
pub fn merged(kernel: &KernelInfo) -> Patches {
    let mut p = Patches {
        features: sched_features::defaults(kernel.name),
        ..Patches::default()
    };
    for c in changes(kernel) {
        match c.effect {
            Effect::Toggle(name) => {
                if let Some(e) = patches::info(name) {
                    *(e.flag)(&mut p) = true;
                }
            }
            Effect::Internal(flag) => *flag(&mut p.merged) = true,
            Effect::NotModelled(_) | Effect::Reused(_) => {}
        }
    }
    p
}

/// Why a toggle cannot be asked for on `kernel`, or None if it can: the release lacks the code the
/// modelled form of the patch applies to. The text follows the toggle's name and side in the error
/// `resolve` gives, and is shown as it is next to the greyed-out toggle in the page.
/// (No toggle is refused on a release today: `next-buddy`, the one that was, is now the NEXT_BUDDY
/// feature, which `sched_features::apply` refuses where its form is not modelled.)
pub fn not_on(kernel: &KernelInfo, toggle: &str) -> Option<String> {
    match toggle {
        "cas-exceed-llc-capacity" if merged(kernel).merged.sched_cache => Some(
            "is RFC v4's form: 7.2 merged its successor (808915f982c2), whose exceed_llc_capacity() reads sc_stat.footprint, which stays 0 with NUMA balancing off; use it on 6.18 or 6.19".into(),
        ),
        _ => None,
    }
}

/// The effective patch set of one side: the release's merged set plus the toggles `names` asks
/// for. A name asks a toggle on; `-name` asks it off, which is refused: on a release that merged
/// it (no revert is a real option) and on one that did not (there is nothing to turn off). A
/// merged toggle named on is accepted (it is included either way). `field` is "a" or "b".
pub fn resolve<S: AsRef<str>>(
    kernel: &KernelInfo,
    field: &str,
    names: &[S],
) -> Result<Patches, FieldError> {
    let mut on: Vec<&str> = Vec::new();
    let mut next_buddy = false;
    for n in names {
        let n = n.as_ref().trim();
        if crate::llc_balancing::side_setting(n).is_some() {
            continue; // a side's kernel knob (KEY=VALUE): checked with the knobs, not a toggle
        }
        if n == NEXT_BUDDY_ALIAS {
            next_buddy = true;
            continue;
        }
        if let Some(off) = n.strip_prefix('-') {
            let off = off.trim();
            let side = if field == "b" { "B" } else { "A" };
            let shown: String = off.chars().take(60).collect();
            let msg = match (patches::info(off), merged_toggle(kernel, off)) {
                (None, _) => format!("unknown patch {shown:?} in {side} (asked off with -)"),
                (Some(_), Some(c)) => format!(
                    "{off} cannot be turned off in {side} on kernel {}: it is merged there ({} {:?}) and its revert is not an option",
                    kernel.name, c.commit, c.title
                ),
                (Some(_), None) => format!(
                    "{off} is not in kernel {} and is off unless listed: nothing to turn off in {side} (drop \"-{off}\")",
                    kernel.name
                ),
            };
            return Err(FieldError::new(field, msg));
        }
        on.push(n);
    }
    let asked = Patches::parse(field, &on)?;
    let mut p = merged(kernel);
    let refused = patches::PATCHES
        .iter()
        .filter(|e| asked.is_set(e))
        .find_map(|e| not_on(kernel, e.name).map(|why| (e.name, why)));
    if let Some((name, why)) = refused {
        let side = if field == "b" { "B" } else { "A" };
        let k = kernel.name;
        return Err(FieldError::new(
            field,
            format!("{name} in {side} on kernel {k} {why}"),
        ));
    }
    for e in patches::PATCHES {
        if asked.is_set(e) {
            *(e.flag)(&mut p) = true;
        }
    }
    if next_buddy {
        sched_features::apply(kernel.name, field, &["NEXT_BUDDY"], &mut p.features)?;
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn release_names_are_unique_and_the_default_is_the_first() {
        assert_eq!(KERNELS[0].name, DEFAULT_KERNEL);
        assert!(
            KERNELS[0].changes.is_empty(),
            "the base release changes nothing"
        );
        for (i, k) in KERNELS.iter().enumerate() {
            assert!(KERNELS[..i].iter().all(|o| o.name != k.name), "{}", k.name);
        }
        assert_eq!(names(), "6.18, 6.19, 7.0 or 7.2");
        assert_eq!(kernel_error("6.1").field, "kernel");
    }

    #[test]
    fn every_change_names_a_commit_and_its_toggle_exists_and_is_merged_once() {
        for k in KERNELS {
            for c in k.changes {
                assert_eq!(c.commit.len(), 12, "{}", c.commit);
                assert!(
                    c.commit.bytes().all(|b| b.is_ascii_hexdigit()),
                    "{}",
                    c.commit
                );
                if let Some(t) = c.toggle() {
                    assert!(patches::info(t).is_some(), "{t}");
                }
            }
        }
        let all: Vec<&str> = KERNELS
            .iter()
            .flat_map(|k| k.changes.iter().filter_map(Change::toggle))
            .collect();
        for (i, t) in all.iter().enumerate() {
            assert!(!all[..i].contains(t), "{t} merged twice");
        }
    }

    #[test]
    fn a_release_inherits_every_earlier_change() {
        let k618 = info("6.18").unwrap();
        let k619 = info("6.19").unwrap();
        let k70 = info("7.0").unwrap();
        assert_eq!(merged(k618), Patches::default());
        let p619 = merged(k619);
        assert!(p619.serialize_after_swb && p619.serialize_newidle && p619.snc3_distance_fix);
        assert!(p619.merged.ni_random && p619.merged.newidle_cost_bump_reverted);
        assert!(!p619.nohz_no_nr_cpus && !p619.skip_not_due);
        let p70 = merged(k70);
        assert!(p70.nohz_no_nr_cpus && p70.serialize_after_swb && p70.merged.ni_random);
        assert!(!p70.cache_aware && !p70.merged.sched_cache);
        let p72 = merged(info("7.2").unwrap());
        assert!(p72.nohz_no_nr_cpus && p72.merged.ni_random);
        assert!(p72.cache_aware && p72.cas_skip_many_threads && p72.cas_write_if_changed);
        assert!(p72.merged.sched_cache && p72.merged.sched_cache_next_scan);
        assert!(p72.merged.wakeup_pick_next_entity && !p70.merged.wakeup_pick_next_entity);
        assert!(
            !p72.cas_nr_running_avg_own_line,
            "fix 1 is not in the merged layout"
        );
    }

    #[test]
    fn toggles_add_to_the_release_and_a_merged_toggle_cannot_be_turned_off() {
        let k619 = info("6.19").unwrap();
        let p = resolve(k619, "b", &["skip-not-due", "serialize-newidle"]).unwrap();
        assert!(p.skip_not_due && p.serialize_newidle && p.serialize_after_swb);
        assert_eq!(resolve(k619, "a", &[""; 0]).unwrap(), merged(k619));
        let e = resolve(k619, "b", &["-serialize-after-swb"]).unwrap_err();
        assert_eq!(e.field, "b");
        for want in [
            "serialize-after-swb",
            "6.19",
            "3324b2180c17",
            "cannot be turned off",
        ] {
            assert!(e.message.contains(want), "{want}: {}", e.message);
        }
        let e = resolve(info("6.18").unwrap(), "a", &["-serialize-after-swb"]).unwrap_err();
        assert!(e.message.contains("not in kernel 6.18"), "{}", e.message);
        let e = resolve(k619, "a", &["-bogus"]).unwrap_err();
        assert!(e.message.contains("unknown patch"), "{}", e.message);
        assert!(resolve(k619, "a", &["bogus"]).is_err());
    }

    /// The page greys out what `not_on` lists (presets().kernel_refused): that must be exactly
    /// what `resolve` refuses, on every release and side, with the same reason.
    #[test]
    fn not_on_lists_exactly_the_toggles_resolve_refuses() {
        let mut refused = 0;
        for k in KERNELS {
            for e in patches::PATCHES {
                for side in ["a", "b"] {
                    match (resolve(k, side, &[e.name]), not_on(k, e.name)) {
                        (Ok(_), None) => {}
                        (Err(err), Some(why)) => {
                            assert_eq!(err.field, side);
                            assert!(err.message.ends_with(&why), "{}: {}", k.name, err.message);
                            assert_eq!(e.name, "cas-exceed-llc-capacity", "{}", k.name);
                            assert!(merged(k).merged.sched_cache, "{}", k.name);
                            refused += 1;
                        }
                        (r, why) => panic!(
                            "{} {}: resolve {:?}, not_on {:?}",
                            k.name,
                            e.name,
                            r.is_ok(),
                            why
                        ),
                    }
                }
            }
        }
        // next-buddy became a feature; only RFC v4's 26/27 is release-bound (7.2 merged its
        // successor), on each side
        let with_cache = KERNELS
            .iter()
            .filter(|k| merged(k).merged.sched_cache)
            .count();
        assert_eq!(refused, 2 * with_cache);
    }
}
