//! sched features: what `/sys/kernel/debug/sched/features` lists on each modelled release (the
//! `SCHED_FEAT(NAME, default)` lines of its `kernel/sched/features.h`, in file order), and the
//! ones the engine has a code path for, switchable by name as debugfs takes them (`NI_RANDOM`
//! turns a feature on, `NO_NI_RANDOM` off).
//!
//! A feature at its release's default runs exactly the code the engine ran before features were
//! switchable: every switch is a `sched_feat()` test on a path the engine already had. A feature
//! the release lists but whose code path the engine lacks is refused by name, with the list of
//! those it can switch on that release; so is a name the release does not list.
//!
//! Adding a feature: its `Features` field (named as the feature, lower case), its `MODELLED` entry,
//! the `sched_feat()` test in the code path (`src/sched/`), and a test in `tests/features.rs`.

use crate::error::FieldError;
use serde::Serialize;

/// The switches of one run, one per modelled feature (`MODELLED`), named after the feature.
/// `Default` is v6.18's features.h (NI_RANDOM, absent there, off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    pub place_lag: bool,
    pub place_deadline_initial: bool,
    pub next_buddy: bool,
    pub pick_buddy: bool,
    pub cache_hot_buddy: bool,
    pub wakeup_preemption: bool,
    pub ttwu_queue: bool,
    pub sis_util: bool,
    pub lb_min: bool,
    pub wa_idle: bool,
    pub wa_weight: bool,
    pub wa_bias: bool,
    pub ni_random: bool,
}

impl Default for Features {
    fn default() -> Self {
        defaults(RELEASES[0].release)
    }
}

/// One `SCHED_FEAT(name, default)` line of a release's features.h.
#[derive(Clone, Copy, Debug)]
pub struct Listed {
    pub name: &'static str,
    pub default: bool,
}

/// What `/sys/kernel/debug/sched/features` lists on one release, and where the list was read.
#[derive(Clone, Copy, Debug)]
pub struct ReleaseFeatures {
    /// The release as `kernels::KERNELS` names it.
    pub release: &'static str,
    pub source: &'static str,
    pub listed: &'static [Listed],
}

/// A feature the engine has a code path for.
#[derive(Clone, Copy, Debug)]
pub struct Modelled {
    pub name: &'static str,
    /// The first release whose form of the code path is the one modelled.
    pub since: &'static str,
    /// Where the `sched_feat()` test is, in kernel names (the page and `presets` show it).
    pub path: &'static str,
    /// Why a release before `since` that lists it cannot switch it (empty when none lists it).
    pub before: &'static str,
    pub flag: fn(&mut Features) -> &mut bool,
}

const fn on(name: &'static str) -> Listed {
    Listed {
        name,
        default: true,
    }
}
const fn off(name: &'static str) -> Listed {
    Listed {
        name,
        default: false,
    }
}

/// v6.18's features.h in file order, x86 without CONFIG_PREEMPT_RT (TTWU_QUEUE true,
/// HAVE_RT_PUSH_IPI defined on SMP).
const V6_18: [Listed; 26] = [
    on("PLACE_LAG"),
    on("PLACE_DEADLINE_INITIAL"),
    on("PLACE_REL_DEADLINE"),
    on("RUN_TO_PARITY"),
    on("PREEMPT_SHORT"),
    off("NEXT_BUDDY"),
    on("PICK_BUDDY"),
    on("CACHE_HOT_BUDDY"),
    on("DELAY_DEQUEUE"),
    on("DELAY_ZERO"),
    on("WAKEUP_PREEMPTION"),
    off("HRTICK"),
    off("HRTICK_DL"),
    on("NONTASK_CAPACITY"),
    on("TTWU_QUEUE"),
    on("SIS_UTIL"),
    off("WARN_DOUBLE_CLOCK"),
    on("RT_PUSH_IPI"),
    off("RT_RUNTIME_SHARE"),
    off("LB_MIN"),
    on("ATTACH_AGE_LOAD"),
    on("WA_IDLE"),
    on("WA_WEIGHT"),
    on("WA_BIAS"),
    on("UTIL_EST"),
    off("LATENCY_WARN"),
];

