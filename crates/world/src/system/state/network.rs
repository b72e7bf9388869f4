//! The network: the messages in flight, held as the bytes of their
//! encoding.
//!
//! A successor of a World state copies its parent's network, changes a
//! packet or two, and is encoded; most successors are states seen before,
//! which are only encoded and looked up. Held as [`Packet`]s (each with a
//! payload field of [`PAYLOAD_MAX`] bytes), the network was copied at a
//! dozen times the size of its encoding and then encoded packet by packet;
//! held as its encoding, it is copied at its size and encoded with one copy.
//!
//! Each packet is a *record*, its encoding: source, destination, payload
//! length, the payload's bytes, count, surplus flag. The records are in the
//! network's order: by (source, destination, payload) in an unordered
//! network, which is the byte order of the records' first `3 + len` bytes
//! (the length comes before the bytes, as [`Payload`]'s order has it); by
//! link, then send order, in a FIFO network.

use std::ops::Range;

use cmc_model::{DecodeError, Decoder, Encode};

use super::{Packet, Payload};
use crate::core::abi::PAYLOAD_MAX;
use crate::system::action::Surplus;

/// Bytes of a record before its payload: source, destination, length.
const HEAD: usize = 3;
/// Bytes of a record after its payload: count, surplus flag.
const TAIL: usize = 2;

/// The packets in flight, in the network's order (see the module's
/// documentation), held as their encoding.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::system::state::{Network, Packet, Payload};
///
/// let msg = Payload::new(&[7]).unwrap();
/// let net: Network = [Packet { src: 0, dst: 2, msg, count: 2, surplus: false }]
///     .into_iter()
///     .collect();
/// assert_eq!(net.len(), 1);
/// assert_eq!(net.get(0).map(|packet| packet.count), Some(2));
/// // A count of packets, then each packet's record.
/// assert_eq!(net.to_bytes(), [1, 0, 0, 0, 0, 2, 1, 7, 2, 0]);
/// assert_eq!(Network::decode_exact(&net.to_bytes()).unwrap(), net);
/// ```
#[derive(Default, PartialEq, Eq)]
pub struct Network {
    /// The packets' records, back to back.
    records: Vec<u8>,
    /// How many records `records` holds.
    len: u32,
}

/// Where a record is or would go: its index among the packets and its
/// offset in the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// The packet's index.
    pub(crate) index: usize,
    /// The offset of its record.
    pub(crate) offset: usize,
}

