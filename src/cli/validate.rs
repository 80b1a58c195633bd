//! `schedplay validate`: the model against every published figure it is calibrated or checked against.

use super::args::*;
use clap::Args;
use schedplay::error::Invalid;
use schedplay::experiment::validation;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct ValidateArgs {
    /// Simulated seconds per run, 0.001..=60 (default 1: the steady-state rows of docs/MODEL.md).
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    pub(crate) seconds: String,
    /// Simulated seconds excluded at the start of each run, or `auto` (default: auto, the steady
    /// state of docs/MODEL.md; 0 gives the cold-start figures).
    #[arg(
        long,
        value_name = "S|auto",
        default_value = "auto",
        allow_hyphen_values = true
    )]
    pub(crate) warmup: String,
    /// Runs per side, 1..=100 (default 3).
    #[arg(
        long = "repeat",
        value_name = "N",
        default_value = "3",
        allow_hyphen_values = true
    )]
    pub(crate) repeat: String,
    /// First seed (default 1).
    #[arg(long, default_value = "1", allow_hyphen_values = true)]
    pub(crate) seed: String,
    /// Runs at once (default: every core).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    pub(crate) jobs: Option<String>,
    /// Print the rows as JSON (fields: docs/SCHEMA.md).
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the rows as a markdown table (docs/MODEL.md).
    #[arg(long)]
    pub(crate) markdown: bool,
    /// Exit 1 when a row misses.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Add each row's band over the assumptions' plausible ranges and the assumption that moves it
    /// most (a sensitivity screen per experiment: 41 times the runs; the verdicts stay the point's).
    #[arg(long)]
    pub(crate) bands: bool,
}

pub(crate) fn main(args: ValidateArgs) -> ExitCode {
    let ValidateArgs {
        seconds,
        warmup,
        repeat,
        seed,
        jobs,
        json,
        markdown,
        strict,
        bands,
    } = args;
    let mut errs = Vec::new();
    let seconds = number::<f64>("seconds", &Some(seconds), &mut errs);
    let repeats = number::<u32>("repeats", &Some(repeat), &mut errs);
    let seed = number::<u64>("seed", &Some(seed), &mut errs);
    let warmup = match warmup.trim() {
        "auto" => Some(validation::Warmup::Auto),
        _ => number::<f64>("warmup", &Some(warmup), &mut errs).map(validation::Warmup::Seconds),
    };
    let scen = ScenarioArgs {
        kernel: None,
        kernel_b: None,
        features: None,
        features_a: None,
        features_b: None,
        scx_a: None,
        scx_b: None,
        scx_opt_a: None,
        scx_opt_b: None,
        machine: None,
        machine_file: None,
        layout: Layout::default(),
        workload: None,
        workload_file: None,
        set: vec![],
        seconds: None,
        seed: None,
        link: None,
        story: None,
        repeat: None,
        warmup: None,
        jobs,
        assume: vec![],
    };
    let threads = scen.threads().map_err(|e| errs.extend(e.0)).ok();
    let (Some(seconds), Some(warmup), Some(repeats), Some(seed), Some(threads), true) =
        (seconds, warmup, repeats, seed, threads, errs.is_empty())
    else {
        return fail(Invalid(errs));
    };
    let s = validation::Settings {
        seconds,
        warmup,
        repeats,
        seed,
        threads,
    };
    let out = match validation::validate(validation::ROWS, &s).and_then(|o| {
        if bands {
            validation::bands::with_bands(validation::ROWS, &s, o, &[])
        } else {
            Ok(o)
        }
    }) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    } else if markdown {
        print!("{}", validation::to_markdown(&out, &s));
    } else {
        print!("{}", validation::to_text(&out, &s));
    }
    let missed = out.iter().any(|o| o.status == validation::Status::Misses);
    if strict && missed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
