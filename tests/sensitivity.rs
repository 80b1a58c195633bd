//! `schedplay sensitivity` end to end: the same bytes twice, shards that merge to the screen,
//! clear errors for names it does not know.
#![cfg(not(target_arch = "wasm32"))]

mod common;
use common::schedplay;

const SCENARIO: &[&str] = &[
    "sensitivity",
    "--machine",
    "custom",
    "--sockets",
    "2",
    "--cores-per-socket",
    "4",
    "--b",
    "skip-not-due",
    "--seconds",
    "0.005",
    "--only",
    "STATS_MLP,XFER_PCT",
    "--jobs",
    "2",
];

fn with(extra: &[&str]) -> Vec<String> {
    SCENARIO
        .iter()
        .chain(extra)
        .map(|s| s.to_string())
        .collect()
}

fn run(args: &[String]) -> (i32, String, String) {
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    schedplay(&a)
}

#[test]
fn same_bytes_twice_and_shards_merge_to_the_screen() {
    let (code, json, err) = run(&with(&["--json"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(run(&with(&["--json"])).1, json);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["points"], 5);
    let heads = v["headlines"].as_array().unwrap();
    assert_eq!(heads[0]["key"], "throughput_pct");
    for h in heads {
        let (lo, base, hi) = (
            h["band"][0].as_f64().unwrap(),
            h["base"].as_f64().unwrap(),
            h["band"][1].as_f64().unwrap(),
        );
        assert!(lo <= base && base <= hi, "{h}");
        assert_eq!(h["tornado"].as_array().unwrap().len(), 2);
    }
    let dir = std::env::temp_dir().join(format!("schedplay-sens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut files = Vec::new();
    let mut all_lines = String::new();
    for i in 0..3 {
        let (code, lines, err) = run(&with(&["--shard", &format!("{i}/3")]));
        assert_eq!(code, 0, "{err}");
        let f = dir.join(format!("s{i}.jsonl"));
        std::fs::write(&f, &lines).unwrap();
        files.push(f.to_string_lossy().to_string());
        all_lines.push_str(&lines);
    }
    assert_eq!(all_lines.lines().count(), 5);
    let mut merge = vec!["sensitivity".to_string(), "--json".into(), "--merge".into()];
    merge.extend(files.iter().rev().cloned());
    let (code, merged, err) = run(&merge);
    assert_eq!(code, 0, "{err}");
    assert_eq!(merged, json, "merged shards give the unsharded screen");
    let (code, _, err) = run(&merge[..4]);
    assert_eq!(code, 2);
    assert!(err.contains("missing points: 4 of 5: 0, 1, 3, 4"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_assumptions_are_named() {
    let mut a = with(&[]);
    let i = a.iter().position(|x| x == "STATS_MLP,XFER_PCT").unwrap();
    a[i] = "STATS_MLP,NO_SUCH".into();
    let (code, _, err) = run(&a);
    assert_eq!(code, 2);
    assert!(
        err.contains("assume: unknown assumption \"NO_SUCH\": allowed TICK_NS, SWITCH_NS"),
        "{err}"
    );
}

/// The page's path (issue 32 item 4): the link's experiment, `Screen::runs` run one at a time (as
/// the page's workers do, in any order), `Screen::summary_of` (what `wasm::sensitivity_summary`
/// wraps) — equal to `schedplay sensitivity --json` of the same scenario, seconds and seeds.
#[test]
fn the_pages_runs_and_summary_equal_the_cli() {
    use schedplay::experiment::sensitivity::Screen;
    let scenario: Vec<String> = with(&["--repeat", "2"]);
    let cut = scenario.iter().position(|x| x == "--only").unwrap();
    let mut link = vec!["link".to_string(), "--base".into(), "x/".into()];
    link.extend(scenario[1..cut].iter().chain(&scenario[cut + 2..]).cloned());
    let (code, url, err) = run(&link);
    assert_eq!(code, 0, "{err}");
    let (e, errors) =
        schedplay::experiment::link::decode_link(url.trim().trim_start_matches("x/?"));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(e.repeats, 2);
    let only = ["STATS_MLP".to_string(), "XFER_PCT".to_string()];
    let screen = Screen::new(&e, &only).unwrap();
    let runs = screen.runs();
    assert_eq!(runs.len(), 5 * 2 * 2, "5 points, 2 seeds, A and B");
    // the workers finish in any order; the page files each report under its run's index
    let mut reports: Vec<Option<schedplay::Report>> = vec![None; runs.len()];
    for i in (0..runs.len()).rev() {
        let (_, (x, side)) = &runs[i];
        reports[i] = Some(schedplay::run(x, *side).unwrap());
    }
    let reports: Vec<_> = reports.into_iter().map(Option::unwrap).collect();
    let page = screen.summary_of(&reports).unwrap();
    let (code, cli, err) = run(&with(&["--repeat", "2", "--json"]));
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        serde_json::to_string_pretty(&page).unwrap(),
        cli.trim_end(),
        "the page's tornado is the CLI's"
    );
    assert_eq!(page.headlines[0].tornado.len(), 2);
    let err = screen.summary_of(&reports[1..]).unwrap_err();
    assert_eq!(err.0[0].field, "reports");
}
