//! The wasm build: the engine gives the native golden hash, and the JS-facing API works. Runs in
//! Node.js (no configure macro; WASM_BINDGEN_USE_BROWSER / _DEDICATED_WORKER run it elsewhere).
#![cfg(target_arch = "wasm32")]

mod golden;

use schedplay::experiment::scenario::Side;
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

/// A sched_ext side (the fixture's BPF run by the interpreter) gives the native hash too.
#[wasm_bindgen_test]
fn scx_report_hash_matches_native() {
    let r = schedplay::run(&golden::scx_experiment(), Side::B).unwrap();
    assert_eq!(r.report_hash, golden::SCX_HASH.trim());
}

#[wasm_bindgen_test]
fn sim_in_slices_equals_one_shot_and_same_seed_repeats() {
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    let mut sim = wasm::Sim::new(e.clone(), "b").unwrap();
    while !sim.step(5_000) {}
    let series = sim.take_series();
    let n = js_sys::Float64Array::from(get(&series, "t_s")).length();
    assert!(n > 0);
    for name in ["throughput", "contention_pct", "utilization"] {
        assert_eq!(
            js_sys::Float64Array::from(get(&series, name)).length(),
            n,
            "{name}"
        );
    }
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
        3,
        "{:?}",
        js_sys::JSON::stringify(&stories)
    );
    // the releases, and per release the toggles it merged (the page fixes them)
    assert_eq!(js_sys::Array::from(&get(&p, "kernels")).length(), 4);
    let merged = get(&get(&p, "kernel_merged"), "6.19");
    assert_eq!(js_sys::Array::from(&merged).length(), 3);
    // 7.2: 6.19's three, 7.0's nohz-no-nr-cpus, cache-aware, cas-write-if-changed, cas-skip-many-threads
    let merged = get(&get(&p, "kernel_merged"), "7.2");
    assert_eq!(js_sys::Array::from(&merged).length(), 7);
    // the 7.2 kernel knobs, for the page
    assert_eq!(js_sys::Array::from(&get(&p, "kernel_knobs")).length(), 7);
    // and the releases that take them (the page shows their fields only there)
    let takes = js_sys::Array::from(&get(&p, "kernel_knob_releases"));
    assert_eq!(takes.length(), 1);
    assert_eq!(takes.get(0).as_string().as_deref(), Some("7.2"));
    let t = wasm::topology(e, "a", 0).unwrap();
    assert_eq!(get(&t, "cpus").as_f64(), Some(512.0));
}

#[wasm_bindgen_test]
fn one_shape_per_answer_and_sides_are_a_or_b() {
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    // validate: always {ok, errors}
    let v = wasm::validate(e.clone());
    assert_eq!(get(&v, "ok").as_bool(), Some(true));
    assert_eq!(js_sys::Array::from(&get(&v, "errors")).length(), 0);
    for bad in [JsValue::from_str("nope"), JsValue::NULL] {
        let v = wasm::validate(bad);
        assert_eq!(get(&v, "ok").as_bool(), Some(false));
        let errors = js_sys::Array::from(&get(&v, "errors"));
        assert_eq!(
            get(&errors.get(0), "field").as_string().unwrap(),
            "experiment"
        );
    }
    // a side other than "a" or "b" is an error naming `side`, with the errors as a property
    let err = wasm::Sim::new(e.clone(), "c").err().unwrap();
    assert_eq!(get(&err, "name").as_string().unwrap(), wasm::INVALID_INPUT);
    let errors = js_sys::Array::from(&get(&err, "errors"));
    assert_eq!(get(&errors.get(0), "field").as_string().unwrap(), "side");
    assert!(wasm::topology(e.clone(), "", 0).is_err());
    // the sweep's CPU rule is the engine's
    let s = wasm::sweep_cpus("128,64 64");
    assert_eq!(get(&s, "ok").as_bool(), Some(true));
    assert_eq!(
        js_sys::Array::from(&get(&s, "cpus")).to_vec(),
        vec![JsValue::from(64), JsValue::from(128)]
    );
    let s = wasm::sweep_cpus("18");
    assert_eq!(get(&s, "ok").as_bool(), Some(false));
    let err = wasm::sweep_experiment(e, 18).err().unwrap();
    let errors = js_sys::Array::from(&get(&err, "errors"));
    assert_eq!(get(&errors.get(0), "field").as_string().unwrap(), "cpus");
    // the page's rules come from presets()
    let p = wasm::presets();
    let hz: Vec<f64> = js_sys::Array::from(&get(&p, "hz"))
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(hz, vec![100.0, 250.0, 300.0, 1000.0]);
    let keys = js_sys::Array::from(&get(&p, "machine_keys"));
    assert_eq!(
        keys.length() as usize,
        schedplay::experiment::scenario::MACHINE_KEYS.len()
    );
    assert_eq!(get(&keys.get(0), "link").as_string().unwrap(), "sockets");
}

