//! The CLI contract: topology JSON, error messages and exit codes, links that round-trip.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn schedplay(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedplay"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

#[test]
fn topology_json_of_gnr_snc3() {
    let (code, out, _) = schedplay(&["topology", "--machine", "gnr-2s-snc3", "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (v["cpus"].as_u64(), v["nodes"].as_u64(), v["llcs"].as_u64()),
        (Some(512), Some(6), Some(6))
    );
    let d = v["domains"].as_array().unwrap();
    let levels: Vec<(&str, u64)> = d
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap(),
                x["span_weight"].as_u64().unwrap(),
            )
        })
        .collect();
    // SLIT row 0 = 10 15 17 21 28 26: NUMA levels at 15, 17, 21, 26, 28 (23 is not in row 0)
    assert_eq!(
        levels,
        vec![
            ("SMT", 2),
            ("MC", 86),
            ("NUMA", 172),
            ("NUMA", 256),
            ("NUMA", 342),
            ("NUMA", 426),
            ("NUMA", 512)
        ]
    );
    for numa in &d[2..] {
        assert!(
            numa["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "SD_SERIALIZE")
        );
        assert_eq!(numa["cache_nice_tries"], 2);
    }
    assert_eq!(d[0]["imbalance_pct"], 110);
    assert_eq!(d[1]["min_interval"], 86);
    assert_eq!(d[1]["max_interval"], 172);
}

#[test]
fn topology_text_looks_like_sched_verbose() {
    let (code, out, _) = schedplay(&[
        "topology",
        "--machine",
        "gnr-2s-96c-snc3",
        "--patch",
        "snc3-distance-fix",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("available: 6 nodes (0-5)"));
    assert!(out.contains("domain-0: span=0,192 level=SMT"), "{out}");
    assert!(out.contains("domain-1: span=0-31,192-223 level=MC"));
    assert!(out.contains("domain-4: span=0-383 level=NUMA"));
}

#[test]
fn errors_name_the_field_and_exit_2() {
    let (code, _, err) = schedplay(&["topology", "--machine", "nope"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("machine") && err.contains("gnr-2s-snc3"),
        "{err}"
    );
    let (code, _, err) = schedplay(&[
        "topology",
        "--machine",
        "custom",
        "--cores-per-socket",
        "2",
        "--nodes-per-socket",
        "3",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("nodes_per_socket"), "{err}");
    let (code, _, err) = schedplay(&[
        "run",
        "--machine",
        "custom",
        "--workload",
        "oltp",
        "--patch",
        "bogus",
        "--set",
        "clients=0",
        "--seconds",
        "0.01",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("clients") && err.contains("bogus"),
        "both bad fields are listed: {err}"
    );
}

#[test]
fn link_round_trips_through_run() {
    let (code, link, _) = schedplay(&[
        "link",
        "--machine",
        "custom",
        "--workload",
        "spin",
        "--set",
        "threads=8",
        "--seconds",
        "0.01",
        "--b",
        "skew-tick",
    ]);
    assert_eq!(code, 0);
    assert!(
        link.contains("machine=custom")
            && link.contains("threads=8")
            && link.contains("b=skew-tick"),
        "{link}"
    );
    let (code, out, err) = schedplay(&["compare", "--link", link.trim(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["b"]["patches"][0], "skew-tick");
    assert!(v["delta"]["throughput_pct"].is_number());
}

/// The benchmark command measures each reference scenario (not its speed: only that every row is
/// there, ran the requested time, and reports events and memory).
#[test]
fn bench_prints_one_measured_row_per_reference_scenario() {
    let (code, out, err) = schedplay(&["bench", "--seconds", "0.002"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(
        names,
        [
            "gnr-2s-snc3/oltp",
            "milan-2s/oltp+cache-aware",
            "custom-4096/spin"
        ]
    );
    for r in &rows {
        let num = |i: usize| r[i].parse::<f64>().unwrap();
        assert_eq!(num(2), 0.002, "{r:?}");
        assert!(num(3) > 0.0 && num(4) > 0.0 && num(5) > 0.0, "{r:?}");
    }
    assert_eq!(rows[2][1], "4096");
}

/// Every machine override key of the table (`scenario::MACHINE_KEYS`) is a CLI flag `--<key>` (with
/// `-` for `_`), and reaches the share link under the table's link key: the CLI cannot drift from it.
#[test]
fn every_machine_key_is_a_cli_flag() {
    for k in schedplay::scenario::MACHINE_KEYS {
        let flag = format!("--{}", k.key.replace('_', "-"));
        let value = 4.clamp(k.min, k.max).to_string();
        let (code, out, err) = schedplay(&["link", "--machine", "milan-2s", &flag, &value]);
        assert_eq!(code, 0, "{flag} {value}: {err}");
        assert!(
            out.contains(&format!("{}={value}", k.link)),
            "{flag} {value}: {out}"
        );
    }
}

/// A sweep CPU count that 2 sockets × cores × SMT2 cannot give is refused with a field error naming
/// `cpus` (it used to run 16 CPUs and label the row 18).
#[test]
fn sweep_refuses_a_cpu_count_it_cannot_simulate() {
    let (code, out, err) = schedplay(&["sweep", "--cpus", "18", "--seconds", "0.001"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("cpus: 18 is not allowed: a multiple of 4"),
        "{err}"
    );
    let (code, out, err) = schedplay(&[
        "sweep",
        "--machine",
        "milan-2s",
        "--cpus",
        "16",
        "--seconds",
        "0.001",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v[0]["cpus"], 16);
}
