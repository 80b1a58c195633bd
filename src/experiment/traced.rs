//! A run with its trace, in either format (docs/TRACE.md): `run --trace FILE` and the page's
//! Download trace. The window defaults to the longest one from its start that fits the event cap
//! (never an error); an explicit end that holds too many events is refused naming the cap.

use crate::error::Invalid;
use crate::experiment::scenario::{Experiment, Side};
use crate::sched::{self, PerfettoCounts, TraceFormat};
use crate::{Report, Run};

/// A written trace and what it covers.
#[derive(Clone, Debug)]
pub struct TraceFile {
    pub format: TraceFormat,
    pub bytes: Vec<u8>,
    /// The window, ns from the start of the run.
    pub from_ns: u64,
    pub to_ns: u64,
    /// The window was cut at `to_ns` by the event cap (no end was asked for).
    pub cut: bool,
    /// Events recorded (what the cap counts).
    pub events: usize,
    /// Perfetto only: event counts by kind.
    pub counts: Option<PerfettoCounts>,
}

impl TraceFile {
    /// One line saying what the file holds, e.g. `trace [0 s, 0.0125 s) of the run, cut at the
    /// 1000000-event cap: 999,120 events, 31.2 MB`.
    pub fn summary(&self) -> String {
        let cut = if self.cut {
            format!(", cut at the {}-event cap", sched::TRACE_MAX_EVENTS)
        } else {
            String::new()
        };
        format!(
            "trace [{} s, {} s) of the run{cut}: {} events, {:.1} MB",
            self.from_ns as f64 / 1e9,
            self.to_ns as f64 / 1e9,
            self.events,
            self.bytes.len() as f64 / 1e6
        )
    }
}

/// The format a file name asks for: `.pftrace` (or `.perfetto-trace`) is Perfetto protobuf,
/// anything else Chrome JSON (today's format, kept for `.json`).
pub fn format_for(file: &str) -> TraceFormat {
    let f = file.to_ascii_lowercase();
    if f.ends_with(".pftrace") || f.ends_with(".perfetto-trace") {
        TraceFormat::Perfetto
    } else {
        TraceFormat::Json
    }
}

impl Run {
    /// Records a trace in `format` of simulated time [from_s, to_s) (seconds from the start,
    /// warm-up included). Without `to_s` the window ends where the cap is reached, if it is.
    pub fn enable_trace_as(
        &mut self,
        format: TraceFormat,
        from_s: Option<f64>,
        to_s: Option<f64>,
    ) -> Result<(), Invalid> {
        // the checks and the window's rounding are enable_trace's; the tracer is then replaced
        self.enable_trace(from_s, to_s)?;
        let from = (from_s.unwrap_or(0.0) * 1e9) as u64;
        let to = to_s.map_or(u64::MAX, |t| (t * 1e9) as u64);
        self.engine
            .set_tracer_as(format, from, to, to_s.is_none(), sched::TRACE_MAX_EVENTS);
        Ok(())
    }

    /// The trace recorded so far, in the format it was enabled with.
    pub fn trace_file(&self) -> Result<TraceFile, Invalid> {
        let (from_ns, to_ns, cut) = self.engine.trace_window().unwrap_or((0, 0, false));
        let format = self.engine.trace_format().unwrap_or(TraceFormat::Json);
        let events = self.engine.trace_events();
        let (bytes, counts) = match format {
            TraceFormat::Json => (self.engine.trace_json()?.into_bytes(), None),
            TraceFormat::Perfetto => {
                let (b, c) = self.engine.trace_perfetto()?;
                (b, Some(c))
            }
        };
        Ok(TraceFile {
            format,
            bytes,
            from_ns,
            to_ns,
            cut,
            events,
            counts,
        })
    }
}

/// Runs one side to the end with a trace (`Run::enable_trace_as`): the report (the same as
/// `run`'s) and the trace.
pub fn run_traced_as(
    exp: &Experiment,
    side: Side,
    format: TraceFormat,
    from_s: Option<f64>,
    to_s: Option<f64>,
) -> Result<(Report, TraceFile), Invalid> {
    let mut r = Run::new(exp, side)?;
    r.enable_trace_as(format, from_s, to_s)?;
    while !r.step(1 << 20) {}
    let report = r.report();
    Ok((report, r.trace_file()?))
}
