//! The World's state and its canonical encoding.
//!
//! A node's core state is an opaque byte blob here: nothing in this module or
//! in the environment interprets it. Only [`crate::world::inspect`] splits it into the
//! durable and volatile parts for properties and descriptions.

use std::num::NonZeroU64;
use std::sync::atomic::{AtomicU64, Ordering};

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::{Event, EventKind, PAYLOAD_MAX};
use crate::core::hex::hex;
pub use crate::world::network::{Network, PacketRef, PacketRefs, Packets};

/// A payload of at most [`PAYLOAD_MAX`] bytes, stored inline (no allocation);
/// bytes past `len` are zero, so derived comparisons are canonical.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::Payload;
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
/// use cmc_world::world::state::Payload;
///
/// let payload = |bytes: &[u8]| Payload::new(bytes).unwrap();
/// assert!(payload(&[9]) < payload(&[0, 0]), "shorter first");
/// assert!(payload(&[1, 2, 3]) < payload(&[1, 2, 4]));
/// assert_eq!(payload(&[7; 10]), payload(&[7; 10]));
/// assert_ne!(payload(&[7; 10]), payload(&[7; 11]));
/// ```
#[derive(Clone, Copy, Eq)]
pub struct Payload {
    len: u8,
    bytes: [u8; PAYLOAD_MAX],
}

impl Payload {
    /// `bytes` as a payload, or `None` if longer than [`PAYLOAD_MAX`].
    ///
    /// ```
    /// use cmc_world::core::abi::PAYLOAD_MAX;
    /// use cmc_world::world::state::Payload;
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
    fn decode_bytes(decoder: &mut Decoder<'_>, len: u8) -> Result<Payload, DecodeError> {
        let mut payload = Payload::default();
        payload.decode_bytes_in_place(decoder, len)?;
        Ok(payload)
    }

    /// As [`Payload::decode_bytes`], into `self`.
    #[inline]
    fn decode_bytes_in_place(
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

/// Copies of one message in flight: in an unordered network all copies with
/// the same source, destination and bytes; in a FIFO network a run of equal
/// consecutive messages on one link (see [`crate::world::env`]). Encoded as its
/// fields in order.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::{Packet, Payload};
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
    /// bound, whose number is not tracked (see [`crate::world::env`]).
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
const RECORD_MAX: usize = 7 + PAYLOAD_MAX;

/// Appends `items`, each encoded by `write` into a buffer of [`RECORD_MAX`]
/// bytes (it returns how many it wrote): room for them all is made once,
/// and each item's bytes are fixed-size copies, with no capacity check or
/// call per field. `write` must write exactly what the item's
/// [`Encode::encode`] does.
#[inline]
fn write_records<T>(
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

/// A PERSIST the core emitted that the environment has not flushed yet.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::{Payload, Persist};
///
/// // Bytes 1, 0 to be written at offset 4 of the durable part.
/// let write = Persist { offset: 4, bytes: Payload::new(&[1, 0]).unwrap() };
/// assert_eq!(write.to_bytes(), [4, 0, 0, 0, 2, 1, 0]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Encode)]
pub struct Persist {
    /// Offset into the durable part.
    pub offset: u32,
    /// Bytes to write there.
    pub bytes: Payload,
}

/// The deadline of a timer armed with `SET_TIMER_AT`: it may fire only once
/// its node's clock has reached `at`.
///
/// ```
/// use cmc_world::world::state::{Deadline, NodeState};
///
/// let mut node = NodeState::default();
/// node.timers = 0b1;
/// node.set_deadline(0, Some(3));
/// assert_eq!(node.deadlines, [Deadline { timer: 0, at: 3 }]);
/// assert!(!node.timer_due(0), "the clock is at 0");
/// node.clock = 3;
/// assert!(node.timer_due(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Encode)]
pub struct Deadline {
    /// The timer id.
    pub timer: u8,
    /// The clock value from which the timer may fire.
    pub at: u32,
}

/// One node: its core's bytes and what the environment holds for it.
///
/// Its encoding is the core state in a sparse form, then the fields not at
/// their default (see the `Encode` impl).
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::{World, WorldSpec};
///
/// let world = World::new(WorldSpec::new(Arc::new(ReqAck::default()), 2)?);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// // Every node has started: up, its clock at 0, nothing waiting to be flushed.
/// for node in &init[0].nodes {
///     assert!(!node.crashed && node.clock == 0 && node.persists.is_empty());
/// }
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Debug, Default, Eq)]
pub struct NodeState {
    /// The core state: durable part, then volatile part. Opaque outside `inspect`.
    pub(crate) core: Vec<u8>,
    /// Whether the node is down.
    pub crashed: bool,
    /// The node's clock (advanced by TICK).
    pub clock: u32,
    /// Armed timers, bit per timer id.
    pub timers: u32,
    /// Pending wake-ups, bit per wake id.
    pub wakes: u32,
    /// Unflushed persists, oldest first.
    pub persists: Vec<Persist>,
    /// Deadlines of the armed timers that have one, sorted by timer id; an
    /// armed timer without one may fire at any moment.
    pub deadlines: Vec<Deadline>,
    /// Pending random choices the core asked for (`CHOOSE`), sorted by id.
    pub choices: Vec<Choice>,
}

/// A node's fields in declaration order, the environment's scalars together.
pub(crate) type NodeFields<'a> = (
    &'a [u8],
    (bool, u32, u32, u32),
    &'a [Persist],
    &'a [Deadline],
    &'a [Choice],
);

impl NodeState {
    /// Every field, in declaration order: what a node's copy, encoding and
    /// order (under symmetry) go through.
    pub(crate) fn fields(&self) -> NodeFields<'_> {
        // Every field named: a new field must be added here too.
        let NodeState {
            core,
            crashed,
            clock,
            timers,
            wakes,
            persists,
            deadlines,
            choices,
        } = self;
        let scalars = (*crashed, *clock, *timers, *wakes);
        (core, scalars, persists, deadlines, choices)
    }

    /// The deadline of timer `timer`, if it was armed with one.
    pub fn deadline(&self, timer: u8) -> Option<u32> {
        self.deadlines
            .iter()
            .find(|deadline| deadline.timer == timer)
            .map(|deadline| deadline.at)
    }

    /// Whether armed timer `timer` may fire now: it has no deadline, or the
    /// node's clock has reached it.
    pub fn timer_due(&self, timer: u8) -> bool {
        self.deadline(timer).is_none_or(|at| self.clock >= at)
    }

    /// Gives timer `timer` the deadline `at` (replacing an earlier one), or
    /// none (`None`), keeping [`NodeState::deadlines`] sorted.
    pub fn set_deadline(&mut self, timer: u8, at: Option<u32>) {
        let position = self.deadlines.partition_point(|d| d.timer < timer);
        let present = self
            .deadlines
            .get(position)
            .is_some_and(|d| d.timer == timer);
        match (at, present) {
            (Some(at), true) => self.deadlines[position].at = at,
            (Some(at), false) => self.deadlines.insert(position, Deadline { timer, at }),
            (None, true) => {
                self.deadlines.remove(position);
            }
            (None, false) => {}
        }
    }
}

/// A random choice a core asked for and the environment has not made yet.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::Choice;
///
/// // A coin the core asked for (`CHOOSE` id 1 among 2 values): the
/// // environment explores both CHOICE events, value 0 and value 1.
/// let coin = Choice { id: 1, k: 2 };
/// assert_eq!(coin.to_bytes(), [1, 2]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Encode)]
pub struct Choice {
    /// The choice id (`0..TIMERS_MAX`), echoed in the `CHOICE` event.
    pub id: u8,
    /// Number of values: the event carries one of `0..k`.
    pub k: u8,
}

/// What a ghost history entry records.
///
/// ```
/// use cmc_world::world::state::GhostKind;
///
/// assert!(GhostKind::Reply.is_answer() && GhostKind::LocalFail.is_answer());
/// assert!(!GhostKind::Invoke.is_answer() && !GhostKind::Retry.is_answer());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode)]
pub enum GhostKind {
    /// The environment issued a client request.
    Invoke,
    /// A core replied (a REPLY output).
    Reply,
    /// The environment failed the request locally.
    LocalFail,
    /// The client timed out and sent the request again, to `node` (budget `retries`).
    Retry,
}

