//! The wasm build: the engine gives the native golden hash, and the JS-facing API works. Runs in
//! Node.js (no configure macro; WASM_BINDGEN_USE_BROWSER / _DEDICATED_WORKER run it elsewhere).
#![cfg(target_arch = "wasm32")]

mod golden;

use schedplay::scenario::Side;
use schedplay::wasm;
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

fn get(v: &JsValue, k: &str) -> JsValue {
    js_sys::Reflect::get(v, &k.into()).unwrap()
}

#[wasm_bindgen_test]
fn report_hash_matches_native() {
    let r = schedplay::run(&golden::experiment(), Side::B).unwrap();
    assert_eq!(r.report_hash, golden::HASH.trim());
}

#[wasm_bindgen_test]
fn sim_in_slices_equals_one_shot_and_same_seed_repeats() {
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    let mut sim = wasm::Sim::new(e.clone(), "b").unwrap();
    while !sim.step(5_000) {}
    let series = sim.take_series();
    assert!(js_sys::Float64Array::from(get(&series, "t_s")).length() > 0);
    let report = sim.report();
    assert_eq!(
        get(&report, "report_hash").as_string().unwrap(),
        golden::HASH.trim()
    );
    let other = wasm::Sim::new(e, "a").unwrap().report();
    let delta = wasm::compare(other, report).unwrap();
    assert!(get(&delta, "throughput_pct").as_f64().is_some());
}

#[wasm_bindgen_test]
fn links_and_errors() {
    let d = wasm::decode_link("v=1&machine=nope&seconds=-1&seed=9");
    let errors = js_sys::Array::from(&get(&d, "errors"));
    assert_eq!(errors.length(), 2);
    assert_eq!(get(&errors.get(0), "field").as_string().unwrap(), "machine");
    let e = get(&d, "experiment");
    assert_eq!(get(&e, "seed").as_f64(), Some(9.0));
    let q = wasm::encode_link(e.clone()).unwrap();
    assert!(q.starts_with("v=1&machine=gnr-2s-snc3"), "{q}");
    let bad = wasm::Sim::new(JsValue::from_str("nope"), "a")
        .err()
        .unwrap();
    let msg = js_sys::Error::from(bad).message().as_string().unwrap();
    assert!(msg.contains("experiment"), "{msg}");
    let p = wasm::presets();
    let stories = get(&p, "stories");
    assert_eq!(
        js_sys::Array::from(&stories).length(),
        2,
        "{:?}",
        js_sys::JSON::stringify(&stories)
    );
    let t = wasm::topology(e, "a", 0).unwrap();
    assert_eq!(get(&t, "cpus").as_f64(), Some(512.0));
}
