//! Replies held back until the persist they follow is flushed: one entry per
//! outstanding persist, oldest first (the environment flushes a node's
//! persists in order), kept in the core's volatile part.

use bytemuck::{Pod, Zeroable};
use cmc_world::core::abi::CoreError;

use crate::wire::{Words, WORDS_MAX};

/// Entries one node may hold (one per outstanding persist).
pub const PENDING_MAX: usize = 8;
/// Core error: more than [`PENDING_MAX`] persists outstanding.
pub const ERROR_PENDING_FULL: i32 = 2;

/// A message waiting for the flush of the persist it follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Pending {
    /// Destination (the node itself: handled locally).
    pub dst: u32,
    /// Bytes of `bytes` used (0: nothing to send).
    pub len: u32,
    /// The encoded message.
    pub bytes: [u8; WORDS_MAX * 4],
}

/// The messages waiting for flushes, one per outstanding persist; unused
/// entries are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct AfterFlush {
    /// Entries of `entries` in use.
    pub len: u32,
    /// Oldest first.
    pub entries: [Pending; PENDING_MAX],
}

impl AfterFlush {
    /// Records one more outstanding persist; `then` (destination, message)
    /// is released by its flush (`None`: nothing follows it).
    pub fn push(&mut self, then: Option<(u32, Words)>) -> Result<(), CoreError> {
        let slot = self
            .entries
            .get_mut(self.len as usize)
            .ok_or(CoreError::Code(ERROR_PENDING_FULL))?;
        self.len += 1;
        if let Some((dst, message)) = then {
            let bytes = message.as_bytes();
            *slot = Pending {
                dst,
                len: bytes.len() as u32,
                bytes: [0; WORDS_MAX * 4],
            };
            slot.bytes[..bytes.len()].copy_from_slice(bytes);
        }
        Ok(())
    }

    /// The oldest persist was flushed: its entry, removed (`None` if no
    /// persist was outstanding or nothing followed it).
    pub fn pop(&mut self) -> Option<Pending> {
        if self.len == 0 {
            return None;
        }
        let head = self.entries[0];
        self.entries.copy_within(1.., 0);
        self.entries[PENDING_MAX - 1] = Pending::default();
        self.len -= 1;
        (head.len != 0).then_some(head)
    }

    /// Whether no persist is outstanding.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Pending {
    /// The message's bytes.
    pub fn message(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_leave_in_order_and_empty_ones_release_nothing() {
        let mut queue = AfterFlush::default();
        queue.push(Some((1, Words::new(&[7, 8])))).unwrap();
        queue.push(None).unwrap();
        queue.push(Some((2, Words::new(&[9])))).unwrap();
        let first = queue.pop().unwrap();
        assert_eq!(
            (first.dst, first.message()),
            (1, Words::new(&[7, 8]).as_bytes())
        );
        assert_eq!(queue.pop(), None);
        assert!(!queue.is_empty());
        assert_eq!(queue.pop().unwrap().dst, 2);
        assert!(queue.is_empty());
        assert_eq!(queue.pop(), None);
        assert_eq!(queue, AfterFlush::default(), "unused entries are zeroed");
    }

    #[test]
    fn a_full_queue_is_a_core_error() {
        let mut queue = AfterFlush::default();
        for _ in 0..PENDING_MAX {
            queue.push(None).unwrap();
        }
        assert_eq!(queue.push(None), Err(CoreError::Code(ERROR_PENDING_FULL)));
    }
}
