//! Properties of any log-replication library checked under cmc, written once.
//!
//! An adapter says how to read a live node as a [`Replica`] (its term, whether
//! it leads, its log, how much of it is decided) from the node's view and
//! durable part; [`properties`] then gives the properties every replicated
//! log keeps:
//!
//! - `SingleLeaderPerTerm`: no two live nodes lead in the same term (ballot);
//! - `LogMatching`: two logs holding an entry of the same term at the same
//!   index agree up to that index (only for libraries whose entries carry a
//!   term, [`Replica::entry_terms`]);
//! - `DecidedPrefixesAgree`: the decided prefixes of any two live nodes are
//!   prefixes of one another, and a node holds every entry it has decided;
//! - `RepliedEntriesSurvive`: an entry a client was told is decided at index
//!   `i` is at `i` in every live node that has decided `i`, forever after;
//! - `Linearizable`: the appends clients made and the indices they were told
//!   are linearizable against a sequential log (cmc's checker);
//! - `ValueDecided` (a witness): some node decides an entry.
//!
//! The client contract the last three read: a client request `r` appends the
//! value `r`, and the node's reply is one byte, the index it was decided at.
//! [`client::Pending`] keeps an adapter's side of it.

pub mod client;

use std::sync::Arc;

use cmc_linearizability::SequentialSpec;
use cmc_model::Property;
use cmc_world::properties::consistency::{linearizable, ClientHistory, ReplyMeaning};
use cmc_world::system::inspect::NodeView;
use cmc_world::system::state::{GhostKind, WorldState};
use cmc_world::World;

/// One log entry as the properties see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The term (ballot) the entry was proposed in, if the library keeps one.
    pub term: Option<u64>,
    /// The value: the id of the client request that appended it.
    pub value: u32,
}

/// A live node as the properties see it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replica {
    /// The node's current term (ballot number).
    pub term: u64,
    /// Whether the node leads in `term`.
    pub leader: bool,
    /// The node's log.
    pub log: Vec<Entry>,
    /// How many entries of the log are decided (committed).
    pub decided: usize,
}

impl Replica {
    /// The decided prefix; a node that claims more decided entries than it
    /// holds has lost some, and its prefix is cut at what it holds.
    pub fn decided_prefix(&self) -> &[Entry] {
        &self.log[..self.decided.min(self.log.len())]
    }

    /// Whether this library's entries carry terms.
    pub fn entry_terms(&self) -> bool {
        self.log.iter().all(|entry| entry.term.is_some())
    }
}

