use super::*;

#[test]
fn link_round_trips() {
    let mut e = Experiment::default();
    e.machine.preset = "milan-2s".into();
    e.workload.name = "hackbench".into();
    e.workload.knobs.insert("groups".into(), 4.into());
    e.workload.knobs.insert("mode".into(), "thread".into());
    e.b = vec!["skip-not-due".into(), "skew-tick".into()];
    e.seconds = 0.25;
    e.seed = 7;
    let q = encode_link(&e);
    assert!(q.starts_with("v=1&machine=milan-2s"), "{q}");
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    assert_eq!(encode_link(&d), q);
}

#[test]
fn assumptions_ride_in_links_and_bad_ones_are_named() {
    let mut e = Experiment::default();
    e.assume.insert("TICK_NS".into(), 700);
    e.assume.insert("XFER_PCT".into(), 110);
    let q = encode_link(&e);
    assert!(
        q.ends_with("&assume.TICK_NS=700&assume.XFER_PCT=110"),
        "{q}"
    );
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    // without them: the same link and experiment as before
    let plain = encode_link(&Experiment::default());
    assert!(!plain.contains("assume"), "{plain}");
    assert_eq!(decode_link(&plain).0, Experiment::default());
    // not a number, an unknown name: field `assume`, the rest loads; out of range: validation
    let (d, errs) = decode_link("v=1&seed=5&assume.TICK_NS=fast&assume.NOPE=1&assume.SWITCH_NS=9");
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, vec!["assume", "assume"], "{errs:?}");
    assert!(
        errs[0]
            .message
            .starts_with("TICK_NS = \"fast\" is not a number: an integer in "),
        "{}",
        errs[0].message
    );
    assert!(
        errs[1]
            .message
            .starts_with("unknown assumption \"NOPE\": allowed TICK_NS"),
        "{}",
        errs[1].message
    );
    assert_eq!(d.seed, 5);
    assert_eq!(d.assume.len(), 1);
    let v = d.validate().unwrap_err();
    assert!(
        v.0.iter()
            .any(|x| x.field == "assume" && x.message.starts_with("SWITCH_NS = 9 is out of range")),
        "{v}"
    );
}

#[test]
fn bad_fields_are_reported_and_the_rest_loads() {
    let (e, errs) = decode_link(
        "v=1&machine=nope&workload=oltp&clients=64&seconds=-1&b=skip-not-due,bogus&zzz=1&seed=3",
    );
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, vec!["machine", "zzz", "b", "seconds"]);
    assert_eq!(e.machine.preset, "gnr-2s-snc3");
    assert_eq!(e.seed, 3);
    assert_eq!(e.knobs().get("clients").map(String::as_str), Some("64"));
    // the misspelled patch is kept, named with its side, and the experiment does not validate
    assert_eq!(e.b, vec!["skip-not-due".to_string(), "bogus".to_string()]);
    assert!(
        errs[2]
            .message
            .starts_with("unknown patch \"bogus\" in B: allowed "),
        "{}",
        errs[2].message
    );
    let v = e.validate().unwrap_err();
    assert!(v.0.iter().any(|x| x.field == "b"), "{v}");
}

#[test]
fn duplicate_keys_are_reported_with_their_values() {
    let (e, errs) = decode_link("v=1&seed=3&b=skip-not-due&seed=4&b=");
    let msgs: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    assert_eq!(
        msgs,
        vec![
            "seed: seed given 2 times (\"3\", \"4\"): the last is used",
            "b: b given 2 times (\"skip-not-due\", \"\"): the last is used",
        ]
    );
    assert_eq!((e.seed, e.b.len()), (4, 0));
}

