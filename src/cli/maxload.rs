//! `schedplay maxload`: the highest rate whose latency percentile stays under a bound.

use super::args::*;
use clap::Args;
use schedplay::error::Invalid;
use schedplay::experiment::grid::Shard;
use schedplay::experiment::maxload::{self, MaxLoad, SearchLine};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct MaxLoadArgs {
    #[command(flatten)]
    pub(crate) s: ScenarioArgs,
    /// The latency percentile held under the bound, in (0, 100] (default 99).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) percentile: Option<String>,
    /// The bound, µs, above 0 (default 1000).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) bound_us: Option<String>,
    /// The first rate probed, requests/s (default 100000).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) from: Option<String>,
    /// Stop bisecting when the bracket is this narrow, % of the rate (default 2).
    #[arg(long, allow_hyphen_values = true)]
    pub(crate) precision_pct: Option<String>,
    /// Run only the repeats i with i mod N == I and print them as JSON lines (for `--merge`).
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub(crate) shard: Option<String>,
    /// Join the JSON lines of shards (files) and print the table (no scenario flags).
    #[arg(long, value_name = "FILES", num_args = 1.., conflicts_with = "shard")]
    pub(crate) merge: Vec<String>,
    /// Print the searches as JSON lines (the bytes `--merge` of all shards gives).
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: MaxLoadArgs) -> ExitCode {
    let lines: Vec<SearchLine> = if args.merge.is_empty() {
        let mut errs = Vec::new();
        // serve unless a workload is named (an oltp default would have no rate), before the
        // knobs are checked against it: `--set threads=32` alone is serve's knob
        let mut scenario = args.s.clone();
        if scenario.workload.is_none()
            && scenario.workload_file.is_none()
            && scenario.link.is_none()
            && scenario.story.is_none()
        {
            scenario.workload = Some("serve".into());
        }
        let base = scenario
            .experiment(None, None)
            .map_err(|e| errs.extend(e.0))
            .ok();
        let threads = args.s.threads().map_err(|e| errs.extend(e.0)).ok();
        let shard = match &args.shard {
            Some(s) => Shard::parse(s).map_err(|e| errs.push(e)).ok(),
            None => Some(Shard::ALL),
        };
        let percentile = number("percentile", &args.percentile, &mut errs)
            .unwrap_or(maxload::DEFAULT_PERCENTILE);
        let bound_us =
            number("bound_us", &args.bound_us, &mut errs).unwrap_or(maxload::DEFAULT_BOUND_US);
        let from = number("from", &args.from, &mut errs).unwrap_or(maxload::DEFAULT_FROM);
        let precision_pct = number("precision_pct", &args.precision_pct, &mut errs)
            .unwrap_or(maxload::DEFAULT_PRECISION_PCT);
        let (Some(base), Some(threads), Some(shard), true) =
            (base, threads, shard, errs.is_empty())
        else {
            return fail(Invalid(errs));
        };
        let m = MaxLoad {
            base,
            percentile,
            bound_us,
            from,
            precision_pct,
        };
        let lines = match m.run(shard, threads) {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        if args.shard.is_some() || args.json {
            print!("{}", maxload::to_lines(&lines));
            return ExitCode::SUCCESS;
        }
        lines
    } else {
        match super::merge::merged_shard_lines::<SearchLine>(&args.merge, args.json) {
            Ok(Some(lines)) => lines,
            Ok(None) => return ExitCode::SUCCESS,
            Err(e) => return fail(e),
        }
    };
    print!("{}", maxload::to_text(&lines));
    ExitCode::SUCCESS
}
