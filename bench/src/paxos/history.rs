//! The history the Paxos model keeps as auxiliary state: a port of
//! stateright's `LinearizabilityTester<Id, Register<char>>`, with the same
//! contents (so the same states are told apart) and the same search for a
//! linearization.

use std::collections::BTreeMap;

use cmc_model::{encode_fields, DecodeError, Decoder, Encode};

use super::messages::{Id, Value};

/// An operation on the register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterOp {
    /// Write a value.
    Write(Value),
    /// Read the value.
    Read,
}

/// What an operation on the register returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RegisterRet {
    /// A write succeeded.
    WriteOk,
    /// A read returned a value.
    ReadOk(Value),
}

/// For each other thread, the index of the last operation it had completed
/// when an operation was invoked (the real-time order to respect).
pub type LastCompleted = BTreeMap<Id, u64>;

/// An operation that returned.
pub type Complete = (LastCompleted, RegisterOp, RegisterRet);

/// An operation invoked but not returned.
pub type InFlight = (LastCompleted, RegisterOp);

/// The invocations and returns seen so far, per client ("thread").
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct History {
    history_by_thread: BTreeMap<Id, Vec<Complete>>,
    in_flight_by_thread: BTreeMap<Id, InFlight>,
    /// `false` once a thread invoked twice without a return, or returned
    /// without an invocation.
    is_valid_history: bool,
}

encode_fields!(History {
    history_by_thread,
    in_flight_by_thread,
    is_valid_history
});

impl History {
    /// The empty history.
    pub fn new() -> History {
        History {
            history_by_thread: BTreeMap::new(),
            in_flight_by_thread: BTreeMap::new(),
            is_valid_history: true,
        }
    }

    /// Thread `thread` invoked `op`.
    pub fn on_invoke(&mut self, thread: Id, op: RegisterOp) {
        if !self.is_valid_history {
            return;
        }
        if self.in_flight_by_thread.contains_key(&thread) {
            self.is_valid_history = false;
            return;
        }
        let last_completed = self
            .history_by_thread
            .iter()
            .filter(|(&id, completed)| id != thread && !completed.is_empty())
            .map(|(&id, completed)| (id, completed.len() as u64 - 1))
            .collect();
        self.in_flight_by_thread
            .insert(thread, (last_completed, op));
        self.history_by_thread.entry(thread).or_default();
    }

    /// Thread `thread`'s operation in flight returned `ret`.
    pub fn on_return(&mut self, thread: Id, ret: RegisterRet) {
        if !self.is_valid_history {
            return;
        }
        let completed = self.history_by_thread.entry(thread).or_default();
        match self.in_flight_by_thread.remove(&thread) {
            None => self.is_valid_history = false,
            Some((last_completed, op)) => completed.push((last_completed, op, ret)),
        }
    }

    /// Whether some total order of the operations respects real time and
    /// the register's semantics (stateright's `serialized_history().is_some()`).
    pub fn is_linearizable(&self) -> bool {
        if !self.is_valid_history {
            return false;
        }
        let mut next_by_thread: BTreeMap<Id, usize> =
            self.history_by_thread.keys().map(|&id| (id, 0)).collect();
        let mut in_flight: Vec<Id> = self.in_flight_by_thread.keys().copied().collect();
        self.serialize(Value::default(), &mut next_by_thread, &mut in_flight)
    }

