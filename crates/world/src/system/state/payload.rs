//! Message and persist payloads: up to `PAYLOAD_MAX` bytes held inline.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::{Event, EventKind, PAYLOAD_MAX};
use crate::core::hex::hex;

/// A payload of at most [`PAYLOAD_MAX`] bytes, stored inline (no allocation);
/// bytes past `len` are zero, so derived comparisons are canonical.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::system::state::Payload;
///
/// let ack = Payload::new(b"ACK").expect("3 bytes fit");
/// // Encoded as its length, then its bytes.
/// assert_eq!(ack.to_bytes(), [3, b'A', b'C', b'K']);
/// assert_eq!(Payload::decode_exact(&ack.to_bytes()).unwrap(), ack);
/// ```
///
/// Payloads are equal, and ordered, by their length, then their bytes.
///
/// ```
/// use cmc_world::system::state::Payload;
///
/// let payload = |bytes: &[u8]| Payload::new(bytes).unwrap();
/// assert!(payload(&[9]) < payload(&[0, 0]), "shorter first");
/// assert!(payload(&[1, 2, 3]) < payload(&[1, 2, 4]));
/// assert_eq!(payload(&[7; 10]), payload(&[7; 10]));
/// assert_ne!(payload(&[7; 10]), payload(&[7; 11]));
/// ```
#[derive(Clone, Copy, Eq)]
pub struct Payload {
    pub(super) len: u8,
    pub(super) bytes: [u8; PAYLOAD_MAX],
}

impl Payload {
    /// `bytes` as a payload, or `None` if longer than [`PAYLOAD_MAX`].
    ///
    /// ```
    /// use cmc_world::core::abi::PAYLOAD_MAX;
    /// use cmc_world::system::state::Payload;
    ///
    /// assert_eq!(Payload::new(b"ACK").map(|p| p.as_bytes().len()), Some(3));
    /// assert!(Payload::new(&[0; PAYLOAD_MAX + 1]).is_none());
    /// ```
    pub fn new(bytes: &[u8]) -> Option<Payload> {
        if bytes.len() > PAYLOAD_MAX {
            return None;
        }
        let mut payload = Payload::EMPTY;
        payload.set_bytes(bytes);
        Some(payload)
    }

    /// The payload's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// The payload's bytes zero-padded to [`PAYLOAD_MAX`]: the field as it
    /// is (the bytes past the length are zero), a copy of fixed size.
    pub(crate) fn zero_padded(&self) -> &[u8; PAYLOAD_MAX] {
        &self.bytes
    }

    /// An event of `kind` carrying the payload: its bytes taken as the
    /// zero-padded field they are, a copy of fixed size (copying only the
    /// meaningful bytes into a zeroed field, then reading the field back,
    /// stalled the step until the copy's narrower stores completed).
    pub(crate) fn event(&self, kind: EventKind, src: u32, id: u32, clock: u64) -> Event {
        Event {
            kind: kind as u32,
            src,
            id,
            len: u32::from(self.len),
            clock,
            payload: self.bytes,
        }
    }

    /// Makes `self` the payload of `bytes` (at most [`PAYLOAD_MAX`], validated
    /// by the caller), in place.
    pub(crate) fn set_bytes(&mut self, bytes: &[u8]) {
        let (meaningful, rest) = self.bytes.split_at_mut(bytes.len());
        meaningful.copy_from_slice(bytes);
        rest.fill(0);
        self.len = bytes.len() as u8;
    }
}

// Payload bytes are compared a word at a time, inline: packets are
// compared for every message action taken and every message sent, and a
// call to the C library's `memcmp` cost more than the comparison.
const _: () = assert!(PAYLOAD_MAX.is_multiple_of(8), "payloads are whole words");

impl Payload {
    /// Word `index` of the bytes, read big-endian: words compare as the
    /// bytes they hold do.
    #[inline]
    fn word(&self, index: usize) -> u64 {
        let at = index * 8;
        u64::from_be_bytes(self.bytes[at..at + 8].try_into().expect("8 bytes"))
    }
}

/// The same as comparing the lengths and the whole arrays (the bytes past
/// `len` are zero in both): the lengths, then only the words that hold
/// payload bytes, without a call.
impl PartialEq for Payload {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len
            && (0..(self.len as usize).div_ceil(8))
                .all(|index| self.word(index) == other.word(index))
    }
}

/// The hash of the meaningful bytes (with their length), as equality sees them.
impl std::hash::Hash for Payload {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialOrd for Payload {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// By length, then bytes (the order of the derived one on the fields):
/// within one length, only the words that hold payload bytes are compared.
impl Ord for Payload {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.len.cmp(&other.len).then_with(|| {
            (0..(self.len as usize).div_ceil(8))
                .map(|index| self.word(index).cmp(&other.word(index)))
                .find(|order| order.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        })
    }
}

impl Payload {
    /// The payload of no bytes.
    pub(crate) const EMPTY: Payload = Payload {
        len: 0,
        bytes: [0; PAYLOAD_MAX],
    };
}

impl Default for Payload {
    fn default() -> Self {
        Payload::EMPTY
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(self.as_bytes()))
    }
}

impl Payload {
    /// Appends the payload's bytes (without its length): all
    /// [`PAYLOAD_MAX`] bytes are copied, a copy of fixed size that needs no
    /// call, and the zeros past `len` cut off again.
    #[inline]
    fn encode_bytes(&self, out: &mut Vec<u8>) {
        let end = out.len() + self.len as usize;
        out.extend_from_slice(&self.bytes);
        out.truncate(end);
    }
}

impl Encode for Payload {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.len);
        self.encode_bytes(out);
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let len = u8::decode(decoder)?;
        Payload::decode_bytes(decoder, len)
    }
}

impl Payload {
    /// Reads the `len` bytes of a payload whose length was read already.
    #[inline]
    pub(super) fn decode_bytes(decoder: &mut Decoder<'_>, len: u8) -> Result<Payload, DecodeError> {
        let mut payload = Payload::default();
        payload.decode_bytes_in_place(decoder, len)?;
        Ok(payload)
    }

    /// As [`Payload::decode_bytes`], into `self`.
    #[inline]
    pub(super) fn decode_bytes_in_place(
        &mut self,
        decoder: &mut Decoder<'_>,
        len: u8,
    ) -> Result<(), DecodeError> {
        if len as usize > PAYLOAD_MAX {
            return decoder.invalid(format!("payload of {len} bytes exceeds {PAYLOAD_MAX}"));
        }
        let (bytes, rest) = self.bytes.split_at_mut(len as usize);
        bytes.copy_from_slice(decoder.take(len as usize)?);
        rest.fill(0);
        self.len = len;
        Ok(())
    }
}
