//! The share-link codec: an `Experiment` as a query string (versioned, readable keys,
//! append-only) and back; decoding reports every bad or unknown key and still loads the rest.

use crate::error::{FieldError, range_or_nan};
use crate::experiment::b64url;
use crate::experiment::scenario::*;
use crate::experiment::stories::stories;
use crate::kernels::{self, DEFAULT_KERNEL};
use crate::llc_balancing;
use crate::machine::presets;
use crate::machine::spec::LayoutOverrides;
use crate::workload::{self, Knobs};
use std::collections::BTreeMap;

fn pct_encode(s: &str) -> String {
    let mut o = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,".contains(&b) {
            o.push(b as char);
        } else {
            o.push_str(&format!("%{b:02X}"));
        }
    }
    o
}

fn pct_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => {
                let hex = std::str::from_utf8(&b[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(v) => {
                        out.push(v);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The link key of an rt-app workload's file (`workload=rtapp`): its exact text (comments and
/// layout kept, so the link gives the same experiment) as unpadded base64url (RFC 4648 §5), 4
/// characters per 3 bytes; percent-encoding JSON's `{}":[]` would take 3 per byte.
pub const WORKLOAD_FILE_KEY: &str = "workload_file";

/// The prefix of a link key that overrides a screened assumption: `assume.TICK_NS=700`, as the
/// CLI's `--assume TICK_NS=700` (`assumptions::parse_one`; the range is validation's). Written only
/// when set, so a link without it decodes as before.
pub const ASSUME_PREFIX: &str = "assume.";

/// Links up to this many characters pass through chat tools, mail clients and web servers
/// (Apache's default request line limit is 8,190 bytes, nginx's default header buffer 8 KiB);
/// browsers open far longer ones (Chromium: 2 MiB). A longer link still carries everything, and
/// `link_note` says so.
pub const SANE_LINK_CHARS: usize = 8000;

/// `12345` as `12,345` (the page's number format).
fn grouped(n: usize) -> String {
    let d = n.to_string();
    let mut o = String::new();
    for (i, c) in d.chars().enumerate() {
        if i > 0 && (d.len() - i).is_multiple_of(3) {
            o.push(',');
        }
        o.push(c);
    }
    o
}

/// What the experiment's link cannot promise, or None: a link carrying an rt-app file that is
/// longer than `SANE_LINK_CHARS` (the page shows it beside the link; docs/SCHEMA.md).
pub fn link_note(e: &Experiment) -> Option<String> {
    let file = e.workload.knobs.get(workload::rtapp::FILE_KNOB)?;
    if e.workload.name != workload::rtapp::NAME {
        return None;
    }
    let n = encode_link(e).len() + 1;
    (n > SANE_LINK_CHARS).then(|| {
        format!(
            "this link is {} characters long: it carries the whole rt-app file ({} bytes, as base64url), \
             and some chat tools, mail clients and web servers cut links longer than {} characters \
             (browsers open them): send the rt-app file along with it",
            grouped(n),
            grouped(knob_string(file).len()),
            grouped(SANE_LINK_CHARS)
        )
    })
}

/// The canonical query string (without `?`) of an experiment.
pub fn encode_link(e: &Experiment) -> String {
    let mut kv: Vec<(String, String)> = vec![("v".into(), e.v.to_string())];
    // Added after v1 shipped: only when not 6.18, so every older link stays the same link.
    if e.kernel != DEFAULT_KERNEL {
        kv.push(("kernel".into(), e.kernel.clone()));
    }
    kv.push(("machine".into(), e.machine.preset.clone()));
    let o = &e.machine.overrides;
    // Every override that is set, even one equal to the preset: the link must decode to the same
    // experiment (and an override can change derived values, e.g. the Intel LLC split).
    for k in MACHINE_KEYS {
        if let Some(v) = (k.get)(o) {
            kv.push((k.link.to_string(), k.format(v)));
        }
    }
    // Added under v1: only when set.
    if let Some(m) = &e.machine.cpu_map {
        kv.push(("cpu_map".into(), m.clone()));
    }
    kv.push(("hz".into(), e.hz.to_string()));
    kv.push(("workload".into(), e.workload.name.clone()));
    let rtapp = e.workload.name == workload::rtapp::NAME;
    for (k, v) in e.knobs() {
        if rtapp && k == workload::rtapp::FILE_KNOB {
            kv.push((WORKLOAD_FILE_KEY.into(), b64url::encode(v.as_bytes())));
        } else {
            kv.push((k, v));
        }
    }
    kv.push(("a".into(), e.a.join(",")));
    kv.push(("b".into(), e.b.join(",")));
    kv.push(("seconds".into(), e.seconds.to_string()));
    kv.push(("seed".into(), e.seed.to_string()));
    // Keys added after v1 shipped: only when set, so a link without them stays the same link.
    if e.repeats != 1 {
        kv.push(("repeats".into(), e.repeats.to_string()));
    }
    if e.warmup != 0.0 {
        kv.push(("warmup".into(), e.warmup.to_string()));
    }
    for (k, v) in &e.sched {
        kv.push((k.clone(), knob_string(v)));
    }
    for (k, v) in &e.assume {
        kv.push((format!("{ASSUME_PREFIX}{k}"), v.to_string()));
    }
    kv.iter()
        .map(|(k, v)| format!("{}={}", pct_encode(k), pct_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// At most 40 characters of a value from a link, for a message.
fn clip(v: &str) -> String {
    v.chars().take(40).collect()
}

/// Every key given more than once: reported with its values (the last one is used).
fn duplicate_keys(pairs: &[(String, String)]) -> Vec<FieldError> {
    let mut seen: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for (k, v) in pairs {
        let e = seen.entry(k.as_str()).or_default();
        if e.is_empty() {
            order.push(k.as_str());
        }
        e.push(v.as_str());
    }
    order
        .into_iter()
        .filter(|k| seen[k].len() > 1)
        .map(|k| {
            let vals: Vec<String> = seen[k].iter().map(|v| format!("{:?}", clip(v))).collect();
            FieldError::new(
                k,
                format!(
                    "{} given {} times ({}): the last is used",
                    clip(k),
                    vals.len(),
                    vals.join(", ")
                ),
            )
        })
        .collect()
}

/// Decodes a link; every bad or unknown key is reported and the rest still loads (bad values keep
/// the default).
pub fn decode_link(query: &str) -> (Experiment, Vec<FieldError>) {
    let mut e = Experiment::default();
    let mut errs = Vec::new();
    let q = query.trim_start_matches('?');
    let mut pairs: Vec<(String, String)> = Vec::new();
    for part in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = part.split_once('=').unwrap_or((part, ""));
        pairs.push((pct_decode(k), pct_decode(v)));
    }
    let get = |k: &str| {
        pairs
            .iter()
            .rev()
            .find(|(x, _)| x == k)
            .map(|(_, v)| v.clone())
    };
    errs.extend(duplicate_keys(&pairs));
    if let Some(v) = get("v") {
        match v.parse::<u32>() {
            Ok(LINK_VERSION) => {}
            _ => errs.push(FieldError::new(
                "v",
                format!("link version {v:?} is not supported: allowed {LINK_VERSION}"),
            )),
        }
    }
    if let Some(k) = get("kernel") {
        match kernels::info(k.trim()) {
            Some(info) => e.kernel = info.name.into(),
            None => errs.push(kernels::kernel_error(&k)),
        }
    }
    if let Some(m) = get("machine") {
        if presets::preset(&m).is_some() {
            e.machine.preset = m;
        } else {
            errs.push(FieldError::new(
                "machine",
                format!(
                    "unknown machine {m:?}: allowed {}",
                    presets::PRESETS.join(", ")
                ),
            ));
        }
    }
    for k in MACHINE_KEYS {
        let v = get(k.link).and_then(|raw| {
            k.parse(&raw)
                .map_err(|mut err| {
                    err.field = k.link.to_string();
                    errs.push(err)
                })
                .ok()
        });
        (k.set)(&mut e.machine.overrides, v);
    }
    e.machine.cpu_map = get("cpu_map");
    if let Err(inv) = e.machine_spec() {
        // An impossible layout or a bad map: report it and fall back to the preset's own layout.
        // Every field that falls back is named, not only the ones the machine check blamed.
        let why = inv
            .0
            .iter()
            .map(|x| x.message.as_str())
            .collect::<Vec<_>>()
            .join("; ");
        let blamed: Vec<String> = inv.0.iter().map(|x| x.field.clone()).collect();
        errs.extend(inv.0);
        for k in MACHINE_KEYS {
            if let Some(v) = (k.get)(&e.machine.overrides)
                && !blamed.iter().any(|f| f == k.key || f == k.link)
            {
                errs.push(FieldError::new(
                    k.link,
                    format!("{} not used: the machine it is part of was refused ({why}); the preset's value applies", k.format(v)),
                ));
            }
        }
        if e.machine.cpu_map.is_some() && !blamed.iter().any(|f| f == "cpu_map") {
            errs.push(FieldError::new(
                "cpu_map",
                format!("not used: the machine it is part of was refused ({why}); the preset's layout applies"),
            ));
        }
        e.machine.overrides = LayoutOverrides::default();
        e.machine.cpu_map = None;
    }
    if let Some(h) = get("hz") {
        match h.parse::<u32>() {
            Ok(x) if HZ_VALUES.contains(&x) => e.hz = x,
            _ => errs.push(hz_error(&format!("{h:?}"))),
        }
    }
    if let Some(w) = get("workload") {
        if workload::info(&w).is_some() || w == workload::rtapp::NAME {
            e.workload.name = w;
        } else {
            errs.extend(workload::validate_knobs(&w, &Knobs::new()));
        }
    }
    let winfo = workload::info(&e.workload.name);
    let knob_names: Vec<&str> = workload::WORKLOADS
        .iter()
        .flat_map(|w| w.knobs.iter().map(|k| k.name))
        .collect();
    for (k, v) in &pairs {
        if knob_names.contains(&k.as_str()) {
            if winfo.is_some_and(|w| w.knobs.iter().any(|x| x.name == k)) {
                let mut one = Knobs::new();
                one.insert(k.clone(), v.clone());
                let bad = workload::validate_knobs(&e.workload.name, &one);
                if bad.is_empty() {
                    let val = v
                        .parse::<u64>()
                        .map(serde_json::Value::from)
                        .unwrap_or_else(|_| serde_json::Value::from(v.clone()));
                    e.workload.knobs.insert(k.clone(), val);
                } else {
                    errs.extend(bad);
                }
            } else {
                errs.push(FieldError::new(
                    k,
                    format!("{k} is not a knob of {}", e.workload.name),
                ));
            }
        } else if k == WORKLOAD_FILE_KEY {
            if e.workload.name != workload::rtapp::NAME {
                errs.push(FieldError::new(
                    k,
                    format!(
                        "an rt-app file is the workload only with workload=rtapp, not {}",
                        clip(&e.workload.name)
                    ),
                ));
            } else if let Some(text) = b64url::decode(v).and_then(|b| String::from_utf8(b).ok()) {
                e.workload
                    .knobs
                    .insert(workload::rtapp::FILE_KNOB.into(), text.into());
            } else {
                errs.push(FieldError::new(
                    k,
                    "not an rt-app file: the link's file is not base64url-encoded UTF-8 text (was the link cut?)",
                ));
            }
        } else if let Some(knob) = llc_balancing::knob(k) {
            // a kernel knob; whether the release takes it is validation's
            match knob.parse(v) {
                Ok(x) => {
                    e.sched.insert(k.clone(), x.into());
                }
                Err(err) => errs.push(err),
            }
        } else if let Some(name) = k.strip_prefix(ASSUME_PREFIX) {
            // a bad value keeps the table's (it is not set), named by `assume`
            match crate::assumptions::parse_one(&format!("{name}={v}")) {
                Ok((n, x)) => {
                    e.assume.insert(n, x);
                }
                Err(err) => errs.push(err),
            }
        } else if k == "story" {
            // the page's story links (`&story=NAME`): not part of the experiment
            if !stories().iter().any(|s| s.name == v) {
                let names: Vec<&str> = stories().iter().map(|s| s.name).collect();
                errs.push(FieldError::new(
                    "story",
                    format!("unknown story {:?}: allowed {}", clip(v), names.join(", ")),
                ));
            }
        } else if ![
            "v",
            "machine",
            "hz",
            "workload",
            "a",
            "b",
            "seconds",
            "seed",
            "repeats",
            "warmup",
            "cpu_map",
            "kernel",
            WORKLOAD_FILE_KEY,
        ]
        .contains(&k.as_str())
            && !MACHINE_KEYS.iter().any(|m| m.link == k)
        {
            errs.push(FieldError::new(k, format!("unknown key {k:?}")));
        }
    }
    for (field, dst) in [("a", &mut e.a), ("b", &mut e.b)] {
        if let Some(list) = get(field) {
            let names: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            // An unknown name (or a toggle asked off) is reported and kept (never dropped): the
            // experiment then does not validate, so a misspelled patch cannot run as if it had not
            // been asked for.
            let kernel = kernels::info(&e.kernel).unwrap_or(&kernels::KERNELS[0]);
            if let Err(err) = kernels::resolve(kernel, field, &names) {
                errs.push(err);
            }
            *dst = names;
        }
    }
    if let Some(s) = get("seconds") {
        match s.parse::<f64>() {
            Ok(x) if x.is_finite() && (MIN_SECONDS..=MAX_SECONDS).contains(&x) => e.seconds = x,
            _ => errs.push(FieldError::new(
                "seconds",
                range_or_nan(
                    &s,
                    format!(
                        "{s:?} is out of range: {MIN_SECONDS}..={MAX_SECONDS} simulated seconds"
                    ),
                ),
            )),
        }
    }
    if let Some(s) = get("seed") {
        match s.parse::<u64>() {
            Ok(x) => e.seed = x,
            _ => errs.push(FieldError::new(
                "seed",
                if s.trim().parse::<f64>().is_ok_and(f64::is_finite) {
                    format!("{s:?} is not an integer in 0..={}", u64::MAX)
                } else {
                    format!("{s:?} is not a number: an integer in 0..={}", u64::MAX)
                },
            )),
        }
    }
    if let Some(s) = get("repeats") {
        match s.parse::<u32>() {
            Ok(x) if (MIN_REPEATS..=MAX_REPEATS).contains(&x) => e.repeats = x,
            _ => errs.push(FieldError {
                message: range_or_nan(&s, repeats_error(&format!("{s:?}")).message),
                ..repeats_error("")
            }),
        }
    }
    if let Some(s) = get("warmup") {
        match s.parse::<f64>() {
            Ok(x) if warmup_ok(x, e.seconds) => e.warmup = x,
            _ => errs.push(FieldError {
                message: range_or_nan(&s, warmup_error(&format!("{s:?}"), e.seconds).message),
                ..warmup_error("", e.seconds)
            }),
        }
    }
    (e, errs)
}

#[cfg(test)]
mod tests {
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
        let (d, errs) =
            decode_link("v=1&seed=5&assume.TICK_NS=fast&assume.NOPE=1&assume.SWITCH_NS=9");
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
                .any(|x| x.field == "assume"
                    && x.message.starts_with("SWITCH_NS = 9 is out of range")),
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
        let old = "v=1&machine=gnr-2s-96c-snc3&hz=1000&workload=oltp&a=&b=skip-not-due&seconds=0.3&seed=1";
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
}