/// A refused machine falls back to the preset's layout: every override it drops is named,
/// not only the ones the machine check blames.
#[test]
fn every_field_that_falls_back_is_named() {
    let (e, errs) =
        decode_link("v=1&machine=custom&sockets=8&cores_per_socket=2048&smt=off&seed=2");
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert!(fields.contains(&"sockets"), "{errs:?}");
    assert!(fields.contains(&"smt"), "{errs:?}");
    let sockets = errs.iter().find(|e| e.field == "sockets").unwrap();
    assert!(
        sockets
            .message
            .starts_with("8 not used: the machine it is part of was refused ("),
        "{}",
        sockets.message
    );
    assert_eq!(e.machine.overrides, LayoutOverrides::default());
    assert_eq!(e.seed, 2);
}

#[test]
fn a_story_key_is_checked_and_not_part_of_the_experiment() {
    let story = &stories()[0];
    let q = format!("{}&story={}", encode_link(&story.experiment), story.name);
    let (e, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(e, story.experiment);
    let (_, errs) = decode_link("v=1&story=nope");
    assert_eq!(errs[0].field, "story");
    assert!(
        errs[0]
            .message
            .starts_with("unknown story \"nope\": allowed sched-balance-running, "),
        "{}",
        errs[0].message
    );
}

#[test]
fn every_hz_value_round_trips_through_a_link() {
    for &hz in HZ_VALUES {
        let e = Experiment {
            hz,
            ..Default::default()
        };
        assert!(e.validate().is_ok(), "hz {hz}");
        let (d, errs) = decode_link(&encode_link(&e));
        assert!(errs.is_empty(), "{errs:?}");
        assert_eq!(d.hz, hz);
    }
    let (_, errs) = decode_link("hz=301");
    assert_eq!(
        errs[0].message,
        "\"301\" is not allowed: 100, 250, 300 or 1000"
    );
}

#[test]
fn repeats_and_warmup_round_trip_and_old_links_are_unchanged() {
    let old = encode_link(&Experiment::default());
    assert!(!old.contains("repeats") && !old.contains("warmup"), "{old}");
    let e = Experiment {
        repeats: 10,
        warmup: 0.25,
        ..Default::default()
    };
    let q = encode_link(&e);
    assert!(q.ends_with("&repeats=10&warmup=0.25"), "{q}");
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    let (d, errs) = decode_link("seconds=0.5&repeats=0&warmup=0.5");
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, vec!["repeats", "warmup"]);
    assert_eq!((d.repeats, d.warmup), (1, 0.0));
    assert!(errs[0].message.contains("1..=100"), "{}", errs[0].message);
    let bad = Experiment {
        repeats: 101,
        warmup: 2.0,
        ..Default::default()
    };
    let fields: Vec<String> = bad
        .validate()
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(fields, vec!["repeats", "warmup"]);
}

#[test]
fn percent_decoding_is_total() {
    for s in ["%", "%4", "%zz", "a%41b", "+", "%E2%82"] {
        let _ = pct_decode(s);
    }
    assert_eq!(pct_decode("a%41b+c"), "aAb c");
}

#[test]
fn smt_words_and_counts_decode_and_links_write_words() {
    for (raw, n) in [("on", 2), ("off", 1), ("2", 2), ("1", 1), ("Off", 1)] {
        let (e, errs) = decode_link(&format!("v=1&machine=custom&smt={raw}"));
        assert!(errs.is_empty(), "{raw}: {errs:?}");
        assert_eq!(e.machine.overrides.smt, Some(n), "{raw}");
    }
    let (e, _) = decode_link("v=1&machine=custom&smt=1");
    assert!(encode_link(&e).contains("&smt=off&"), "{}", encode_link(&e));
    let (e, errs) = decode_link("v=1&machine=custom&smt=9&sockets=x");
    let msgs: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect();
    assert_eq!(
        msgs,
        vec![
            "sockets: \"x\" is not a number: allowed 1..=32 (sockets (packages))",
            "smt: 9 is not allowed: off or on, or the count 1..=8"
        ]
    );
    assert_eq!(e.machine.overrides.smt, None);
    // JSON takes the same words
    let e: Experiment = serde_json::from_str(
        r#"{"machine":{"preset":"custom","smt":"off"},"workload":{"name":"oltp"}}"#,
    )
    .unwrap();
    assert_eq!(e.machine.overrides.smt, Some(1));
    assert!(e.validate().is_ok());
}

