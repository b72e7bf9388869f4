//! Helpers for writing a [`TypedCore`](crate::TypedCore): typed messages
//! ([`Message`], [`send`], [`send_to_each`], [`received`],
//! [`describe_message`]) and messages held back until the persist they follow
//! is flushed ([`AfterFlush`]). Whole state records are persisted with
//! [`Outputs::persist_record`].
//!
//! The reference cores (`reqack`, and Paxos, ABD and primary-backup in
//! `cmc-protocols`) are written with these; so can a user's core.
//!
//! # Example
//!
//! A replica that stores each value it receives and acknowledges it only once
//! the store is durable:
//!
//! ```
//! use bytemuck::{Pod, Zeroable};
//! use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs, OutputKind};
//! use cmc_world::core::helpers::{self, AfterFlush, Message};
//! use cmc_world::TypedCore;
//!
//! /// `Store(v)` or `Stored(v)`, one tag word and one value word.
//! #[derive(Debug, PartialEq)]
//! enum Msg { Store(u32), Stored(u32) }
//!
//! impl Message for Msg {
//!     type Encoded = [u8; 8];
//!     fn encode(&self) -> [u8; 8] {
//!         let (tag, value) = match *self { Msg::Store(v) => (1u32, v), Msg::Stored(v) => (2, v) };
//!         let mut bytes = [0; 8];
//!         bytes[..4].copy_from_slice(&tag.to_le_bytes());
//!         bytes[4..].copy_from_slice(&value.to_le_bytes());
//!         bytes
//!     }
//!     fn decode(bytes: &[u8]) -> Option<Msg> {
//!         let word = |at: usize| Some(u32::from_le_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
//!         match (word(0)?, word(4)?) {
//!             (1, value) => Some(Msg::Store(value)),
//!             (2, value) => Some(Msg::Stored(value)),
//!             _ => None,
//!         }
//!     }
//! }
//!
//! #[derive(Clone, Copy, Default, Pod, Zeroable)]
//! #[repr(C)]
//! struct Durable { value: u32 }
//!
//! #[derive(Clone, Copy, Default, Pod, Zeroable)]
//! #[repr(C)]
//! struct Volatile { acks: AfterFlush<4, 2> }
//!
//! struct Replica;
//!
//! impl TypedCore for Replica {
//!     type Durable = Durable;
//!     type Volatile = Volatile;
//!     fn name(&self) -> &str { "replica" }
//!     fn step(&self, _: &Config, _: &Durable, v: &mut Volatile, event: &Event, out: &mut Outputs)
//!         -> Result<(), CoreError> {
//!         match event.kind() {
//!             Some(EventKind::Recv) => {
//!                 if let Msg::Store(value) = helpers::received(event, 1)? {
//!                     out.persist_record(0, &Durable { value })?;
//!                     v.acks.hold(event.src, &Msg::Stored(value))?;
//!                 }
//!             }
//!             Some(EventKind::Flushed) => {
//!                 if let Some(ack) = v.acks.release() {
//!                     out.send(ack.dst, ack.message())?;
//!                 }
//!             }
//!             _ => {}
//!         }
//!         Ok(())
//!     }
//! }
//!
//! let config = Config { node: 1, nodes: 2, params: [0; 8] };
//! let mut v = Volatile::default();
//! let store = Event::new(EventKind::Recv, 0, 0, &Msg::Store(7).encode(), 0);
//! let mut out = Outputs::default();
//! Replica.step(&config, &Durable::default(), &mut v, &store, &mut out).unwrap();
//! assert_eq!(out.as_slice()[0].kind, OutputKind::Persist as u32, "no ack before the flush");
//!
//! let flushed = Event::new(EventKind::Flushed, 0, 0, &7u32.to_le_bytes(), 0);
//! let mut out = Outputs::default();
//! Replica.step(&config, &Durable { value: 7 }, &mut v, &flushed, &mut out).unwrap();
//! let ack = out.as_slice()[0];
//! assert_eq!((ack.kind, ack.dst), (OutputKind::Send as u32, 0));
//! assert_eq!(Msg::decode(ack.payload()), Some(Msg::Stored(7)));
//! ```

use bytemuck::{Pod, Zeroable};

use crate::core::abi::{CoreError, Event, Outputs};

