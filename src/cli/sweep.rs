//! `schedplay sweep`: one experiment on 2-socket machines of growing CPU count, or the points of a grid file.

use super::args::*;
use clap::Args;
use schedplay::error::{FieldError, Invalid};
use schedplay::experiment::{grid, sweep};
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct SweepArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// A grid file (JSON): the points to run, one JSON line each (scenario flags are refused with it).
    #[arg(long, value_name = "FILE")]
    pub(crate) grid: Option<String>,
    /// Run only the points i with i mod N == I of the grid, e.g. 0/4 (default 0/1: all).
    #[arg(
        long,
        value_name = "I/N",
        default_value = "0/1",
        allow_hyphen_values = true
    )]
    pub(crate) shard: String,
    /// CPU counts, comma-separated (2 sockets x cores x SMT2: multiples of 4, up to 4096).
    #[arg(
        long,
        default_value = "64,128,256,512,1024,2048,4096",
        value_delimiter = ',',
        allow_hyphen_values = true
    )]
    pub(crate) cpus: Vec<String>,
    /// Print the points as JSON.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: SweepArgs) -> ExitCode {
    match args.grid {
        Some(grid) => main_grid(args.ab, grid, args.shard),
        None => main_cpus(args.ab, args.cpus, args.json),
    }
}

/// `--grid FILE`: the points of a grid file, as JSON lines.
fn main_grid(ab: AbArgs, grid: String, shard: String) -> ExitCode {
    let mut errs = Vec::new();
    let s = &ab.s;
    let given = s.machine.is_some()
        || s.workload.is_some()
        || s.workload_file.is_some()
        || !s.set.is_empty()
        || s.seconds.is_some()
        || s.seed.is_some()
        || s.link.is_some()
        || s.machine_file.is_some()
        || s.repeat.is_some()
        || s.warmup.is_some()
        || !s.assume.is_empty()
        || !ab.a.is_empty()
        || !ab.b.is_empty();
    if given {
        errs.push(FieldError::new(
            "grid",
            "scenario flags cannot be combined with --grid: the grid file holds the points",
        ));
    }
    let shard = grid::Shard::parse(&shard).map_err(|e| errs.push(e)).ok();
    let threads = s.threads().map_err(|e| errs.extend(e.0)).ok();
    let g = std::fs::read_to_string(&grid)
        .map_err(|e| FieldError::new("grid", format!("{grid}: {e}")).into())
        .and_then(|t| grid::Grid::from_json(&t))
        .map_err(|e| errs.extend(e.0))
        .ok();
    let (Some(shard), Some(threads), Some(g), true) = (shard, threads, g, errs.is_empty()) else {
        return fail(Invalid(errs));
    };
    match g.run(shard, threads) {
        Ok(lines) => {
            print!("{}", grid::to_lines(&lines));
            ExitCode::SUCCESS
        }
        Err(e) => fail(e),
    }
}

/// `--cpus N,...`: the experiment on 2-socket machines of each CPU count, as a table.
fn main_cpus(ab: AbArgs, cpus: Vec<String>, json: bool) -> ExitCode {
    let mut errs = Vec::new();
    if ab.s.machine_file.is_some() {
        return fail(
            FieldError::new(
                "machine_file",
                "a sweep resizes the machine; an imported machine has one size (run or compare it)",
            )
            .into(),
        );
    }
    // Every count is checked (`sweep::check_cpus`, the rule the page uses too) before
    // any point runs, so a bad one is refused up front with all the others.
    let cpus: Vec<u32> = cpus
        .iter()
        .filter_map(|c| match c.trim().parse::<u32>() {
            Ok(n) => sweep::check_cpus(n).map_err(|e| errs.push(e)).ok(),
            Err(_) => {
                errs.push(FieldError::new(
                    "cpus",
                    format!("{c:?} is not a CPU count: a positive integer"),
                ));
                None
            }
        })
        .collect();
    let e = ab.experiment().map_err(|inv| errs.extend(inv.0));
    let Ok(e) = e else {
        return fail(Invalid(errs));
    };
    if !errs.is_empty() {
        return fail(Invalid(errs));
    }
    let threads = match ab.s.threads() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let points = match sweep::points(&e, &cpus, threads) {
        Ok(p) => p,
        Err(err) => return fail(err),
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&points).unwrap_or_default()
        );
        return ExitCode::SUCCESS;
    }
    println!(
        "{:>6} {:>14} {:>14} {:>9} {:>12} {:>12}{}",
        "CPUs",
        "A /s",
        "B /s",
        "B vs A",
        "A contention",
        "B contention",
        if e.repeats > 1 {
            format!(
                "  {:>20} {:>7}  (means of {} runs per side)",
                "95% CI of B vs A", "p", e.repeats
            )
        } else {
            String::new()
        }
    );
    for p in &points {
        let stats = match (p.throughput_pct_ci95, p.throughput_p) {
            (Some(ci), Some(pv)) => {
                format!(
                    "  {:>20} {pv:>7.4}",
                    format!("[{:+.2}, {:+.2}]%", ci[0], ci[1])
                )
            }
            _ => String::new(),
        };
        println!(
            "{:>6} {:>14.1} {:>14.1} {:>+8.2}% {:>11.2}% {:>11.2}%{stats}",
            p.cpus,
            p.a_throughput,
            p.b_throughput,
            p.throughput_pct,
            p.a_contention_pct,
            p.b_contention_pct
        );
    }
    ExitCode::SUCCESS
}
