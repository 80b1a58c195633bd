//! rt-app JSON workloads (src/workload/rtapp/): files in rt-app's own dialect run, every key or
//! event the model does not have is refused with its JSON path, and the events mean what they
//! mean in rt-app (a periodic timer sets the loop rate, a mutex serializes, a barrier joins).
//! With RTAPP_EXAMPLES=<rt-app>/doc/examples every example file is run or refused by name.
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::{Report, run};

fn exp(file: &str, seconds: f64) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(1);
    e.machine.overrides.cores_per_socket = Some(4);
    e.seconds = seconds;
    e.workload.name = "rtapp".into();
    e.workload.knobs.insert("file".into(), file.into());
    e
}

fn ok(file: &str, seconds: f64) -> Report {
    run(&exp(file, seconds), Side::A).unwrap_or_else(|e| panic!("{e}"))
}

fn refused(file: &str) -> Vec<String> {
    match run(&exp(file, 0.01), Side::A) {
        Ok(_) => panic!("accepted: {file}"),
        Err(e) => {
            e.0.iter()
                .map(|f| format!("{}: {}", f.field, f.message))
                .collect()
        }
    }
}

#[test]
fn a_periodic_timer_sets_the_loop_rate_in_rt_apps_own_dialect() {
    // comments, a trailing comma, `loop: -1`, and the tutorial's 10 ms load every 100 ms
    let f = r#"{ /* 10% load */
        "tasks": { "thread0": { "instance": 2, "loop": -1, "run": 10000,
                                "timer": { "ref": "unique", "period": 100000 }, } },
        "global": { "duration": 6, "default_policy": "SCHED_OTHER", "gnuplot": true, }
    }"#;
    let r = ok(f, 2.0);
    // 2 threads × 10 loops a second, each loop one period long (the last loop's period is cut by
    // the end of the run: 19 loops each in 2 s)
    assert!(
        (18.5..=20.0).contains(&r.throughput_per_sec),
        "{}",
        r.throughput_per_sec
    );
    assert!(
        (0.095..0.105).contains(&(r.latency_ms.avg / 1000.0)),
        "{:?}",
        r.latency_ms
    );
    // 20% of one CPU's time, over all the machine's CPUs (the rest idle)
    let want = 0.2 / r.machine.cpus as f64;
    assert!(
        (r.utilization - want).abs() < want * 0.1,
        "{} vs {want}",
        r.utilization
    );
}

#[test]
fn a_mutex_serializes_its_critical_sections() {
    // 4 threads on 4 CPUs each holding one lock for 1 ms per loop: at most 1000 loops a second
    let f = r#"{ "tasks": { "t": { "instance": 4,
        "lock": "m", "run": 1000, "unlock": "m" } } }"#;
    let r = ok(f, 0.5);
    assert!(
        r.throughput_per_sec <= 1000.0 && r.throughput_per_sec > 900.0,
        "{}",
        r.throughput_per_sec
    );
    // without the lock the four run in parallel
    let free = ok(
        r#"{ "tasks": { "t": { "instance": 4, "run": 1000 } } }"#,
        0.5,
    );
    assert!(
        free.throughput_per_sec > 3500.0,
        "{}",
        free.throughput_per_sec
    );
}

#[test]
fn barriers_signals_and_phases_run_and_finite_loops_end() {
    let f = r#"{ "tasks": {
        "a": { "loop": 5, "phases": { "p1": { "loop": 2, "run": 500, "barrier": "b" },
                                       "p2": { "signal": "c", "sleep": 100 } } },
        "b": { "loop": -1, "run": 500, "barrier": "b", "wait": { "ref": "c", "mutex": "m" } },
        "c": { "suspend", "run": 100 },
        "d": { "priority": 5, "run": 200, "resume": "c", "sleep": 1000 } } }"#;
    let r = ok(f, 0.2);
    assert!(r.throughput_per_sec > 0.0);
}

#[test]
fn unsupported_keys_and_events_are_refused_by_json_path() {
    let errs = refused(
        r#"{ "global": { "frag": 1, "default_policy": "SCHED_FIFO" },
             "tasks": { "t": { "cpus": [0], "policy": "SCHED_DEADLINE",
                                "phases": { "p": { "run": 10, "fork": "t", "yield": "", "bogus": 1 } } } } }"#,
    );
    let all = errs.join("\n");
    for path in [
        "global.frag",
        "global.default_policy: SCHED_FIFO",
        "tasks.t.cpus",
        "tasks.t.policy: SCHED_DEADLINE",
        "tasks.t.phases.p.fork",
        "tasks.t.phases.p.yield",
        "tasks.t.phases.p.bogus",
    ] {
        assert!(all.contains(path), "{path} not named in:\n{all}");
    }
    assert!(
        errs.iter().all(|e| e.starts_with("workload_file: ")),
        "{all}"
    );
    assert!(refused("{ \"tasks\": { \"t\": { \"run\": -5 } } }")[0].contains("tasks.t.run"));
    assert!(refused("{ \"tasks\": ")[0].contains("line 1, column 12"));
    assert!(refused("{ \"global\": {} }")[0].contains("tasks: missing"));
}

/// RTAPP_EXAMPLES: a directory of rt-app example files; each must run or be refused naming a path.
#[test]
fn rt_apps_examples_run_or_are_refused_by_name_when_given() {
    let Ok(dir) = std::env::var("RTAPP_EXAMPLES") else {
        eprintln!("RTAPP_EXAMPLES not set: rt-app's examples not checked");
        return;
    };
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        match run(&exp(&text, 0.2), Side::A) {
            Ok(r) => eprintln!(
                "RUN     {}: {:.1} loops/s",
                f.display(),
                r.throughput_per_sec
            ),
            Err(e) => {
                assert!(
                    e.0.iter()
                        .all(|x| x.field == "workload_file" && x.message.contains(':'))
                );
                eprintln!("REFUSED {}: {}", f.display(), e.0[0].message);
            }
        }
    }
}
