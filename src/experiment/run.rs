//! One side of an experiment run on the engine: `Run` advances it in slices (the page's worker
//! posts progress between slices), `run` runs a side to the end, `run_ab` both sides (two threads
//! natively, one after the other in wasm), `run_traced` one side with a trace. No I/O.

use crate::error::Invalid;
use crate::experiment::scenario::{Experiment, Side};
use crate::report::Report;
use crate::{sched, workload};

/// A run in progress, advanced in slices (the worker posts progress between slices).
pub struct Run {
    /// The engine (`traced.rs` replaces its tracer).
    pub(super) engine: sched::Engine,
    end_ns: u64,
    workload: String,
    unit: &'static str,
    patch_names: Vec<String>,
    /// The release that runs (the report says it).
    kernel: &'static str,
    /// The kernel knobs set (the report lists them).
    sched: std::collections::BTreeMap<String, u32>,
    /// The sched features switched from the release's defaults (the report lists them).
    feature_names: Vec<String>,
    seed: u64,
    /// The side's sched_ext object file name, if one runs it.
    scx_file: Option<String>,
    series_sent: usize,
    /// End of the warm-up, ns (0: none).
    warmup_ns: u64,
    /// The warm-up's totals have been kept (`Metrics::begin_window`), or there is no warm-up.
    window_begun: bool,
}

impl Run {
    pub fn new(exp: &Experiment, side: Side) -> Result<Run, Invalid> {
        let spec = exp.run_spec(side)?;
        let n = spec.topo.nr_cpus();
        let wl = workload::build(&spec.workload, &spec.knobs, n, &spec.assume)?;
        let end_ns = (spec.seconds * 1e9) as u64;
        // About 100 points per run, at least 10 ms apart.
        let sample_ns = (end_ns / 100).max(10_000_000).min(end_ns.max(1));
        let unit = workload::info(&spec.workload).map_or(
            if spec.workload == workload::rtapp::NAME {
                "task loops"
            } else {
                "units"
            },
            |w| w.unit,
        );
        let engine = sched::Engine::new_with_scx(
            spec.topo,
            spec.patches,
            spec.hz,
            spec.seed,
            wl,
            sample_ns,
            spec.assume,
            spec.scx.as_ref(),
        )
        .map_err(|e| {
            let field = if side == Side::A { "scx_a" } else { "scx_b" };
            crate::error::FieldError::new(field, e)
        })?;
        let warmup_ns = (spec.warmup * 1e9) as u64;
        Ok(Run {
            warmup_ns,
            window_begun: warmup_ns == 0,
            engine,
            end_ns,
            workload: spec.workload,
            unit,
            patch_names: spec.patch_names,
            kernel: spec.kernel,
            sched: spec.sched,
            feature_names: spec.feature_names,
            seed: spec.seed,
            scx_file: spec.scx_file,
            series_sent: 0,
        })
    }

    /// Handles up to `max_events` events; true when the run has reached its end.
    pub fn step(&mut self, max_events: u64) -> bool {
        let mut budget = max_events;
        if !self.window_begun {
            let before = self.engine.events;
            if !self.engine.run_until(self.warmup_ns, budget) {
                return false;
            }
            // The engine stands at the warm-up's end: charge open intervals up to it (additive,
            // as every sample does) and keep the totals the measured window starts from.
            self.engine.flush_accounting();
            let c = &self.engine.lines;
            let lines = (0..c.lines.len())
                .map(|l| {
                    let fields = (c.fields(l).iter())
                        .map(|f| [f.loads, f.stores, f.atomics, f.hitm])
                        .collect();
                    (crate::sched::metrics::line_totals(&c.stats(l)), fields)
                })
                .collect();
            let events = self.engine.task_events();
            let now = self.engine.now;
            self.engine.metrics.begin_window(now, events, lines);
            self.engine.schedstat_begin_window();
            self.window_begun = true;
            budget -= (self.engine.events - before).min(budget);
        }
        self.engine.run_until(self.end_ns, budget)
    }