impl Network {
    /// Number of packets.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether no packet is in flight.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packets, in order, each made whole (see [`Network::refs`]).
    pub fn iter(&self) -> Packets<'_> {
        Packets {
            records: self.refs(),
        }
    }

    /// The packets, in order, read where they are, their payloads not
    /// copied: the way to read a network for every state (the environment
    /// lists its actions so; a property should read it so). A [`Packet`]
    /// made and then copied elsewhere is read back, in wide loads, while
    /// the narrow stores of its payload are still under way, which stalls.
    pub fn refs(&self) -> PacketRefs<'_> {
        PacketRefs {
            rest: &self.records,
        }
    }

    /// The packet at `index`, if any.
    pub fn get(&self, index: usize) -> Option<Packet> {
        self.iter().nth(index)
    }

    /// Removes every packet, keeping the memory.
    pub(crate) fn clear(&mut self) {
        self.records.clear();
        self.len = 0;
    }

    /// Appends `packet` after the others: the caller keeps the network's
    /// order.
    pub(crate) fn push(&mut self, packet: &Packet) {
        packet.encode(&mut self.records);
        self.len += 1;
    }

    /// The slot of each record, in order, with the record.
    fn slots(&self) -> impl Iterator<Item = (Slot, &[u8])> {
        let mut offset = 0;
        (0..self.len()).map(move |index| {
            let len = record_len(&self.records[offset..]);
            let slot = Slot { index, offset };
            offset += len;
            (slot, &self.records[slot.offset..offset])
        })
    }

    /// Where the records end: the slot after the last.
    fn end(&self) -> Slot {
        Slot {
            index: self.len(),
            offset: self.records.len(),
        }
    }

    /// The byte range of the record at `slot`.
    fn range(&self, slot: Slot) -> Range<usize> {
        slot.offset..slot.offset + record_len(&self.records[slot.offset..])
    }

    /// In an unordered network: the slot of the packet from `link.0` to
    /// `link.1` carrying `msg`, or the slot it would be inserted at.
    pub(crate) fn find(&self, link: (u8, u8), msg: &[u8]) -> Result<Slot, Slot> {
        let link = u16::from_be_bytes([link.0, link.1]);
        for (slot, record) in self.slots() {
            let order = link_of(record)
                .cmp(&link)
                .then_with(|| (record[2] as usize).cmp(&msg.len()))
                .then_with(|| payload_order(payload_of(record), msg));
            match order {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Ok(slot),
                std::cmp::Ordering::Greater => return Err(slot),
            }
        }
        Err(self.end())
    }

    /// In a FIFO network: the number of packets on `link` (from `link.0`
    /// to `link.1`), the slot after its last (where a new one goes), and
    /// the last's slot if it carries `msg`.
    pub(crate) fn link_span(&self, link: (u8, u8), msg: &[u8]) -> (usize, Slot, Option<Slot>) {
        let (mut runs, mut last, mut end) = (0, None, self.end());
        let link = u16::from_be_bytes([link.0, link.1]);
        for (slot, record) in self.slots() {
            match link_of(record).cmp(&link) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => {
                    runs += 1;
                    last = Some((slot, record));
                }
                std::cmp::Ordering::Greater => {
                    end = slot;
                    break;
                }
            }
        }
        let same = last.filter(|(_, record)| same_payload(payload_of(record), msg));
        (runs, end, same.map(|(slot, _)| slot))
    }

    /// The slot of the packet at `index` if it is from `link.0` to `link.1`,
    /// carries `msg` and has surplus copies exactly when `surplus` says so
    /// (what a message action names: see [`crate::system::action::Action`]).
    pub(crate) fn named(
        &self,
        index: usize,
        link: (u8, u8),
        msg: &Payload,
        surplus: bool,
    ) -> Option<Slot> {
        if index >= self.len() {
            return None;
        }
        // Walked by lengths alone: a message action's packet is looked up
        // for every successor it makes.
        let mut offset = 0;
        for _ in 0..index {
            offset += record_len(&self.records[offset..]);
        }
        let slot = Slot { index, offset };
        let record = &self.records[offset..offset + record_len(&self.records[offset..])];
        let len = record[2] as usize;
        let same = link_of(record) == u16::from_be_bytes([link.0, link.1])
            && same_payload(payload_of(record), msg.as_bytes())
            && (record[HEAD + len + 1] != 0) == surplus;
        same.then_some(slot)
    }

    /// Inserts one copy of `msg` (at most [`PAYLOAD_MAX`] bytes) from
    /// `link.0` to `link.1` at `slot`.
    pub(crate) fn insert(&mut self, slot: Slot, link: (u8, u8), msg: &[u8]) {
        debug_assert!(msg.len() <= PAYLOAD_MAX);
        let size = HEAD + msg.len() + TAIL;
        let old_end = self.records.len();
        self.records.resize(old_end + size, 0);
        self.records
            .copy_within(slot.offset..old_end, slot.offset + size);
        let record = &mut self.records[slot.offset..slot.offset + size];
        record[..HEAD].copy_from_slice(&[link.0, link.1, msg.len() as u8]);
        record[HEAD..HEAD + msg.len()].copy_from_slice(msg);
        record[HEAD + msg.len()..].copy_from_slice(&[1, 0]);
        self.len += 1;
    }

    /// One copy more of the packet at `slot`: counted while its count is
    /// below `bound`, a surplus beyond it.
    pub(crate) fn add_copy(&mut self, slot: Slot, bound: u8) {
        let range = self.range(slot);
        let [count, surplus] = &mut self.records[range.end - TAIL..range.end] else {
            unreachable!("a record ends with its count and surplus flag")
        };
        if *count < bound {
            *count += 1;
        } else {
            *surplus = 1;
        }
    }

    /// Appends the encoding of `self` renamed as [`Network::rename`]
    /// renames it, without renaming it.
    pub(crate) fn encode_renamed(
        &self,
        fifo: bool,
        rename: impl FnMut(&mut u8, &mut u8, &mut [u8]),
        scratch: &mut RenameScratch,
        out: &mut Vec<u8>,
    ) {
        out.extend_from_slice(&self.len.to_le_bytes());
        scratch.rename(&self.records, fifo, rename);
        scratch.append_sorted(out);
    }

    /// Renames each packet by `rename(src, dst, payload)` (endpoints and
    /// payload bytes changed in place, never the payload's length) and
    /// sorts the packets again into the network's order (`fifo`: by link,
    /// each link's queue keeping its order). `scratch` holds the renamed
    /// packets on the way.
    pub(crate) fn rename(
        &mut self,
        fifo: bool,
        rename: impl FnMut(&mut u8, &mut u8, &mut [u8]),
        scratch: &mut RenameScratch,
    ) {
        scratch.rename(&self.records, fifo, rename);
        self.records.clear();
        scratch.append_sorted(&mut self.records);
    }

    /// One copy of the packet at `slot` leaves the network. From a surplus
    /// packet, `surplus` says whether surplus copies remain (otherwise
    /// exactly its count do); from a counted one, the count drops by one,
    /// and the packet goes with its last copy.
    pub(crate) fn take_copy(&mut self, slot: Slot, surplus: Surplus) {
        let range = self.range(slot);
        let [count, flag] = &mut self.records[range.end - TAIL..range.end] else {
            unreachable!("a record ends with its count and surplus flag")
        };
        if *flag != 0 {
            *flag = u8::from(surplus == Surplus::Stays);
        } else if *count > 1 {
            *count -= 1;
        } else {
            self.records.drain(range);
            self.len -= 1;
        }
    }
}

