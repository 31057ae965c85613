//! The pseudo-random generator behind `init = { random = ... }`.
//!
//! Inputs must be the same on every platform and in every version of metalsim, so the
//! generator is written here rather than taken from a crate whose streams may change:
//!
//! - xoshiro256** 1.0 (Blackman and Vigna, 2018), its 256-bit state filled by four
//!   outputs of SplitMix64 (Steele, Lea and Flood, 2014) started at the spec's `seed`,
//!   as the xoshiro authors recommend;
//! - uniform reals from the top 53 bits of an output; uniform integers by Lemire's
//!   multiply-and-reject method, so they are exactly unbiased;
//! - normal reals by Marsaglia's polar method. It needs a logarithm, and `f64::ln` comes
//!   from the platform's maths library, which may differ in the last bit between
//!   platforms; [`ln`] below uses only `+ - * /`, which IEEE 754 rounds the same way
//!   everywhere (like `sqrt`, the only other operation used).
//!
//! The tests pin the first outputs, so a stream can never change silently.

/// SplitMix64: a 64-bit state advanced by a Weyl sequence and mixed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// xoshiro256** with the derived distributions the launch spec offers.
pub(crate) struct Rng {
    s: [u64; 4],
    /// The polar method makes normals in pairs; the second waits here.
    spare_normal: Option<f64>,
}

impl Rng {
    /// A generator whose state is four SplitMix64 outputs from `seed`.
    pub(crate) fn new(seed: u64) -> Rng {
        let mut sm = SplitMix64(seed);
        let s = [sm.next_u64(), sm.next_u64(), sm.next_u64(), sm.next_u64()];
        Rng {
            s,
            spare_normal: None,
        }
    }

    #[cfg(test)]
    fn from_state(s: [u64; 4]) -> Rng {
        Rng {
            s,
            spare_normal: None,
        }
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A real in [0, 1): the top 53 bits of an output, scaled.
    pub(crate) fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// An integer in [0, n), exactly uniform (Lemire 2019). `n` must be at least 1.
    fn below(&mut self, n: u64) -> u64 {
        let mut m = self.next_u64() as u128 * n as u128;
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = self.next_u64() as u128 * n as u128;
            }
        }
        (m >> 64) as u64
    }

    /// An integer in `[lo, hi]`, inclusive; `lo <= hi` and the span is at most 2^64.
    pub(crate) fn int_in(&mut self, lo: i128, hi: i128) -> i128 {
        let span = (hi - lo) as u128 + 1;
        if span == 1 << 64 {
            lo + self.next_u64() as i128
        } else {
            lo + self.below(span as u64) as i128
        }
    }

    /// A normally distributed real with mean 0 and standard deviation 1.
    pub(crate) fn standard_normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        loop {
            let u = 2.0 * self.next_f64() - 1.0;
            let v = 2.0 * self.next_f64() - 1.0;
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                let f = (-2.0 * ln(s) / s).sqrt();
                self.spare_normal = Some(v * f);
                return u * f;
            }
        }
    }
}

/// The natural logarithm of a positive normal `x`, from `+ - * /` only, so that it gives
/// the same bits on every platform. Within a few ulp of the true value.
///
/// `x = m * 2^e` with `m` in `[sqrt(1/2), sqrt(2))`; `ln m = 2 atanh(t)` with
/// `t = (m - 1) / (m + 1)`, `|t| < 0.172`, summed as its odd power series, whose 14
/// terms leave an error far below an ulp.
pub(crate) fn ln(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut m = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let t = (m - 1.0) / (m + 1.0);
    let t2 = t * t;
    let mut power = t;
    let mut sum = 0.0;
    for k in 0..14 {
        sum += power / (2 * k + 1) as f64;
        power *= t2;
    }
    2.0 * sum + e as f64 * std::f64::consts::LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_u64(mut rng: Rng, expected: &[u64]) {
        let got: Vec<u64> = (0..expected.len()).map(|_| rng.next_u64()).collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn splitmix64_matches_the_reference() {
        // The reference C code's outputs for seed 1234567.
        let mut sm = SplitMix64(1234567);
        let got: Vec<u64> = (0..5).map(|_| sm.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    #[test]
    fn xoshiro256starstar_matches_the_reference() {
        // The reference C code's outputs from the state [1, 2, 3, 4].
        check_u64(
            Rng::from_state([1, 2, 3, 4]),
            &[
                11520,
                0,
                1509978240,
                1215971899390074240,
                1216172134540287360,
                607988272756665600,
                16172922978634559625,
                8476171486693032832,
                10595114339597558777,
                2904607092377533576,
            ],
        );
    }

    #[test]
    fn seeded_streams_never_change() {
        check_u64(
            Rng::new(0),
            &[
                11091344671253066420,
                13793997310169335082,
                1900383378846508768,
                7684712102626143532,
            ],
        );
        check_u64(
            Rng::new(1),
            &[
                12966619160104079557,
                9600361134598540522,
                10590380919521690900,
                7218738570589545383,
            ],
        );
    }

    #[test]
    fn derived_streams_never_change() {
        let mut rng = Rng::new(42);
        let reals: Vec<f64> = (0..3).map(|_| rng.next_f64()).collect();
        let ints: Vec<i128> = (0..6).map(|_| rng.int_in(-3, 3)).collect();
        let normals: Vec<f64> = (0..3).map(|_| rng.standard_normal()).collect();
        assert_eq!(
            reals,
            [0.08386297105988216, 0.3789802506626686, 0.6800434110281394]
        );
        assert_eq!(ints, [3, 3, 2, 2, 2, 2]);
        assert_eq!(
            normals,
            [0.7942217309663184, 1.7385630952430795, -0.6359430088581207]
        );
    }

    #[test]
    fn integers_cover_the_range_and_stay_in_it() {
        let mut rng = Rng::new(7);
        let mut seen = [false; 7];
        for _ in 0..1000 {
            let x = rng.int_in(-3, 3);
            assert!((-3..=3).contains(&x));
            seen[(x + 3) as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        let full = rng.int_in(0, u64::MAX as i128);
        assert!((0..=u64::MAX as i128).contains(&full));
        assert_eq!(rng.int_in(5, 5), 5);
    }

    #[test]
    fn normals_have_the_right_moments() {
        let mut rng = Rng::new(3);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| rng.standard_normal()).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n as f64;
        assert!(mean.abs() < 0.01, "mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "variance {var}");
    }

    #[test]
    fn ln_is_close_to_the_library_one() {
        let mut rng = Rng::new(9);
        for _ in 0..10_000 {
            let x = rng.next_f64() + f64::MIN_POSITIVE;
            let (ours, theirs) = (ln(x), x.ln());
            assert!(
                (ours - theirs).abs() <= 4.0 * f64::EPSILON * theirs.abs().max(1.0),
                "ln({x}) = {ours}, expected {theirs}"
            );
        }
        assert_eq!(ln(1.0), 0.0);
        assert!((ln(2.0) - std::f64::consts::LN_2).abs() < 1e-16);
        assert!((ln(1e-300) - (1e-300f64).ln()).abs() < 1e-12);
    }
}
