//! The Perfetto protobuf trace (docs/TRACE.md), decoded with a minimal protobuf reader whose field
//! numbers are written here from Perfetto's .proto files (independently of the writer's table;
//! scripts/perfetto-check.py checks the same files against the `perfetto` package's own schema):
//! every context switch of the window is a `sched_switch`, in time order per CPU, each CPU's
//! switches chain (the next one's prev is this one's next), and the default window never fails.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::experiment::traced::run_traced_as;
use schedplay::sched::{Counter, TRACE_MAX_EVENTS, TraceFormat, task_pid};
use schedplay::{Run, run};
use std::collections::BTreeMap;

/// One decoded field: number and value (a varint, or the bytes of a length-delimited field).
#[derive(Debug)]
enum V<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], i: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let byte = b[*i];
        *i += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
        assert!(shift < 64, "varint too long");
    }
}

fn fields(b: &[u8]) -> Vec<(u32, V<'_>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let tag = varint(b, &mut i);
        let (num, wire) = ((tag >> 3) as u32, tag & 7);
        match wire {
            0 => out.push((num, V::Int(varint(b, &mut i)))),
            2 => {
                let n = varint(b, &mut i) as usize;
                out.push((num, V::Bytes(&b[i..i + n])));
                i += n;
            }
            w => panic!("field {num}: wire type {w} is not written by schedplay"),
        }
    }
    out
}

fn sub(b: &[u8], num: u32) -> Vec<&[u8]> {
    fields(b)
        .into_iter()
        .filter_map(|(n, v)| match v {
            V::Bytes(x) if n == num => Some(x),
            _ => None,
        })
        .collect()
}

fn int(b: &[u8], num: u32) -> Option<u64> {
    fields(b).into_iter().find_map(|(n, v)| match v {
        V::Int(x) if n == num => Some(x),
        _ => None,
    })
}

fn packed(b: &[u8], num: u32) -> Vec<u64> {
    let mut v = Vec::new();
    for p in sub(b, num) {
        let mut i = 0;
        while i < p.len() {
            v.push(varint(p, &mut i));
        }
    }
    v
}

// protos/perfetto/trace/trace.proto, trace_packet.proto
const TRACE_PACKET: u32 = 1;
const PKT_FTRACE_EVENTS: u32 = 1;
const PKT_PROCESS_TREE: u32 = 2;
const PKT_TRACK_EVENT: u32 = 11;
// ftrace/ftrace_event_bundle.proto
const BUNDLE_CPU: u32 = 1;
const BUNDLE_EVENT: u32 = 2;
const BUNDLE_COMPACT_SCHED: u32 = 4;
const CS_SWITCH_TIMESTAMP: u32 = 1;
const CS_SWITCH_PREV_STATE: u32 = 2;
const CS_SWITCH_NEXT_PID: u32 = 3;
const CS_WAKING_TIMESTAMP: u32 = 7;
// ftrace/ftrace_event.proto
const EV_SCHED_MIGRATE_TASK: u32 = 491;
const EV_CPU_IDLE: u32 = 13;
// ps/process_tree.proto
const PT_THREADS: u32 = 2;

struct Decoded {
    /// Per CPU: (time, prev_state, next pid) of each sched_switch, in file order.
    switches: BTreeMap<u64, Vec<(u64, u64, i64)>>,
    waking: usize,
    migrate: usize,
    cpu_idle: usize,
    threads: usize,
    track_events: usize,
}

fn decode(bytes: &[u8]) -> Decoded {
    let mut d = Decoded {
        switches: BTreeMap::new(),
        waking: 0,
        migrate: 0,
        cpu_idle: 0,
        threads: 0,
        track_events: 0,
    };
    for pkt in sub(bytes, TRACE_PACKET) {
        for tree in sub(pkt, PKT_PROCESS_TREE) {
            d.threads += sub(tree, PT_THREADS).len();
        }
        d.track_events += sub(pkt, PKT_TRACK_EVENT).len();
        for b in sub(pkt, PKT_FTRACE_EVENTS) {
            let cpu = int(b, BUNDLE_CPU).unwrap_or(0);
            for cs in sub(b, BUNDLE_COMPACT_SCHED) {
                let ts = packed(cs, CS_SWITCH_TIMESTAMP);
                let st = packed(cs, CS_SWITCH_PREV_STATE);
                let pid = packed(cs, CS_SWITCH_NEXT_PID);
                assert!(ts.len() == st.len() && ts.len() == pid.len());
                let mut t = 0;
                let list = d.switches.entry(cpu).or_default();
                for i in 0..ts.len() {
                    t += ts[i];
                    list.push((t, st[i], pid[i] as i64));
                }
                d.waking += packed(cs, CS_WAKING_TIMESTAMP).len();
            }
            for e in sub(b, BUNDLE_EVENT) {
                d.migrate += sub(e, EV_SCHED_MIGRATE_TASK).len();
                d.cpu_idle += sub(e, EV_CPU_IDLE).len();
            }
        }
    }
    d
}

fn small() -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.workload.name = "oltp".into();
    // 0.02 s: since issue 49 each statement's TCP path is ~30 kernel steps, each a trace slice,
    // and 0.05 s passed the 1 M-event cap
    e.seconds = 0.02;
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(8);
    e.machine.overrides.nodes_per_socket = Some(1);
    // the remote timer client: with sysbench on the box (issue 26) every mysqld thread blocks in
    // its first step at t = 0 and the trace holds one sched_switch fewer than rq->nr_switches per
    // such thread (64 of 46,770; reported, not fixed here)
    e.workload
        .knobs
        .insert("client".into(), serde_json::Value::from("remote"));
    e
}

