//! The fault budgets: how many of each environment fault a search may still
//! inject.

/// A fault budget: its index among a state's budgets, as
/// [`Inspect::budget`](crate::system::inspect::Inspect::budget) reads them.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::action::{Action, CrashAction};
/// use cmc_world::system::state::Budget;
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["crashes=1", "restarts=1"])?;
/// let world = World::new(spec);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// assert_eq!(world.inspect(&init[0]).budget(Budget::Crashes), 1);
/// let crash = Action::Crash(CrashAction::Crash { node: 0 });
/// let crashed = world.next_state(&init[0], &crash).expect("enabled");
/// let crashed = world.inspect(&crashed);
/// assert_eq!(crashed.budget(Budget::Crashes), 0);
/// assert_eq!(crashed.budget(Budget::Restarts), 1);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// DROP(m).
    Drops,
    /// DUP(m).
    Dups,
    /// CRASH(n).
    Crashes,
    /// RESTART(n).
    Restarts,
    /// LINKS(change).
    Partitions,
    /// TICK(n).
    Ticks,
    /// LOCAL_FAIL(r).
    LocalFails,
    /// LINK(src->dst): one direction of a link cut or healed.
    OneWayCuts,
    /// ISOLATE(n): every link to and from a node cut.
    Isolations,
    /// SPLIT(group): every link between two groups of nodes cut.
    Splits,
    /// RETRY(r): a client times out and sends its request again.
    Retries,
}

/// Number of [`Budget`] kinds.
pub const BUDGETS: usize = 11;

/// Each fault budget's parameter name (`drops=K`...) and what it allows
/// (for `--help` texts), in [`Budget`] order.
pub const BUDGET_NAMES: [(&str, Budget, &str); BUDGETS] = [
    ("drops", Budget::Drops, "DROP: a message in flight lost"),
    (
        "dups",
        Budget::Dups,
        "DUP: a copy more of a message in flight",
    ),
    (
        "crashes",
        Budget::Crashes,
        "CRASH n: a node loses its volatile state",
    ),
    (
        "restarts",
        Budget::Restarts,
        "RESTART n: a crashed node starts again",
    ),
    (
        "partitions",
        Budget::Partitions,
        "LINKS cut/heal n0-n1: both directions of a pair (a cut and its heal spend one each)",
    ),
    (
        "ticks",
        Budget::Ticks,
        "TICK n: a node's clock advances by one",
    ),
    (
        "local_fails",
        Budget::LocalFails,
        "LOCAL_FAIL: a request fails at its node",
    ),
    (
        "oneway_cuts",
        Budget::OneWayCuts,
        "LINK cut/heal src->dst: one direction only",
    ),
    (
        "isolations",
        Budget::Isolations,
        "ISOLATE n: every link to and from n cut at once",
    ),
    (
        "splits",
        Budget::Splits,
        "SPLIT: every link between two groups of nodes cut at once",
    ),
    (
        "retries",
        Budget::Retries,
        "RETRY: an open request sent again, to any client node",
    ),
];

impl Budget {
    /// The parameter name of the budget, e.g. `drops`.
    pub fn name(self) -> &'static str {
        BUDGET_NAMES[self as usize].0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_named_in_their_order() {
        for (at, (_, budget, _)) in BUDGET_NAMES.iter().enumerate() {
            assert_eq!(*budget as usize, at);
        }
    }
}