#[test]
fn cpu_map_is_an_appended_link_key_and_refuses_layout_overrides() {
    let old = encode_link(&Experiment::default());
    assert!(!old.contains("cpu_map"), "{old}");
    assert!(
        LAYOUT_KEYS
            .iter()
            .all(|k| MACHINE_KEYS.iter().any(|m| m.key == *k))
    );
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.cpu_map = Some("0,1_0,1_0x2_0x2_0x2_10".into());
    let q = encode_link(&e);
    assert!(
        q.contains("&machine=custom&cpu_map=0,1_0,1_0x2_0x2_0x2_10&hz="),
        "{q}"
    );
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    assert_eq!(d.machine_spec().unwrap().nr_cpus(), 2);
    // a layout key next to a map: reported, and the map and overrides fall back to the preset's
    let (d, errs) = decode_link(&format!("{q}&smt=off"));
    assert_eq!(errs[0].field, "smt");
    assert!(
        errs[0].message.contains("imported machine"),
        "{}",
        errs[0].message
    );
    assert_eq!(d.machine.cpu_map, None);
}

#[test]
fn cluster_size_round_trips_through_a_link() {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.smt = Some(1);
    e.machine.overrides.cores_per_cluster = Some(4);
    let q = encode_link(&e);
    assert!(q.contains("&smt=off&cores_per_cluster=4&"), "{q}");
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    let (_, errs) = decode_link("v=1&machine=custom&cores_per_cluster=17");
    assert_eq!(errs[0].field, "cores_per_cluster");
}

fn rtapp(file: &str) -> Experiment {
    let mut e = Experiment::default();
    e.workload.name = "rtapp".into();
    e.workload.knobs.insert("file".into(), file.into());
    e
}

#[test]
fn an_rtapp_file_round_trips_through_a_link_exactly() {
    // comments, layout and non-ASCII text are kept: the link is the same experiment
    let f = "{ /* 10% load, caf\u{e9} */\n  \"tasks\": { \"t\": { \"run\": 10000,\n \"timer\": { \"ref\": \"u\", \"period\": 100000 } } } }\n";
    let e = rtapp(f);
    let q = encode_link(&e);
    assert!(q.contains("&workload=rtapp&workload_file="), "{q}");
    assert!(!q.contains("&file="), "{q}");
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    assert!(d.validate().is_ok());
    assert_eq!(encode_link(&d), q);
    assert_eq!(link_note(&e), None);
}

#[test]
fn a_bad_or_misplaced_workload_file_is_named() {
    let (_, errs) = decode_link("v=1&workload=rtapp&workload_file=Zm9v!");
    assert_eq!(errs[0].field, "workload_file");
    assert!(errs[0].message.contains("base64url"), "{}", errs[0].message);
    let (_, errs) = decode_link("v=1&workload=hackbench&workload_file=Zm9v");
    assert_eq!(errs[0].field, "workload_file");
    assert!(
        errs[0].message.contains("workload=rtapp"),
        "{}",
        errs[0].message
    );
    // without its file the link loads, and the experiment says what is missing
    let (e, errs) = decode_link("v=1&workload=rtapp");
    assert!(errs.is_empty(), "{errs:?}");
    let v = e.validate().unwrap_err();
    assert!(v.0.iter().any(|x| x.field == "workload_file"), "{v}");
}