/// v6.18 plus NI_RANDOM (33cf66d88306), placed last (its place in the file was not read; debugfs
/// lists in file order).
const V6_19: [Listed; 27] = [
    on("PLACE_LAG"),
    on("PLACE_DEADLINE_INITIAL"),
    on("PLACE_REL_DEADLINE"),
    on("RUN_TO_PARITY"),
    on("PREEMPT_SHORT"),
    off("NEXT_BUDDY"),
    on("PICK_BUDDY"),
    on("CACHE_HOT_BUDDY"),
    on("DELAY_DEQUEUE"),
    on("DELAY_ZERO"),
    on("WAKEUP_PREEMPTION"),
    off("HRTICK"),
    off("HRTICK_DL"),
    on("NONTASK_CAPACITY"),
    on("TTWU_QUEUE"),
    on("SIS_UTIL"),
    off("WARN_DOUBLE_CLOCK"),
    on("RT_PUSH_IPI"),
    off("RT_RUNTIME_SHARE"),
    off("LB_MIN"),
    on("ATTACH_AGE_LOAD"),
    on("WA_IDLE"),
    on("WA_WEIGHT"),
    on("WA_BIAS"),
    on("UTIL_EST"),
    off("LATENCY_WARN"),
    on("NI_RANDOM"),
];

/// v6.19 plus NI_RATE (in v7.1's features.h, default true).
const V7_2: [Listed; 28] = [
    on("PLACE_LAG"),
    on("PLACE_DEADLINE_INITIAL"),
    on("PLACE_REL_DEADLINE"),
    on("RUN_TO_PARITY"),
    on("PREEMPT_SHORT"),
    off("NEXT_BUDDY"),
    on("PICK_BUDDY"),
    on("CACHE_HOT_BUDDY"),
    on("DELAY_DEQUEUE"),
    on("DELAY_ZERO"),
    on("WAKEUP_PREEMPTION"),
    off("HRTICK"),
    off("HRTICK_DL"),
    on("NONTASK_CAPACITY"),
    on("TTWU_QUEUE"),
    on("SIS_UTIL"),
    off("WARN_DOUBLE_CLOCK"),
    on("RT_PUSH_IPI"),
    off("RT_RUNTIME_SHARE"),
    off("LB_MIN"),
    on("ATTACH_AGE_LOAD"),
    on("WA_IDLE"),
    on("WA_WEIGHT"),
    on("WA_BIAS"),
    on("UTIL_EST"),
    off("LATENCY_WARN"),
    on("NI_RANDOM"),
    on("NI_RATE"),
];

/// Every release's list, oldest first, one per `kernels::KERNELS` entry (a test checks both ways).
pub const RELEASES: &[ReleaseFeatures] = &[
    ReleaseFeatures {
        release: "6.18",
        source: "v6.18 kernel/sched/features.h (the 6.18.2 import, unchanged from v6.18), x86 without CONFIG_PREEMPT_RT; the SIS_UTIL line, missing from the stored copy read (its comment is there), from the v6.18 notes' feature table",
        listed: &V6_18,
    },
    ReleaseFeatures {
        release: "6.19",
        source: "v6.18's list; 33cf66d88306 adds SCHED_FEAT(NI_RANDOM, true); aceccac58ad7 set NEXT_BUDDY true and 4f70f106bca1 set it false again before v6.19 (v6.19-rc7)",
        listed: &V6_19,
    },
    ReleaseFeatures {
        release: "7.0",
        source: "v6.19's list: no features.h change in the v7.0 merge-window commits the model tracks (tip sched/core, Jan 2026)",
        listed: &V6_19,
    },
    ReleaseFeatures {
        release: "7.2",
        source: "v6.19's list and NI_RATE (default true, present in v7.1.3's features.h; the commit that added it was not read); the sched/cache series' features.h changes were not read (its switches are the llc_balancing/ knobs)",
        listed: &V7_2,
    },
];

