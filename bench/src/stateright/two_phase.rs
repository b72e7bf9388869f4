//! Stateright's two-phase-commit example (`2pc.rs` example of stateright
//! 0.31), kept as it is there: the same state (`Vec`s and a `BTreeSet` of
//! messages), the same actions in the same order, the same properties. Only
//! the symmetry-reduction impl and the command line are left out; the
//! benchmark never turns symmetry on.
//!
//! Stateright is MIT-licensed; this model is a transcription of its example.

use std::collections::BTreeSet;
use std::ops::Range;

use stateright::{Model, Property};

/// A resource manager, an integer in `0..N`.
type R = usize;

/// The two-phase-commit system over the resource managers `rms`.
#[derive(Clone)]
pub struct TwoPhaseSys {
    /// The resource managers.
    pub rms: Range<R>,
}

/// A state of [`TwoPhaseSys`].
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub struct TwoPhaseState {
    rm_state: Vec<RmState>,
    tm_state: TmState,
    tm_prepared: Vec<bool>,
    msgs: BTreeSet<Message>,
}

/// A message of the protocol.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum Message {
    /// The RM is prepared.
    Prepared {
        /// Which RM.
        rm: R,
    },
    /// The TM decided to commit.
    Commit,
    /// The TM decided to abort.
    Abort,
}

/// The state of one resource manager.
#[derive(Clone, Debug, Eq, Hash, Ord, PartialEq, PartialOrd)]
pub enum RmState {
    /// Working, the initial state.
    Working,
    /// Prepared to commit.
    Prepared,
    /// Committed.
    Committed,
    /// Aborted.
    Aborted,
}

/// The state of the transaction manager.
#[derive(Clone, Debug, Eq, Hash, PartialEq)]
pub enum TmState {
    /// Collecting Prepared messages.
    Init,
    /// Committed.
    Committed,
    /// Aborted.
    Aborted,
}

/// A step of the protocol.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// The TM receives the Prepared message of an RM.
    TmRcvPrepared(R),
    /// The TM commits.
    TmCommit,
    /// The TM aborts.
    TmAbort,
    /// An RM prepares.
    RmPrepare(R),
    /// An RM chooses to abort.
    RmChooseToAbort(R),
    /// An RM receives the Commit message.
    RmRcvCommitMsg(R),
    /// An RM receives the Abort message.
    RmRcvAbortMsg(R),
}

impl Model for TwoPhaseSys {
    type State = TwoPhaseState;
    type Action = Action;

    fn init_states(&self) -> Vec<Self::State> {
        vec![TwoPhaseState {
            rm_state: self.rms.clone().map(|_| RmState::Working).collect(),
            tm_state: TmState::Init,
            tm_prepared: self.rms.clone().map(|_| false).collect(),
            msgs: Default::default(),
        }]
    }

    fn actions(&self, state: &Self::State, actions: &mut Vec<Self::Action>) {
        if state.tm_state == TmState::Init && state.tm_prepared.iter().all(|p| *p) {
            actions.push(Action::TmCommit);
        }
        if state.tm_state == TmState::Init {
            actions.push(Action::TmAbort);
        }
        for rm in self.rms.clone() {
            if state.tm_state == TmState::Init && state.msgs.contains(&Message::Prepared { rm }) {
                actions.push(Action::TmRcvPrepared(rm));
            }
            if state.rm_state.get(rm) == Some(&RmState::Working) {
                actions.push(Action::RmPrepare(rm));
            }
            if state.rm_state.get(rm) == Some(&RmState::Working) {
                actions.push(Action::RmChooseToAbort(rm));
            }
            if state.msgs.contains(&Message::Commit) {
                actions.push(Action::RmRcvCommitMsg(rm));
            }
            if state.msgs.contains(&Message::Abort) {
                actions.push(Action::RmRcvAbortMsg(rm));
            }
        }
    }

    fn next_state(&self, last_state: &Self::State, action: Self::Action) -> Option<Self::State> {
        let mut state = last_state.clone();
        match action {
            Action::TmRcvPrepared(rm) => {
                state.tm_prepared[rm] = true;
            }
            Action::TmCommit => {
                state.tm_state = TmState::Committed;
                state.msgs.insert(Message::Commit);
            }
            Action::TmAbort => {
                state.tm_state = TmState::Aborted;
                state.msgs.insert(Message::Abort);
            }
            Action::RmPrepare(rm) => {
                state.rm_state[rm] = RmState::Prepared;
                state.msgs.insert(Message::Prepared { rm });
            }
            Action::RmChooseToAbort(rm) => {
                state.rm_state[rm] = RmState::Aborted;
            }
            Action::RmRcvCommitMsg(rm) => {
                state.rm_state[rm] = RmState::Committed;
            }
            Action::RmRcvAbortMsg(rm) => {
                state.rm_state[rm] = RmState::Aborted;
            }
        }
        Some(state)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::<Self>::sometimes("abort agreement", |_, state| {
                state.rm_state.iter().all(|s| s == &RmState::Aborted)
            }),
            Property::<Self>::sometimes("commit agreement", |_, state| {
                state.rm_state.iter().all(|s| s == &RmState::Committed)
            }),
            Property::<Self>::always("consistent", |_, state| {
                !state.rm_state.iter().any(|s1| {
                    state
                        .rm_state
                        .iter()
                        .any(|s2| s1 == &RmState::Aborted && s2 == &RmState::Committed)
                })
            }),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stateright::Checker;

    #[test]
    fn three_rms_have_288_states_as_in_stateright_and_tlc() {
        let checker = TwoPhaseSys { rms: 0..3 }.checker().spawn_bfs().join();
        assert_eq!(checker.unique_state_count(), 288);
        checker.assert_properties();
    }
}
