//! The interface every search strategy implements, and the list of them.
//!
//! A strategy is a value holding its own parameters (a unit struct when it
//! has none) that implements [`Explore`] in a file of its own: how reports
//! name it, which of its parameters can change a verdict, what bounds it,
//! and its run. [`Strategy`] is what a user chooses; adding a strategy is
//! its file plus its registration here: a variant and one arm in each of
//! [`Strategy::describe`] and [`Strategy::run`].

use cmc_model::Model;

use crate::{Outcome, SearchOptions};

/// What reports and replay files say about a strategy (the part of
/// [`Explore`] that does not depend on the model).
pub(crate) trait Describe {
    /// The strategy's name as reports print it (`bfs`, `dfs`, `simulate`).
    fn name(&self) -> &'static str;

    /// The strategy's own settings that can change a verdict, as `NAME` or
    /// `NAME=VALUE`, appended to `out` (none by default).
    fn verdict_settings(&self, out: &mut Vec<String>) {
        let _ = out;
    }

    /// What stops the search short of every reachable state, if anything
    /// does, leaving out a distinct-state budget; by default the depth
    /// bound of `options` ([`depth_bound`]).
    fn bound(&self, options: &SearchOptions) -> Option<String> {
        depth_bound(options)
    }

    /// Worker threads the search runs (by default `options.workers`).
    fn workers(&self, options: &SearchOptions) -> usize {
        options.workers.max(1)
    }
}

/// A search strategy: one way of exploring any model.
pub(crate) trait Explore: Describe {
    /// Explores `model` as `options` say (they name this strategy) and
    /// returns what was found. A strategy stops at a state boundary when
    /// [`SearchOptions::interrupt`] is raised; counting, property checks
    /// and parent links go through `crate::expand` for exhaustive ones, so
    /// that every strategy counts alike.
    fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M>;
}

/// The exploration order, with the parameters of the strategy chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Strategy {
    /// Breadth-first, level by level: exact counts, shortest counterexamples.
    Bfs,
    /// Depth-first from each initial state (one worker), bounded by
    /// [`SearchOptions::max_depth`] when set. A state first met deep in one
    /// branch is not re-expanded when met shallower in another, so with a
    /// depth bound DFS may miss states that BFS with the same bound finds.
    Dfs,
    /// Random walks ([`RandomWalks`]).
    Simulate(RandomWalks),
    /// Breadth-first over the model's coarse view
    /// ([`cmc_model::Model::coarse_view`]), one worker: a state is expanded
    /// only if its view is new. A directed search for deep bugs: its
    /// counterexamples are real, a run without one proves nothing.
    ViewBfs,
}

/// Random walks: `walks` walks of at most `walk_length` steps; walk `i` is
/// drawn from a generator seeded by `(seed, i)`, so a seed gives the same
/// walks for every worker count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RandomWalks {
    /// Number of walks.
    pub walks: u64,
    /// Most steps per walk.
    pub walk_length: u64,
    /// The seed.
    pub seed: u64,
}

impl Strategy {
    /// What reports say about the strategy.
    pub(crate) fn describe(&self) -> &dyn Describe {
        match self {
            Strategy::Bfs => &crate::bfs::BreadthFirst,
            Strategy::Dfs => &crate::dfs::DepthFirst,
            Strategy::Simulate(walks) => walks,
            Strategy::ViewBfs => &crate::view_bfs::ViewBfs,
        }
    }

    /// Runs the strategy on `model`.
    pub(crate) fn run<M: Model>(&self, model: &M, options: &SearchOptions) -> Outcome<M> {
        match self {
            Strategy::Bfs => crate::bfs::BreadthFirst.run(model, options),
            Strategy::Dfs => crate::dfs::DepthFirst.run(model, options),
            Strategy::Simulate(walks) => walks.run(model, options),
            Strategy::ViewBfs => crate::view_bfs::ViewBfs.run(model, options),
        }
    }
}

/// The depth bound of `options` as reports state it, with the walks from
/// the frontier that follow it, if any.
pub(crate) fn depth_bound(options: &SearchOptions) -> Option<String> {
    let depth = options.max_depth?;
    Some(match options.frontier_walks {
        Some(frontier) => format!(
            "depth {depth}, then {} from each frontier state",
            walks_text(frontier.rounds, frontier.walk_length)
        ),
        None => format!("depth {depth}"),
    })
}

/// "`walks` random walks of at most `length` steps", with plurals.
pub(crate) fn walks_text(walks: u64, length: u64) -> String {
    format!(
        "{walks} random walk{} of at most {length} step{}",
        if walks == 1 { "" } else { "s" },
        if length == 1 { "" } else { "s" }
    )
}
