//! `schedplay curve`: an A/B at steady state over a workload knob's values, or a story's curve.

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::curve::{self, Curve, CurveLine};
use schedplay::experiment::grid::Shard;
use schedplay::experiment::stories;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct CurveArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// The workload knob the curve varies (default: the story's, else `clients`).
    #[arg(long)]
    pub(crate) knob: Option<String>,
    /// The knob's values, comma-separated (default: the story's).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub(crate) values: Vec<String>,
    /// The profile symbol whose share each point shows (default: the story's, else
    /// sched_balance_domains).
    #[arg(long)]
    pub(crate) symbol: Option<String>,
    /// Run only the points i with i mod N == I and print them as JSON lines (for `--merge`).
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub(crate) shard: Option<String>,
    /// Join the JSON lines of shards (files) and print the curve (no scenario flags).
    #[arg(long, value_name = "FILES", num_args = 1.., conflicts_with = "shard")]
    pub(crate) merge: Vec<String>,
    /// Print the points as JSON lines (the bytes `--merge` of all shards gives).
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: CurveArgs) -> ExitCode {
    let story = match args.ab.s.story.as_deref().map(stories::find).transpose() {
        Ok(s) => s,
        Err(e) => return fail(e.into()),
    };
    let sc = story.as_ref().and_then(|s| s.curve.clone());
    let symbol = args
        .symbol
        .clone()
        .or(story.as_ref().map(|s| s.symbol.to_string()))
        .unwrap_or_else(|| "sched_balance_domains".into());
    let reported = sc.as_ref().map(|c| c.reported);
    let lines: Vec<CurveLine> = if args.merge.is_empty() {
        let mut errs = Vec::new();
        let base = args.ab.experiment().map_err(|e| errs.extend(e.0)).ok();
        let threads = args.ab.s.threads().map_err(|e| errs.extend(e.0)).ok();
        let shard = match &args.shard {
            Some(s) => Shard::parse(s).map_err(|e| errs.push(e)).ok(),
            None => Some(Shard::ALL),
        };
        let values: Vec<u64> = if args.values.is_empty() {
            sc.as_ref().map(|c| c.values.to_vec()).unwrap_or_default()
        } else {
            args.values
                .iter()
                .filter_map(|v| {
                    v.trim()
                        .parse()
                        .map_err(|_| {
                            errs.push(FieldError::new(
                                "values",
                                format!("{v:?} is not a whole number"),
                            ))
                        })
                        .ok()
                })
                .collect()
        };
        let knob = args
            .knob
            .clone()
            .or(sc.as_ref().map(|c| c.knob.to_string()))
            .unwrap_or_else(|| "clients".into());
        let (Some(base), Some(threads), Some(shard), true) =
            (base, threads, shard, errs.is_empty())
        else {
            return fail(Invalid(errs));
        };
        let c = Curve {
            base,
            knob,
            values,
            symbol: symbol.clone(),
        };
        let lines = match c.run(shard, threads) {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        if args.shard.is_some() || args.json {
            print!("{}", curve::to_lines(&lines));
            return ExitCode::SUCCESS;
        }
        lines
    } else {
        match super::merge::merged_shard_lines::<CurveLine>(&args.merge, args.json) {
            Ok(Some(lines)) => lines,
            Ok(None) => return ExitCode::SUCCESS,
            Err(e) => return fail(e),
        }
    };
    print!("{}", curve::to_text(&lines, &symbol, reported));
    ExitCode::SUCCESS
}