/// Memory a renaming of a network works in (see [`Network::rename`]),
/// kept from one renaming to the next.
#[derive(Default)]
pub(crate) struct RenameScratch {
    /// The renamed records, in the network's old order.
    records: Vec<u8>,
    /// Where each renamed record starts in `records`.
    starts: Vec<u32>,
}

impl RenameScratch {
    /// Holds the records `records` with each packet renamed by
    /// `rename(src, dst, payload)`, and their order in a network: by record
    /// in an unordered network, by link alone (stable) in a FIFO one.
    fn rename(
        &mut self,
        records: &[u8],
        fifo: bool,
        mut rename: impl FnMut(&mut u8, &mut u8, &mut [u8]),
    ) {
        let RenameScratch {
            records: renamed,
            starts,
        } = self;
        renamed.clear();
        renamed.extend_from_slice(records);
        starts.clear();
        let mut offset = 0;
        while offset < renamed.len() {
            let len = record_len(&renamed[offset..]);
            let [src, dst, _, rest @ ..] = &mut renamed[offset..offset + len] else {
                unreachable!("a record holds its head")
            };
            rename(src, dst, &mut rest[..len - HEAD - TAIL]);
            starts.push(offset as u32);
            offset += len;
        }
        let renamed = &*renamed;
        let record = |start: u32| &renamed[start as usize..];
        if fifo {
            starts.sort_by_key(|&start| link_of(record(start)));
        } else {
            // Records order as their packets do on their first `3 + len` bytes.
            let key = |start: u32| {
                let record = record(start);
                &record[..HEAD + record[2] as usize]
            };
            starts.sort_unstable_by(|&a, &b| key(a).cmp(key(b)));
        }
    }

    /// Appends the records held, in their order.
    fn append_sorted(&self, out: &mut Vec<u8>) {
        for &start in &self.starts {
            let record = &self.records[start as usize..];
            out.extend_from_slice(&record[..record_len(record)]);
        }
    }
}

/// The length of the record `records` starts with.
#[inline]
fn record_len(records: &[u8]) -> usize {
    HEAD + records[2] as usize + TAIL
}

/// The link of `record`, source then destination, as one number that
/// orders as the pair does.
#[inline]
fn link_of(record: &[u8]) -> u16 {
    u16::from_be_bytes([record[0], record[1]])
}

/// The payload bytes of `record`.
#[inline]
fn payload_of(record: &[u8]) -> &[u8] {
    &record[HEAD..HEAD + record[2] as usize]
}

