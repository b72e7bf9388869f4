//! Counts per action kind ([`cmc_model::Model::action_kind`]): how often each
//! kind was enabled and taken. Workers keep their own [`KindTally`]; the
//! search merges them into a [`Coverage`].

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use cmc_model::ActionKind;
use serde::Serialize;

/// How often one action kind was enabled and taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct KindCount {
    /// Whether the kind is an injected fault.
    pub fault: bool,
    /// Times an action of this kind was enabled in a state explored (its
    /// successor was computed).
    pub enabled: u64,
    /// Times it was taken: by a random walk, the step it took; by an
    /// exhaustive search, a step that reached a state not seen before (so
    /// the counts of every kind add up to the distinct states found beyond
    /// the initial ones; with several BFS workers, which of two actions
    /// reaching the same new state counts it can depend on timing).
    pub taken: u64,
}

/// One worker's counts, keyed by kind name.
#[derive(Debug, Default)]
pub(crate) struct KindTally {
    counts: HashMap<Cow<'static, str>, KindCount>,
}

impl KindTally {
    fn entry(&mut self, kind: ActionKind) -> &mut KindCount {
        let count = self.counts.entry(kind.name).or_default();
        count.fault |= kind.fault;
        count
    }

    /// An action of `kind` was enabled.
    pub fn enabled(&mut self, kind: ActionKind) {
        self.entry(kind).enabled += 1;
    }

    /// An action of `kind` was taken.
    pub fn taken(&mut self, kind: ActionKind) {
        self.entry(kind).taken += 1;
    }

    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: KindTally) {
        for (name, count) in other.counts {
            let mine = self.counts.entry(name).or_default();
            mine.fault |= count.fault;
            mine.enabled += count.enabled;
            mine.taken += count.taken;
        }
    }

    /// The counts by name, in name order.
    pub fn into_sorted(self) -> BTreeMap<String, KindCount> {
        self.counts
            .into_iter()
            .map(|(name, count)| (name.into_owned(), count))
            .collect()
    }
}

/// Coverage of a search (`--coverage`): every action kind seen, and the
/// kinds the model declares it can take ([`cmc_model::Model::action_kinds`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Coverage {
    /// Counts per kind name, for every kind enabled or taken at least once.
    pub kinds: BTreeMap<String, KindCount>,
    /// The kinds the model declares (a fault kind listed there has a budget).
    pub declared: Vec<ActionKind>,
}

impl Coverage {
    /// The coverage of `tally` for a model declaring `declared`: declared
    /// kinds never seen are listed with zero counts.
    pub(crate) fn new(tally: KindTally, declared: Vec<ActionKind>) -> Coverage {
        let mut kinds = tally.into_sorted();
        for kind in &declared {
            kinds.entry(kind.name.to_string()).or_insert(KindCount {
                fault: kind.fault,
                ..KindCount::default()
            });
        }
        Coverage { kinds, declared }
    }

    /// Kinds never taken, in name order.
    pub fn never_taken(&self) -> Vec<String> {
        self.kinds
            .iter()
            .filter(|(_, count)| count.taken == 0)
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Fault kinds the model declares (they have a budget) that never
    /// occurred: the search did not exercise that fault.
    pub fn budgeted_faults_never_taken(&self) -> Vec<String> {
        self.declared
            .iter()
            .filter(|kind| kind.fault)
            .filter(|kind| {
                self.kinds
                    .get(kind.name.as_ref())
                    .is_none_or(|c| c.taken == 0)
            })
            .map(|kind| kind.name.to_string())
            .collect()
    }
}