/// The page's repeat table: the seeds are the native ones (exact as JS numbers), the statistics
/// computed in wasm from reports that went through JS equal the native table bit for bit.
#[wasm_bindgen_test]
fn repeat_seeds_and_table_match_native() {
    let seeds = wasm::repeat_seeds(1.0, 3).unwrap();
    let js: Vec<u64> = serde_wasm_bindgen::from_value(seeds).unwrap();
    assert_eq!(js, schedplay::experiment::repeat::seeds(1, 3));
    let mut e = golden::experiment();
    e.repeats = 3;
    let runs = schedplay::experiment::repeat::run_sides(&e, &[Side::A, Side::B], 1).unwrap();
    let native = schedplay::experiment::repeat::Table::new(&runs[0], Some(&runs[1]));
    let to = |r: &[schedplay::Report]| serde_wasm_bindgen::to_value(r).unwrap();
    let t = wasm::repeat_table(to(&runs[0]), to(&runs[1])).unwrap();
    // through the struct, so that 10100 and 10100.0 are the same f64 on both sides
    let page: schedplay::experiment::repeat::Table = serde_wasm_bindgen::from_value(t).unwrap();
    assert_eq!(
        serde_json::to_string(&page).unwrap(),
        serde_json::to_string(&native).unwrap()
    );
    assert!(wasm::repeat_table(to(&runs[0]), to(&runs[1][..1])).is_err());
}

/// The page's validation table (plan, runs on the workers, table) is the CLI's.
#[wasm_bindgen_test]
fn validation_plan_and_table_match_native() {
    let plan = wasm::validation_plan(0.005, 1).unwrap();
    let runs: Vec<serde_json::Value> = serde_wasm_bindgen::from_value(plan).unwrap();
    let reports: Vec<schedplay::Report> = runs
        .iter()
        .map(|r| {
            let e: schedplay::Experiment = serde_json::from_value(r["experiment"].clone()).unwrap();
            let side = if r["side"] == "a" { Side::A } else { Side::B };
            schedplay::run(&e, side).unwrap()
        })
        .collect();
    let t =
        wasm::validation_table(0.005, 1, serde_wasm_bindgen::to_value(&reports).unwrap()).unwrap();
    let t: serde_json::Value = serde_wasm_bindgen::from_value(t).unwrap();
    let page = t["rows"].as_array().unwrap();
    // the page's table is the steady state, as `schedplay validate` by default
    let s = schedplay::experiment::validation::Settings {
        seconds: 0.005,
        warmup: schedplay::experiment::validation::Warmup::Auto,
        repeats: 1,
        seed: 1,
        threads: 1,
    };
    let native =
        schedplay::experiment::validation::validate(schedplay::experiment::validation::ROWS, &s)
            .unwrap();
    assert_eq!(page.len(), native.len());
    for (p, n) in page.iter().zip(&native) {
        assert_eq!(p["id"], n.id.as_str());
        assert_eq!(p["model"].as_f64().unwrap(), n.model, "{}", n.id);
        assert_eq!(p["status"], serde_json::to_value(n.status).unwrap());
        assert_eq!(p["kind"], serde_json::to_value(n.kind).unwrap());
    }
    assert_eq!(
        t["headline"],
        schedplay::experiment::validation::headline(&native).as_str()
    );
    assert!(
        wasm::validation_table(
            0.005,
            1,
            serde_wasm_bindgen::to_value(&reports[1..]).unwrap()
        )
        .is_err()
    );
}

