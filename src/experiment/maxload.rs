//! The highest rate whose latency percentile stays under a bound, as Lancet reports it
//! (`schedplay maxload --percentile 99 --bound-us 1000`): for an open-loop workload (`serve`),
//! a search over the `rate` knob, each probe a whole run at steady state (warm-up `auto`).
//!
//! The search: from `from` the rate doubles while the probe is under the bound (or halves while
//! it is over) until a bracket [under, over] is found, then bisects it until its width is at most
//! `precision_pct` % of the lower end; the rate at the bound is the highest probed rate under it.
//! A probe is under the bound when the percentile is at most the bound and the server kept up
//! (replies at least `KEPT_UP` of the offered rate: past saturation the queue grows for the
//! whole window, and its percentile depends on the window's length, not on the server).
//! The rule is one pure function of the probes so far (`MaxLoad::next`): `search` steps through
//! it running each probe here, the page (`wasm::maxload_step`) running each probe as a worker job
//! and reading it back from the report alone (`probe_of`), so both make the same probes.
//!
//! Sharding (the decision): a bisection is sequential, each probe's rate depends on the previous
//! one's outcome, so the probes of one search cannot be spread. The repeats can: each repeat is a
//! whole search with its own seed (`repeat::seeds`), and the rate at the bound is the mean over
//! the repeats with its 95% interval. `--shard I/N` runs the repeats i with i mod N == I, one JSON
//! line each, and `merge` puts them back in repeat order: the unsharded lines' bytes.

use crate::error::{FieldError, Invalid};
use crate::experiment::grid::Shard;
use crate::experiment::repeat;
use crate::experiment::run::Run;
use crate::experiment::scenario::{Experiment, Side};
use crate::experiment::steady::Warmup;
use crate::report::fnv1a;
use crate::stats;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// A probe keeps up when its replies are at least this share of the offered rate (Poisson
/// counts over a window of ≥ 10,000 requests vary by about 1%).
pub const KEPT_UP: f64 = 0.95;
/// At most this many probes per search (doubling or halving, then bisecting).
pub const MAX_PROBES: usize = 40;
/// The workload knob the search varies.
pub const RATE_KNOB: &str = "rate";
/// The defaults of `schedplay maxload` and the page: p99 under 1 ms (Lancet's and the published
/// serving runs' usual question), from 100,000 requests/s, to 2% of the rate.
pub const DEFAULT_PERCENTILE: f64 = 99.0;
pub const DEFAULT_BOUND_US: f64 = 1000.0;
pub const DEFAULT_FROM: u64 = 100_000;
pub const DEFAULT_PRECISION_PCT: f64 = 2.0;
/// The percentiles a report prints (`ServeReport`): a search from reports alone (the page's) holds
/// one of these under its bound.
pub const REPORTED_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// A search: the base experiment (an open-loop workload; its `repeats` are the searches), the
/// percentile and its bound, where to start, and when the bracket is narrow enough.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MaxLoad {
    pub base: Experiment,
    /// The latency percentile, in (0, 100].
    pub percentile: f64,
    /// The bound on it, µs.
    pub bound_us: f64,
    /// The first rate probed, requests/s.
    pub from: u64,
    /// The bracket's width at the end, % of its lower end.
    pub precision_pct: f64,
}

/// One probe: a run at `rate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub rate: u64,
    pub achieved: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    /// The searched percentile, µs.
    pub at_percentile_us: f64,
    pub under: bool,
}

/// One repeat's search, a JSON line (`grid`, `index`, `points` are the heads `merge` reads).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SearchLine {
    /// FNV-1a of the search's canonical JSON.
    pub grid: String,
    /// The repeat.
    pub index: usize,
    /// Repeats in all.
    pub points: usize,
    pub seed: u64,
    /// The search's percentile and bound (so `merge` prints the table alone).
    pub percentile: f64,
    pub bound_us: f64,
    pub probes: Vec<Probe>,
    /// The highest probed rate under the bound (0: even the lowest probe was over).
    pub rate_at_bound: u64,
}

impl MaxLoad {
    pub fn hash(&self) -> String {
        fnv1a(&serde_json::to_string(self).unwrap_or_default())
    }