    pub fn progress(&self) -> f64 {
        (self.engine.now as f64 / self.end_ns.max(1) as f64).min(1.0)
    }

    /// Series points produced since the last call (each series by name: `Series::named`).
    pub fn take_series(&mut self) -> sched::Series {
        let s = &self.engine.metrics.series;
        let from = self.series_sent;
        self.series_sent = s.t_s.len();
        sched::Series {
            t_s: s.t_s[from..].to_vec(),
            throughput: s.throughput[from..].to_vec(),
            contention_pct: s.contention_pct[from..].to_vec(),
            utilization: s.utilization[from..].to_vec(),
        }
    }

    pub fn report(&mut self) -> Report {
        let r = Report::from_engine(
            &mut self.engine,
            &self.workload,
            self.unit,
            &self.patch_names,
            self.seed,
        )
        .on_kernel(self.kernel, &self.sched, &self.feature_names);
        match &self.scx_file {
            Some(f) => r.with_scx(&self.engine, f),
            None => r,
        }
    }

    pub fn engine(&self) -> &sched::Engine {
        &self.engine
    }

    /// Records a trace of simulated time [from_s, to_s) (seconds from the start, warm-up included;
    /// `None`: the whole run), at most `sched::TRACE_MAX_EVENTS` events. Call before the first step.
    pub fn enable_trace(&mut self, from_s: Option<f64>, to_s: Option<f64>) -> Result<(), Invalid> {
        if self.engine.events > 0 {
            return Err(crate::error::FieldError::new(
                "trace",
                "enable the trace before the run starts",
            )
            .into());
        }
        let end_s = self.end_ns as f64 / 1e9;
        let from = from_s.unwrap_or(0.0);
        let to = to_s.unwrap_or(end_s);
        let mut errs = Vec::new();
        if !(from.is_finite() && (0.0..end_s).contains(&from)) {
            errs.push(crate::error::FieldError::new(
                "trace_from",
                format!("{from} is out of range: seconds in [0, {end_s}) (the run's length)"),
            ));
        }
        if !(to.is_finite() && to > from && to <= end_s) {
            errs.push(crate::error::FieldError::new(
                "trace_to",
                format!("{to} is out of range: seconds in (trace_from = {from}, {end_s}]"),
            ));
        }
        if !errs.is_empty() {
            return Err(Invalid(errs));
        }
        // Without an end the trace also holds the kernel work charged past the end (a CPU's last
        // pass), as the profile does.
        let to_ns = to_s.map_or(u64::MAX, |t| (t * 1e9) as u64);
        let from_ns = (from * 1e9) as u64;
        // without an end the window is cut where the cap is reached (docs/TRACE.md)
        self.engine.set_tracer_as(
            sched::TraceFormat::Json,
            from_ns,
            to_ns,
            to_s.is_none(),
            sched::TRACE_MAX_EVENTS,
        );
        Ok(())
    }

    /// The recorded trace as Chrome JSON trace events (docs/TRACE.md); an error names the cap.
    pub fn trace_json(&self) -> Result<String, Invalid> {
        self.engine.trace_json()
    }

    /// Charges open intervals up to now (so per-CPU time can be checked mid-run).
    pub fn flush(&mut self) {
        self.engine.flush_accounting();
    }
}

/// Runs both sides of an experiment to the end: natively on two threads at once (the engine is
/// single-threaded and the sides are independent, so the reports are the same as one after the
/// other), in wasm one after the other (the page runs sides in two workers instead).
pub fn run_ab(exp: &Experiment) -> (Result<Report, Invalid>, Result<Report, Invalid>) {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::scope(|s| {
            let b = s.spawn(|| run(exp, Side::B));
            let a = run(exp, Side::A);
            (a, b.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
        })
    }
    #[cfg(target_arch = "wasm32")]
    {
        (run(exp, Side::A), run(exp, Side::B))
    }
}

