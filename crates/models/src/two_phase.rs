//! `TwoPhase` (tlaplus/Examples, `specifications/transaction_commit/TwoPhase.tla`):
//! two-phase commit, a transaction manager (TM) coordinating the RMs.
//!
//! Variables `rmState`, `tmState`, `tmPrepared` and `msgs` (every message
//! ever sent); the actions of `TPNext`. Invariants: `TPTypeOK`,
//! `TCConsistent` (TCommit's, through `TC == INSTANCE TCommit`) and, for
//! counterexample calibration, `NoRMCommitted`
//! (`\A rm \in RM : rmState[rm] # "committed"`), which is meant to fail.
//!
//! A state is 10 bytes: `rmState` packed two bits per RM, the RM sets as bit
//! sets. Receiving a Commit or Abort message twice is a stuttering step, kept
//! as in the spec: it is what keeps the final states from being deadlocks.

use cmc_model::{
    DynFastSuccessors, Encode, FastSuccessors, Model, ModelParam, Property, StateView,
};

use crate::params::choices_param;
use crate::rm::{Rm, RmSet, RmState, RmStates, RM_COUNT_MAX};

/// `tmState`: `{"init", "committed", "aborted"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Encode)]
pub enum TmState {
    /// `"init"`: collecting Prepared messages.
    Init,
    /// `"committed"`.
    Committed,
    /// `"aborted"`.
    Aborted,
}

impl TmState {
    /// The spec's string for this state, e.g. `"init"`.
    pub fn spec_name(self) -> &'static str {
        match self {
            TmState::Init => "init",
            TmState::Committed => "committed",
            TmState::Aborted => "aborted",
        }
    }
}

/// `msgs`: the set of messages sent, a subset of `Message`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Encode)]
pub struct TwoPhaseMsgs {
    /// The RMs `rm` with `[type |-> "Prepared", rm |-> rm] \in msgs`.
    pub prepared: RmSet,
    /// `[type |-> "Commit"] \in msgs`.
    pub commit: bool,
    /// `[type |-> "Abort"] \in msgs`.
    pub abort: bool,
}

/// A state of TwoPhase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Encode)]
pub struct TwoPhaseState {
    /// `rmState`.
    pub rm_state: RmStates,
    /// `tmState`.
    pub tm_state: TmState,
    /// `tmPrepared`: the RMs from which the TM has received Prepared.
    pub tm_prepared: RmSet,
    /// `msgs`.
    pub msgs: TwoPhaseMsgs,
}

/// An action of `TPNext`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwoPhaseAction {
    /// `TMCommit`: every RM is known prepared; the TM commits.
    TmCommit,
    /// `TMAbort`: the TM spontaneously aborts.
    TmAbort,
    /// `TMRcvPrepared(rm)`.
    TmRcvPrepared(Rm),
    /// `RMPrepare(rm)`.
    RmPrepare(Rm),
    /// `RMChooseToAbort(rm)`.
    RmChooseToAbort(Rm),
    /// `RMRcvCommitMsg(rm)`.
    RmRcvCommitMsg(Rm),
    /// `RMRcvAbortMsg(rm)`.
    RmRcvAbortMsg(Rm),
}

/// The invariants this port checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TwoPhaseInvariant {
    /// `TPTypeOK`.
    TypeOk,
    /// `TC!TCConsistent`.
    Consistent,
    /// `NoRMCommitted`: no RM has committed (fails; for calibration).
    NoRmCommitted,
}

