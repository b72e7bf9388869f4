//! `PaxosCommit` (tlaplus/Examples,
//! `specifications/transaction_commit/PaxosCommit.tla`): Gray and Lamport's
//! Paxos Commit, one Paxos consensus instance per RM deciding whether that RM
//! prepared or aborted.
//!
//! Variables `rmState`, `aState` (per instance and acceptor: `mbal`, `bal`,
//! `val`) and `msgs` (every message ever sent); the actions of `PCNext`.
//! Invariants: `PCTypeOK` (the cfg's), `TCConsistent` (TCommit's, which
//! PaxosCommit implements) and `NoRMCommitted`, which is meant to fail.
//!
//! Constants: `RM = {r1, …}`, `Acceptor = {a1, …}`, `Ballot = 0..ballot_count-1`
//! and `Majority` = every subset of `Acceptor` with exactly
//! `⌊|Acceptor| / 2⌋ + 1` members (for three acceptors, the three 2-sets of
//! the cfg).
//!
//! Representation. An acceptor's `(bal, val)` pair is a [`Vote`]: `(-1,
//! "none")` or a ballot with `"prepared"`/`"aborted"`; every reachable
//! `aState` and phase 1b message has `bal = -1` exactly when `val = "none"`
//! (initially so, and Phase2b sets both together), so nothing is lost. All
//! messages but Commit and Abort belong to one instance `ins`, so each
//! instance keeps its messages as four bit sets, one per message type.

use std::fmt;

use cmc_model::{DecodeError, Decoder, Encode, Model, ModelParam, Property, StateView};

use crate::params::choices_param;
use crate::rm::{Rm, RmState, RmStates};

/// The largest `RM` this port takes (the state space grows very fast).
pub const PAXOS_RM_COUNT_MAX: usize = 4;
/// The largest `Acceptor` set this port takes.
pub const ACCEPTOR_COUNT_MAX: usize = 6;
/// The largest `Ballot` set this port takes.
pub const BALLOT_COUNT_MAX: usize = 4;

/// One acceptor, `a{index + 1}`.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Acceptor(pub u8);

impl fmt::Display for Acceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a{}", self.0 + 1)
    }
}

