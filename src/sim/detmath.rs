//! Transcendental functions from IEEE basic operations only, so results are bit-identical natively
//! and in wasm (the platform libm may differ in the last bit, which would fork a whole run).

const LN2: f64 = std::f64::consts::LN_2;
const TABLE_BITS: u32 = 6;
const TABLE: usize = 1 << TABLE_BITS;

/// ln(m) for m in [1, 2) by the atanh series: 2 (z + z^3/3 + ...), z = (m-1)/(m+1) < 1/3; 24 terms
/// reach full precision. Only used to build the table below.
const fn ln_series(m: f64) -> f64 {
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let (mut term, mut sum) = (z, 0.0);
    let mut k = 0;
    while k < 24 {
        sum += term / (2 * k + 1) as f64;
        term *= z2;
        k += 1;
    }
    2.0 * sum
}

/// (1 / c_k, ln c_k) for c_k = 1 + k/64, evaluated at compile time with IEEE arithmetic (the same
/// bits a run-time evaluation gives, and no lazy initialisation to check on every call).
const LN_TABLE: [(f64, f64); TABLE] = {
    let mut t = [(0.0, 0.0); TABLE];
    let mut k = 0;
    while k < TABLE {
        let c = 1.0 + k as f64 / TABLE as f64;
        t[k] = (1.0 / c, ln_series(c));
        k += 1;
    }
    t
};

/// Natural logarithm for x > 0 (normal, finite).
pub fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52)); // [1, 2)
    // m = c_k · r with r in [1, 1 + 1/64): the series in z = (r-1)/(r+1) < 0.008 needs 4 terms.
    // k = floor((m - 1) · 64) is the top 6 bits of the mantissa.
    let k = (bits >> (52 - TABLE_BITS)) as usize & (TABLE - 1);
    let (inv_c, ln_c) = LN_TABLE[k];
    let r = m * inv_c;
    let z = (r - 1.0) / (r + 1.0);
    let z2 = z * z;
    let poly = 1.0 + z2 * (1.0 / 3.0 + z2 * (1.0 / 5.0 + z2 * (1.0 / 7.0)));
    2.0 * z * poly + ln_c + exp as f64 * LN2
}

#[cfg(test)]
mod tests {
    #[test]
    fn ln_matches_libm_closely() {
        for &x in &[
            1e-9, 0.001, 0.3, 0.5, 0.7072, 0.999, 1.0, 1.015625, 1.99, 2.0, 10.0, 12345.6,
        ] {
            let (a, b) = (super::ln(x), f64::ln(x));
            assert!((a - b).abs() <= 1e-14 * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
    }
}
