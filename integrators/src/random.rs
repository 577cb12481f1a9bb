//! A small deterministic random number generator for seeding scenes and fracture decisions.
//!
//! Physics results must be bit-identical run to run and on every machine, so every random choice
//! in shatter (scene generation, a fallback direction, flood-fill seeds) comes from an explicit
//! seed through this generator, never from an OS source. SplitMix64 (Steele, Lea and Flood 2014)
//! is used: one 64-bit state, statistically sound for these uses, and trivially reproducible.

use glam::{DQuat, DVec3};

/// SplitMix64: a seeded stream of uniformly distributed 64-bit values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A generator for one event: `seed` mixed with `keys` (a joint's handle, a time), so equal
    /// seeds and keys give equal draws and a change in any key gives unrelated ones. A stream per
    /// event makes each draw depend on that event alone, not on how many draws came before it
    /// elsewhere.
    pub fn stream(seed: u64, keys: &[u64]) -> Self {
        let mut state = Self::new(seed).next_u64();
        for &key in keys {
            state = Self::new(state ^ key).next_u64();
        }
        Self { state }
    }

    /// An integer uniform in `0..n` (`n > 0`), without modulo bias (Lemire's multiply-shift with
    /// rejection of the biased low products).
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0, "SplitMix64::below needs n > 0");
        let threshold = n.wrapping_neg() % n;
        loop {
            let product = u128::from(self.next_u64()) * u128::from(n);
            if (product as u64) >= threshold {
                return (product >> 64) as u64;
            }
        }
    }

    /// Uniform in `[0, 1)`, with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `[low, high)`.
    pub fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next_f64()
    }

    /// Uniform on the unit sphere (Marsaglia 1972: rejection from the unit disk).
    pub fn unit_vector(&mut self) -> DVec3 {
        loop {
            let (u, v) = (self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            let s = u * u + v * v;
            if s < 1.0 && s > 0.0 {
                let root = 2.0 * (1.0 - s).sqrt();
                return DVec3::new(u * root, v * root, 1.0 - 2.0 * s);
            }
        }
    }

    /// A rotation drawn uniformly from SO(3) (Shoemake 1992).
    pub fn rotation(&mut self) -> DQuat {
        let (u1, u2, u3) = (self.next_f64(), self.next_f64(), self.next_f64());
        let tau = core::f64::consts::TAU;
        let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
        DQuat::from_xyzw(
            a * (tau * u2).sin(),
            a * (tau * u2).cos(),
            b * (tau * u3).sin(),
            b * (tau * u3).cos(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_matches_the_splitmix64_reference_sequence() {
        // First outputs of the reference implementation for seed 0 (Vigna's splitmix64.c).
        let mut random = SplitMix64::new(0);
        assert_eq!(random.next_u64(), 0xe220_a839_7b1d_cdaf);
        assert_eq!(random.next_u64(), 0x6e78_9e6a_a1b9_65f4);
        assert_eq!(random.next_u64(), 0x06c4_5d18_8009_454f);
    }

    #[test]
    fn random_integers_are_uniform_and_event_streams_depend_on_every_key() {
        let mut random = SplitMix64::new(42);
        let n = 100_000;
        let mut counts = [0usize; 10];
        for _ in 0..n {
            counts[random.below(10) as usize] += 1;
        }
        // The standard deviation of a count is about 95.
        assert!(counts.iter().all(|&c| c.abs_diff(n / 10) < 600), "{counts:?}");
        let draw = |seed, keys: &[u64]| SplitMix64::stream(seed, keys).next_u64();
        assert_eq!(draw(7, &[1, 2]), draw(7, &[1, 2]));
        assert_ne!(draw(7, &[1, 2]), draw(8, &[1, 2]));
        assert_ne!(draw(7, &[1, 2]), draw(7, &[1, 3]));
        assert_ne!(draw(7, &[1, 2]), draw(7, &[2, 1]));
    }

    #[test]
    fn random_streams_are_reproducible_and_uniform() {
        let mut a = SplitMix64::new(42);
        let mut b = SplitMix64::new(42);
        let first: Vec<u64> = (0..8).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..8).map(|_| b.next_u64()).collect::<Vec<_>>());
        let mut rng = SplitMix64::new(1);
        let n = 100_000;
        let mean = (0..n).map(|_| rng.next_f64()).sum::<f64>() / n as f64;
        // Standard error of the mean of U(0,1) is 0.289 / sqrt(n) = 9e-4.
        assert!((mean - 0.5).abs() < 5e-3, "mean {mean}");
        let centroid = (0..n).map(|_| rng.unit_vector()).sum::<DVec3>() / n as f64;
        assert!(centroid.length() < 1e-2, "centroid {centroid}");
        let q = rng.rotation();
        assert!((q.length() - 1.0).abs() < 1e-15);
    }
}