impl TwoPhaseInvariant {
    /// Names, as the `INVARIANTS` parameter takes them.
    pub const NAMES: [(&'static str, TwoPhaseInvariant); 3] = [
        ("TPTypeOK", TwoPhaseInvariant::TypeOk),
        ("TCConsistent", TwoPhaseInvariant::Consistent),
        ("NoRMCommitted", TwoPhaseInvariant::NoRmCommitted),
    ];

    /// The invariants the passing configurations check.
    pub const DEFAULT: [TwoPhaseInvariant; 2] =
        [TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::Consistent];
}

/// TwoPhase with `RM = {r1, …, r{rm_count}}`.
#[derive(Clone, Debug)]
pub struct TwoPhase {
    rm_count: usize,
    invariants: Vec<TwoPhaseInvariant>,
}

impl TwoPhase {
    /// TwoPhase over `rm_count` RMs (1 to 16), checking `TPTypeOK` and `TCConsistent`.
    pub fn new(rm_count: usize) -> TwoPhase {
        TwoPhase::with_invariants(rm_count, &TwoPhaseInvariant::DEFAULT)
    }

    /// TwoPhase over `rm_count` RMs (1 to 16), checking exactly `invariants`.
    pub fn with_invariants(rm_count: usize, invariants: &[TwoPhaseInvariant]) -> TwoPhase {
        assert!(
            (1..=RM_COUNT_MAX).contains(&rm_count),
            "TwoPhase takes 1 to {RM_COUNT_MAX} RMs, not {rm_count}"
        );
        TwoPhase {
            rm_count,
            invariants: invariants.to_vec(),
        }
    }

    /// `TPTypeOK`: every RM-indexed value stays within `RM`.
    pub fn type_ok(&self, state: &TwoPhaseState) -> bool {
        let rms = RmSet::full(self.rm_count);
        state.rm_state.is_within(self.rm_count)
            && state.tm_prepared.is_subset(rms)
            && state.msgs.prepared.is_subset(rms)
    }
}

impl Model for TwoPhase {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;

    fn name(&self) -> String {
        "two-phase".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![
            ModelParam::new("RM", self.rm_count),
            choices_param("INVARIANTS", &self.invariants, &TwoPhaseInvariant::NAMES),
        ]
    }

    fn init_states(&self, out: &mut Vec<TwoPhaseState>) {
        out.push(TwoPhaseState {
            rm_state: RmStates::ALL_WORKING,
            tm_state: TmState::Init,
            tm_prepared: RmSet::EMPTY,
            msgs: TwoPhaseMsgs {
                prepared: RmSet::EMPTY,
                commit: false,
                abort: false,
            },
        });
    }

    /// Lists exactly the enabled actions, in `TPNext`'s order.
    fn actions(&self, state: &TwoPhaseState, out: &mut Vec<TwoPhaseAction>) {
        let tm_init = state.tm_state == TmState::Init;
        if tm_init {
            if state.tm_prepared == RmSet::full(self.rm_count) {
                out.push(TwoPhaseAction::TmCommit);
            }
            out.push(TwoPhaseAction::TmAbort);
        }
        for rm in Rm::all(self.rm_count) {
            if tm_init && state.msgs.prepared.contains(rm) {
                out.push(TwoPhaseAction::TmRcvPrepared(rm));
            }
            if state.rm_state.get(rm) == RmState::Working {
                out.push(TwoPhaseAction::RmPrepare(rm));
                out.push(TwoPhaseAction::RmChooseToAbort(rm));
            }
            if state.msgs.commit {
                out.push(TwoPhaseAction::RmRcvCommitMsg(rm));
            }
            if state.msgs.abort {
                out.push(TwoPhaseAction::RmRcvAbortMsg(rm));
            }
        }
    }

    fn next_state(&self, state: &TwoPhaseState, action: &TwoPhaseAction) -> Option<TwoPhaseState> {
        let mut next = *state;
        self.next_state_into(state, action, &mut next)
            .then_some(next)
    }

    fn fast_successors(&self) -> Option<&DynFastSuccessors<'_, Self>> {
        Some(self)
    }

