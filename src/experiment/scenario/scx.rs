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
    /// `.rodata` options set before load, name -> value.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub options: BTreeMap<String, u64>,
}

impl ScxChoice {
    /// From a file's bytes.
    pub fn from_bytes(file: &str, bytes: &[u8]) -> ScxChoice {
        ScxChoice {
            file: file.to_string(),
            object: b64url::encode(bytes),
            options: BTreeMap::new(),
        }
    }
}

/// The object of `field` (`scx_a` or `scx_b`) for a machine of `nr_cpus`, checked by opening it.
pub fn resolve(field: &str, c: &ScxChoice, nr_cpus: u32) -> Result<ScxObject, FieldError> {
    let bytes = b64url::decode(&c.object).ok_or_else(|| {
        FieldError::new(
            field,
            format!("{}: the object is not valid base64url", c.file),
        )
    })?;
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
    crate::sched::scx_check_supported(&s)
        .map_err(|e| FieldError::new(field, format!("{}: {e}", c.file)))?;
    for (name, v) in &c.options {
        let size = s.obj.global(name).map_or(8, |g| g.size.min(8) as usize);
        s.obj
            .set_global(name, &v.to_le_bytes()[..size])
            .map_err(|e| FieldError::new(field, format!("{}: option {name}: {e}", c.file)))?;
    }
    Ok(ScxObject {
        bytes,
        options: c.options.iter().map(|(k, v)| (k.clone(), *v)).collect(),
    })
}