/// Whether the payloads `a` and `b` are the same bytes, compared inline:
/// payloads are a few bytes, and the C library's `bcmp`, which `==` on
/// slices calls, cost more than the comparison (the packet of every
/// message action is checked so).
#[inline]
fn same_payload(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// The order of the payloads `a` and `b` as byte strings, compared inline
/// (see [`same_payload`]).
#[inline]
fn payload_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.iter()
        .zip(b)
        .find(|(x, y)| x != y)
        .map_or_else(|| a.len().cmp(&b.len()), |(x, y)| x.cmp(y))
}

/// A packet read where its record is, its payload not copied (see
/// [`Network::refs`]).
#[derive(Clone, Copy, Debug)]
pub struct PacketRef<'a> {
    /// The sender.
    pub src: u8,
    /// The destination.
    pub dst: u8,
    /// The payload's bytes.
    pub msg: &'a [u8],
    /// Copies counted exactly.
    pub count: u8,
    /// Whether more copies than `count` may be in flight.
    pub surplus: bool,
}

impl PacketRef<'_> {
    /// The packet the record holds.
    #[inline]
    fn packet(self) -> Packet {
        let mut packet = Packet::new_empty((self.src, self.dst));
        packet.msg.set_bytes(self.msg);
        packet.count = self.count;
        packet.surplus = self.surplus;
        packet
    }
}

/// The packets of a [`Network`] read in place, in order: see
/// [`Network::refs`].
#[derive(Clone)]
pub struct PacketRefs<'a> {
    /// The records not visited yet, back to back.
    rest: &'a [u8],
}

impl<'a> Iterator for PacketRefs<'a> {
    type Item = PacketRef<'a>;

    #[inline]
    fn next(&mut self) -> Option<PacketRef<'a>> {
        if self.rest.is_empty() {
            return None;
        }
        let (record, rest) = self.rest.split_at(record_len(self.rest));
        self.rest = rest;
        let len = record[2] as usize;
        Some(PacketRef {
            src: record[0],
            dst: record[1],
            msg: &record[HEAD..HEAD + len],
            count: record[HEAD + len],
            surplus: record[HEAD + len + 1] != 0,
        })
    }
}

/// The packets of a [`Network`], in order: see [`Network::iter`].
#[derive(Clone)]
pub struct Packets<'a> {
    /// The records not visited yet.
    records: PacketRefs<'a>,
}

impl Iterator for Packets<'_> {
    type Item = Packet;

    #[inline]
    fn next(&mut self) -> Option<Packet> {
        self.records.next().map(PacketRef::packet)
    }
}

impl<'a> IntoIterator for &'a Network {
    type Item = Packet;
    type IntoIter = Packets<'a>;

    fn into_iter(self) -> Packets<'a> {
        self.iter()
    }
}

/// The packets in the order given, which must be the network's.
impl FromIterator<Packet> for Network {
    fn from_iter<I: IntoIterator<Item = Packet>>(packets: I) -> Network {
        let mut net = Network::default();
        packets.into_iter().for_each(|packet| net.push(&packet));
        net
    }
}

/// `clone_from` reuses the memory `self` holds: how successors are made.
impl Clone for Network {
    fn clone(&self) -> Network {
        let mut copy = Network::default();
        copy.clone_from(self);
        copy
    }

