//! Bundled sequential specifications: a register, a key-value map, a FIFO queue.
//! Values are `u64`: cores encode small values in their reply bytes.

use std::collections::{BTreeMap, VecDeque};

use cmc_model::Encode;

use crate::spec::SequentialSpec;

/// A read/write register holding a `u64`, initially 0.
#[derive(Clone, Copy, Debug, Default)]
pub struct Register;

/// An operation on a [`Register`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum RegisterOp {
    /// Returns the value.
    Read,
    /// Sets the value; returns [`RegisterRet::Ack`].
    Write(u64),
}

/// What a [`Register`] operation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum RegisterRet {
    /// A write took effect.
    Ack,
    /// A read's value.
    Value(u64),
}

impl SequentialSpec for Register {
    type State = u64;
    type Op = RegisterOp;
    type Ret = RegisterRet;

    fn init(&self) -> u64 {
        0
    }

    fn apply(&self, state: &u64, op: &RegisterOp) -> (u64, RegisterRet) {
        match *op {
            RegisterOp::Read => (*state, RegisterRet::Value(*state)),
            RegisterOp::Write(value) => (value, RegisterRet::Ack),
        }
    }
}

/// A map from `u64` keys to `u64` values, initially empty; partitioned by key.
#[derive(Clone, Copy, Debug, Default)]
pub struct KvMap;

/// An operation on a [`KvMap`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum KvOp {
    /// Returns the key's value, if any.
    Get(u64),
    /// Sets the key's value; returns [`KvRet::Ack`].
    Put(u64, u64),
}

/// What a [`KvMap`] operation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum KvRet {
    /// A put took effect.
    Ack,
    /// A get's value (`None`: the key is absent).
    Value(Option<u64>),
}

impl SequentialSpec for KvMap {
    type State = BTreeMap<u64, u64>;
    type Op = KvOp;
    type Ret = KvRet;

    fn init(&self) -> BTreeMap<u64, u64> {
        BTreeMap::new()
    }

    fn apply(&self, state: &BTreeMap<u64, u64>, op: &KvOp) -> (BTreeMap<u64, u64>, KvRet) {
        match *op {
            KvOp::Get(key) => (state.clone(), KvRet::Value(state.get(&key).copied())),
            KvOp::Put(key, value) => {
                let mut next = state.clone();
                next.insert(key, value);
                (next, KvRet::Ack)
            }
        }
    }

    fn partition(&self, op: &KvOp) -> Option<u64> {
        match *op {
            KvOp::Get(key) | KvOp::Put(key, _) => Some(key),
        }
    }
}

/// A FIFO queue of `u64`, initially empty.
#[derive(Clone, Copy, Debug, Default)]
pub struct Queue;

/// An operation on a [`Queue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum QueueOp {
    /// Appends a value; returns [`QueueRet::Ack`].
    Enqueue(u64),
    /// Removes and returns the oldest value, if any.
    Dequeue,
}

/// What a [`Queue`] operation returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode)]
pub enum QueueRet {
    /// An enqueue took effect.
    Ack,
    /// A dequeue's value (`None`: the queue was empty).
    Value(Option<u64>),
}

impl SequentialSpec for Queue {
    type State = VecDeque<u64>;
    type Op = QueueOp;
    type Ret = QueueRet;

    fn init(&self) -> VecDeque<u64> {
        VecDeque::new()
    }

    fn apply(&self, state: &VecDeque<u64>, op: &QueueOp) -> (VecDeque<u64>, QueueRet) {
        let mut next = state.clone();
        match *op {
            QueueOp::Enqueue(value) => {
                next.push_back(value);
                (next, QueueRet::Ack)
            }
            QueueOp::Dequeue => {
                let value = next.pop_front();
                (next, QueueRet::Value(value))
            }
        }
    }
}