/// The features the engine can switch, in features.h order.
pub const MODELLED: &[Modelled] = &[
    Modelled {
        name: "PLACE_LAG",
        since: "6.18",
        path: "place_entity(): the lag of a waking or migrated entity is kept (off: v = V)",
        flag: |f| &mut f.place_lag,
        before: "",
    },
    Modelled {
        name: "PLACE_DEADLINE_INITIAL",
        since: "6.18",
        path: "place_entity(): a new task (ENQUEUE_INITIAL) gets half a slice to its first deadline",
        flag: |f| &mut f.place_deadline_initial,
        before: "",
    },
    Modelled {
        name: "NEXT_BUDDY",
        since: "6.19",
        path: "check_preempt_wakeup_fair() as e837456fdca8 reimplemented it: the wakee becomes cfs_rq->next (set_preempt_buddy), a WF_SYNC wakeup asks preempt_sync(); v6.18's form is not modelled",
        flag: |f| &mut f.next_buddy,
        before: "v6.18's NEXT_BUDDY (set_next_buddy before the preemption check) is not modelled, only e837456fdca8's reimplementation (6.19 and later)",
    },
    Modelled {
        name: "PICK_BUDDY",
        since: "6.19",
        path: "__pick_eevdf(): an eligible cfs_rq->next is picked first (only NEXT_BUDDY sets it in the model, so off changes a run only with NEXT_BUDDY on)",
        flag: |f| &mut f.pick_buddy,
        before: "before 6.19 nothing sets cfs_rq->next in the model (NEXT_BUDDY is modelled from 6.19), so the switch would change nothing",
    },
    Modelled {
        name: "CACHE_HOT_BUDDY",
        since: "6.19",
        path: "task_hot(): the cfs_rq->next buddy is cache hot while dst runs something (only NEXT_BUDDY sets it in the model)",
        flag: |f| &mut f.cache_hot_buddy,
        before: "before 6.19 nothing sets cfs_rq->next in the model (NEXT_BUDDY is modelled from 6.19), so the switch would change nothing",
    },
    Modelled {
        name: "WAKEUP_PREEMPTION",
        since: "6.18",
        path: "check_preempt_wakeup_fair(): returns before update_curr() and the pick when off (no wakeup preemption; the tick preempts)",
        flag: |f| &mut f.wakeup_preemption,
        before: "",
    },
    Modelled {
        name: "TTWU_QUEUE",
        since: "6.18",
        path: "ttwu_queue(): a wakeup ttwu_queue_cond() sends to another LLC or an idle CPU goes on its wake list (the IPI) instead of the waker taking the rq lock",
        flag: |f| &mut f.ttwu_queue,
        before: "",
    },
    Modelled {
        name: "SIS_UTIL",
        since: "6.18",
        path: "select_idle_cpu() scans at most nr_idle_scan CPUs (none when 0) and update_idle_cpu_scan() refreshes it; off: the whole LLC, no sd_llc_shared access for it",
        flag: |f| &mut f.sis_util,
        before: "",
    },
    Modelled {
        name: "LB_MIN",
        since: "6.18",
        path: "detach_tasks(): with migrate_load, a task of load < 16 is skipped while nr_balance_failed is 0",
        flag: |f| &mut f.lb_min,
        before: "",
    },
    Modelled {
        name: "WA_IDLE",
        since: "6.18",
        path: "wake_affine(): wake_affine_idle() first",
        flag: |f| &mut f.wa_idle,
        before: "",
    },
    Modelled {
        name: "WA_WEIGHT",
        since: "6.18",
        path: "wake_affine(): wake_affine_weight() when wake_affine_idle() chose nothing",
        flag: |f| &mut f.wa_weight,
        before: "",
    },
    Modelled {
        name: "WA_BIAS",
        since: "6.18",
        path: "wake_affine_weight(): this CPU's load x100, prev's x(100 + (imbalance_pct - 100)/2)",
        flag: |f| &mut f.wa_bias,
        before: "",
    },
    Modelled {
        name: "NI_RANDOM",
        since: "6.19",
        path: "sched_balance_newidle(): each SD_BALANCE_NEWIDLE domain is balanced with probability (1 + newidle_ratio)/1024 (sched_rng() % 1024) and a success weighs (1024 + w/2)/w; off: every domain, weight 1",
        flag: |f| &mut f.ni_random,
        before: "",
    },
];

