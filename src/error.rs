//! Field-level validation errors: every bad input names the field, the value given and what is
//! allowed, and all of them are reported at once.

use serde::Serialize;
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// The link/CLI key the error belongs to (`machine`, `cores_per_socket`, `a`, ...).
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &str, message: impl Into<String>) -> Self {
        FieldError {
            field: field.to_string(),
            message: message.into(),
        }
    }
}

/// `out_of_range` (a "... is out of range: ..." message) for text that is a number, and the same
/// message saying "is not a number" for text that is none (`abc`, empty): the page and the CLI tell
/// a typo from a value outside the allowed range.
pub fn range_or_nan(raw: &str, out_of_range: String) -> String {
    if raw.trim().parse::<f64>().is_ok_and(f64::is_finite) {
        out_of_range
    } else {
        out_of_range.replacen("is out of range", "is not a number", 1)
    }
}

/// One or more field errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid(pub Vec<FieldError>);

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {}", e.field, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Invalid {}

impl From<FieldError> for Invalid {
    fn from(e: FieldError) -> Self {
        Invalid(vec![e])
    }
}
