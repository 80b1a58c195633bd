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

/// What the experiment's link cannot promise, or None: a link carrying an rt-app file or a
/// sched_ext object that is longer than `SANE_LINK_CHARS`, or naming an object it does not carry
/// (the page shows it beside the link; docs/SCHEMA.md).
pub fn link_note(e: &Experiment) -> Option<String> {
    let kv = scx::encode([e.scx_a.as_ref(), e.scx_b.as_ref()]);
    let named: Vec<&str> = scx::FIELDS
        .iter()
        .zip([&e.scx_a, &e.scx_b])
        .filter(|(f, c)| c.is_some() && !kv.iter().any(|(k, _)| *k == format!("{f}_object")))
        .map(|(_, c)| c.as_ref().map_or("", |c| c.file.as_str()))
        .collect();
    if !named.is_empty() {
        return Some(format!(
            "this link names {} without carrying {} (the link carries at most {} bytes of objects): whoever opens it picks the same file again (its SHA-256 is checked); send the file along with it",
            named.join(" and "),
            if named.len() == 1 { "it" } else { "them" },
            grouped(LINK_OBJECT_BYTES)
        ));
    }
    let n = encode_link(e).len() + 1;
    if scx::carries_object(&kv) && n > SANE_LINK_CHARS {
        return Some(format!(
            "this link is {} characters long: it carries the BPF scheduler's object (as base64url), \
             and some chat tools and mail clients cut links longer than {} characters (browsers open them): \
             send the .bpf.o file along with it",
            grouped(n),
            grouped(SANE_LINK_CHARS)
        ));
    }
    let file = e.workload.knobs.get(workload::rtapp::FILE_KNOB)?;
    if e.workload.name != workload::rtapp::NAME {
        return None;
    }
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
    // Added under v1: only when B runs another release.
    if let Some(k) = &e.kernel_b {
        kv.push(("kernel_b".into(), k.clone()));
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
    // Added under v1: only when set.
    for (k, list) in [("features_a", &e.features_a), ("features_b", &e.features_b)] {
        if !list.is_empty() {
            kv.push((k.into(), list.join(",")));
        }
    }
    // Added under v1: only when set; last, objects at the very end (the page's fragment).
    kv.extend(scx::encode([e.scx_a.as_ref(), e.scx_b.as_ref()]));
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
    if let Some(k) = get("kernel_b") {
        match kernels::info(k.trim()) {
            Some(info) => e.kernel_b = Some(info.name.into()),
            // kept, as a bad patch name is: the experiment does not validate, so B cannot run
            // A's release in its place
            None => {
                let mut err = kernels::kernel_error(&k);
                err.field = "kernel_b".into();
                errs.push(err);
                e.kernel_b = Some(clip(&k));
            }
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
        } else if scx::is_key(k) {
            // read below, side by side
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
            "kernel_b",
            "features_a",
            "features_b",
            WORKLOAD_FILE_KEY,
        ]
        .contains(&k.as_str())
            && !MACHINE_KEYS.iter().any(|m| m.link == k)
        {
            errs.push(FieldError::new(k, format!("unknown key {k:?}")));
        }
    }
    // each side's toggles are relative to the release that side runs
    let (ka, kb) = (
        e.kernel.clone(),
        e.kernel_b.clone().unwrap_or_else(|| e.kernel.clone()),
    );
    for (field, dst, kname) in [("a", &mut e.a, &ka), ("b", &mut e.b, &kb)] {
        if let Some(list) = get(field) {
            let names: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            // An unknown name (or a toggle asked off) is reported and kept (never dropped): the
            // experiment then does not validate, so a misspelled patch cannot run as if it had not
            // been asked for.
            let kernel = kernels::info(kname).unwrap_or(&kernels::KERNELS[0]);
            if let Err(err) = kernels::resolve(kernel, field, &names) {
                errs.push(err);
            }
            *dst = names;
        }
    }
    let release = |side| kernels::info(e.kernel_field(side).1).map_or(DEFAULT_KERNEL, |k| k.name);
    let (kernel_a, kernel_b) = (release(Side::A), release(Side::B));
    for (field, dst, kernel) in [
        ("features_a", &mut e.features_a, kernel_a),
        ("features_b", &mut e.features_b, kernel_b),
    ] {
        if let Some(list) = get(field) {
            let names: Vec<String> = list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            // kept even when refused, as a patch name is: the experiment then does not validate
            let mut f = crate::sched_features::defaults(kernel);
            if let Err(err) = crate::sched_features::apply(kernel, field, &names, &mut f) {
                errs.push(err);
            }
            *dst = names;
        }
    }
    // Before NEXT_BUDDY was a feature it was the `next-buddy` toggle: an old link's side list
    // naming it asks for the feature on that side (the same run; written back as the feature). On
    // a release that refuses it, it stays where it was, with its error under `a` / `b`.
    for (patches, features, kernel) in [
        (&mut e.a, &mut e.features_a, kernel_a),
        (&mut e.b, &mut e.features_b, kernel_b),
    ] {
        let switchable = crate::sched_features::modelled_on(kernel, "NEXT_BUDDY").is_some();
        if switchable
            && patches
                .iter()
                .any(|p| p == crate::patches::NEXT_BUDDY_ALIAS)
        {
            patches.retain(|p| p != crate::patches::NEXT_BUDDY_ALIAS);
            if !features.iter().any(|f| f == "NEXT_BUDDY") {
                features.push("NEXT_BUDDY".into());
            }
        }
    }
    let ([scx_a, scx_b], scx_errs) = scx::decode(&pairs, get);
    (e.scx_a, e.scx_b) = (scx_a, scx_b);
    errs.extend(scx_errs);
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
        match s.trim().parse::<f64>() {
            // the steady state's warm-up (`validate`'s default), resolved for this machine and run
            Err(_) if s.trim() == "auto" => match crate::experiment::steady::auto_warmup(&e) {
                Ok(w) => e.warmup = w,
                Err(_) => errs.push(FieldError::new(
                    "warmup",
                    "auto (the steady state: the widest domain's first balance, at most half the run) needs a valid machine, workload and seconds: fix those first",
                )),
            },
            Ok(x) if warmup_ok(x, e.seconds) => e.warmup = x,
            _ => errs.push(FieldError {
                message: range_or_nan(&s, warmup_error(&format!("{s:?}"), e.seconds).message),
                ..warmup_error("", e.seconds)
            }),
        }
    }
    (e, errs)
}

mod scx;
pub use scx::LINK_OBJECT_BYTES;

#[cfg(test)]
mod tests;
