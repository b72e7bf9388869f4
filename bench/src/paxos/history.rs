//! Linearizability of the clients' history against a register (stateright's
//! `LinearizabilityTester<Id, Register<char>>` and its
//! `serialized_history().is_some()`), searching the same interleavings
//! over the history the clients' states hold, without allocating.
//!
//! Client `t`'s operations are its write of its own value (invoked at the
//! start, when nothing had completed) and then its read; a completed
//! operation must be ordered, one in flight may be.

use super::client::{Client, Phase};
use super::messages::{Value, MAX_CLIENTS};

/// One operation of the history.
#[derive(Clone, Copy)]
struct Op {
    /// `Some(value)` for a write, `None` for a read.
    write: Option<Value>,
    /// For each client, how many of its operations completed before this
    /// one was invoked (those must be ordered first).
    after: [u8; MAX_CLIENTS],
    /// What a completed read returned.
    read: Value,
}

/// The search over one history.
struct Search<'a> {
    clients: &'a [Client],
}

impl Search<'_> {
    fn op(&self, thread: usize, position: u8) -> Op {
        let client = self.clients[thread];
        if position == 0 {
            Op {
                write: Some(Value::written_by(thread)),
                after: [0; MAX_CLIENTS],
                read: Value::default(),
            }
        } else {
            Op {
                write: None,
                after: client.read_after,
                read: client.read,
            }
        }
    }

    fn completed(&self, thread: usize) -> u8 {
        self.clients[thread].phase.completed()
    }

    /// Whether ordering `op` now would put it before an operation that had
    /// completed when it was invoked.
    fn violates(&self, op: &Op, next: &[u8; MAX_CLIENTS]) -> bool {
        (0..self.clients.len())
            .any(|peer| next[peer] < self.completed(peer) && next[peer] < op.after[peer])
    }

    /// Whether the operations not yet ordered (each client's completed ones
    /// from `next` on, and the in-flight ones not in `flown`) can follow a
    /// register holding `value`.
    fn serialize(
        &self,
        value: Value,
        next: &mut [u8; MAX_CLIENTS],
        flown: &mut [bool; MAX_CLIENTS],
    ) -> bool {
        let threads = 0..self.clients.len();
        if threads
            .clone()
            .all(|thread| next[thread] == self.completed(thread))
        {
            return true;
        }
        for thread in threads {
            let position = next[thread];
            if position < self.completed(thread) {
                let op = self.op(thread, position);
                next[thread] += 1;
                let found = !self.violates(&op, next)
                    && match op.write {
                        Some(written) => self.serialize(written, next, flown),
                        None => op.read == value && self.serialize(value, next, flown),
                    };
                next[thread] -= 1;
                if found {
                    return true;
                }
            } else if self.clients[thread].phase != Phase::Done && !flown[thread] {
                let op = self.op(thread, position);
                if self.violates(&op, next) {
                    continue;
                }
                flown[thread] = true;
                let found = self.serialize(op.write.unwrap_or(value), next, flown);
                flown[thread] = false;
                if found {
                    return true;
                }
            }
        }
        false
    }
}

/// Whether some total order of the clients' operations respects real time
/// and the register's semantics (the register starts at `'\0'`).
pub fn is_linearizable(clients: &[Client]) -> bool {
    let search = Search { clients };
    search.serialize(
        Value::default(),
        &mut [0; MAX_CLIENTS],
        &mut [false; MAX_CLIENTS],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(phase: Phase, read_after: [u8; MAX_CLIENTS], read: u8) -> Client {
        Client {
            phase,
            read_after,
            read: Value(read),
        }
    }

    #[test]
    fn reading_a_completed_write_is_linearizable() {
        // Client 0 wrote 'A' and read it after client 1's write completed.
        let clients = [
            client(Phase::Done, [0, 1, 0, 0], 1),
            client(Phase::Getting, [0; 4], 0),
        ];
        assert!(is_linearizable(&clients));
    }

    #[test]
    fn reading_the_initial_value_after_writes_completed_is_not() {
        let clients = [
            client(Phase::Done, [0, 1, 0, 0], 0),
            client(Phase::Getting, [0; 4], 0),
        ];
        assert!(!is_linearizable(&clients));
    }

    #[test]
    fn a_read_may_see_a_concurrent_write() {
        for read in [1, 2] {
            let clients = [
                client(Phase::Done, [0, 0, 0, 0], read),
                client(Phase::Putting, [0; 4], 0),
            ];
            assert!(is_linearizable(&clients), "read {read}");
        }
    }

    #[test]
    fn a_read_cannot_return_a_value_overwritten_before_it_began() {
        // Client 1 read 'B' after client 0's write of 'A' completed, so 'B'
        // was written after 'A'; client 0's read began after client 1's
        // read completed, so it must see 'B', not 'A'.
        let clients = [
            client(Phase::Done, [0, 2, 0, 0], 1),
            client(Phase::Done, [1, 0, 0, 0], 2),
        ];
        assert!(!is_linearizable(&clients));
    }
}