impl fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A value an instance can choose: `"prepared"` or `"aborted"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// `"prepared"`: the RM prepared.
    Prepared = 0,
    /// `"aborted"`: the RM (or a leader on its behalf) aborted.
    Aborted = 1,
}

impl Val {
    const ALL: [Val; 2] = [Val::Prepared, Val::Aborted];

    fn spec_name(self) -> &'static str {
        match self {
            Val::Prepared => "prepared",
            Val::Aborted => "aborted",
        }
    }
}

/// An acceptor's `(bal, val)`: `(-1, "none")` or a ballot and a [`Val`].
///
/// Stored as an index: 0 for none, `1 + 2 * bal + val` otherwise, so a larger
/// index has a larger (or equal) ballot.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Vote(u8);

impl Vote {
    /// `bal = -1, val = "none"`.
    pub const NONE: Vote = Vote(0);

    /// A vote for `val` in ballot `bal`.
    #[inline]
    pub fn new(bal: u8, val: Val) -> Vote {
        Vote(1 + 2 * bal + val as u8)
    }

    /// `bal`, or `None` for -1.
    #[inline]
    pub fn bal(self) -> Option<u8> {
        (self.0 > 0).then(|| (self.0 - 1) / 2)
    }

    /// `val`, or `None` for `"none"`.
    #[inline]
    pub fn val(self) -> Option<Val> {
        (self.0 > 0).then(|| Val::ALL[((self.0 - 1) % 2) as usize])
    }

    /// The number of votes there are with `ballot_count` ballots.
    fn count(ballot_count: usize) -> usize {
        1 + 2 * ballot_count
    }
}

impl fmt::Debug for Vote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.bal(), self.val()) {
            (Some(bal), Some(val)) => write!(f, "bal |-> {bal}, val |-> \"{}\"", val.spec_name()),
            _ => write!(f, "bal |-> -1, val |-> \"none\""),
        }
    }
}

/// `aState[ins][acc]`: `mbal` in the low nibble, the [`Vote`] in the high one.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct AcceptorState(u8);

impl AcceptorState {
    /// `[mbal |-> 0, bal |-> -1, val |-> "none"]`.
    pub const INITIAL: AcceptorState = AcceptorState(0);

    /// An acceptor state with the given fields.
    #[inline]
    pub fn new(mbal: u8, vote: Vote) -> AcceptorState {
        AcceptorState(mbal | vote.0 << 4)
    }

    /// `mbal`: the largest ballot the acceptor has joined.
    #[inline]
    pub fn mbal(self) -> u8 {
        self.0 & 0x0f
    }

    /// `(bal, val)`: the acceptor's latest vote.
    #[inline]
    pub fn vote(self) -> Vote {
        Vote(self.0 >> 4)
    }
}

impl fmt::Debug for AcceptorState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[mbal |-> {}, {:?}]", self.mbal(), self.vote())
    }
}

/// The messages of one instance `ins` in `msgs`, one bit set per type.
///
/// Bit layouts (`A` acceptors, `V` = [`Vote`] count):
/// - `phase1a`: bit `bal`;
/// - `phase1b`: bit `(mbal * A + acc) * V + vote`, so one acceptor's answers
///   for one ballot are `V` adjacent bits;
/// - `phase2a`: bit `2 * bal + val`;
/// - `phase2b`: bit `(2 * bal + val) * A + acc`, so the acceptors that voted
///   for one `(bal, val)` are `A` adjacent bits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct InstanceMsgs {
    /// `[type |-> "phase1a", ins, bal]`.
    pub phase1a: u8,
    /// `[type |-> "phase1b", ins, mbal, bal, val, acc]`.
    pub phase1b: u64,
    /// `[type |-> "phase2a", ins, bal, val]`.
    pub phase2a: u8,
    /// `[type |-> "phase2b", acc, ins, bal, val]`.
    pub phase2b: u32,
}

/// One consensus instance: the acceptors' states and the messages for it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Instance {
    /// `aState[ins][acc]` for `acc` in `0..acceptor_count`; the rest stay initial.
    pub acceptors: [AcceptorState; ACCEPTOR_COUNT_MAX],
    /// The messages of this instance.
    pub msgs: InstanceMsgs,
}

/// A state of PaxosCommit.
///
/// The RM and acceptor counts are part of the state so that the encoding
/// holds only the instances and acceptors that exist; they never change.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PaxosCommitState {
    rm_count: u8,
    acceptor_count: u8,
    /// `rmState`.
    pub rm_state: RmStates,
    /// `aState` and the instance messages, for instances `0..rm_count`.
    pub instances: [Instance; PAXOS_RM_COUNT_MAX],
    /// `[type |-> "Commit"] \in msgs`.
    pub commit: bool,
    /// `[type |-> "Abort"] \in msgs`.
    pub abort: bool,
}

impl Encode for PaxosCommitState {
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.rm_count);
        out.push(self.acceptor_count);
        self.rm_state.encode(out);
        out.push(u8::from(self.commit) | u8::from(self.abort) << 1);
        for instance in &self.instances[..self.rm_count as usize] {
            for acceptor in &instance.acceptors[..self.acceptor_count as usize] {
                out.push(acceptor.0);
            }
            let msgs = &instance.msgs;
            msgs.phase1a.encode(out);
            msgs.phase1b.encode(out);
            msgs.phase2a.encode(out);
            msgs.phase2b.encode(out);
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let rm_count = u8::decode(decoder)?;
        let acceptor_count = u8::decode(decoder)?;
        if !(1..=PAXOS_RM_COUNT_MAX).contains(&(rm_count as usize))
            || !(1..=ACCEPTOR_COUNT_MAX).contains(&(acceptor_count as usize))
        {
            return decoder.invalid(format!(
                "PaxosCommit with {rm_count} RMs and {acceptor_count} acceptors"
            ));
        }
        let rm_state = RmStates::decode(decoder)?;
        let decision = u8::decode(decoder)?;
        if decision > 3 {
            return decoder.invalid(format!("decision byte {decision}"));
        }
        let mut instances = [Instance::default(); PAXOS_RM_COUNT_MAX];
        for instance in &mut instances[..rm_count as usize] {
            for acceptor in &mut instance.acceptors[..acceptor_count as usize] {
                *acceptor = AcceptorState(u8::decode(decoder)?);
            }
            instance.msgs = InstanceMsgs {
                phase1a: u8::decode(decoder)?,
                phase1b: u64::decode(decoder)?,
                phase2a: u8::decode(decoder)?,
                phase2b: u32::decode(decoder)?,
            };
        }
        Ok(PaxosCommitState {
            rm_count,
            acceptor_count,
            rm_state,
            instances,
            commit: decision & 1 != 0,
            abort: decision & 2 != 0,
        })
    }
}

/// An action of `PCNext`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaxosCommitAction {
    /// `RMPrepare(rm)`: sends phase 2a `(rm, 0, "prepared")`.
    RmPrepare(Rm),
    /// `RMChooseToAbort(rm)`: sends phase 2a `(rm, 0, "aborted")`.
    RmChooseToAbort(Rm),
    /// `RMRcvCommitMsg(rm)`.
    RmRcvCommitMsg(Rm),
    /// `RMRcvAbortMsg(rm)`.
    RmRcvAbortMsg(Rm),
    /// `Phase1a(bal, rm)`: a leader starts ballot `bal` of instance `rm`.
    Phase1a {
        /// The ballot, in `Ballot \ {0}`.
        bal: u8,
        /// The instance.
        rm: Rm,
    },
    /// `Phase2a(bal, rm)` for a majority whose phase 1b messages make the
    /// leader propose `val`.
    Phase2a {
        /// The ballot, in `Ballot \ {0}`.
        bal: u8,
        /// The instance.
        rm: Rm,
        /// The value proposed.
        val: Val,
    },
    /// The first branch of `Decide`: every instance chose `"prepared"`; send Commit.
    DecideCommit,
    /// The second branch of `Decide`: some instance chose `"aborted"`; send Abort.
    DecideAbort,
    /// `Phase1b(acc)` answering the phase 1a message of instance `ins`, ballot `bal`.
    Phase1b {
        /// The acceptor.
        acc: Acceptor,
        /// The instance of the phase 1a message.
        ins: Rm,
        /// The ballot of the phase 1a message.
        bal: u8,
    },
    /// `Phase2b(acc)` voting for the phase 2a message `(ins, bal, val)`.
    Phase2b {
        /// The acceptor.
        acc: Acceptor,
        /// The instance of the phase 2a message.
        ins: Rm,
        /// The ballot of the phase 2a message.
        bal: u8,
        /// The value of the phase 2a message.
        val: Val,
    },
}

/// The invariants this port checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PaxosCommitInvariant {
    /// `PCTypeOK`.
    TypeOk,
    /// `TC!TCConsistent`.
    Consistent,
    /// `NoRMCommitted`: no RM has committed (fails; for calibration).
    NoRmCommitted,
}

impl PaxosCommitInvariant {
    /// Names, as the `INVARIANTS` parameter takes them.
    pub const NAMES: [(&'static str, PaxosCommitInvariant); 3] = [
        ("PCTypeOK", PaxosCommitInvariant::TypeOk),
        ("TCConsistent", PaxosCommitInvariant::Consistent),
        ("NoRMCommitted", PaxosCommitInvariant::NoRmCommitted),
    ];
}

/// PaxosCommit's constants: `RM`, `Acceptor`, `Ballot` (and `Majority`,
/// derived from `Acceptor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaxosCommitConstants {
    /// `|RM|`, 1 to [`PAXOS_RM_COUNT_MAX`].
    pub rm_count: usize,
    /// `|Acceptor|`, 1 to [`ACCEPTOR_COUNT_MAX`].
    pub acceptor_count: usize,
    /// `|Ballot|`, 1 to [`BALLOT_COUNT_MAX`]; `Ballot = 0..ballot_count-1`.
    pub ballot_count: usize,
}

