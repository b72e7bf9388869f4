//! The sequential specification a history is checked against.

use std::fmt::Debug;
use std::hash::Hash;

/// What an object does when its operations run one at a time.
///
/// Contract: [`apply`](SequentialSpec::apply) is a pure function; states that
/// compare equal behave the same (the search merges them).
pub trait SequentialSpec {
    /// The object's state.
    type State: Clone + Hash + Eq + Debug;
    /// An operation, with its arguments.
    type Op: Clone + Debug;
    /// What an operation returns.
    type Ret: Clone + PartialEq + Debug;

    /// The initial state.
    fn init(&self) -> Self::State;

    /// The state after `op` runs in `state`, and what `op` returns.
    fn apply(&self, state: &Self::State, op: &Self::Op) -> (Self::State, Self::Ret);

    /// The partition `op` belongs to, if operations of different partitions
    /// never affect one another (e.g. a map's keys); `None` (the default) puts
    /// every operation in one partition.
    ///
    /// Contract: if it returns `Some` for some operation, then the object is
    /// the product of independent objects, one per partition, each starting
    /// from [`init`](SequentialSpec::init).
    fn partition(&self, _op: &Self::Op) -> Option<u64> {
        None
    }
}
