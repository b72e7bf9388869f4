//! The journal of heap-state nodes: for each (node id, view) reached, the
//! history that first reached it, as a tree of steps rooted at a START.
//!
//! An entry is a START (the durable bytes the node was created from) or an
//! event delivered to the node reached by its parent entry. The table is
//! shared by the search's workers and only grows: an entry is never
//! changed or removed, so an id, once handed out, names the same history
//! for the rest of the run. The newest different history that reaches a
//! view already in the table is kept as that view's *alternative*, for the
//! check that equal views behave alike.

use std::collections::HashMap;
use std::sync::Mutex;

use xxhash_rust::xxh3::Xxh3;

use crate::core::abi::Event;

/// An entry of the journal.
pub type EntryId = u32;

/// Where a history starts, or one step of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The node was created from these flushed durable bytes.
    Start {
        /// The durable part at the START.
        durable: Box<[u8]>,
    },
    /// `event` was delivered to the node that `parent` describes.
    Step {
        /// The entry of the pre-state.
        parent: EntryId,
        /// The event delivered.
        event: Event,
    },
}

/// The views reached by one (node, view) key.
#[derive(Debug, Clone, Copy)]
struct Slot {
    first: EntryId,
    alternative: Option<EntryId>,
}

#[derive(Default)]
struct Table {
    records: Vec<Record>,
    slots: HashMap<u128, Slot>,
}

/// The histories of a run's heap-state nodes, keyed by (node id, view).
#[derive(Default)]
pub struct Journal {
    table: Mutex<Table>,
}

/// The histories known for one (node, view).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Known {
    /// The history that first reached the view.
    pub first: EntryId,
    /// A different history that reached it later, if any.
    pub alternative: Option<EntryId>,
}

impl Journal {
    /// An empty journal.
    pub fn new() -> Journal {
        Journal::default()
    }

    /// The key of node `node` in view `view`.
    pub fn key(node: u32, view: &[u8]) -> u128 {
        let mut hasher = Xxh3::new();
        hasher.update(&node.to_le_bytes());
        hasher.update(view);
        hasher.digest128()
    }

    /// The histories known to reach `key`, if any.
    pub fn lookup(&self, key: u128) -> Option<Known> {
        let table = self.lock();
        table.slots.get(&key).map(|slot| Known {
            first: slot.first,
            alternative: slot.alternative,
        })
    }

    /// Records that `record` reaches `key`: a new key's first history, or,
    /// when `record` differs from the last records of the key's histories,
    /// its alternative (the newest different history replaces an older one,
    /// so that the checks of equal views meet many histories, not one).
    /// Returns the key's histories.
    pub fn record(&self, key: u128, record: Record) -> Known {
        let mut table = self.lock();
        let table = &mut *table;
        match table.slots.get(&key).copied() {
            None => {
                let id = push(&mut table.records, record);
                table.slots.insert(
                    key,
                    Slot {
                        first: id,
                        alternative: None,
                    },
                );
                Known {
                    first: id,
                    alternative: None,
                }
            }
            Some(slot) => {
                let same = table.records[slot.first as usize] == record
                    || slot
                        .alternative
                        .is_some_and(|alternative| table.records[alternative as usize] == record);
                if same {
                    return Known {
                        first: slot.first,
                        alternative: slot.alternative,
                    };
                }
                let id = push(&mut table.records, record);
                let known = Known {
                    first: slot.first,
                    alternative: Some(id),
                };
                table.slots.insert(
                    key,
                    Slot {
                        first: known.first,
                        alternative: known.alternative,
                    },
                );
                known
            }
        }
    }

    /// The history ending at `entry`: the durable bytes of its START and the
    /// events since, oldest first.
    pub fn history(&self, entry: EntryId) -> (Box<[u8]>, Vec<Event>) {
        let table = self.lock();
        let mut events = Vec::new();
        let mut at = entry;
        loop {
            match &table.records[at as usize] {
                Record::Start { durable } => {
                    events.reverse();
                    return (durable.clone(), events);
                }
                Record::Step { parent, event } => {
                    events.push(*event);
                    at = *parent;
                }
            }
        }
    }

    /// Number of entries recorded.
    pub fn len(&self) -> usize {
        self.lock().records.len()
    }

    /// Whether nothing has been recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // The table is consistent between statements: a panic elsewhere
        // while it was held leaves it usable.
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

fn push(records: &mut Vec<Record>, record: Record) -> EntryId {
    let id = EntryId::try_from(records.len()).expect("fewer than 2^32 journal entries");
    records.push(record);
    id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::abi::EventKind;

    fn event(id: u32) -> Event {
        Event::new(EventKind::Client, 0, id, &[], 0)
    }

    #[test]
    fn a_history_is_rebuilt_from_its_start() {
        let journal = Journal::new();
        let root = journal.record(
            1,
            Record::Start {
                durable: vec![7].into(),
            },
        );
        let one = journal.record(
            2,
            Record::Step {
                parent: root.first,
                event: event(1),
            },
        );
        let two = journal.record(
            3,
            Record::Step {
                parent: one.first,
                event: event(2),
            },
        );
        let (durable, events) = journal.history(two.first);
        assert_eq!(&*durable, &[7]);
        assert_eq!(events, [event(1), event(2)]);
    }

    #[test]
    fn the_newest_different_history_to_a_view_is_its_alternative() {
        let journal = Journal::new();
        let root = journal.record(
            1,
            Record::Start {
                durable: vec![].into(),
            },
        );
        let first = journal.record(
            9,
            Record::Step {
                parent: root.first,
                event: event(1),
            },
        );
        assert_eq!(first.alternative, None);
        // The same step again (the determinism gate's second run) is no alternative.
        let again = journal.record(
            9,
            Record::Step {
                parent: root.first,
                event: event(1),
            },
        );
        assert_eq!(again, first);
        let other = journal.record(
            9,
            Record::Step {
                parent: root.first,
                event: event(2),
            },
        );
        assert_eq!(other.first, first.first);
        let alternative = other.alternative.expect("a different history is kept");
        assert_eq!(journal.history(alternative).1, [event(2)]);
        // A third history replaces it; the first stays.
        let third = journal.record(
            9,
            Record::Step {
                parent: root.first,
                event: event(3),
            },
        );
        assert_eq!(third.first, first.first);
        assert_eq!(journal.history(third.alternative.unwrap()).1, [event(3)]);
        assert_eq!(journal.lookup(9), Some(third));
        assert_eq!(journal.lookup(10), None);
    }
}