impl GhostKind {
    /// Whether the entry answers its request (a reply or a local failure).
    pub fn is_answer(self) -> bool {
        matches!(self, GhostKind::Reply | GhostKind::LocalFail)
    }
}

/// One entry of the ghost history of client requests and replies.
///
/// A property of replies, written over the ghost history alone (no core
/// internals): every reply of `reqack` is one byte.
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Property;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::state::{GhostKind, WorldState};
/// use cmc_world::{World, WorldSpec};
///
/// let one_byte = Property::always("OneByteReplies", |_: &World, state: &WorldState| {
///     state.ghost.iter()
///         .filter(|entry| entry.kind == GhostKind::Reply)
///         .all(|entry| entry.payload.as_bytes().len() == 1)
/// });
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(2).build()?;
/// let world = World::new(spec).with_property(one_byte);
/// assert_eq!(Checker::new(world).workers(1).run().verdict, Verdict::Pass);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GhostEntry {
    /// What happened.
    pub kind: GhostKind,
    /// The request id.
    pub request: u32,
    /// The node the request went to, or that replied.
    pub node: u8,
    /// Invoke and retry: the operation's bytes (empty without a workload);
    /// reply: the reply's bytes; local failure: empty.
    pub payload: Payload,
}

impl GhostEntry {
    /// An invocation of request 0 at node 0 with no payload: what an entry
    /// is decoded into.
    const EMPTY: GhostEntry = GhostEntry {
        kind: GhostKind::Invoke,
        request: 0,
        node: 0,
        payload: Payload::EMPTY,
    };

    /// Appends the encoding of `self` with its node renamed `node(self.node)`.
    #[inline]
    fn encode_renamed(&self, node: impl Fn(u8) -> u8, out: &mut Vec<u8>) {
        write_records(std::slice::from_ref(self), out, |entry, record| {
            entry.write_renamed(&node, record)
        });
    }

    /// Writes the encoding of `self` with its node renamed `node(self.node)`
    /// at the start of `record`; returns its length.
    #[inline]
    fn write_renamed(&self, node: impl Fn(u8) -> u8, record: &mut [u8; RECORD_MAX]) -> usize {
        let GhostEntry {
            kind,
            request,
            node: id,
            payload,
        } = self;
        let [r0, r1, r2, r3] = request.to_le_bytes();
        record[..7].copy_from_slice(&[*kind as u8, r0, r1, r2, r3, node(*id), payload.len]);
        record[7..].copy_from_slice(&payload.bytes);
        7 + payload.len as usize
    }
}

/// The fields in order, as `#[derive(Encode)]` writes them (the kind as its
/// one-byte tag); written with one copy before the payload's bytes: an
/// entry is encoded for every successor that has it.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::{GhostEntry, GhostKind, Payload};
///
/// let payload = Payload::new(&[9]).unwrap();
/// for kind in [GhostKind::Invoke, GhostKind::Reply, GhostKind::LocalFail, GhostKind::Retry] {
///     let entry = GhostEntry { kind, request: 258, node: 1, payload };
///     let mut fields = Vec::new();
///     (kind, 258u32, 1u8, payload).encode(&mut fields);
///     assert_eq!(entry.to_bytes(), fields);
///     assert_eq!(GhostEntry::decode_exact(&fields).unwrap(), entry);
/// }
/// ```
impl Encode for GhostEntry {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        self.encode_renamed(|node| node, out);
    }

    /// Each entry written into room made for the longest at once.
    fn encode_slice(entries: &[GhostEntry], out: &mut Vec<u8>) {
        write_records(entries, out, |entry, record| {
            entry.write_renamed(|node| node, record)
        });
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut entry = GhostEntry::EMPTY;
        entry.decode_in_place(decoder)?;
        Ok(entry)
    }

    /// Read as written: the seven bytes before the payload's at once, then
    /// the payload's (a history is decoded with every expanded state).
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let offset = decoder.offset();
        let &[tag, r0, r1, r2, r3, node, len] = decoder.take(7)? else {
            unreachable!("7 bytes taken")
        };
        self.kind = match tag {
            0 => GhostKind::Invoke,
            1 => GhostKind::Reply,
            2 => GhostKind::LocalFail,
            3 => GhostKind::Retry,
            tag => {
                return Err(DecodeError::UnknownVariant {
                    offset,
                    type_name: "GhostKind",
                    tag,
                })
            }
        };
        self.request = u32::from_le_bytes([r0, r1, r2, r3]);
        self.node = node;
        self.payload.decode_bytes_in_place(decoder, len)
    }

    /// Each entry decoded in its place in `into`, not built apart and
    /// moved there: the move read back at once, in wide loads, the bytes
    /// just written in narrow stores, which stalled until the stores
    /// completed (measured with `perf` when networks were decoded so).
    fn decode_into(
        decoder: &mut Decoder<'_>,
        len: usize,
        into: &mut Vec<GhostEntry>,
    ) -> Result<(), DecodeError> {
        for _ in 0..len {
            into.push(GhostEntry::EMPTY);
            let last = into.last_mut().expect("an entry was pushed");
            last.decode_in_place(decoder)?;
        }
        Ok(())
    }
}

/// The ghost history of client requests and replies, and how much of it is
/// part of the state's identity.
///
/// In memory it holds the entries in the order they happened, as long as the
/// state was made by steps (an initial state and successors: every state of
/// a counterexample, which is rebuilt by replay). Its encoding depends on the
/// mode the World chose (see [`crate::properties`]):
///
/// - full (the default): every entry, in order;
/// - per request (a summary is set): the entries grouped by request id,
///   ascending, each request's entries in their order, then the summary's
///   bytes. The order between requests leaves the identity; the summary
///   keeps what of it the properties still need (e.g. the linearizations of
///   the history). A state decoded from this form holds its entries grouped
///   so: everything the environment and the properties read must then be a
///   function of each request's own entries and of the summary.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::world::state::{Ghost, GhostEntry, GhostKind, Payload};
///
/// let mut ghost = Ghost::default();
/// let payload = Payload::default();
/// ghost.push(GhostEntry { kind: GhostKind::Invoke, request: 0, node: 1, payload });
/// assert_eq!((ghost.len(), ghost[0].node), (1, 1));
/// assert_eq!(ghost.summary(), None, "the whole history counts");
/// assert_eq!(Ghost::decode_exact(&ghost.to_bytes()).unwrap(), ghost);
/// ```
#[derive(Debug, Default, Eq)]
pub struct Ghost {
    entries: Vec<GhostEntry>,
    summary: Option<Vec<u8>>,
}

impl Ghost {
    /// Appends `entry`.
    pub fn push(&mut self, entry: GhostEntry) {
        self.entries.push(entry);
    }

    /// The summary that stands for the order between requests, when the
    /// entries count per request (`None`: the whole history counts).
    pub fn summary(&self) -> Option<&[u8]> {
        self.summary.as_deref()
    }

    /// The summary, to be replaced or updated in place; `None` in full mode.
    pub(crate) fn summary_mut(&mut self) -> &mut Option<Vec<u8>> {
        &mut self.summary
    }

    /// The request ids of the entries, ascending and distinct.
    fn requests(&self) -> impl Iterator<Item = u32> + '_ {
        let mut last: Option<u32> = None;
        std::iter::from_fn(move || {
            let next = self
                .entries
                .iter()
                .map(|entry| entry.request)
                .filter(|&request| last.is_none_or(|last| request > last))
                .min()?;
            last = Some(next);
            Some(next)
        })
    }
}

impl std::ops::Deref for Ghost {
    type Target = [GhostEntry];
    fn deref(&self) -> &[GhostEntry] {
        &self.entries
    }
}

impl<'a> IntoIterator for &'a Ghost {
    type Item = &'a GhostEntry;
    type IntoIter = std::slice::Iter<'a, GhostEntry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl<'a> IntoIterator for &'a mut Ghost {
    type Item = &'a mut GhostEntry;
    type IntoIter = std::slice::IterMut<'a, GhostEntry>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter_mut()
    }
}

