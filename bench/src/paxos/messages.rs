//! The messages of the actor system, packed: stateright's
//! `RegisterMsg<u64, char, PaxosMsg>` with the example's `PaxosMsg`, and the
//! envelope carrying one, as a single `u32`.
//!
//! Each client puts once and then gets (the example's `put_count: 1`), so a
//! client's request ids (its id for the Put, twice its id for the Get), the
//! value it writes (`'A' + index`) and so every proposal `(request,
//! requester, value)` are determined by the client: they are stored as its
//! index, and unpacked again only for display.

use std::fmt;

use cmc_model::{DecodeError, Decoder, Encode};

/// An actor: servers are `0..SERVERS`, clients follow.
pub type Id = u8;

/// The example's server count.
pub const SERVERS: u8 = 3;

/// The most clients the packing has room for (actor ids stay below 8).
pub const MAX_CLIENTS: usize = 4;

/// A client's index (`id - SERVERS`).
pub fn client_index(id: Id) -> usize {
    usize::from(id - SERVERS)
}

/// A client's actor id.
pub fn client_id(index: usize) -> Id {
    SERVERS + index as Id
}

/// Rounds stay below this (a round only grows when a server handles a Put,
/// so it never exceeds the client count).
const ROUND_LIMIT: u8 = 8;

/// A ballot `(round, leader)`, packed as `round << 2 | leader`, which orders
/// as the example's tuple.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ballot(u8);

impl Ballot {
    /// `(round, leader)`.
    pub fn new(round: u8, leader: Id) -> Ballot {
        assert!(round < ROUND_LIMIT, "round {round} exceeds the packing");
        assert!(leader < SERVERS, "leader {leader} is not a server");
        Ballot(round << 2 | leader)
    }

    /// Its packed bits.
    pub fn bits(self) -> u8 {
        self.0
    }

    /// The round.
    pub fn round(self) -> u8 {
        self.0 >> 2
    }

    /// The leader.
    pub fn leader(self) -> Id {
        self.0 & 3
    }

    /// The ballot packed as `bits`, if they pack one.
    pub fn from_bits(bits: u8) -> Option<Ballot> {
        (bits & 3 < SERVERS && bits >> 2 < ROUND_LIMIT).then_some(Ballot(bits))
    }
}

impl fmt::Debug for Ballot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.round(), self.leader())
    }
}

/// A proposal `(request, requester, value)`: the requesting client's index
/// (the order of indices is the order of the tuples, led by request ids).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Proposal(pub u8);

impl fmt::Debug for Proposal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let id = client_id(usize::from(self.0));
        write!(
            f,
            "({id}, {id}, {:?})",
            Value::written_by(usize::from(self.0))
        )
    }
}

/// What an acceptor accepted last (`Option<(Ballot, Proposal)>`), packed as
/// 0 for none and `1 + (ballot << 2 | proposal)`, which orders as the option.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LastAccepted(pub u8);

impl LastAccepted {
    /// Nothing accepted.
    pub const NONE: LastAccepted = LastAccepted(0);

    /// `Some((ballot, proposal))`.
    pub fn some(ballot: Ballot, proposal: Proposal) -> LastAccepted {
        LastAccepted(1 + (ballot.0 << 2 | proposal.0))
    }

    /// The option it packs.
    pub fn get(self) -> Option<(Ballot, Proposal)> {
        let bits = self.0.checked_sub(1)?;
        Some((Ballot(bits >> 2), Proposal(bits & 3)))
    }

    /// Whether it packs a valid ballot.
    pub fn is_valid(self) -> bool {
        self.get()
            .is_none_or(|(ballot, _)| Ballot::from_bits(ballot.0).is_some())
    }
}

impl fmt::Debug for LastAccepted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

/// A register value: 0 is the initial `'\0'`, `index + 1` the value client
/// `index` writes.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Value(pub u8);

impl Value {
    /// The value client `index` writes.
    pub fn written_by(index: usize) -> Value {
        Value(index as u8 + 1)
    }

    /// The example's `char`.
    pub fn as_char(self) -> char {
        match self.0 {
            0 => '\0',
            n => char::from(b'A' + n - 1),
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_char())
    }
}

/// A message, unpacked. The client messages carry only what the client
/// does not determine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Msg {
    /// `Put(id, 'A' + index)` from a client.
    Put,
    /// `Get(2 * id)` from a client.
    Get,
    /// `PutOk(id)` to a client.
    PutOk,
    /// `GetOk(2 * id, value)` to a client.
    GetOk(Value),
    /// Phase 1a: a leader opens a ballot.
    Prepare(Ballot),
    /// Phase 1b: an acceptor joins a ballot, reporting what it accepted.
    Prepared(Ballot, LastAccepted),
    /// Phase 2a: the leader asks to accept a proposal.
    Accept(Ballot, Proposal),
    /// Phase 2b: an acceptor accepted in a ballot.
    Accepted(Ballot),
    /// The leader saw a quorum of accepts.
    Decided(Ballot, Proposal),
}

impl Msg {
    /// `(kind, a, b)`: a 4-bit kind and two payload fields of 5 and 8 bits.
    fn fields(self) -> (u32, u8, u8) {
        match self {
            Msg::Put => (0, 0, 0),
            Msg::Get => (1, 0, 0),
            Msg::PutOk => (2, 0, 0),
            Msg::GetOk(value) => (3, value.0, 0),
            Msg::Prepare(ballot) => (4, ballot.0, 0),
            Msg::Prepared(ballot, last) => (5, ballot.0, last.0),
            Msg::Accept(ballot, proposal) => (6, ballot.0, proposal.0),
            Msg::Accepted(ballot) => (7, ballot.0, 0),
            Msg::Decided(ballot, proposal) => (8, ballot.0, proposal.0),
        }
    }

