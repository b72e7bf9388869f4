//! Controlled randomness: inside an execution [`u64()`] draws from a generator owned by the
//! execution and seeded by the checker ([`Checker::random_seed`](crate::Checker::random_seed),
//! default 0), so every execution, and every re-run of a schedule, draws the same
//! sequence. Outside an execution the bits come from std's randomly seeded hasher.

use crate::rt;
use std::hash::{BuildHasher, RandomState};

/// 64 random bits (not a switch point).
pub fn u64() -> u64 {
    rt::with(|st| st.random.next_u64()).unwrap_or_else(|| RandomState::new().hash_one(0u8))
}

/// A number in `0..n` (`n` 0 acts as 1).
pub fn below(n: u64) -> u64 {
    u64() % n.max(1)
}