/// A message a core sends, with its byte encoding: `decode` gives back what
/// `encode` made (the module's example implements one for an enum).
///
/// ```
/// use cmc_world::core::helpers::Message;
///
/// /// A vote for a node, one byte on the wire.
/// #[derive(Debug, PartialEq)]
/// struct Vote(u8);
/// impl Message for Vote {
///     type Encoded = [u8; 1];
///     fn encode(&self) -> [u8; 1] { [self.0] }
///     fn decode(bytes: &[u8]) -> Option<Vote> { match bytes { [n] => Some(Vote(*n)), _ => None } }
/// }
/// assert_eq!(Vote::decode(&Vote(2).encode()), Some(Vote(2)));
/// assert_eq!(Vote::decode(&[1, 2]), None, "not one byte");
/// ```
pub trait Message: Sized {
    /// The encoded bytes (a fixed-size buffer, so that sending allocates nothing).
    type Encoded: AsRef<[u8]>;
    /// The message's bytes.
    fn encode(&self) -> Self::Encoded;
    /// The message `bytes` encode, or `None` if they encode none.
    fn decode(bytes: &[u8]) -> Option<Self>;
}

/// The bit that stands for node id `node` in a set of node ids (as
/// [`Core::node_ids`](crate::Core::node_ids) gives): bit `node`, and bit 63
/// for every id from 63 up.
///
/// ```
/// use cmc_world::core::helpers::node_bit;
///
/// assert_eq!(node_bit(0) | node_bit(3), 0b1001);
/// assert_eq!(node_bit(63), node_bit(200));
/// ```
pub fn node_bit(node: u32) -> u64 {
    1 << node.min(63)
}

/// Sends `message` to node `dst` (see [`describe_message`]'s example);
/// fails as [`Outputs::send`] does when the outputs are full.
pub fn send<M: Message>(out: &mut Outputs, dst: u32, message: &M) -> Result<(), CoreError> {
    out.send(dst, message.encode().as_ref())
}

/// Sends `message`, encoded once, to each of `nodes` in order; fails as
/// [`Outputs::send`] does when the outputs are full.
///
/// ```
/// use cmc_world::core::abi::{CoreError, Event, EventKind, Outputs};
/// use cmc_world::core::helpers::{received, send_to_each};
/// use cmc_world::example_cores::reqack::{Msg, MSG_DATA};
///
/// let data = Msg { kind: MSG_DATA, request: 3 };
/// let mut out = Outputs::default();
/// send_to_each(&mut out, 1..3, &data)?;
/// let sent: Vec<u32> = out.as_slice().iter().map(|output| output.dst).collect();
/// assert_eq!(sent, [1, 2]);
/// // What node 2 receives decodes to the same message...
/// let delivery = Event::new(EventKind::Recv, 0, 0, out.as_slice()[1].payload(), 0);
/// assert_eq!(received::<Msg>(&delivery, 9)?, data);
/// // ... and bytes that are no message are the core's own error code.
/// let junk = Event::new(EventKind::Recv, 0, 0, &[1], 0);
/// assert_eq!(received::<Msg>(&junk, 9), Err(CoreError::Code(9)));
/// # Ok::<(), CoreError>(())
/// ```
pub fn send_to_each<M: Message>(
    out: &mut Outputs,
    nodes: impl IntoIterator<Item = u32>,
    message: &M,
) -> Result<(), CoreError> {
    let encoded = message.encode();
    nodes
        .into_iter()
        .try_for_each(|node| out.send(node, encoded.as_ref()))
}

/// The message `event`'s payload carries; a payload that decodes to none is
/// the core error `bad_message` (the core's own code for it). See
/// [`send_to_each`]'s example.
pub fn received<M: Message>(event: &Event, bad_message: i32) -> Result<M, CoreError> {
    M::decode(event.payload()).ok_or(CoreError::Code(bad_message))
}

/// The message's own text (its `Display`), for
/// [`TypedCore::describe_message`](crate::TypedCore::describe_message);
/// `None` for bytes that are no message.
///
/// ```
/// use std::fmt;
/// use cmc_world::core::abi::{CoreError, Outputs};
/// use cmc_world::core::helpers::{describe_message, send, Message};
///
/// struct Ping(u8);
/// impl Message for Ping {
///     type Encoded = [u8; 1];
///     fn encode(&self) -> [u8; 1] { [self.0] }
///     fn decode(bytes: &[u8]) -> Option<Ping> {
///         match bytes { [n] => Some(Ping(*n)), _ => None }
///     }
/// }
/// impl fmt::Display for Ping {
///     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "PING({})", self.0) }
/// }
///
/// let mut out = Outputs::default();
/// send(&mut out, 1, &Ping(3))?;
/// let sent = out.as_slice()[0].payload();
/// assert_eq!(describe_message::<Ping>(sent).as_deref(), Some("PING(3)"));
/// assert_eq!(describe_message::<Ping>(&[]), None);
/// # Ok::<(), CoreError>(())
/// ```
pub fn describe_message<M: Message + std::fmt::Display>(bytes: &[u8]) -> Option<String> {
    M::decode(bytes).map(|message| message.to_string())
}

