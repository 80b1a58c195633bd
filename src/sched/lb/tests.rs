use super::*;

/// A group of `w` CPUs (SMT off) with `nr` tasks and the given PELT sums.
fn group(w: u64, nr: u64, idle: u64, util: u64, runnable: u64, load: u64) -> GroupStats {
    GroupStats {
        group_weight: w,
        group_capacity: w * CAPACITY,
        cores: w,
        sum_nr_running: nr,
        sum_h_nr_running: nr,
        idle_cpus: idle,
        group_util: util,
        group_runnable: runnable,
        group_load: load,
        ..Default::default()
    }
}

#[test]
fn group_classify_follows_capacity_util_and_runnable() {
    let pct = 117;
    // idle CPUs: has spare
    let s = group(4, 2, 2, 2048, 2048, 2048);
    assert_eq!(group_classify(pct, &s, false), GroupType::HasSpare);
    // as many tasks as CPUs, each near full util: fully busy
    let s = group(4, 4, 0, 4000, 4000, 4096);
    assert_eq!(group_classify(pct, &s, false), GroupType::FullyBusy);
    // as many tasks as CPUs but little util and runnable: still spare capacity
    let s = group(4, 4, 0, 1000, 1000, 4096);
    assert_eq!(group_classify(pct, &s, false), GroupType::HasSpare);
    // more tasks than CPUs and runnable above capacity·pct: overloaded
    let s = group(4, 6, 0, 4000, 6000, 6144);
    assert_eq!(group_classify(pct, &s, false), GroupType::Overloaded);
    // more tasks than CPUs, but short sleepers: neither util nor runnable says overloaded
    let s = group(4, 6, 0, 2000, 3000, 6144);
    assert_eq!(group_classify(pct, &s, false), GroupType::HasSpare);
    // an SMT group with 2 runnable tasks, seen by an idle CPU
    assert_eq!(
        group_classify(pct, &group(2, 2, 0, 900, 900, 2048), true),
        GroupType::SmtBalance
    );
}

#[test]
fn the_busiest_group_is_the_highest_type_then_its_tie_break() {
    let spare_a = group(4, 2, 2, 2048, 2048, 2048);
    let spare_b = group(4, 3, 1, 3000, 3000, 3072);
    assert!(update_sd_pick_busiest(None, &spare_a));
    assert!(
        update_sd_pick_busiest(Some(&spare_a), &spare_b),
        "fewer idle CPUs"
    );
    assert!(!update_sd_pick_busiest(Some(&spare_b), &spare_a));
    let mut over = group(4, 6, 0, 4000, 6000, 6144);
    over.ty = GroupType::Overloaded;
    over.avg_load = 1536;
    assert!(update_sd_pick_busiest(Some(&spare_b), &over));
    let mut over2 = over;
    over2.avg_load = 1200;
    assert!(
        !update_sd_pick_busiest(Some(&over), &over2),
        "lower avg_load"
    );
    assert!(
        !update_sd_pick_busiest(None, &group(4, 0, 4, 0, 0, 0)),
        "no tasks"
    );
}

#[test]
fn imbalance_by_type() {
    let sds = SdStats {
        total_load: 0,
        total_capacity: 8 * CAPACITY,
        prefer_sibling: true,
        flags: SD_SHARE_LLC,
        imbalance_pct: 117,
        imb_numa_nr: 2,
    };
    // prefer_sibling inside an LLC, an idle dst: half the task difference, as tasks
    let mut local = group(4, 0, 4, 0, 0, 0);
    let busiest = group(4, 4, 0, 4000, 4000, 4096);
    let busiest = GroupStats {
        ty: GroupType::FullyBusy,
        ..busiest
    };
    assert_eq!(
        sched_balance_find_src_group(&sds, &mut local, &busiest, true),
        Some((MigrationType::Task, 2))
    );
    // a busy dst never pulls from a group that is not overloaded
    assert_eq!(
        sched_balance_find_src_group(&sds, &mut local, &busiest, false),
        None
    );
    // across LLCs, from an overloaded group to one with spare capacity: fill it by util
    let sds_pkg = SdStats { flags: 0, ..sds };
    let mut local = group(4, 2, 2, 1500, 1500, 2048);
    let mut over = group(4, 8, 0, 4096, 8192, 8192);
    over.ty = GroupType::Overloaded;
    assert_eq!(
        sched_balance_find_src_group(&sds_pkg, &mut local, &over, true),
        Some((MigrationType::Util, 4096 - 1500))
    );
    // both overloaded: move load down to the domain average
    let mut l = group(4, 6, 0, 4096, 6144, 6144);
    l.ty = GroupType::Overloaded;
    l.avg_load = 1536;
    over.avg_load = 2048;
    let sds_load = SdStats {
        total_load: 6144 + 8192,
        ..sds_pkg
    };
    // sds avg = 1024·14336/8192 = 1792; min((2048−1792)·4096, (1792−1536)·4096)/1024 = 1024
    assert_eq!(
        sched_balance_find_src_group(&sds_load, &mut l, &over, false),
        Some((MigrationType::Load, 1024))
    );
}
