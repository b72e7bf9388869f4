//! The disk-backed visited set gives the in-memory set's exact figures on
//! bundled models, with an in-memory table so small (4,096 slots) that the
//! search flushes it to disk hundreds of times and merges its runs in tiers.

use cmc_model::Model;
use cmc_models::{TwoPhase, TwoPhaseInvariant};
use cmc_search::{Checker, SearchOptions};

/// Runs `model` in memory and with fingerprints on disk (1 and 2 workers)
/// and asserts the same verdict, counts, depth and counterexample length.
fn assert_disk_set_matches_memory<M: Model + Clone>(model: M) {
    let in_memory = Checker::new(model.clone()).workers(2).run();
    for workers in [1, 2] {
        let dir = tempfile::tempdir().unwrap();
        let on_disk = Checker::new(model.clone())
            .options(SearchOptions {
                workers,
                table_capacity: 4096,
                fingerprints_on_disk: true,
                trace_dir: Some(dir.path().to_path_buf()),
                ..SearchOptions::default()
            })
            .run();
        let context = format!("{} {:?}, {workers} worker(s)", model.name(), model.params());
        assert_eq!(on_disk.verdict, in_memory.verdict, "{context}");
        let (disk, memory) = (&on_disk.stats, &in_memory.stats);
        assert_eq!(disk.distinct_states, memory.distinct_states, "{context}");
        assert_eq!(disk.states_generated, memory.states_generated, "{context}");
        assert_eq!(disk.depth, memory.depth, "{context}");
        assert_eq!(
            on_disk.counterexample.as_ref().map(|c| c.len()),
            in_memory.counterexample.as_ref().map(|c| c.len()),
            "{context}"
        );
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
