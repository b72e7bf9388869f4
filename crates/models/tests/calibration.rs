//! Calibration against TLC (`docs/calibration.md`): the bundled
//! ports must give TLC's exact distinct-state counts and depths on passing
//! configurations, and TLC's shortest counterexample lengths on failing ones,
//! for one and for two workers.

use cmc_model::Model;
use cmc_models::{
    DieHard, DieHardInvariant, PaxosCommit, PaxosCommitConstants, PaxosCommitInvariant, TCommit,
    TwoPhase, TwoPhaseInvariant,
};
use cmc_search::{Checker, Verdict, ViolationKind};

const WORKER_COUNTS: [usize; 2] = [1, 2];

/// Checks `model` with deadlock checking as given and asserts TLC's figures.
fn assert_passes<M: Model + Clone>(model: M, check_deadlock: bool, distinct: u64, depth: u64) {
    for workers in WORKER_COUNTS {
        let outcome = Checker::new(model.clone())
            .workers(workers)
            .check_deadlock(check_deadlock)
            .run();
        let context = format!("{} {:?}, {workers} worker(s)", model.name(), model.params());
        assert_eq!(outcome.verdict, Verdict::Pass, "{context}");
        assert!(outcome.stats.complete, "{context}");
        assert_eq!(outcome.stats.distinct_states, distinct, "{context}");
        assert_eq!(outcome.stats.depth, depth, "{context}");
    }
}

/// Checks `model` and asserts that invariant `property` fails with a
/// counterexample of TLC's length (number of states).
fn assert_fails<M: Model + Clone>(model: M, property: &str, length: usize) {
    for workers in WORKER_COUNTS {
        let outcome = Checker::new(model.clone()).workers(workers).run();
        let context = format!("{} {:?}, {workers} worker(s)", model.name(), model.params());
        assert_eq!(
            outcome.verdict,
            Verdict::Violated {
                property: property.into(),
                kind: ViolationKind::Invariant
            },
            "{context}"
        );
        let counterexample = outcome.counterexample.expect("a violation has a trace");
        assert_eq!(counterexample.len(), length, "{context}");
    }
}

#[test]
fn die_hard_type_ok_holds() {
    assert_passes(DieHard::new(), true, 16, 8);
}

#[test]
fn die_hard_not_solved_fails_with_the_solution() {
    let model = DieHard::with_invariants(&[DieHardInvariant::TypeOk, DieHardInvariant::NotSolved]);
    assert_fails(model, "NotSolved", 7);
}

#[test]
fn tcommit_without_deadlock_checking() {
    assert_passes(TCommit::new(3), false, 34, 7);
}

#[test]
fn tcommit_final_states_are_terminal_not_deadlocks() {
    assert_passes(TCommit::new(3), true, 34, 7);
}

#[test]
fn two_phase_three_to_six_rms() {
    for (rm_count, distinct, depth) in [
        (3, 288, 11),
        (4, 1_568, 14),
        (5, 8_832, 17),
        (6, 50_816, 20),
    ] {
        assert_passes(TwoPhase::new(rm_count), true, distinct, depth);
    }
}

#[test]
fn two_phase_seven_rms() {
    assert_passes(TwoPhase::new(7), true, 296_448, 23);
}

#[test]
#[ignore = "about 1.7 million states; run with --ignored"]
fn two_phase_eight_rms() {
    assert_passes(TwoPhase::new(8), true, 1_745_408, 26);
}

#[test]
fn two_phase_no_rm_committed_fails() {
    for (rm_count, length) in [(3, 9), (5, 13)] {
        let model = TwoPhase::with_invariants(
            rm_count,
            &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
        );
        assert_fails(model, "NoRMCommitted", length);
    }
}

#[test]
fn paxos_commit_cfg() {
    assert_passes(PaxosCommit::new(), true, 1_321_761, 28);
}

#[test]
fn paxos_commit_no_rm_committed_fails() {
    let model = PaxosCommit::with(
        PaxosCommitConstants::CFG,
        &[
            PaxosCommitInvariant::TypeOk,
            PaxosCommitInvariant::NoRmCommitted,
        ],
    )
    .unwrap();
    assert_fails(model, "NoRMCommitted", 9);
}
