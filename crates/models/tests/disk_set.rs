//! The disk-backed visited set gives the in-memory set's exact figures on
//! bundled models, with an in-memory table so small (4,096 slots) that the
//! search flushes it to disk hundreds of times and merges its runs in tiers,
//! and with a memory budget so small (1 MiB) that every pass settles its
//! batch of candidates against the runs many times a level. A run without
//! traces reports the same shortest counterexample length, and a run cut
//! short by a distinct-state budget says so.

use cmc_model::Model;
use cmc_models::{TwoPhase, TwoPhaseInvariant};
use cmc_search::test_support::fingerprints_on_disk;
use cmc_search::{Checker, Outcome, Report, SearchOptions, Verdict};

const MIB: u64 = 1 << 20;

/// Runs `model` in memory and with fingerprints on disk (1 and 2 workers)
/// and asserts the same verdict, counts, depth and counterexample length.
fn assert_disk_set_matches_memory<M: Model + Clone>(model: M) {
    let in_memory = Checker::new(model.clone()).workers(2).run();
    for workers in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let on_disk = Checker::new(model.clone())
            .options(fingerprints_on_disk(workers, dir.path()))
            .run();
        assert_same_figures(&on_disk, &in_memory, &model, workers);
        let context = format!("{} {:?}, {workers} worker(s)", model.name(), model.params());
        let disk = &on_disk.stats;
        // All but the last table's worth of fingerprints went to disk.
        assert!(
            disk.fingerprint_disk_bytes >= 16 * (disk.distinct_states - 4096),
            "{context}: {} bytes on disk",
            disk.fingerprint_disk_bytes
        );
        // In memory: the table, and about 1.2 bytes a fingerprint on disk
        // (its run's filter and fence index).
        assert!(
            disk.table_bytes < 16 * 4096 + 2 * disk.distinct_states,
            "{context}: {} bytes in memory",
            disk.table_bytes
        );
        // The run directory went with the set.
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{context}"
        );
    }
}

/// Asserts that `on_disk` has the verdict, counts, depth and counterexample
/// length of `in_memory`, runs of `model` with `workers` workers.
fn assert_same_figures<M: Model>(
    on_disk: &Outcome<M>,
    in_memory: &Outcome<M>,
    model: &M,
    workers: usize,
) {
    let context = format!("{} {:?}, {workers} worker(s)", model.name(), model.params());
    assert_eq!(on_disk.verdict, in_memory.verdict, "{context}");
    let (disk, memory) = (&on_disk.stats, &in_memory.stats);
    assert_eq!(disk.distinct_states, memory.distinct_states, "{context}");
    assert_eq!(disk.states_generated, memory.states_generated, "{context}");
    assert_eq!(disk.depth, memory.depth, "{context}");
    assert_eq!(disk.complete, memory.complete, "{context}");
    assert_eq!(
        on_disk.counterexample.as_ref().map(|c| c.len()),
        in_memory.counterexample.as_ref().map(|c| c.len()),
        "{context}"
    );
}

/// Options of a search with fingerprints on disk within `max_memory` bytes.
fn on_disk_within(max_memory: u64, workers: usize, dir: &std::path::Path) -> SearchOptions {
    SearchOptions {
        workers,
        max_memory_bytes: Some(max_memory),
        fingerprints_on_disk: true,
        trace_dir: Some(dir.to_path_buf()),
        ..SearchOptions::default()
    }
}

/// With a 1 MiB budget (a table of 32,768 slots, candidates settled every
/// 1 MiB of staged states), `model` gives the in-memory figures.
fn assert_tiny_budget_matches_memory<M: Model + Clone>(model: M) {
    let in_memory = Checker::new(model.clone()).workers(2).run();
    for workers in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let on_disk = Checker::new(model.clone())
            .options(on_disk_within(MIB, workers, dir.path()))
            .run();
        assert_same_figures(&on_disk, &in_memory, &model, workers);
        assert!(on_disk.stats.fingerprint_disk_bytes > 0, "the set flushed");
    }
}

#[test]
fn two_phase_rm7_within_a_tiny_budget_counts_exactly() {
    assert_tiny_budget_matches_memory(TwoPhase::new(7));
}

#[test]
fn a_violation_within_a_tiny_budget_has_the_shortest_counterexample() {
    assert_tiny_budget_matches_memory(TwoPhase::with_invariants(
        7,
        &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
    ));
}

/// Without traces, a violation is reported with the length of the shortest
/// counterexample, in memory and on disk, and said to be untraced.
#[test]
fn a_violation_without_its_trace_reports_the_shortest_length() {
    let model = TwoPhase::with_invariants(
        6,
        &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
    );
    let traced = Checker::new(model.clone()).workers(2).run();
    let length = traced.counterexample.as_ref().unwrap().len() as u64;
    let dir = tempfile::tempdir().unwrap();
    for options in [SearchOptions::default(), on_disk_within(MIB, 2, dir.path())] {
        let options = SearchOptions {
            keep_trace: false,
            ..options
        };
        let untraced = Checker::new(model.clone()).options(options.clone()).run();
        assert_eq!(untraced.verdict, traced.verdict);
        assert!(untraced.counterexample.is_none());
        assert_eq!(untraced.stats.untraced_violation_length, Some(length));
        assert_eq!(untraced.stats.distinct_states, traced.stats.distinct_states);
        let text = Report::new(&model, &options, &untraced).render_text();
        assert!(
            text.contains(&format!(
                "The shortest counterexample has {length} states; its trace was not kept (--no-trace)"
            )),
            "{text}"
        );
    }
    assert_eq!(traced.stats.untraced_violation_length, None);
}

/// A distinct-state budget stops the search soon after it is spent, and
/// the run reads as cut short, in memory and on disk.
#[test]
fn a_run_cut_short_by_its_state_budget_says_so() {
    const BUDGET: u64 = 100_000;
    let model = TwoPhase::new(7);
    let dir = tempfile::tempdir().unwrap();
    for options in [
        SearchOptions::default(),
        on_disk_within(MIB, 2, dir.path()),
        SearchOptions {
            keep_trace: false,
            ..on_disk_within(MIB, 1, dir.path())
        },
    ] {
        let options = SearchOptions {
            max_states: Some(BUDGET),
            ..options
        };
        let outcome = Checker::new(model.clone()).options(options.clone()).run();
        let stats = &outcome.stats;
        assert_eq!(outcome.verdict, Verdict::Pass);
        assert!(!stats.complete);
        assert!(stats.states_left_on_queue > 0);
        // Workers pause within 32 states of seeing the budget spent.
        assert!(
            (BUDGET..BUDGET + 20_000).contains(&stats.distinct_states),
            "{} distinct states",
            stats.distinct_states
        );
        let text = Report::new(&model, &options, &outcome).render_text();
        assert!(
            text.contains("No violation found within the bound (100000 distinct states); the search was not complete."),
            "{text}"
        );
        assert!(text.contains("max-states=100000"), "{text}");
    }
}

#[test]
fn two_phase_rm7_on_disk_counts_exactly() {
    assert_disk_set_matches_memory(TwoPhase::new(7));
}

#[test]
fn a_violation_on_disk_has_the_shortest_counterexample() {
    assert_disk_set_matches_memory(TwoPhase::with_invariants(
        6,
        &[TwoPhaseInvariant::TypeOk, TwoPhaseInvariant::NoRmCommitted],
    ));
}