#[test]
fn a_link_too_long_to_pass_everywhere_says_so() {
    let task = |i: usize| format!("\"t{i}\": {{ \"run\": 1000, \"sleep\": 1000 }}");
    let small = format!("{{ \"tasks\": {{ {} }} }}", task(0));
    assert_eq!(link_note(&rtapp(&small)), None);
    let big: Vec<String> = (0..200).map(task).collect();
    let big = format!("{{ \"tasks\": {{ {} }} }}", big.join(", "));
    let e = rtapp(&big);
    let q = encode_link(&e);
    assert!(q.len() > SANE_LINK_CHARS);
    let note = link_note(&e).unwrap();
    assert!(
        note.contains(&format!("{} bytes", grouped(big.len()))),
        "{note}"
    );
    assert!(note.contains("than 8,000 characters"), "{note}");
    assert_eq!(
        (grouped(0), grouped(999), grouped(1000), grouped(1234567)),
        ("0".into(), "999".into(), "1,000".into(), "1,234,567".into())
    );
    // it still carries the whole file
    assert_eq!(decode_link(&q).0, e);
    assert_eq!(link_note(&Experiment::default()), None);
}

/// A link from before `kernel` existed decodes to 6.18 and re-encodes to the same link; a
/// release round-trips; an unknown one is refused by name and 6.18 applies.
#[test]
fn links_without_kernel_are_6_18_forever() {
    let old =
        "v=1&machine=gnr-2s-96c-snc3&hz=1000&workload=oltp&a=&b=skip-not-due&seconds=0.3&seed=1";
    let (e, errs) = decode_link(old);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(e.kernel, "6.18");
    assert_eq!(encode_link(&e), old);
    let mut e619 = e.clone();
    e619.kernel = "6.19".into();
    let q = encode_link(&e619);
    assert!(q.starts_with("v=1&kernel=6.19&machine="), "{q}");
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e619);
    let (d, errs) = decode_link("v=1&kernel=5.4&seed=2");
    assert_eq!((d.kernel.as_str(), d.seed), ("6.18", 2));
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "kernel");
    assert!(
        errs[0].message.contains("6.18, 6.19, 7.0 or 7.2"),
        "{}",
        errs[0].message
    );
}

/// B's own release round-trips in a link, B's toggles are checked against it (not A's), and an
/// unknown one is named as `kernel_b` and kept, so the A/B does not run B on A's release.
#[test]
fn kernel_b_round_trips_and_b_is_checked_against_it() {
    let q =
        "v=1&kernel_b=6.19&machine=gnr-2s-96c-snc3&hz=1000&workload=oltp&a=&b=&seconds=0.3&seed=1";
    let (e, errs) = decode_link(q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        (e.kernel.as_str(), e.kernel_b.as_deref()),
        ("6.18", Some("6.19"))
    );
    assert_eq!(encode_link(&e), q);
    // asking 6.19's merged fix off is B's error, and fine on A's 6.18 (it was never merged there)
    let (_, errs) = decode_link("v=1&kernel_b=6.19&b=-serialize-after-swb");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "b");
    let (e, errs) = decode_link("v=1&kernel_b=5.4");
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "kernel_b");
    assert!(e.validate().is_err(), "a refused release must not run");
}

/// A toggle the release merged cannot be asked off: the error names the side, the patch and
/// the release, the name is kept and the experiment does not validate.
#[test]
fn a_merged_toggle_asked_off_is_refused_by_name() {
    let (e, errs) = decode_link("v=1&kernel=6.19&b=-serialize-after-swb");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "b");
    for want in ["serialize-after-swb", "6.19", "merged"] {
        assert!(errs[0].message.contains(want), "{}", errs[0].message);
    }
    assert_eq!(e.b, vec!["-serialize-after-swb".to_string()]);
    assert!(e.validate().is_err());
    // asked on, a merged toggle is accepted (it is included either way)
    let (e, errs) = decode_link("v=1&kernel=6.19&b=serialize-after-swb,skip-not-due");
    assert!(errs.is_empty(), "{errs:?}");
    assert!(e.validate().is_ok());
}

