//! sched features (`features_a` / `features_b`, `--features`): each modelled feature switched
//! away from its release's default changes the run (and what it changes, where the report shows
//! it); each listed feature the engine does not model, and a name the release does not list, is
//! refused by name with the release's list. Figures are of short runs on a small machine.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::link::{decode_link, encode_link};
use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::report::schedstat::run_with_schedstat;
use schedplay::sched_features::{self, MODELLED, RELEASES};
use schedplay::{Report, run};

/// 2 sockets of 8 cores, SMT on: 32 CPUs, 2 LLCs.
fn exp(kernel: &str, workload: &str, features: &[&str]) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(8);
    e.kernel = kernel.into();
    e.workload.name = workload.into();
    e.seconds = 0.05;
    e.features_a = features.iter().map(|s| s.to_string()).collect();
    e
}

/// The report's results: its hash with the list of switched features left out (that list alone
/// would make every hash differ).
fn results(mut r: Report) -> String {
    r.features.clear();
    r.rehash();
    r.report_hash
}

fn run_a(e: &Experiment) -> Report {
    run(e, Side::A).unwrap()
}

/// Switching `write` on `kernel` changes the run of `workload`, and the report lists the write.
fn changes_the_run(kernel: &str, workload: &str, base: &[&str], write: &str) {
    let a = run_a(&exp(kernel, workload, base));
    let mut with: Vec<&str> = base.to_vec();
    with.push(write);
    let b = run_a(&exp(kernel, workload, &with));
    assert!(b.features.iter().any(|f| f == write), "{:?}", b.features);
    assert_ne!(
        results(a),
        results(b),
        "{write} on {kernel} changed nothing"
    );
}

fn refused(kernel: &str, write: &str) -> String {
    let e = exp(kernel, "hackbench", &[write]);
    let err = e.validate().unwrap_err();
    assert_eq!(err.0.len(), 1, "{err}");
    let f = &err.0[0];
    assert_eq!(f.field, "features_a");
    let name = write.strip_prefix("NO_").unwrap_or(write);
    assert!(f.message.contains(name), "{}", f.message);
    // the release's modelled list comes with it
    assert!(
        f.message.contains("the model switches PLACE_LAG"),
        "{}",
        f.message
    );
    f.message.clone()
}

/// Newidle balance passes per domain (schedstat's newidle lb_count), summed over CPUs.
fn newidle_lb_count(e: &Experiment) -> u64 {
    let (_, st) = run_with_schedstat(e, Side::A).unwrap();
    st.stat
        .domains
        .iter()
        .flatten()
        .map(|d| d.lb[2].lb_count)
        .sum()
}

#[test]
fn ni_random_off_balances_every_newidle_domain() {
    let on = newidle_lb_count(&exp("6.19", "schbench", &[]));
    let off = newidle_lb_count(&exp("6.19", "schbench", &["NO_NI_RANDOM"]));
    assert!(
        off > on,
        "newidle lb_count: NI_RANDOM {on}, NO_NI_RANDOM {off}"
    );
    // 6.18 has no NI_RANDOM: its newidle passes are those of NO_NI_RANDOM's code path
    refused("6.18", "NO_NI_RANDOM");
}

#[test]
fn next_buddy_changes_the_run_from_6_19() {
    changes_the_run("6.19", "hackbench", &[], "NEXT_BUDDY");
    let m = refused("6.18", "NEXT_BUDDY");
    assert!(m.contains("e837456fdca8"), "{m}");
}

/// PICK_BUDDY and CACHE_HOT_BUDDY act on cfs_rq->next, which only NEXT_BUDDY sets: without it
/// they change nothing, with it they change the run.
#[test]
fn pick_buddy_acts_only_on_a_buddy() {
    let plain = results(run_a(&exp("6.19", "hackbench", &[])));
    let off = results(run_a(&exp("6.19", "hackbench", &["NO_PICK_BUDDY"])));
    assert_eq!(plain, off);
    changes_the_run("6.19", "hackbench", &["NEXT_BUDDY"], "NO_PICK_BUDDY");
}

#[test]
fn cache_hot_buddy_acts_only_on_a_buddy() {
    let plain = results(run_a(&exp("6.19", "hackbench", &[])));
    let off = results(run_a(&exp("6.19", "hackbench", &["NO_CACHE_HOT_BUDDY"])));
    assert_eq!(plain, off);
    // with NEXT_BUDDY a buddy exists; in 0.1 s of hackbench task_hot then decides a pull
    let mut a = exp("6.19", "hackbench", &["NEXT_BUDDY"]);
    a.seconds = 0.1;
    let mut b = a.clone();
    b.features_a.push("NO_CACHE_HOT_BUDDY".into());
    assert_ne!(results(run_a(&a)), results(run_a(&b)));
}

