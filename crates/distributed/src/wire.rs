//! What workers send each other: batches of successor states for their
//! owners, and the control messages of the level protocol.

use cmc_model::Fingerprint;
use cmc_search::{Failure, ViolationKind};
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;

/// Bytes of a batch of states before it is sent (amortizes the per-message
/// cost of the exchange without holding a level's successors in one buffer).
pub(crate) const BATCH_BYTES: usize = 64 * 1024;

/// The marker of "no parent": no fingerprint is zero (neither half is).
pub(crate) const NO_PARENT: u128 = 0;

/// Bytes of a record's header: parent fingerprint, step, state length.
const RECORD_HEADER_BYTES: usize = 16 + 4 + 4;

/// One message of the dataflow, addressed to one worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Message {
    /// Successor states owned by worker `to`, as records (see [`RecordWriter`]).
    States { to: u32, records: ByteBuf },
    /// A control message for worker `to`.
    Control { to: u32, control: Control },
}

impl Message {
    /// The worker the message is for (the exchange routes by it).
    pub fn to(&self) -> u64 {
        match self {
            Message::States { to, .. } | Message::Control { to, .. } => u64::from(*to),
        }
    }
}

/// The control messages of the level protocol.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Control {
    /// What a worker found while a level was expanded and admitted.
    LevelDone(LevelSummary),
    /// The parent link of `fingerprint`, sent by its owner while a
    /// counterexample is walked back.
    Link {
        fingerprint: u128,
        parent: u128,
        step: u32,
    },
    /// The owner of `fingerprint` has no parent link for it (a cmc bug).
    Missing { fingerprint: u128 },
    /// Whether `worker` saved its part of a checkpoint (or committed its
    /// process's): why not, if it did not.
    Saved { worker: u32, error: Option<String> },
}

/// One worker's figures for one level, broadcast to every worker so that
/// all of them take the same decision.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct LevelSummary {
    /// The sending worker.
    pub worker: u32,
    /// States it admitted as new in this level.
    pub new_states: u64,
    /// States it generated (successors computed, or initial states).
    pub generated: u64,
    /// The least violation it found.
    pub violation: Option<Candidate>,
    /// The `sometimes` witnesses it has reached so far.
    pub witnesses: Vec<String>,
    /// Why it could not go on, if it could not.
    pub error: Option<String>,
    /// Whether its process was asked to stop.
    pub interrupted: bool,
    /// Whether, by its clock, a checkpoint is due.
    pub checkpoint_due: bool,
    /// Bytes of state records it has sent so far to other workers.
    pub sent_bytes: u64,
    /// Of those, bytes sent to workers of other processes.
    pub remote_bytes: u64,
}

/// The kind of a violated property, as sent between workers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub(crate) enum KindTag {
    Invariant,
    Step,
    Deadlock,
}

impl From<ViolationKind> for KindTag {
    fn from(kind: ViolationKind) -> KindTag {
        match kind {
            ViolationKind::Invariant => KindTag::Invariant,
            ViolationKind::Step => KindTag::Step,
            ViolationKind::Deadlock => KindTag::Deadlock,
        }
    }
}

impl From<KindTag> for ViolationKind {
    fn from(kind: KindTag) -> ViolationKind {
        match kind {
            KindTag::Invariant => ViolationKind::Invariant,
            KindTag::Step => ViolationKind::Step,
            KindTag::Deadlock => ViolationKind::Deadlock,
        }
    }
}

/// A violation found by one worker: enough to order it against the others
/// and to rebuild its counterexample.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Candidate {
    /// Counterexample length in states.
    pub length: u64,
    /// The property's rank in declaration order (deadlock last).
    pub rank: usize,
    /// The property's name.
    pub name: String,
    pub kind: KindTag,
    /// Fingerprint of the counterexample's last state.
    pub fingerprint: u128,
    /// The last state whose parent link the counterexample follows: the
    /// violating state, or a step violation's pre-state.
    pub anchor: u128,
    /// For a step violation: the offending action's index.
    pub step_action: Option<u32>,
}

impl Candidate {
    /// A violation of `failure`, `length` states long.
    pub fn new(
        failure: Failure,
        length: u64,
        fingerprint: Fingerprint,
        anchor: Fingerprint,
        step_action: Option<u32>,
    ) -> Candidate {
        Candidate {
            length,
            rank: failure.rank,
            name: failure.name,
            kind: failure.kind.into(),
            fingerprint: fingerprint.0,
            anchor: anchor.0,
            step_action,
        }
    }

