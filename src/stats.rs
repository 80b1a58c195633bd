//! Statistics of repeated runs: mean, sample standard deviation, the 95% confidence interval of a
//! mean (Student t), and Welch's t-test of a difference of means. Pure math from IEEE basic
//! operations and `detmath` (no platform libm), so the page's tables are bit-identical to the CLI's.

use crate::sim::detmath;
use serde::{Deserialize, Serialize};

/// Two-sided 95% critical values of Student's t, `t(0.975, df)`, from the NIST/SEMATECH
/// e-Handbook of Statistical Methods, §1.3.6.7.2 "Critical Values of the Student's t
/// Distribution" (to 4 decimals). `f64::INFINITY` is the normal limit. A test checks every entry
/// against `t_cdf` below.
pub const T975: &[(f64, f64)] = &[
    (1.0, 12.7062),
    (2.0, 4.3027),
    (3.0, 3.1824),
    (4.0, 2.7764),
    (5.0, 2.5706),
    (6.0, 2.4469),
    (7.0, 2.3646),
    (8.0, 2.3060),
    (9.0, 2.2622),
    (10.0, 2.2281),
    (11.0, 2.2010),
    (12.0, 2.1788),
    (13.0, 2.1604),
    (14.0, 2.1448),
    (15.0, 2.1314),
    (16.0, 2.1199),
    (17.0, 2.1098),
    (18.0, 2.1009),
    (19.0, 2.0930),
    (20.0, 2.0860),
    (21.0, 2.0796),
    (22.0, 2.0739),
    (23.0, 2.0687),
    (24.0, 2.0639),
    (25.0, 2.0595),
    (26.0, 2.0555),
    (27.0, 2.0518),
    (28.0, 2.0484),
    (29.0, 2.0452),
    (30.0, 2.0423),
    (40.0, 2.0211),
    (50.0, 2.0086),
    (60.0, 2.0003),
    (80.0, 1.9901),
    (100.0, 1.9840),
    (120.0, 1.9799),
    (f64::INFINITY, 1.9600),
];

/// `t(0.975, df)` for a real `df >= 1` (Welch's df is fractional): between table rows, linear in
/// `1/df` (the usual interpolation for t tables; exact at the rows). `df < 1` is clamped to 1.
pub fn t975(df: f64) -> f64 {
    let df = if df.is_nan() { 1.0 } else { df.max(1.0) };
    let mut prev = T975[0];
    for &(d, t) in T975 {
        if df == d {
            return t;
        }
        if df < d {
            let (d0, t0) = prev;
            // w in [0, 1] from the lower row to this one, linear in 1/df (1/inf = 0).
            let w = (1.0 / d0 - 1.0 / df) / (1.0 / d0 - 1.0 / d);
            return t0 + (t - t0) * w;
        }
        prev = (d, t);
    }
    prev.1
}

/// Mean, sample standard deviation (n − 1) and the 95% confidence interval of the mean of a set of
/// repeated measurements.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (n − 1 in the denominator); 0 for one value.
    pub stddev: f64,
    /// 95% confidence interval of the mean, `mean ± t(0.975, n−1) · stddev / √n`; the point itself
    /// when n = 1 or `identical` (no spread is known).
    pub ci95: [f64; 2],
    /// More than one value and all of them the same: the repeats measured nothing (a workload whose
    /// runs do not depend on the seed), so this is one run, with no interval.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub identical: bool,
}

/// More than one value and every one the same bit for bit.
pub fn all_identical(x: &[f64]) -> bool {
    x.len() > 1 && x.iter().all(|v| v.to_bits() == x[0].to_bits())
}

/// Sum in index order (one fixed order, the same everywhere).
fn sum(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |a, &v| a + v)
}

pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        0.0
    } else {
        sum(x) / x.len() as f64
    }
}

/// Sample variance (n − 1), 0 for fewer than two values.
pub fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    x.iter().fold(0.0, |a, &v| a + (v - m) * (v - m)) / (x.len() - 1) as f64
}

impl Summary {
    pub fn of(x: &[f64]) -> Summary {
        let n = x.len();
        let m = mean(x);
        let sd = variance(x).sqrt();
        let half = if n >= 2 {
            t975((n - 1) as f64) * sd / (n as f64).sqrt()
        } else {
            0.0
        };
        Summary {
            n,
            mean: m,
            stddev: sd,
            ci95: [m - half, m + half],
            identical: all_identical(x),
        }
    }

    /// Coefficient of variation in % (stddev over |mean|; 0 when the mean is 0), the "(std%)" of
    /// the mailing-list tables.
    pub fn cv_pct(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            self.stddev * 100.0 / self.mean.abs()
        }
    }
}

