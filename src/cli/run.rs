//! `schedplay run`: one scenario (or its repeats), optionally with a trace or /proc/schedstat.

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::scenario::Side;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct RunArgs {
    #[command(flatten)]
    pub(crate) s: ScenarioArgs,
    /// Patches to apply, comma-separated or repeated (see `schedplay presets`).
    /// On a kernel that merged a toggle it is included; `-NAME` (asking it off) is refused.
    #[arg(long = "patch", value_name = "NAMES", allow_hyphen_values = true)]
    pub(crate) patches: Vec<String>,
    /// Print the report as JSON (fields: docs/SCHEMA.md).
    #[arg(long)]
    pub(crate) json: bool,
    /// Write a trace of the run to FILE: FILE.pftrace is Perfetto protobuf (CPU scheduling tracks, thread states), any other name Chrome JSON trace events; open it in ui.perfetto.dev (docs/TRACE.md). Without --trace-to the window ends where the 1,000,000-event cap is reached.
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<String>,
    /// Trace window start, seconds of simulated time from the start (default 0).
    #[arg(long, value_name = "S", allow_hyphen_values = true, requires = "trace")]
    pub(crate) trace_from: Option<String>,
    /// Trace window end, seconds (default: the end of the run).
    #[arg(long, value_name = "S", allow_hyphen_values = true, requires = "trace")]
    pub(crate) trace_to: Option<String>,
    /// After the report, print /proc/schedstat (version 17) over the measured window and its per-domain summary, as perf sched stats report (text only).
    #[arg(long, conflicts_with_all = ["json", "trace"])]
    pub(crate) schedstat: bool,
    /// After the report, print each sched domain's run-time fields at the end of the run, as
    /// grep . /sys/kernel/debug/sched/domains/cpu*/domain*/* lists them (max_newidle_lb_cost,
    /// balance_interval, last_balance from now, nr_balance_failed, newidle_call/success/ratio
    /// from 6.19); with --json, the report gets a `domains_state` array (docs/SCHEMA.md).
    #[arg(long, conflicts_with_all = ["trace", "schedstat"])]
    pub(crate) domains_state: bool,
    /// After the report, print schbench v1.0's summary of the measured window: Wakeup and
    /// Request Latencies percentiles (usec) and RPS percentiles, as schbench prints them (text only).
    #[arg(long, conflicts_with_all = ["json", "trace", "schedstat", "domains_state"])]
    pub(crate) schbench_v1: bool,
}

pub(crate) fn main(args: RunArgs) -> ExitCode {
    let RunArgs {
        s,
        patches,
        json,
        trace,
        trace_from,
        trace_to,
        schedstat,
        domains_state,
        schbench_v1,
    } = args;
    // A link's B is the side `run --link` runs (the change under test); --patch overrides it.
    let given = (!patches.is_empty()).then(|| {
        patches
            .iter()
            .flat_map(|p| split_list(p))
            .collect::<Vec<_>>()
    });
    let e = match s.experiment(given.clone(), given) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let side = if s.link.is_some() { Side::B } else { Side::A };
    let threads = match s.threads() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if let Some(file) = &trace {
        if e.repeats > 1 {
            return fail(
                FieldError::new("trace", "a trace is of one run: repeats must be 1").into(),
            );
        }
        let (from, to) = match (
            seconds_arg("trace_from", &trace_from),
            seconds_arg("trace_to", &trace_to),
        ) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(a), Err(b)) => return fail(Invalid(vec![a, b])),
            (Err(a), _) | (_, Err(a)) => return fail(a.into()),
        };
        let format = schedplay::experiment::traced::format_for(file);
        let (r, tf) = match schedplay::experiment::traced::run_traced_as(&e, side, format, from, to)
        {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        if let Err(err) = std::fs::write(file, &tf.bytes) {
            return fail(FieldError::new("trace", format!("{file}: {err}")).into());
        }
        eprintln!("{} → {file}", tf.summary());
        return print_report(&r, json);
    }
    if e.repeats > 1 {
        if schbench_v1 {
            let err = FieldError::new(
                "schbench_v1",
                "schbench's summary is of one run: repeats must be 1",
            );
            return fail(err.into());
        }
        if schedstat {
            let err = FieldError::new("schedstat", "schedstat is of one run: repeats must be 1");
            return fail(err.into());
        }
        if domains_state {
            let err = FieldError::new(
                "domains_state",
                "the domains' state is of one run: repeats must be 1",
            );
            return fail(err.into());
        }
        return print_table(&e, &[side], threads, json);
    }
    if schbench_v1 {
        let (r, text) = match schedplay::experiment::run::run_with_schbench_v1(&e, side) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        print!("{}", r.to_text());
        println!("\n# schbench v1.0's summary of the measured window");
        print!("{text}");
        return ExitCode::SUCCESS;
    }
    if schedstat {
        let (r, st) = match schedplay::report::schedstat::run_with_schedstat(&e, side) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        print!("{}", r.to_text());
        println!("\n# /proc/schedstat over the measured window");
        print!("{}\n{}", st.proc_text, st.report_text);
        return ExitCode::SUCCESS;
    }
    if domains_state {
        let (r, rows) = match schedplay::report::domains_state::run_with_domains_state(&e, side) {
            Ok(x) => x,
            Err(e) => return fail(e),
        };
        if json {
            // added beside the report's fields: not part of report_hash
            let mut v = serde_json::to_value(&r).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "domains_state".into(),
                    serde_json::to_value(&rows).unwrap_or_default(),
                );
            }
            println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
        } else {
            print!("{}", r.to_text());
            println!("\n# sched domains at the end of the run");
            print!("{}", schedplay::report::domains_state::text(&rows));
        }
        return ExitCode::SUCCESS;
    }
    let r = match run_side(&e, side) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else {
        print!("{}", r.to_text());
    }
    ExitCode::SUCCESS
}
