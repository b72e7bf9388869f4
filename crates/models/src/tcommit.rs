//! `TCommit` (tlaplus/Examples, `specifications/transaction_commit/TCommit.tla`):
//! the transaction commit problem, stated over the RMs alone.
//!
//! Variable `rmState`; actions `Prepare(rm)` and the two branches of
//! `Decide(rm)`; invariants `TCTypeOK` and `TCConsistent`.
//!
//! The spec is checked with `CHECK_DEADLOCK FALSE`: its final states (every RM
//! committed or aborted) have no successor. This port says so with
//! [`Model::is_terminal`], so it passes with deadlock checking on as well, and
//! a stuck state that is *not* final would still be reported.

use cmc_model::{Model, ModelParam, Property, StateView};

use crate::rm::{Rm, RmSet, RmState, RmStates, RM_COUNT_MAX};

/// An action of `TCNext`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TCommitAction {
    /// `Prepare(rm)`: a working RM prepares.
    Prepare(Rm),
    /// The first branch of `Decide(rm)`: a prepared RM commits once all can.
    DecideCommit(Rm),
    /// The second branch of `Decide(rm)`: an undecided RM aborts while none has committed.
    DecideAbort(Rm),
}

/// The invariants TCommit defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TCommitInvariant {
    /// `TCTypeOK`: `rmState \in [RM -> {…}]`.
    TypeOk,
    /// `TCConsistent`: no RM aborted while another committed.
    Consistent,
}

impl TCommitInvariant {
    /// Spec names, as the `INVARIANTS` parameter takes them.
    pub const NAMES: [(&'static str, TCommitInvariant); 2] = [
        ("TCTypeOK", TCommitInvariant::TypeOk),
        ("TCConsistent", TCommitInvariant::Consistent),
    ];
}

/// TCommit with `RM = {r1, …, r{rm_count}}`.
#[derive(Clone, Debug)]
pub struct TCommit {
    rm_count: usize,
    invariants: Vec<TCommitInvariant>,
}

impl TCommit {
    /// TCommit over `rm_count` RMs (1 to 16), checking `TCTypeOK` and `TCConsistent`.
    pub fn new(rm_count: usize) -> TCommit {
        TCommit::with_invariants(rm_count, &TCommitInvariant::NAMES.map(|(_, i)| i))
    }

    /// TCommit over `rm_count` RMs (1 to 16), checking exactly `invariants`.
    pub fn with_invariants(rm_count: usize, invariants: &[TCommitInvariant]) -> TCommit {
        assert!(
            (1..=RM_COUNT_MAX).contains(&rm_count),
            "TCommit takes 1 to {RM_COUNT_MAX} RMs, not {rm_count}"
        );
        TCommit {
            rm_count,
            invariants: invariants.to_vec(),
        }
    }

    /// `TCTypeOK`.
    pub fn type_ok(&self, rm_state: &RmStates) -> bool {
        rm_state.is_within(self.rm_count)
    }

    /// `canCommit`: every RM is prepared or committed.
    fn can_commit(&self, rm_state: RmStates) -> bool {
        let ready = rm_state
            .in_state(RmState::Prepared, self.rm_count)
            .union(rm_state.in_state(RmState::Committed, self.rm_count));
        ready == RmSet::full(self.rm_count)
    }
}

impl Model for TCommit {
    type State = RmStates;
    type Action = TCommitAction;

    fn name(&self) -> String {
        "tcommit".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![
            ModelParam::new("RM", self.rm_count),
            crate::params::choices_param("INVARIANTS", &self.invariants, &TCommitInvariant::NAMES),
        ]
    }

    fn init_states(&self, out: &mut Vec<RmStates>) {
        out.push(RmStates::ALL_WORKING);
    }

