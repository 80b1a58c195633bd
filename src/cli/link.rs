//! `schedplay link`: the share link of a scenario.

use super::args::*;
use clap::Args;
use schedplay::experiment::link::encode_link;
use std::process::ExitCode;

#[derive(Args)]
pub(crate) struct LinkArgs {
    #[command(flatten)]
    pub(crate) ab: AbArgs,
    /// Page address the query is appended to.
    #[arg(long, default_value = "http://127.0.0.1:8080/")]
    pub(crate) base: String,
}

pub(crate) fn main(args: LinkArgs) -> ExitCode {
    let LinkArgs { ab, base } = args;
    let e = match ab.experiment() {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    println!("{base}?{}", encode_link(&e));
    ExitCode::SUCCESS
}
