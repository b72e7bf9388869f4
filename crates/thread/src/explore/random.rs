//! Randomized exploration: uniformly random choices, or PCT (Burckhardt et al. 2010) with a
//! bug depth `d`: random thread priorities, `d - 1` random priority-change points, and the
//! highest-priority enabled thread always runs. Execution `i` uses seed `base + i`, so a
//! failure is reproduced by its seed as well as by its schedule.

use super::strategy::Strategy;
use crate::rng::Rng;
use crate::rt::{ExecState, Scheduler, Stop, ThreadId, MAX_THREADS};

/// Random or PCT scheduling.
pub struct Randomized {
    base_seed: u64,
    execution: u64,
    rng: Rng,
    /// `Some(depth)` for PCT.
    pct_depth: Option<u32>,
    priorities: [u64; MAX_THREADS],
    change_points: Vec<usize>,
    /// Longest execution seen, the step range for change points.
    max_len: usize,
}

impl Randomized {
    /// Uniform random scheduling from `seed`.
    pub fn random(seed: u64) -> Self {
        Self::build(seed, None)
    }

    /// PCT with bug depth `depth` (at least 1) from `seed`.
    pub fn pct(seed: u64, depth: u32) -> Self {
        Self::build(seed, Some(depth.max(1)))
    }

    fn build(base_seed: u64, pct_depth: Option<u32>) -> Self {
        Randomized {
            base_seed,
            execution: 0,
            rng: Rng::new(base_seed),
            pct_depth,
            priorities: [0; MAX_THREADS],
            change_points: Vec::new(),
            max_len: 16,
        }
    }

    fn current_seed(&self) -> u64 {
        self.base_seed
            .wrapping_add(self.execution.saturating_sub(1))
    }
}

impl Strategy for Randomized {
    fn next_execution(&mut self) -> bool {
        self.execution += 1;
        self.rng = Rng::new(self.current_seed());
        if let Some(d) = self.pct_depth {
            // Initial priorities are above every change-point priority (which are < d).
            for p in self.priorities.iter_mut() {
                *p = d as u64 + self.rng.below(1 << 32);
            }
            self.change_points = (1..d)
                .map(|_| 1 + self.rng.below(self.max_len as u64) as usize)
                .collect();
        }
        true
    }

    fn finish_execution(&mut self, st: &ExecState) -> Option<Stop> {
        self.max_len = self.max_len.max(st.trace.len());
        None
    }

    fn seed(&self) -> Option<u64> {
        Some(self.current_seed())
    }
}

impl Scheduler for Randomized {
    fn choose(&mut self, st: &ExecState, enabled: u64) -> Result<ThreadId, Stop> {
        let Some(_) = self.pct_depth else {
            let n = enabled.count_ones() as u64;
            let mut k = self.rng.below(n);
            let mut rest = enabled;
            loop {
                let t = rest.trailing_zeros() as usize;
                if k == 0 {
                    return Ok(t);
                }
                k -= 1;
                rest &= !(1 << t);
            }
        };
        let step = st.trace.len();
        if let Some(i) = self.change_points.iter().position(|&c| c == step) {
            self.priorities[st.active] = i as u64;
        }
        let best = (0..MAX_THREADS)
            .filter(|t| enabled & (1 << t) != 0)
            .max_by_key(|&t| self.priorities[t]);
        Ok(best.unwrap_or(0))
    }

    fn choose_stale(&mut self, _st: &ExecState, options: u32) -> Result<u32, Stop> {
        Ok(match options {
            0 | 1 => 0,
            n => self.rng.below(n as u64) as u32,
        })
    }
}
