//! schbench v1.0's own summary (masoncl/schbench `show_latencies`, stats.c): "Wakeup Latencies",
//! "Request Latencies" and "RPS" percentiles as it prints them, so a schbench run can be read
//! against published schbench tables. Its percentile list is {20, 50, 90, 99, 99.9}; latencies
//! print 50/90/99/99.9 with 99 starred (`PLIST_FOR_LAT`, `PLIST_99`), RPS 20/50/90 with 50
//! starred (`PLIST_FOR_RPS`, `PLIST_50`). Each line's "(N samples)" is the samples between that
//! percentile and the previous one of the list (calc_percentiles). schbench takes one RPS sample
//! a second; here a sample is one of the report's series intervals in the measured window, as a
//! per-second rate.

use crate::sched::metrics::Histogram;
use std::fmt::Write as _;

/// Said in place of the Request Latencies block: the schbench workload counts a request when its
/// worker starts (its completion latency is the wakeup latency), so schbench's request latency,
/// wakeup to the work done, is not measured.
pub const NO_REQUEST_LATENCY: &str = "Request Latencies percentiles (usec): not measured (the model counts a request when its worker starts)";

/// schbench's `plist`.
const PLIST: [f64; 5] = [20.0, 50.0, 90.0, 99.0, 99.9];
/// `PLIST_FOR_LAT` (50, 90, 99, 99.9) and its star, `PLIST_99`.
const LAT: ([bool; 5], usize) = ([false, true, true, true, true], 3);
/// `PLIST_FOR_RPS` (20, 50, 90) and its star, `PLIST_50`.
const RPS: ([bool; 5], usize) = ([true, true, true, false, false], 1);

/// calc_percentiles over (value, count) buckets lowest first: each percentile's value and the
/// samples since the previous percentile.
fn percentiles(buckets: &[(u64, u64)], nr: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    let mut sum = 0u64;
    let mut j = 0;
    'walk: for &(v, n) in buckets {
        sum += n;
        while sum as f64 >= PLIST[j] / 100.0 * nr as f64 {
            out.push((v, sum));
            j += 1;
            if j == PLIST.len() {
                break 'walk;
            }
        }
    }
    // counts between consecutive percentiles, as schbench subtracts them
    let mut last = 0;
    for o in &mut out {
        let cum = o.1;
        o.1 = cum - last;
        last = cum;
    }
    out
}

/// One `show_latencies` block.
fn show(
    s: &mut String,
    label: &str,
    units: &str,
    runtime_s: u64,
    buckets: &[(u64, u64)],
    (min, max): (u64, u64),
    (mask, star): ([bool; 5], usize),
) {
    let nr: u64 = buckets.iter().map(|b| b.1).sum();
    let ps = percentiles(buckets, nr);
    if !ps.is_empty() {
        let _ = writeln!(
            s,
            "{label} percentiles ({units}) runtime {runtime_s} (s) ({nr} total samples)"
        );
        for (i, (v, n)) in ps.iter().enumerate() {
            if !mask[i] {
                continue;
            }
            let mark = if i == star { "* " } else { "  " };
            let _ = writeln!(s, "\t{mark}{:2.1}th: {:<10} ({n} samples)", PLIST[i], v);
        }
    }
    let _ = writeln!(s, "\t  min={min}, max={max}");
}

/// A histogram of ns as schbench's µs buckets (values clamped to the recorded min and max, as
/// the report's quantiles are).
fn us_buckets(h: &Histogram) -> Vec<(u64, u64)> {
    h.buckets()
        .map(|(v, n)| (v.clamp(h.min, h.max) / 1000, n))
        .collect()
}

/// The three blocks and the average, from a run's histograms and its RPS samples. `request`
/// None: the run has no request latency as schbench measures it (wakeup to the request's work
/// done), said in its place.
pub fn render(
    wakeup: &Histogram,
    request: Option<&Histogram>,
    rps: &[f64],
    runtime_s: u64,
) -> String {
    let mut s = String::new();
    let mm = |h: &Histogram| {
        if h.count == 0 {
            (0, 0)
        } else {
            (h.min / 1000, h.max / 1000)
        }
    };
    show(
        &mut s,
        "Wakeup Latencies",
        "usec",
        runtime_s,
        &us_buckets(wakeup),
        mm(wakeup),
        LAT,
    );
    match request {
        Some(request) => show(
            &mut s,
            "Request Latencies",
            "usec",
            runtime_s,
            &us_buckets(request),
            mm(request),
            LAT,
        ),
        None => {
            let _ = writeln!(s, "{NO_REQUEST_LATENCY}");
        }
    }
    let mut sorted: Vec<u64> = rps.iter().map(|&r| r.round() as u64).collect();
    sorted.sort_unstable();
    let rps_buckets: Vec<(u64, u64)> = sorted.iter().map(|&v| (v, 1)).collect();
    let rps_mm = (
        sorted.first().copied().unwrap_or(0),
        sorted.last().copied().unwrap_or(0),
    );
    show(
        &mut s,
        "RPS",
        "requests",
        runtime_s,
        &rps_buckets,
        rps_mm,
        RPS,
    );
    let avg = if rps.is_empty() {
        0.0
    } else {
        rps.iter().sum::<f64>() / rps.len() as f64
    };
    let _ = writeln!(s, "average rps: {avg:.2}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_their_sample_counts_follow_calc_percentiles() {
        // 1000 samples, value i for i in 1..=1000
        let b: Vec<(u64, u64)> = (1..=1000).map(|v| (v, 1)).collect();
        let p = percentiles(&b, 1000);
        // 99.9 / 100 × 1000 is a hair above 999 in doubles, as in schbench's C: the 1000th sample
        assert_eq!(
            p,
            [(200, 200), (500, 300), (900, 400), (990, 90), (1000, 10)]
        );
    }

    #[test]
    fn the_blocks_print_as_schbench_v1_does() {
        let mut w = Histogram::default();
        let mut q = Histogram::default();
        for i in 1..=100u64 {
            w.record(i * 1000);
            q.record(i * 10_000);
        }
        let s = render(&w, Some(&q), &[3000.0, 3010.0, 3020.0, 2990.0], 30);
        let lines: Vec<&str> = s.lines().collect();
        assert_eq!(
            lines[0],
            "Wakeup Latencies percentiles (usec) runtime 30 (s) (100 total samples)"
        );
        // 50 µs lies in the histogram's [49.152, 50.176) µs bucket: its lower bound, as a quantile
        assert_eq!(lines[1], "\t  50.0th: 49         (30 samples)");
        assert!(lines[3].starts_with("\t* 99.0th: "), "{s}");
        assert_eq!(lines[5], "\t  min=1, max=100");
        assert!(lines[6].starts_with("Request Latencies percentiles (usec) runtime 30 (s)"));
        assert_eq!(
            lines[12],
            "RPS percentiles (requests) runtime 30 (s) (4 total samples)"
        );
        assert_eq!(lines[13], "\t  20.0th: 2990       (1 samples)");
        assert_eq!(lines[14], "\t* 50.0th: 3000       (1 samples)");
        assert_eq!(lines[16], "\t  min=2990, max=3020");
        assert_eq!(lines[17], "average rps: 3005.00");
        let without = render(&w, None, &[3000.0], 30);
        assert_eq!(without.lines().nth(6), Some(NO_REQUEST_LATENCY));
    }
}
