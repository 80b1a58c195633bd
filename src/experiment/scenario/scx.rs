//! A side's sched_ext scheduler (`scx_a` / `scx_b`): the `.bpf.o` a developer built, carried in
//! the scenario as base64url with its file name, and the `.rodata` options its user space would
//! set before load. Validation opens it against the simulated v6.18 kernel, so an object the
//! loader refuses is refused with the scenario, naming what (section, helper, kfunc, map type,
//! relocation).

use crate::error::FieldError;
use crate::experiment::b64url;
use crate::sched::ScxObject;
use crate::sched::ext::core::{Config, ScxSched};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Largest object a scenario carries (scx_bpfland's is about 200 KiB; 4 MiB leaves room).
pub const MAX_OBJECT_BYTES: usize = 4 << 20;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ScxChoice {
    /// The file name (for the report and the page; not read).
    pub file: String,
    /// The object, base64url without padding.
    pub object: String,
    /// What user space sets before load, name -> value: `.rodata` options by their global's
    /// name, and the ops' data members as `ops.flags`, `ops.timeout_ms`, `ops.exit_dump_len`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, u64>,
    /// The SHA-256 (64 lowercase hex digits) the object must have: set by a share link that names
    /// an object too large to carry (`object` is then empty until the file is picked again), so
    /// that a different file is refused. Omitted when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

impl ScxChoice {
    /// From a file's bytes.
    pub fn from_bytes(file: &str, bytes: &[u8]) -> ScxChoice {
        ScxChoice {
            file: file.to_string(),
            object: b64url::encode(bytes),
            options: BTreeMap::new(),
            sha256: None,
        }
    }
}

/// One `NAME=VALUE` option (decimal, or hexadecimal with `0x`).
pub fn parse_option(kv: &str) -> Result<(String, u64), String> {
    let (k, v) = kv
        .split_once('=')
        .ok_or_else(|| format!("'{kv}' is not NAME=VALUE"))?;
    let v = v.trim();
    let n = match v.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16),
        None => v.parse::<u64>(),
    }
    .map_err(|_| format!("'{kv}': the value must be an unsigned number (decimal or 0x hex)"))?;
    Ok((k.trim().to_string(), n))
}

/// The object of `field` (`scx_a` or `scx_b`) for a machine of `nr_cpus`, checked by opening it.
pub fn resolve(field: &str, c: &ScxChoice, nr_cpus: u32) -> Result<ScxObject, FieldError> {
    if c.object.is_empty() {
        // a share link named the object without carrying it (or carried one it refused)
        return Err(FieldError::new(
            field,
            match &c.sha256 {
                Some(d) => format!(
                    "needs {} (SHA-256 {d}): the link names this scheduler but does not carry it; pick the file again",
                    c.file
                ),
                None => format!("needs {}: pick the file again", c.file),
            },
        ));
    }
    let bytes = b64url::decode(&c.object).ok_or_else(|| {
        FieldError::new(
            field,
            format!("{}: the object is not valid base64url", c.file),
        )
    })?;
    if let Some(want) = &c.sha256 {
        let got = crate::experiment::sha256::hex(&bytes);
        if &got != want {
            return Err(FieldError::new(
                field,
                format!(
                    "{} has SHA-256 {got}, not the {want} the link asked for: pick the file the link was made from",
                    c.file
                ),
            ));
        }
    }
    if bytes.len() > MAX_OBJECT_BYTES {
        return Err(FieldError::new(
            field,
            format!(
                "{}: {} bytes, above the limit of {MAX_OBJECT_BYTES}",
                c.file,
                bytes.len()
            ),
        ));
    }
    let mut s = ScxSched::open(&bytes, Config { nr_cpus }).map_err(|e| {
        FieldError::new(field, format!("{}: refused by the loader: {}", c.file, e.0))
    })?;
    for (name, v) in &c.options {
        s.set_option(name, *v)
            .map_err(|e| FieldError::new(field, format!("{}: option {name}: {e}", c.file)))?;
    }
    crate::sched::scx_check_supported(&s)
        .map_err(|e| FieldError::new(field, format!("{}: {e}", c.file)))?;
    Ok(ScxObject {
        bytes,
        options: c.options.iter().map(|(k, v)| (k.clone(), *v)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::parse_option;

    #[test]
    fn an_option_is_name_equals_a_decimal_or_hex_number() {
        assert_eq!(
            parse_option("ops.flags=0x76"),
            Ok(("ops.flags".into(), 0x76))
        );
        assert_eq!(
            parse_option(" slice_ns = 5000 "),
            Ok(("slice_ns".into(), 5000))
        );
        let e = parse_option("numa_enabled").unwrap_err();
        assert!(e.contains("is not NAME=VALUE"), "{e}");
        let e = parse_option("slice_ns=-1").unwrap_err();
        assert!(e.contains("unsigned number"), "{e}");
    }
}