impl Ghost {
    /// Appends the encoding of `self` with each entry's node `n` renamed
    /// `node(n)`: the encoding of the ghost so renamed, without renaming it.
    pub(crate) fn encode_renamed(&self, node: impl Fn(u8) -> u8 + Copy, out: &mut Vec<u8>) {
        match &self.summary {
            None => {
                out.push(0);
                let count = u32::try_from(self.entries.len()).expect("at most u32::MAX entries");
                count.encode(out);
                self.write_entries_renamed(node, out);
            }
            Some(summary) => {
                out.push(1);
                (self.entries.len() as u32).encode(out);
                if self.entries.is_sorted_by_key(|entry| entry.request) {
                    // Grouped already (as a decoded history is).
                    self.write_entries_renamed(node, out);
                    summary.encode(out);
                    return;
                }
                for request in self.requests() {
                    for entry in self.entries.iter().filter(|e| e.request == request) {
                        entry.encode_renamed(node, out);
                    }
                }
                summary.encode(out);
            }
        }
    }

    /// Appends every entry in order, each entry's node `n` renamed `node(n)`.
    fn write_entries_renamed(&self, node: impl Fn(u8) -> u8 + Copy, out: &mut Vec<u8>) {
        write_records(&self.entries, out, |entry, record| {
            entry.write_renamed(node, record)
        });
    }
}

/// Cloning into an existing ghost reuses its memory.
impl Clone for Ghost {
    fn clone(&self) -> Self {
        let mut copy = Ghost::default();
        copy.clone_from(self);
        copy
    }

    #[inline(always)]
    fn clone_from(&mut self, source: &Self) {
        copy_into(&source.entries, &mut self.entries);
        match (&mut self.summary, &source.summary) {
            (Some(mine), Some(theirs)) => mine.clone_from(theirs),
            (mine, theirs) => mine.clone_from(theirs),
        }
    }
}

/// A tag (0: full, 1: per request), the entries (grouped by request in the
/// second mode), then in the second mode the summary.
impl Encode for Ghost {
    fn encode(&self, out: &mut Vec<u8>) {
        self.encode_renamed(|node| node, out);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut ghost = Ghost::default();
        ghost.decode_in_place(decoder)?;
        Ok(ghost)
    }

    /// Into the memory of the entries and the summary `self` holds.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let per_request = match u8::decode(decoder)? {
            0 => false,
            1 => true,
            tag => return decoder.invalid(format!("ghost mode {tag} is neither 0 nor 1")),
        };
        self.entries.decode_in_place(decoder)?;
        if !per_request {
            self.summary = None;
            return Ok(());
        }
        if self.entries.windows(2).any(|w| w[0].request > w[1].request) {
            return decoder.invalid("ghost entries not grouped by request");
        }
        match &mut self.summary {
            Some(summary) => summary.decode_in_place(decoder),
            None => {
                self.summary = Some(Vec::decode(decoder)?);
                Ok(())
            }
        }
    }
}

/// Index of each fault budget in [`WorldState::budgets`].
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::action::Action;
/// use cmc_world::world::state::Budget;
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["crashes=1", "restarts=1"])?;
/// let world = World::new(spec);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// assert_eq!(init[0].budget(Budget::Crashes), 1);
/// let crash = Action::Crash { node: 0 };
/// let crashed = world.next_state(&init[0], &crash).expect("enabled");
/// assert_eq!(crashed.budget(Budget::Crashes), 0);
/// assert_eq!(crashed.budget(Budget::Restarts), 1);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// DROP(m).
    Drops,
    /// DUP(m).
    Dups,
    /// CRASH(n).
    Crashes,
    /// RESTART(n).
    Restarts,
    /// LINKS(change).
    Partitions,
    /// TICK(n).
    Ticks,
    /// LOCAL_FAIL(r).
    LocalFails,
    /// LINK(src->dst): one direction of a link cut or healed.
    OneWayCuts,
    /// ISOLATE(n): every link to and from a node cut.
    Isolations,
    /// SPLIT(group): every link between two groups of nodes cut.
    Splits,
    /// RETRY(r): a client times out and sends its request again.
    Retries,
}

/// Number of [`Budget`] kinds.
pub const BUDGETS: usize = 11;

/// The World's state. Its [`Encode`] bytes are its identity: the fields in
/// order, each node as [`NodeState`] encodes it.
///
/// # Example
///
/// Walking the World by hand, as a property or a test sees it:
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::action::Action;
/// use cmc_world::world::state::{Budget, GhostKind};
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "drops=1"])?;
/// let world = World::new(spec);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// let [start] = &init[..] else { panic!("one initial state") };
/// assert_eq!(start.nodes.len(), 2);
/// assert!(start.net.is_empty() && start.ghost.is_empty());
/// assert_eq!(start.budget(Budget::Drops), 1);
///
/// let request = Action::Client { request: 0, node: 0, op: 0 };
/// let next = world.next_state(start, &request).expect("enabled");
/// assert_eq!(next.issued, 1);
/// assert_eq!(next.ghost[0].kind, GhostKind::Invoke);
/// // The sender made the request durable: one persist waits for FLUSH.
/// assert_eq!(next.nodes[0].persists.len(), 1);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Debug, Default)]
pub struct WorldState {
    /// The nodes, by id.
    pub nodes: Vec<NodeState>,
    /// Messages in flight: sorted by (src, dst, bytes) with counts, or, in FIFO
    /// mode, sorted by (src, dst) and in send order within a link.
    pub net: Network,
    /// Cut directions of links, sorted: `(src, dst)` when messages from
    /// `src` to `dst` are not delivered (a pair cut is both directions).
    pub cut_links: Vec<(u8, u8)>,
    /// Remaining fault budgets, indexed by [`Budget`].
    pub budgets: [u8; BUDGETS],
    /// Client requests issued so far (request ids `0..issued`).
    pub issued: u8,
    /// Client invocations and replies, in order.
    pub ghost: Ghost,
    /// Requests, sorted, that were open (invoked, not answered) at their
    /// node when that node crashed: the client saw its connection break, so
    /// the request may never be answered (see [`crate::world::quiescence::answered`]).
    pub lost_in_crash: Vec<u8>,
    /// Where the state came from: bookkeeping, not part of the state.
    provenance: Provenance,
}

/// What a state knows of where it came from, which lets
/// [`WorldState::encode_successor`] copy what a step left unchanged instead
/// of encoding it, and the flight recorder skip a pre-state it holds
/// already. Bookkeeping, not part of the state: never encoded or compared,
/// and not copied (a copy was neither decoded nor stepped nor recorded).
#[derive(Default)]
struct Provenance {
    /// Where the parts of its encoding ended in the bytes it was last
    /// decoded from.
    layout: DecodedLayout,
    /// What it has of its parent's, when it is a step's successor.
    lineage: Lineage,
    /// Set when it is a partial successor: see [`WorldState::copy_for_step`].
    partial: Option<PartialNodes>,
    /// See [`WorldState::recorded_as`] (0: none); atomic only to keep the
    /// state `Sync` (a stamp is read and written by the thread stepping it).
    recorded_as: AtomicU64,
    /// See [`WorldState::renaming`].
    renaming: Option<u16>,
}

/// A partial successor's nodes: only `kept` (if any) was copied from the
/// parent and may have been stepped; the others hold whatever their memory
/// held, and stand for the parent's nodes of the same ids.
#[derive(Clone, Copy)]
struct PartialNodes {
    kept: Option<u8>,
}

impl std::fmt::Debug for Provenance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("(bookkeeping)")
    }
}

/// What a state has of its parent's, when it is a step's successor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Lineage {
    /// Nothing known: the state is not known to be a step's successor, or
    /// its nodes were renamed since.
    #[default]
    Unknown,
    /// A step's successor: every node but `changed` (if any) is the
    /// parent's unchanged, and the parent's history entries are the first
    /// of its own (a step only appends entries; the summary may change).
    Step {
        /// The one node the step may have changed.
        changed: Option<u8>,
    },
}

/// Where the parts of a state's encoding end in the bytes it was last
/// decoded from, as offsets from the start of the state's encoding.
#[derive(Default)]
struct DecodedLayout {
    /// The end of each node's encoding; empty when the state was not decoded.
    node_ends: Vec<u32>,
    /// The end of the network's encoding: the environment's other fields follow.
    net_end: u32,
    /// The end of the state's encoding.
    end: u32,
}