    /// Whether the operations not yet ordered (from `next_by_thread` on,
    /// and the `in_flight` ones) can follow a register holding `value`.
    fn serialize(
        &self,
        value: Value,
        next_by_thread: &mut BTreeMap<Id, usize>,
        in_flight: &mut Vec<Id>,
    ) -> bool {
        let remaining = |thread: &Id, next: &BTreeMap<Id, usize>| {
            let completed = &self.history_by_thread[thread];
            next[thread] < completed.len()
        };
        if !next_by_thread
            .keys()
            .any(|thread| remaining(thread, next_by_thread))
        {
            return true;
        }
        // A peer's prerequisite is violated when the peer still has the
        // operation it had completed (or an earlier one) left to order.
        let violates = |last_completed: &LastCompleted, next: &BTreeMap<Id, usize>| {
            last_completed.iter().any(|(peer, &min_peer_time)| {
                next.get(peer).is_some_and(|&peer_next| {
                    remaining(peer, next) && peer_next as u64 <= min_peer_time
                })
            })
        };
        let threads: Vec<Id> = next_by_thread.keys().copied().collect();
        for thread in threads {
            let next = next_by_thread[&thread];
            if !remaining(&thread, next_by_thread) {
                let Some(position) = in_flight.iter().position(|&t| t == thread) else {
                    continue;
                };
                let (last_completed, op) = &self.in_flight_by_thread[&thread];
                if violates(last_completed, next_by_thread) {
                    continue;
                }
                let value_after = match *op {
                    RegisterOp::Write(written) => written,
                    RegisterOp::Read => value,
                };
                in_flight.remove(position);
                let found = self.serialize(value_after, next_by_thread, in_flight);
                in_flight.insert(position, thread);
                if found {
                    return true;
                }
            } else {
                let (last_completed, op, ret) = &self.history_by_thread[&thread][next];
                *next_by_thread.get_mut(&thread).expect("a known thread") += 1;
                let found = !violates(last_completed, next_by_thread)
                    && match (*op, *ret) {
                        (RegisterOp::Write(written), RegisterRet::WriteOk) => {
                            self.serialize(written, next_by_thread, in_flight)
                        }
                        (RegisterOp::Read, RegisterRet::ReadOk(read)) => {
                            read == value && self.serialize(value, next_by_thread, in_flight)
                        }
                        _ => false,
                    };
                *next_by_thread.get_mut(&thread).expect("a known thread") -= 1;
                if found {
                    return true;
                }
            }
        }
        false
    }
}

impl Encode for RegisterOp {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            RegisterOp::Write(value) => out.extend_from_slice(&[0, *value]),
            RegisterOp::Read => out.push(1),
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        match u8::decode(decoder)? {
            0 => Ok(RegisterOp::Write(u8::decode(decoder)?)),
            1 => Ok(RegisterOp::Read),
            tag => decoder.invalid(format!("RegisterOp has no variant number {tag}")),
        }
    }
}

impl Encode for RegisterRet {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            RegisterRet::WriteOk => out.push(0),
            RegisterRet::ReadOk(value) => out.extend_from_slice(&[1, *value]),
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        match u8::decode(decoder)? {
            0 => Ok(RegisterRet::WriteOk),
            1 => Ok(RegisterRet::ReadOk(u8::decode(decoder)?)),
            tag => decoder.invalid(format!("RegisterRet has no variant number {tag}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_write_then_read_of_it_is_linearizable() {
        let mut history = History::new();
        history.on_invoke(3, RegisterOp::Write(b'A'));
        history.on_return(3, RegisterRet::WriteOk);
        history.on_invoke(4, RegisterOp::Read);
        history.on_return(4, RegisterRet::ReadOk(b'A'));
        assert!(history.is_linearizable());
    }

    #[test]
    fn reading_the_initial_value_after_a_completed_write_is_not() {
        let mut history = History::new();
        history.on_invoke(3, RegisterOp::Write(b'A'));
        history.on_return(3, RegisterRet::WriteOk);
        history.on_invoke(4, RegisterOp::Read);
        history.on_return(4, RegisterRet::ReadOk(0));
        assert!(!history.is_linearizable());
    }

    #[test]
    fn a_concurrent_read_may_see_either_value() {
        for read in [0, b'A'] {
            let mut history = History::new();
            history.on_invoke(3, RegisterOp::Write(b'A'));
            history.on_invoke(4, RegisterOp::Read);
            history.on_return(4, RegisterRet::ReadOk(read));
            assert!(history.is_linearizable(), "read {read}");
        }
    }

    #[test]
    fn a_return_without_invocation_invalidates() {
        let mut history = History::new();
        history.on_return(3, RegisterRet::WriteOk);
        assert!(!history.is_linearizable());
        assert!(history.history_by_thread.contains_key(&3));
    }
}