impl PaxosCommitConstants {
    /// The cfg of tlaplus/Examples: `RM = {r1, r2}`, `Acceptor = {a1, a2, a3}`,
    /// `Ballot = {0, 1}`.
    pub const CFG: PaxosCommitConstants = PaxosCommitConstants {
        rm_count: 2,
        acceptor_count: 3,
        ballot_count: 2,
    };

    /// Why these constants do not fit the port's bit sets, if they do not.
    pub fn check(&self) -> Result<(), String> {
        let PaxosCommitConstants {
            rm_count,
            acceptor_count,
            ballot_count,
        } = *self;
        if !(1..=PAXOS_RM_COUNT_MAX).contains(&rm_count) {
            return Err(format!(
                "PaxosCommit takes 1 to {PAXOS_RM_COUNT_MAX} RMs, not {rm_count}"
            ));
        }
        if !(1..=ACCEPTOR_COUNT_MAX).contains(&acceptor_count) {
            return Err(format!(
                "PaxosCommit takes 1 to {ACCEPTOR_COUNT_MAX} acceptors, not {acceptor_count}"
            ));
        }
        if !(1..=BALLOT_COUNT_MAX).contains(&ballot_count) {
            return Err(format!(
                "PaxosCommit takes 1 to {BALLOT_COUNT_MAX} ballots, not {ballot_count}"
            ));
        }
        let phase1b_bits = ballot_count * acceptor_count * Vote::count(ballot_count);
        if phase1b_bits > 64 {
            return Err(format!(
                "PaxosCommit with {acceptor_count} acceptors and {ballot_count} ballots needs \
                 {phase1b_bits} phase 1b message bits per instance, more than 64; \
                 use fewer acceptors or ballots"
            ));
        }
        Ok(())
    }
}