impl DecodedLayout {
    /// Forgets the bytes: the state no longer matches them.
    fn clear(&mut self) {
        self.node_ends.clear();
    }
}

/// Cloning into an existing node reuses its memory (`clone_from`).
impl Clone for NodeState {
    fn clone(&self) -> Self {
        let mut copy = NodeState::default();
        copy.clone_from(self);
        copy
    }

    #[inline(always)]
    fn clone_from(&mut self, source: &Self) {
        let (core, (crashed, clock, timers, wakes), persists, deadlines, choices) = source.fields();
        copy_into(core, &mut self.core);
        self.crashed = crashed;
        self.clock = clock;
        self.timers = timers;
        self.wakes = wakes;
        copy_into(persists, &mut self.persists);
        copy_into(deadlines, &mut self.deadlines);
        copy_into(choices, &mut self.choices);
    }
}

/// Makes `to` a copy of `from` in its own memory: what `clone_into` does,
/// with the common cases (nothing to copy, the same length) done first:
/// every node of every successor is copied.
#[inline]
fn copy_into<T: Copy>(from: &[T], to: &mut Vec<T>) {
    if from.is_empty() {
        to.clear();
    } else if from.len() == to.len() {
        to.copy_from_slice(from);
    } else {
        from.clone_into(to);
    }
}

/// A state's fields in declaration order.
type WorldFields<'a> = (
    &'a [NodeState],
    &'a Network,
    &'a [(u8, u8)],
    &'a [u8; BUDGETS],
    u8,
    &'a Ghost,
    &'a [u8],
);

/// Whether `a` and `b` hold the same items, empty ones compared without a
/// call. `==` on byte slices calls the C library's `memcmp` even when they
/// are empty, and an empty `Vec`'s pointer is dangling: the AVX-512
/// `memcmp` reads it with a masked load that the processor completes only
/// through a microcode assist, hundreds of cycles (21% of reqack's cycles,
/// measured with `perf`, when the successor's fields were compared so).
#[inline]
fn same_items<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// Field by field, each sequence compared with `same_items` (most of a
/// node's are empty): a step's successor compares its stepped node with the
/// parent's, and C properties their state with the one they were last
/// called on.
impl PartialEq for NodeState {
    fn eq(&self, other: &Self) -> bool {
        let (core, scalars, persists, deadlines, choices) = self.fields();
        let (their_core, their_scalars, their_persists, their_deadlines, their_choices) =
            other.fields();
        scalars == their_scalars
            && same_items(core, their_core)
            && same_items(persists, their_persists)
            && same_items(deadlines, their_deadlines)
            && same_items(choices, their_choices)
    }
}

/// The entries, then the summary, each with `same_items`.
impl PartialEq for Ghost {
    fn eq(&self, other: &Self) -> bool {
        same_items(&self.entries, &other.entries) && self.same_summary(other)
    }
}

impl Ghost {
    /// Whether `self` and `other` hold the same summary, or none.
    fn same_summary(&self, other: &Ghost) -> bool {
        match (&self.summary, &other.summary) {
            (Some(summary), Some(theirs)) => same_items(summary, theirs),
            (summary, theirs) => summary.is_none() && theirs.is_none(),
        }
    }
}

/// Field by field, in declaration order, each sequence
/// compared with `same_items` (the cut links and the crash-lost requests
/// are nearly always empty); the bookkeeping is not compared.
impl PartialEq for WorldState {
    fn eq(&self, other: &Self) -> bool {
        let (nodes, net, cut_links, budgets, issued, ghost, lost_in_crash) = self.fields();
        let (
            their_nodes,
            their_net,
            their_cuts,
            their_budgets,
            their_issued,
            their_ghost,
            their_lost,
        ) = other.fields();
        issued == their_issued
            && budgets == their_budgets
            && same_items(nodes, their_nodes)
            && net == their_net
            && same_items(cut_links, their_cuts)
            && ghost == their_ghost
            && same_items(lost_in_crash, their_lost)
    }
}

impl Eq for WorldState {}

/// Appends `items` encoded as a `Vec` of them is (a `u32` count, then each).
fn encode_sequence<T: Encode>(items: &[T], out: &mut Vec<u8>) {
    let count = u32::try_from(items.len()).expect("at most u32::MAX items");
    out.extend_from_slice(&count.to_le_bytes());
    T::encode_slice(items, out);
}

/// Cloning into an existing state reuses its memory (`clone_from`): how
/// the World makes successors without allocating (see
/// [`crate::world::env::Env::next`]).
impl Clone for WorldState {
    fn clone(&self) -> Self {
        let mut copy = WorldState::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        debug_assert!(source.is_whole(), "a partial state copied");
        source.nodes.clone_into(&mut self.nodes);
        self.copy_environment(source);
        self.provenance.partial = None;
    }
}

impl WorldState {
    /// Makes every field of `self` but the nodes a copy of `source`'s, in
    /// the memory `self` holds, and forgets its layout and lineage (a copy
    /// was neither decoded nor stepped).
    #[inline(always)]
    fn copy_environment(&mut self, source: &WorldState) {
        let (_, net, cut_links, budgets, issued, ghost, lost_in_crash) = source.fields();
        self.net.clone_from(net);
        copy_into(cut_links, &mut self.cut_links);
        self.budgets = *budgets;
        self.issued = issued;
        self.ghost.clone_from(ghost);
        copy_into(lost_in_crash, &mut self.lost_in_crash);
        self.provenance.layout.clear();
        self.provenance.lineage = Lineage::Unknown;
        self.provenance.renaming = None;
        self.forget_recording();
    }
}

/// Bytes of a core state a bit of the sparse form's bitmap stands for.
const CORE_BLOCK: usize = 32;

/// A core state's bytes in sparse form: its length (`u32`), a bitmap with a
/// bit per [`CORE_BLOCK`] bytes of the state (the last block may be
/// shorter), set for exactly the blocks that hold a non-zero byte, then those
/// blocks in order. Core states are mostly zeros (unused slots, buffers):
/// this keeps a state's encoding, its fingerprint's input and its frontier
/// entry small.
fn encode_core(core: &[u8], out: &mut Vec<u8>) {
    let len = u32::try_from(core.len()).expect("a core state fits in u32::MAX bytes");
    let bitmap_len = core.len().div_ceil(CORE_BLOCK * 8);
    out.reserve(4 + bitmap_len + core.len());
    out.extend_from_slice(&len.to_le_bytes());
    let bitmap_at = out.len();
    out.resize(bitmap_at + bitmap_len, 0);
    let keep = |out: &mut Vec<u8>, index: usize, block: &[u8]| {
        if nonzero(block) {
            out[bitmap_at + index / 8] |= 1 << (index % 8);
            out.extend_from_slice(block);
        }
    };
    // Whole blocks are copied with a fixed size (no call); the last may be shorter.
    let blocks = core.chunks_exact(CORE_BLOCK);
    let last = blocks.remainder();
    let whole = blocks.len();
    for (index, block) in blocks.enumerate() {
        let block: &[u8; CORE_BLOCK] = block.try_into().expect("a whole block");
        keep(out, index, block);
    }
    if !last.is_empty() {
        keep(out, whole, last);
    }
}

/// Whether `block` holds a non-zero byte.
#[inline]
fn nonzero(block: &[u8]) -> bool {
    let words = block.chunks_exact(8);
    let tail = words.remainder().iter().fold(0, |any, &byte| any | byte);
    let any = words.fold(0, |any, word| {
        any | u64::from_ne_bytes(word.try_into().expect("8 bytes"))
    });
    any != 0 || tail != 0
}

