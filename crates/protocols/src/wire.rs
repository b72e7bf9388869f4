//! What the Rust reference cores put on the wire: their messages as
//! fixed-size little-endian words, the first byte of their replies to
//! clients, and the core error for a message that does not decode.

use cmc_world::core::abi::CoreError;
use cmc_world::core::helpers::{AfterFlush, Message};

/// First reply byte: the request is done (what follows, if anything, is the
/// core's own: a read's value, the committing leader's term).
pub const REPLY_OK: u8 = 1;
/// First reply byte: the request was refused and did nothing (not the
/// leader or primary, a full log, a client busy with another request).
pub const REPLY_REFUSED: u8 = 0;

/// Core error: a message that does not decode.
pub(crate) const ERROR_BAD_MESSAGE: i32 = 1;

/// `bytes` as an `M`, or the core error [`ERROR_BAD_MESSAGE`].
pub(crate) fn decoded<M: Message>(bytes: &[u8]) -> Result<M, CoreError> {
    M::decode(bytes).ok_or(CoreError::Code(ERROR_BAD_MESSAGE))
}

/// Most words in one message (32 bytes).
pub const WORDS_MAX: usize = 8;

/// Writes that may wait for their flush at one node of the Paxos and ABD cores.
pub const REPLIES_MAX: usize = 8;

/// Replies held back until the persist they follow is flushed (one per
/// outstanding persist, at most `REPLIES_MAX`, 8), in the volatile part of the
/// Paxos and ABD cores.
pub type Replies = AfterFlush<REPLIES_MAX, WORDS_MAX>;

/// A message of up to [`WORDS_MAX`] little-endian `u32` words, built in place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Words {
    len: usize,
    bytes: [u8; WORDS_MAX * 4],
}

impl Words {
    /// The words `words` (at most [`WORDS_MAX`]; more is a caller bug).
    pub fn new(words: &[u32]) -> Words {
        assert!(
            words.len() <= WORDS_MAX,
            "a message has at most {WORDS_MAX} words"
        );
        let mut message = Words {
            len: words.len() * 4,
            bytes: [0; WORDS_MAX * 4],
        };
        for (at, word) in words.iter().enumerate() {
            message.bytes[at * 4..at * 4 + 4].copy_from_slice(&word.to_le_bytes());
        }
        message
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl AsRef<[u8]> for Words {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Word `at` of `bytes`, or `None` if `bytes` is too short.
pub fn word(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        bytes.get(at * 4..at * 4 + 4)?.try_into().ok()?,
    ))
}

/// The first `N` words of `bytes`, or `None` if `bytes` holds fewer.
pub fn words<const N: usize>(bytes: &[u8]) -> Option<[u32; N]> {
    let mut out = [0; N];
    for (at, slot) in out.iter_mut().enumerate() {
        *slot = word(bytes, at)?;
    }
    Some(out)
}
