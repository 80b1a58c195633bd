//! The engine inside a dedicated Web Worker, as the page runs it.
#![cfg(target_arch = "wasm32")]

mod golden;

use schedplay::wasm;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
fn runs_in_a_dedicated_worker_with_the_native_hash() {
    assert!(
        js_sys::global()
            .dyn_into::<web_sys::DedicatedWorkerGlobalScope>()
            .is_ok()
    );
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    let mut sim = wasm::Sim::new(e, "b").unwrap();
    while !sim.step(10_000) {}
    let r = sim.report();
    let hash = js_sys::Reflect::get(&r, &"report_hash".into())
        .unwrap()
        .as_string()
        .unwrap();
    assert_eq!(hash, golden::HASH.trim());
}