/// PaxosCommit with the given constants.
#[derive(Clone, Debug)]
pub struct PaxosCommit {
    constants: PaxosCommitConstants,
    /// `Majority`, as acceptor bit masks in ascending order.
    majorities: Vec<u8>,
    invariants: Vec<PaxosCommitInvariant>,
}

impl PaxosCommit {
    /// PaxosCommit with the cfg's constants, checking `PCTypeOK`.
    pub fn new() -> PaxosCommit {
        PaxosCommit::with(PaxosCommitConstants::CFG, &[PaxosCommitInvariant::TypeOk])
            .expect("the cfg's constants fit")
    }

    /// PaxosCommit with `constants`, checking exactly `invariants`; fails if
    /// the constants are out of range (see [`PaxosCommitConstants::check`]).
    pub fn with(
        constants: PaxosCommitConstants,
        invariants: &[PaxosCommitInvariant],
    ) -> Result<PaxosCommit, String> {
        constants.check()?;
        let quorum = constants.acceptor_count / 2 + 1;
        let majorities = (1u8..(1 << constants.acceptor_count))
            .filter(|set| set.count_ones() as usize == quorum)
            .collect();
        Ok(PaxosCommit {
            constants,
            majorities,
            invariants: invariants.to_vec(),
        })
    }

    /// The constants this instance was built with.
    pub fn constants(&self) -> PaxosCommitConstants {
        self.constants
    }

    fn acceptors(&self) -> impl Iterator<Item = Acceptor> {
        (0..self.constants.acceptor_count as u8).map(Acceptor)
    }

    /// `Ballot \ {0}`.
    fn leader_ballots(&self) -> impl Iterator<Item = u8> {
        1..self.constants.ballot_count as u8
    }

    fn vote_count(&self) -> usize {
        Vote::count(self.constants.ballot_count)
    }

    /// The bit of phase 1b message `(mbal, vote, acc)` in [`InstanceMsgs::phase1b`].
    #[inline]
    fn phase1b_bit(&self, mbal: u8, acc: Acceptor, vote: Vote) -> u64 {
        let slot = mbal as usize * self.constants.acceptor_count + acc.0 as usize;
        1 << (slot * self.vote_count() + vote.0 as usize)
    }

    /// The largest vote among `acc`'s phase 1b messages for ballot `mbal`, if it sent any.
    #[inline]
    fn phase1b_top_vote(&self, msgs: &InstanceMsgs, mbal: u8, acc: Acceptor) -> Option<Vote> {
        let slot = mbal as usize * self.constants.acceptor_count + acc.0 as usize;
        let votes = (msgs.phase1b >> (slot * self.vote_count())) & ((1 << self.vote_count()) - 1);
        (votes != 0).then(|| Vote(63 - votes.leading_zeros() as u8))
    }

    /// The acceptors that sent phase 2b `(bal, val)`, as a bit mask.
    #[inline]
    fn phase2b_voters(&self, msgs: &InstanceMsgs, bal: u8, val: Val) -> u8 {
        let acceptor_count = self.constants.acceptor_count;
        let shift = (2 * bal as usize + val as usize) * acceptor_count;
        ((msgs.phase2b >> shift) & ((1 << acceptor_count) - 1)) as u8
    }

    /// `Decided(rm, v)`: some majority sent phase 2b `(rm, b, v)` for one ballot `b`.
    fn decided(&self, msgs: &InstanceMsgs, val: Val) -> bool {
        (0..self.constants.ballot_count as u8).any(|bal| {
            let voters = self.phase2b_voters(msgs, bal, val);
            self.majorities.iter().any(|&ms| ms & !voters == 0)
        })
    }

    /// Whether `Phase2a(bal, rm)` can propose `val`: some majority all sent
    /// phase 1b for `bal`, and the highest vote among those messages is for
    /// `val` (or there is none and `val` is `"aborted"`).
    fn phase2a_can_propose(&self, msgs: &InstanceMsgs, bal: u8, val: Val) -> bool {
        let mut top_votes = [None; ACCEPTOR_COUNT_MAX];
        for acc in self.acceptors() {
            top_votes[acc.0 as usize] = self.phase1b_top_vote(msgs, bal, acc);
        }
        self.majorities.iter().any(|&ms| {
            let mut top = Vote::NONE;
            for acc in self.acceptors().filter(|acc| ms & (1 << acc.0) != 0) {
                match top_votes[acc.0 as usize] {
                    None => return false,
                    Some(vote) => top = top.max(vote),
                }
            }
            // Each (ins, bal) has one phase 2a value, so the votes with the
            // largest ballot agree and CHOOSE has one candidate.
            top.val().unwrap_or(Val::Aborted) == val
        })
    }