#[test]
fn place_lag_changes_placement() {
    changes_the_run("6.18", "hackbench", &[], "NO_PLACE_LAG");
}

#[test]
fn place_deadline_initial_changes_the_first_deadlines() {
    changes_the_run("6.18", "hackbench", &[], "NO_PLACE_DEADLINE_INITIAL");
}

/// Without wakeup preemption a wakee waits for the tick or for curr to sleep: context switches
/// fall and wakeup latency rises on an overloaded machine.
#[test]
fn wakeup_preemption_off_leaves_preemption_to_the_tick() {
    let on = run_a(&exp("6.18", "hackbench", &[]));
    let off = run_a(&exp("6.18", "hackbench", &["NO_WAKEUP_PREEMPTION"]));
    let cs = |r: &Report| r.counters["context_switches"];
    assert!(
        cs(&off) < cs(&on),
        "context switches {} -> {}",
        cs(&on),
        cs(&off)
    );
}

/// Without TTWU_QUEUE every remote wakeup takes the target's rq lock itself.
#[test]
fn ttwu_queue_off_changes_remote_wakeups() {
    changes_the_run("6.18", "hackbench", &[], "NO_TTWU_QUEUE");
}

/// Without SIS_UTIL nothing reads or writes nr_idle_scan.
#[test]
fn sis_util_off_never_touches_nr_idle_scan() {
    let nr_idle_scan = |r: &Report| -> u64 {
        r.cachelines
            .iter()
            .filter(|c| c.name.starts_with("sd_llc_shared"))
            .flat_map(|c| c.offsets.iter())
            .filter(|f| f.field == "nr_idle_scan")
            .map(|f| f.loads + f.stores)
            .sum()
    };
    let on = run_a(&exp("6.18", "hackbench", &[]));
    let off = run_a(&exp("6.18", "hackbench", &["NO_SIS_UTIL"]));
    assert!(nr_idle_scan(&on) > 0);
    assert_eq!(nr_idle_scan(&off), 0);
}

/// LB_MIN skips tasks of load < 16 when balancing load while nr_balance_failed is 0: nice-19
/// tasks (weight 15) among nice-0 ones, both half busy. Every hackbench task weighs more, and
/// LB_MIN changes nothing there.
#[test]
fn lb_min_skips_light_tasks_only() {
    let file = r#"{"global": {"duration": 1}, "tasks": {"heavy": {"instance": 40, "run": 1000, "sleep": 1000}, "niced": {"instance": 40, "priority": 19, "run": 1000, "sleep": 1000}}}"#;
    let light = |features: &[&str]| {
        let mut e = exp("6.18", "rtapp", features);
        e.workload.knobs.insert("file".into(), file.into());
        e.seconds = 0.1;
        results(run_a(&e))
    };
    assert_ne!(light(&[]), light(&["LB_MIN"]));
    let heavy = |features: &[&str]| results(run_a(&exp("6.18", "hackbench", features)));
    assert_eq!(heavy(&[]), heavy(&["LB_MIN"]));
}

/// With neither WA_IDLE nor WA_WEIGHT, wake_affine never picks the waker's CPU: no
/// ttwu_move_affine in schedstat.
#[test]
fn wa_idle_and_wa_weight_off_never_move_affine() {
    let affine = |e: &Experiment| -> u64 {
        let (_, st) = run_with_schedstat(e, Side::A).unwrap();
        st.stat
            .domains
            .iter()
            .flatten()
            .map(|d| d.ttwu_move_affine)
            .sum()
    };
    assert!(affine(&exp("6.18", "hackbench", &[])) > 0);
    assert_eq!(
        affine(&exp("6.18", "hackbench", &["NO_WA_IDLE", "NO_WA_WEIGHT"])),
        0
    );
}

#[test]
fn wa_idle_changes_wake_affine() {
    changes_the_run("6.18", "hackbench", &[], "NO_WA_IDLE");
}

#[test]
fn wa_weight_changes_wake_affine() {
    changes_the_run("6.18", "hackbench", &[], "NO_WA_WEIGHT");
}

#[test]
fn wa_bias_changes_wake_affine() {
    changes_the_run("6.18", "hackbench", &[], "NO_WA_BIAS");
}

