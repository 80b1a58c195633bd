//! The only module that knows JS: wasm-bindgen exports used by the page's Web Worker. Plain JS
//! objects in and out (serde-wasm-bindgen). Invalid input comes back as a thrown JS `Error` named
//! `InvalidInput` whose `errors` property is the list of field errors `[{field, message}]` (its
//! message is the same list as JSON). Every rule the page shows (HZ values, machine keys, sweep CPU
//! counts, A/B deltas) is exported from here, so the page never re-implements one.

use crate::error::FieldError;
use crate::error::Invalid;
use crate::experiment::link::{decode_link as decode, encode_link as encode};
use crate::experiment::run::Run;
use crate::experiment::scenario::{Experiment, HZ_VALUES, MACHINE_KEYS, Side};
use crate::experiment::sweep;
use crate::machine::domains::SchedDomains;
use crate::machine::{presets, topology};
use crate::report::{Delta, Report};
use crate::{kernels, patches, workload};
use serde::Serialize;
use wasm_bindgen::prelude::*;

fn to_js<T: Serialize>(v: &T) -> JsValue {
    v.serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

/// The name of the JS errors that carry field errors (the worker tells them from failures by it).
pub const INVALID_INPUT: &str = "InvalidInput";

fn invalid(e: &Invalid) -> JsValue {
    let err = js_sys::Error::new(&serde_json::to_string(&e.0).unwrap_or_default());
    err.set_name(INVALID_INPUT);
    let _ = js_sys::Reflect::set(&err, &"errors".into(), &to_js(&e.0));
    err.into()
}

fn experiment(v: JsValue) -> Result<Experiment, JsValue> {
    serde_wasm_bindgen::from_value(v)
        .map_err(|e| invalid(&FieldError::new("experiment", e.to_string()).into()))
}

fn report(field: &str, v: JsValue) -> Result<Report, JsValue> {
    serde_wasm_bindgen::from_value::<Report>(v)
        .map_err(|e| invalid(&FieldError::new(field, format!("not a report: {e}")).into()))
}

/// "a" or "b"; anything else is an error naming `side`.
fn side(s: &str) -> Result<Side, JsValue> {
    match s {
        "a" => Ok(Side::A),
        "b" => Ok(Side::B),
        _ => Err(invalid(
            &FieldError::new(
                "side",
                format!("{s:?} is not a side: allowed \"a\" or \"b\""),
            )
            .into(),
        )),
    }
}

/// Machines, workloads, patches, kernel releases (with each one's merged toggles), the seed
/// stories, and the rules the form is built from: the
/// HZ values, the machine override keys (key, link key, range, description) and the sweep's CPU
/// counts.
#[wasm_bindgen]
pub fn presets() -> JsValue {
    let machines: Vec<serde_json::Value> = presets::PRESETS
        .iter()
        .filter_map(|n| presets::preset(n))
        .map(|m| {
            serde_json::json!({
                "name": m.name, "description": m.description, "vendor": m.vendor,
                "cpus": m.sockets * m.cores_per_socket * m.smt, "sockets": m.sockets,
                "cores_per_socket": m.cores_per_socket, "smt": m.smt,
                "nodes_per_socket": m.nodes_per_socket, "cores_per_llc": m.cores_per_llc,
                "cores_per_cluster": m.cores_per_cluster,
                "rmw_hold_ns": m.rmw_hold_ns, "cpumask_offstack": u32::from(m.cpumask_offstack),
                "store_buffer_entries": m.store_buffer.entries,
            })
        })
        .collect();
    let stories = crate::experiment::stories::stories();
    to_js(&serde_json::json!({
        "machines": machines,
        "workloads": workload::WORKLOADS,
        "patches": patches::PATCHES,
        "kernels": kernels::KERNELS,
        "default_kernel": kernels::DEFAULT_KERNEL,
        // per release, /sys/kernel/debug/sched/features: name, default, the code path the model
        // switches (null: refused, with why); the page lists them under the release picker
        "sched_features": crate::sched_features::RELEASES.iter()
            .map(|r| (r.release, serde_json::json!({
                "source": r.source,
                "features": crate::sched_features::rows(r.release),
            })))
            .collect::<std::collections::BTreeMap<_, _>>(),
        "kernel_knobs": crate::llc_balancing::KNOBS,
        // a side's own knob settings offered as A/B checkboxes on the releases that take knobs
        "kernel_side_settings": crate::llc_balancing::SIDE_SETTINGS.iter()
            .map(|(name, description)| serde_json::json!({ "name": name, "description": description }))
            .collect::<Vec<_>>(),
        // the screened assumptions ("How sure?" counts its runs from them)
        "assumptions": crate::assumptions::ROWS.iter().map(|r| r.name).collect::<Vec<_>>(),
        // the releases that take them (the merged cache-aware code): the page shows their fields
        "kernel_knob_releases": kernels::KERNELS.iter()
            .filter(|k| kernels::merged(k).merged.sched_cache)
            .map(|k| k.name)
            .collect::<Vec<_>>(),
        // per release, every toggle it has merged (its own and its predecessors'): the page shows
        // them included and fixed
        "kernel_merged": kernels::KERNELS.iter().map(|k| {
            let t: Vec<&str> = kernels::changes(k).filter_map(|c| c.toggle()).collect();
            (k.name, t)
        }).collect::<std::collections::BTreeMap<_, _>>(),
        // per release, every toggle it cannot take, with why (kernels::not_on): the page greys
        // them out with that text, as the engine would refuse them
        "kernel_refused": kernels::KERNELS.iter().map(|k| {
            let t: std::collections::BTreeMap<&str, String> = patches::PATCHES.iter()
                .filter_map(|e| kernels::not_on(k, e.name).map(|why| (e.name, why)))
                .collect();
            (k.name, t)
        }).collect::<std::collections::BTreeMap<_, _>>(),
        "stories": serde_json::to_value(&stories).unwrap_or_default(),
        "hz": HZ_VALUES,
        "default_hz": Experiment::default().hz,
        "machine_keys": MACHINE_KEYS,
        "layout_keys": crate::experiment::scenario::LAYOUT_KEYS,
        "sweep": {
            "min_cpus": sweep::MIN_CPUS, "max_cpus": sweep::MAX_CPUS,
            "cpus_step": sweep::CPUS_STEP, "max_points": sweep::MAX_POINTS,
        },
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

/// The BPF interpreter's speed benchmark workloads (scripts/bench-wasm.mjs times them; native:
/// tests/bpf_bench.rs runs the same code): `loop` runs `bpf::bench::synthetic_loop(2_000_000)`,
/// `vtime` replays the vtime fixture's callbacks (`object`: tests/bpf/vtime.bpf.o). Returns the
/// instructions run; throws what failed.
#[wasm_bindgen]
pub fn bpf_bench(which: &str, object: &[u8]) -> Result<f64, JsValue> {
    let insns = match which {
        "loop" => crate::bpf::bench::synthetic_loop(2_000_000),
        "vtime" => crate::sched::ext::bench::vtime_replay(object).map(|r| r.0),
        _ => Err(format!("unknown workload {which:?}: allowed loop, vtime")),
    };
    insns
        .map(|n| n as f64)
        .map_err(|e| JsValue::from(js_sys::Error::new(&e)))
}

/// Always `{ok, errors: [{field, message}], work}` (`ok` when `errors` is empty; `work`: one side's
/// estimated events, what the page weighs a run by for its time left). The page runs A/B only, so
/// an A/B whose sides are the same kernel is an error here (`Experiment::check_ab`).
#[wasm_bindgen]
pub fn validate(experiment_js: JsValue) -> JsValue {
    let (errors, work) = match serde_wasm_bindgen::from_value::<Experiment>(experiment_js) {
        Err(e) => (vec![FieldError::new("experiment", e.to_string())], None),
        Ok(e) => (
            e.validate()
                .and_then(|_| e.check_ab())
                .err()
                .map(|i| i.0)
                .unwrap_or_default(),
            e.estimated_events(),
        ),
    };
    to_js(&serde_json::json!({ "ok": errors.is_empty(), "errors": errors, "work": work }))
}

/// The machine of one side and the sched domains of one CPU.
#[wasm_bindgen]
pub fn topology(experiment_js: JsValue, side_name: &str, cpu: usize) -> Result<JsValue, JsValue> {
    let e = experiment(experiment_js)?;
    let spec = e.run_spec(side(side_name)?).map_err(|i| invalid(&i))?;
    let t = &spec.topo;
    let sd = SchedDomains::build(t, spec.patches.snc3_distance_fix);
    let cpu = cpu.min(t.nr_cpus() - 1);
    Ok(to_js(&serde_json::json!({
        "cpus": t.nr_cpus(), "sockets": t.spec.sockets, "nodes": t.nr_nodes, "llcs": t.nr_llcs,
        "cpu_info": t.cpus, "node_distances": topology::sched_distances(t, spec.patches.snc3_distance_fix),
        "cpu": cpu, "domains": sd.to_json(cpu),
        "sched_verbose": sd.dmesg(cpu), "debugfs": sd.debugfs(cpu),
    })))
}

/// "Import machine": the text of `lscpu -p` / `lscpu -e` plus `numactl -H` (or the sysfs distance
/// lines) parsed (`machine_file::parse`) into `{cpu_map, preset, closest, summary, notes}`;
/// `preset` is `hardware` when it names a preset, else the closest one (`closest: true`). A bad
/// input is an `InvalidInput` of `machine_file` errors, each naming its line and column.
#[wasm_bindgen]
pub fn import_machine(text: &str, hardware: &str) -> Result<JsValue, JsValue> {
    let parsed = crate::machine::cpu_map::parse(text).map_err(|errs| {
        invalid(&Invalid(
            errs.iter()
                .take(20)
                .map(|e| FieldError::new("machine_file", e.to_string()))
                .collect(),
        ))
    })?;
    let closest = presets::preset(hardware).is_none();
    let (preset, why) = if closest {
        parsed.hardware()
    } else {
        (
            hardware,
            format!("hardware figures of {hardware}, as chosen"),
        )
    };
    let s = parsed.map.shape();
    Ok(to_js(&serde_json::json!({
        "cpu_map": parsed.map.encode(), "preset": preset, "closest": closest, "why": why,
        // the text's CPU vendor (a plain `lscpu` "Vendor ID"), null when it names none: the
        // closest preset is then chosen by shape alone, whatever the vendor
        "vendor": parsed.vendor,
        // an architecture without presets (riscv, loongarch, s390, sparc): the domains follow
        // its table, the hardware figures are another arch's preset's; null otherwise
        "arch": parsed.map.arch.map(|a| a.name()),
        "preset_vendor": presets::preset(preset).map(|m| m.vendor),
        "summary": {
            "cpus": s.cpus, "sockets": s.sockets, "nodes": s.nodes, "llcs": s.llcs, "smt": s.smt,
            "cores_per_cluster": s.cores_per_cluster,
        },
        "notes": parsed.notes,
    })))
}

/// The machine the engine builds from the experiment's machine choice (`machine_summary::summary`):
/// CPUs, nodes, LLCs and clusters with their sizes, and every setting it used differently from the
/// form (`adjusted`, with why). A bad machine is an `InvalidInput` naming its fields.
#[wasm_bindgen]
pub fn topology_summary(experiment_js: JsValue) -> Result<JsValue, JsValue> {
    let e = experiment(experiment_js)?;
    crate::experiment::machine_summary::summary(&e)
        .map(|s| to_js(&s))
        .map_err(|i| invalid(&i))
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
        Run::new(&e, side(side_name)?)
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

    /// The points since the last call: an object of `Float64Array`s keyed by series name
    /// (`t_s`, `throughput`, `contention_pct`, `utilization`: `Series::named`).
    pub fn take_series(&mut self) -> JsValue {
        let s = self.run.take_series();
        let o = js_sys::Object::new();
        for (k, v) in s.named() {
            let _ = js_sys::Reflect::set(&o, &k.into(), &js_sys::Float64Array::from(v).into());
        }
        o.into()
    }

    pub fn report(&mut self) -> JsValue {
        to_js(&self.run.report())
    }

    /// `/proc/schedstat` over the measured window summed over CPUs
    /// (`report::schedstat::SchedstatSummary`): read once the run is finished.
    pub fn schedstat(&self) -> JsValue {
        let e = self.run.engine();
        to_js(&crate::report::schedstat::summary(
            &e.schedstat_measured(),
            &e.sd,
        ))
    }
}

/// Runs one side to the end with a trace of simulated seconds [from_s, to_s) (absent: from the
/// start / to the end) in `format` (`"pftrace"`: Perfetto protobuf, `"json"`: Chrome JSON trace
/// events; docs/TRACE.md) and returns `{bytes: Uint8Array, format, from_s, to_s, cut, events,
/// summary}`. Without `to_s` the window is the longest from `from_s` that fits the event cap
/// (`cut`: the cap ended it), so the default never fails; an explicit end past the cap, a bad window
/// or format is an `InvalidInput` naming the field.
#[wasm_bindgen]
pub fn run_trace(
    experiment_js: JsValue,
    side_name: &str,
    format: &str,
    from_s: Option<f64>,
    to_s: Option<f64>,
) -> Result<JsValue, JsValue> {
    use crate::experiment::traced::run_traced_as;
    use crate::sched::TraceFormat;
    let fmt = match format {
        "pftrace" => TraceFormat::Perfetto,
        "json" => TraceFormat::Json,
        _ => {
            return Err(invalid(
                &FieldError::new(
                    "trace_format",
                    format!("{format:?} is not a trace format: allowed \"pftrace\" or \"json\""),
                )
                .into(),
            ));
        }
    };
    let e = experiment(experiment_js)?;
    let (_, t) = run_traced_as(&e, side(side_name)?, fmt, from_s, to_s).map_err(|i| invalid(&i))?;
    let o = to_js(&serde_json::json!({
        "format": format, "from_s": t.from_ns as f64 / 1e9, "to_s": t.to_ns as f64 / 1e9,
        "cut": t.cut, "events": t.events, "summary": t.summary(),
    }));
    let _ = js_sys::Reflect::set(
        &o,
        &"bytes".into(),
        &js_sys::Uint8Array::from(&t.bytes[..]).into(),
    );
    Ok(o)
}

/// `perf sched stats diff` of two runs' schedstat summaries (as returned by `Sim.schedstat`):
/// `[{domain, rows: [{name, a, b, change}]}]`, the CPU totals first (`domain: null`), then per
/// domain every field (`report::schedstat::diff_sections`; the CLI's text leaves out the rows zero
/// on both sides).
#[wasm_bindgen]
pub fn schedstat_diff(a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    use crate::report::schedstat::{SchedstatSummary, diff_sections};
    let read = |field: &str, v: JsValue| {
        serde_wasm_bindgen::from_value::<SchedstatSummary>(v).map_err(|e| {
            invalid(&FieldError::new(field, format!("not a schedstat summary: {e}")).into())
        })
    };
    Ok(to_js(&diff_sections(&read("a", a)?, &read("b", b)?)))
}

/// What a share link of the experiment cannot promise, or null: a link that carries an rt-app
/// file and is longer than `link::SANE_LINK_CHARS` (`link::link_note`).
#[wasm_bindgen]
pub fn link_note(experiment_js: JsValue) -> Result<Option<String>, JsValue> {
    Ok(crate::experiment::link::link_note(&experiment(
        experiment_js,
    )?))
}

/// The A/B change between two reports (as returned by `Sim.report`): `Delta::between`, the same
/// figures as the CLI's `compare`.
#[wasm_bindgen]
pub fn compare(a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    Ok(to_js(&Delta::between(&report("a", a)?, &report("b", b)?)))
}

/// The histogram buckets of a report's percentiles (`Histogram::bucket_of`, clamped to the
/// report's min..max): `{latency_ms: {p95: [lo, hi]}, wakeup_latency_us: {p50, p95, p99}}`, in the
/// report's units. A percentile is its bucket's lower bound; the true value lies in `[lo, hi)`.
#[wasm_bindgen]
pub fn percentile_bounds(r: JsValue) -> Result<JsValue, JsValue> {
    let r = report("report", r)?;
    let range = |v: f64, per_ns: f64, min: f64, max: f64| {
        let (lo, hi) = crate::sched::Histogram::bucket_of((v * per_ns).round().max(0.0) as u64);
        [(lo as f64 / per_ns).max(min), (hi as f64 / per_ns).min(max)]
    };
    let (l, w) = (&r.latency_ms, &r.wakeup_latency_us);
    Ok(to_js(&serde_json::json!({
        "latency_ms": { "p95": range(l.p95, 1e6, l.min, l.max) },
        "wakeup_latency_us": {
            "p50": range(w.p50, 1e3, 0.0, w.max),
            "p95": range(w.p95, 1e3, 0.0, w.max),
            "p99": range(w.p99, 1e3, 0.0, w.max),
        },
    })))
}

/// A sweep's CPU list ("64,128 256") parsed and checked: always `{ok, cpus, errors}`.
#[wasm_bindgen]
pub fn sweep_cpus(text: &str) -> JsValue {
    let (cpus, errors) = match sweep::parse_cpu_list(text) {
        Ok(c) => (c, vec![]),
        Err(i) => (vec![], i.0),
    };
    to_js(&serde_json::json!({ "ok": errors.is_empty(), "cpus": cpus, "errors": errors }))
}

/// The experiment resized for one point of the scaling sweep (2 sockets × cores × SMT2); a CPU
/// count that is not representable is refused (field `cpus`).
#[wasm_bindgen]
pub fn sweep_experiment(experiment_js: JsValue, cpus: u32) -> Result<JsValue, JsValue> {
    let e = sweep::resized(&experiment(experiment_js)?, cpus).map_err(|i| invalid(&i))?;
    e.validate().map_err(|i| invalid(&i))?;
    Ok(to_js(&e))
}

/// One row of the sweep (`SweepPoint`, as the CLI's `sweep --json` prints it) from its reports.
#[wasm_bindgen]
pub fn sweep_point(cpus: u32, a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    Ok(to_js(&sweep::SweepPoint::new(
        cpus,
        &report("a", a)?,
        &report("b", b)?,
    )))
}

/// The seeds of `n` repeats of a scenario with seed `seed` (`repeat::seeds`; every one below 2^53,
/// so exact as a JS number). `n` is clamped to 1..=MAX_REPEATS.
#[wasm_bindgen]
pub fn repeat_seeds(seed: f64, n: u32) -> Result<JsValue, JsValue> {
    if !((0.0..=9_007_199_254_740_991.0).contains(&seed) && seed.fract() == 0.0) {
        return Err(invalid(
            &FieldError::new("seed", format!("{seed} is not an integer in 0..=2^53-1")).into(),
        ));
    }
    let n = n.clamp(1, crate::experiment::scenario::MAX_REPEATS);
    Ok(to_js(&crate::experiment::repeat::seeds(seed as u64, n)))
}

/// The repeat table (`repeat::Table`, as `compare --repeat N --json` prints it) of the reports of
/// side A and side B (arrays of `Sim.report()` results, same seeds in the same order; `b` may be
/// empty for one side).
#[wasm_bindgen]
pub fn repeat_table(a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    let reports = |field: &str, v: JsValue| -> Result<Vec<Report>, JsValue> {
        serde_wasm_bindgen::from_value::<Vec<Report>>(v).map_err(|e| {
            invalid(&FieldError::new(field, format!("not a list of reports: {e}")).into())
        })
    };
    let (a, b) = (reports("a", a)?, reports("b", b)?);
    if a.is_empty() || (!b.is_empty() && b.len() != a.len()) {
        return Err(invalid(
            &FieldError::new(
                "a",
                "give at least one report of A, and as many of B (or none)",
            )
            .into(),
        ));
    }
    let t = crate::experiment::repeat::Table::new(&a, (!b.is_empty()).then_some(&b[..]));
    Ok(to_js(&t))
}

/// A story's validation rows checked on the story's run (`validation::check`): the model's figure
/// next to the published one, with the row's band and status. `a`, `b`: the reports of every repeat.
#[wasm_bindgen]
pub fn story_check(name: &str, a: JsValue, b: JsValue) -> Result<JsValue, JsValue> {
    let stories = crate::experiment::stories::stories();
    let Some(s) = stories.iter().find(|s| s.name == name) else {
        return Err(invalid(
            &FieldError::new("story", format!("unknown story {name:?}")).into(),
        ));
    };
    let reports = |field: &str, v: JsValue| -> Result<Vec<Report>, JsValue> {
        serde_wasm_bindgen::from_value::<Vec<Report>>(v).map_err(|e| {
            invalid(&FieldError::new(field, format!("not a list of reports: {e}")).into())
        })
    };
    let (a, b) = (reports("a", a)?, reports("b", b)?);
    Ok(to_js(&crate::experiment::validation::check(
        s.rows,
        &s.experiment,
        &a,
        &b,
    )))
}

fn validation_settings(seconds: f64, repeats: u32) -> crate::experiment::validation::Settings {
    crate::experiment::validation::Settings {
        seconds,
        // the steady state, as `schedplay validate` by default
        warmup: crate::experiment::validation::Warmup::Auto,
        repeats,
        seed: 1,
        threads: 1,
    }
}

/// The runs of `schedplay validate --seconds S --repeat N` (seed 1): `[{experiment, side}]`, to be
/// run on the page's workers and handed back to `validation_table` in this order.
#[wasm_bindgen]
pub fn validation_plan(seconds: f64, repeats: u32) -> Result<JsValue, JsValue> {
    let s = validation_settings(seconds, repeats);
    let (_, jobs) = crate::experiment::validation::plan(crate::experiment::validation::ROWS, &s)
        .map_err(|i| invalid(&i))?;
    let out: Vec<serde_json::Value> = jobs
        .iter()
        .map(|(e, side)| {
            let side = if *side == Side::A { "a" } else { "b" }; // the worker's side names
            serde_json::json!({ "experiment": e, "side": side, "work": e.estimated_events() })
        })
        .collect();
    Ok(to_js(&out))
}

/// The validation table from the reports of `validation_plan`'s runs: `{rows, headline}` (the rows
/// as `validate --json` prints them).
#[wasm_bindgen]
pub fn validation_table(seconds: f64, repeats: u32, reports: JsValue) -> Result<JsValue, JsValue> {
    let s = validation_settings(seconds, repeats);
    let reports: Vec<Report> = serde_wasm_bindgen::from_value(reports).map_err(|e| {
        invalid(&FieldError::new("reports", format!("not a list of reports: {e}")).into())
    })?;
    let rows = crate::experiment::validation::ROWS;
    let (exps, _) = crate::experiment::validation::plan(rows, &s).map_err(|i| invalid(&i))?;
    let out = crate::experiment::validation::evaluate(rows, &s, &exps, &reports)
        .map_err(|i| invalid(&i))?;
    // the headline counts behaviour checks and inputs apart (validation::headline)
    Ok(to_js(&serde_json::json!({
        "rows": out, "headline": crate::experiment::validation::headline(&out),
    })))
}

fn screen(
    experiment_js: JsValue,
    only: JsValue,
) -> Result<crate::experiment::sensitivity::Screen, JsValue> {
    let e = experiment(experiment_js)?;
    let only: Vec<String> = if only.is_undefined() || only.is_null() {
        vec![]
    } else {
        serde_wasm_bindgen::from_value(only).map_err(|err| {
            invalid(
                &FieldError::new("only", format!("not a list of assumption names: {err}")).into(),
            )
        })?
    };
    crate::experiment::sensitivity::Screen::new(&e, &only).map_err(|i| invalid(&i))
}

/// "How sure?": the runs of `schedplay sensitivity` for the experiment (`only`: these assumptions,
/// absent or empty: all), one at a time over each one's range (`sensitivity::Screen`):
/// `{points, seeds, ranges: [{name, value, low, high, unit, why, why_low, why_high}], runs:
/// [{point, experiment, side}]}`, to be run on the page's workers and handed back to
/// `sensitivity_summary` in this order. An experiment that sets assumptions itself is refused
/// (field `assume`).
#[wasm_bindgen]
pub fn sensitivity_plan(experiment_js: JsValue, only: JsValue) -> Result<JsValue, JsValue> {
    let s = screen(experiment_js, only)?;
    let ranges: Vec<serde_json::Value> = s
        .ranges
        .iter()
        .map(|r| {
            let row = crate::assumptions::row(&r.name);
            serde_json::json!({
                "name": r.name, "value": r.value, "low": r.low, "high": r.high, "unit": r.unit,
                "why": row.map(|x| x.why), "why_low": row.map(|x| x.why_low),
                "why_high": row.map(|x| x.why_high),
            })
        })
        .collect();
    let runs: Vec<serde_json::Value> = s
        .runs()
        .iter()
        .map(|(i, (e, side))| {
            let side = if *side == Side::A { "a" } else { "b" }; // the worker's side names
            serde_json::json!({ "point": i, "experiment": e, "side": side, "work": e.estimated_events() })
        })
        .collect();
    let seeds = crate::experiment::repeat::seeds(s.base.seed, s.base.repeats.max(1));
    Ok(to_js(&serde_json::json!({
        "points": s.nr_points(), "seeds": seeds, "ranges": ranges, "runs": runs,
    })))
}

/// The screen's bands and tornados (`sensitivity::Summary`, as `schedplay sensitivity --json`
/// prints it) from the reports of every run of `sensitivity_plan`, in plan order.
#[wasm_bindgen]
pub fn sensitivity_summary(
    experiment_js: JsValue,
    only: JsValue,
    reports: JsValue,
) -> Result<JsValue, JsValue> {
    let s = screen(experiment_js, only)?;
    let reports: Vec<Report> = serde_wasm_bindgen::from_value(reports).map_err(|e| {
        invalid(&FieldError::new("reports", format!("not a list of reports: {e}")).into())
    })?;
    s.summary_of(&reports)
        .map(|x| to_js(&x))
        .map_err(|i| invalid(&i))
}

/// The load curve's runs (`curve::Curve`, as `schedplay curve` runs it): the experiment's A/B at
/// each value of the integer workload knob `knob`. `values`: the typed list ("384, 768"), empty:
/// `curve::default_values` (half to four times the knob's value). Returns `{curve, points:
/// [{index, value, runs: [{experiment, side}]}]}`: `curve` goes back to `curve_line` with the
/// reports of one point's runs in this order. Bad input is an `InvalidInput` naming `knob`,
/// `values` or, per point, the experiment's fields ("point 1 (clients=0): ...").
#[wasm_bindgen]
pub fn curve_plan(
    experiment_js: JsValue,
    knob: &str,
    values: &str,
    symbol: &str,
) -> Result<JsValue, JsValue> {
    use crate::experiment::curve;
    let base = experiment(experiment_js)?;
    let values = if values.trim().is_empty() {
        curve::default_values(&base, knob)
    } else {
        curve::parse_values(values)
    }
    .map_err(|i| invalid(&i))?;
    let c = curve::Curve {
        base,
        knob: knob.into(),
        values,
        symbol: symbol.into(),
    };
    let points = c.points().map_err(|i| invalid(&i))?;
    let points: Vec<serde_json::Value> = points
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let runs: Vec<serde_json::Value> = curve::point_jobs(e)
                .iter()
                .map(|(x, side)| {
                    let side = if *side == Side::A { "a" } else { "b" }; // the worker's side names
                    serde_json::json!({ "experiment": x, "side": side, "work": x.estimated_events() })
                })
                .collect();
            serde_json::json!({ "index": i, "value": c.values[i], "runs": runs })
        })
        .collect();
    Ok(to_js(&serde_json::json!({ "curve": c, "points": points })))
}

/// One point's `CurveLine` (the line `schedplay curve --json` prints) from the reports of its runs
/// in `curve_plan`'s order: `curve::Curve::line`, so the page's figures are the CLI's.
#[wasm_bindgen]
pub fn curve_line(curve_js: JsValue, index: usize, reports: JsValue) -> Result<JsValue, JsValue> {
    use crate::experiment::curve::Curve;
    let c: Curve = serde_wasm_bindgen::from_value(curve_js)
        .map_err(|e| invalid(&FieldError::new("curve", format!("not a curve: {e}")).into()))?;
    let reports: Vec<Report> = serde_wasm_bindgen::from_value(reports).map_err(|e| {
        invalid(&FieldError::new("reports", format!("not a list of reports: {e}")).into())
    })?;
    let points = c.points().map_err(|i| invalid(&i))?;
    let Some(e) = points.get(index) else {
        return Err(invalid(
            &FieldError::new(
                "index",
                format!("{index} is not a point: 0..{}", points.len()),
            )
            .into(),
        ));
    };
    let want = 2 * e.repeats.max(1) as usize;
    if reports.len() != want {
        return Err(invalid(
            &FieldError::new(
                "reports",
                format!("{} reports: point {index} has {want} runs", reports.len()),
            )
            .into(),
        ));
    }
    let a: Vec<Report> = reports.iter().step_by(2).cloned().collect();
    let b: Vec<Report> = reports.iter().skip(1).step_by(2).cloned().collect();
    Ok(to_js(&c.line(index, e, &a, &b)))
}

/// "Max load at a latency bound" (`schedplay maxload`): the search of each repeat's seed, side A
/// or B, at the CLI's `from` and precision. Returns `{maxload, seeds}`; `maxload` goes back to
/// `maxload_step`. Bad input is an `InvalidInput` naming `percentile` (one of the report's: 50,
/// 90, 99, 99.9), `bound_us`, `workload` (not open-loop) or the experiment's fields.
#[wasm_bindgen]
pub fn maxload_plan(
    experiment_js: JsValue,
    percentile: f64,
    bound_us: f64,
) -> Result<JsValue, JsValue> {
    use crate::experiment::maxload::{self as ml, MaxLoad};
    let base = experiment(experiment_js)?;
    let m = MaxLoad {
        base,
        percentile,
        bound_us,
        from: ml::DEFAULT_FROM,
        precision_pct: ml::DEFAULT_PRECISION_PCT,
    };
    let mut errs = m.validate().err().map(|i| i.0).unwrap_or_default();
    if !errs.iter().any(|e| e.field == "percentile")
        && !ml::REPORTED_PERCENTILES.contains(&percentile)
    {
        errs.push(FieldError::new(
            "percentile",
            format!("{percentile}: one of 50, 90, 99, 99.9 (the percentiles a report prints)"),
        ));
    }
    if !errs.is_empty() {
        return Err(invalid(&Invalid(errs)));
    }
    let seeds = crate::experiment::repeat::seeds(m.base.seed, m.base.repeats.max(1));
    Ok(to_js(&serde_json::json!({ "maxload": m, "seeds": seeds })))
}

/// One step of a search (`MaxLoad::next`, the CLI's rule): `probes` so far, plus, when `report` is
/// not null, the report of the probe `next` asked for last (read by `MaxLoad::probe_of`). Returns
/// `{probes, next: {rate, left, experiment, work} | null, line: SearchLine | null}`: the run to
/// make next (any side), or the finished search as `maxload --json` prints its line.
#[wasm_bindgen]
pub fn maxload_step(
    maxload_js: JsValue,
    index: usize,
    seed: f64,
    probes_js: JsValue,
    report_js: JsValue,
) -> Result<JsValue, JsValue> {
    use crate::experiment::maxload::{MaxLoad, Next, Probe};
    let m: MaxLoad = serde_wasm_bindgen::from_value(maxload_js).map_err(|e| {
        invalid(&FieldError::new("maxload", format!("not a maxload search: {e}")).into())
    })?;
    let mut probes: Vec<Probe> = serde_wasm_bindgen::from_value(probes_js).map_err(|e| {
        invalid(&FieldError::new("probes", format!("not a list of probes: {e}")).into())
    })?;
    let seed = seed as u64;
    if !report_js.is_null() && !report_js.is_undefined() {
        let r = report("report", report_js)?;
        let Next::Probe { rate, .. } = m.next(&probes).map_err(|e| invalid(&e.into()))? else {
            return Err(invalid(
                &FieldError::new("report", "the search is over: no probe was asked for").into(),
            ));
        };
        probes.push(m.probe_of(rate, &r, None).map_err(|i| invalid(&i))?);
    }
    let (next, line) = match m.next(&probes).map_err(|e| invalid(&e.into()))? {
        Next::Probe { rate, left } => {
            let e = m.probe_experiment(rate, seed).map_err(|i| invalid(&i))?;
            let work = e.estimated_events();
            (
                serde_json::json!({ "rate": rate, "left": left, "experiment": e, "work": work }),
                serde_json::Value::Null,
            )
        }
        Next::Done { rate_at_bound } => (
            serde_json::Value::Null,
            serde_json::to_value(m.line(index, seed, probes.clone(), rate_at_bound))
                .unwrap_or_default(),
        ),
    };
    Ok(to_js(
        &serde_json::json!({ "probes": probes, "next": next, "line": line }),
    ))
}

/// The searches' result (`maxload::headline`, the CLI's last line; `rate_at_bound`: the mean and
/// 95% interval) and the CLI's table (`to_text`), from the lines of `maxload_step`.
#[wasm_bindgen]
pub fn maxload_summary(lines_js: JsValue) -> Result<JsValue, JsValue> {
    use crate::experiment::maxload::{self as ml, SearchLine};
    let lines: Vec<SearchLine> = serde_wasm_bindgen::from_value(lines_js).map_err(|e| {
        invalid(&FieldError::new("lines", format!("not a list of searches: {e}")).into())
    })?;
    Ok(to_js(&serde_json::json!({
        "headline": ml::headline(&lines),
        "text": ml::to_text(&lines),
        "rate_at_bound": ml::rate_at_bound(&lines),
    })))
}