    /// Field errors of the search's own inputs and its base experiment.
    pub fn validate(&self) -> Result<(), Invalid> {
        let mut errs = Vec::new();
        if !(self.percentile > 0.0 && self.percentile <= 100.0) {
            errs.push(FieldError::new(
                "percentile",
                format!("{}: a percentile in (0, 100], e.g. 99", self.percentile),
            ));
        }
        if !(self.bound_us > 0.0 && self.bound_us.is_finite()) {
            errs.push(FieldError::new(
                "bound_us",
                format!("{}: a bound above 0 µs, e.g. 1000", self.bound_us),
            ));
        }
        if !(self.precision_pct > 0.0 && self.precision_pct <= 100.0) {
            errs.push(FieldError::new(
                "precision_pct",
                format!("{}: a width in (0, 100] % of the rate", self.precision_pct),
            ));
        }
        let knob = crate::workload::info(&self.base.workload.name)
            .and_then(|w| w.knobs.iter().find(|k| k.name == RATE_KNOB));
        match knob {
            None => errs.push(FieldError::new(
                "workload",
                format!(
                    "{}: maxload needs an open-loop workload with a rate knob (serve)",
                    self.base.workload.name
                ),
            )),
            Some(k) if !(k.min..=k.max).contains(&self.from) => errs.push(FieldError::new(
                "from",
                format!("{}: a rate in {}..={}", self.from, k.min, k.max),
            )),
            Some(_) => {}
        }
        if let Err(inv) = self.base.validate() {
            errs.extend(inv.0);
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(Invalid(errs))
        }
    }

    /// The searches of this shard's repeats, in repeat order.
    pub fn run(&self, shard: Shard, threads: usize) -> Result<Vec<SearchLine>, Invalid> {
        self.validate()?;
        let n = self.base.repeats.max(1);
        let seeds = repeat::seeds(self.base.seed, n);
        let mine: Vec<(usize, u64)> = seeds
            .into_iter()
            .enumerate()
            .filter(|(i, _)| shard.has(*i))
            .collect();
        repeat::parallel_map(&mine, threads, |&(i, seed)| self.search(i, seed))
            .into_iter()
            .collect()
    }

    /// The highest rate the search may probe: the `rate` knob's maximum.
    fn max_rate(&self) -> u64 {
        crate::workload::info(&self.base.workload.name)
            .and_then(|w| w.knobs.iter().find(|k| k.name == RATE_KNOB))
            .map_or(self.from, |k| k.max)
    }

    /// The search's rule, as a pure function of the probes made so far (in order): the next rate to
    /// probe, or the end with the rate at the bound. `search` (the CLI) and the page (each probe a
    /// worker job, `wasm::maxload_step`) both step through this, so their searches are one.
    ///
    /// From `from` the rate doubles while the probe is under the bound (or halves while it is over)
    /// until a bracket [under, over] is found, then bisects it until its width is at most
    /// `precision_pct` % of the lower end. `probes` must be the ones this function asked for; a
    /// probe at another rate is an error naming `probes`.
    pub fn next(&self, probes: &[Probe]) -> Result<Next, FieldError> {
        let max = self.max_rate();
        // replays the search against the recorded outcomes; the first rate with none is next
        let asked = std::cell::Cell::new(0usize);
        let ask = |rate: u64| -> Result<Option<bool>, FieldError> {
            let k = asked.get();
            let Some(p) = probes.get(k) else {
                return Ok(None);
            };
            if p.rate != rate {
                return Err(FieldError::new(
                    "probes",
                    format!(
                        "probe {k} is at {}/s: the search asked for {rate}/s",
                        p.rate
                    ),
                ));
            }
            asked.set(k + 1);
            Ok(Some(p.under))
        };
        let n = probes.len();
        // the bracket: lo under the bound (0: nothing found under), hi over it (None: never)
        let (mut lo, mut hi) = (0u64, None);
        let mut r = self.from;
        let left = |lo: u64, hi: u64| self.bisections(lo, hi);
        match ask(r)? {
            None => {
                return Ok(Next::Probe {
                    rate: r,
                    left: 1 + left(r, 2 * r),
                });
            }
            Some(true) => {
                lo = r;
                let mut done = 1;
                while done < MAX_PROBES && r < max {
                    r = r.saturating_mul(2).min(max);
                    done += 1;
                    match ask(r)? {
                        None => {
                            return Ok(Next::Probe {
                                rate: r,
                                left: 1 + left(r / 2, r),
                            });
                        }
                        Some(true) => lo = r,
                        Some(false) => {
                            hi = Some(r);
                            break;
                        }
                    }
                }
            }
            Some(false) => {
                hi = Some(r);
                let mut done = 1;
                while done < MAX_PROBES && r > 1 {
                    r /= 2;
                    done += 1;
                    match ask(r)? {
                        None => {
                            return Ok(Next::Probe {
                                rate: r,
                                left: 1 + left(r, 2 * r),
                            });
                        }
                        Some(true) => {
                            lo = r;
                            break;
                        }
                        Some(false) => hi = Some(r),
                    }
                }
            }
        }
        if let Some(mut hi) = hi {
            let mut done = asked.get();
            while done < MAX_PROBES
                && lo > 0
                && (hi - lo) as f64 > lo as f64 * self.precision_pct / 100.0
                && hi - lo > 1
            {
                let mid = lo + (hi - lo) / 2;
                done += 1;
                match ask(mid)? {
                    None => {
                        return Ok(Next::Probe {
                            rate: mid,
                            left: left(lo, hi).max(1),
                        });
                    }
                    Some(true) => lo = mid,
                    Some(false) => hi = mid,
                }
            }
        }
        if asked.get() != n {
            return Err(FieldError::new(
                "probes",
                format!("{n} probes: the search ended after {}", asked.get()),
            ));
        }
        Ok(Next::Done { rate_at_bound: lo })
    }