    #[inline]
    fn clone_from(&mut self, source: &Network) {
        self.records.clone_from(&source.records);
        self.len = source.len;
    }
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// As a sequence of packets: a `u32` count, then each packet's record.
impl Encode for Network {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.records);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut net = Network::default();
        net.decode_in_place(decoder)?;
        Ok(net)
    }

    /// Each record is checked as a [`Packet`]'s decoding checks it (a
    /// payload of at most [`PAYLOAD_MAX`] bytes, a surplus flag of 0 or 1)
    /// and copied in two pieces once it is whole and checked: on an error,
    /// `self` holds the records before the bad one.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        self.clear();
        let len = u32::decode(decoder)?;
        for _ in 0..len {
            let head = decoder.take(HEAD)?;
            let payload = head[2] as usize;
            if payload > PAYLOAD_MAX {
                return decoder
                    .invalid(format!("payload of {payload} bytes exceeds {PAYLOAD_MAX}"));
            }
            let rest = decoder.take(payload + TAIL)?;
            if rest[payload + 1] > 1 {
                let other = rest[payload + 1];
                return decoder.invalid(format!("surplus byte {other} is not a bool"));
            }
            self.records.extend_from_slice(head);
            self.records.extend_from_slice(rest);
            self.len += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(bytes: &[u8]) -> Payload {
        Payload::new(bytes).expect("a payload that fits")
    }

    fn packet(src: u8, dst: u8, msg: &[u8], count: u8) -> Packet {
        Packet {
            src,
            dst,
            msg: payload(msg),
            count,
            surplus: false,
        }
    }

    #[test]
    fn records_order_as_packets_do() {
        // Sorted as packets: by link, then payload length, then bytes.
        let mut packets = vec![
            packet(1, 0, &[5], 1),
            packet(0, 1, &[9, 9], 1),
            packet(0, 1, &[3], 2),
            packet(0, 2, &[], 1),
            packet(0, 1, &[4], 1),
        ];
        packets.sort_by_key(|p| (p.src, p.dst, p.msg));
        let mut net = Network::default();
        for packet in &packets {
            let msg = packet.msg.as_bytes();
            let slot = net
                .find((packet.src, packet.dst), msg)
                .expect_err("not yet in");
            net.insert(slot, (packet.src, packet.dst), msg);
        }
        // Inserted in any order at the slots `find` gives, the packets are
        // in their sorted order.
        let mut shuffled = Network::default();
        for packet in packets.iter().rev() {
            let msg = packet.msg.as_bytes();
            let slot = shuffled
                .find((packet.src, packet.dst), msg)
                .expect_err("not yet in");
            shuffled.insert(slot, (packet.src, packet.dst), msg);
        }
        assert_eq!(shuffled, net);
        let key = |p: &Packet| (p.src, p.dst, p.msg);
        let order: Vec<_> = net.iter().map(|p| key(&p)).collect();
        assert_eq!(order, packets.iter().map(key).collect::<Vec<_>>());
        let found = net.find((0, 1), &[3]).expect("sent");
        assert_eq!(found.index, 0);
        net.add_copy(found, 2);
        assert_eq!(net.get(0).map(|p| (p.count, p.surplus)), Some((2, false)));
        net.add_copy(found, 2);
        assert_eq!(net.get(0).map(|p| (p.count, p.surplus)), Some((2, true)));
        let slot = |net: &Network| net.slots().next().expect("a packet").0;
        net.take_copy(slot(&net), Surplus::Ends);
        net.take_copy(slot(&net), Surplus::None);
        net.take_copy(slot(&net), Surplus::None);
        assert_eq!(net.len(), 4);
        assert!(net.iter().all(|p| p.msg.as_bytes() != [3]));
        let sorted: Vec<Packet> = net.iter().collect();
        assert!(sorted.windows(2).all(|pair| {
            (pair[0].src, pair[0].dst, pair[0].msg) < (pair[1].src, pair[1].dst, pair[1].msg)
        }));
    }

    #[test]
    fn payloads_compare_inline_as_slices_do() {
        let payloads: [&[u8]; 7] = [&[], &[0], &[1], &[0, 0], &[0, 1], &[1, 0], &[255; 64]];
        for a in payloads {
            for b in payloads {
                assert_eq!(same_payload(a, b), a == b, "{a:?} {b:?}");
                assert_eq!(payload_order(a, b), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn a_link_span_covers_its_packets_in_send_order() {
        let net: Network = [
            packet(0, 1, &[1], 1),
            packet(0, 2, &[7], 1),
            packet(0, 2, &[6], 1),
            packet(1, 0, &[1], 1),
        ]
        .into_iter()
        .collect();
        let (runs, end, same) = net.link_span((0, 2), &[6]);
        assert_eq!(
            (runs, end.index, same.map(|slot| slot.index)),
            (2, 3, Some(2))
        );
        let (runs, end, same) = net.link_span((0, 2), &[7]);
        assert_eq!((runs, end.index, same), (2, 3, None));
        let (runs, end, _) = net.link_span((1, 2), &[1]);
        assert_eq!((runs, end.index, end.offset), (0, 4, net.records.len()));
        let (runs, end, _) = net.link_span((0, 0), &[1]);
        assert_eq!((runs, end.index, end.offset), (0, 0, 0));
    }

    /// `net` renamed the slow way: as packets, renamed, then sorted as
    /// [`Packet`]s order (unordered) or stably by link (FIFO).
    fn renamed_as_packets(net: &Network, fifo: bool, perm: [u8; 3]) -> Network {
        let mut packets: Vec<Packet> = net.iter().collect();
        for packet in &mut packets {
            (packet.src, packet.dst) = (perm[packet.src as usize], perm[packet.dst as usize]);
            let mut bytes = packet.msg.as_bytes().to_vec();
            bytes
                .iter_mut()
                .for_each(|byte| *byte = perm[*byte as usize % 3]);
            packet.msg = payload(&bytes);
        }
        if fifo {
            packets.sort_by_key(|p| (p.src, p.dst));
        } else {
            packets.sort_by_key(|p| (p.src, p.dst, p.msg));
        }
        packets.into_iter().collect()
    }

    #[test]
    fn a_renamed_network_is_its_renamed_packets_in_the_networks_order() {
        // Payload bytes name nodes (byte % 3), renamed with the endpoints.
        let unordered: Network = [
            packet(0, 1, &[0], 1),
            packet(0, 1, &[1, 2], 2),
            packet(0, 2, &[2], 1),
            packet(1, 0, &[], 1),
            packet(1, 0, &[0, 0], 1),
            packet(2, 1, &[1], 3),
        ]
        .into_iter()
        .collect();
        let fifo: Network = [
            packet(0, 1, &[2], 1),
            packet(0, 1, &[0], 1),
            packet(0, 1, &[2], 1),
            packet(1, 2, &[1, 1], 2),
            packet(2, 0, &[0], 1),
            packet(2, 0, &[1], 1),
        ]
        .into_iter()
        .collect();
        let mut scratch = RenameScratch::default();
        for perm in [[0, 1, 2], [1, 0, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]] {
            let rename = |src: &mut u8, dst: &mut u8, msg: &mut [u8]| {
                (*src, *dst) = (perm[*src as usize], perm[*dst as usize]);
                msg.iter_mut()
                    .for_each(|byte| *byte = perm[*byte as usize % 3]);
            };
            for (net, is_fifo) in [(&unordered, false), (&fifo, true)] {
                let expected = renamed_as_packets(net, is_fifo, perm);
                let mut bytes = Vec::new();
                net.encode_renamed(is_fifo, rename, &mut scratch, &mut bytes);
                assert_eq!(bytes, expected.to_bytes(), "{perm:?}, fifo {is_fifo}");
                let mut renamed = net.clone();
                renamed.rename(is_fifo, rename, &mut scratch);
                assert_eq!(renamed, expected, "{perm:?}, fifo {is_fifo}");
            }
        }
    }

    #[test]
    fn a_network_decodes_to_what_it_encoded_and_refuses_bad_records() {
        let net: Network = [packet(0, 1, b"hi", 3), packet(2, 0, &[], 1)]
            .into_iter()
            .collect();
        let bytes = net.to_bytes();
        let mut again = Network::default();
        again.decode_exact_in_place(&bytes).unwrap();
        assert_eq!(again, net);
        assert_eq!(
            again.iter().collect::<Vec<_>>(),
            net.iter().collect::<Vec<_>>()
        );
        let mut bad_flag = bytes.clone();
        bad_flag[4 + HEAD + 2 + 1] = 2;
        assert!(Network::decode_exact(&bad_flag).is_err());
        let mut long = bytes.clone();
        long[4 + 2] = PAYLOAD_MAX as u8 + 1;
        assert!(Network::decode_exact(&long).is_err());
        assert!(Network::decode_exact(&bytes[..bytes.len() - 1]).is_err());
        // A failed decoding in place leaves the whole records before the
        // bad one, never a part of it: the second record is cut short, or
        // its flag is bad.
        let first = net.get(0).expect("two packets");
        let mut bad_second = bytes.clone();
        let last = bad_second.len() - 1;
        bad_second[last] = 2;
        for bad in [
            &bytes[..bytes.len() - 1],
            &bytes[..bytes.len() - 3],
            &bad_second[..],
        ] {
            assert!(again.decode_exact_in_place(bad).is_err());
            assert_eq!(again.iter().collect::<Vec<_>>(), [first]);
            assert_eq!(Network::decode_exact(&again.to_bytes()).unwrap(), again);
        }
    }
}