/// The core error [`AfterFlush::hold`] returns when every entry is taken
/// (more persists outstanding than the queue has entries).
pub const AFTER_FLUSH_FULL: i32 = 2;

/// One entry of an [`AfterFlush`]: the message (at most `WORDS` 4-byte words)
/// that the flush of one persist releases, and its destination.
///
/// ```
/// use cmc_world::core::abi::CoreError;
/// use cmc_world::core::helpers::{AfterFlush, Held, Message};
/// use cmc_world::example_cores::reqack::{Msg, MSG_ACK};
///
/// let mut queue = AfterFlush::<1, 2>::default();
/// queue.hold(2, &Msg { kind: MSG_ACK, request: 5 })?;
/// let mut held: Held<2> = queue.release().expect("held until the flush");
/// assert_eq!(held.dst, 2);
/// held.message_mut()[4] = 6; // rewritten in place: the request word
/// assert_eq!(Msg::decode(held.message()), Some(Msg { kind: MSG_ACK, request: 6 }));
/// # Ok::<(), CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Held<const WORDS: usize> {
    /// Destination (the node itself, if the core handles it locally).
    pub dst: u32,
    /// Bytes of the message (0: the persist releases nothing).
    len: u32,
    /// The encoded message, zero past `len`.
    words: [u32; WORDS],
}

impl<const WORDS: usize> Held<WORDS> {
    /// The message's bytes.
    pub fn message(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.words)[..self.len as usize]
    }

    /// The message's bytes, to rewrite in place (same length).
    pub fn message_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.words)[..self.len as usize]
    }
}

/// What follows each outstanding persist of a node: a message released when
/// that persist is flushed (e.g. an acknowledgement that must not leave
/// before what it acknowledges is durable). The environment flushes a node's
/// persists in order, so the oldest entry belongs to the next `FLUSHED`
/// event. Kept in the core's volatile part: at most `ENTRIES` persists
/// outstanding, messages of at most `WORDS` words; unused entries are zero,
/// so equal queues have equal bytes.
///
/// ```
/// use cmc_world::core::abi::CoreError;
/// use cmc_world::core::helpers::{AfterFlush, Message, AFTER_FLUSH_FULL};
/// use cmc_world::example_cores::reqack::{Msg, MSG_ACK};
///
/// let ack = Msg { kind: MSG_ACK, request: 0 };
/// let mut queue = AfterFlush::<2, 2>::default();
/// queue.hold(3, &ack)?;      // the first persist's flush releases the ACK to node 3
/// queue.hold_nothing()?;     // the second one's releases nothing
/// assert!(queue.is_full());
/// assert_eq!(queue.hold_nothing(), Err(CoreError::Code(AFTER_FLUSH_FULL)));
///
/// let released = queue.release().expect("the oldest persist releases the ACK");
/// assert_eq!((released.dst, Msg::decode(released.message())), (3, Some(ack)));
/// assert_eq!(queue.release(), None);
/// assert!(queue.is_empty());
/// # Ok::<(), CoreError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct AfterFlush<const ENTRIES: usize, const WORDS: usize> {
    /// Entries in use, oldest first.
    len: u32,
    entries: [Held<WORDS>; ENTRIES],
}

// SAFETY: both structs are `repr(C)` and made only of `u32`s and arrays of
// `u32`s, so they have no padding for any `WORDS` and `ENTRIES`, and every bit
// pattern (all zeros included) is a valid value.
unsafe impl<const WORDS: usize> Zeroable for Held<WORDS> {}
// SAFETY: as above.
unsafe impl<const WORDS: usize> Pod for Held<WORDS> {}
// SAFETY: as above.
unsafe impl<const ENTRIES: usize, const WORDS: usize> Zeroable for AfterFlush<ENTRIES, WORDS> {}
// SAFETY: as above.
unsafe impl<const ENTRIES: usize, const WORDS: usize> Pod for AfterFlush<ENTRIES, WORDS> {}

impl<const ENTRIES: usize, const WORDS: usize> Default for AfterFlush<ENTRIES, WORDS> {
    fn default() -> Self {
        Self::zeroed()
    }
}