/// Reads a core state written by [`encode_core`] into `core` (its memory
/// reused). Refuses every byte string `encode_core` does not write: a block
/// marked non-zero that is all zeros, a bit set past the last block.
fn decode_core_into(decoder: &mut Decoder<'_>, core: &mut Vec<u8>) -> Result<(), DecodeError> {
    let len = u32::decode(decoder)? as usize;
    let blocks = len.div_ceil(CORE_BLOCK);
    let bitmap = decoder.take(blocks.div_ceil(8))?;
    if !blocks.is_multiple_of(8) && bitmap[bitmap.len() - 1] >> (blocks % 8) != 0 {
        return decoder.invalid("core state bitmap marks a block past the state's end");
    }
    core.clear();
    core.resize(len, 0);
    // Only the marked blocks are visited, in order.
    for (byte, &marks) in bitmap.iter().enumerate() {
        let mut marks = marks;
        while marks != 0 {
            let start = (byte * 8 + marks.trailing_zeros() as usize) * CORE_BLOCK;
            marks &= marks - 1;
            let block = &mut core[start..len.min(start + CORE_BLOCK)];
            let bytes = decoder.take(block.len())?;
            if !nonzero(bytes) {
                return decoder.invalid("core state block marked non-zero is all zeros");
            }
            block.copy_from_slice(bytes);
        }
    }
    Ok(())
}

/// The bits of a node's header byte: which of its fields follow the core
/// state. A field at its default (false, zero, empty) is left out, as most
/// are, which keeps a state's encoding, and its fingerprint's input, short.
mod header {
    pub const CRASHED: u8 = 1;
    pub const CLOCK: u8 = 1 << 1;
    pub const TIMERS: u8 = 1 << 2;
    pub const WAKES: u8 = 1 << 3;
    pub const PERSISTS: u8 = 1 << 4;
    pub const DEADLINES: u8 = 1 << 5;
    pub const CHOICES: u8 = 1 << 6;
    /// Every bit a header may have.
    pub const ALL: u8 = (1 << 7) - 1;
}

/// The core state in the sparse form of `encode_core`, a header byte whose
/// bits say which other fields are not at their default, then those fields
/// in declaration order: the three `u32` scalars, the sequences as a `Vec`
/// of them is encoded (never empty).
impl Encode for NodeState {
    fn encode(&self, out: &mut Vec<u8>) {
        let (core, (crashed, clock, timers, wakes), persists, deadlines, choices) = self.fields();
        encode_core(core, out);
        let bit = |present: bool, bit: u8| if present { bit } else { 0 };
        let flags = bit(crashed, header::CRASHED)
            | bit(clock != 0, header::CLOCK)
            | bit(timers != 0, header::TIMERS)
            | bit(wakes != 0, header::WAKES)
            | bit(!persists.is_empty(), header::PERSISTS)
            | bit(!deadlines.is_empty(), header::DEADLINES)
            | bit(!choices.is_empty(), header::CHOICES);
        out.push(flags);
        for (value, bit) in [
            (clock, header::CLOCK),
            (timers, header::TIMERS),
            (wakes, header::WAKES),
        ] {
            if flags & bit != 0 {
                out.extend_from_slice(&value.to_le_bytes());
            }
        }
        if flags & header::PERSISTS != 0 {
            encode_sequence(persists, out);
        }
        if flags & header::DEADLINES != 0 {
            encode_sequence(deadlines, out);
        }
        if flags & header::CHOICES != 0 {
            encode_sequence(choices, out);
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut node = NodeState::default();
        node.decode_in_place(decoder)?;
        Ok(node)
    }

    /// The fields in the order of `NodeState::fields`, which names them all.
    /// Refuses every byte string `encode` does not write: a header bit
    /// beyond the seven, a field marked present at its default.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        decode_core_into(decoder, &mut self.core)?;
        let flags = u8::decode(decoder)?;
        if flags & !header::ALL != 0 {
            return decoder.invalid(format!("node header {flags:#04x} has an unknown bit"));
        }
        self.crashed = flags & header::CRASHED != 0;
        for (field, bit, name) in [
            (&mut self.clock, header::CLOCK, "clock"),
            (&mut self.timers, header::TIMERS, "timers"),
            (&mut self.wakes, header::WAKES, "wakes"),
        ] {
            *field = 0;
            if flags & bit != 0 {
                *field = u32::decode(decoder)?;
                if *field == 0 {
                    return decoder.invalid(format!("node {name} marked present is zero"));
                }
            }
        }
        decode_present(decoder, flags & header::PERSISTS != 0, &mut self.persists)?;
        decode_present(decoder, flags & header::DEADLINES != 0, &mut self.deadlines)?;
        decode_present(decoder, flags & header::CHOICES != 0, &mut self.choices)
    }
}

/// Reads into `items` a sequence the header marked `present` (it must not
/// be empty), or empties `items`.
fn decode_present<T: Encode>(
    decoder: &mut Decoder<'_>,
    present: bool,
    items: &mut Vec<T>,
) -> Result<(), DecodeError> {
    items.clear();
    if present {
        items.decode_in_place(decoder)?;
        if items.is_empty() {
            return decoder.invalid("node sequence marked present is empty");
        }
    }
    Ok(())
}

impl Encode for WorldState {
    fn encode(&self, out: &mut Vec<u8>) {
        debug_assert!(self.is_whole(), "a partial state encoded");
        self.nodes.encode(out);
        self.encode_environment(out);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut state = WorldState::default();
        state.decode_in_place(decoder)?;
        Ok(state)
    }

    /// Every node, packet and history entry is decoded into the memory the
    /// state already holds; the fields in the order of `WorldState::fields`,
    /// which names them all.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let start = decoder.offset();
        let offset =
            |decoder: &Decoder<'_>| u32::try_from(decoder.offset() - start).unwrap_or(u32::MAX);
        self.provenance.layout.clear();
        self.provenance.lineage = Lineage::Unknown;
        self.provenance.renaming = None;
        self.provenance.partial = None;
        self.forget_recording();
        let count = u32::decode(decoder)? as usize;
        // Each node takes at least a byte: a count beyond the input is refused
        // by the decoding of the nodes it does not hold.
        let mut node_ends = std::mem::take(&mut self.provenance.layout.node_ends);
        for index in 0..count {
            match self.nodes.get_mut(index) {
                Some(node) => node.decode_in_place(decoder)?,
                None => self.nodes.push(NodeState::decode(decoder)?),
            }
            node_ends.push(offset(decoder));
        }
        self.nodes.truncate(count);
        self.net.decode_in_place(decoder)?;
        let net_end = offset(decoder);
        self.cut_links.decode_in_place(decoder)?;
        // One copy (a generic array's decoding builds a `Vec`).
        self.budgets.copy_from_slice(decoder.take(BUDGETS)?);
        self.issued.decode_in_place(decoder)?;
        self.ghost.decode_in_place(decoder)?;
        self.lost_in_crash.decode_in_place(decoder)?;
        self.provenance.layout = DecodedLayout {
            node_ends,
            net_end,
            end: offset(decoder),
        };
        Ok(())
    }
}

impl WorldState {
    /// Records that `self` is a step's successor: its nodes but `changed`
    /// (if any) are its parent's unchanged, and its history is the parent's
    /// with entries appended (see [`Lineage::Step`]), which
    /// [`WorldState::encode_successor`] then relies on instead of comparing.
    /// Forgotten by a copy, a decoding or a renaming of the nodes
    /// ([`WorldState::forget_lineage`]).
    pub(crate) fn mark_step_successor(&mut self, changed: Option<u8>) {
        self.provenance.lineage = Lineage::Step { changed };
    }

    /// Which renaming of its nodes made `self` canonical under symmetry (an
    /// index into the World's renamings, 0 being the identity), when `self`
    /// is a successor the World just made; `None` when not known (a copy, a
    /// decoding). What lets a step property see a step's two states under
    /// the same names.
    pub(crate) fn renaming(&self) -> Option<u16> {
        self.provenance.renaming
    }

    /// Records that renaming `index` made `self` canonical.
    pub(crate) fn set_renaming(&mut self, index: u16) {
        self.provenance.renaming = Some(index);
    }

    /// Forgets what `self` has of its parent's.
    pub(crate) fn forget_lineage(&mut self) {
        debug_assert!(self.provenance.partial.is_none(), "a partial state renamed");
        self.provenance.lineage = Lineage::Unknown;
    }

