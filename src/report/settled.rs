//! Whether a run has settled: the test that flags a series still drifting over the measured
//! window (`not_settled`, docs/MODEL.md, "Steady state"), reported with every run.

use crate::sched::Series;
use crate::stats;

/// Fewer measured samples than this and a series is not judged (too short to tell a trend from
/// noise).
pub const MIN_SAMPLES: usize = 10;
/// A drift smaller than this share of the series' mean is not material (1%).
pub const MATERIAL: f64 = 0.01;

/// The series a report judges, by their `series` JSON names.
pub const JUDGED: [&str; 3] = ["throughput", "contention_pct", "utilization"];

/// Index of the first sample whose interval starts at or after `start_ns` (sample i closes the
/// interval ((i)·sample_ns, (i+1)·sample_ns]).
pub fn first_measured(sample_ns: u64, start_ns: u64) -> usize {
    start_ns.div_ceil(sample_ns.max(1)) as usize
}

/// Whether the measured part `y` of a series has not settled: with n ≥ `MIN_SAMPLES` samples, the
/// least-squares slope b (per sample) and the residual standard deviation s around the line,
/// the fitted change across the window |b|·(n−1) exceeds both s and `MATERIAL`·|mean|, and the
/// slope is significant: |b| / (s / √Sxx) > t(0.975, n−2), Sxx = n(n²−1)/12.
pub fn drifts(y: &[f64]) -> bool {
    let n = y.len();
    if n < MIN_SAMPLES {
        return false;
    }
    let (b, s) = stats::trend(y);
    let change = b.abs() * (n - 1) as f64;
    let nf = n as f64;
    let sxx = nf * (nf * nf - 1.0) / 12.0;
    let significant = if s > 0.0 {
        b.abs() / (s / sxx.sqrt()) > stats::t975((n - 2) as f64)
    } else {
        b != 0.0
    };
    change > s && change > MATERIAL * stats::mean(y).abs() && significant
}

/// The names (of `JUDGED`) of the series that have not settled after `start_ns`.
pub fn not_settled(series: &Series, sample_ns: u64, start_ns: u64) -> Vec<String> {
    let from = first_measured(sample_ns, start_ns);
    series
        .named()
        .iter()
        .filter(|(name, _)| JUDGED.contains(name))
        .filter(|(_, y)| y.get(from..).is_some_and(drifts))
        .map(|(name, _)| name.to_string())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ramp_drifts_and_noise_does_not() {
        let noise: Vec<f64> = (0..40)
            .map(|i| 100.0 + if i % 2 == 0 { 3.0 } else { -3.0 })
            .collect();
        assert!(!drifts(&noise));
        // +0.5 per sample over 40 samples (+19.5, 20% of the mean) under ±3 of noise
        let ramp: Vec<f64> = noise
            .iter()
            .enumerate()
            .map(|(i, v)| v + 0.5 * i as f64)
            .collect();
        assert!(drifts(&ramp));
        // a drift below 1% of the mean is not material even without noise
        let creep: Vec<f64> = (0..40).map(|i| 100.0 + 0.01 * i as f64).collect();
        assert!(!drifts(&creep));
        // too short to judge
        assert!(!drifts(&ramp[..MIN_SAMPLES - 1]));
    }

    #[test]
    fn the_warmup_is_excluded_from_the_judged_window() {
        // a transient in the first 5 samples, flat afterwards
        let y: Vec<f64> = (0..30)
            .map(|i| if i < 5 { 10.0 * i as f64 } else { 100.0 } + (i % 3) as f64)
            .collect();
        let s = Series {
            t_s: (1..=30).map(|i| i as f64 * 0.01).collect(),
            throughput: y.clone(),
            contention_pct: y.clone(),
            utilization: vec![0.5; 30],
        };
        assert_eq!(
            not_settled(&s, 10_000_000, 0),
            ["throughput", "contention_pct"]
        );
        assert!(not_settled(&s, 10_000_000, 50_000_000).is_empty());
        assert_eq!(first_measured(10_000_000, 50_000_000), 5);
        assert_eq!(first_measured(10_000_000, 50_000_001), 6);
    }
}
