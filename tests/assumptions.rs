//! The screened assumptions (src/assumptions) against the runs that read them.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::schedplay;

use schedplay::assumptions::ROWS;

/// Every row reaches the run: its value at either end of its range changes the report of a small
/// cache-aware OLTP run, with sysbench on the box or on another host (the network's rows), or of a
/// small hackbench run over sockets or pipes (the message path's rows) (a row that moved none
/// would be read nowhere).
#[test]
fn every_row_reaches_the_run() {
    use schedplay::experiment::scenario::{Experiment, Side};
    let mut base = Experiment {
        seconds: 0.02,
        b: vec!["cache-aware".into()],
        ..Default::default()
    };
    base.machine.preset = "custom".into();
    base.machine.overrides.sockets = Some(2);
    base.machine.overrides.cores_per_socket = Some(8);
    let mut remote = base.clone();
    remote
        .workload
        .knobs
        .insert("client".into(), "remote".into());
    let mut socket = base.clone();
    socket.workload.name = "hackbench".into();
    for (k, v) in [("groups", "1"), ("fds", "4")] {
        socket.workload.knobs.insert(k.into(), v.into());
    }
    let mut pipe = socket.clone();
    pipe.workload
        .knobs
        .insert("transport".into(), "pipe".into());
    let runs = [&base, &remote, &socket, &pipe];
    let hash = |e: &Experiment| schedplay::run(e, Side::B).unwrap().report_hash;
    let h0: Vec<String> = runs.iter().map(|e| hash(e)).collect();
    let lat = base.machine_spec().unwrap().latency;
    let mut still = Vec::new();
    for r in ROWS {
        let (lo, hi) = r.range(&lat);
        let moved = [lo, hi].iter().any(|&v| {
            runs.iter().zip(&h0).any(|(b, h)| {
                let mut e = (*b).clone();
                e.assume.insert(r.name.into(), v);
                hash(&e) != *h
            })
        });
        if !moved {
            still.push(r.name);
        }
    }
    assert!(still.is_empty(), "moved nothing: {still:?}");
}

/// `--assume` takes a name of the table within its range (per machine for `XFER_PCT`); anything
/// else is a field error `assume` that names the name and the allowed range.
#[test]
fn assume_flag_checks_name_and_range() {
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            "--machine",
            "milan-2s",
            "--seconds",
            "0.002",
            "--json",
        ];
        a.extend_from_slice(extra);
        schedplay(&a)
    };
    let hash = |out: &str| {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        v["report_hash"].as_str().unwrap().to_string()
    };
    let (code, base, _) = run(&[]);
    assert_eq!(code, 0);
    let (code, same, _) = run(&["--assume", "TICK_NS=1000"]);
    assert_eq!(
        (code, hash(&same)),
        (0, hash(&base)),
        "the table's value is the default"
    );
    let (code, out, _) = run(&["--assume", "TICK_NS=2000", "--assume", "XFER_PCT=110"]);
    assert_eq!(code, 0);
    assert_ne!(hash(&out), hash(&base));
    let (code, _, err) = run(&["--assume", "TICK_NS=2001"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("assume: TICK_NS = 2001 is out of range: allowed 500..=2000 ns"),
        "{err}"
    );
    // milan-2s's table is measured: its range is ±10%
    let (_, _, err) = run(&["--assume", "XFER_PCT=120"]);
    assert!(err.contains("allowed 90..=110 %"), "{err}");
    let (code, _, err) = run(&["--assume", "NOPE=1"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown assumption \"NOPE\": allowed TICK_NS"),
        "{err}"
    );
    let (_, _, err) = run(&["--assume", "TICK_NS"]);
    assert!(err.contains("is not NAME=VALUE"), "{err}");
}
