//! A side's sched_ext scheduler in a share link (`scx_a` / `scx_b`, scenario/scx.rs): its file
//! name, its options as `scx_a.NAME=VALUE`, the object's SHA-256, and the object itself as
//! base64url while the link's objects stay within `LINK_OBJECT_BYTES`. A larger object is named
//! (file and digest) and asked for again: the link decodes to a side that validation refuses with
//! "needs FILE (SHA-256 …); pick the file again" until the same file is picked.

use crate::error::FieldError;
use crate::experiment::scenario::scx::{MAX_OBJECT_BYTES, ScxChoice, parse_option};
use crate::experiment::{b64url, sha256};

/// The sides' fields, in the order their objects take the link's budget.
pub const FIELDS: [&str; 2] = ["scx_a", "scx_b"];

/// The objects a link carries, in bytes, both sides together (A first): 48,000 bytes are 64,000
/// base64url characters, so the whole link stays under 65,536 characters, the longest URL
/// Firefox's address bar shows (Chromium opens 2 MiB). The page puts the objects in the link's
/// fragment (`#scx_a_object=…`), which browsers do not send, so web servers' request-line limits
/// (Apache 8,190 bytes, nginx 8 KiB) do not apply; chat tools' still do (`link_note` says so).
/// The committed fixtures (7–32 KB) fit one at a time.
pub const LINK_OBJECT_BYTES: usize = 48_000;

/// The keys of a side: the file name, its digest and object, and the prefix of its options.
fn keys(field: &str) -> (String, String, String) {
    (
        format!("{field}_sha256"),
        format!("{field}_object"),
        format!("{field}."),
    )
}

/// Whether `k` is a key this module reads.
pub fn is_key(k: &str) -> bool {
    FIELDS.iter().any(|f| {
        let (sha, obj, opt) = keys(f);
        k == *f || k == sha || k == obj || k.starts_with(&opt)
    })
}

/// The key-value pairs of both sides (objects while they fit the link's budget, A first).
pub fn encode(sides: [Option<&ScxChoice>; 2]) -> Vec<(String, String)> {
    let mut kv = Vec::new();
    let mut budget = LINK_OBJECT_BYTES;
    for (field, c) in FIELDS.iter().zip(sides) {
        let Some(c) = c else { continue };
        let (sha, obj, opt) = keys(field);
        kv.push((field.to_string(), c.file.clone()));
        for (k, v) in &c.options {
            kv.push((format!("{opt}{k}"), v.to_string()));
        }
        let bytes = (!c.object.is_empty())
            .then(|| b64url::decode(&c.object))
            .flatten();
        match bytes {
            Some(b) => {
                kv.push((sha, sha256::hex(&b)));
                if b.len() <= budget {
                    budget -= b.len();
                    kv.push((obj, c.object.clone()));
                }
            }
            // nothing picked yet (asked again): the digest the link had
            None => {
                if let Some(d) = &c.sha256 {
                    kv.push((sha, d.clone()));
                }
            }
        }
    }
    kv
}

/// Whether the link carries an object for a side (for `link_note`).
pub fn carries_object(kv: &[(String, String)]) -> bool {
    kv.iter()
        .any(|(k, _)| FIELDS.iter().any(|f| *k == keys(f).1))
}

/// The sides from a link's pairs (`get`: a key's last value). A side whose object the link gives
/// badly (not base64url, not matching its digest, too large) keeps its name, options and digest
/// but no object: it asks for the file again, and its error names the field.
pub fn decode(
    pairs: &[(String, String)],
    get: impl Fn(&str) -> Option<String>,
) -> ([Option<ScxChoice>; 2], Vec<FieldError>) {
    let mut errs = Vec::new();
    let mut out = [None, None];
    for (slot, field) in out.iter_mut().zip(FIELDS) {
        let (sha_k, obj_k, opt_k) = keys(field);
        let Some(file) = get(field) else {
            if pairs
                .iter()
                .any(|(k, _)| *k == sha_k || *k == obj_k || k.starts_with(&opt_k))
            {
                errs.push(FieldError::new(
                    field,
                    format!(
                        "{sha_k}, {obj_k} and {opt_k}NAME need {field} (the file name): not used"
                    ),
                ));
            }
            continue;
        };
        let mut c = ScxChoice {
            file: file.chars().take(255).collect(),
            ..ScxChoice::default()
        };
        if file.trim().is_empty() {
            errs.push(FieldError::new(field, "the file name is empty"));
            c.file = "the object".into();
        }
        for (k, v) in pairs {
            let Some(name) = k.strip_prefix(&opt_k) else {
                continue;
            };
            match parse_option(&format!("{name}={v}")) {
                Ok((n, x)) if !n.is_empty() => {
                    c.options.insert(n, x);
                }
                Ok(_) => errs.push(FieldError::new(
                    field,
                    format!("{k}: an option needs a name"),
                )),
                Err(e) => errs.push(FieldError::new(field, format!("option {e}"))),
            }
        }
        let digest = get(&sha_k);
        if let Some(d) = &digest {
            let ok = d.len() == 64
                && d.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if ok {
                c.sha256 = Some(d.clone());
            } else {
                errs.push(FieldError::new(
                    field,
                    format!(
                        "{sha_k} is not a SHA-256 (64 lowercase hex digits): {:?}",
                        d.chars().take(70).collect::<String>()
                    ),
                ));
            }
        }
        if let Some(o) = get(&obj_k) {
            match b64url::decode(&o) {
                None => errs.push(FieldError::new(
                    field,
                    format!("the link's object for {} is not base64url (was the link cut?): pick the file again", c.file),
                )),
                Some(b) if b.len() > MAX_OBJECT_BYTES => errs.push(FieldError::new(
                    field,
                    format!("the link's object for {} is {} bytes, above the limit of {MAX_OBJECT_BYTES}", c.file, b.len()),
                )),
                Some(b) => match &digest {
                    Some(d) if *d != sha256::hex(&b) => errs.push(FieldError::new(
                        field,
                        format!(
                            "the link's object for {} has SHA-256 {}, not the link's {} (was the link cut or edited?): pick the file again",
                            c.file,
                            sha256::hex(&b),
                            d.chars().take(70).collect::<String>()
                        ),
                    )),
                    // carried and whole: the digest has done its job
                    _ => {
                        c.object = o;
                        c.sha256 = None;
                    }
                },
            }
        }
        *slot = Some(c);
    }
    (out, errs)
}