/// Welch's unequal-variance t-test of B − A, and the 95% interval of the difference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Welch {
    /// mean(B) − mean(A).
    pub diff: f64,
    /// 95% interval of the difference: `diff ± t(0.975, df) · se`.
    pub ci95: [f64; 2],
    /// Standard error √(s_a²/n_a + s_b²/n_b).
    pub se: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// diff / se (0 when se is 0).
    pub t: f64,
    /// Two-sided p-value, P(|T_df| ≥ |t|); 1 when there is no spread and no difference, 0 when
    /// there is no spread but a difference.
    pub p: f64,
}

impl Welch {
    pub fn between(a: &[f64], b: &[f64]) -> Welch {
        let (na, nb) = (a.len().max(1) as f64, b.len().max(1) as f64);
        let (va, vb) = (variance(a) / na, variance(b) / nb);
        let diff = mean(b) - mean(a);
        let se2 = va + vb;
        let se = se2.sqrt();
        // (va + vb)² / (va²/(na−1) + vb²/(nb−1)), each term only when its side has a spread.
        let mut den = 0.0;
        if a.len() > 1 {
            den += va * va / (na - 1.0);
        }
        if b.len() > 1 {
            den += vb * vb / (nb - 1.0);
        }
        let df = if den > 0.0 { se2 * se2 / den } else { 1.0 };
        let (t, p) = if se > 0.0 {
            let t = diff / se;
            (t, t_two_sided_p(t, df))
        } else if diff == 0.0 {
            (0.0, 1.0)
        } else {
            (0.0, 0.0)
        };
        let half = t975(df) * se;
        Welch {
            diff,
            ci95: [diff - half, diff + half],
            se,
            df,
            t,
            p,
        }
    }
}

/// Two-sided p-value of Student's t: P(|T_df| ≥ |t|) = I_{df/(df+t²)}(df/2, 1/2).
pub fn t_two_sided_p(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    let x = df / (df + t * t);
    inc_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// P(T_df ≤ t), Student's t cumulative distribution.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    let tail = t_two_sided_p(t, df) / 2.0;
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// e^x from IEEE basic operations: x = k·ln2 + r with |r| ≤ ln2/2, a degree-20 Taylor sum for e^r
/// (error below 1e-16 there), then 2^k through the exponent bits.
pub fn exp(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.0 {
        return f64::INFINITY;
    }
    if x < -745.0 {
        return 0.0;
    }
    let k = (x / std::f64::consts::LN_2 + if x < 0.0 { -0.5 } else { 0.5 }) as i64;
    let r = x - k as f64 * std::f64::consts::LN_2;
    let (mut term, mut s) = (1.0, 1.0);
    for i in 1..=20 {
        term = term * r / i as f64;
        s += term;
    }
    // 2^k in two steps so that k down to -1074 stays representable.
    let half = k / 2;
    let p = |e: i64| f64::from_bits(((e + 1023) as u64) << 52);
    s * p(half) * p(k - half)
}

/// ln Γ(x) for x > 0: Lanczos (g = 7, 9 coefficients, as in Numerical Recipes 3rd ed. §6.1 and
/// the widely used Godfrey set; relative error ~1e-15), with Γ(x) = Γ(x+1)/x below 0.5.
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        return ln_gamma(x + 1.0) - detmath::ln(x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, &c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    // ln √(2π) = 0.918938533204672741780329736406
    0.918_938_533_204_672_8 + (x + 0.5) * detmath::ln(t) - t + detmath::ln(a)
}

/// Regularized incomplete beta I_x(a, b) by its continued fraction (modified Lentz), using the
/// symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where the fraction converges slowly (Numerical Recipes
/// §6.4, `betai` / `betacf`).
pub fn inc_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front =
        ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * detmath::ln(x) + b * detmath::ln(1.0 - x);
    let front = exp(ln_front);
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(x, a, b) / a
    } else {
        1.0 - front * beta_cf(1.0 - x, b, a) / b
    }
}