/// Runs one side of an experiment to the end with a trace of [from_s, to_s) (`Run::enable_trace`):
/// the report (the same as `run`'s) and the trace's JSON text.
pub fn run_traced(
    exp: &Experiment,
    side: Side,
    from_s: Option<f64>,
    to_s: Option<f64>,
) -> Result<(Report, String), Invalid> {
    let mut r = Run::new(exp, side)?;
    r.enable_trace(from_s, to_s)?;
    while !r.step(1 << 20) {}
    let report = r.report();
    Ok((report, r.trace_json()?))
}

/// A run with schbench v1.0's summary of its measured window.
pub fn run_with_schbench_v1(exp: &Experiment, side: Side) -> Result<(Report, String), Invalid> {
    let mut r = Run::new(exp, side)?;
    while !r.step(1 << 20) {}
    r.flush();
    let report = r.report();
    let m = &r.engine().metrics;
    let from = report.warmup_s;
    let rps: Vec<f64> = (m.series.t_s.iter().zip(&m.series.throughput))
        .filter(|(t, _)| **t > from)
        .map(|(_, v)| *v)
        .collect();
    let runtime = (report.sim_seconds - report.warmup_s).round() as u64;
    Ok((
        report,
        crate::report::schbench_v1::render(&m.wakeup_latency, None, &rps, runtime),
    ))
}

/// Runs one side of an experiment to the end.
pub fn run(exp: &Experiment, side: Side) -> Result<Report, Invalid> {
    let mut r = Run::new(exp, side)?;
    while !r.step(1 << 20) {}
    Ok(r.report())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small(workload: &str, kernel: &str, sched: &[(&str, &str)]) -> Experiment {
        let mut e = Experiment::default();
        e.machine.preset = "custom".into();
        e.machine.overrides.sockets = Some(2);
        e.machine.overrides.cores_per_socket = Some(8);
        e.machine.overrides.nodes_per_socket = Some(2);
        e.workload.name = workload.into();
        e.seconds = 0.05;
        e.seed = 5;
        e.kernel = kernel.into();
        for (k, v) in sched {
            e.sched.insert(k.to_string(), (*v).into());
        }
        e
    }

    /// The report of a side run to the end, `patch` applied to the engine first, with its labels
    /// (release, toggles, knobs) cleared: what the run did, not what it was called.
    fn unlabelled(exp: &Experiment, patch: impl Fn(&mut crate::patches::Patches)) -> String {
        let mut r = Run::new(exp, Side::A).unwrap();
        patch(&mut r.engine.patches);
        while !r.step(1 << 20) {}
        let mut rep = r.report();
        rep.kernel = crate::kernels::DEFAULT_KERNEL.into();
        rep.patches.clear();
        rep.sched.clear();
        rep.rehash();
        rep.report_hash
    }

    /// 7.2 with cache-aware scheduling switched off (debugfs `llc_balancing/enabled=0`) is 7.0
    /// plus v7.1's wakeup pick (ac8e69e69363, an internal flag no toggle sets, so it is set on the
    /// engine here) bit for bit; on oltp the pick is on the path (7.0 alone differs).
    #[test]
    fn seven_two_with_sched_cache_off_is_seven_zero_with_the_v7_1_wakeup_pick() {
        for w in ["oltp", "hackbench"] {
            let off = unlabelled(&small(w, "7.2", &[("llc_balancing/enabled", "0")]), |_| {});
            let e70 = small(w, "7.0", &[]);
            let with_fix = unlabelled(&e70, |p| p.merged.wakeup_pick_next_entity = true);
            assert_eq!(off, with_fix, "{w}");
            if w == "oltp" {
                assert_ne!(off, unlabelled(&e70, |_| {}), "the fix is on the path");
            }
        }
    }
}
