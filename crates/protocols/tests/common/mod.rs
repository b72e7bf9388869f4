//! What the integration tests share: a search of a World to a depth bound,
//! reduced to what they compare.

#![allow(dead_code)] // each test file reads the parts it compares

use cmc_search::{Checker, Verdict};
use cmc_world::World;

/// What a search concluded: the violated property (or "pass"), the
/// counterexample's length, the distinct states.
#[derive(Debug)]
pub struct Concluded {
    pub verdict: String,
    pub length: Option<usize>,
    pub states: u64,
}

/// Searches `world` breadth-first to `max_depth` with two workers and no
/// deadlock check; panics on a fault or a search that does not conclude.
pub fn check(world: World, max_depth: u64) -> Concluded {
    conclude(Checker::new(world).max_depth(max_depth))
}

/// [`check`] with the determinism check on: every step is taken twice and
/// every successor's encoding compared with a full one.
pub fn check_determinism(world: World, max_depth: u64) -> Concluded {
    conclude(
        Checker::new(world)
            .max_depth(max_depth)
            .check_determinism(true),
    )
}

/// [`check_determinism`] depth-first: the state expanded is a copy, not
/// decoded from its bytes, so no successor's encoding is copied from them.
pub fn check_determinism_depth_first(world: World, max_depth: u64) -> Concluded {
    conclude(
        Checker::new(world)
            .dfs()
            .max_depth(max_depth)
            .check_determinism(true),
    )
}

/// The parameters of ABD as the gate runs it: two requests, a replica crash
/// and restart, symmetric replicas.
pub const ABD_GATE_PARAMS: [&str; 5] = [
    "requests=2",
    "crash_nodes=0,1,2",
    "crashes=1",
    "restarts=1",
    "symmetry=0,1,2",
];

/// Runs `checker` with two workers and no deadlock check.
fn conclude(checker: Checker<World>) -> Concluded {
    let checker = checker.workers(2).check_deadlock(false);
    let outcome = checker.run();
    assert!(
        checker.model().fault().is_none(),
        "{:?}",
        checker.model().fault()
    );
    let verdict = match &outcome.verdict {
        Verdict::Pass => "pass".to_string(),
        Verdict::Violated { property, .. } => property.clone(),
        other => panic!("the search did not conclude: {other:?}"),
    };
    Concluded {
        verdict,
        length: outcome.counterexample.as_ref().map(|trace| trace.len()),
        states: outcome.stats.distinct_states,
    }
}
