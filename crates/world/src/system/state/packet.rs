//! Copies of one message in flight, and the fixed-size records packets
//! (and history entries) are encoded as.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::PAYLOAD_MAX;

use super::Payload;

/// Copies of one message in flight: in an unordered network all copies with
/// the same source, destination and bytes; in a FIFO network a run of equal
/// consecutive messages on one link (see [`crate::system::env`]). Encoded as its
/// fields in order.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::system::state::{Packet, Payload};
///
/// // Two copies of the one-byte message 7 from n0 to n2.
/// let msg = Payload::new(&[7]).unwrap();
/// let packet = Packet { src: 0, dst: 2, msg, count: 2, surplus: false };
/// assert_eq!(packet.to_bytes(), [0, 2, 1, 7, 2, 0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Packet {
    /// Sending node.
    pub src: u8,
    /// Destination node.
    pub dst: u8,
    /// Message bytes.
    pub msg: Payload,
    /// Copies in flight, counted exactly up to the network bound (always 1
    /// in a duplicating network).
    pub count: u8,
    /// More than `count` copies are in flight: the sends beyond the network
    /// bound, whose number is not tracked (see [`crate::system::env`]).
    pub surplus: bool,
}

impl Packet {
    /// One copy of the empty message from `src` to `dst` (what a packet is
    /// made in place from, by a send or a decoding).
    pub(crate) const fn new_empty((src, dst): (u8, u8)) -> Packet {
        Packet {
            src,
            dst,
            msg: Payload::EMPTY,
            count: 1,
            surplus: false,
        }
    }
}

/// The longest encoding of a packet or of a history entry: a few fixed
/// bytes and a payload.
pub(super) const RECORD_MAX: usize = 7 + PAYLOAD_MAX;

/// Appends `items`, each encoded by `write` into a buffer of [`RECORD_MAX`]
/// bytes (it returns how many it wrote): room for them all is made once,
/// and each item's bytes are fixed-size copies, with no capacity check or
/// call per field. `write` must write exactly what the item's
/// [`Encode::encode`] does.
#[inline]
pub(super) fn write_records<T>(
    items: &[T],
    out: &mut Vec<u8>,
    write: impl Fn(&T, &mut [u8; RECORD_MAX]) -> usize,
) {
    let mut at = out.len();
    out.resize(at + items.len() * RECORD_MAX, 0);
    for item in items {
        let record: &mut [u8; RECORD_MAX] = (&mut out[at..at + RECORD_MAX])
            .try_into()
            .expect("room for a record");
        at += write(item, record);
    }
    out.truncate(at);
}

/// Written as a record of fixed-size copies instead of a push per field:
/// packets are most of what a successor's encoding writes.
impl Encode for Packet {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        Packet::encode_slice(std::slice::from_ref(self), out);
    }

    /// Each packet written into room made for the longest at once: a
    /// network is encoded for nearly every successor.
    fn encode_slice(packets: &[Packet], out: &mut Vec<u8>) {
        write_records(packets, out, |packet, record| {
            let Packet {
                src,
                dst,
                msg,
                count,
                surplus,
            } = packet;
            let end = 3 + msg.len as usize;
            record[..3].copy_from_slice(&[*src, *dst, msg.len]);
            record[3..3 + PAYLOAD_MAX].copy_from_slice(&msg.bytes);
            record[end..end + 2].copy_from_slice(&[*count, u8::from(*surplus)]);
            end + 2
        });
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut packet = Packet::new_empty((0, 0));
        packet.decode_in_place(decoder)?;
        Ok(packet)
    }

    /// Read as written: the three bytes before the message's, then the two
    /// after, each into its field.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let &[src, dst, len] = decoder.take(3)? else {
            unreachable!("3 bytes taken")
        };
        self.msg.decode_bytes_in_place(decoder, len)?;
        let &[count, surplus] = decoder.take(2)? else {
            unreachable!("2 bytes taken")
        };
        self.surplus = match surplus {
            0 => false,
            1 => true,
            other => return decoder.invalid(format!("surplus byte {other} is not a bool")),
        };
        (self.src, self.dst, self.count) = (src, dst, count);
        Ok(())
    }
}
