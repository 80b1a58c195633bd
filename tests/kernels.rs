//! Kernel releases end to end: every release runs every workload, a release equals the older
//! release with the toggles it merged where the code paths are the same, and where its own
//! changes make them differ, the difference is in the path they change.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::kernels::{self, KERNELS};
use schedplay::{Report, run};

fn small(workload: &str, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(8);
    e.machine.overrides.nodes_per_socket = Some(2);
    e.workload.name = workload.into();
    e.seconds = seconds;
    e.seed = 5;
    e
}

/// The report with its labels (release, toggle names, kernel knobs) cleared and the hash recomputed: what the
/// run did, not what it was called.
fn unlabelled(mut r: Report) -> Report {
    r.kernel = kernels::DEFAULT_KERNEL.into();
    r.patches.clear();
    r.sched.clear();
    r.rehash();
    r
}

/// The toggles a release merged, by name (its `changes` up to it).
fn merged_toggles(kernel: &str) -> Vec<String> {
    kernels::changes(kernels::info(kernel).unwrap())
        .filter_map(|c| c.toggle())
        .map(String::from)
        .collect()
}

#[test]
fn every_release_runs_every_workload_and_the_report_names_it() {
    for k in KERNELS {
        for w in schedplay::workload::WORKLOADS {
            let mut e = small(w.name, 0.01);
            e.kernel = k.name.into();
            let r = run(&e, Side::A).unwrap_or_else(|err| panic!("{} {}: {err}", k.name, w.name));
            assert_eq!(r.kernel, k.name);
            assert!(r.events > 0, "{} {}", k.name, w.name);
            let json = serde_json::to_value(&r).unwrap();
            // 6.18 reports are what they were before releases existed: no `kernel` key
            assert_eq!(json.get("kernel").is_some(), k.name != "6.18", "{}", k.name);
        }
    }
}

/// Each release against the one before it with the toggles it merged. With every CPU busy no
/// newidle balance runs, so 6.19's own newidle changes (d206fbad9328, 33cf66d88306) are not on
/// the path and the two reports are bit-identical; 7.0 adds only a toggle, so it equals 6.19 +
/// nohz-no-nr-cpus on any workload.
#[test]
fn a_release_equals_the_older_one_with_its_merged_toggles_where_the_paths_are_the_same() {
    let mut busy = small("spin", 0.05);
    busy.workload.knobs.insert("threads".into(), 64.into());
    let mut base = busy.clone();
    busy.kernel = "6.19".into();
    base.a = merged_toggles("6.19");
    let r619 = run(&busy, Side::A).unwrap();
    assert_eq!(
        r619.counters["newidle_balance_calls"], 0,
        "the path is not taken"
    );
    assert_eq!(
        unlabelled(r619).report_hash,
        unlabelled(run(&base, Side::A).unwrap()).report_hash
    );
    for w in ["oltp", "hackbench"] {
        let mut e70 = small(w, 0.05);
        e70.kernel = "7.0".into();
        let mut e619 = e70.clone();
        e619.kernel = "6.19".into();
        e619.a = vec!["nohz-no-nr-cpus".into()];
        assert_eq!(
            unlabelled(run(&e70, Side::A).unwrap()).report_hash,
            unlabelled(run(&e619, Side::A).unwrap()).report_hash,
            "{w}"
        );
    }
}

#[test]
fn a_merged_toggle_cannot_be_asked_off_and_an_unknown_release_is_refused() {
    let mut e = small("oltp", 0.01);
    e.kernel = "6.19".into();
    e.b = vec!["-serialize-newidle".into()];
    let err = e.validate().unwrap_err();
    assert_eq!(err.0.len(), 1, "{err}");
    assert_eq!(err.0[0].field, "b");
    assert!(err.0[0].message.contains("serialize-newidle"), "{err}");
    assert!(err.0[0].message.contains("6.19"), "{err}");
    e.b.clear();
    e.kernel = "6.20".into();
    let err = e.validate().unwrap_err();
    assert_eq!(err.0[0].field, "kernel", "{err}");
}

/// Where CPUs go idle, 6.19's own newidle changes (the revert of the cost bump and NI_RANDOM) are
/// on the path: 6.19 and 6.18 with its merged toggles then differ, and they differ in how many
/// newidle balances run.
#[test]
fn where_cpus_go_idle_6_19_differs_from_6_18_with_its_toggles_in_newidle_balancing() {
    let mut e619 = small("oltp", 0.05);
    e619.kernel = "6.19".into();
    let mut e618 = small("oltp", 0.05);
    e618.a = merged_toggles("6.19");
    let (r619, r618) = (run(&e619, Side::A).unwrap(), run(&e618, Side::A).unwrap());
    let calls = |r: &Report| r.counters["newidle_balance_calls"];
    assert!(calls(&r618) > 0, "newidle runs on this load");
    assert_ne!(calls(&r619), calls(&r618));
    assert_ne!(unlabelled(r619).report_hash, unlabelled(r618).report_hash);
}

