//! Trace export (docs/TRACE.md): the trace decodes as Chrome JSON trace events with the expected
//! tracks, its slices account for exactly the CPU time the profile counts, the window and the cap
//! bound it, and tracing does not change the run (same report hash).
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::sched::{Counter, Sym, TRACE_MAX_EVENTS};
use schedplay::{Run, run, run_traced};
use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

fn exp(machine: &str, workload: &str, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = machine.into();
    e.workload.name = workload.into();
    e.seconds = seconds;
    e
}

/// A machine small enough for a whole-run trace under the cap.
fn small() -> Experiment {
    // 0.01 s: since issue 49 each OLTP statement's TCP path is ~30 kernel steps, each a trace
    // slice, and the 1 M-event cap falls at about 12 ms
    let mut e = exp("custom", "oltp", 0.01);
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(8);
    e.machine.overrides.nodes_per_socket = Some(1);
    e
}

fn events(text: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(text).expect("the trace is valid JSON");
    v["traceEvents"].as_array().expect("traceEvents").clone()
}

/// The CPU of a thread-scoped event: the machine is pid 1, CPU n is tid n + 1.
fn cpu_of(e: &Value) -> u64 {
    assert_eq!(e["pid"], 1, "{e}");
    e["tid"].as_u64().unwrap() - 1
}

/// Trace µs (3 decimals) back to whole ns.
fn ns(v: &Value) -> u64 {
    (v.as_f64().expect("a number") * 1000.0).round() as u64
}

/// Per CPU: the complete slices (start, end, name), sorted by start then by length (longest first).
fn slices(ev: &[Value]) -> BTreeMap<u64, Vec<(u64, u64, String)>> {
    let mut m: BTreeMap<u64, Vec<(u64, u64, String)>> = BTreeMap::new();
    for e in ev.iter().filter(|e| e["ph"] == "X") {
        let (s, d) = (ns(&e["ts"]), ns(&e["dur"]));
        assert!(d > 0, "empty slice {e}");
        let name = e["name"].as_str().unwrap().to_string();
        m.entry(cpu_of(e)).or_default().push((s, s + d, name));
    }
    for v in m.values_mut() {
        v.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
    }
    m
}

fn is_mode(name: &str) -> bool {
    // depth 0: a task (`process/tid`), idle, NOHZ idle, or kernel
    name.contains('/') || name == "idle" || name == "idle (nohz)" || name == "kernel"
}

/// Checks strict nesting on each CPU track and returns the depth of every slice.
fn nest(track: &[(u64, u64, String)]) -> Vec<usize> {
    let mut stack: Vec<u64> = Vec::new();
    let mut depth = Vec::new();
    for &(s, e, ref name) in track {
        while stack.last().is_some_and(|&end| end <= s) {
            stack.pop();
        }
        if let Some(&end) = stack.last() {
            assert!(
                e <= end,
                "{name} [{s}, {e}) overlaps its parent ending at {end}"
            );
        }
        depth.push(stack.len());
        stack.push(e);
    }
    depth
}

#[test]
fn whole_run_trace_has_a_track_per_cpu_and_accounts_for_the_profile() {
    let e = small();
    let mut r = Run::new(&e, Side::A).unwrap();
    r.enable_trace(None, None).unwrap();
    while !r.step(1 << 20) {}
    r.flush();
    let ev = events(&r.trace_json().unwrap());
    let eng = r.engine();
    let n = eng.topo.nr_cpus();

    let threads: Vec<u64> = ev
        .iter()
        .filter(|e| e["ph"] == "M" && e["name"] == "thread_name")
        .map(|e| {
            assert_eq!(e["args"]["name"], format!("CPU {}", cpu_of(e)));
            cpu_of(e)
        })
        .collect();
    assert_eq!(threads, (0..n as u64).collect::<Vec<_>>());
    let counters: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "C").collect();
    for c in 0..n {
        let key = format!("CPU {c}");
        assert!(
            counters
                .iter()
                .any(|e| e["name"] == "nr_running" && e["args"].get(&key).is_some()),
            "no nr_running counter for {key}"
        );
    }
    assert!(
        counters
            .iter()
            .any(|e| e["name"] == "waiters" && e["args"].get("sched_balance_running").is_some()),
        "no waiters counter for sched_balance_running"
    );
    let instants = |name: &str| {
        ev.iter()
            .filter(|e| e["ph"] == "i" && e["name"] == name)
            .count() as u64
    };
    let counter = |c: Counter| eng.metrics.counters[c as usize];
    assert!(counter(Counter::Softirqs) > 0 && counter(Counter::SbrCmpxchgFailed) > 0);
    assert_eq!(instants("raise SCHED_SOFTIRQ"), counter(Counter::Softirqs));
    assert_eq!(
        instants("cmpxchg sched_balance_running failed"),
        counter(Counter::SbrCmpxchgFailed)
    );
    // every arrow's end has its start, earlier or at the same time
    let starts: BTreeMap<u64, u64> = ev
        .iter()
        .filter(|e| e["ph"] == "s")
        .map(|e| (e["id"].as_u64().unwrap(), ns(&e["ts"])))
        .collect();
    let ends: Vec<&Value> = ev.iter().filter(|e| e["ph"] == "f").collect();
    assert!(!starts.is_empty() && !ends.is_empty());
    for f in ends {
        let s = starts[&f["id"].as_u64().unwrap()];
        assert!(s <= ns(&f["ts"]), "{f}");
    }
    let named = |n: &str| ev.iter().any(|e| e["ph"] == "X" && e["name"] == n);
    assert!(named("idle (nohz)") && named("wait sched_balance_running") && named("sched_tick"));

    let tracks = slices(&ev);
    assert_eq!(tracks.len(), n);
    for (&c, track) in &tracks {
        let c = c as usize;
        let depth = nest(track);
        let mut by_name: BTreeMap<&str, u64> = BTreeMap::new();
        let mut covered = 0;
        for (i, (s, e, name)) in track.iter().enumerate() {
            assert_eq!(
                depth[i] == 0,
                is_mode(name),
                "CPU {c}: {name} at depth {}",
                depth[i]
            );
            if depth[i] == 0 {
                covered += e - s;
            }
            if depth[i] <= 1 {
                *by_name.entry(name.as_str()).or_default() += e - s;
            }
        }
        // The mode slices tile the CPU's time: now plus the kernel work costed past the end.
        assert_eq!(covered, eng.now + eng.overshoot_ns(c), "CPU {c}");
        let m = &eng.metrics.cpu_sym[c];
        let user: u64 = by_name
            .iter()
            .filter(|(k, _)| k.contains('/'))
            .map(|(_, v)| v)
            .sum();
        assert_eq!(user, m[Sym::User as usize], "CPU {c} user");
        let idle = by_name.get("idle").unwrap_or(&0) + by_name.get("idle (nohz)").unwrap_or(&0);
        assert_eq!(idle, m[Sym::Idle as usize], "CPU {c} idle");
        for sym in Sym::ALL
            .iter()
            .filter(|s| !matches!(s, Sym::User | Sym::Idle))
        {
            let got = by_name.get(sym.name()).copied().unwrap_or(0);
            assert_eq!(got, m[*sym as usize], "CPU {c} {}", sym.name());
        }
    }
}