impl<const ENTRIES: usize, const WORDS: usize> AfterFlush<ENTRIES, WORDS> {
    /// Records one more outstanding persist whose flush releases `message`
    /// to `dst`. A message longer than `WORDS` words is a bug of the core
    /// (panics).
    pub fn hold<M: Message>(&mut self, dst: u32, message: &M) -> Result<(), CoreError> {
        let encoded = message.encode();
        let bytes = encoded.as_ref();
        assert!(
            bytes.len() <= WORDS * 4,
            "a held message has at most {WORDS} words"
        );
        let slot = self.next_slot()?;
        slot.dst = dst;
        slot.len = bytes.len() as u32;
        bytemuck::cast_slice_mut(&mut slot.words)[..bytes.len()].copy_from_slice(bytes);
        Ok(())
    }

    /// Records one more outstanding persist whose flush releases nothing.
    pub fn hold_nothing(&mut self) -> Result<(), CoreError> {
        self.next_slot().map(|_| ())
    }

    /// The entry after the last one in use, now in use (zero).
    fn next_slot(&mut self) -> Result<&mut Held<WORDS>, CoreError> {
        let slot = self
            .entries
            .get_mut(self.len as usize)
            .ok_or(CoreError::Code(AFTER_FLUSH_FULL))?;
        self.len += 1;
        Ok(slot)
    }

    /// The oldest outstanding persist was flushed: what it releases, its
    /// entry removed (`None` if no persist was outstanding or it releases
    /// nothing).
    pub fn release(&mut self) -> Option<Held<WORDS>> {
        if self.len == 0 {
            return None;
        }
        let head = self.entries[0];
        self.entries.copy_within(1.., 0);
        self.entries[ENTRIES - 1] = Held::zeroed();
        self.len -= 1;
        (head.len != 0).then_some(head)
    }

    /// The outstanding persists.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no persist is outstanding.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether every entry is taken: [`hold`](Self::hold) would fail.
    pub fn is_full(&self) -> bool {
        self.len as usize >= ENTRIES
    }

    /// The outstanding entries that release a message, oldest first.
    pub fn held(&self) -> impl Iterator<Item = &Held<WORDS>> {
        self.entries[..self.len as usize]
            .iter()
            .filter(|entry| entry.len != 0)
    }

    /// As [`AfterFlush::held`], to change them (e.g. to rename node ids).
    pub fn held_mut(&mut self) -> impl Iterator<Item = &mut Held<WORDS>> {
        self.entries[..self.len as usize]
            .iter_mut()
            .filter(|entry| entry.len != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message of raw bytes, for the queue's own tests.
    struct Raw(Vec<u8>);

    impl Message for Raw {
        type Encoded = Vec<u8>;
        fn encode(&self) -> Vec<u8> {
            self.0.clone()
        }
        fn decode(bytes: &[u8]) -> Option<Raw> {
            Some(Raw(bytes.to_vec()))
        }
    }

    #[test]
    fn entries_leave_in_order_and_empty_ones_release_nothing() {
        let mut queue = AfterFlush::<8, 2>::default();
        queue.hold(1, &Raw(vec![7, 8])).unwrap();
        queue.hold_nothing().unwrap();
        queue.hold(2, &Raw(vec![9; 8])).unwrap();
        assert_eq!(queue.held_mut().count(), 2);
        let first = queue.release().unwrap();
        assert_eq!((first.dst, first.message()), (1, &[7, 8][..]));
        assert_eq!(queue.release(), None);
        assert!(!queue.is_empty());
        let last = queue.release().unwrap();
        assert_eq!((last.dst, last.message()), (2, &[9; 8][..]));
        assert!(queue.is_empty());
        assert_eq!(queue.release(), None);
        assert_eq!(queue, AfterFlush::default(), "unused entries are zeroed");
    }

    #[test]
    fn a_full_queue_is_a_core_error() {
        let mut queue = AfterFlush::<3, 1>::default();
        for _ in 0..3 {
            queue.hold_nothing().unwrap();
        }
        assert!(queue.is_full());
        assert_eq!(
            queue.hold(0, &Raw(vec![1])),
            Err(CoreError::Code(AFTER_FLUSH_FULL))
        );
        assert_eq!(queue.len(), 3);
    }

    #[test]
    #[should_panic(expected = "at most 1 words")]
    fn a_message_longer_than_an_entry_is_a_bug_of_the_core() {
        let _ = AfterFlush::<1, 1>::default().hold(0, &Raw(vec![0; 5]));
    }
}