/// NEXT_BUDDY: v6.19 ships it off (4f70f106bca1 after aceccac58ad7); the feature (or the old
/// `next-buddy` toggle, which now asks for it) turns the reimplemented form (e837456fdca8) on, and it changes who runs after a wakeup: more
/// wakees preempt (an eligible buddy is picked ahead of curr's protection), so the context
/// switches differ. It is refused on 6.18, naming the side and the release.
#[test]
fn next_buddy_changes_who_runs_on_6_19_and_is_refused_on_6_18() {
    let mut e = small("hackbench", 0.05);
    e.kernel = "6.19".into();
    let off = run(&e, Side::A).unwrap();
    e.a = vec!["next-buddy".into()];
    let on = run(&e, Side::A).unwrap();
    let cs = |r: &Report| r.counters["context_switches"];
    assert_ne!(cs(&on), cs(&off), "the buddy changes the switches");
    assert_ne!(unlabelled(on).report_hash, unlabelled(off).report_hash);
    e.kernel = "6.18".into();
    let err = e.validate().unwrap_err();
    assert_eq!(err.0[0].field, "a", "{err}");
    assert!(err.0[0].message.contains("6.19 and later"), "{err}");
    assert!(
        err.0[0]
            .message
            .contains("NEXT_BUDDY cannot be switched on kernel 6.18"),
        "{err}"
    );
}

fn on_72(workload: &str, knobs: &[(&str, &str)]) -> Experiment {
    let mut e = small(workload, 0.05);
    e.kernel = "7.2".into();
    for (k, v) in knobs {
        e.sched.insert(k.to_string(), (*v).into());
    }
    e
}

/// 7.2 merged cache-aware scheduling; with it switched off (debugfs `llc_balancing/enabled=0`,
/// or built without `CONFIG_SCHED_CACHE`, or on a machine with one LLC) it runs none of it, and
/// the three are one run bit for bit. What is left against 7.0 is v7.1's wakeup pick
/// (ac8e69e69363), an internal flag: `experiment::run`'s test checks 7.2 off against 7.0 with it.
#[test]
fn seven_two_without_sched_cache_active_runs_none_of_it() {
    for w in ["oltp", "hackbench"] {
        let r = run(&on_72(w, &[("CONFIG_SCHED_CACHE", "n")]), Side::A).unwrap();
        assert!(r.account_mm_sched_callers.is_empty(), "{w}");
        let off = unlabelled(r).report_hash;
        let r = run(&on_72(w, &[("llc_balancing/enabled", "0")]), Side::A).unwrap();
        assert!(r.account_mm_sched_callers.is_empty(), "{w}");
        assert_eq!(unlabelled(r).report_hash, off, "{w}");
        // one LLC: sched_cache_present is false; the same machine with the knob off is the same
        let mut one = on_72(w, &[]);
        one.machine.overrides.sockets = Some(1);
        one.machine.overrides.nodes_per_socket = Some(1);
        let mut one_off = one.clone();
        one_off
            .sched
            .insert("llc_balancing/enabled".into(), "0".into());
        let r = run(&one, Side::A).unwrap();
        assert!(r.account_mm_sched_callers.is_empty(), "{w}");
        assert_eq!(
            unlabelled(r).report_hash,
            unlabelled(run(&one_off, Side::A).unwrap()).report_hash,
            "{w}"
        );
    }
}

/// On a machine with several LLCs 7.2 runs account_mm_sched (its merged form: the thread-count
/// gate is invalid_llc_nr) and differs from 7.0; a tolerance of 100 turns the gate off, so
/// nr_running_avg is never read for it.
#[test]
fn seven_two_runs_the_merged_cache_aware_code_and_its_knobs_act() {
    let r = run(&on_72("oltp", &[]), Side::A).unwrap();
    assert!(!r.account_mm_sched_callers.is_empty());
    assert!(r.symbol_percent("account_mm_sched") > 0.0);
    assert_eq!(
        r.symbol_percent("exceed_llc_nr"),
        0.0,
        "RFC v4's gate is gone"
    );
    let mut e70 = small("oltp", 0.05);
    e70.kernel = "7.0".into();
    assert_ne!(
        unlabelled(r.clone()).report_hash,
        unlabelled(run(&e70, Side::A).unwrap()).report_hash
    );
    let tol = run(
        &on_72("oltp", &[("llc_balancing/aggr_tolerance", "100")]),
        Side::A,
    )
    .unwrap();
    assert_eq!(tol.symbol_percent("invalid_llc_nr"), 0.0);
    assert_eq!(
        tol.sched["llc_balancing/aggr_tolerance"], 100,
        "the report names the knob"
    );
    assert!(r.sched.is_empty(), "defaults are not listed");
    assert_ne!(tol.report_hash, r.report_hash);
}

#[test]
fn seven_two_knobs_are_refused_on_older_releases_and_out_of_range() {
    let mut e = on_72("oltp", &[("llc_balancing/imb_pct", "30")]);
    e.kernel = "7.0".into();
    let err = e.validate().unwrap_err();
    assert_eq!(err.0[0].field, "llc_balancing/imb_pct", "{err}");
    let e = on_72("oltp", &[("llc_balancing/epoch_period", "0")]);
    let err = e.validate().unwrap_err();
    assert_eq!(err.0[0].field, "llc_balancing/epoch_period", "{err}");
    assert!(err.0[0].message.contains("1..=10000"), "{err}");
    // the RFC v4 toggles merged in 7.2 are included and cannot be asked off
    let mut e = on_72("oltp", &[]);
    e.b = vec!["-cas-skip-many-threads".into()];
    let err = e.validate().unwrap_err();
    assert!(err.0[0].message.contains("deee5e27d5b6"), "{err}");
}
