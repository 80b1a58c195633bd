use super::*;

const S: Settings = Settings {
    seconds: 0.01,
    warmup: Warmup::Seconds(0.0),
    repeats: 1,
    seed: 1,
    threads: 1,
};

#[test]
fn published_numbers_and_the_headline_counts_kinds_apart() {
    let n = |id: &str| row(id).unwrap().published_number();
    assert_eq!(n("000-share-a"), Some(7.8));
    assert_eq!(n("000-share-b"), None);
    assert_eq!(n("000-gain"), Some(8.0));
    assert_eq!(n("002-regression"), Some(-10.0));
    assert_eq!(n("002-fix-sysbench"), Some(-0.72));
    let o = |id: &str, model: f64| row(id).unwrap().outcome(&S, model, Ci::OneRun);
    let out = [
        o("000-gain", 22.0),
        o("000-share-b", 0.1),
        o("lat-gnr-snc3-far", 132.0),
    ];
    assert_eq!(out[0].status, Status::Misses);
    // a miss says why, from docs/MODEL.md; a row that holds says nothing
    assert!(out[0].why.as_deref().unwrap().contains("STATS_MLP"));
    assert_eq!(out[1].why, None);
    assert!(to_text(&out, &S).contains("000-gain misses: the gain follows the storm"));
    assert_eq!(out[2].kind, Kind::Input);
    assert_eq!(
        headline(&out),
        "1 of 2 behaviour checks hold, 1 of 1 inputs hold"
    );
}

/// The page's story verdicts: a story's rows checked on its own run give the same figure as the
/// Δ card (Delta::between) and the row's own band decides holds or misses.
#[test]
fn a_storys_rows_are_checked_on_its_own_run() {
    let story = &crate::experiment::stories::stories()[0];
    let mut e = story.experiment.clone();
    e.seconds = 0.01;
    e.warmup = 0.0;
    let (a, b) = (
        vec![crate::run(&e, Side::A).unwrap()],
        vec![crate::run(&e, Side::B).unwrap()],
    );
    let c = check(story.rows, &e, &a, &b);
    let ids: Vec<&str> = c.iter().map(|x| x.outcome.id.as_str()).collect();
    assert_eq!(ids, story.rows);
    let gain = &c[2].outcome;
    let d = crate::Delta::between(&a[0], &b[0]);
    assert!(
        (gain.model - d.throughput_pct).abs() < 1e-9,
        "{} vs {}",
        gain.model,
        d.throughput_pct
    );
    assert_eq!(gain.model_ci95, None, "one run: no interval");
    assert_eq!(c[2].published_value, Some(8.0));
    let [lo, hi] = gain.tolerance;
    let inside = (lo..=hi).contains(&gain.model);
    assert_eq!(
        gain.status,
        if inside {
            Status::Holds
        } else {
            Status::Misses
        }
    );
    // an input row needs no run and is left out
    assert!(check(&["lat-gnr-snc3-far"], &e, &a, &b).is_empty());
}

/// One definition of a row's figure (issue 44 item 1): a story's verdict on its own run at the
/// steady state and "How close is the model?" at the same seconds, one repeat and the story's seed
/// give the same number, bit for bit, for every story row.
#[test]
fn a_storys_verdict_is_its_rows_figure_for_the_same_run() {
    for st in crate::experiment::stories::stories() {
        if st.rows.is_empty() {
            continue;
        }
        let s = Settings {
            seconds: 0.02,
            warmup: Warmup::Auto,
            repeats: 1,
            seed: st.experiment.seed,
            threads: 1,
        };
        let mut e = st.experiment.clone();
        e.seconds = s.seconds;
        e.warmup = 0.0; // the story's own (0.3 s) does not fit the short run; auto resolves it
        s.warmup.apply(&mut e).unwrap();
        let (a, b) = (
            vec![crate::run(&e, Side::A).unwrap()],
            vec![crate::run(&e, Side::B).unwrap()],
        );
        let story: Vec<f64> = check(st.rows, &e, &a, &b)
            .iter()
            .map(|c| c.outcome.model)
            .collect();
        let rows: Vec<Row> = st.rows.iter().map(|id| row(id).unwrap().clone()).collect();
        let table: Vec<f64> = validate(&rows, &s)
            .unwrap()
            .iter()
            .map(|o| o.model)
            .collect();
        assert_eq!(
            story.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            table.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
            "{}: {story:?} vs {table:?}",
            st.name
        );
    }
}