/// `warmup=auto` is the steady state's warm-up (`steady::auto_warmup`, what `validate` uses),
/// resolved for the link's machine and seconds.
#[test]
fn warmup_auto_is_the_steady_states() {
    let (e, errs) = decode_link("v=1&machine=milan-2s&seconds=1&warmup=auto");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(
        e.warmup,
        crate::experiment::steady::auto_warmup(&e).unwrap()
    );
    assert_eq!(e.warmup, 0.256);
    // a bad value elsewhere is named; auto is resolved on what the link then runs
    let (e, errs) = decode_link("v=1&machine=milan-2s&seconds=-1&warmup=auto");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].field, "seconds");
    assert!(e.warmup > 0.0 && e.warmup <= e.seconds / 2.0);
}

const FIFO: &[u8] = include_bytes!("../../../tests/bpf/fifo.bpf.o");

/// A small hackbench run whose side B runs `bytes` (a sched_ext object) with an option.
fn scx_experiment(file: &str, bytes: &[u8]) -> Experiment {
    let mut e = Experiment::default();
    e.machine.preset = "custom".into();
    e.machine.overrides.sockets = Some(1);
    e.machine.overrides.cores_per_socket = Some(4);
    e.workload.name = "hackbench".into();
    e.seconds = 0.01;
    let mut c = crate::experiment::scenario::scx::ScxChoice::from_bytes(file, bytes);
    c.options.insert("slice_ns".into(), 3_000_000);
    e.scx_b = Some(c);
    e
}

fn report_hash(e: &Experiment, side: Side) -> String {
    let mut run = crate::Run::new(e, side).unwrap();
    while !run.step(50_000) {}
    run.report().report_hash.clone()
}

#[test]
fn a_small_object_rides_in_the_link_and_runs_bit_identically() {
    let e = scx_experiment("fifo.bpf.o", FIFO);
    let q = encode_link(&e);
    let digest = crate::experiment::sha256::hex(FIFO);
    assert!(
        q.ends_with(&format!(
            "&scx_b=fifo.bpf.o&scx_b.slice_ns=3000000&scx_b_sha256={digest}&scx_b_object={}",
            b64url::encode(FIFO)
        )),
        "{}",
        &q[..300]
    );
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(d, e);
    assert_eq!(encode_link(&d), q);
    assert_eq!(report_hash(&d, Side::B), report_hash(&e, Side::B));
    // and a link without a side stays the link it was
    assert!(!encode_link(&Experiment::default()).contains("scx"));
}

#[test]
fn objects_beyond_the_links_budget_are_named_and_asked_for_again() {
    // an object as large as the budget is carried; one byte more is named only
    let big = {
        let mut b = FIFO.to_vec();
        b.resize(LINK_OBJECT_BYTES + 1, 0);
        b
    };
    let e = scx_experiment("big.bpf.o", &big);
    let q = encode_link(&e);
    let digest = crate::experiment::sha256::hex(&big);
    assert!(
        q.ends_with(&format!(
            "&scx_b=big.bpf.o&scx_b.slice_ns=3000000&scx_b_sha256={digest}"
        )),
        "{q}"
    );
    let (d, errs) = decode_link(&q);
    assert!(errs.is_empty(), "the link is whole: {errs:?}");
    let c = d.scx_b.clone().unwrap();
    assert_eq!(
        (c.file.as_str(), c.object.as_str(), c.sha256.as_deref()),
        ("big.bpf.o", "", Some(digest.as_str()))
    );
    assert_eq!(c.options.get("slice_ns"), Some(&3_000_000));
    // the asked-again side re-encodes to the same link, says so, and does not validate
    assert_eq!(encode_link(&d), q);
    assert!(
        link_note(&d)
            .unwrap()
            .contains("names big.bpf.o without carrying it")
    );
    let v = d.validate().unwrap_err();
    let m =
        v.0.iter()
            .find(|x| x.field == "scx_b")
            .expect("scx_b refused");
    assert_eq!(
        m.message,
        format!(
            "needs big.bpf.o (SHA-256 {digest}): the link names this scheduler but does not carry it; pick the file again"
        )
    );
    // a different file picked for it is refused, naming what was expected; the same one is taken
    let mut other = d.clone();
    other.scx_b.as_mut().unwrap().object = b64url::encode(FIFO);
    let v = other.validate().unwrap_err();
    let m =
        v.0.iter()
            .find(|x| x.field == "scx_b")
            .expect("scx_b refused");
    assert!(
        m.message
            .contains(&format!("not the {digest} the link asked for")),
        "{}",
        m.message
    );
    let mut same = d.clone();
    same.scx_b.as_mut().unwrap().object = b64url::encode(&big);
    // (the padded fixture: whatever the loader says of it, the digest is not what it refuses)
    if let Err(v) = same.validate() {
        assert!(!v.0.iter().any(|x| x.message.contains("SHA-256")), "{v:?}");
    }
    // the budget is for both sides together: A's fixture fits, B's then does not
    let mut two = scx_experiment("fifo.bpf.o", FIFO);
    two.scx_a = Some(crate::experiment::scenario::scx::ScxChoice::from_bytes(
        "a.bpf.o",
        &big[..LINK_OBJECT_BYTES - FIFO.len() + 1],
    ));
    let q = encode_link(&two);
    assert!(
        q.contains("&scx_a_object=") && !q.contains("&scx_b_object="),
        "B is named only"
    );
}

