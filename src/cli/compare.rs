//! `schedplay compare`: A and B of one scenario and the change between them.

use super::args::*;
use clap::Args;
use schedplay::Delta;
use schedplay::experiment::scenario::Side;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct CompareArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// Print {a, b, delta} as JSON (fields: docs/SCHEMA.md).
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn main(args: CompareArgs) -> ExitCode {
    let CompareArgs { ab, json } = args;
    let e = match ab.experiment() {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let threads = match ab.s.threads() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    if e.repeats > 1 {
        return print_table(&e, &[Side::A, Side::B], threads, json);
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