/// A story's verdicts compare its own run with its rows: every row must be that run (machine,
/// workload, A and B), or the page would judge one machine by another's figure.
#[test]
fn every_story_runs_the_scenario_of_its_rows() {
    for st in crate::experiment::stories::stories() {
        let e = &st.experiment;
        for r in st.rows.iter().map(|id| row(id).unwrap()) {
            assert_eq!(r.machine, e.machine.preset, "{} / {}", st.name, r.id);
            assert_eq!(r.workload, e.workload.name, "{} / {}", st.name, r.id);
            for (k, v) in r.knobs {
                let got = e.workload.knobs.get(*k).map(|x| match x.as_str() {
                    Some(s) => s.to_string(),
                    None => x.to_string(),
                });
                assert_eq!(got.as_deref(), Some(*v), "{} / {}: {k}", st.name, r.id);
            }
            assert_eq!(r.a, e.a.as_slice(), "{} / {}", st.name, r.id);
            assert_eq!(r.b, e.b.as_slice(), "{} / {}", st.name, r.id);
        }
    }
}

#[test]
fn ids_are_unique_and_bands_ordered() {
    for (i, r) in ROWS.iter().enumerate() {
        assert!(r.tolerance[0] <= r.tolerance[1], "{}", r.id);
        assert!(!r.source.is_empty(), "{}", r.id);
        assert!(ROWS[..i].iter().all(|x| x.id != r.id), "{}", r.id);
    }
}

#[test]
fn latency_rows_price_what_topology_lists_and_a_moved_band_misses() {
    let lats: Vec<Row> = ROWS
        .iter()
        .filter(|r| matches!(r.figure, Figure::Latency(_)))
        .cloned()
        .collect();
    let out = validate(&lats, &S).unwrap();
    let gnr_far = out.iter().find(|o| o.id == "lat-gnr-snc3-far").unwrap();
    assert_eq!(gnr_far.model, 132.0);
    assert_eq!(gnr_far.status, Status::Holds);
    assert!(out.iter().all(|o| o.status == Status::Holds), "{out:?}");
    // The fixture: the same row with its published band moved away from the model's figure.
    let mut moved = lats
        .iter()
        .find(|r| r.id == "lat-gnr-snc3-far")
        .unwrap()
        .clone();
    moved.tolerance = [140.5, 150.0];
    let o = validate(&[moved], &S).unwrap();
    assert_eq!(o[0].status, Status::Misses);
    assert_eq!(o[0].model, 132.0);
}

/// A band sits around the point estimate and never changes a verdict: the outcomes with bands
/// are the outcomes without, plus the band.
#[test]
fn a_band_never_changes_a_verdict() {
    let rows: Vec<Row> = ["000-gain", "lat-gnr-snc3-far"]
        .iter()
        .map(|id| row(id).unwrap().clone())
        .collect();
    let plain = validate(&rows, &S).unwrap();
    let only = vec!["SWITCH_NS".to_string(), "XFER_PCT".to_string()];
    let mut with = bands::with_bands(&rows, &S, plain.clone(), &only).unwrap();
    for (p, w) in plain.iter().zip(&with) {
        let b = w.band.clone().unwrap();
        assert!(b.lo <= w.model && w.model <= b.hi, "{}: {b:?}", w.id);
        assert_eq!((w.status, w.model), (p.status, p.model), "{}", w.id);
    }
    // the far-node latency (132 ns, measured 125-140) over GNR's ±10%: 119 .. 145
    let far = with[1].band.clone().unwrap();
    assert_eq!(
        (far.lo, far.hi, far.dominant.as_str()),
        (119.0, 145.0, "XFER_PCT")
    );
    assert!(far.reaches_tolerance);
    // a band that reaches the tolerance still leaves a miss a miss
    let mut moved = rows[1].clone();
    moved.tolerance = [140.5, 150.0];
    let o = validate(std::slice::from_ref(&moved), &S).unwrap();
    with = bands::with_bands(&[moved], &S, o, &only).unwrap();
    let b = with[0].band.clone().unwrap();
    assert!(b.reaches_tolerance && with[0].status == Status::Misses);
    assert!(
        to_text(&with, &S).contains("XFER_PCT ±13"),
        "{}",
        to_text(&with, &S)
    );
}

/// Repeats whose seeds gave identical runs measured nothing: the row is one run, named so, never a
/// zero-width interval.
#[test]
fn identical_repeats_give_no_interval() {
    let story = &crate::experiment::stories::stories()[0];
    let mut e = story.experiment.clone();
    e.seconds = 0.005;
    e.warmup = 0.0;
    let (a, b) = (
        crate::run(&e, Side::A).unwrap(),
        crate::run(&e, Side::B).unwrap(),
    );
    let c = check(story.rows, &e, &[a.clone(), a], &[b.clone(), b]);
    assert!(!c.is_empty());
    for x in &c {
        assert_eq!(x.outcome.model_ci95, None, "{}", x.outcome.id);
        assert!(x.outcome.identical_runs, "{}", x.outcome.id);
        assert!(model_cell(&x.outcome).contains(repeat::IDENTICAL_RUNS));
    }
}
