//! The timely engine in one process, with 1, 2 and 3 worker threads:
//! exactly the native engine's counts, depth and counterexample length.

use std::sync::Arc;

use cmc_model::{Encode, Fingerprint, Model};
use cmc_models::{
    PaxosCommit, PaxosCommitConstants, PaxosCommitInvariant, TwoPhase, TwoPhaseInvariant,
};
use cmc_search::test_support::{Counter, Fickle};
use cmc_search::{Checker, Outcome, SearchOptions, Verdict};

fn timely<M: Model + Send + 'static>(model: M, threads: usize) -> Outcome<M> {
    let options = SearchOptions {
        workers: threads,
        ..SearchOptions::default()
    };
    cmc_distributed::check(Arc::new(model), &options, None)
        .expect("the timely engine runs")
        .outcome
}

/// The fingerprints of a counterexample's states, in order.
fn trace_fingerprints<M: Model>(outcome: &Outcome<M>) -> Vec<Fingerprint> {
    outcome
        .counterexample
        .as_ref()
        .expect("a violation has a counterexample")
        .steps
        .iter()
        .map(|step| Fingerprint::of_bytes(&step.state.to_bytes()))
        .collect()
}

/// Asserts that `outcome` found as many distinct states, generated as many
/// and went as deep as the native engine's `native`.
fn assert_same_counts<M: Model>(outcome: &Outcome<M>, native: &Outcome<M>) {
    assert_eq!(outcome.stats.distinct_states, native.stats.distinct_states);
    assert_eq!(
        outcome.stats.states_generated,
        native.stats.states_generated
    );
    assert_eq!(outcome.stats.depth, native.stats.depth);
}

#[test]
fn two_phase_seven_rms_counts_match_tlc_and_the_native_engine() {
    let native = Checker::new(TwoPhase::new(7)).workers(2).run();
    assert_eq!(native.stats.distinct_states, 296_448);
    for threads in [1, 2, 3] {
        let outcome = timely(TwoPhase::new(7), threads);
        assert_eq!(outcome.verdict, Verdict::Pass, "{threads} thread(s)");
        assert!(outcome.stats.complete, "{threads} thread(s)");
        assert_eq!(
            outcome.stats.distinct_states, 296_448,
            "{threads} thread(s)"
        );
        assert_eq!(outcome.stats.depth, 23, "{threads} thread(s)");
        assert_eq!(
            outcome.stats.states_generated, native.stats.states_generated,
            "{threads} thread(s)"
        );
    }
}

#[test]
fn small_paxos_commit_counts_match_the_native_engine() {
    let constants = PaxosCommitConstants {
        rm_count: 1,
        acceptor_count: 3,
        ballot_count: 2,
    };
    let model = || PaxosCommit::with(constants, &[PaxosCommitInvariant::TypeOk]).unwrap();
    let native = Checker::new(model()).workers(1).run();
    assert_eq!(native.verdict, Verdict::Pass);
    assert!(native.stats.distinct_states > 1000, "{:?}", native.stats);
    for threads in [1, 2, 3] {
        let outcome = timely(model(), threads);
        assert_eq!(outcome.verdict, Verdict::Pass, "{threads} thread(s)");
        assert_same_counts(&outcome, &native);
    }
}

#[test]
fn a_violation_has_the_native_length_and_the_same_trace_for_every_thread_count() {
    let model = || {
        TwoPhase::with_invariants(
            5,
            &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
        )
    };
    let native = Checker::new(model()).workers(2).run();
    let native_length = native.counterexample.as_ref().unwrap().len();
    assert_eq!(native_length, 13);
    let one = timely(model(), 1);
    for threads in [1, 2, 3] {
        let outcome = timely(model(), threads);
        assert_eq!(outcome.verdict, native.verdict, "{threads} thread(s)");
        assert_eq!(trace_fingerprints(&outcome).len(), native_length);
        assert_eq!(trace_fingerprints(&outcome), trace_fingerprints(&one));
        // The level of the violation is finished, as the native engine does.
        assert_same_counts(&outcome, &native);
        assert_eq!(
            outcome.stats.states_left_on_queue,
            native.stats.states_left_on_queue
        );
    }
}

#[test]
fn a_depth_bound_and_unsupported_options_behave_as_documented() {
    let native = Checker::new(TwoPhase::new(4)).max_depth(5).run();
    let options = SearchOptions {
        workers: 2,
        max_depth: Some(5),
        ..SearchOptions::default()
    };
    let bounded = cmc_distributed::check(Arc::new(TwoPhase::new(4)), &options, None)
        .unwrap()
        .outcome;
    assert!(!bounded.stats.complete);
    assert_eq!(bounded.stats.distinct_states, native.stats.distinct_states);
    assert_eq!(
        bounded.stats.states_left_on_queue,
        native.stats.states_left_on_queue
    );
    assert_eq!(bounded.stats.depth, native.stats.depth);
    let options = SearchOptions {
        fingerprints_on_disk: true,
        ..SearchOptions::default()
    };
    let refused = cmc_distributed::check(Arc::new(TwoPhase::new(3)), &options, None);
    assert!(matches!(
        refused,
        Err(cmc_distributed::DistributedError::Unsupported(_))
    ));
}

/// A counter to 12 by steps of one or two (so a counterexample longer than
/// the shortest exists) that violates `property`: `NoStepFrom` (the step
/// from 7) or `deadlock` (at 12).
fn counter_violating(property: &str) -> Counter {
    let counter = Counter::to(12).by_one_or_two();
    match property {
        "NoStepFrom" => counter.forbidding_step_from(7),
        _ => counter.deadlocking(),
    }
}

