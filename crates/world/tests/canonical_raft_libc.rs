//! The libc calls of a checked C library are answered by cmc, in that
//! library only: canonical/raft 0.15.0's stderr tracer (on when
//! `LIBRAFT_TRACE` is set) reads `clock_gettime`. An adapter that declares
//! the call gets the node's clock; one that does not gets a fault naming it.
//!
//! Its own test binary: it sets `LIBRAFT_TRACE` for the whole process. The
//! two adapters are loaded one after the other, so `libraft.so.2` is
//! unloaded with the first and loaded again, with a fresh GOT, by the second.

mod canonical_raft_build;

use cmc_search::{Checker, Verdict};

#[test]
fn clock_gettime_is_answered_when_declared_and_a_fault_naming_it_when_not() {
    // This binary's only test: set before any thread of it reads it.
    std::env::set_var("LIBRAFT_TRACE", "1");
    let _alone = canonical_raft_build::one_adapter_at_a_time();

    let declared = canonical_raft_build::adapter("declared", &[]);
    let world = canonical_raft_build::world(&declared, &["ticks=1", "requests=1", "clients=0,1,2"]);
    let outcome = Checker::new(world)
        .workers(1)
        .max_depth(2)
        .check_deadlock(false)
        .run();
    assert!(
        !matches!(outcome.verdict, Verdict::Error { .. }),
        "declared and answered: {:?}",
        outcome.verdict
    );

    let undeclared = canonical_raft_build::adapter("undeclared", &["-DCR_LIBC_CALLS=0"]);
    let world =
        canonical_raft_build::world(&undeclared, &["ticks=1", "requests=1", "clients=0,1,2"]);
    let outcome = Checker::new(world)
        .workers(1)
        .max_depth(2)
        .check_deadlock(false)
        .run();
    match &outcome.verdict {
        Verdict::Error { message } => assert!(
            message.contains("`clock_gettime`") && message.contains("does not declare"),
            "{message}"
        ),
        other => panic!("an undeclared clock_gettime must be a fault, got {other:?}"),
    }
}