    /// How many bisections take the bracket [lo, hi] to the precision (at most `MAX_PROBES`): what
    /// is left of a search, for its time left.
    fn bisections(&self, mut lo: u64, hi: u64) -> usize {
        let mut n = 0;
        let mut w = hi.saturating_sub(lo);
        lo = lo.max(1);
        while n < MAX_PROBES && w as f64 > lo as f64 * self.precision_pct / 100.0 && w > 1 {
            w /= 2;
            n += 1;
        }
        n
    }

    /// One repeat's search with `seed`.
    pub fn search(&self, index: usize, seed: u64) -> Result<SearchLine, Invalid> {
        let mut probes = Vec::new();
        loop {
            match self.next(&probes)? {
                Next::Probe { rate, .. } => {
                    let e = self.probe_experiment(rate, seed)?;
                    let mut run = Run::new(&e, Side::A)?;
                    while !run.step(1 << 20) {}
                    run.flush();
                    let at = run
                        .engine()
                        .metrics
                        .latency
                        .quantile(self.percentile / 100.0) as f64
                        / 1e3;
                    probes.push(self.probe_of(rate, &run.report(), Some(at))?);
                }
                Next::Done { rate_at_bound } => {
                    return Ok(self.line(index, seed, probes, rate_at_bound));
                }
            }
        }
    }

    /// A finished search as its JSON line.
    pub fn line(
        &self,
        index: usize,
        seed: u64,
        probes: Vec<Probe>,
        rate_at_bound: u64,
    ) -> SearchLine {
        SearchLine {
            grid: self.hash(),
            index,
            points: self.base.repeats.max(1) as usize,
            seed,
            percentile: self.percentile,
            bound_us: self.bound_us,
            probes,
            rate_at_bound,
        }
    }

    /// The run of a probe at `rate` with `seed`: the base experiment, one repeat, warm-up auto.
    pub fn probe_experiment(&self, rate: u64, seed: u64) -> Result<Experiment, Invalid> {
        let mut e = self.base.clone();
        e.seed = seed;
        e.repeats = 1;
        e.workload.knobs.insert(RATE_KNOB.into(), rate.into());
        Warmup::Auto.apply(&mut e)?;
        Ok(e)
    }

    /// A probe from its run's report. The searched percentile is the report's own when it prints
    /// that one (p50, p90, p99, p99.9), so a search from reports alone (the page's) is the CLI's;
    /// any other is `at_us`, the run's histogram read at the percentile (`None`: not available).
    pub fn probe_of(
        &self,
        rate: u64,
        report: &crate::report::Report,
        at_us: Option<f64>,
    ) -> Result<Probe, Invalid> {
        let s = report.serve.as_ref().ok_or_else(|| {
            Invalid::from(FieldError::new(
                "workload",
                "maxload needs an open-loop workload (serve)",
            ))
        })?;
        let printed = [s.p50_us, s.p90_us, s.p99_us, s.p999_us];
        let at = match REPORTED_PERCENTILES
            .iter()
            .position(|p| *p == self.percentile)
        {
            Some(i) => printed[i],
            None => at_us.ok_or_else(|| {
                Invalid::from(FieldError::new(
                    "percentile",
                    format!(
                        "{}: from a report alone, one of 50, 90, 99, 99.9 (the percentiles it prints)",
                        self.percentile
                    ),
                ))
            })?,
        };
        Ok(Probe {
            rate,
            achieved: s.achieved_per_sec,
            p50_us: s.p50_us,
            p99_us: s.p99_us,
            p999_us: s.p999_us,
            at_percentile_us: at,
            under: at <= self.bound_us && s.achieved_per_sec >= KEPT_UP * rate as f64,
        })
    }
}

