//! The ghost history of client requests and replies, and how much of it is
//! part of a state's identity; with it, the bytes of the World's ghost
//! variables (see [`crate::system::ghosts`]).

use cmc_model::{DecodeError, Decoder, Encode};

use super::node::copy_into;
use super::packet::{write_records, RECORD_MAX};
use super::{encode_sequence, same_items, Payload};

/// What a ghost history entry records.
///
/// ```
/// use cmc_world::system::state::GhostKind;
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
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::state::{GhostKind, WorldState};
/// use cmc_world::{World, WorldSpec};
///
/// let one_byte = Property::always("OneByteReplies", |world: &World, state: &WorldState| {
///     world.inspect(state).ghost().iter()
///         .filter(|entry| entry.kind == GhostKind::Reply)
///         .all(|entry| entry.payload.as_bytes().len() == 1)
/// });
/// let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(2).build()?;
/// let world = World::new(spec).with_property(one_byte);
/// assert_eq!(Checker::new(world).workers(1).run().verdict, Verdict::Pass);
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
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
/// use cmc_world::system::state::{GhostEntry, GhostKind, Payload};
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
/// use cmc_world::system::state::{Ghost, GhostEntry, GhostKind, Payload};
///
/// let mut ghost = Ghost::default();
/// let payload = Payload::default();
/// ghost.push(GhostEntry { kind: GhostKind::Invoke, request: 0, node: 1, payload });
/// assert_eq!((ghost.len(), ghost[0].node), (1, 1));
/// assert_eq!(ghost.summary(), None, "the whole history counts");
/// assert_eq!(Ghost::decode_exact(&ghost.to_bytes()).unwrap(), ghost);
/// ```
///
/// It also holds the bytes of the World's ghost variables
/// ([`crate::system::ghosts`]), all of them in declaration order: empty
/// when the World declares none, and then encoded as before they existed.
#[derive(Debug, Default, Eq)]
pub struct Ghost {
    entries: Vec<GhostEntry>,
    summary: Option<Vec<u8>>,
    vars: Vec<u8>,
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

    /// The bytes of the World's ghost variables, in declaration order
    /// (empty without any): read them by name with
    /// [`Inspect::ghost_var`](crate::system::inspect::Inspect::ghost_var).
    pub fn vars(&self) -> &[u8] {
        &self.vars
    }

    /// The ghost variables' bytes, to be set or updated in place.
    pub(crate) fn vars_mut(&mut self) -> &mut Vec<u8> {
        &mut self.vars
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
    /// `node(n)` and `vars` (as many bytes) in place of its ghost variables'
    /// bytes: the encoding of the ghost so renamed, without renaming it.
    pub(crate) fn encode_renamed(
        &self,
        node: impl Fn(u8) -> u8 + Copy,
        vars: &[u8],
        out: &mut Vec<u8>,
    ) {
        debug_assert_eq!(vars.len(), self.vars.len());
        self.encode_history_renamed(node, out);
        if !vars.is_empty() {
            encode_sequence(vars, out);
        }
    }

    /// The tag's bit that says ghost variables follow the history.
    const VARS_FLAG: u8 = 2;

    /// The tag of [`Ghost`]'s encoding: the mode, and whether ghost
    /// variables follow.
    fn tag(&self, mode: u8) -> u8 {
        match self.vars.is_empty() {
            true => mode,
            false => mode | Ghost::VARS_FLAG,
        }
    }

    /// The tag and the history of [`Ghost::encode_renamed`].
    fn encode_history_renamed(&self, node: impl Fn(u8) -> u8 + Copy, out: &mut Vec<u8>) {
        match &self.summary {
            None => {
                out.push(self.tag(0));
                let count = u32::try_from(self.entries.len()).expect("at most u32::MAX entries");
                count.encode(out);
                self.write_entries_renamed(node, out);
            }
            Some(summary) => {
                out.push(self.tag(1));
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
        copy_into(&source.vars, &mut self.vars);
        match (&mut self.summary, &source.summary) {
            (Some(mine), Some(theirs)) => mine.clone_from(theirs),
            (mine, theirs) => mine.clone_from(theirs),
        }
    }
}

/// A tag (0: full, 1: per request; plus 2 when ghost variables follow), the
/// entries (grouped by request in the second mode), then in the second mode
/// the summary, then the ghost variables' bytes (when there are any).
impl Encode for Ghost {
    fn encode(&self, out: &mut Vec<u8>) {
        self.encode_renamed(|node| node, &self.vars, out);
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let mut ghost = Ghost::default();
        ghost.decode_in_place(decoder)?;
        Ok(ghost)
    }

    /// Into the memory of the entries and the summary `self` holds.
    fn decode_in_place(&mut self, decoder: &mut Decoder<'_>) -> Result<(), DecodeError> {
        let tag = u8::decode(decoder)?;
        let per_request = match tag & !Ghost::VARS_FLAG {
            0 => false,
            1 => true,
            _ => return decoder.invalid(format!("ghost tag {tag} is not 0 to 3")),
        };
        self.entries.decode_in_place(decoder)?;
        self.decode_summary_in_place(per_request, decoder)?;
        match tag & Ghost::VARS_FLAG {
            0 => self.vars.clear(),
            _ => {
                self.vars.decode_in_place(decoder)?;
                if self.vars.is_empty() {
                    return decoder.invalid("ghost variables flagged but empty");
                }
            }
        }
        Ok(())
    }
}

impl Ghost {
    /// Decodes the summary of the mode `per_request` says (none in full mode).
    fn decode_summary_in_place(
        &mut self,
        per_request: bool,
        decoder: &mut Decoder<'_>,
    ) -> Result<(), DecodeError> {
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

/// The entries, then the summary, then the ghost variables, each with `same_items`.
impl PartialEq for Ghost {
    fn eq(&self, other: &Self) -> bool {
        same_items(&self.entries, &other.entries)
            && self.same_summary(other)
            && self.same_vars(other)
    }
}

impl Ghost {
    /// Whether `self` and `other` hold the same ghost variables' bytes.
    pub(super) fn same_vars(&self, other: &Ghost) -> bool {
        same_items(&self.vars, &other.vars)
    }

    /// Whether `self` and `other` hold the same summary, or none.
    pub(super) fn same_summary(&self, other: &Ghost) -> bool {
        match (&self.summary, &other.summary) {
            (Some(summary), Some(theirs)) => same_items(summary, theirs),
            (summary, theirs) => summary.is_none() && theirs.is_none(),
        }
    }
}