    /// `PCTypeOK`: every field and message lies in the constants' ranges.
    pub fn type_ok(&self, state: &PaxosCommitState) -> bool {
        let PaxosCommitConstants {
            rm_count,
            acceptor_count,
            ballot_count,
        } = self.constants;
        let within = |bits: u64, count: usize| count >= 64 || bits >> count == 0;
        state.rm_count as usize == rm_count
            && state.acceptor_count as usize == acceptor_count
            && state.rm_state.is_within(rm_count)
            && state.instances.iter().enumerate().all(|(ins, instance)| {
                if ins >= rm_count {
                    return *instance == Instance::default();
                }
                let msgs = &instance.msgs;
                instance
                    .acceptors
                    .iter()
                    .enumerate()
                    .all(|(acc, acceptor)| {
                        if acc >= acceptor_count {
                            return *acceptor == AcceptorState::INITIAL;
                        }
                        (acceptor.mbal() as usize) < ballot_count
                            && (acceptor.vote().0 as usize) < self.vote_count()
                    })
                    && msgs.phase1a & 1 == 0
                    && within(msgs.phase1a.into(), ballot_count)
                    && within(
                        msgs.phase1b,
                        ballot_count * acceptor_count * self.vote_count(),
                    )
                    && within(msgs.phase2a.into(), 2 * ballot_count)
                    && within(msgs.phase2b.into(), 2 * ballot_count * acceptor_count)
            })
    }

    fn describe_msgs(&self, state: &PaxosCommitState) -> String {
        let mut msgs = Vec::new();
        for ins in Rm::all(self.constants.rm_count) {
            let instance = &state.instances[ins.index()];
            let bits = &instance.msgs;
            for bal in 0..self.constants.ballot_count as u8 {
                if bits.phase1a & (1 << bal) != 0 {
                    msgs.push(format!(
                        "[type |-> \"phase1a\", ins |-> {ins}, bal |-> {bal}]"
                    ));
                }
            }
            for mbal in 0..self.constants.ballot_count as u8 {
                for acc in self.acceptors() {
                    for vote in (0..self.vote_count() as u8).map(Vote) {
                        if bits.phase1b & self.phase1b_bit(mbal, acc, vote) != 0 {
                            msgs.push(format!(
                                "[type |-> \"phase1b\", ins |-> {ins}, mbal |-> {mbal}, \
                                 {vote:?}, acc |-> {acc}]"
                            ));
                        }
                    }
                }
            }
            for bal in 0..self.constants.ballot_count as u8 {
                for val in Val::ALL {
                    if bits.phase2a & (1 << (2 * bal + val as u8)) != 0 {
                        msgs.push(format!(
                            "[type |-> \"phase2a\", ins |-> {ins}, bal |-> {bal}, val |-> \"{}\"]",
                            val.spec_name()
                        ));
                    }
                    let voters = self.phase2b_voters(bits, bal, val);
                    for acc in self.acceptors().filter(|acc| voters & (1 << acc.0) != 0) {
                        msgs.push(format!(
                            "[type |-> \"phase2b\", acc |-> {acc}, ins |-> {ins}, bal |-> {bal}, \
                             val |-> \"{}\"]",
                            val.spec_name()
                        ));
                    }
                }
            }
        }
        if state.commit {
            msgs.push("[type |-> \"Commit\"]".into());
        }
        if state.abort {
            msgs.push("[type |-> \"Abort\"]".into());
        }
        format!("{{{}}}", msgs.join(", "))
    }
}

impl Default for PaxosCommit {
    fn default() -> PaxosCommit {
        PaxosCommit::new()
    }
}

impl Model for PaxosCommit {
    type State = PaxosCommitState;
    type Action = PaxosCommitAction;

    fn name(&self) -> String {
        "paxos-commit".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![
            ModelParam::new("RM", self.constants.rm_count),
            ModelParam::new("ACCEPTORS", self.constants.acceptor_count),
            ModelParam::new("BALLOTS", self.constants.ballot_count),
            choices_param("INVARIANTS", &self.invariants, &PaxosCommitInvariant::NAMES),
        ]
    }