#[test]
fn every_context_switch_is_a_sched_switch_in_time_order_and_the_run_is_unchanged() {
    let e = small();
    let mut r = Run::new(&e, Side::A).unwrap();
    r.enable_trace_as(TraceFormat::Perfetto, None, None)
        .unwrap();
    while !r.step(1 << 20) {}
    let tf = r.trace_file().unwrap();
    assert!(!tf.cut, "the small run fits the cap");
    let d = decode(&tf.bytes);
    let eng = r.engine();
    let st = eng.schedstat();
    let nr_switches: u64 = st.cpus.iter().map(|c| c.nr_switches).sum();
    let traced: usize = d.switches.values().map(|v| v.len()).sum();
    assert!(nr_switches > 1000, "{nr_switches}");
    assert_eq!(
        traced as u64, nr_switches,
        "sched_switch events vs rq->nr_switches"
    );
    for (cpu, list) in &d.switches {
        assert_eq!(
            list.len() as u64,
            st.cpus[*cpu as usize].nr_switches,
            "CPU {cpu}"
        );
        // time order; a switch always changes what runs; a task switched out as runnable
        // (prev_state 0) or blocked (1)
        for w in list.windows(2) {
            assert!(w[0].0 <= w[1].0, "CPU {cpu}: {:?} then {:?}", w[0], w[1]);
            assert_ne!(w[0].2, w[1].2, "CPU {cpu}: a switch to what already ran");
            assert!(w[1].1 <= 1, "prev_state {}", w[1].1);
        }
    }
    let counts = tf.counts.clone().unwrap();
    assert_eq!(counts.sched_switch, nr_switches);
    assert_eq!(d.waking as u64, counts.sched_waking);
    // every wakeup is a sched_waking; every change of CPU (a wakeup elsewhere, a balance move)
    // a sched_migrate_task (the counters are the run's totals: no warm-up here)
    let counter = |c: Counter| eng.metrics.counters[c as usize];
    assert_eq!(d.waking as u64, counter(Counter::Wakeups));
    assert_eq!(
        d.migrate as u64,
        counter(Counter::WakeMigrations) + counter(Counter::Migrations)
    );
    assert!(d.waking > 0 && d.cpu_idle > 0 && d.track_events > 0);
    assert_eq!(d.threads, eng.nr_tasks());
    // pids are task + 1: every next pid names a task or the idle task
    let max_pid = task_pid(eng.nr_tasks() as u32 - 1) as i64;
    assert!(
        d.switches
            .values()
            .flatten()
            .all(|s| (0..=max_pid).contains(&s.2))
    );
    // tracing only watches
    let plain = run(&e, Side::A).unwrap();
    assert_eq!(plain.report_hash, r.report().report_hash);
}

#[test]
fn the_default_window_is_cut_at_the_cap_and_an_explicit_one_that_overflows_is_refused() {
    let mut e = Experiment::default();
    e.machine.preset = "milan-2s".into();
    e.workload.name = "hackbench".into();
    e.seconds = 0.1;
    for format in [TraceFormat::Perfetto, TraceFormat::Json] {
        let (_, tf) = run_traced_as(&e, Side::A, format, None, None).unwrap();
        assert!(
            tf.cut,
            "{format:?}: 0.1 s of hackbench on 256 CPUs is over the cap"
        );
        assert!(tf.events <= TRACE_MAX_EVENTS && tf.events > TRACE_MAX_EVENTS * 9 / 10);
        assert!(tf.to_ns > 0 && tf.to_ns < 100_000_000, "{}", tf.summary());
        if format == TraceFormat::Perfetto {
            let d = decode(&tf.bytes);
            let last = d.switches.values().filter_map(|v| v.last()).map(|s| s.0);
            assert!(last.max().unwrap() < tf.to_ns, "no switch past the cut");
        }
    }
    let Err(err) = run_traced_as(&e, Side::A, TraceFormat::Perfetto, None, Some(0.1)) else {
        panic!("an explicit window over the cap is refused");
    };
    assert_eq!(err.0[0].field, "trace_to");
    assert!(err.0[0].message.contains(&TRACE_MAX_EVENTS.to_string()));
}

#[test]
fn cli_writes_pftrace_by_extension_and_json_otherwise() {
    let dir = std::env::temp_dir().join(format!("schedplay-pftrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t.pftrace");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args([
            "run",
            "--machine",
            "custom",
            "--sockets",
            "1",
            "--cores-per-socket",
            "4",
        ])
        .args(["--workload", "hackbench", "--seconds", "0.01", "--trace"])
        .arg(&file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("trace [0 s, "), "{err}");
    let bytes = std::fs::read(&file).unwrap();
    let d = decode(&bytes);
    assert!(d.switches.values().map(|v| v.len()).sum::<usize>() > 0);
    // JSON stays JSON
    let json = dir.join("t.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args([
            "run",
            "--machine",
            "custom",
            "--sockets",
            "1",
            "--cores-per-socket",
            "4",
        ])
        .args(["--workload", "hackbench", "--seconds", "0.01", "--trace"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&json)
            .unwrap()
            .starts_with("{\"displayTimeUnit\"")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