fn beta_cf(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Least-squares trend of `y` against its index: (slope per sample, residual standard deviation
/// around the fitted line with n − 2 degrees of freedom). (0, 0) for fewer than three points.
pub fn trend(y: &[f64]) -> (f64, f64) {
    let n = y.len();
    if n < 3 {
        return (0.0, 0.0);
    }
    let xm = (n - 1) as f64 / 2.0;
    let ym = mean(y);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &v) in y.iter().enumerate() {
        let dx = i as f64 - xm;
        sxy += dx * (v - ym);
        sxx += dx * dx;
    }
    let slope = sxy / sxx;
    let mut sse = 0.0;
    for (i, &v) in y.iter().enumerate() {
        let r = v - (ym + slope * (i as f64 - xm));
        sse += r * r;
    }
    (slope, (sse / (n - 2) as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn summary_of_one_to_five_by_hand() {
        // mean 3, variance (4+1+0+1+4)/4 = 2.5, sd 1.58114, half = 2.7764 · 1.58114 / √5 = 1.963211
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(s.n, 5);
        assert_eq!(s.mean, 3.0);
        assert!(close(s.stddev, 2.5f64.sqrt(), 1e-15));
        assert!(close(s.ci95[0], 3.0 - 1.963_211, 1e-5), "{:?}", s.ci95);
        assert!(close(s.ci95[1], 3.0 + 1.963_211, 1e-5), "{:?}", s.ci95);
        assert!(close(s.cv_pct(), 52.704_627, 1e-5));
        // one value: no spread, the interval is the point
        let one = Summary::of(&[7.0]);
        assert_eq!((one.stddev, one.ci95), (0.0, [7.0, 7.0]));
    }

    #[test]
    fn welch_by_hand() {
        // A = 1..5 (mean 3, var 2.5), B = 2,4,..,10 (mean 6, var 10): se² = 0.5 + 2 = 2.5,
        // t = 3/√2.5 = 1.897367, df = 2.5² / (0.5²/4 + 2²/4) = 6.25 / 1.0625 = 5.882353.
        let w = Welch::between(&[1.0, 2.0, 3.0, 4.0, 5.0], &[2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(w.diff, 3.0);
        assert!(close(w.se, 2.5f64.sqrt(), 1e-15));
        assert!(close(w.t, 1.897_366_6, 1e-6), "{}", w.t);
        assert!(close(w.df, 5.882_352_9, 1e-6), "{}", w.df);
        // t(0.975, 5.88) between the 5 and 6 rows, linear in 1/df: 2.5706 + (2.4469-2.5706)·0.8998
        let t = t975(w.df);
        assert!(close(t, 2.459_29, 1e-4), "{t}");
        assert!(close(w.ci95[0], 3.0 - t * w.se, 1e-12));
        // p of t = 1.8974 on 5.88 df: between the df=5 (0.1164) and df=6 (0.1067) values
        assert!(w.p > 0.104 && w.p < 0.118, "{}", w.p);
        // identical constant samples: no difference, p = 1; different constants: p = 0
        assert_eq!(Welch::between(&[2.0, 2.0], &[2.0, 2.0]).p, 1.0);
        assert_eq!(Welch::between(&[2.0, 2.0], &[3.0, 3.0]).p, 0.0);
    }

    #[test]
    fn t_distribution_closed_forms() {
        // df = 1 is Cauchy: P(|T| > 1) = 1/2; df = 2: P(|T| > t) = 1 − t/√(2 + t²).
        assert!(close(t_two_sided_p(1.0, 1.0), 0.5, 1e-13));
        for t in [0.5f64, 1.0, 2.0, 4.303] {
            let exact = 1.0 - t / (2.0 + t * t).sqrt();
            assert!(
                close(t_two_sided_p(t, 2.0), exact, 1e-13),
                "{t}: {}",
                t_two_sided_p(t, 2.0)
            );
        }
        // published value: P(|T_10| > 2) = 0.073388
        assert!(close(t_two_sided_p(2.0, 10.0), 0.073_388, 1e-6));
        assert_eq!(t_two_sided_p(0.0, 7.0), 1.0);
        assert!(close(t_cdf(-2.0, 10.0), 0.036_694, 1e-6));
    }

    #[test]
    fn the_table_agrees_with_the_cdf() {
        for &(df, t) in T975 {
            let df = if df.is_infinite() { 1e7 } else { df };
            let p = t_cdf(t, df);
            assert!(close(p, 0.975, 2e-5), "df {df}: t {t} gives {p}");
        }
        assert_eq!(t975(0.3), 12.7062);
        assert!(close(t975(1e12), 1.96, 1e-6));
        assert!(t975(35.0) < 2.0423 && t975(35.0) > 2.0211);
    }

    #[test]
    fn exp_and_ln_gamma() {
        for x in [-700.0, -20.0, -1.0, -1e-9, 0.0, 0.5, 1.0, 3.7, 50.0, 700.0] {
            let (a, b) = (exp(x), f64::exp(x));
            assert!(close(a, b, 1e-13 * b), "{x}: {a} vs {b}");
        }
        // Γ(1) = Γ(2) = 1, Γ(5) = 24, Γ(1/2) = √π
        assert!(close(ln_gamma(1.0), 0.0, 1e-14));
        assert!(close(ln_gamma(2.0), 0.0, 1e-14));
        assert!(close(ln_gamma(5.0), 24f64.ln(), 1e-13));
        assert!(close(
            ln_gamma(0.5),
            std::f64::consts::PI.sqrt().ln(),
            1e-14
        ));
        assert!(close(ln_gamma(0.1), 2.252_712_651_734_206, 1e-13));
    }

    #[test]
    fn trend_of_a_line_and_of_noise() {
        let line: Vec<f64> = (0..10).map(|i| 5.0 + 2.0 * i as f64).collect();
        let (s, r) = trend(&line);
        assert!(close(s, 2.0, 1e-12) && close(r, 0.0, 1e-12), "{s} {r}");
        let flat = [1.0, -1.0, 1.0, -1.0, 1.0, -1.0];
        let (s, r) = trend(&flat);
        assert!(s.abs() < 0.2 && r > 0.9, "{s} {r}");
    }
}
