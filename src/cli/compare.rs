//! `schedplay compare`: A and B of one scenario and the change between them.

use super::args::*;
use clap::Args;
use schedplay::Delta;
use schedplay::error::FieldError;
use schedplay::experiment::scenario::Side;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// Print {a, b, delta} as JSON (fields: docs/SCHEMA.md).
    #[arg(long)]
    pub(crate) json: bool,
    /// After the comparison, print the per-domain schedstat diff of A and B, as perf sched stats diff (text only).
    #[arg(long, conflicts_with = "json")]
    pub(crate) schedstat: bool,
}

pub(crate) fn main(args: CompareArgs) -> ExitCode {
    let CompareArgs {
        ab,
        json,
        schedstat,
    } = args;
    let e = match ab.experiment().and_then(|e| e.check_ab().map(|_| e)) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let threads = match ab.s.threads() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if e.repeats > 1 {
        if schedstat {
            let err = FieldError::new(
                "schedstat",
                "schedstat is of one run per side: repeats must be 1",
            );
            return fail(err.into());
        }
        return print_table(&e, &[Side::A, Side::B], threads, json);
    }
    if schedstat {
        let ((ra, sa), (rb, sb)) = match schedplay::report::schedstat::run_ab_with_schedstat(&e) {
            (Ok(x), Ok(y)) => (x, y),
            (Err(err), _) | (_, Err(err)) => return fail(err),
        };
        print!("{}", Delta::between(&ra, &rb).to_text(&ra, &rb));
        print!("\n{}", schedplay::report::schedstat::diff(&sa, &sb));
        return ExitCode::SUCCESS;
    }
    let (ra, rb) = match schedplay::run_ab(&e) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(err), _) | (_, Err(err)) => return fail(err),
    };
    let d = Delta::between(&ra, &rb);
    if json {
        let v = serde_json::json!({ "a": ra, "b": rb, "delta": d });
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        print!("{}", d.to_text(&ra, &rb));
    }
    ExitCode::SUCCESS
}
