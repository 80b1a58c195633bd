//! `schedplay sensitivity`: how sure is each number — the experiment over the plausible ranges of
//! the screened assumptions, one at a time, with each headline's band and tornado.

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::grid::Shard;
use schedplay::experiment::sensitivity as sens;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct SensitivityArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// Screen only these assumptions, comma-separated (default: all; docs/MODEL.md §19a).
    #[arg(long, value_name = "NAMES", default_value = "")]
    pub(crate) only: String,
    /// Run only the points i with i mod N == I and print them as JSON lines (for `--merge`).
    #[arg(long, value_name = "I/N", allow_hyphen_values = true)]
    pub(crate) shard: Option<String>,
    /// Join the JSON lines of shards (files) and print the screen from them (no scenario flags).
    #[arg(long, value_name = "FILES", num_args = 1.., conflicts_with = "shard")]
    pub(crate) merge: Vec<String>,
    /// Rows shown per tornado (text).
    #[arg(long, default_value_t = 10)]
    pub(crate) top: usize,
    /// Print the bands and tornados as JSON (fields: docs/SCHEMA.md).
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: SensitivityArgs) -> ExitCode {
    let lines = if args.merge.is_empty() {
        let e = match args.ab.experiment() {
            Ok(e) => e,
            Err(e) => return fail(e),
        };
        let mut errs = Vec::new();
        let threads = args.ab.s.threads().map_err(|e| errs.extend(e.0)).ok();
        let shard = match &args.shard {
            Some(s) => Shard::parse(s).map_err(|e| errs.push(e)).ok(),
            None => Some(Shard::ALL),
        };
        let screen = sens::Screen::new(&e, &split_list(&args.only))
            .map_err(|e| errs.extend(e.0))
            .ok();
        let (Some(threads), Some(shard), Some(screen), true) =
            (threads, shard, screen, errs.is_empty())
        else {
            return fail(Invalid(errs));
        };
        let lines = match screen.run(shard, threads) {
            Ok(l) => l,
            Err(e) => return fail(e),
        };
        if args.shard.is_some() {
            print!("{}", sens::to_lines(&lines));
            return ExitCode::SUCCESS;
        }
        lines
    } else {
        let mut read = Vec::new();
        for f in &args.merge {
            match std::fs::read_to_string(f) {
                Ok(t) => read.push((f.clone(), t)),
                Err(e) => return fail(FieldError::new("merge", format!("{f}: {e}")).into()),
            }
        }
        match sens::merge(&read) {
            Ok((l, _)) => l,
            Err(e) => return fail(e),
        }
    };
    let summary = sens::summarize(&lines);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).unwrap_or_default()
        );
    } else {
        print!("{}", sens::to_text(&summary, args.top));
    }
    ExitCode::SUCCESS
}