    /// The stamp under which the flight recorder last recorded `self` as a
    /// step's pre-state (see
    /// [`crate::run::recorder::Recorder::begin_step_stamped`]), unless
    /// `self` was made, copied into, decoded into or completed since: the
    /// recorder may then hold its encoding still, and it need be neither
    /// compared nor encoded again. A state changed through its public
    /// fields keeps its stamp: only states changed by the World and the
    /// search are stepped under a recorder.
    pub(crate) fn recorded_as(&self) -> Option<NonZeroU64> {
        NonZeroU64::new(self.provenance.recorded_as.load(Ordering::Relaxed))
    }

    /// Records that the flight recorder holds `self` under `stamp`.
    pub(crate) fn set_recorded_as(&self, stamp: NonZeroU64) {
        self.provenance
            .recorded_as
            .store(stamp.get(), Ordering::Relaxed);
    }

    /// Forgets the recorder's stamp: `self` is about to change.
    fn forget_recording(&mut self) {
        *self.provenance.recorded_as.get_mut() = 0;
    }

    /// Makes `self` the start of a *partial* successor of `parent` by a step
    /// that changes node `kept` only (if any): `parent`'s environment and
    /// node `kept` are copied, the other nodes are not (they keep whatever
    /// `self` held; their number is the parent's). Until
    /// [`WorldState::complete_from`] makes it whole, such a state may be
    /// stepped at node `kept`, read by [`WorldState::encode_successor`], or
    /// overwritten, nothing else: its other nodes are not the state's.
    /// Most successors the search makes are states it has seen before,
    /// which it only encodes: their unchanged nodes need not be copied.
    pub(crate) fn copy_for_step(&mut self, parent: &WorldState, kept: Option<u8>) {
        debug_assert!(parent.is_whole(), "a partial state's successor");
        let nodes = &parent.nodes;
        self.nodes.resize_with(nodes.len(), NodeState::default);
        // An action naming no node of the state is refused by the step.
        if let Some(node) = kept.map(usize::from).filter(|&node| node < nodes.len()) {
            self.nodes[node].clone_from(&nodes[node]);
        }
        self.copy_environment(parent);
        self.provenance.partial = Some(PartialNodes { kept });
    }

    /// Makes `self`, a successor of `parent` that may be partial (see
    /// [`WorldState::copy_for_step`]), whole: copies the nodes it does not
    /// hold from `parent`. Nothing for a whole state.
    pub(crate) fn complete_from(&mut self, parent: &WorldState) {
        let Some(PartialNodes { kept }) = self.provenance.partial.take() else {
            return;
        };
        self.forget_recording();
        debug_assert_eq!(
            self.provenance.lineage,
            Lineage::Step { changed: kept },
            "a partial state is a step's successor"
        );
        for (id, (node, theirs)) in self.nodes.iter_mut().zip(&parent.nodes).enumerate() {
            if kept.map(usize::from) != Some(id) {
                node.clone_from(theirs);
            }
        }
    }

    /// Whether `self` is whole: not a partial successor (see
    /// [`WorldState::copy_for_step`]).
    pub(crate) fn is_whole(&self) -> bool {
        self.provenance.partial.is_none()
    }

    /// Appends the encoding of `self`, a successor of `parent`, which was
    /// decoded from `parent_bytes` and not changed since: the same bytes as
    /// [`Encode::encode`], but each node equal to the parent's node of the
    /// same id, and the fields after the network when all equal the
    /// parent's, are copied from `parent_bytes` rather than encoded (a step
    /// changes one node at most, and the history or the budgets seldom).
    /// What [`WorldState::mark_step_successor`] says the step left alone is
    /// taken as equal without a comparison.
    pub(crate) fn encode_successor(
        &self,
        parent: &WorldState,
        parent_bytes: &[u8],
        out: &mut Vec<u8>,
    ) {
        let layout = &parent.provenance.layout;
        let decoded_from_these = layout.node_ends.len() == parent.nodes.len()
            && !layout.node_ends.is_empty()
            && layout.end as usize == parent_bytes.len();
        if !decoded_from_these || self.nodes.len() != parent.nodes.len() {
            return match self.provenance.partial {
                None => self.encode(out),
                Some(PartialNodes { kept }) => {
                    let nodes = (0..parent.nodes.len()).map(|id| match kept {
                        Some(node) if usize::from(node) == id => &self.nodes[id],
                        _ => &parent.nodes[id],
                    });
                    let count = u32::try_from(parent.nodes.len()).expect("at most u32::MAX nodes");
                    out.extend_from_slice(&count.to_le_bytes());
                    nodes.for_each(|node| node.encode(out));
                    self.encode_environment(out);
                }
            };
        }
        let count = u32::try_from(self.nodes.len()).expect("at most u32::MAX nodes");
        out.extend_from_slice(&count.to_le_bytes());
        // Runs of unchanged nodes are copied in one piece.
        let mut unchanged_from = None;
        let mut start = size_of::<u32>();
        let nodes = self.nodes.iter().zip(&parent.nodes).zip(&layout.node_ends);
        for (id, ((node, before), &end)) in nodes.enumerate() {
            // A partial successor's other nodes are its parent's.
            let may_differ = match (self.provenance.partial, self.provenance.lineage) {
                (Some(PartialNodes { kept: changed }), _) | (None, Lineage::Step { changed }) => {
                    changed.map(usize::from) == Some(id)
                }
                (None, Lineage::Unknown) => true,
            };
            debug_assert!(
                may_differ || self.provenance.partial.is_some() || node == before,
                "n{id} changed by a step that cannot"
            );
            if !may_differ || node == before {
                unchanged_from.get_or_insert(start);
            } else {
                if let Some(from) = unchanged_from.take() {
                    out.extend_from_slice(&parent_bytes[from..start]);
                }
                node.encode(out);
            }
            start = end as usize;
        }
        if let Some(from) = unchanged_from {
            out.extend_from_slice(&parent_bytes[from..start]);
        }
        self.net.encode(out);
        if self.after_network_equals(parent) {
            out.extend_from_slice(&parent_bytes[layout.net_end as usize..]);
        } else {
            self.encode_environment_after_net(&self.cut_links, |node| node, out);
        }
    }

    /// Appends the encoding of every field but the nodes: what follows the
    /// nodes in the state's encoding.
    pub(crate) fn encode_environment(&self, out: &mut Vec<u8>) {
        self.net.encode(out);
        self.encode_environment_after_net(&self.cut_links, |node| node, out);
    }

    /// Appends what follows the network in the encoding of the environment,
    /// with the cut links `cut_links` in place of `self`'s and each ghost
    /// entry's node `n` renamed `node(n)` (the other fields hold no node
    /// ids): the rest of the encoding of the environment so changed, without
    /// changing it.
    pub(crate) fn encode_environment_after_net(
        &self,
        cut_links: &[(u8, u8)],
        node: impl Fn(u8) -> u8 + Copy,
        out: &mut Vec<u8>,
    ) {
        let (_, _, _, budgets, issued, ghost, lost_in_crash) = self.fields();
        encode_sequence(cut_links, out);
        budgets.encode(out);
        issued.encode(out);
        ghost.encode_renamed(node, out);
        encode_sequence(lost_in_crash, out);
    }

    /// Whether every field after the network equals `parent`'s (the history
    /// compared by length alone when `self` is known to be `parent`'s
    /// step successor, see [`Lineage::Step`]).
    fn after_network_equals(&self, parent: &WorldState) -> bool {
        let (_, _, cut_links, budgets, issued, ghost, lost_in_crash) = self.fields();
        let (_, _, their_cuts, their_budgets, their_issued, their_ghost, their_lost) =
            parent.fields();
        let same_entries = match self.provenance.lineage {
            // Entries are only appended by a step: the same number, the same entries.
            Lineage::Step { .. } => {
                let same = ghost.len() == their_ghost.len();
                debug_assert!(
                    !same || ghost[..] == their_ghost[..],
                    "a step rewrote history entries"
                );
                same
            }
            Lineage::Unknown => ghost[..] == their_ghost[..],
        };
        let same_history = ghost.same_summary(their_ghost) && same_entries;
        issued == their_issued
            && budgets == their_budgets
            && same_items(cut_links, their_cuts)
            && same_items(lost_in_crash, their_lost)
            && same_history
    }

