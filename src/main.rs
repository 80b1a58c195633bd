//! `schedplay` CLI: presets, topology, run, compare, link, sweep, merge, validate, bench
//! (`src/cli/`, one module per subcommand).

#[cfg(not(target_arch = "wasm32"))]
mod cli;

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    cli::main()
}

#[cfg(target_arch = "wasm32")]
fn main() {}