#[test]
fn a_window_is_tiled_by_each_cpus_slices_and_the_hash_is_unchanged() {
    let e = exp("milan-2s", "hackbench", 0.03);
    let plain = run(&e, Side::A).unwrap();
    // 0.2 ms: hackbench's messages are ~20 kernel steps each (issue 49), ~0.5 M trace events per ms
    let (traced, text) = run_traced(&e, Side::A, Some(0.01), Some(0.0102)).unwrap();
    assert_eq!(plain.report_hash, traced.report_hash);
    let ev = events(&text);
    let tracks = slices(&ev);
    assert_eq!(tracks.len(), 256);
    for (c, track) in &tracks {
        let depth = nest(track);
        let covered: u64 = track
            .iter()
            .zip(&depth)
            .filter(|(_, d)| **d == 0)
            .map(|((s, e, _), _)| e - s)
            .sum();
        assert_eq!(covered, 200_000, "CPU {c}");
        assert!(
            track
                .iter()
                .all(|&(s, e, _)| s >= 10_000_000 && e <= 10_200_000)
        );
    }
    for e in ev
        .iter()
        .filter(|e| matches!(e["ph"].as_str(), Some("C" | "i" | "s" | "f")))
    {
        let t = ns(&e["ts"]);
        // a stall still open at the window's end is clipped there: its waiters step down at `to`
        let end_ok = e["ph"] == "C" && t == 10_200_000;
        assert!(
            (10_000_000..10_200_000).contains(&t) || end_ok,
            "{e} outside the window"
        );
    }
}

#[test]
fn the_golden_scenario_hash_does_not_change_with_tracing() {
    let e = exp("gnr-2s-snc3", "oltp", 0.02);
    let plain = run(&e, Side::A).unwrap();
    // 0.2 ms: OLTP's TCP path (issue 49) puts ~1 M events in the first ms of 512 CPUs
    let (traced, _) = run_traced(&e, Side::A, Some(0.0), Some(0.0002)).unwrap();
    assert_eq!(plain.report_hash, traced.report_hash);
}

#[test]
fn too_many_events_is_an_error_naming_the_cap_and_bad_windows_name_the_field() {
    // an explicit end that holds too many events (without one the window is cut: tests/perfetto.rs)
    let e = exp("milan-2s", "hackbench", 0.2);
    let err = run_traced(&e, Side::A, None, Some(0.2)).unwrap_err();
    assert_eq!(err.0[0].field, "trace_to");
    assert!(
        err.0[0].message.contains(&TRACE_MAX_EVENTS.to_string()),
        "{}",
        err
    );
    for (from, to, field) in [
        (Some(-1.0), None, "trace_from"),
        (Some(0.2), None, "trace_from"),
        (Some(0.1), Some(0.05), "trace_to"),
        (None, Some(0.3), "trace_to"),
        (Some(f64::NAN), None, "trace_from"),
    ] {
        let err = run_traced(&exp("milan-2s", "hackbench", 0.2), Side::A, from, to).unwrap_err();
        assert_eq!(err.0[0].field, field, "{from:?} {to:?}: {err}");
    }
}

#[test]
fn cli_writes_the_trace_and_refuses_a_bad_window() {
    let dir = std::env::temp_dir().join(format!("schedplay-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.json");
    let args = [
        "run",
        "--machine",
        "milan-2s",
        "--workload",
        "hackbench",
        "--seconds",
        "0.02",
    ];
    let out = Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args(args)
        .args([
            "--trace",
            file.to_str().unwrap(),
            "--trace-from",
            "0.01",
            "--trace-to",
            "0.0101",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ev = events(&std::fs::read_to_string(&file).unwrap());
    assert!(ev.iter().any(|e| e["ph"] == "X"));
    let out = Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args(args)
        .args(["--trace", file.to_str().unwrap(), "--trace-to", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("trace_to"));
    std::fs::remove_dir_all(&dir).unwrap();
}
