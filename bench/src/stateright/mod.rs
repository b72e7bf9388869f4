//! The stateright anchor: stateright 0.31's own example models, checked by
//! its breadth-first checker.

mod paxos;
mod two_phase;

use std::time::Instant;

use stateright::{Checker, Expectation, Model};

pub use paxos::PaxosModelCfg;
pub use two_phase::TwoPhaseSys;

use crate::sample::Sample;

/// Checks `model` with stateright's BFS checker on `threads` threads.
///
/// The verdict is `pass` unless an `always` property has a counterexample
/// (`violated`) or a `sometimes` property was never reached (`vacuous`).
pub fn check<M>(model: M, threads: usize) -> Sample
where
    M: Model + Send + Sync + 'static,
    M::State: Clone + PartialEq + std::hash::Hash + Send + Sync + 'static,
    M::Action: Clone + PartialEq,
{
    let properties = model.properties();
    let started = Instant::now();
    let checker = model.checker().threads(threads).spawn_bfs().join();
    let wall = started.elapsed();
    let discoveries = checker.discoveries();
    let verdict = if properties
        .iter()
        .any(|p| p.expectation == Expectation::Always && discoveries.contains_key(p.name))
    {
        "violated"
    } else if properties
        .iter()
        .any(|p| p.expectation == Expectation::Sometimes && !discoveries.contains_key(p.name))
    {
        "vacuous"
    } else {
        "pass"
    };
    Sample {
        distinct: checker.unique_state_count() as u64,
        generated: checker.state_count() as u64,
        depth: checker.max_depth() as u64,
        wall,
        table_bytes: 0,
        peak_rss_bytes: 0,
        verdict: verdict.into(),
    }
}