    fn properties(&self) -> Vec<Property<TwoPhase>> {
        self.invariants
            .iter()
            .map(|invariant| match invariant {
                TwoPhaseInvariant::TypeOk => {
                    Property::always("TPTypeOK", |model: &TwoPhase, state: &TwoPhaseState| {
                        model.type_ok(state)
                    })
                }
                TwoPhaseInvariant::Consistent => {
                    Property::always("TCConsistent", |model: &TwoPhase, state: &TwoPhaseState| {
                        state.rm_state.tc_consistent(model.rm_count)
                    })
                }
                TwoPhaseInvariant::NoRmCommitted => Property::always(
                    "NoRMCommitted",
                    |model: &TwoPhase, state: &TwoPhaseState| {
                        state.rm_state.none_committed(model.rm_count)
                    },
                ),
            })
            .collect()
    }

    fn format_action(&self, action: &TwoPhaseAction) -> String {
        match action {
            TwoPhaseAction::TmCommit => "TMCommit".into(),
            TwoPhaseAction::TmAbort => "TMAbort".into(),
            TwoPhaseAction::TmRcvPrepared(rm) => format!("TMRcvPrepared({rm})"),
            TwoPhaseAction::RmPrepare(rm) => format!("RMPrepare({rm})"),
            TwoPhaseAction::RmChooseToAbort(rm) => format!("RMChooseToAbort({rm})"),
            TwoPhaseAction::RmRcvCommitMsg(rm) => format!("RMRcvCommitMsg({rm})"),
            TwoPhaseAction::RmRcvAbortMsg(rm) => format!("RMRcvAbortMsg({rm})"),
        }
    }

    fn describe_state(&self, state: &TwoPhaseState) -> StateView {
        let mut msgs: Vec<String> = state
            .msgs
            .prepared
            .iter()
            .map(|rm| format!("[type |-> \"Prepared\", rm |-> {rm}]"))
            .collect();
        if state.msgs.commit {
            msgs.push("[type |-> \"Commit\"]".into());
        }
        if state.msgs.abort {
            msgs.push("[type |-> \"Abort\"]".into());
        }
        StateView::new()
            .text("rmState", state.rm_state.describe(self.rm_count))
            .text("tmState", format!("\"{}\"", state.tm_state.spec_name()))
            .field("tmPrepared", state.tm_prepared)
            .text("msgs", format!("{{{}}}", msgs.join(", ")))
    }
}

impl FastSuccessors for TwoPhase {
    type State = TwoPhaseState;
    type Action = TwoPhaseAction;

