//! The store buffer's size as a machine field (`store_buffer_entries`, docs/MODEL.md §5c): the
//! report states the figure a run used, an override reaches the engine, bad values are refused.

mod common;
use common::schedplay;

/// `run --json` on a small 2-socket machine with extra flags: (store_buffer_entries, report_hash).
fn run(extra: &[&str]) -> (u64, String) {
    let mut args = vec![
        "run",
        "--machine",
        "milan-2s",
        "--sockets",
        "2",
        "--cores-per-socket",
        "8",
        "--workload",
        "hackbench",
        "--seconds",
        "0.02",
        "--json",
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = schedplay(&args);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    (
        v["machine"]["store_buffer_entries"]
            .as_u64()
            .expect("field"),
        v["report_hash"].as_str().expect("hash").to_string(),
    )
}

#[test]
fn the_report_states_the_cores_figure_and_an_override_reaches_the_engine() {
    let (entries, default_hash) = run(&[]);
    assert_eq!(entries, 64, "Zen 3: 64 entries (MODEL.md §5c)");
    let (entries, hash) = run(&["--store-buffer-entries", "64"]);
    assert_eq!((entries, &hash), (64, &default_hash), "the default, given");
    // one entry: every store waits for the one before it to commit, so the run changes
    let (entries, hash) = run(&["--store-buffer-entries", "1"]);
    assert_eq!(entries, 1);
    assert_ne!(hash, default_hash);
}

#[test]
fn an_out_of_range_size_names_the_field_and_its_range() {
    for bad in ["0", "513", "-3", "many"] {
        let (code, _, err) = schedplay(&[
            "run",
            "--machine",
            "milan-2s",
            "--seconds",
            "0.01",
            "--store-buffer-entries",
            bad,
        ]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(err.contains("store_buffer_entries"), "{bad}: {err}");
        assert!(err.contains("1..=512"), "{bad}: {err}");
    }
}
