//! One node of the World: its core state and what the environment holds
//! for it (clock, timers, wake-ups, unflushed persists, deadlines, pending
//! choices), and its sparse canonical encoding.

use cmc_model::{DecodeError, Decoder, Encode};

use super::{encode_sequence, same_items, Payload};

/// A PERSIST the core emitted that the environment has not flushed yet.
///
/// ```
/// use cmc_model::Encode;
/// use cmc_world::system::state::{Payload, Persist};
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
/// use cmc_world::system::state::{Deadline, NodeState};
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
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::{World, WorldSpec};
///
/// let world = World::new(WorldSpec::new(Arc::new(ReqAck::default()), 2)?);
/// let mut init = Vec::new();
/// world.init_states(&mut init);
/// // Every node has started: up, its clock at 0, nothing waiting to be flushed.
/// let view = world.inspect(&init[0]);
/// for node in (0..view.nodes()).map(|node| view.node(node).env) {
///     assert!(!node.crashed && node.clock == 0 && node.persists.is_empty());
/// }
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
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
/// use cmc_world::system::state::Choice;
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
pub(super) fn copy_into<T: Copy>(from: &[T], to: &mut Vec<T>) {
    if from.is_empty() {
        to.clear();
    } else if from.len() == to.len() {
        to.copy_from_slice(from);
    } else {
        from.clone_into(to);
    }
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

/// Bytes of a core state a bit of the sparse form's bitmap stands for.
pub(super) const CORE_BLOCK: usize = 32;

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
pub(super) fn decode_core_into(
    decoder: &mut Decoder<'_>,
    core: &mut Vec<u8>,
) -> Result<(), DecodeError> {
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
pub(super) mod header {
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
