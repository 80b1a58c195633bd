//! The BPF interpreter's speed, natively: instructions per second on a loop that mixes ALU,
//! stack loads and stores, a helper call and a branch, and on a fixture's callbacks. A benchmark,
//! not a test (nothing is asserted about time):
//! `cargo test --release --test bpf_bench -- --ignored --nocapture`. The same two workloads in
//! wasm: scripts/bench-wasm.mjs (`BENCH_ONLY=bpf`).
#![cfg(not(target_arch = "wasm32"))]

use schedplay::bpf::bench::synthetic_loop;
use std::time::Instant;

#[test]
#[ignore]
fn interpreter_instructions_per_second() {
    // the same loop scripts/bench-wasm.mjs times in wasm (`bpf::bench`)
    let mut best = 0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let insns = synthetic_loop(2_000_000).unwrap();
        let secs = t.elapsed().as_secs_f64();
        best = best.max(insns as f64 / secs);
    }
    println!(
        "bpf interpreter: {:.1} M instructions/s (best of 5)",
        best / 1e6
    );
}

mod bpf_replay;

#[test]
#[ignore]
fn fixture_callbacks_instructions_per_second() {
    // The vtime fixture's callbacks as clang compiled them (3001 calls, kfunc calls included),
    // with the object loaded once per replay: what a scheduler's ops cost in the interpreter.
    let mut best = 0f64;
    let mut calls_per_s = 0f64;
    for _ in 0..5 {
        let t = Instant::now();
        let (insns, _, _) = bpf_replay::replay();
        let secs = t.elapsed().as_secs_f64();
        if insns as f64 / secs > best {
            best = insns as f64 / secs;
            calls_per_s = 3001.0 / secs;
        }
    }
    println!(
        "vtime fixture replay (load + 3001 callbacks): {:.1} M instructions/s, {:.2} M callbacks/s",
        best / 1e6,
        calls_per_s / 1e6
    );
}