    /// Writes the successor in place: the search's buffer is written field by field and
    /// read back the same way by `encode`, with no copy of a state built on the stack.
    fn next_state_into(
        &self,
        state: &TwoPhaseState,
        action: &TwoPhaseAction,
        next: &mut TwoPhaseState,
    ) -> bool {
        let tm_init = state.tm_state == TmState::Init;
        *next = *state;
        match *action {
            TwoPhaseAction::TmRcvPrepared(rm) => {
                if !(tm_init && state.msgs.prepared.contains(rm)) {
                    return false;
                }
                next.tm_prepared = state.tm_prepared.with(rm);
            }
            TwoPhaseAction::TmCommit => {
                if !(tm_init && state.tm_prepared == RmSet::full(self.rm_count)) {
                    return false;
                }
                next.tm_state = TmState::Committed;
                next.msgs.commit = true;
            }
            TwoPhaseAction::TmAbort => {
                if !tm_init {
                    return false;
                }
                next.tm_state = TmState::Aborted;
                next.msgs.abort = true;
            }
            TwoPhaseAction::RmPrepare(rm) => {
                if state.rm_state.get(rm) != RmState::Working {
                    return false;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Prepared);
                next.msgs.prepared = state.msgs.prepared.with(rm);
            }
            TwoPhaseAction::RmChooseToAbort(rm) => {
                if state.rm_state.get(rm) != RmState::Working {
                    return false;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Aborted);
            }
            TwoPhaseAction::RmRcvCommitMsg(rm) => {
                if !state.msgs.commit {
                    return false;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Committed);
            }
            TwoPhaseAction::RmRcvAbortMsg(rm) => {
                if !state.msgs.abort {
                    return false;
                }
                next.rm_state = state.rm_state.with(rm, RmState::Aborted);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_invariants_hold, explore};

    #[test]
    fn reaches_every_tlc_state_for_three_to_five_rms() {
        for (rm_count, distinct, depth) in [(3, 288, 11), (4, 1_568, 14), (5, 8_832, 17)] {
            let model = TwoPhase::new(rm_count);
            let reachable = explore(&model, 10_000);
            assert_eq!(
                (reachable.distinct(), reachable.depth()),
                (distinct, depth),
                "RM={rm_count}"
            );
            assert!(reachable.stuck.is_empty(), "TLC finds no deadlock");
            assert_invariants_hold(&model, &reachable);
        }
    }

    #[test]
    fn shortest_commit_matches_tlc() {
        for (rm_count, length) in [(3, 9), (5, 13)] {
            let model = TwoPhase::with_invariants(rm_count, &[TwoPhaseInvariant::NoRmCommitted]);
            let reachable = explore(&model, 10_000);
            assert_eq!(
                reachable.shortest_violation(&model, "NoRMCommitted"),
                Some(length),
                "RM={rm_count}"
            );
        }
    }

    #[test]
    fn final_states_only_stutter() {
        let model = TwoPhase::new(2);
        let reachable = explore(&model, 1_000);
        let (last, _) = reachable.states.last().unwrap();
        let mut actions = Vec::new();
        model.actions(last, &mut actions);
        assert!(!actions.is_empty());
        for action in &actions {
            assert_eq!(model.next_state(last, action).as_ref(), Some(last));
        }
    }

    #[test]
    fn listed_actions_are_exactly_the_enabled_ones() {
        let model = TwoPhase::new(3);
        let every_action: Vec<TwoPhaseAction> = [TwoPhaseAction::TmCommit, TwoPhaseAction::TmAbort]
            .into_iter()
            .chain(Rm::all(3).flat_map(|rm| {
                [
                    TwoPhaseAction::TmRcvPrepared(rm),
                    TwoPhaseAction::RmPrepare(rm),
                    TwoPhaseAction::RmChooseToAbort(rm),
                    TwoPhaseAction::RmRcvCommitMsg(rm),
                    TwoPhaseAction::RmRcvAbortMsg(rm),
                ]
            }))
            .collect();
        for (state, _) in &explore(&model, 1_000).states {
            let mut listed = Vec::new();
            model.actions(state, &mut listed);
            let enabled: Vec<TwoPhaseAction> = every_action
                .iter()
                .copied()
                .filter(|action| model.next_state(state, action).is_some())
                .collect();
            let mut listed_sorted = listed.clone();
            listed_sorted.sort_by_key(|action| format!("{action:?}"));
            let mut enabled_sorted = enabled;
            enabled_sorted.sort_by_key(|action| format!("{action:?}"));
            assert_eq!(listed_sorted, enabled_sorted, "{state:?}");
        }
    }

    #[test]
    fn states_read_like_tlc_values() {
        let model = TwoPhase::new(2);
        let mut initial = Vec::new();
        model.init_states(&mut initial);
        let state = model
            .next_state(&initial[0], &TwoPhaseAction::RmPrepare(Rm(1)))
            .unwrap();
        let view = model.describe_state(&state);
        let text = |name: &str| {
            view.fields
                .iter()
                .find(|(field, _)| field == name)
                .map(|(_, value)| value.clone())
                .unwrap()
        };
        assert_eq!(text("rmState"), "[r1 |-> \"working\", r2 |-> \"prepared\"]");
        assert_eq!(text("tmState"), "\"init\"");
        assert_eq!(text("tmPrepared"), "{}");
        assert_eq!(text("msgs"), "{[type |-> \"Prepared\", rm |-> r2]}");
    }

    #[test]
    fn type_ok_rejects_rms_outside_the_constant() {
        let model = TwoPhase::new(2);
        let mut initial = Vec::new();
        model.init_states(&mut initial);
        let mut state = initial[0];
        assert!(model.type_ok(&state));
        state.tm_prepared = state.tm_prepared.with(Rm(2));
        assert!(!model.type_ok(&state));
    }
}
