//! The stories' results shipped with the page (www/precomputed/stories.json) are this build's: every
//! entry is the story's current experiment and curve, and one run of each story, recomputed here,
//! has the shipped report hash. An engine change that moves a hash, or a story edit, fails here
//! with the command that regenerates the file. Release build (a 0.6 s story side is 30-65 s of CPU
//! there; CI's `cargo test --release` runs it).
#![cfg(not(target_arch = "wasm32"))]

use schedplay::experiment::link::{decode_link, encode_link};
use schedplay::experiment::precomputed::{self, COMMAND, FILE};
use schedplay::experiment::repeat;
use schedplay::experiment::scenario::{Experiment, Side};
use schedplay::experiment::stories::stories;
use serde_json::Value;

fn shipped() -> Value {
    let path = format!("{}/{FILE}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}; write it with `{COMMAND}`"));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{path}: {e}; rewrite it with `{COMMAND}`"))
}

fn regenerate(what: &str) -> String {
    format!(
        "{what}: the shipped results are not this build's; regenerate them with `{COMMAND}` (or its --shard/--merge form) and commit the file"
    )
}

fn story<'a>(file: &'a Value, name: &str) -> &'a Value {
    file["stories"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == name))
        .unwrap_or_else(|| panic!("{}", regenerate(&format!("story {name} has no entry"))))
}

/// The link decodes to the experiment (no error), and is its canonical link.
fn is_link_of(link: &str, e: &Experiment) -> bool {
    let (d, errs) = decode_link(link);
    errs.is_empty() && encode_link(&d) == encode_link(e) && link == encode_link(e)
}

/// Every entry is a current story's, for its current experiment, curve and plan of runs.
#[test]
fn every_entry_is_a_current_story_s_experiment_and_curve() {
    let file = shipped();
    let all = stories();
    assert_eq!(
        file["stories"].as_array().map(Vec::len),
        Some(all.len()),
        "{}",
        regenerate("the stories changed")
    );
    let plan = precomputed::plan().expect("the stories' plan");
    assert_eq!(
        file["plan"].as_str(),
        Some(precomputed::plan_hash(&plan).as_str()),
        "{}",
        regenerate("the plan of runs (a story's experiment or curve) changed")
    );
    for s in &all {
        let e = story(&file, s.name);
        let link = e["link"].as_str().unwrap_or_default();
        assert!(
            is_link_of(link, &s.experiment),
            "{}",
            regenerate(&format!("{}'s link {link}", s.name))
        );
        let c = precomputed::story_curve(s);
        assert_eq!(e["curve"].is_null(), c.is_none(), "{}", regenerate(s.name));
        if let Some(c) = c {
            let points = c.points().expect("the story's curve");
            let shipped = e["curve"]["points"].as_array().cloned().unwrap_or_default();
            assert_eq!(shipped.len(), points.len(), "{}", regenerate(s.name));
            for (p, x) in shipped.iter().zip(&points) {
                let link = p["line"]["link"].as_str().unwrap_or_default();
                assert!(
                    is_link_of(link, x),
                    "{}",
                    regenerate(&format!("{}'s curve point {link}", s.name))
                );
            }
        }
        for side in ["a", "b"] {
            assert_eq!(
                e[side]["report"]["report_hash"],
                e[side]["report_hash"],
                "{}",
                regenerate(s.name)
            );
            assert_eq!(
                e[format!("{side}_hashes")][0],
                e[side]["report_hash"],
                "{}",
                regenerate(s.name)
            );
        }
    }
}

/// One run of every story recomputed: its report hash is the shipped one. Each story's A, or its B
/// when its A is a run already checked (the third story's A is the first's: the same 6.18 box).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "a 0.6 s story side takes minutes in a debug build: run with --release"
)]
fn one_run_of_every_story_has_the_shipped_report_hash() {
    let file = shipped();
    let mut checked: Vec<String> = Vec::new();
    let mut jobs: Vec<(String, &str, String, repeat::Job)> = Vec::new();
    for s in stories() {
        let entry = story(&file, s.name);
        let hash = |side: &str| {
            entry[side]["report_hash"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let (side, sd) = if checked.contains(&hash("a")) {
            ("b", Side::B)
        } else {
            ("a", Side::A)
        };
        checked.push(hash(side));
        let mut e = s.experiment.clone();
        e.repeats = 1;
        jobs.push((s.name.to_string(), side, hash(side), (e, sd)));
    }
    let runs: Vec<repeat::Job> = jobs.iter().map(|j| j.3.clone()).collect();
    let reports = repeat::run_jobs(&runs, repeat::default_threads()).expect("the stories run");
    for ((name, side, want, _), r) in jobs.iter().zip(&reports) {
        assert_eq!(
            &r.report_hash,
            want,
            "{}",
            regenerate(&format!(
                "{name} side {side}: this build gives report hash {}, the file has {want}",
                r.report_hash
            ))
        );
    }
}