/// Every modelled feature has a test above: a new entry must add one (and to this list).
#[test]
fn every_modelled_feature_is_tested() {
    let tested = [
        "PLACE_LAG",
        "PLACE_DEADLINE_INITIAL",
        "NEXT_BUDDY",
        "PICK_BUDDY",
        "CACHE_HOT_BUDDY",
        "WAKEUP_PREEMPTION",
        "TTWU_QUEUE",
        "SIS_UTIL",
        "LB_MIN",
        "WA_IDLE",
        "WA_WEIGHT",
        "WA_BIAS",
        "NI_RANDOM",
    ];
    let names: Vec<&str> = MODELLED.iter().map(|m| m.name).collect();
    assert_eq!(names, tested);
}

/// Every listed feature the engine has no code path for, on every release, is refused by name,
/// on and off.
#[test]
fn every_listed_feature_not_modelled_is_refused() {
    let mut n = 0;
    for r in RELEASES {
        for l in r.listed {
            if sched_features::modelled_on(r.release, l.name).is_some() {
                continue;
            }
            for w in [l.name.to_string(), format!("NO_{}", l.name)] {
                let m = refused(r.release, &w);
                assert!(m.contains("cannot be switched"), "{m}");
                n += 1;
            }
        }
    }
    // 6.18: 17 listed, not modelled (NEXT_BUDDY, PICK_BUDDY and CACHE_HOT_BUDDY among them)
    assert!(n >= 2 * 17, "{n}");
}

#[test]
fn rt_push_ipi_is_refused_by_name() {
    let m = refused("6.19", "NO_RT_PUSH_IPI");
    assert!(m.contains("no RT class"), "{m}");
}

#[test]
fn delay_dequeue_is_refused_by_name() {
    refused("6.19", "NO_DELAY_DEQUEUE");
}

#[test]
fn run_to_parity_is_refused_by_name() {
    refused("7.2", "NO_RUN_TO_PARITY");
}

#[test]
fn ni_rate_is_refused_by_name_on_7_2() {
    refused("7.2", "NO_NI_RATE");
}

#[test]
fn a_name_no_release_lists_is_refused_with_the_list() {
    for w in ["SIS_PROP", "ni_random", "NO_", "NO_NO_WA_IDLE"] {
        let m = refused("6.19", if w == "NO_" { "NO_WA_IDLE_X" } else { w });
        assert!(m.contains("is not a sched feature of kernel 6.19"), "{m}");
        assert!(m.contains("lists PLACE_LAG, PLACE_DEADLINE_INITIAL"), "{m}");
    }
    // NI_RANDOM is not in 6.18's list
    let m = refused("6.18", "NI_RANDOM");
    assert!(m.contains("is not a sched feature of kernel 6.18"), "{m}");
}

/// A link carries each side's writes; an old link's `next-buddy` toggle decodes as the feature.
#[test]
fn links_carry_features_and_old_next_buddy_links_decode() {
    let mut e = exp("6.19", "hackbench", &["NO_NI_RANDOM"]);
    e.features_b = vec!["NEXT_BUDDY".into()];
    let (d, errs) = decode_link(&encode_link(&e));
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!((d.features_a, d.features_b), (e.features_a, e.features_b));
    let old = "v=1&kernel=6.19&machine=milan-2s&hz=1000&workload=hackbench&a=&b=next-buddy,skip-not-due&seconds=1&seed=1";
    let (d, errs) = decode_link(old);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d.b, ["skip-not-due"]);
    assert_eq!(d.features_b, ["NEXT_BUDDY"]);
    assert!(d.features_a.is_empty());
    assert!(encode_link(&d).contains("features_b=NEXT_BUDDY"));
    // a refused write is reported by its key and kept
    let (d, errs) = decode_link("v=1&machine=milan-2s&workload=hackbench&features_a=NO_NI_RANDOM");
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "features_a");
    assert_eq!(d.features_a, ["NO_NI_RANDOM"]);
}

/// The old `next-buddy` toggle in a JSON scenario runs exactly NEXT_BUDDY.
#[test]
fn the_next_buddy_toggle_is_the_feature() {
    let mut old = exp("6.19", "hackbench", &[]);
    old.a = vec!["next-buddy".into()];
    let feature = exp("6.19", "hackbench", &["NEXT_BUDDY"]);
    let (a, b) = (run_a(&old), run_a(&feature));
    assert_eq!(a.features, ["NEXT_BUDDY"]);
    let strip = |mut r: Report| {
        r.patches.clear();
        results(r)
    };
    assert_eq!(strip(a), strip(b));
}
