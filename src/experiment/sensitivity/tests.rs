use super::*;

fn small() -> Experiment {
    let mut e = Experiment {
        seconds: 0.01,
        b: vec!["skip-not-due".into()],
        ..Default::default()
    };
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(2);
    e.machine.overrides.cores_per_socket = Some(4);
    e
}

fn only(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_screen_is_deterministic_and_its_shards_merge_to_its_bytes() {
    let s = Screen::new(&small(), &only(&["SWITCH_NS", "XFER_PCT"])).unwrap();
    assert_eq!(s.nr_points(), 5);
    // XFER_PCT's range is the machine table's spread (custom uses GNR SNC3's: 90–110%)
    assert_eq!((s.ranges[1].low, s.ranges[1].high), (90, 110));
    let all = to_lines(&s.run(Shard::ALL, 2).unwrap());
    assert_eq!(all, to_lines(&s.run(Shard::ALL, 1).unwrap()));
    let shards: Vec<(String, String)> = (0..2)
        .rev()
        .map(|i| {
            let sh = Shard { index: i, count: 2 };
            (format!("s{i}"), to_lines(&s.run(sh, 1).unwrap()))
        })
        .collect();
    let (lines, text) = merge(&shards).unwrap();
    assert_eq!(text, all);
    let direct: Vec<ScreenLine> = all
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(summarize(&lines), summarize(&direct));
    let e = merge(&shards[..1]).unwrap_err();
    assert!(
        e.to_string().contains("missing points: 3 of 5: 0, 2, 4"),
        "{e}"
    );
    // another screen's lines do not merge with these
    let other = Screen::new(&small(), &only(&["TTWU_NS", "XFER_PCT"])).unwrap();
    let foreign = to_lines(&other.run(Shard { index: 1, count: 5 }, 1).unwrap());
    let mut mixed = shards.clone();
    mixed.push(("foreign".into(), foreign));
    assert!(
        merge(&mixed)
            .unwrap_err()
            .to_string()
            .contains("not of grid")
    );
}

#[test]
fn a_range_that_is_a_point_moves_nothing_and_a_real_one_does() {
    let mut s = Screen::new(&small(), &only(&["TICK_NS", "SWITCH_NS"])).unwrap();
    s.ranges[0].low = s.ranges[0].value;
    s.ranges[0].high = s.ranges[0].value;
    let sum = summarize(&s.run(Shard::ALL, 2).unwrap());
    for h in &sum.headlines {
        let tick = h
            .tornado
            .iter()
            .find(|b| b.assumption == "TICK_NS")
            .unwrap();
        assert_eq!(
            (tick.at_low, tick.at_high, tick.swing),
            (h.base, h.base, 0.0),
            "{}",
            h.key
        );
        assert!(h.band[0] <= h.base && h.base <= h.band[1]);
    }
    let moved = sum.headlines.iter().any(|h| {
        h.tornado
            .iter()
            .any(|b| b.assumption == "SWITCH_NS" && b.swing > 0.0)
    });
    assert!(moved, "SWITCH_NS over 500..3000 ns moves a headline");
    // the text lists what moves and counts what does not
    let text = to_text(&sum, 10);
    assert!(
        text.contains("SWITCH_NS") && text.contains("1 not at all"),
        "{text}"
    );
}

#[test]
fn unknown_names_and_scenario_overrides_are_refused() {
    let e = Screen::new(&small(), &only(&["NOPE"])).unwrap_err();
    assert_eq!(e.0[0].field, "assume");
    assert!(
        e.0[0]
            .message
            .starts_with("unknown assumption \"NOPE\": allowed TICK_NS"),
        "{e}"
    );
    let mut x = small();
    x.assume.insert("TICK_NS".into(), 2_000);
    let e = Screen::new(&x, &[]).unwrap_err();
    assert!(e.0[0].message.contains("leave --assume out"), "{e}");
}
