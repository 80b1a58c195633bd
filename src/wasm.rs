//! The only module that knows JS: wasm-bindgen exports used by the page's Web Worker. Plain JS
//! objects in and out (serde-wasm-bindgen); invalid input comes back as a JS Error whose message
//! is the JSON list of field errors.

use crate::domains::SchedDomains;
use crate::error::Invalid;
use crate::scenario::{Experiment, Side, decode_link as decode, encode_link as encode};
use crate::{Delta, Report, Run, patches, topology, workload};
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn to_js<T: Serialize>(v: &T) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

fn invalid(e: &Invalid) -> JsValue {
    js_sys::Error::new(&serde_json::to_string(&e.0).unwrap_or_default()).into()
}

fn experiment(v: JsValue) -> Result<Experiment, JsValue> {
    serde_wasm_bindgen::from_value(v).map_err(|e| {
        invalid(&Invalid(vec![crate::error::FieldError::new(
            "experiment",
            e.to_string(),
        )]))
    })
}

fn side(s: &str) -> Side {
    if s == "b" { Side::B } else { Side::A }
}

#[derive(Serialize)]
struct Story {
    name: &'static str,
    title: &'static str,
    experiment: Experiment,
}

/// Machines, workloads, patches and the two seed stories.
#[wasm_bindgen]
pub fn presets() -> JsValue {
    let machines: Vec<serde_json::Value> = topology::PRESETS
        .iter()
        .filter_map(|n| topology::preset(n))
        .map(|m| {
            serde_json::json!({
                "name": m.name, "description": m.description, "vendor": m.vendor,
                "cpus": m.sockets * m.cores_per_socket * m.smt, "sockets": m.sockets,
                "cores_per_socket": m.cores_per_socket, "smt": m.smt,
                "nodes_per_socket": m.nodes_per_socket, "cores_per_llc": m.cores_per_llc,
            })
        })
        .collect();
    let stories: Vec<Story> = crate::scenario::stories()
        .into_iter()
        .map(|(name, title, experiment)| Story {
            name,
            title,
            experiment,
        })
        .collect();
    to_js(&serde_json::json!({
        "machines": machines,
        "workloads": workload::WORKLOADS,
        "patches": patches::PATCHES,
        "stories": serde_json::to_value(&stories).unwrap_or_default(),
    }))
}

#[wasm_bindgen]
pub fn decode_link(query: &str) -> JsValue {
    let (e, errors) = decode(query);
    to_js(&serde_json::json!({ "experiment": e, "errors": errors }))
}

#[wasm_bindgen]
pub fn encode_link(experiment_js: JsValue) -> Result<String, JsValue> {
    Ok(encode(&experiment(experiment_js)?))
}

#[wasm_bindgen]
pub fn validate(experiment_js: JsValue) -> JsValue {
    match experiment(experiment_js) {
        Err(e) => e,
        Ok(e) => to_js(&e.validate().err().map(|i| i.0).unwrap_or_default()),
    }
}

/// The machine of one side and the sched domains of one CPU.
#[wasm_bindgen]
pub fn topology(experiment_js: JsValue, side_name: &str, cpu: usize) -> Result<JsValue, JsValue> {
    let e = experiment(experiment_js)?;
    let spec = e.run_spec(side(side_name)).map_err(|i| invalid(&i))?;
    let t = &spec.topo;
    let sd = SchedDomains::build(t, spec.patches.snc3_distance_fix);
    let cpu = cpu.min(t.nr_cpus() - 1);
    Ok(to_js(&serde_json::json!({
        "cpus": t.nr_cpus(), "sockets": t.spec.sockets, "nodes": t.nr_nodes, "llcs": t.nr_llcs,
        "cpu_info": t.cpus, "node_distances": topology::sched_distances(t, spec.patches.snc3_distance_fix),
        "cpu": cpu, "domains": sd.to_json(cpu),
    })))
}

/// A run advanced in slices by the worker.
#[wasm_bindgen]
pub struct Sim {
    run: Run,
}

#[wasm_bindgen]
impl Sim {
    #[wasm_bindgen(constructor)]
    pub fn new(experiment_js: JsValue, side_name: &str) -> Result<Sim, JsValue> {
        let e = experiment(experiment_js)?;
        Run::new(&e, side(side_name))
            .map(|run| Sim { run })
            .map_err(|i| invalid(&i))
    }

    /// Handles up to `max_events`; true when finished.
    pub fn step(&mut self, max_events: u32) -> bool {
        self.run.step(max_events as u64)
    }

    pub fn progress(&self) -> f64 {
        self.run.progress()
    }

    pub fn take_series(&mut self) -> JsValue {
        let [t, th, c, u] = self.run.take_series();
        let o = js_sys::Object::new();
        for (k, v) in [
            ("t_s", t),
            ("throughput", th),
            ("contention_pct", c),
            ("utilization", u),
        ] {
            let _ = js_sys::Reflect::set(
                &o,
                &k.into(),
                &js_sys::Float64Array::from(v.as_slice()).into(),
            );
        }
        o.into()
    }

    pub fn report(&mut self) -> JsValue {
        to_js(&self.run.report())
    }
}

/// The A/B change between two reports (as returned by `Sim.report`).
#[wasm_bindgen]
pub fn compare(a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    let parse = |v: JsValue| -> Result<Report, JsValue> {
        serde_wasm_bindgen::from_value::<Report>(v)
            .map_err(|e| js_sys::Error::new(&e.to_string()).into())
    };
    Ok(to_js(&Delta::between(&parse(a)?, &parse(b)?)))
}

/// The experiment resized for one point of the scaling sweep (2 sockets × cores × SMT2).
#[wasm_bindgen]
pub fn sweep_experiment(experiment_js: JsValue, cpus: u32) -> Result<JsValue, JsValue> {
    let e = crate::sweep::resized(&experiment(experiment_js)?, cpus);
    e.validate().map_err(|i| invalid(&i))?;
    Ok(to_js(&e))
}
