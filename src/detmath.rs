//! Transcendental functions from IEEE basic operations only, so results are bit-identical natively
//! and in wasm (the platform libm may differ in the last bit, which would fork a whole run).

const LN2: f64 = std::f64::consts::LN_2;

/// Natural logarithm for x > 0.
pub fn ln(x: f64) -> f64 {
    debug_assert!(x > 0.0);
    let bits = x.to_bits();
    let mut exp = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1u64 << 52) - 1)) | (1023u64 << 52)); // [1, 2)
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5; // exact
        exp += 1;
    }
    // ln(m) = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...), z = (m-1)/(m+1), |z| < 0.172: 12 terms
    // reach full precision. Horner form with literal coefficients: no division in the loop.
    const C: [f64; 12] = [
        1.0,
        1.0 / 3.0,
        1.0 / 5.0,
        1.0 / 7.0,
        1.0 / 9.0,
        1.0 / 11.0,
        1.0 / 13.0,
        1.0 / 15.0,
        1.0 / 17.0,
        1.0 / 19.0,
        1.0 / 21.0,
        1.0 / 23.0,
    ];
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let mut poly = C[11];
    for k in (0..11).rev() {
        poly = poly * z2 + C[k];
    }
    let sum = z * poly;
    2.0 * sum + exp as f64 * LN2
}

#[cfg(test)]
mod tests {
    #[test]
    fn ln_matches_libm_closely() {
        for &x in &[1e-9, 0.001, 0.3, 0.5, 0.999, 1.0, 2.0, 10.0, 12345.6] {
            let (a, b) = (super::ln(x), f64::ln(x));
            assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{x}: {a} vs {b}");
        }
    }
}
