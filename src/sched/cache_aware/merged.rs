//! Cache-aware scheduling as merged for 7.2 (tip `sched/cache`, merge a26d9208c137), where it
//! differs from RFC v4: the rules of fair.c's merged code (read in trees carrying the series; the
//! commits' own texts could not be read, docs/MODEL.md §7.2) as pure functions, and the layout of
//! `struct sched_cache_stat` (`mm->sc_stat`). The engine's cache-aware paths call these when
//! `Merged::sched_cache` is set; with it clear they run RFC v4's rules.

use crate::llc_balancing::LlcBalancing;

/// `struct sched_cache_stat` (include/linux/sched.h, CONFIG_SCHED_CACHE), `____cacheline_aligned_in_smp`:
/// one 64-byte line of its own in mm_struct, nothing else shares it. x86-64 offsets without lock
/// debugging (raw_spinlock_t is 4 bytes, padded to the next 8-byte field).
pub(crate) const SC_STAT_FIELDS: &[(u32, &str)] = &[
    (0, "sc_stat.pcpu_sched"),
    (8, "sc_stat.lock"),
    (16, "sc_stat.epoch"),
    (48, "sc_stat.cpu"),
    (24, "sc_stat.nr_running_avg"),
    (32, "sc_stat.next_scan"),
    (40, "sc_stat.footprint"),
];
/// The same with `nr_running_avg` moved to a line of its own (the unmerged fix 1 on 7.2).
pub(crate) const SC_STAT_FIELDS_OWN_AVG: &[(u32, &str)] = &[
    (0, "sc_stat.pcpu_sched"),
    (8, "sc_stat.lock"),
    (16, "sc_stat.epoch"),
    (48, "sc_stat.cpu"),
    (24, "(pad)"),
    (32, "sc_stat.next_scan"),
    (40, "sc_stat.footprint"),
];
/// Index of `next_scan` in the line's field list (the first five are indexed as RFC v4's:
/// pcpu_sched, lock, epoch, cpu, nr_running_avg).
pub(crate) const F_NEXT_SCAN: usize = 5;

/// `fits_capacity(cap, max)` of fair.c: `cap * 1280 < max * 1024`.
pub fn fits_capacity(cap: u64, max: u64) -> bool {
    cap.saturating_mul(1280) < max.saturating_mul(1024)
}

/// `invalid_llc_nr(mm, p, cpu)` past its `get_nr_threads(p) <= 1` test (the caller's): the
/// process's active threads times the SMT width do not fit, with fits_capacity's margin, in the
/// LLC's CPUs scaled by `llc_aggr_tolerance`. None: the tolerance turns the gate off (no load of
/// nr_running_avg is made).
pub fn invalid_llc_nr(l: &LlcBalancing, nr_running_avg: u64, smt: u64, llc_size: u64) -> bool {
    match l.scale(1) {
        None => false,
        Some(scale) => !fits_capacity(nr_running_avg * smt, scale * llc_size),
    }
}

/// Whether the gate reads `nr_running_avg` (a tolerance of 100 or more skips it).
pub fn invalid_llc_nr_loads(l: &LlcBalancing) -> bool {
    l.scale(1).is_some()
}

/// `update_avg_scale(avg, sample)`: the EWMA of the scanned running threads with the divisor
/// `clamp(sd_llc_size >> 2, 2, 8)` of the scanning CPU (s64 division, truncating toward zero).
pub fn update_avg_scale(avg: u64, sample: u64, llc_size: u64) -> u64 {
    let divisor = (llc_size >> 2).clamp(2, 8) as i64;
    (avg as i64 + (sample as i64 - avg as i64) / divisor) as u64
}

/// `fits_llc_capacity(util, capacity)`: `util * 100 < capacity * aggr_pct`, aggr_pct =
/// llc_overaggr_pct, x3/2 when the CPUs have no SMT siblings (`cpu_smt_num_threads == 1`).
pub fn fits_llc_capacity(l: &LlcBalancing, util: u64, capacity: u64, smt: u64) -> bool {
    let mut pct = l.overaggr_pct as u64;
    if smt == 1 {
        pct = pct * 3 / 2;
    }
    util * 100 < capacity * pct
}

/// `time_after_eq(a, b)` on unsigned long epochs: `(long)(a - b) >= 0`.
pub fn time_after_eq(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) >= 0
}

/// The stale test of account_mm_sched(): `(long)(epoch - sc_stat.epoch) > llc_epoch_affinity_timeout`.
pub fn stale(rq_epoch: u64, mm_epoch: u64, timeout: u32) -> bool {
    (rq_epoch.wrapping_sub(mm_epoch) as i64) > timeout as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_count_gate_fires_at_four_fifths_of_the_llc() {
        let l = LlcBalancing::default();
        // 16-CPU LLC, SMT2: 8 threads x2 = 16 > 16*0.8
        assert!(invalid_llc_nr(&l, 8, 2, 16));
        assert!(!invalid_llc_nr(&l, 6, 2, 16)); // 12*1280 < 16*1024
        assert!(invalid_llc_nr(&l, 7, 2, 16)); // 14*1280 = 17920 >= 16384
        let mut t0 = l;
        t0.aggr_tolerance = 0;
        assert!(invalid_llc_nr(&t0, 0, 2, 16), "tolerance 0: never fits");
        let mut t100 = l;
        t100.aggr_tolerance = 100;
        assert!(!invalid_llc_nr(&t100, 1000, 2, 16));
        assert!(!invalid_llc_nr_loads(&t100));
    }

    #[test]
    fn update_avg_scale_divides_by_a_quarter_of_the_llc_between_2_and_8() {
        assert_eq!(update_avg_scale(0, 16, 64), 2); // divisor 8
        assert_eq!(update_avg_scale(0, 16, 16), 4); // divisor 4
        assert_eq!(update_avg_scale(0, 16, 4), 8); // divisor 2
        assert_eq!(update_avg_scale(10, 3, 64), 10); // -7/8 truncates to 0
    }

    #[test]
    fn capacity_rule_and_epoch_comparisons() {
        let l = LlcBalancing::default();
        assert!(fits_llc_capacity(&l, 49, 100, 2));
        assert!(!fits_llc_capacity(&l, 50, 100, 2));
        assert!(fits_llc_capacity(&l, 74, 100, 1));
        assert!(!fits_llc_capacity(&l, 75, 100, 1));
        assert!(time_after_eq(5, 5) && time_after_eq(6, 5) && !time_after_eq(4, 5));
        assert!(stale(11, 5, 5) && !stale(10, 5, 5));
        assert!(!stale(4, 5, 5), "an mm epoch ahead is not stale (signed)");
    }
}
