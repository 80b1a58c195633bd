//! The BPF loader and interpreter inside wasm give the native outcome (tests/bpf_replay).
//! Runs in Node.js.
#![cfg(target_arch = "wasm32")]

mod bpf_replay;

use wasm_bindgen_test::*;

#[wasm_bindgen_test]
fn bpf_replay_matches_native() {
    assert_eq!(bpf_replay::replay(), bpf_replay::EXPECTED);
}
