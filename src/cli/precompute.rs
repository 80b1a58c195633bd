//! `schedplay precompute`: the stories' results the page ships (`experiment::precomputed`).

use super::args::fail;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::grid::Shard;
use schedplay::experiment::{precomputed, repeat};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct PrecomputeArgs {
    /// Run only the runs i with i mod N == I and print them as JSON lines (for `--merge`).
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub(crate) shard: Option<String>,
    /// Join the JSON lines of shards (files) and print the file (the unsharded run's bytes).
    #[arg(long, value_name = "FILES", num_args = 1.., conflicts_with = "shard")]
    pub(crate) merge: Vec<String>,
    /// Runs at once (default: every core).
    #[arg(long, value_name = "N")]
    pub(crate) jobs: Option<String>,
}

pub(crate) fn main(args: PrecomputeArgs) -> ExitCode {
    if !args.merge.is_empty() {
        let mut read = Vec::new();
        for f in &args.merge {
            match std::fs::read_to_string(f) {
                Ok(t) => read.push((f.clone(), t)),
                Err(e) => return fail(FieldError::new("merge", format!("{f}: {e}")).into()),
            }
        }
        return print(precomputed::merge(&read));
    }
    let mut errs = Vec::new();
    let shard = match &args.shard {
        Some(s) => Shard::parse(s).map_err(|e| errs.push(e)).ok(),
        None => Some(Shard::ALL),
    };
    let threads = match &args.jobs {
        None => Some(repeat::default_threads()),
        Some(j) => match j.trim().parse::<usize>() {
            Ok(n) if (1..=1024).contains(&n) => Some(n),
            _ => {
                errs.push(FieldError::new(
                    "jobs",
                    format!("{j:?} is out of range: an integer in 1..=1024 (runs at once)"),
                ));
                None
            }
        },
    };
    let (Some(shard), Some(threads), true) = (shard, threads, errs.is_empty()) else {
        return fail(Invalid(errs));
    };
    let lines = match precomputed::run(shard, threads) {
        Ok(l) => precomputed::to_lines(&l),
        Err(e) => return fail(e),
    };
    if args.shard.is_some() {
        print!("{lines}");
        return ExitCode::SUCCESS;
    }
    // the unsharded file is the merge of its one shard: the same bytes as `--merge` of shards
    print(precomputed::merge(&[("-".into(), lines)]))
}

fn print(r: Result<String, Invalid>) -> ExitCode {
    match r {
        Ok(t) => {
            print!("{t}");
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}
