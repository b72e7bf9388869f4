//! Two-phase commit beyond the gate: the shipped object is pure, steps are
//! deterministic, and a NO vote leads to a consistent abort.

use cmc_protocols::two_phase;
use cmc_search::{Checker, Verdict};

#[test]
fn the_shipped_object_passes_the_purity_gate() {
    let report = cmc_world::core::purity::check(&two_phase::object()).unwrap();
    assert!(report.is_pure(), "{report:?}");
}

#[test]
fn a_no_vote_aborts_everywhere_and_steps_are_deterministic() {
    let world =
        two_phase::world(0, 3, &["requests=1", "cfg0=4", "crashes=1", "restarts=1"]).unwrap();
    let checker = Checker::new(world)
        .workers(2)
        .check_deadlock(false)
        .check_determinism(true);
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert!(outcome.stats.distinct_states > 1000);
}