/// The page's "How sure?" (plan, runs on the workers, summary) is `schedplay sensitivity`'s screen.
#[wasm_bindgen_test]
fn sensitivity_plan_and_summary_match_native() {
    let mut e = golden::experiment();
    e.seconds = 0.005;
    let only = vec!["STATS_MLP".to_string(), "TICK_NS".to_string()];
    let to = |v: &Vec<String>| serde_wasm_bindgen::to_value(v).unwrap();
    let ej = || serde_wasm_bindgen::to_value(&e).unwrap();
    let plan: serde_json::Value =
        serde_wasm_bindgen::from_value(wasm::sensitivity_plan(ej(), to(&only)).unwrap()).unwrap();
    assert_eq!(plan["points"], 5);
    assert_eq!(plan["ranges"][0]["name"], "TICK_NS", "the table's order");
    let runs = plan["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 10);
    let reports: Vec<schedplay::Report> = runs
        .iter()
        .map(|r| {
            let x: schedplay::Experiment = serde_json::from_value(r["experiment"].clone()).unwrap();
            let side = if r["side"] == "a" { Side::A } else { Side::B };
            schedplay::run(&x, side).unwrap()
        })
        .collect();
    let page = wasm::sensitivity_summary(
        ej(),
        to(&only),
        serde_wasm_bindgen::to_value(&reports).unwrap(),
    )
    .unwrap();
    let page: serde_json::Value = serde_wasm_bindgen::from_value(page).unwrap();
    let screen = schedplay::experiment::sensitivity::Screen::new(&e, &only).unwrap();
    let native = schedplay::experiment::sensitivity::summarize(
        &screen
            .run(schedplay::experiment::grid::Shard::ALL, 1)
            .unwrap(),
    );
    // as numbers (a JS 0 reads back as the integer 0, Rust's as 0.0)
    fn num(v: &serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Number(n) => serde_json::json!(n.as_f64()),
            serde_json::Value::Array(a) => a.iter().map(num).collect(),
            serde_json::Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), num(x))).collect(),
            x => x.clone(),
        }
    }
    assert_eq!(num(&page), num(&serde_json::to_value(&native).unwrap()));
    // all assumptions when `only` is absent; an experiment that sets one is refused by field
    let all: serde_json::Value =
        serde_wasm_bindgen::from_value(wasm::sensitivity_plan(ej(), JsValue::UNDEFINED).unwrap())
            .unwrap();
    assert_eq!(
        all["ranges"].as_array().unwrap().len(),
        schedplay::assumptions::ROWS.len()
    );
    e.assume.insert("TICK_NS".into(), 700);
    let err = wasm::sensitivity_plan(
        serde_wasm_bindgen::to_value(&e).unwrap(),
        JsValue::UNDEFINED,
    )
    .unwrap_err();
    let errors = get(&err, "errors");
    let f: Vec<serde_json::Value> = serde_wasm_bindgen::from_value(errors).unwrap();
    assert_eq!(f[0]["field"], "assume");
}