/// Why each listed feature the engine cannot switch is not switchable: its code path is always
/// on in the engine with no off form, or the mechanism is absent.
const NOT_SWITCHED: &[(&str, &str)] = &[
    (
        "PLACE_REL_DEADLINE",
        "the engine always keeps a migrated entity's relative deadline (its off form is not modelled)",
    ),
    (
        "RUN_TO_PARITY",
        "the engine always protects curr up to the smallest queued slice (set_protect_slice's RUN_TO_PARITY form; the off form is not modelled)",
    ),
    (
        "PREEMPT_SHORT",
        "every task runs the base slice, so no wakee's slice is shorter and the feature has nothing to act on",
    ),
    (
        "DELAY_DEQUEUE",
        "the engine always delays the dequeue of an ineligible sleeper (its off form is not modelled)",
    ),
    (
        "DELAY_ZERO",
        "the engine always clips a delayed entity's lag to 0 (its off form is not modelled)",
    ),
    (
        "HRTICK",
        "no hrtick in the model (CONFIG_SCHED_HRTICK, off by default)",
    ),
    ("HRTICK_DL", "no deadline class in the model"),
    (
        "NONTASK_CAPACITY",
        "every CPU's capacity is 1024 in the model (no IRQ or steal time taken from it)",
    ),
    (
        "WARN_DOUBLE_CLOCK",
        "a debug warning: no effect on scheduling",
    ),
    ("RT_PUSH_IPI", "no RT class in the model"),
    ("RT_RUNTIME_SHARE", "no RT class in the model"),
    (
        "ATTACH_AGE_LOAD",
        "the engine always ages a migrated task's load on attach (its off form is not modelled)",
    ),
    (
        "UTIL_EST",
        "util_est is not modelled (task_util_est is util_avg)",
    ),
    ("LATENCY_WARN", "a debug warning: no effect on scheduling"),
    (
        "NI_RATE",
        "v7.1's time-based newidle_ratio is not modelled (7.2 runs NI_RANDOM on newidle_success alone)",
    ),
];

/// Why a listed feature cannot be switched on `release` (None when it can).
fn why_not(release: &str, name: &str) -> Option<String> {
    if modelled_on(release, name).is_some() {
        return None;
    }
    let reason = match MODELLED.iter().find(|m| m.name == name) {
        Some(m) => m.before,
        None => NOT_SWITCHED
            .iter()
            .find(|(n, _)| *n == name)
            .map_or("its code path is not in the model", |(_, why)| why),
    };
    Some(reason.to_string())
}

/// The list of a release (None for a name `RELEASES` lacks).
pub fn release(name: &str) -> Option<&'static ReleaseFeatures> {
    RELEASES.iter().find(|r| r.release == name)
}

fn order(release: &str) -> usize {
    RELEASES
        .iter()
        .position(|r| r.release == release)
        .unwrap_or(0)
}

/// The modelled entry of a name, if the engine has its code path on `release`.
pub fn modelled_on(release: &str, name: &str) -> Option<&'static Modelled> {
    MODELLED
        .iter()
        .find(|m| m.name == name && order(m.since) <= order(release))
        .filter(|_| listed(release, name).is_some())
}

fn listed(release: &str, name: &str) -> Option<&'static Listed> {
    self::release(release)?
        .listed
        .iter()
        .find(|l| l.name == name)
}