/// How an adapter reads live node `node`: its view and durable part decoded.
pub type ReadReplica = dyn Fn(usize, &NodeView<'_>) -> Replica + Send + Sync;

/// The live nodes of `state`, read by `read` (a crashed node is `None`).
pub fn replicas(world: &World, state: &WorldState, read: &ReadReplica) -> Vec<Option<Replica>> {
    let inspect = world.inspect(state);
    (0..inspect.nodes())
        .map(|node| {
            let view = inspect.node(node);
            (!view.env.crashed).then(|| read(node, &view))
        })
        .collect()
}

/// Every property above, over the nodes as `read` sees them.
pub fn properties(read: Arc<ReadReplica>) -> Vec<Property<World>> {
    let with = |holds: fn(&[Replica]) -> bool| {
        let read = read.clone();
        move |world: &World, state: &WorldState| {
            let live: Vec<Replica> = replicas(world, state, &*read)
                .into_iter()
                .flatten()
                .collect();
            holds(&live)
        }
    };
    let survive = {
        let read = read.clone();
        move |world: &World, state: &WorldState| replied_entries_survive(world, state, &*read)
    };
    let decided = {
        let read = read.clone();
        move |world: &World, state: &WorldState| {
            replicas(world, state, &*read)
                .iter()
                .flatten()
                .any(|replica| !replica.decided_prefix().is_empty())
        }
    };
    vec![
        Property::always("SingleLeaderPerTerm", with(single_leader_per_term)),
        Property::always("LogMatching", with(log_matching)),
        Property::always("DecidedPrefixesAgree", with(decided_prefixes_agree)),
        Property::always("RepliedEntriesSurvive", survive),
        linearizable(appends()),
        Property::sometimes("ValueDecided", decided),
    ]
}

/// No two nodes lead in the same term.
pub fn single_leader_per_term(live: &[Replica]) -> bool {
    pairs(live).all(|(a, b)| !(a.leader && b.leader && a.term == b.term))
}

/// Two entries of the same term at the same index mean equal prefixes.
pub fn log_matching(live: &[Replica]) -> bool {
    pairs(live).all(|(a, b)| {
        let shared = a.log.len().min(b.log.len());
        let last_match = (0..shared)
            .rev()
            .find(|&index| a.log[index].term.is_some() && a.log[index].term == b.log[index].term);
        last_match.is_none_or(|index| a.log[..=index] == b.log[..=index])
    })
}

/// Decided prefixes are prefixes of one another, and no node has decided
/// more than it holds.
pub fn decided_prefixes_agree(live: &[Replica]) -> bool {
    live.iter()
        .all(|replica| replica.decided <= replica.log.len())
        && pairs(live).all(|(a, b)| {
            let (a, b) = (a.decided_prefix(), b.decided_prefix());
            let shared = a.len().min(b.len());
            a[..shared] == b[..shared]
        })
}

/// Every reply "request `r` is decided at index `i`" still holds in every
/// live node that has decided index `i`.
fn replied_entries_survive(world: &World, state: &WorldState, read: &ReadReplica) -> bool {
    let live: Vec<Replica> = replicas(world, state, read).into_iter().flatten().collect();
    world
        .inspect(state)
        .ghost()
        .iter()
        .filter(|entry| entry.kind == GhostKind::Reply)
        .all(|reply| {
            let Some(&index) = reply.payload.as_bytes().first() else {
                return false;
            };
            live.iter().all(|replica| {
                replica
                    .decided_prefix()
                    .get(index as usize)
                    .is_none_or(|entry| entry.value == reply.request)
            })
        })
}

/// A sequential log: appending returns the index the entry lands at.
#[derive(Clone, Copy)]
pub struct SequentialLog;

impl SequentialSpec for SequentialLog {
    /// The log's length.
    type State = u32;
    /// An append (the value does not decide the index).
    type Op = ();
    /// The index the append landed at.
    type Ret = u32;

    fn init(&self) -> u32 {
        0
    }

    fn apply(&self, length: &u32, _: &()) -> (u32, u32) {
        (length + 1, *length)
    }
}

/// The clients' appends as a history of [`SequentialLog`] operations.
pub fn appends() -> ClientHistory<SequentialLog> {
    ClientHistory::new(
        SequentialLog,
        |_request, _node| (),
        |_: &(), reply: &[u8]| match reply {
            [index] => ReplyMeaning::Returned(u32::from(*index)),
            _ => ReplyMeaning::Refused,
        },
    )
}

fn pairs(live: &[Replica]) -> impl Iterator<Item = (&Replica, &Replica)> {
    live.iter()
        .enumerate()
        .flat_map(move |(i, a)| live[i + 1..].iter().map(move |b| (a, b)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replica(log: &[(u64, u32)], decided: usize) -> Replica {
        Replica {
            term: 1,
            leader: false,
            log: log
                .iter()
                .map(|&(term, value)| Entry {
                    term: Some(term),
                    value,
                })
                .collect(),
            decided,
        }
    }

    #[test]
    fn decided_prefixes_agree_when_one_extends_the_other() {
        let a = replica(&[(1, 7), (1, 8)], 2);
        let b = replica(&[(1, 7), (2, 9)], 1);
        assert!(decided_prefixes_agree(&[a.clone(), b]));
        let c = replica(&[(2, 9)], 1);
        assert!(!decided_prefixes_agree(&[a, c]));
    }

    #[test]
    fn a_node_that_decided_more_than_it_holds_violates_agreement() {
        assert!(!decided_prefixes_agree(&[replica(&[(1, 7)], 2)]));
    }

    #[test]
    fn log_matching_compares_prefixes_up_to_the_last_entry_of_a_shared_term() {
        let a = replica(&[(1, 7), (2, 8)], 0);
        assert!(log_matching(&[a.clone(), replica(&[(1, 7), (3, 9)], 0)]));
        assert!(!log_matching(&[a, replica(&[(1, 6), (2, 8)], 0)]));
    }

    #[test]
    fn two_leaders_of_one_term_are_caught() {
        let leader = Replica {
            leader: true,
            ..replica(&[], 0)
        };
        assert!(!single_leader_per_term(&[leader.clone(), leader.clone()]));
        let later = Replica {
            term: 2,
            ..leader.clone()
        };
        assert!(single_leader_per_term(&[leader, later]));
    }
}