#[wasm_bindgen_test]
fn run_trace_gives_either_format_and_the_default_window_never_fails() {
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    let bytes = |t: &JsValue| js_sys::Uint8Array::from(get(t, "bytes")).to_vec();
    let t = wasm::run_trace(e.clone(), "b", "json", Some(0.0), Some(0.001)).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes(&t)).unwrap();
    let ev = v["traceEvents"].as_array().unwrap();
    assert!(ev.iter().any(|e| e["ph"] == "X" && e["name"] == "kernel"));
    assert!(
        ev.iter()
            .any(|e| e["ph"] == "C" && e["name"] == "nr_running")
    );
    assert_eq!(get(&t, "to_s").as_f64(), Some(0.001));
    // no end: the longest window that fits the cap, said in the summary; protobuf bytes
    let p = wasm::run_trace(e.clone(), "b", "pftrace", None, None).unwrap();
    let summary = get(&p, "summary").as_string().unwrap();
    assert!(summary.starts_with("trace [0 s, "), "{summary}");
    assert!(get(&p, "events").as_f64().unwrap() > 0.0);
    // a TracePacket (field 1 of Trace, length-delimited): tag 0x0a
    assert_eq!(bytes(&p)[0], 0x0a);
    let err = wasm::run_trace(e.clone(), "b", "json", Some(0.0), Some(1e9)).unwrap_err();
    assert!(
        get(&err, "message")
            .as_string()
            .unwrap()
            .contains("trace_to")
    );
    let err = wasm::run_trace(e, "b", "svg", None, None).unwrap_err();
    assert!(
        get(&err, "message")
            .as_string()
            .unwrap()
            .contains("trace_format")
    );
}

#[wasm_bindgen_test]
fn schedstat_summary_and_diff_reach_the_page() {
    let e = serde_wasm_bindgen::to_value(&golden::experiment()).unwrap();
    let mut sim = wasm::Sim::new(e, "b").unwrap();
    while !sim.step(1 << 20) {}
    let st = sim.schedstat();
    assert_eq!(get(&st, "version").as_f64(), Some(17.0));
    let d = js_sys::Array::from(&wasm::schedstat_diff(st.clone(), st).unwrap());
    assert!(d.length() > 1);
    let rows = js_sys::Array::from(&get(&d.get(1), "rows"));
    assert_eq!(rows.length(), 45);
    // a run against itself: +0.00 where the field counted, 0.00 where it is 0 on both sides
    let change = get(&rows.get(0), "change").as_string().unwrap();
    assert!(change == "+0.00" || change == "0.00", "{change}");
    let note =
        wasm::link_note(serde_wasm_bindgen::to_value(&golden::experiment()).unwrap()).unwrap();
    assert_eq!(note, None);
}

#[wasm_bindgen_test]
fn topology_summary_is_the_built_machine() {
    let d = wasm::decode_link("v=1&machine=spr-2s-snc4&cores_per_socket=60&nodes_per_socket=2");
    let s = wasm::topology_summary(get(&d, "experiment")).unwrap();
    assert_eq!(get(&s, "llcs").as_f64(), Some(4.0));
    let adjusted = js_sys::Array::from(&get(&s, "adjusted"));
    assert_eq!(
        get(&adjusted.get(0), "field").as_string().as_deref(),
        Some("cores_per_llc")
    );
    let bad = js_sys::JSON::parse(
        r#"{"v":1,"machine":{"preset":"spr-2s-snc4","nodes_per_socket":9},"workload":{"name":"oltp"}}"#,
    )
    .unwrap();
    let err = wasm::topology_summary(bad).unwrap_err();
    assert_eq!(
        get(&err, "name").as_string().as_deref(),
        Some(wasm::INVALID_INPUT)
    );
}