/// The switches a release runs with: each modelled feature at its listed default (off when the
/// release does not list it).
pub fn defaults(release: &str) -> Features {
    let mut f = Features {
        place_lag: false,
        place_deadline_initial: false,
        next_buddy: false,
        pick_buddy: false,
        cache_hot_buddy: false,
        wakeup_preemption: false,
        ttwu_queue: false,
        sis_util: false,
        lb_min: false,
        wa_idle: false,
        wa_weight: false,
        wa_bias: false,
        ni_random: false,
    };
    for m in MODELLED {
        *(m.flag)(&mut f) = listed(release, m.name).is_some_and(|l| l.default);
    }
    f
}

/// The names of the features modelled on a release, for messages.
pub fn modelled_names(release: &str) -> Vec<&'static str> {
    MODELLED
        .iter()
        .filter(|m| modelled_on(release, m.name).is_some())
        .map(|m| m.name)
        .collect()
}

/// Applies debugfs writes (`NAME` on, `NO_NAME` off) to `f`. `field` names the scenario field
/// in the error (`features_a`, `features_b`). Empty names are skipped.
pub fn apply<S: AsRef<str>>(
    release: &str,
    field: &str,
    names: &[S],
    f: &mut Features,
) -> Result<(), FieldError> {
    let Some(rel) = self::release(release) else {
        return Ok(()); // an unknown release is refused by its own field
    };
    for raw in names {
        let w = raw.as_ref().trim();
        if w.is_empty() {
            continue;
        }
        let (name, value) = match w.strip_prefix("NO_") {
            Some(n) => (n, false),
            None => (w, true),
        };
        let shown: String = w.chars().take(60).collect();
        let modelled = modelled_names(release).join(", ");
        if listed(release, name).is_none() {
            let all: Vec<&str> = rel.listed.iter().map(|l| l.name).collect();
            return Err(FieldError::new(
                field,
                format!(
                    "{shown:?} is not a sched feature of kernel {release}: /sys/kernel/debug/sched/features lists {} (NO_ before a name turns it off); the model switches {modelled}",
                    all.join(", ")
                ),
            ));
        }
        let Some(m) = modelled_on(release, name) else {
            let why = why_not(release, name).unwrap_or_default();
            return Err(FieldError::new(
                field,
                format!(
                    "{name} cannot be switched on kernel {release}: {why}; the model switches {modelled}"
                ),
            ));
        };
        *(m.flag)(f) = value;
    }
    Ok(())
}

/// One line of a release's list as the page and `presets` show it.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub name: &'static str,
    pub default: bool,
    /// The `sched_feat()` test the engine switches, or null when it cannot switch the feature.
    pub path: Option<&'static str>,
    /// Why it cannot be switched (null when it can).
    pub refused: Option<String>,
}

/// A release's list with what the model does with each feature (None for an unknown release).
pub fn rows(release: &str) -> Option<Vec<Row>> {
    let rel = self::release(release)?;
    Some(
        rel.listed
            .iter()
            .map(|l| {
                let m = modelled_on(release, l.name);
                let refused = why_not(release, l.name);
                Row {
                    name: l.name,
                    default: l.default,
                    path: m.map(|m| m.path),
                    refused,
                }
            })
            .collect(),
    )
}

/// The writes that take a release's defaults to `f`, as debugfs takes them, in file order.
pub fn changed(release: &str, f: &Features) -> Vec<String> {
    let d = defaults(release);
    MODELLED
        .iter()
        .filter(|m| modelled_on(release, m.name).is_some())
        .filter_map(|m| {
            let (mut a, mut b) = (*f, d);
            let (now, was) = (*(m.flag)(&mut a), *(m.flag)(&mut b));
            (now != was).then(|| {
                if now {
                    m.name.to_string()
                } else {
                    format!("NO_{}", m.name)
                }
            })
        })
        .collect()
}