#[test]
fn a_broken_or_tampered_object_in_a_link_is_refused_naming_its_side() {
    let q = encode_link(&scx_experiment("fifo.bpf.o", FIFO));
    let digest = crate::experiment::sha256::hex(FIFO);
    let refused = |q: &str, want: &str| {
        let (d, errs) = decode_link(q);
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].field, "scx_b");
        assert!(errs[0].message.contains(want), "{}", errs[0].message);
        // the side stays, asking for the file: nothing runs on the link's broken object
        let c = d.scx_b.clone().expect("the side is kept");
        assert_eq!((c.file.as_str(), c.object.as_str()), ("fifo.bpf.o", ""));
        assert!(
            d.validate()
                .unwrap_err()
                .0
                .iter()
                .any(|x| x.field == "scx_b" && x.message.starts_with("needs fifo.bpf.o"))
        );
    };
    // a cut link: the object is short of its digest
    refused(&q[..q.len() - 40], "has SHA-256");
    // another digest (one digit changed)
    let flip = if digest.starts_with('0') { "1" } else { "0" };
    let tampered = q.replace(
        &format!("scx_b_sha256={digest}"),
        &format!("scx_b_sha256={flip}{}", &digest[1..]),
    );
    refused(&tampered, "was the link cut or edited?");
    // garbage: not base64url
    let garbage = format!(
        "{}&scx_b_object=<script>",
        q.split("&scx_b_object=").next().unwrap()
    );
    refused(&garbage, "is not base64url");
    // not a digest
    let (_, errs) = decode_link(&q.replace(&format!("scx_b_sha256={digest}"), "scx_b_sha256=abc"));
    assert!(
        errs.iter()
            .any(|e| e.field == "scx_b" && e.message.contains("is not a SHA-256")),
        "{errs:?}"
    );
    // an option that is not a number, a side's keys without its file name
    let (_, errs) = decode_link("v=1&scx_b=x.bpf.o&scx_b.slice_ns=fast&scx_a_object=AAAA");
    let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, vec!["scx_a", "scx_b"], "{errs:?}");
    // well-formed, but not an object the loader takes: the loader's error under the field
    let junk = scx_experiment("junk.bpf.o", b"not an object");
    let (d, errs) = decode_link(&encode_link(&junk));
    assert!(errs.is_empty(), "{errs:?}");
    let v = d.validate().unwrap_err();
    assert!(
        v.0.iter()
            .any(|x| x.field == "scx_b"
                && x.message.starts_with("junk.bpf.o: refused by the loader")),
        "{v:?}"
    );
}
