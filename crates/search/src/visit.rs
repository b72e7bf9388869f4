//! What every exhaustive strategy does alike before and between its
//! expansions: an empty visited set of the kind the options ask for, room
//! made in it within the memory budget, and the initial states visited.

use cmc_model::Model;
use cmc_store::{DiskFingerprintSet, FingerprintTable, RoomError, VisitedSet, Wanted};

use crate::expand::{Expander, Scratch, SearchError};
use crate::properties::PropertySet;
use crate::SearchOptions;

/// Visits the initial states of `model` in batches that fit in `table`,
/// making room before each.
pub(crate) fn visit_initial_states<M: Model>(
    model: &M,
    properties: &PropertySet<M>,
    table: &mut VisitedSet,
    options: &SearchOptions,
    scratch: &mut Scratch<'_, M>,
    on_new: &mut impl FnMut(cmc_store::TraceId, &[u8], &M::State),
) -> Result<(), SearchError> {
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    let mut states = initial.into_iter().enumerate().peekable();
    while states.peek().is_some() {
        make_room(table, options, Wanted::default())?;
        let batch = usize::try_from(table.insert_room()).unwrap_or(usize::MAX);
        let expander = Expander::new(model, properties, table, options);
        for (index, state) in states.by_ref().take(batch) {
            expander.visit_initial(scratch, index, state, on_new)?;
        }
    }
    Ok(())
}

/// An empty visited set of the kind and size `options` ask for.
pub(crate) fn new_visited_set(options: &SearchOptions) -> VisitedSet {
    if options.fingerprints_on_disk {
        VisitedSet::Disk(DiskFingerprintSet::new(
            options.disk_set_table_capacity(),
            &options.spill_dir(),
        ))
    } else {
        VisitedSet::Memory(FingerprintTable::with_capacity(
            options.initial_table_capacity(),
        ))
    }
}

/// Makes room in the visited set, if needed, for `wanted` more inserts
/// ([`VisitedSet::make_room`]) within the memory budget.
pub(crate) fn make_room(
    table: &mut VisitedSet,
    options: &SearchOptions,
    wanted: Wanted,
) -> Result<(), SearchError> {
    table
        .make_room(options.table_memory_budget_bytes(), wanted)
        .map_err(|problem| match problem {
            RoomError::OverBudget {
                needed_bytes,
                budget_bytes,
            } => SearchError::MemoryBudget {
                needed_bytes,
                budget_bytes,
                advice: if options.fingerprints_on_disk {
                    "raise --max-memory (the fingerprint table must hold one state's new successors)"
                } else {
                    "raise --max-memory or keep fingerprints on disk (--disk-fingerprints)"
                },
            },
            RoomError::Io(problem) => SearchError::TraceIo(problem),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A table that cannot hold one state's successors within the budget is
    /// an error whose advice names only options not already given.
    #[test]
    fn the_memory_budget_advice_names_only_options_not_given() {
        let dir = tempfile::tempdir().unwrap();
        for (on_disk, advice) in [
            (
                false,
                "raise --max-memory or keep fingerprints on disk (--disk-fingerprints)",
            ),
            (
                true,
                "raise --max-memory (the fingerprint table must hold one state's new successors)",
            ),
        ] {
            let options = SearchOptions {
                max_memory_bytes: Some(64 << 10),
                fingerprints_on_disk: on_disk,
                trace_dir: Some(dir.path().to_path_buf()),
                ..SearchOptions::default()
            };
            let mut table = new_visited_set(&options);
            let error = make_room(&mut table, &options, Wanted::exactly(1 << 20)).unwrap_err();
            assert!(error.to_string().ends_with(advice), "{error}");
        }
    }
}