/// What `cat /sys/kernel/debug/sched/features` prints for a run: every listed feature, `NO_`
/// before those off; the modelled ones as `f` has them, the rest at their defaults.
pub fn debugfs_line(release: &str, f: &Features) -> String {
    let Some(rel) = self::release(release) else {
        return String::new();
    };
    rel.listed
        .iter()
        .map(|l| {
            let value = match modelled_on(release, l.name) {
                Some(m) => {
                    let mut c = *f;
                    *(m.flag)(&mut c)
                }
                None => l.default,
            };
            if value {
                l.name.to_string()
            } else {
                format!("NO_{}", l.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_release_lists_each_feature_once_and_every_modelled_one_is_listed_from_its_release() {
        for r in RELEASES {
            for (i, l) in r.listed.iter().enumerate() {
                assert!(!l.name.is_empty(), "{}", r.release);
                assert!(
                    r.listed[..i].iter().all(|o| o.name != l.name),
                    "{} lists {} twice",
                    r.release,
                    l.name
                );
            }
        }
        for m in MODELLED {
            assert!(release(m.since).is_some(), "{}", m.name);
            // a reason wherever an earlier release lists it
            let earlier = RELEASES
                .iter()
                .take_while(|r| r.release != m.since)
                .any(|r| listed(r.release, m.name).is_some());
            assert_eq!(m.before.is_empty(), !earlier, "{}", m.name);
            assert!(listed(m.since, m.name).is_some(), "{}", m.name);
            assert!(modelled_on(m.since, m.name).is_some());
        }
        assert!(listed("6.18", "NI_RANDOM").is_none());
        // every listed feature is switched or has its reason
        for r in RELEASES {
            for l in r.listed {
                let switched = modelled_on(r.release, l.name).is_some();
                let reason = NOT_SWITCHED.iter().any(|(n, _)| *n == l.name)
                    || MODELLED.iter().any(|m| m.name == l.name);
                assert!(switched || reason, "{} {}", r.release, l.name);
            }
        }
        assert!(listed("6.19", "NI_RANDOM").is_some_and(|l| l.default));
        assert!(listed("7.2", "NI_RATE").is_some());
    }

    #[test]
    fn every_field_has_one_entry() {
        // all off, then each entry's flag sets a distinct field
        let mut seen = Vec::new();
        for m in MODELLED {
            let mut f = defaults("6.18");
            MODELLED.iter().for_each(|o| *(o.flag)(&mut f) = false);
            *(m.flag)(&mut f) = true;
            assert!(!seen.contains(&f), "{} shares a field", m.name);
            seen.push(f);
        }
        let dbg = format!("{:?}", defaults("6.18"));
        assert_eq!(dbg.matches(": ").count(), MODELLED.len());
        for m in MODELLED {
            assert!(dbg.contains(&m.name.to_lowercase()), "{}", m.name);
        }
    }

    #[test]
    fn defaults_follow_the_release() {
        let d618 = defaults("6.18");
        assert_eq!(d618, Features::default());
        assert!(!d618.ni_random && !d618.next_buddy && !d618.lb_min);
        assert!(d618.place_lag && d618.ttwu_queue && d618.sis_util && d618.wa_bias);
        assert!(defaults("6.19").ni_random && defaults("7.2").ni_random);
        assert!(changed("6.19", &defaults("6.19")).is_empty());
        let line = debugfs_line("6.19", &defaults("6.19"));
        assert!(
            line.starts_with("PLACE_LAG PLACE_DEADLINE_INITIAL"),
            "{line}"
        );
        assert!(line.contains("NO_NEXT_BUDDY") && line.ends_with("NI_RANDOM"));
    }

    #[test]
    fn writes_switch_by_name_and_changed_gives_them_back() {
        let mut f = defaults("6.19");
        apply(
            "6.19",
            "features_b",
            &["NO_NI_RANDOM", "NEXT_BUDDY", " "],
            &mut f,
        )
        .unwrap();
        assert!(!f.ni_random && f.next_buddy);
        assert_eq!(changed("6.19", &f), ["NEXT_BUDDY", "NO_NI_RANDOM"]);
        assert!(debugfs_line("6.19", &f).ends_with("NO_NI_RANDOM"));
        // a write of the default changes nothing
        let mut g = defaults("6.19");
        apply("6.19", "features_a", &["NI_RANDOM", "NO_LB_MIN"], &mut g).unwrap();
        assert_eq!(g, defaults("6.19"));
    }
}
