//! The engine in a browser window (headless Chromium).
#![cfg(target_arch = "wasm32")]

mod golden;

use schedplay::experiment::scenario::Side;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn runs_in_a_window_with_the_native_hash() {
    assert!(web_sys::window().is_some());
    let r = schedplay::run(&golden::experiment(), Side::B).unwrap();
    assert_eq!(r.report_hash, golden::HASH.trim());
}
