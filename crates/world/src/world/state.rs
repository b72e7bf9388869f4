//! The World's state and its canonical encoding.
//!
//! A node's core state is an opaque byte blob here: nothing in this module or
//! in the environment interprets it. Only [`crate::world::inspect`] splits it into the
//! durable and volatile parts for properties and descriptions.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::PAYLOAD_MAX;
use crate::core::hex::hex;

/// A payload of at most [`PAYLOAD_MAX`] bytes, stored inline (no allocation);
/// bytes past `len` are zero, so derived comparisons are canonical.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
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
        let mut payload = Payload {
            len: bytes.len() as u8,
            bytes: [0; PAYLOAD_MAX],
        };
        payload.bytes[..bytes.len()].copy_from_slice(bytes);
        Some(payload)
    }

    /// The payload's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
}

impl Default for Payload {
    fn default() -> Self {
        Payload {
            len: 0,
            bytes: [0; PAYLOAD_MAX],
        }
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(self.as_bytes()))
    }
}

impl Encode for Payload {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.len);
        out.extend_from_slice(self.as_bytes());
    }
    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let len = u8::decode(decoder)? as usize;
        if len > PAYLOAD_MAX {
            return decoder.invalid(format!("payload of {len} bytes exceeds {PAYLOAD_MAX}"));
        }
        Ok(Payload::new(decoder.take(len)?).expect("length checked"))
    }
}

/// Copies of one message in flight: in an unordered network all copies with
/// the same source, destination and bytes; in a FIFO network a run of equal
/// consecutive messages on one link (see [`crate::world::env`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Encode)]
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

/// A PERSIST the core emitted that the environment has not flushed yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode)]
pub struct Persist {
    /// Offset into the durable part.
    pub offset: u32,
    /// Bytes to write there.
    pub bytes: Payload,
}

/// The deadline of a timer armed with `SET_TIMER_AT`: it may fire only once
/// its node's clock has reached `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode)]
pub struct Deadline {
    /// The timer id.
    pub timer: u8,
    /// The clock value from which the timer may fire.
    pub at: u32,
}

/// One node: its core's bytes and what the environment holds for it.
#[derive(Debug, Default, PartialEq, Eq, Encode)]
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

impl NodeState {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Encode)]
pub struct Choice {
    /// The choice id (`0..TIMERS_MAX`), echoed in the `CHOICE` event.
    pub id: u8,
    /// Number of values: the event carries one of `0..k`.
    pub k: u8,
}

/// What a ghost history entry records.
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Encode)]
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
#[derive(Debug, Default, PartialEq, Eq)]
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

/// Cloning into an existing ghost reuses its memory.
impl Clone for Ghost {
    fn clone(&self) -> Self {
        let mut copy = Ghost::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        self.entries.clone_from(&source.entries);
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
        match &self.summary {
            None => {
                out.push(0);
                self.entries.encode(out);
            }
            Some(summary) => {
                out.push(1);
                (self.entries.len() as u32).encode(out);
                for request in self.requests() {
                    for entry in self.entries.iter().filter(|e| e.request == request) {
                        entry.encode(out);
                    }
                }
                summary.encode(out);
            }
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        match u8::decode(decoder)? {
            0 => Ok(Ghost {
                entries: Vec::decode(decoder)?,
                summary: None,
            }),
            1 => {
                let entries: Vec<GhostEntry> = Vec::decode(decoder)?;
                if entries.windows(2).any(|w| w[0].request > w[1].request) {
                    return decoder.invalid("ghost entries not grouped by request");
                }
                Ok(Ghost {
                    entries,
                    summary: Some(Vec::decode(decoder)?),
                })
            }
            tag => decoder.invalid(format!("ghost mode {tag} is neither 0 nor 1")),
        }
    }
}

/// Index of each fault budget in [`WorldState::budgets`].
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

/// The World's state. Its [`Encode`] bytes are its identity.
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
#[derive(Debug, Default, PartialEq, Eq, Encode)]
pub struct WorldState {
    /// The nodes, by id.
    pub nodes: Vec<NodeState>,
    /// Messages in flight: sorted by (src, dst, bytes) with counts, or, in FIFO
    /// mode, sorted by (src, dst) and in send order within a link.
    pub net: Vec<Packet>,
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
}

/// Cloning into an existing node reuses its memory (`clone_from`).
impl Clone for NodeState {
    fn clone(&self) -> Self {
        let mut copy = NodeState::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        // Every field named: a new field must be copied here too.
        let NodeState {
            core,
            crashed,
            clock,
            timers,
            wakes,
            persists,
            deadlines,
            choices,
        } = source;
        self.core.clone_from(core);
        self.crashed = *crashed;
        self.clock = *clock;
        self.timers = *timers;
        self.wakes = *wakes;
        self.persists.clone_from(persists);
        self.deadlines.clone_from(deadlines);
        self.choices.clone_from(choices);
    }
}

/// Cloning into an existing state reuses its memory (`clone_from`): how
/// the World makes successors without allocating (see [`crate::world::recycle`]).
impl Clone for WorldState {
    fn clone(&self) -> Self {
        let mut copy = WorldState::default();
        copy.clone_from(self);
        copy
    }

    fn clone_from(&mut self, source: &Self) {
        // Every field named: a new field must be copied here too.
        let WorldState {
            nodes,
            net,
            cut_links,
            budgets,
            issued,
            ghost,
            lost_in_crash,
        } = source;
        self.nodes.clone_from(nodes);
        self.net.clone_from(net);
        self.cut_links.clone_from(cut_links);
        self.budgets = *budgets;
        self.issued = *issued;
        self.ghost.clone_from(ghost);
        self.lost_in_crash.clone_from(lost_in_crash);
    }
}

impl WorldState {
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
            net: vec![Packet {
                src: 0,
                dst: 1,
                msg: Payload::new(b"hi").unwrap(),
                count: 2,
                surplus: true,
            }],
            cut_links: vec![(1, 0)],
            budgets: [1; BUDGETS],
            issued: 1,
            ghost: Ghost::default(),
            lost_in_crash: vec![0],
        };
        assert_eq!(WorldState::decode_exact(&state.to_bytes()).unwrap(), state);
        assert!(!state.link_up(1, 0) && state.link_up(0, 1) && state.link_up(1, 2));
        assert!(!state.pair_up(0, 1) && state.pair_up(1, 2));
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

    #[test]
    fn oversized_payload_is_refused() {
        assert!(Payload::new(&[0; PAYLOAD_MAX + 1]).is_none());
        let mut bytes = vec![PAYLOAD_MAX as u8 + 1];
        bytes.extend([0; PAYLOAD_MAX + 1]);
        assert!(Payload::decode_exact(&bytes).is_err());
    }
}