#[test]
fn step_violations_and_deadlocks_match_the_native_engine() {
    for violated in ["NoStepFrom", "deadlock"] {
        let model = || counter_violating(violated);
        let native = Checker::new(model()).workers(2).run();
        assert!(
            matches!(&native.verdict, Verdict::Violated { property, .. } if property == violated),
            "{:?}",
            native.verdict
        );
        let native_length = native.counterexample.as_ref().unwrap().len();
        for threads in [1, 2, 3] {
            let outcome = timely(model(), threads);
            assert_eq!(outcome.verdict, native.verdict, "{threads} thread(s)");
            assert_eq!(
                outcome.counterexample.as_ref().unwrap().len(),
                native_length
            );
            assert_same_counts(&outcome, &native);
        }
    }
}

#[test]
fn an_interrupted_run_stops_at_a_level_boundary_and_says_so() {
    let flag = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let options = SearchOptions {
        workers: 2,
        interrupt: Some(flag),
        ..SearchOptions::default()
    };
    let outcome = cmc_distributed::check(Arc::new(TwoPhase::new(5)), &options, None)
        .unwrap()
        .outcome;
    assert!(
        matches!(outcome.verdict, Verdict::Interrupted { .. }),
        "{:?}",
        outcome.verdict
    );
    assert!(!outcome.stats.complete);
    assert_eq!(outcome.stats.depth, 1);
    assert_eq!(outcome.stats.states_left_on_queue, 1);
}

/// Options for `threads` workers saving checkpoints in `dir` every
/// `interval`, resuming the one there if `resume`.
fn checkpointed(
    dir: &std::path::Path,
    threads: usize,
    interval: std::time::Duration,
    resume: bool,
) -> SearchOptions {
    SearchOptions {
        workers: threads,
        checkpoint: Some(cmc_search::CheckpointOptions {
            dir: dir.to_path_buf(),
            interval,
            resume,
            overwrite: false,
        }),
        ..SearchOptions::default()
    }
}

#[test]
fn an_interrupted_run_resumes_from_its_checkpoint_with_the_same_counts_and_trace() {
    let model = || {
        TwoPhase::with_invariants(
            5,
            &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
        )
    };
    let whole = timely(model(), 2);
    let dir = tempfile::tempdir().unwrap();
    let hour = std::time::Duration::from_secs(3600);
    // Interrupted at the first level boundary: the checkpoint is saved there.
    let mut options = checkpointed(dir.path(), 2, hour, false);
    options.interrupt = Some(Arc::new(std::sync::atomic::AtomicBool::new(true)));
    let stopped = cmc_distributed::check(Arc::new(model()), &options, None)
        .unwrap()
        .outcome;
    assert_eq!(
        stopped.verdict,
        Verdict::Interrupted {
            checkpoint: Some(dir.path().to_path_buf())
        }
    );
    // Another worker count is another run.
    let refused = cmc_distributed::check(
        Arc::new(model()),
        &checkpointed(dir.path(), 3, hour, true),
        None,
    );
    assert!(
        matches!(
            &refused,
            Err(cmc_distributed::DistributedError::Checkpoint(text)) if text.contains("with 2 worker thread(s)")
        ),
        "{:?}",
        refused.err()
    );
    let resumed = cmc_distributed::check(
        Arc::new(model()),
        &checkpointed(dir.path(), 2, hour, true),
        None,
    )
    .unwrap()
    .outcome;
    assert_eq!(resumed.verdict, whole.verdict);
    assert_same_counts(&resumed, &whole);
    assert_eq!(trace_fingerprints(&resumed), trace_fingerprints(&whole));
}

#[test]
fn a_checkpoint_of_every_level_resumes_at_the_last_one_with_the_same_counts() {
    let dir = tempfile::tempdir().unwrap();
    let every_level = std::time::Duration::ZERO;
    let whole = cmc_distributed::check(
        Arc::new(TwoPhase::new(5)),
        &checkpointed(dir.path(), 2, every_level, false),
        None,
    )
    .unwrap()
    .outcome;
    assert_eq!(whole.verdict, Verdict::Pass);
    // The last checkpoint holds the deepest level, whose successors are all
    // known: its shards must say so, or they would be counted again.
    let resumed = cmc_distributed::check(
        Arc::new(TwoPhase::new(5)),
        &checkpointed(dir.path(), 2, every_level, true),
        None,
    )
    .unwrap()
    .outcome;
    assert_eq!(resumed.verdict, Verdict::Pass);
    assert_same_counts(&resumed, &whole);
    // A new run does not silently replace a checkpoint.
    let refused = cmc_distributed::check(
        Arc::new(TwoPhase::new(5)),
        &checkpointed(dir.path(), 2, every_level, false),
        None,
    );
    assert!(matches!(
        refused,
        Err(cmc_distributed::DistributedError::Checkpoint(_))
    ));
}

/// As in the native engine, a violation the property does not repeat on
/// its counterexample is a property error naming it, not a violation.
#[test]
fn a_property_that_changes_its_mind_is_a_property_error() {
    let outcome = timely(Counter::to(9).fickle(Fickle::Invariant, 7), 1);
    match &outcome.verdict {
        Verdict::Error { message } => assert!(
            message.contains("PROPERTY ERROR") && message.contains("Fickle"),
            "{message}"
        ),
        other => panic!("expected a property error, got {other:?}"),
    }
}