    fn init_states(&self, out: &mut Vec<PaxosCommitState>) {
        out.push(PaxosCommitState {
            rm_count: self.constants.rm_count as u8,
            acceptor_count: self.constants.acceptor_count as u8,
            rm_state: RmStates::ALL_WORKING,
            instances: [Instance::default(); PAXOS_RM_COUNT_MAX],
            commit: false,
            abort: false,
        });
    }

    /// Lists candidate actions in `PCNext`'s order; all but Phase2a and
    /// Decide are listed only when enabled.
    fn actions(&self, state: &PaxosCommitState, out: &mut Vec<PaxosCommitAction>) {
        for rm in Rm::all(self.constants.rm_count) {
            if state.rm_state.get(rm) == RmState::Working {
                out.push(PaxosCommitAction::RmPrepare(rm));
                out.push(PaxosCommitAction::RmChooseToAbort(rm));
            }
            if state.commit {
                out.push(PaxosCommitAction::RmRcvCommitMsg(rm));
            }
            if state.abort {
                out.push(PaxosCommitAction::RmRcvAbortMsg(rm));
            }
        }
        for bal in self.leader_ballots() {
            for rm in Rm::all(self.constants.rm_count) {
                out.push(PaxosCommitAction::Phase1a { bal, rm });
                if state.instances[rm.index()].msgs.phase2a & (3 << (2 * bal)) == 0 {
                    for val in Val::ALL {
                        out.push(PaxosCommitAction::Phase2a { bal, rm, val });
                    }
                }
            }
        }
        out.push(PaxosCommitAction::DecideCommit);
        out.push(PaxosCommitAction::DecideAbort);
        for acc in self.acceptors() {
            for ins in Rm::all(self.constants.rm_count) {
                let instance = &state.instances[ins.index()];
                let mbal = instance.acceptors[acc.0 as usize].mbal();
                for bal in self.leader_ballots().filter(|&bal| bal > mbal) {
                    if instance.msgs.phase1a & (1 << bal) != 0 {
                        out.push(PaxosCommitAction::Phase1b { acc, ins, bal });
                    }
                }
            }
            for ins in Rm::all(self.constants.rm_count) {
                let instance = &state.instances[ins.index()];
                let mbal = instance.acceptors[acc.0 as usize].mbal();
                for bal in mbal..self.constants.ballot_count as u8 {
                    for val in Val::ALL {
                        if instance.msgs.phase2a & (1 << (2 * bal + val as u8)) != 0 {
                            out.push(PaxosCommitAction::Phase2b { acc, ins, bal, val });
                        }
                    }
                }
            }
        }
    }

    fn next_state(
        &self,
        state: &PaxosCommitState,
        action: &PaxosCommitAction,
    ) -> Option<PaxosCommitState> {
        let mut next = *state;
        match *action {
            PaxosCommitAction::RmPrepare(rm) | PaxosCommitAction::RmChooseToAbort(rm) => {
                if state.rm_state.get(rm) != RmState::Working {
                    return None;
                }
                let (rm_state, val) = match action {
                    PaxosCommitAction::RmPrepare(_) => (RmState::Prepared, Val::Prepared),
                    _ => (RmState::Aborted, Val::Aborted),
                };
                next.rm_state = state.rm_state.with(rm, rm_state);
                next.instances[rm.index()].msgs.phase2a |= 1 << val as u8;
            }
            PaxosCommitAction::RmRcvCommitMsg(rm) => {
                if !state.commit {
                    return None;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Committed);
            }
            PaxosCommitAction::RmRcvAbortMsg(rm) => {
                if !state.abort {
                    return None;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Aborted);
            }
            PaxosCommitAction::Phase1a { bal, rm } => {
                next.instances[rm.index()].msgs.phase1a |= 1 << bal;
            }
            PaxosCommitAction::Phase2a { bal, rm, val } => {
                let msgs = &state.instances[rm.index()].msgs;
                if msgs.phase2a & (3 << (2 * bal)) != 0 || !self.phase2a_can_propose(msgs, bal, val)
                {
                    return None;
                }
                next.instances[rm.index()].msgs.phase2a |= 1 << (2 * bal + val as u8);
            }
            PaxosCommitAction::DecideCommit => {
                let all_prepared = state.instances[..self.constants.rm_count]
                    .iter()
                    .all(|instance| self.decided(&instance.msgs, Val::Prepared));
                if !all_prepared {
                    return None;
                }
                next.commit = true;
            }
            PaxosCommitAction::DecideAbort => {
                let some_aborted = state.instances[..self.constants.rm_count]
                    .iter()
                    .any(|instance| self.decided(&instance.msgs, Val::Aborted));
                if !some_aborted {
                    return None;
                }
                next.abort = true;
            }
            PaxosCommitAction::Phase1b { acc, ins, bal } => {
                let instance = &state.instances[ins.index()];
                let acceptor = instance.acceptors[acc.0 as usize];
                if instance.msgs.phase1a & (1 << bal) == 0 || acceptor.mbal() >= bal {
                    return None;
                }
                let instance = &mut next.instances[ins.index()];
                instance.acceptors[acc.0 as usize] = AcceptorState::new(bal, acceptor.vote());
                instance.msgs.phase1b |= self.phase1b_bit(bal, acc, acceptor.vote());
            }
            PaxosCommitAction::Phase2b { acc, ins, bal, val } => {
                let instance = &state.instances[ins.index()];
                let acceptor = instance.acceptors[acc.0 as usize];
                if instance.msgs.phase2a & (1 << (2 * bal + val as u8)) == 0
                    || acceptor.mbal() > bal
                {
                    return None;
                }
                let instance = &mut next.instances[ins.index()];
                instance.acceptors[acc.0 as usize] = AcceptorState::new(bal, Vote::new(bal, val));
                let shift = (2 * bal as usize + val as usize) * self.constants.acceptor_count;
                instance.msgs.phase2b |= 1 << (shift + acc.0 as usize);
            }
        }
        Some(next)
    }