/// "Import machine": the engine reads the pasted text (an error names line:column), picks the closest
/// preset, and the imported machine runs with the same report as the preset it came from; the
/// topology reply carries the sched_verbose and debugfs text.
#[wasm_bindgen_test]
fn import_machine_and_domain_text() {
    let t = schedplay::machine::topology::Topology::new(
        schedplay::machine::presets::preset("milan-2s").unwrap(),
    )
    .unwrap();
    let text = schedplay::machine::print::lscpu(&t) + &schedplay::machine::print::numactl(&t);
    let m = wasm::import_machine(&text, "").unwrap();
    assert_eq!(get(&m, "preset").as_string().unwrap(), "milan-2s");
    assert_eq!(get(&m, "closest").as_bool(), Some(true));
    assert_eq!(get(&get(&m, "summary"), "cpus").as_f64(), Some(256.0));
    let map = get(&m, "cpu_map").as_string().unwrap();
    let mut e = schedplay::Experiment::default();
    e.machine.preset = "milan-2s".into();
    e.seconds = 0.003;
    let plain = schedplay::run(&e, Side::A).unwrap();
    e.machine.cpu_map = Some(map);
    let js = serde_wasm_bindgen::to_value(&e).unwrap();
    let report = wasm::Sim::new(js.clone(), "a").unwrap();
    let mut sim = report;
    while !sim.step(100_000) {}
    assert_eq!(
        get(&sim.report(), "report_hash").as_string().unwrap(),
        plain.report_hash
    );
    let topo = wasm::topology(js, "a", 0).unwrap();
    let dmesg = get(&topo, "sched_verbose").as_string().unwrap();
    assert!(
        dmesg.starts_with("CPU0 attaching sched-domain(s):\n domain-0: span=0,128 level=SMT\n"),
        "{dmesg}"
    );
    assert!(
        get(&topo, "debugfs")
            .as_string()
            .unwrap()
            .contains("/cpu0/domain1/name:MC\n")
    );
    let err = wasm::import_machine(
        "# CPU,Core,Socket,Node,,L1d,L1i,L2,L3\n0,0,0,0,,0,0,0,x\n",
        "",
    )
    .err()
    .unwrap();
    let errors = js_sys::Array::from(&get(&err, "errors"));
    assert_eq!(
        get(&errors.get(0), "field").as_string().unwrap(),
        "machine_file"
    );
    assert!(
        get(&errors.get(0), "message")
            .as_string()
            .unwrap()
            .starts_with("line 2:16: L3")
    );
}