/// What the search does next (`MaxLoad::next`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum Next {
    /// Probe `rate`; about `left` probes remain, this one included (an estimate for the time left:
    /// the bisections of the bracket as it stands, one doubling more while none is found).
    Probe { rate: u64, left: usize },
    /// The search is over: the highest probed rate under the bound (0: none was).
    Done { rate_at_bound: u64 },
}

/// The rate at the bound over the searches: mean and 95% interval (`stats::Summary`).
pub fn rate_at_bound(lines: &[SearchLine]) -> stats::Summary {
    let x: Vec<f64> = lines.iter().map(|l| l.rate_at_bound as f64).collect();
    stats::Summary::of(&x)
}

pub fn to_lines(lines: &[SearchLine]) -> String {
    let mut s = String::new();
    for l in lines {
        let _ = writeln!(s, "{}", serde_json::to_string(l).unwrap_or_default());
    }
    s
}

/// The table: every probe of every repeat, then the rate at the bound with its interval.
pub fn to_text(lines: &[SearchLine]) -> String {
    let mut s = String::new();
    let Some(first) = lines.first() else {
        return s;
    };
    let (percentile, bound_us) = (first.percentile, first.bound_us);
    let pq = format!("p{percentile}");
    let _ = writeln!(
        s,
        "{:>6} {:>11} {:>12} {:>9} {:>9} {:>9} {:>9}  {pq}≤{bound_us}µs",
        "repeat",
        "rate/s",
        "achieved/s",
        "p50 µs",
        "p99 µs",
        "p99.9 µs",
        format!("{pq} µs")
    );
    for l in lines {
        for p in &l.probes {
            let _ = writeln!(
                s,
                "{:>6} {:>11} {:>12.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1}  {}",
                l.index,
                p.rate,
                p.achieved,
                p.p50_us,
                p.p99_us,
                p.p999_us,
                p.at_percentile_us,
                if p.under { "yes" } else { "no" }
            );
        }
    }
    let _ = writeln!(s, "{}", headline(lines));
    s
}