    fn properties(&self) -> Vec<Property<PaxosCommit>> {
        self.invariants
            .iter()
            .map(|invariant| match invariant {
                PaxosCommitInvariant::TypeOk => Property::always(
                    "PCTypeOK",
                    |model: &PaxosCommit, state: &PaxosCommitState| model.type_ok(state),
                ),
                PaxosCommitInvariant::Consistent => Property::always(
                    "TCConsistent",
                    |model: &PaxosCommit, state: &PaxosCommitState| {
                        state.rm_state.tc_consistent(model.constants.rm_count)
                    },
                ),
                PaxosCommitInvariant::NoRmCommitted => Property::always(
                    "NoRMCommitted",
                    |model: &PaxosCommit, state: &PaxosCommitState| {
                        state.rm_state.none_committed(model.constants.rm_count)
                    },
                ),
            })
            .collect()
    }

    fn format_action(&self, action: &PaxosCommitAction) -> String {
        match action {
            PaxosCommitAction::RmPrepare(rm) => format!("RMPrepare({rm})"),
            PaxosCommitAction::RmChooseToAbort(rm) => format!("RMChooseToAbort({rm})"),
            PaxosCommitAction::RmRcvCommitMsg(rm) => format!("RMRcvCommitMsg({rm})"),
            PaxosCommitAction::RmRcvAbortMsg(rm) => format!("RMRcvAbortMsg({rm})"),
            PaxosCommitAction::Phase1a { bal, rm } => format!("Phase1a({bal}, {rm})"),
            PaxosCommitAction::Phase2a { bal, rm, val } => {
                format!("Phase2a({bal}, {rm}) proposing \"{}\"", val.spec_name())
            }
            PaxosCommitAction::DecideCommit => "Decide Commit".into(),
            PaxosCommitAction::DecideAbort => "Decide Abort".into(),
            PaxosCommitAction::Phase1b { acc, ins, bal } => {
                format!("Phase1b({acc}) on phase1a({ins}, {bal})")
            }
            PaxosCommitAction::Phase2b { acc, ins, bal, val } => format!(
                "Phase2b({acc}) on phase2a({ins}, {bal}, \"{}\")",
                val.spec_name()
            ),
        }
    }

