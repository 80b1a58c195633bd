//! `schedplay merge`: the JSON lines of grid shards joined into one table.

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::grid;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct MergeArgs {
    /// Shard files (JSON lines of `sweep --grid`).
    #[arg(required = true, value_name = "FILES")]
    pub(crate) files: Vec<String>,
    /// Print CSV (one row per point) instead of JSON lines.
    #[arg(long)]
    pub(crate) csv: bool,
    /// Print one JSON array (chart data) instead of JSON lines.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: MergeArgs) -> ExitCode {
    let MergeArgs { files, csv, json } = args;
    let mut read = Vec::new();
    let mut errs = Vec::new();
    for f in &files {
        match std::fs::read_to_string(f) {
            Ok(t) => read.push((f.clone(), t)),
            Err(e) => errs.push(FieldError::new("merge", format!("{f}: {e}"))),
        }
    }
    if !errs.is_empty() {
        return fail(Invalid(errs));
    }
    let lines = match grid::merge(&read) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    if csv {
        print!("{}", grid::to_csv(&lines));
    } else if json {
        print!("{}", grid::merged_array(&lines));
    } else {
        print!("{}", grid::merged_lines(&lines));
    }
    ExitCode::SUCCESS
}

/// The shard files of a sharded search or curve (`--merge FILES`) as one run's lines, in the
/// unsharded order (`grid::merge_texts`): `None` when `json` asked for those lines as they are,
/// which this prints. Every file that cannot be read or parsed is named.
pub(crate) fn merged_shard_lines<T: serde::de::DeserializeOwned>(
    files: &[String],
    json: bool,
) -> Result<Option<Vec<T>>, Invalid> {
    let mut read = Vec::new();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => read.push((f.clone(), t)),
            Err(e) => return Err(FieldError::new("merge", format!("{f}: {e}")).into()),
        }
    }
    let texts = grid::merge_texts(&read)?;
    if json {
        for (_, t) in &texts {
            println!("{t}");
        }
        return Ok(None);
    }
    let mut errs = Vec::new();
    let lines: Vec<T> = texts
        .iter()
        .filter_map(|(at, t)| {
            serde_json::from_str(t)
                .map_err(|e| errs.push(FieldError::new("merge", format!("{at}: {e}"))))
                .ok()
        })
        .collect();
    if !errs.is_empty() {
        return Err(Invalid(errs));
    }
    Ok(Some(lines))
}