/// The page's load curve (plan, runs on the workers, one line per point) is `schedplay curve`'s,
/// line for line; bad knobs and values come back as field errors.
#[wasm_bindgen_test]
fn curve_plan_and_lines_match_native() {
    use schedplay::experiment::curve::{Curve, CurveLine};
    use schedplay::experiment::grid::Shard;
    let mut e = golden::experiment();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(4);
    e.workload =
        serde_json::from_value(serde_json::json!({"name": "oltp", "client": "remote"})).unwrap();
    e.seconds = 0.01;
    e.repeats = 2;
    e.b = vec!["skip-not-due".into()];
    let ej = || serde_wasm_bindgen::to_value(&e).unwrap();
    let plan: serde_json::Value = serde_wasm_bindgen::from_value(
        wasm::curve_plan(ej(), "clients", "8, 24", "sched_balance_domains").unwrap(),
    )
    .unwrap();
    let points = plan["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let mut page = Vec::new();
    for p in points {
        let runs = p["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 4, "A and B of 2 seeds");
        let reports: Vec<schedplay::Report> = runs
            .iter()
            .map(|r| {
                let x: schedplay::Experiment =
                    serde_json::from_value(r["experiment"].clone()).unwrap();
                let side = if r["side"] == "a" { Side::A } else { Side::B };
                schedplay::run(&x, side).unwrap()
            })
            .collect();
        let line = wasm::curve_line(
            // as the page hands it back: a plain object (a serde_json::Value's objects would be Maps)
            serde::Serialize::serialize(
                &plan["curve"],
                &serde_wasm_bindgen::Serializer::json_compatible(),
            )
            .unwrap(),
            p["index"].as_u64().unwrap() as usize,
            serde_wasm_bindgen::to_value(&reports).unwrap(),
        )
        .unwrap();
        let line: CurveLine = serde_wasm_bindgen::from_value(line).unwrap();
        page.push(serde_json::to_string(&line).unwrap());
    }
    let curve = Curve {
        base: e.clone(),
        knob: "clients".into(),
        values: vec![8, 24],
        symbol: "sched_balance_domains".into(),
    };
    let native: Vec<String> = curve
        .run(Shard::ALL, 1)
        .unwrap()
        .iter()
        .map(|l| serde_json::to_string(l).unwrap())
        .collect();
    assert_eq!(page, native);
    // no values: half to four times the knob's default (2 per CPU on 16 CPUs)
    let d: serde_json::Value = serde_wasm_bindgen::from_value(
        wasm::curve_plan(ej(), "clients", "", "sched_balance_domains").unwrap(),
    )
    .unwrap();
    assert_eq!(d["curve"]["values"], serde_json::json!([16, 32, 64, 128]));
    for (knob, values, field) in [("client", "8", "knob"), ("clients", "8,x", "values")] {
        let err = wasm::curve_plan(ej(), knob, values, "x").unwrap_err();
        let f: Vec<serde_json::Value> =
            serde_wasm_bindgen::from_value(get(&err, "errors")).unwrap();
        assert_eq!(f[0]["field"], field, "{knob} {values}");
    }
}

/// The page's maxload (a plan, then one `maxload_step` per probe report, each probe a worker run of
/// A or B) is `schedplay maxload --json`'s search, line for line; bad inputs are field errors.
#[wasm_bindgen_test]
fn maxload_steps_match_the_native_search() {
    use schedplay::experiment::maxload::{self, MaxLoad};
    let mut e = golden::experiment();
    e.machine = serde_json::from_value(serde_json::json!({"preset": "genoa-vm-16"})).unwrap();
    e.workload = serde_json::from_value(serde_json::json!({"name": "serve"})).unwrap();
    e.seconds = 0.02;
    e.repeats = 2;
    let plain = |v: &serde_json::Value| {
        serde::Serialize::serialize(v, &serde_wasm_bindgen::Serializer::json_compatible()).unwrap()
    };
    let plan: serde_json::Value = serde_wasm_bindgen::from_value(
        wasm::maxload_plan(serde_wasm_bindgen::to_value(&e).unwrap(), 99.0, 200.0).unwrap(),
    )
    .unwrap();
    let seeds = plan["seeds"].as_array().unwrap();
    assert_eq!(seeds.len(), 2);
    let mut page = Vec::new();
    for (i, seed) in seeds.iter().enumerate() {
        let seed = seed.as_f64().unwrap();
        let mut probes = serde_json::json!([]);
        let mut report = JsValue::NULL;
        loop {
            let step: serde_json::Value = serde_wasm_bindgen::from_value(
                wasm::maxload_step(plain(&plan["maxload"]), i, seed, plain(&probes), report)
                    .unwrap(),
            )
            .unwrap();
            probes = step["probes"].clone();
            if !step["line"].is_null() {
                page.push(serde_json::to_string(&step["line"]).unwrap());
                break;
            }
            let x: schedplay::Experiment =
                serde_json::from_value(step["next"]["experiment"].clone()).unwrap();
            let r = schedplay::run(&x, Side::A).unwrap();
            report = serde_wasm_bindgen::to_value(&r).unwrap();
        }
    }
    let m = MaxLoad {
        base: e.clone(),
        percentile: 99.0,
        bound_us: 200.0,
        from: maxload::DEFAULT_FROM,
        precision_pct: maxload::DEFAULT_PRECISION_PCT,
    };
    let native: Vec<String> = m
        .run(schedplay::experiment::grid::Shard::ALL, 1)
        .unwrap()
        .iter()
        .map(|l| serde_json::to_string(l).unwrap())
        .collect();
    let page: Vec<String> = page
        .iter()
        .map(|l| {
            serde_json::to_string(&serde_json::from_str::<maxload::SearchLine>(l).unwrap()).unwrap()
        })
        .collect();
    assert_eq!(page, native);
    for (p, b, field) in [(95.0, 200.0, "percentile"), (99.0, 0.0, "bound_us")] {
        let err = wasm::maxload_plan(serde_wasm_bindgen::to_value(&e).unwrap(), p, b).unwrap_err();
        let f: Vec<serde_json::Value> =
            serde_wasm_bindgen::from_value(get(&err, "errors")).unwrap();
        assert_eq!(f[0]["field"], field, "p{p} {b}");
    }
}