/// The result in one sentence: the rate at the bound, its 95% interval over the repeats (or why
/// there is none) and each repeat's rate; the last line of `to_text`, and the page's result text.
pub fn headline(lines: &[SearchLine]) -> String {
    let Some(first) = lines.first() else {
        return String::new();
    };
    let pq = format!("p{}", first.percentile);
    let per: Vec<String> = lines.iter().map(|l| l.rate_at_bound.to_string()).collect();
    let sum = rate_at_bound(lines);
    let mut s = format!(
        "rate at the bound ({pq} ≤ {} µs): {:.0}/s",
        first.bound_us, sum.mean
    );
    if sum.n > 1 {
        let _ = write!(
            s,
            ", 95% interval [{:.0}, {:.0}] over {} repeats",
            sum.ci95[0], sum.ci95[1], sum.n
        );
    } else {
        let _ = write!(s, " (one search: no interval; repeats above 1 give one)");
    }
    let _ = write!(s, "; per repeat: {}", per.join(", "));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(bound_us: f64) -> MaxLoad {
        let mut e = Experiment::default();
        e.machine.preset = "genoa-vm-16".into();
        e.workload.name = "serve".into();
        e.seconds = 0.02;
        e.repeats = 3;
        MaxLoad {
            base: e,
            percentile: 99.0,
            bound_us,
            from: 100_000,
            precision_pct: 10.0,
        }
    }

    #[test]
    fn shards_merge_to_the_unsharded_lines() {
        let m = small(200.0);
        let all = to_lines(&m.run(Shard::ALL, 2).unwrap());
        let s0 = to_lines(&m.run(Shard { index: 0, count: 2 }, 1).unwrap());
        let s1 = to_lines(&m.run(Shard { index: 1, count: 2 }, 1).unwrap());
        let merged =
            crate::experiment::grid::merge_texts(&[("s1".into(), s1), ("s0".into(), s0)]).unwrap();
        let joined: String = merged.iter().map(|(_, t)| format!("{t}\n")).collect();
        assert_eq!(joined, all);
    }

    #[test]
    fn a_higher_bound_never_gives_a_lower_rate() {
        let mut last = 0.0;
        for bound in [60.0, 200.0, 2000.0] {
            let mut m = small(bound);
            m.base.repeats = 1;
            let lines = m.run(Shard::ALL, 1).unwrap();
            let r = rate_at_bound(&lines).mean;
            assert!(r >= last, "bound {bound} µs: {r}/s below {last}/s");
            last = r;
        }
        assert!(last > 0.0);
    }

    #[test]
    fn the_search_brackets_the_bound_to_its_precision() {
        let m = small(200.0);
        let l = m.search(0, 1).unwrap();
        let under = l.probes.iter().filter(|p| p.under).map(|p| p.rate).max();
        assert_eq!(under, Some(l.rate_at_bound));
        // the lowest rate probed over the bound above it is within the precision
        let over = l
            .probes
            .iter()
            .filter(|p| !p.under && p.rate > l.rate_at_bound)
            .map(|p| p.rate)
            .min()
            .expect("a probe over the bound");
        assert!((over - l.rate_at_bound) as f64 <= 0.1 * l.rate_at_bound as f64 + 1.0);
        for p in &l.probes {
            assert_eq!(
                p.under,
                p.at_percentile_us <= 200.0 && p.achieved >= KEPT_UP * p.rate as f64
            );
        }
    }

    #[test]
    fn bad_inputs_name_their_field() {
        let fields = |m: &MaxLoad| -> Vec<String> {
            m.validate()
                .unwrap_err()
                .0
                .into_iter()
                .map(|f| f.field)
                .collect()
        };
        for p in [0.0, -1.0, 100.5, f64::NAN] {
            let mut m = small(1000.0);
            m.percentile = p;
            assert_eq!(fields(&m), ["percentile"], "{p}");
        }
        let mut m = small(0.0);
        assert_eq!(fields(&m), ["bound_us"]);
        m.bound_us = 1000.0;
        m.base.workload.name = "hackbench".into();
        assert_eq!(fields(&m), ["workload"]);
        assert!(small(1000.0).validate().is_ok());
        let mut m = small(1000.0);
        m.percentile = 100.0;
        assert!(m.validate().is_ok(), "p100 is the maximum");
    }

    /// The page's search: each probe a run of `probe_experiment`, read back from its report
    /// alone (`probe_of` without the histogram), stepped by `next`. Same lines as `search`.
    fn from_reports(m: &MaxLoad, index: usize, seed: u64) -> SearchLine {
        let mut probes = Vec::new();
        loop {
            match m.next(&probes).unwrap() {
                Next::Probe { rate, left } => {
                    assert!(left >= 1);
                    let e = m.probe_experiment(rate, seed).unwrap();
                    let r = crate::experiment::run::run(&e, Side::A).unwrap();
                    probes.push(m.probe_of(rate, &r, None).unwrap());
                }
                Next::Done { rate_at_bound } => return m.line(index, seed, probes, rate_at_bound),
            }
        }
    }

    #[test]
    fn a_search_from_reports_alone_is_the_cli_search() {
        for (percentile, bound) in [(99.0, 200.0), (99.9, 300.0), (50.0, 60.0)] {
            let mut m = small(bound);
            m.percentile = percentile;
            let cli = m.search(1, 7).unwrap();
            let page = from_reports(&m, 1, 7);
            assert_eq!(to_lines(&[page]), to_lines(&[cli]), "p{percentile}");
        }
        // a percentile the report does not print cannot be read from it
        let mut m = small(200.0);
        m.percentile = 95.0;
        let e = m.probe_experiment(100_000, 1).unwrap();
        let r = crate::experiment::run::run(&e, Side::A).unwrap();
        let err = m.probe_of(100_000, &r, None).unwrap_err();
        assert_eq!(err.0[0].field, "percentile");
    }

    #[test]
    fn next_refuses_probes_it_did_not_ask_for() {
        let m = small(200.0);
        assert_eq!(
            m.next(&[]).unwrap(),
            Next::Probe {
                rate: 100_000,
                left: 1 + m.bisections(100_000, 200_000)
            }
        );
        let p = |rate, under| Probe {
            rate,
            achieved: rate as f64,
            p50_us: 1.0,
            p99_us: 1.0,
            p999_us: 1.0,
            at_percentile_us: 1.0,
            under,
        };
        // under at 100k: doubles to 200k; over there: bisects to 150k
        assert!(matches!(
            m.next(&[p(100_000, true)]),
            Ok(Next::Probe { rate: 200_000, .. })
        ));
        assert!(matches!(
            m.next(&[p(100_000, true), p(200_000, false)]),
            Ok(Next::Probe { rate: 150_000, .. })
        ));
        // over at 100k: halves
        assert!(matches!(
            m.next(&[p(100_000, false)]),
            Ok(Next::Probe { rate: 50_000, .. })
        ));
        let err = m.next(&[p(100_000, true), p(300_000, true)]).unwrap_err();
        assert_eq!(err.field, "probes");
        assert!(
            err.message.contains("asked for 200000/s"),
            "{}",
            err.message
        );
    }
}