    /// Every field, in declaration (and encoding) order.
    fn fields(&self) -> WorldFields<'_> {
        // Every field named: a new field must be added here too.
        let WorldState {
            nodes,
            net,
            cut_links,
            budgets,
            issued,
            ghost,
            lost_in_crash,
            provenance: _,
        } = self;
        (
            nodes,
            net,
            cut_links,
            budgets,
            *issued,
            ghost,
            lost_in_crash,
        )
    }

    /// Remaining budget of `kind`.
    pub fn budget(&self, kind: Budget) -> u8 {
        self.budgets[kind as usize]
    }

    /// Whether messages from `src` reach `dst` (the link's direction is not cut).
    pub fn link_up(&self, src: u8, dst: u8) -> bool {
        src == dst || self.cut_links.binary_search(&(src, dst)).is_err()
    }

    /// Whether both directions between `a` and `b` are up.
    pub fn pair_up(&self, a: u8, b: u8) -> bool {
        self.link_up(a, b) && self.link_up(b, a)
    }

    /// Cuts (`cut`) or heals the direction `src -> dst`; whether it changed.
    pub fn set_cut(&mut self, src: u8, dst: u8, cut: bool) -> bool {
        self.forget_recording();
        match (self.cut_links.binary_search(&(src, dst)), cut) {
            (Err(at), true) if src != dst => self.cut_links.insert(at, (src, dst)),
            (Ok(at), false) => {
                self.cut_links.remove(at);
            }
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::spec::WorldSpec;

    impl Persist {
        fn default_for_test() -> Persist {
            Persist {
                offset: 3,
                bytes: Payload::new(&[1, 2]).unwrap(),
            }
        }
    }

    #[test]
    fn state_round_trips() {
        let state = WorldState {
            nodes: vec![NodeState {
                core: vec![1, 2, 3],
                crashed: false,
                clock: 4,
                timers: 1,
                wakes: 0,
                persists: vec![Persist {
                    offset: 0,
                    bytes: Payload::new(&[9]).unwrap(),
                }],
                deadlines: vec![Deadline { timer: 0, at: 7 }],
                choices: vec![Choice { id: 2, k: 3 }],
            }],
            net: [Packet {
                src: 0,
                dst: 1,
                msg: Payload::new(b"hi").unwrap(),
                count: 2,
                surplus: true,
            }]
            .into_iter()
            .collect(),
            cut_links: vec![(1, 0)],
            budgets: [1; BUDGETS],
            issued: 1,
            ghost: Ghost::default(),
            lost_in_crash: vec![0],
            ..WorldState::default()
        };
        assert_eq!(WorldState::decode_exact(&state.to_bytes()).unwrap(), state);
        assert!(!state.link_up(1, 0) && state.link_up(0, 1) && state.link_up(1, 2));
        assert!(!state.pair_up(0, 1) && state.pair_up(1, 2));
    }

    #[test]
    fn a_copy_into_larger_memory_equals_its_source() {
        let source = WorldState {
            nodes: vec![NodeState {
                core: vec![1, 2, 3],
                clock: 7,
                persists: vec![Persist::default_for_test()],
                ..NodeState::default()
            }],
            issued: 2,
            lost_in_crash: vec![1],
            cut_links: vec![(0, 1)],
            ..WorldState::default()
        };
        let mut bigger = source.clone();
        bigger.nodes.push(NodeState {
            core: vec![9; 40],
            ..NodeState::default()
        });
        bigger.nodes[0].core.extend([4, 5]);
        bigger.nodes[0].persists.push(Persist::default_for_test());
        bigger.clone_from(&source);
        assert_eq!(bigger, source);
    }

    /// The flight recorder's stamp names the state as it was recorded:
    /// every way the World or the search changes a state forgets it, and a
    /// copy never has one.
    #[test]
    fn a_state_forgets_its_recording_when_it_changes() {
        let recorded = |state: &WorldState| {
            state.set_recorded_as(NonZeroU64::new(7).unwrap());
            state.recorded_as().is_some()
        };
        let parent = WorldState {
            nodes: vec![NodeState::default(), NodeState::default()],
            issued: 1,
            ..WorldState::default()
        };
        let bytes = parent.to_bytes();
        let mut state = WorldState::default();
        assert!(recorded(&state));
        state.decode_exact_in_place(&bytes).unwrap();
        assert_eq!(state.recorded_as(), None, "decoded into");
        assert!(recorded(&state));
        assert_eq!(state.clone().recorded_as(), None, "a copy");
        state.clone_from(&parent);
        assert_eq!(state.recorded_as(), None, "copied into");
        assert!(recorded(&state));
        state.copy_for_step(&parent, Some(0));
        assert_eq!(state.recorded_as(), None, "made a successor");
        state.mark_step_successor(Some(0));
        assert!(recorded(&state));
        state.complete_from(&parent);
        assert_eq!(state.recorded_as(), None, "completed");
        assert!(recorded(&state));
        state.set_cut(0, 1, true);
        assert_eq!(state.recorded_as(), None, "a link cut");
    }

    #[test]
    fn deadlines_stay_sorted_and_decide_when_a_timer_is_due() {
        let mut node = NodeState {
            core: vec![],
            crashed: false,
            clock: 3,
            timers: 0b1011,
            wakes: 0,
            persists: vec![],
            deadlines: vec![],
            choices: vec![],
        };
        node.set_deadline(3, Some(5));
        node.set_deadline(0, Some(3));
        node.set_deadline(3, Some(4));
        assert_eq!(
            node.deadlines,
            vec![Deadline { timer: 0, at: 3 }, Deadline { timer: 3, at: 4 }]
        );
        assert!(node.timer_due(0), "the clock has reached 3");
        assert!(node.timer_due(1), "no deadline: any moment");
        assert!(!node.timer_due(3), "4 is not reached at 3");
        node.set_deadline(0, None);
        node.set_deadline(1, None);
        assert_eq!(node.deadlines, vec![Deadline { timer: 3, at: 4 }]);
    }

    /// Core states of every length around the word and bitmap boundaries,
    /// with zero and non-zero words in every position.
    fn core_patterns() -> Vec<Vec<u8>> {
        let mut cores = Vec::new();
        for len in [0, 1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 600] {
            for pattern in 0..8u32 {
                let core: Vec<u8> = (0..len)
                    .map(|at| match (at / 8 + pattern as usize) % 3 {
                        0 => 0,
                        1 => (at % 8 == 7) as u8,
                        _ => at as u8 | 1,
                    })
                    .collect();
                cores.push(core);
            }
        }
        cores
    }

    #[test]
    fn core_states_round_trip_in_sparse_form() {
        let mut recycled = NodeState {
            core: vec![0xff; 200],
            persists: vec![Persist::default_for_test(); 3],
            ..NodeState::default()
        };
        for core in core_patterns() {
            let node = NodeState {
                core,
                ..NodeState::default()
            };
            let bytes = node.to_bytes();
            assert_eq!(NodeState::decode_exact(&bytes).unwrap(), node);
            recycled.decode_exact_in_place(&bytes).unwrap();
            assert_eq!(recycled, node, "decoded into recycled memory");
            let zero_blocks = node
                .core
                .chunks(CORE_BLOCK)
                .filter(|b| b.iter().all(|&b| b == 0));
            let sparse = 4 + node.core.len().div_ceil(CORE_BLOCK * 8) + node.core.len()
                - zero_blocks.map(<[u8]>::len).sum::<usize>();
            assert_eq!(bytes.len(), sparse + 1, "zero blocks are left out");
        }
    }

    #[test]
    fn sparse_bytes_no_core_state_writes_are_refused() {
        // 40 bytes: two blocks, the second 8 bytes long.
        let mut good = vec![40, 0, 0, 0, 0b10, 5];
        good.extend([0; 7]);
        let mut core = Vec::new();
        decode_core_into(&mut Decoder::new(&good), &mut core).unwrap();
        let mut expected = vec![0; 32];
        expected.extend(&good[5..]);
        assert_eq!(core, expected);
        let mut zero_block = good.clone();
        zero_block[5] = 0;
        let mut past_the_end = good.clone();
        past_the_end[4] = 0b110;
        let missing = &good[..12];
        for bad in [&zero_block[..], &past_the_end, missing] {
            assert!(
                decode_core_into(&mut Decoder::new(bad), &mut core).is_err(),
                "{bad:?}"
            );
        }
    }

    /// A node's fields at their default are left out of its encoding, and a
    /// header that marks a field present at its default, or a bit no field
    /// has, is refused: one node, one encoding.
    #[test]
    fn node_fields_at_their_default_are_left_out_and_never_read() {
        let quiet = NodeState {
            core: vec![0; 8],
            ..NodeState::default()
        };
        // Core length, a bitmap byte with no block, the header.
        assert_eq!(quiet.to_bytes(), [8, 0, 0, 0, 0, 0]);
        let busy = NodeState {
            crashed: true,
            timers: 0b10,
            choices: vec![Choice { id: 1, k: 2 }],
            ..quiet.clone()
        };
        let bits = header::CRASHED | header::TIMERS | header::CHOICES;
        assert_eq!(
            busy.to_bytes(),
            [8, 0, 0, 0, 0, bits, 2, 0, 0, 0, 1, 0, 0, 0, 1, 2]
        );
        assert_eq!(NodeState::decode_exact(&busy.to_bytes()).unwrap(), busy);
        let refused: [&[u8]; 4] = [
            &[8, 0, 0, 0, 0, 1 << 7],
            &[8, 0, 0, 0, 0, header::CLOCK, 0, 0, 0, 0],
            &[8, 0, 0, 0, 0, header::PERSISTS, 0, 0, 0, 0],
            &[8, 0, 0, 0, 0, header::WAKES, 1, 0],
        ];
        for bytes in refused {
            assert!(NodeState::decode_exact(bytes).is_err(), "{bytes:?}");
        }
    }

    /// Every state a small World reaches (every successor, before any
    /// deduplication; the reqack core with crashes, restarts, duplicates and
    /// drops): it decodes back to itself, also into a recycled state; two
    /// states with the same bytes are the same state (their derived
    /// `PartialEq`), and one state has one encoding however its memory was
    /// made (fresh, copied into a larger state, decoded in place).
    #[test]
    fn world_encoding_is_canonical_over_a_reachable_state_space() {
        use std::collections::HashMap;
        use std::sync::Arc;

        use crate::cores::reqack::ReqAck;
        use crate::world::env::Env;

        let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 3).unwrap();
        spec.set_all(&["requests=1", "crashes=1", "restarts=1", "dups=1", "drops=1"])
            .unwrap();
        let env = Env::new(spec);
        let init = env.init(&mut ()).unwrap();
        let mut by_bytes: HashMap<Vec<u8>, WorldState> = HashMap::new();
        let mut by_state: HashMap<String, Vec<u8>> = HashMap::new();
        let mut frontier = vec![init];
        let mut recycled = WorldState::default();
        let mut actions = Vec::new();
        let mut successors = 0;
        while let Some(state) = frontier.pop() {
            actions.clear();
            env.actions(&state, &mut actions);
            for action in &actions {
                let mut next = WorldState::default();
                if !env.next(&state, action, &mut next, &mut ()).unwrap() {
                    continue;
                }
                successors += 1;
                let bytes = next.to_bytes();
                assert_eq!(WorldState::decode_exact(&bytes).unwrap(), next);
                recycled.decode_exact_in_place(&bytes).unwrap();
                assert_eq!(recycled, next, "decoded in place");
                assert_eq!(
                    recycled.to_bytes(),
                    bytes,
                    "decoded in place, encoded again"
                );
                let mut copy = frontier.first().cloned().unwrap_or_default();
                copy.clone_from(&next);
                assert_eq!(copy.to_bytes(), bytes, "copied into other memory");
                let named = by_state.entry(format!("{next:?}")).or_insert(bytes.clone());
                assert_eq!(*named, bytes, "one state, two encodings: {next:?}");
                match by_bytes.get(&bytes) {
                    Some(seen) => assert_eq!(*seen, next, "two states, one encoding"),
                    None => {
                        by_bytes.insert(bytes, next.clone());
                        frontier.push(next);
                    }
                }
            }
        }
        assert!(by_bytes.len() > 1000, "{} states", by_bytes.len());
        assert!(successors > by_bytes.len());
    }

    #[test]
    fn a_packet_encodes_as_its_fields_in_order() {
        let packet = Packet {
            src: 1,
            dst: 2,
            msg: Payload::new(&[7, 8]).unwrap(),
            count: 3,
            surplus: true,
        };
        let mut fields = Vec::new();
        (1u8, 2u8, packet.msg, 3u8, true).encode(&mut fields);
        assert_eq!(packet.to_bytes(), fields);
        assert_eq!(Packet::decode_exact(&fields).unwrap(), packet);
        fields[6] = 2;
        assert!(Packet::decode_exact(&fields).is_err(), "a bool is 0 or 1");
    }

    /// Packets and history entries are written in one pass over a slice;
    /// the bytes are those of encoding each one's fields in turn, for every
    /// payload length.
    #[test]
    fn records_in_a_sequence_encode_as_each_alone() {
        let payloads: Vec<Payload> = (0..=PAYLOAD_MAX)
            .map(|len| Payload::new(&vec![len as u8 | 1; len]).unwrap())
            .collect();
        let packets: Vec<Packet> = payloads
            .iter()
            .enumerate()
            .map(|(at, &msg)| Packet {
                src: at as u8,
                dst: 2,
                msg,
                count: 3,
                surplus: at % 2 == 0,
            })
            .collect();
        let entries: Vec<GhostEntry> = payloads
            .iter()
            .enumerate()
            .map(|(at, &payload)| GhostEntry {
                kind: GhostKind::Reply,
                request: at as u32 * 1000,
                node: 1,
                payload,
            })
            .collect();
        let one_by_one = |encode_each: &dyn Fn(&mut Vec<u8>)| {
            let mut out = vec![0xaa];
            encode_each(&mut out);
            out
        };
        let packet_fields = |p: &Packet| (p.src, p.dst, p.msg, p.count, p.surplus);
        let entry_fields = |e: &GhostEntry| (e.kind, e.request, e.node, e.payload);
        let mut out = vec![0xaa];
        Packet::encode_slice(&packets, &mut out);
        assert_eq!(
            out,
            one_by_one(&|out| packets.iter().for_each(|p| packet_fields(p).encode(out)))
        );
        let mut out = vec![0xaa];
        GhostEntry::encode_slice(&entries, &mut out);
        assert_eq!(
            out,
            one_by_one(&|out| entries.iter().for_each(|e| entry_fields(e).encode(out)))
        );
    }

    #[test]
    fn oversized_payload_is_refused() {
        assert!(Payload::new(&[0; PAYLOAD_MAX + 1]).is_none());
        let mut bytes = vec![PAYLOAD_MAX as u8 + 1];
        bytes.extend([0; PAYLOAD_MAX + 1]);
        assert!(Payload::decode_exact(&bytes).is_err());
    }

    #[test]
    fn a_ghost_entry_decodes_in_place_and_refuses_bad_bytes() {
        let entry = GhostEntry {
            kind: GhostKind::Retry,
            request: 0x0102_0304,
            node: 2,
            payload: Payload::new(b"op").unwrap(),
        };
        let bytes = entry.to_bytes();
        // Decoded over an entry that held a longer payload: nothing of it stays.
        let mut reused = GhostEntry {
            payload: Payload::new(&[9; 5]).unwrap(),
            ..entry
        };
        reused.decode_exact_in_place(&bytes).unwrap();
        assert_eq!(reused, entry);
        let history = vec![
            entry,
            GhostEntry {
                kind: GhostKind::Reply,
                ..entry
            },
        ];
        assert_eq!(
            Vec::<GhostEntry>::decode_exact(&history.to_bytes()).unwrap(),
            history
        );
        let mut bad_kind = bytes.clone();
        bad_kind[0] = 4;
        assert!(matches!(
            GhostEntry::decode_exact(&bad_kind),
            Err(DecodeError::UnknownVariant {
                offset: 0,
                tag: 4,
                ..
            })
        ));
        let mut long = bytes.clone();
        long[6] = PAYLOAD_MAX as u8 + 1;
        assert!(GhostEntry::decode_exact(&long).is_err());
        assert!(GhostEntry::decode_exact(&bytes[..bytes.len() - 1]).is_err());
        assert!(GhostEntry::decode_exact(&bytes[..5]).is_err());
    }
}
