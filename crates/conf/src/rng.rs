//! Reproducible randomness: every random choice in rhdfs can be replayed from a seed.

use rand::SeedableRng;
use rand::rngs::StdRng;

/// Environment variable holding the seed used when none is given.
pub const SEED_ENV: &str = "RHDFS_SEED";

/// A `StdRng` seeded from `seed`, else from `$RHDFS_SEED` (decimal or `0x` hex), else from
/// entropy. The seed is logged at debug level so a run can be reproduced.
pub fn seeded_rng(seed: Option<u64>) -> StdRng {
    let seed = seed.or_else(env_seed).unwrap_or_else(rand::random::<u64>);
    tracing::debug!(seed, "seeded random number generator ({SEED_ENV}={seed})");
    StdRng::seed_from_u64(seed)
}

fn env_seed() -> Option<u64> {
    let v = std::env::var(SEED_ENV).ok()?;
    let v = v.trim();
    let parsed = match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => v.parse().ok(),
    };
    if parsed.is_none() {
        tracing::warn!("ignoring unparsable {SEED_ENV}={v:?}");
    }
    parsed
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_same_sequence() {
        let mut a = seeded_rng(Some(42));
        let mut b = seeded_rng(Some(42));
        let xa: [u64; 4] = std::array::from_fn(|_| a.random());
        let xb: [u64; 4] = std::array::from_fn(|_| b.random());
        assert_eq!(xa, xb);
    }
}
