//! The CLI's `--kernel` and the kernel knobs: a valid release runs and is named, an unknown one is
//! refused naming the field and the allowed releases, links without `kernel=` are 6.18, and the
//! 7.2 knobs are validated by name and range.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::schedplay;

const SMALL: &[&str] = &[
    "--machine",
    "custom",
    "--sockets",
    "2",
    "--cores-per-socket",
    "4",
    "--workload",
    "hackbench",
    "--seconds",
    "0.005",
];

fn with(extra: &[&str]) -> Vec<String> {
    SMALL.iter().chain(extra).map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> (i32, String, String) {
    let a: Vec<&str> = std::iter::once("run")
        .chain(args.iter().map(String::as_str))
        .collect();
    schedplay(&a)
}

#[test]
fn a_valid_release_runs_and_is_named_in_text_json_and_repeat_tables() {
    for k in ["6.18", "6.19", "7.0", "7.2"] {
        let (code, out, err) = run(&with(&["--kernel", k]));
        assert_eq!(code, 0, "{k}: {err}");
        assert!(out.contains(&format!("kernel {k},")), "{k}: {out}");
        let (code, json, _) = run(&with(&["--kernel", k, "--json"]));
        assert_eq!(code, 0);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let want = if k == "6.18" { None } else { Some(k) };
        assert_eq!(v.get("kernel").and_then(|x| x.as_str()), want, "{k}");
        let (code, table, err) = run(&with(&["--kernel", k, "--repeat", "2"]));
        assert_eq!(code, 0, "{k}: {err}");
        assert!(
            table
                .lines()
                .next()
                .unwrap()
                .contains(&format!("kernel {k},")),
            "{k}: {table}"
        );
    }
}

#[test]
fn an_unknown_release_names_the_field_and_the_allowed_ones_and_exits_2() {
    let (code, out, err) = run(&with(&["--kernel", "5.4"]));
    assert_eq!(code, 2, "{out}");
    assert!(
        err.contains("kernel: \"5.4\" is not a modelled release"),
        "{err}"
    );
    assert!(err.contains("6.18, 6.19, 7.0 or 7.2"), "{err}");
}

#[test]
fn a_link_without_kernel_is_6_18_and_one_with_it_keeps_it() {
    let q = "v=1&machine=custom&sockets=2&cores_per_socket=4&hz=1000&workload=spin&a=&b=&seconds=0.005&seed=3";
    let (code, out, err) = run(&["--link".to_string(), q.to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kernel 6.18,"), "{out}");
    let (code, out, err) = run(&["--link".to_string(), format!("{q}&kernel=7.0")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kernel 7.0,"), "{out}");
}

#[test]
fn kernel_knobs_are_checked_by_name_range_and_release() {
    let (code, _, err) = run(&with(&[
        "--kernel",
        "7.2",
        "--set",
        "llc_balancing/imb_pct=3000",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("llc_balancing/imb_pct: \"3000\" is out of range: allowed 0..=1000"),
        "{err}"
    );
    let (code, _, err) = run(&with(&[
        "--kernel",
        "7.2",
        "--set",
        "llc_balancing/bogus=1",
    ]));
    assert_eq!(code, 2);
    assert!(
        err.contains("sched: unknown kernel knob \"llc_balancing/bogus\""),
        "{err}"
    );
    let (code, _, err) = run(&with(&["--set", "llc_balancing/enabled=0"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("llc_balancing/enabled: applies from kernel 7.2"),
        "{err}"
    );
    let (code, _, err) = run(&with(&[
        "--kernel",
        "7.2",
        "--set",
        "llc_balancing/enabled=0",
    ]));
    assert_eq!(code, 0, "{err}");
}
