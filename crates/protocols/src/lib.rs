//! Reference protocol cores of cmc, their properties, planted bugs, and the
//! planted-bug gate.
//!
//! - [`two_phase`]: two-phase commit, in C (`c/two_phase.c`), loaded from its
//!   shared library;
//! - [`gate`]: the gate that runs every control and every planted bug.
//!
//! [`references`] lists the cores with their gate configurations and budgets.

pub mod gate;
pub mod two_phase;

use gate::{PlantedBug, Reference};

/// Every reference core with its gate configuration and planted bugs.
pub fn references() -> Vec<Reference> {
    vec![Reference {
        core: "two_phase",
        language: "C",
        nodes: 3,
        params: &["requests=1", "crashes=1", "restarts=1"],
        control_depth: None,
        check_deadlock: false,
        bugs: &[
            PlantedBug {
                bug: 1,
                summary: "replies COMMITTED before the decision is flushed",
                expected: "NoCommitReplyBeforeFlush",
                max_depth: 30,
                max_states: 1_000_000,
            },
            PlantedBug {
                bug: 2,
                summary: "commits on one YES vote too few",
                expected: "Validity",
                max_depth: 30,
                max_states: 1_000_000,
            },
            PlantedBug {
                bug: 3,
                summary: "RM votes YES before PREPARED is flushed",
                expected: "Validity",
                max_depth: 30,
                max_states: 1_000_000,
            },
            PlantedBug {
                bug: 4,
                summary: "restarted coordinator answers STATUS from memory",
                expected: "Agreement",
                max_depth: 30,
                max_states: 1_000_000,
            },
        ],
        world: two_phase::world,
    }]
}