    fn describe_state(&self, state: &PaxosCommitState) -> StateView {
        let a_state: Vec<String> = Rm::all(self.constants.rm_count)
            .map(|ins| {
                let acceptors: Vec<String> = self
                    .acceptors()
                    .map(|acc| {
                        let acceptor = state.instances[ins.index()].acceptors[acc.0 as usize];
                        format!("{acc} |-> {acceptor:?}")
                    })
                    .collect();
                format!("{ins} |-> [{}]", acceptors.join(", "))
            })
            .collect();
        StateView::new()
            .text("rmState", state.rm_state.describe(self.constants.rm_count))
            .text("aState", format!("[{}]", a_state.join(", ")))
            .text("msgs", self.describe_msgs(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_invariants_hold, explore};

    fn small(rm_count: usize, acceptor_count: usize, ballot_count: usize) -> PaxosCommit {
        let constants = PaxosCommitConstants {
            rm_count,
            acceptor_count,
            ballot_count,
        };
        PaxosCommit::with(constants, &PaxosCommitInvariant::NAMES.map(|(_, i)| i)).unwrap()
    }

    #[test]
    fn majorities_are_the_two_element_subsets_of_three() {
        assert_eq!(PaxosCommit::new().majorities, vec![0b011, 0b101, 0b110]);
        assert_eq!(small(1, 1, 1).majorities, vec![0b1]);
        assert_eq!(small(1, 4, 2).majorities.len(), 4, "3-of-4 subsets");
    }

    #[test]
    fn votes_and_acceptor_states_round_trip() {
        for bal in 0..BALLOT_COUNT_MAX as u8 {
            for val in Val::ALL {
                let vote = Vote::new(bal, val);
                assert_eq!((vote.bal(), vote.val()), (Some(bal), Some(val)));
                let acceptor = AcceptorState::new(bal, vote);
                assert_eq!((acceptor.mbal(), acceptor.vote()), (bal, vote));
            }
        }
        assert_eq!((Vote::NONE.bal(), Vote::NONE.val()), (None, None));
        assert!(Vote::new(1, Val::Prepared) > Vote::new(0, Val::Aborted));
    }

    #[test]
    fn constants_that_overflow_the_bit_sets_are_rejected() {
        let too_many = PaxosCommitConstants {
            rm_count: 2,
            acceptor_count: 5,
            ballot_count: 3,
        };
        let error = PaxosCommit::with(too_many, &[]).unwrap_err();
        assert!(error.contains("more than 64"), "{error}");
        assert!(PaxosCommit::with(
            PaxosCommitConstants {
                rm_count: 5,
                ..PaxosCommitConstants::CFG
            },
            &[]
        )
        .is_err());
    }

    #[test]
    fn one_rm_instance_is_consistent_and_can_commit() {
        let model = small(1, 3, 2);
        let reachable = explore(&model, 200_000);
        assert_invariants_hold(
            &PaxosCommit::with(
                model.constants(),
                &[
                    PaxosCommitInvariant::TypeOk,
                    PaxosCommitInvariant::Consistent,
                ],
            )
            .unwrap(),
            &reachable,
        );
        assert!(reachable.stuck.is_empty(), "Phase1a is always enabled");
        // RMPrepare, three Phase2b votes for ballot 0 (two suffice), Decide, RMRcvCommitMsg.
        assert_eq!(
            reachable.shortest_violation(&model, "NoRMCommitted"),
            Some(6)
        );
    }

    #[test]
    fn encoding_holds_only_existing_instances_and_acceptors() {
        let model = PaxosCommit::new();
        let mut initial = Vec::new();
        model.init_states(&mut initial);
        // counts, rmState, decision; per instance 3 acceptors + 1 + 8 + 1 + 4 bytes.
        assert_eq!(initial[0].to_bytes().len(), 2 + 4 + 1 + 2 * (3 + 14));
        let bytes = initial[0].to_bytes();
        assert_eq!(PaxosCommitState::decode_exact(&bytes).unwrap(), initial[0]);
        let mut corrupt = bytes.clone();
        corrupt[0] = 9;
        assert!(PaxosCommitState::decode_exact(&corrupt).is_err());
    }

    #[test]
    fn phase2a_follows_the_highest_vote_of_a_majority() {
        let model = PaxosCommit::new();
        let mut initial = Vec::new();
        model.init_states(&mut initial);
        let mut state = initial[0];
        let msgs = &mut state.instances[0].msgs;
        // a1 voted "prepared" in ballot 0, a2 never voted: both answered ballot 1.
        msgs.phase1b |= model.phase1b_bit(1, Acceptor(0), Vote::new(0, Val::Prepared));
        msgs.phase1b |= model.phase1b_bit(1, Acceptor(1), Vote::NONE);
        let msgs = state.instances[0].msgs;
        assert!(model.phase2a_can_propose(&msgs, 1, Val::Prepared));
        assert!(!model.phase2a_can_propose(&msgs, 1, Val::Aborted));
        // With a3 answering without a vote, {a2, a3} makes the leader abort.
        state.instances[0].msgs.phase1b |= model.phase1b_bit(1, Acceptor(2), Vote::NONE);
        let msgs = state.instances[0].msgs;
        assert!(model.phase2a_can_propose(&msgs, 1, Val::Aborted));
        assert!(!model.phase2a_can_propose(&msgs, 0, Val::Aborted));
    }
}