    /// The inverse of [`Msg::fields`], for fields it could have written.
    fn from_fields(kind: u32, a: u8, b: u8) -> Option<Msg> {
        let ballot = Ballot::from_bits(a);
        let proposal = (usize::from(b) < MAX_CLIENTS).then_some(Proposal(b));
        let msg = match kind {
            0 => Msg::Put,
            1 => Msg::Get,
            2 => Msg::PutOk,
            3 => Msg::GetOk(Value(a)),
            4 => Msg::Prepare(ballot?),
            5 => Msg::Prepared(ballot?, LastAccepted(b)),
            6 => Msg::Accept(ballot?, proposal?),
            7 => Msg::Accepted(ballot?),
            8 => Msg::Decided(ballot?, proposal?),
            _ => return None,
        };
        let valid = match msg {
            Msg::GetOk(value) => usize::from(value.0) <= MAX_CLIENTS,
            Msg::Prepared(_, last) => last.is_valid(),
            _ => true,
        };
        (valid && msg.fields() == (kind, a, b)).then_some(msg)
    }
}

/// A message in flight from `src` to `dst`, packed: bits 0–2 `dst`, 3–5
/// `src`, 6–9 the message kind, 10–14 and 15–22 its payload.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Envelope(u32);

impl Envelope {
    /// `msg` from `src` to `dst`.
    pub fn new(src: Id, dst: Id, msg: Msg) -> Envelope {
        debug_assert!(src < 8 && dst < 8);
        let (kind, a, b) = msg.fields();
        Envelope(
            u32::from(dst)
                | u32::from(src) << 3
                | kind << 6
                | u32::from(a) << 10
                | u32::from(b) << 15,
        )
    }

    /// The sender.
    pub fn src(self) -> Id {
        (self.0 >> 3 & 7) as Id
    }

    /// The recipient.
    pub fn dst(self) -> Id {
        (self.0 & 7) as Id
    }

    /// The message.
    pub fn msg(self) -> Msg {
        self.unpack().expect("an envelope holds a valid message")
    }

    fn unpack(self) -> Option<Msg> {
        if self.0 >> 23 != 0 {
            return None;
        }
        Msg::from_fields(
            self.0 >> 6 & 15,
            (self.0 >> 10 & 31) as u8,
            (self.0 >> 15) as u8,
        )
    }
}

impl Encode for Envelope {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_le_bytes());
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let envelope = Envelope(u32::decode(decoder)?);
        match envelope.unpack() {
            Some(_) => Ok(envelope),
            None => decoder.invalid(format!("{:#x} is not a packed envelope", envelope.0)),
        }
    }
}

/// Stateright's text of the envelope's message, with the request ids and
/// values the packing leaves implicit.
impl fmt::Display for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (src, dst) = (self.src(), self.dst());
        write!(f, "Deliver {{ src: {src}, dst: {dst}, msg: ")?;
        let client = |id: Id| Value::written_by(client_index(id));
        match self.msg() {
            Msg::Put => write!(f, "Put({src}, {:?})", client(src)),
            Msg::Get => write!(f, "Get({})", 2 * u64::from(src)),
            Msg::PutOk => write!(f, "PutOk({dst})"),
            Msg::GetOk(value) => write!(f, "GetOk({}, {value:?})", 2 * u64::from(dst)),
            Msg::Prepare(ballot) => write!(f, "Internal(Prepare {{ ballot: {ballot:?} }})"),
            Msg::Prepared(ballot, last) => write!(
                f,
                "Internal(Prepared {{ ballot: {ballot:?}, last_accepted: {last:?} }})"
            ),
            Msg::Accept(ballot, proposal) => write!(
                f,
                "Internal(Accept {{ ballot: {ballot:?}, proposal: {proposal:?} }})"
            ),
            Msg::Accepted(ballot) => write!(f, "Internal(Accepted {{ ballot: {ballot:?} }})"),
            Msg::Decided(ballot, proposal) => write!(
                f,
                "Internal(Decided {{ ballot: {ballot:?}, proposal: {proposal:?} }})"
            ),
        }?;
        write!(f, " }}")
    }
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelopes_unpack_to_what_was_packed() {
        let ballot = Ballot::new(3, 2);
        let messages = [
            Msg::Put,
            Msg::GetOk(Value::written_by(3)),
            Msg::Prepared(ballot, LastAccepted::some(Ballot::new(7, 2), Proposal(3))),
            Msg::Prepared(ballot, LastAccepted::NONE),
            Msg::Decided(ballot, Proposal(1)),
        ];
        for msg in messages {
            let envelope = Envelope::new(6, 1, msg);
            assert_eq!(
                (envelope.src(), envelope.dst(), envelope.msg()),
                (6, 1, msg)
            );
            let bytes = envelope.to_bytes();
            assert_eq!(Envelope::decode_exact(&bytes).unwrap(), envelope);
        }
        assert!(Envelope::decode_exact(&(15u32 << 6).to_le_bytes()).is_err());
    }

    #[test]
    fn packed_orders_follow_the_tuples() {
        assert!(Ballot::new(1, 2) < Ballot::new(2, 0));
        let low = LastAccepted::some(Ballot::new(1, 2), Proposal(3));
        let high = LastAccepted::some(Ballot::new(2, 0), Proposal(0));
        assert!(LastAccepted::NONE < low && low < high);
        assert_eq!(high.get(), Some((Ballot::new(2, 0), Proposal(0))));
    }

    #[test]
    fn display_shows_stateright_s_message() {
        let put = Envelope::new(4, 1, Msg::Put);
        assert_eq!(
            put.to_string(),
            "Deliver { src: 4, dst: 1, msg: Put(4, 'B') }"
        );
    }
}