    /// The native engine's order (length, property rank, fingerprint), with
    /// the path's anchor and action as tie-breaks so that the choice never
    /// depends on arrival order.
    fn key(&self) -> (u64, usize, u128, u128, Option<u32>) {
        (
            self.length,
            self.rank,
            self.fingerprint,
            self.anchor,
            self.step_action,
        )
    }

    /// Keeps the lesser of `best` and `candidate` in `best`.
    pub fn keep_least(best: &mut Option<Candidate>, candidate: Candidate) {
        if best.as_ref().is_none_or(|b| candidate.key() < b.key()) {
            *best = Some(candidate);
        }
    }
}

/// Appends state records to a batch: parent fingerprint (16 bytes), step
/// (4), state length (4), all little-endian, then the state's canonical bytes.
#[derive(Debug, Default)]
pub(crate) struct RecordWriter {
    bytes: Vec<u8>,
}

impl RecordWriter {
    /// Appends one record.
    pub fn push(&mut self, parent: u128, step: u32, state: &[u8]) {
        let length = u32::try_from(state.len()).expect("a state encoding is under 4 GiB");
        self.bytes.reserve(RECORD_HEADER_BYTES + state.len());
        self.bytes.extend_from_slice(&parent.to_le_bytes());
        self.bytes.extend_from_slice(&step.to_le_bytes());
        self.bytes.extend_from_slice(&length.to_le_bytes());
        self.bytes.extend_from_slice(state);
    }

    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether no record was written.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The batch written so far; the writer starts a new one in `buffer`
    /// (cleared first: a buffer received earlier can be used again).
    pub fn take(&mut self, mut buffer: Vec<u8>) -> ByteBuf {
        buffer.clear();
        ByteBuf::from(std::mem::replace(&mut self.bytes, buffer))
    }
}

/// One state record read back from a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record<'a> {
    pub parent: u128,
    pub step: u32,
    pub state: &'a [u8],
}

/// Reads the records of a batch written by [`RecordWriter`]; a malformed
/// batch is an error, never a panic.
pub(crate) fn records(batch: &[u8]) -> impl Iterator<Item = Result<Record<'_>, String>> {
    let mut rest = batch;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() < RECORD_HEADER_BYTES {
            rest = &[];
            return Some(Err("a state batch ends inside a record header".into()));
        }
        let parent = u128::from_le_bytes(rest[..16].try_into().expect("16 bytes"));
        let step = u32::from_le_bytes(rest[16..20].try_into().expect("4 bytes"));
        let length = u32::from_le_bytes(rest[20..24].try_into().expect("4 bytes")) as usize;
        let body = &rest[RECORD_HEADER_BYTES..];
        if body.len() < length {
            rest = &[];
            return Some(Err("a state batch ends inside a state".into()));
        }
        rest = &body[length..];
        Some(Ok(Record {
            parent,
            step,
            state: &body[..length],
        }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_truncation_is_an_error() {
        let mut writer = RecordWriter::default();
        writer.push(7, 1, b"abc");
        writer.push(NO_PARENT, 2, b"");
        let batch = writer.take(Vec::new());
        assert!(writer.is_empty());
        let read: Vec<Record> = records(&batch).map(Result::unwrap).collect();
        assert_eq!(
            read,
            vec![
                Record {
                    parent: 7,
                    step: 1,
                    state: b"abc"
                },
                Record {
                    parent: NO_PARENT,
                    step: 2,
                    state: b""
                }
            ]
        );
        let cut = &batch[..batch.len() - RECORD_HEADER_BYTES - 1];
        assert!(records(cut).any(|record| record.is_err()));
    }

    #[test]
    fn the_least_candidate_is_kept_whatever_the_order() {
        let failure = |rank| Failure {
            rank,
            name: format!("p{rank}"),
            kind: ViolationKind::Invariant,
        };
        let short = Candidate::new(failure(1), 3, Fingerprint(9), Fingerprint(9), None);
        let early_rank = Candidate::new(failure(0), 4, Fingerprint(1), Fingerprint(1), None);
        let mut best = None;
        Candidate::keep_least(&mut best, early_rank.clone());
        Candidate::keep_least(&mut best, short.clone());
        assert_eq!(best, Some(short.clone()));
        let mut best = None;
        Candidate::keep_least(&mut best, short.clone());
        Candidate::keep_least(&mut best, early_rank);
        assert_eq!(best, Some(short));
    }
}