    fn actions(&self, rm_state: &RmStates, out: &mut Vec<TCommitAction>) {
        for rm in Rm::all(self.rm_count) {
            match rm_state.get(rm) {
                RmState::Working => {
                    out.push(TCommitAction::Prepare(rm));
                    out.push(TCommitAction::DecideAbort(rm));
                }
                RmState::Prepared => {
                    out.push(TCommitAction::DecideCommit(rm));
                    out.push(TCommitAction::DecideAbort(rm));
                }
                RmState::Committed | RmState::Aborted => {}
            }
        }
    }

    fn next_state(&self, rm_state: &RmStates, action: &TCommitAction) -> Option<RmStates> {
        let rm_state = *rm_state;
        match *action {
            TCommitAction::Prepare(rm) => {
                (rm_state.get(rm) == RmState::Working).then(|| rm_state.with(rm, RmState::Prepared))
            }
            TCommitAction::DecideCommit(rm) => (rm_state.get(rm) == RmState::Prepared
                && self.can_commit(rm_state))
            .then(|| rm_state.with(rm, RmState::Committed)),
            TCommitAction::DecideAbort(rm) => {
                (matches!(rm_state.get(rm), RmState::Working | RmState::Prepared)
                    && rm_state.none_committed(self.rm_count))
                .then(|| rm_state.with(rm, RmState::Aborted))
            }
        }
    }

    fn properties(&self) -> Vec<Property<TCommit>> {
        self.invariants
            .iter()
            .map(|invariant| match invariant {
                TCommitInvariant::TypeOk => {
                    Property::always("TCTypeOK", |model: &TCommit, rm_state: &RmStates| {
                        model.type_ok(rm_state)
                    })
                }
                TCommitInvariant::Consistent => {
                    Property::always("TCConsistent", |model: &TCommit, rm_state: &RmStates| {
                        rm_state.tc_consistent(model.rm_count)
                    })
                }
            })
            .collect()
    }

    /// Final states, where every RM has committed or aborted, are legitimate ends.
    fn is_terminal(&self, rm_state: &RmStates) -> bool {
        rm_state
            .in_state(RmState::Working, self.rm_count)
            .union(rm_state.in_state(RmState::Prepared, self.rm_count))
            .is_empty()
    }

    fn format_action(&self, action: &TCommitAction) -> String {
        match action {
            TCommitAction::Prepare(rm) => format!("Prepare({rm})"),
            TCommitAction::DecideCommit(rm) => format!("Decide({rm}) commit"),
            TCommitAction::DecideAbort(rm) => format!("Decide({rm}) abort"),
        }
    }

    fn describe_state(&self, rm_state: &RmStates) -> StateView {
        StateView::new().text("rmState", rm_state.describe(self.rm_count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{assert_invariants_hold, explore};

    #[test]
    fn reaches_every_tlc_state() {
        let model = TCommit::new(3);
        let reachable = explore(&model, 1_000);
        assert_eq!((reachable.distinct(), reachable.depth()), (34, 7));
        assert_invariants_hold(&model, &reachable);
    }

    #[test]
    fn exactly_the_final_states_are_stuck() {
        for rm_count in 1..=5 {
            let model = TCommit::new(rm_count);
            let reachable = explore(&model, 100_000);
            for (state, _) in &reachable.states {
                let stuck = reachable.stuck.contains(state);
                assert_eq!(stuck, model.is_terminal(state), "{state:?}");
            }
            // All committed and all aborted are both reachable ends.
            assert!(reachable.stuck.len() >= 2);
        }
    }

    #[test]
    fn commit_needs_every_rm_prepared() {
        let model = TCommit::new(2);
        let one_prepared = RmStates::ALL_WORKING.with(Rm(0), RmState::Prepared);
        assert_eq!(
            model.next_state(&one_prepared, &TCommitAction::DecideCommit(Rm(0))),
            None
        );
        let both = one_prepared.with(Rm(1), RmState::Prepared);
        let committed = model
            .next_state(&both, &TCommitAction::DecideCommit(Rm(0)))
            .unwrap();
        assert_eq!(
            model.next_state(&committed, &TCommitAction::DecideAbort(Rm(1))),
            None,
            "no abort after a commit"
        );
    }
}
